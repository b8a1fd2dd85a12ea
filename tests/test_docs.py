"""The documentation cannot drift from the engine: the README's option table is what
the engine declares on ``uci``, every ``blitzaco`` command and script the docs name
exists, and every relative link in them leads somewhere."""

from __future__ import annotations

import re
import subprocess
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

