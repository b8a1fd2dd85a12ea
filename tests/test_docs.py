"""The documentation cannot drift from the engine: the README's option table is what
the engine declares on ``uci``, every ``blitzaco`` and ``tune.py`` command and script
the docs name exists, every relative link in them leads somewhere, and no ``--help``
names a commit."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from uci_driver import ENGINE_COMMAND, UciProcess

from blitzaco.engine import MAX_THREADS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]

#: ``option name Hash type spin default 64 min 1 max 32768``
DECLARATION = re.compile(
    r"option name (?P<name>.+?) type (?P<kind>check|spin|combo|button|string)"
    r"(?: default (?P<default>.*?))?(?: min (?P<low>-?\d+) max (?P<high>-?\d+))?$"
)


def declared_options() -> dict[str, tuple[str, str | None, str | None]]:
    """What the engine declares on ``uci``: name -> (type, default, "low–high")."""
    process = UciProcess()
    try:
        lines = process.handshake()
    finally:
        process.close()
    options = {}
    for line in lines:
        found = DECLARATION.match(line)
        if found:
            low, high = found["low"], found["high"]
            options[found["name"]] = (found["kind"], found["default"], f"{low}–{high}" if low is not None else None)
    return options


def readme_options(text: str) -> dict[str, tuple[str, str | None, str | None]]:
    """The README's option table, in the terms of :func:`declared_options`: a string
    default written ``empty`` is UCI's ``<empty>``, a range up to ``cores`` ends at
    the number of cores the engine allows (``MAX_THREADS``)."""
    section = text.split("\n## UCI options\n", 1)[1].split("\n## ", 1)[0]
    options = {}
    for row in section.splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) < 4 or not re.fullmatch(r"`[^`]+`", cells[0]):
            continue
        name, kind, default, span = cells[0].strip("`"), cells[1], cells[2] or None, cells[3] or None
        if kind == "string" and default == "empty":
            default = "<empty>"
        if span is not None:
            span = re.sub(r"–cores$", f"–{MAX_THREADS}", span)
        assert name not in options, f"the README lists {name} twice"
        options[name] = (kind, default, span)
    return options


def test_the_readme_option_table_is_what_the_engine_declares() -> None:
    declared = declared_options()
    documented = readme_options(README.read_text(encoding="utf-8"))
    assert declared, "no option declarations read from the engine"
    assert sorted(documented) == sorted(declared), "option names differ between the README and the engine"
    for name, (kind, default, span) in declared.items():
        assert documented[name] == (kind, default, span), (
            f"README row for {name}: (type, default, range) {documented[name]}, the engine declares "
            f"{(kind, default, span)}"
        )


def test_the_table_reader_sees_a_wrong_row() -> None:
    """The comparison above can fail: a row with another default, type or range, or a
    row missing, reads differently."""
    text = README.read_text(encoding="utf-8")
    documented = readme_options(text)
    assert documented["Hash"] == ("spin", "64", "1–32768")
    assert documented["Threads"][2] == f"1–{MAX_THREADS}"
    assert documented["BookFile"] == ("string", "<empty>", None)
    assert documented["Clear Hash"] == ("button", None, None)
    broken = text.replace("| `Hash` | spin | 64 | 1–32768 |", "| `Hash` | spin | 128 | 1–32768 |")
    assert broken != text and readme_options(broken)["Hash"] != documented["Hash"]
    dropped = re.sub(r"\n\| `MultiPV` \|[^\n]*", "", text)
    assert "MultiPV" not in readme_options(dropped)


def search_table_defaults(text: str) -> dict[str, str]:
    """docs/search.md's table of what each technique was worth: switch -> its default
    column (``on`` or ``off``), for the rows that name one switch first."""
    section = text.split("\n## What each technique was worth\n", 1)[1].split("\n## ", 1)[0]
    defaults = {}
    for row in section.splitlines():
        found = re.match(r"\| `(\w+)`[^|]*\| (on|off) \|", row)
        if found:
            defaults[found[1]] = found[2]
    return defaults


def test_the_search_table_gives_each_switch_its_shipped_default() -> None:
    """Every switch row of docs/search.md's table says on or off as config.toml ships
    it, and a row that says otherwise is seen."""
    import tomllib

    shipped = tomllib.loads((ROOT / "config.toml").read_text(encoding="utf-8"))["search"]
    text = (ROOT / "docs" / "search.md").read_text(encoding="utf-8")
    documented = search_table_defaults(text)
    assert len(documented) >= 20, documented
    for name, default in documented.items():
        assert name in shipped, f"docs/search.md's table names {name}, not a [search] setting"
        assert default == ("on" if shipped[name] else "off"), f"docs/search.md says {name} is {default}"
    flipped = text.replace("| `root_filter` | off |", "| `root_filter` | on |")
    assert flipped != text and search_table_defaults(flipped)["root_filter"] == "on"


def _doc_texts() -> dict[str, str]:
    return {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in DOCS}


def named_commands() -> dict[str, set[str]]:
    """``blitzaco SUBCOMMAND`` as the docs write it (also after ``--config FILE``) ->
    the pages that name it."""
    pattern = re.compile(r"(?<![\w./=-])blitzaco (?:--config \S+ )?([a-z][a-z0-9-]*)(?=[\s`;|)\]]|$)", re.M)
    named: dict[str, set[str]] = {}
    for page, text in _doc_texts().items():
        for command in pattern.findall(text):
            named.setdefault(command, set()).add(page)
    return named


def test_every_blitzaco_command_the_docs_name_exists() -> None:
    named = named_commands()
    assert {"bench", "perft", "eval", "analyse", "colony", "config"} <= set(named)
    for command, pages in sorted(named.items()):
        result = subprocess.run([*ENGINE_COMMAND, command, "--help"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"`blitzaco {command}` ({sorted(pages)}) is not a command: {result.stderr}"


def test_a_command_that_does_not_exist_is_refused() -> None:
    """The check above can fail: argparse refuses a subcommand it does not know."""
    result = subprocess.run([*ENGINE_COMMAND, "nosuchcommand", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0


def test_every_script_the_docs_name_exists() -> None:
    pattern = re.compile(r"\bscripts/([\w-]+\.py)\b")
    named = {script for text in _doc_texts().values() for script in pattern.findall(text)}
    assert "match.py" in named and "build_at.py" in named
    missing = sorted(script for script in named if not (ROOT / "scripts" / script).is_file())
    assert not missing, f"the docs name scripts that do not exist: {missing}"



TUNE = [sys.executable, str(ROOT / "scripts" / "tune.py")]


def _subcommands(command: list[str]) -> set[str]:
    """The subcommands *command*'s ``--help`` lists (argparse's four-space indented
    lines of its subparsers)."""
    result = subprocess.run([*command, "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    return set(re.findall(r"^ {4}([a-z][a-z0-9-]*)(?=\s|$)", result.stdout, re.M))


def named_tune_commands(texts: dict[str, str] | None = None) -> dict[str, set[str]]:
    """``tune.py SUBCOMMAND`` as the docs (or *texts*, page -> text) write it -> the
    pages that name it."""
    pattern = re.compile(r"\btune\.py ([a-z][a-z0-9-]*)(?=[\s`;|)\]]|$)", re.M)
    named: dict[str, set[str]] = {}
    for page, text in (texts if texts is not None else _doc_texts()).items():
        for command in pattern.findall(text):
            named.setdefault(command, set()).add(page)
    return named


def test_every_tune_command_the_docs_name_exists() -> None:
    """docs/architecture.md named a ``tune.py extract`` that had long become
    ``positions``; every ``tune.py`` command written in the docs is one the tuner's
    command line has."""
    named = named_tune_commands()
    assert {"label", "train-net", "texel", "positions", "adopt"} <= set(named)
    known = _subcommands(TUNE)
    assert {"selfplay", "label", "train-net", "positions", "texel", "spsa", "adopt"} <= known
    missing = {command: sorted(pages) for command, pages in named.items() if command not in known}
    assert not missing, f"the docs name tune.py commands that do not exist: {missing}"


def test_a_tune_command_that_does_not_exist_is_seen() -> None:
    """The check above can fail: the line architecture.md had is read as naming
    ``extract``, which the tuner does not have."""
    named = named_tune_commands({"page.md": "the tuner (`tune.py extract`) fits weights to the counts"})
    assert named == {"extract": {"page.md"}}
    assert "extract" not in _subcommands(TUNE)


#: A word that reads as a commit (seven to forty hexadecimal digits, letters and
#: figures both): the ledger names commits, a help text does not.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def _help_commands() -> list[list[str]]:
    """Every command line a user can ask ``--help`` of: ``blitzaco`` and each of its
    commands, ``tune.py`` and each of its commands, every script."""
    commands = [ENGINE_COMMAND, *([*ENGINE_COMMAND, name] for name in sorted(_subcommands(ENGINE_COMMAND)))]
    commands += [TUNE, *([*TUNE, name] for name in sorted(_subcommands(TUNE)))]
    commands += [[sys.executable, str(script)] for script in sorted((ROOT / "scripts").glob("*.py"))
                 if script.name != "tune.py"]
    return commands


def test_no_help_text_names_a_commit() -> None:
    """What ``--help`` prints is for users, who have no use for a commit hash (the
    ledger, docs/MEASUREMENTS.md, keeps the history)."""
    commands = _help_commands()
    assert len(commands) > 30 and [*ENGINE_COMMAND, "bench"] in commands and [*TUNE, "label"] in commands
    found = {}
    for command in commands:
        result = subprocess.run([*command, "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
        name = " ".join(Path(word).name for word in command[1:])
        assert result.returncode == 0 and result.stdout.startswith("usage:"), f"{name} --help: {result.stderr}"
        if COMMIT.search(result.stdout):
            found[name] = COMMIT.findall(result.stdout)
    assert not found, f"help texts naming commits: {found}"


def test_the_commit_check_sees_a_commit_and_not_a_number() -> None:
    """The check above can fail: the sentence scripts/drift.py's help had is caught;
    node counts and hexadecimal-looking words are not."""
    assert COMMIT.findall("The issue that asked for it gave, for 0b793a0 at 10 s + 0.1 s") == ["0b793a0"]
    assert COMMIT.findall("b0d3f35e2c1a9b8d7f6e5d4c3b2a1f0e9d8c7b6a, rather") != []
    assert COMMIT.findall("4865609 leaves, a defaced deadbeef, ab12cd3x, Bench: 355408") == []

def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def test_relative_links_lead_to_files_and_headings_that_exist() -> None:
    link = re.compile(r"\]\(([^)\s]+)\)")
    broken = []
    for page, text in _doc_texts().items():
        here = (ROOT / page).parent
        for target in link.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (here / path).resolve() if path else ROOT / page
            if not file.exists():
                broken.append(f"{page}: {target}")
                continue
            if anchor:
                headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
                if anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{page}: {target} (no such heading)")
    assert not broken, broken


@pytest.mark.parametrize("page", [path.name for path in DOCS])
def test_the_docs_name_no_scratch_paths_or_issue_numbers(page: str) -> None:
    text = next(path for path in DOCS if path.name == page).read_text(encoding="utf-8")
    assert not re.search(r"/tmp/|(?<![\w.])runs/|\bissue \d+", text, re.I)

