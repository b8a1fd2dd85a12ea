"""The compiled engine (setup.py compiles the search's hot modules with mypyc).

The wheel is built twice, as ``pip install .`` builds it: once with the C compiler,
which must compile every module setup.py names and search exactly the tree the pure
modules search, and once with a compiler that fails, which must fall back to the
pure package (a warning, and an engine that plays). The compiled build takes about a
minute of CPU; deselect with ``-m 'not native'`` when iterating on something else.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import chess
import chess.engine
import pytest
from script_loader import load_script
from uci_driver import bench_signature

from blitzaco.config import load_config

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.native

BUILD = load_script("scripts/build_binary.py")
#: setup.py's list, read from the file itself so that the test follows it.
NATIVE = BUILD.native_sources()
EXTENSION = sysconfig.get_config_var("EXT_SUFFIX")
#: The evaluations' recorded scores (tests/data/make_eval_scores.py).
SCORES = ROOT / "tests" / "data" / "eval_scores.csv"


def _build(tmp_path: Path, env: dict[str, str]) -> tuple[Path, str]:
    """The wheel built from this checkout and unpacked (scripts/build_binary.py does
    the same for the binary): (the folder to put on PYTHONPATH, the build's output)."""
    return BUILD.build_wheel(tmp_path / "build", env)  # type: ignore[no-any-return]


def _run(site: Path | None, *args: str) -> str:
    """Python with *args*, importing the engine from *site* (None: the package under
    test, as installed)."""
    env = {**os.environ, "PYTHONPATH": str(site)} if site is not None else None
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=site, check=True, timeout=600
    )
    return done.stdout


def _compiled(site: Path) -> dict[str, bool]:
    """Whether each module of NATIVE is imported from a compiled file."""
    names = [Path(path).stem for path in NATIVE]
    code = "import importlib; " + "; ".join(f"print(importlib.import_module('blitzaco.{n}').__file__)" for n in names)
    files = _run(site, "-c", code).split()
    return {name: file.endswith(EXTENSION) for name, file in zip(names, files, strict=True)}


def _bench_nodes(site: Path | None, depth: int, config: Path | None = None) -> int:
    options = ["--config", str(config)] if config is not None else []
    out = _run(site, "-m", "blitzaco", *options, "bench", str(depth))
    match = re.search(r"Nodes searched: (\d+)", out)
    assert match, out
    return int(match.group(1))


def _game_nodes(site: Path | None, config: Path, moves: int = 6) -> list[int]:
    """The nodes of each search of one game from the start, each to depth 5, every
    move the engine's own, in one engine (what it keeps from move to move counts)."""
    code = (
        "import chess\n"
        "from blitzaco.config import load_config\n"
        "from blitzaco.engine import Engine\n"
        "from blitzaco.timeman import Limits\n"
        f"engine = Engine(load_config({str(config)!r}))\n"
        "engine.set_option('own_book', False)\n"
        "board = chess.Board()\n"
        f"for _ in range({moves}):\n"
        "    result = engine.think(board, Limits(depth=5))\n"
        "    print(result.nodes)\n"
        "    board.push(result.move)\n"
    )
    return [int(word) for word in _run(site, "-c", code).split()]


def _play(site: Path) -> None:
    """Drive the built engine through a UCI client: a few searched moves."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "blitzaco"], env=env, cwd=site, timeout=30)
    try:
        engine.configure({"OwnBook": False})
        board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4")
        result = engine.play(board, chess.engine.Limit(depth=3))
        assert result.move == chess.Move.from_uci("h5f7")  # mate in one
        for _ in range(6):
            result = engine.play(board, chess.engine.Limit(nodes=2000))
            assert result.move is not None and result.move in board.legal_moves
            board.push(result.move)
            if board.is_game_over():
                break
    finally:
        engine.quit()


def test_the_compiled_wheel_searches_the_same_tree(tmp_path: Path) -> None:
    pytest.importorskip("mypyc.build")
    if shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is None:
        pytest.skip("no C compiler")
    site, log = _build(tmp_path, {"BLITZACO_PURE": "0"})
    assert "pure-Python" not in log, log[-3000:]
    assert _compiled(site) == {Path(path).stem: True for path in NATIVE}
    # The same search node for node: bench at depth 5 over the 30 positions, with the
    # shipped evaluation (the blend) and with the classical evaluation alone.
    default = {depth: _bench_nodes(site, depth) for depth in (4, 5)}
    assert default[5] == _bench_nodes(None, 5)
    classical = tmp_path / "classical.toml"
    classical.write_text("[eval.nn]\nenabled = false\n")
    assert _bench_nodes(site, 5, classical) == _bench_nodes(None, 5, classical) != default[5]
    # The research terms, which the search asks of the static evaluation off the
    # board, and the search switches away from their defaults: the same tree too (and
    # not the default one). The switches go in two groups, each a pure bench of its own
    # (the longest part of the suite): the pruning and extension rules, and the history
    # tables (off, as they were before the rewired search; counter moves on); that each
    # switch alone changes the tree is test_search's business.
    for name, text, depth in (
        ("research", "[eval.spectral]\nenabled = true\n[pheromone]\nenabled = true\n", 4),
        ("pruning", "[search]\nsingular_extensions = true\nsingular_depth = 4\nprobcut = true\nprobcut_depth = 4\n"
                    "see_pruning = true\nlate_move_pruning = true\nlate_move_pruning_improving = true\n"
                    "qsearch_tt = true\nreduced_futility = true\nhistory_pruning = true\nlmr_cut_nodes = true\n"
                    "singular_double_margin = 0\ncapture_history = true\n", 5),
        ("history", "[search]\ncontinuation_history = false\ncapture_history = false\nlmr_history = false\n"
                    "history_gravity = false\nlmr_captures = false\nimproving = false\ncounter_moves = true\n", 5),
    ):
        switched = tmp_path / f"{name}.toml"
        switched.write_text(text)
        assert _bench_nodes(site, depth, switched) == _bench_nodes(None, depth, switched) != default[depth]
    # A game's searches with their memory kept from move to move: the same trees.
    kept = tmp_path / "keep.toml"
    kept.write_text("[search]\nkeep_memory = true\ncorrection_history = true\ncontinuation_history = true\n"
                    "capture_history = true\nhistory_gravity = true\n")
    assert _game_nodes(site, kept) == _game_nodes(None, kept)
    perft = _run(site, "-m", "blitzaco", "perft", "4")
    assert "197281" in perft
    _play(site)
    # The engine's own board and its evaluations, compiled, against python-chess and
    # their properties, and against themselves pure.
    checked = _board_check(site)
    assert checked.split()[0] == "197281" and checked.split()[-1] == "200"  # every recorded score
    assert checked == _board_check(None)
    assert "interpreted build" not in _handshake(site)


def _board_check(site: Path | None) -> str:
    """Perft 4 from the start, a random-game cross-check on blitzaco.board (it
    raises on any difference from python-chess), the classical evaluation on it held
    to its properties, the network held to the file format's definition (each raises
    on any difference), a blend of net and classical score, the table's clearing (its
    salt, compiled), and the recorded scores of tests/data/eval_scores.csv: the counts
    printed."""
    code = (
        "import chess\n"
        "from blitzaco.board import Board, perft\n"
        "from blitzaco.tools.boardcheck import cross_check, eval_check, net_check, random_net, table_check\n"
        "print(perft(Board.from_chess(chess.Board()), 4), cross_check(11, 12, 100), eval_check(12, 20, 100),\n"
        "      net_check(random_net(16, 1), 13, 6, 80), net_check(random_net(8, 2, True), 14, 4, 60, 0.75),\n"
        "      net_check(random_net(8, 3), 15, 4, 60, 0.5, share=0.5),\n"
        "      net_check(random_net(8, 5, buckets=8), 16, 4, 90),\n"
        "      net_check(random_net(8, 6, buckets=8, squared=True), 17, 4, 90),\n"
        "      net_check(random_net(8, 7, buckets=8, mirrored=True), 18, 4, 90), table_check(16, 40), end=' ')\n"
        "import csv, dataclasses\n"
        "from blitzaco.bundled import bundled_file\n"
        "from blitzaco.classical import Classical\n"
        "from blitzaco.config import Config\n"
        "from blitzaco.network import NetEvaluator\n"
        "from blitzaco.nnue import load_weights\n"
        "shipped = Config().eval\n"
        "classical = Classical(dataclasses.replace(shipped, nn=dataclasses.replace(shipped.nn, enabled=False)))\n"
        "net = NetEvaluator(shipped, load_weights(bundled_file('net.bin')))\n"
        f"rows = list(csv.DictReader(open({str(SCORES)!r}), delimiter=';'))\n"
        "same = 0\n"
        "for row in rows:\n"
        "    own = Board.from_chess(chess.Board(row['fen'], chess960=row['chess960'] == '1'))\n"
        "    classical.reset(own)\n"
        "    net.reset(own)\n"
        "    same += classical.evaluate(own) == int(row['classical']) and net.evaluate(own) == int(row['network'])\n"
        "print(same)\n"
    )
    return _run(site, "-c", code)


def test_when_the_compiler_fails_the_wheel_is_pure_and_plays(tmp_path: Path) -> None:
    site, log = _build(tmp_path, {"CC": "false", "BLITZACO_PURE": "0"})
    assert "installing the pure-Python engine" in log
    assert not list(site.rglob(f"*{EXTENSION}")), "no half-built extension is left in the wheel"
    assert _compiled(site) == {Path(path).stem: False for path in NATIVE}
    _play(site)


def test_pure_on_request(tmp_path: Path) -> None:
    site, _ = _build(tmp_path, {"BLITZACO_PURE": "1"})
    assert _compiled(site) == {Path(path).stem: False for path in NATIVE}
    # It says so to the GUI, with the factor and how to get the compiled build.
    said = _handshake(site)
    assert "info string interpreted build: it searches about" in said and "pip install ." in said
    assert "release's compiled wheel or binary" in said


def _handshake(site: Path) -> str:
    """What the engine from *site* answers to ``uci`` and ``isready``."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "blitzaco"], input="uci\nisready\nquit\n", capture_output=True,
                          text=True, env=env, cwd=site, timeout=60, check=True)
    return done.stdout


# ------------------------------------------------------------- the defaults file


#: The shipped aspiration window, and the value the checkouts below are given instead.
WINDOW = load_config(ROOT / "config.toml").search.aspiration_window
OTHER_WINDOW = WINDOW + 1


def _checkout_with_other_defaults(tmp_path: Path) -> tuple[Path, str]:
    """A copy of the checkout whose top-level config.toml says aspiration_window =
    OTHER_WINDOW (WINDOW here): a build or an install that reads any other copy shows
    WINDOW."""
    checkout = BUILD.copy_checkout(tmp_path / "checkout")
    text = (checkout / "config.toml").read_text()
    assert f"\naspiration_window = {WINDOW}\n" in text
    text = text.replace(f"\naspiration_window = {WINDOW}\n", f"\naspiration_window = {OTHER_WINDOW}\n")
    (checkout / "config.toml").write_text(text)
    return checkout, text


def test_the_wheel_carries_the_top_level_config_toml(tmp_path: Path) -> None:
    """config.toml at the top of the repository is the one source of the defaults:
    the build copies it into the package (setup.py's build_py), and the installed
    engine reads exactly its values."""
    checkout, text = _checkout_with_other_defaults(tmp_path)
    assert not (checkout / "src" / "blitzaco" / "config.toml").exists()  # no second copy kept by hand
    site, _ = BUILD.build_wheel(tmp_path / "build", {"BLITZACO_PURE": "1"}, root=checkout)
    assert (site / "blitzaco" / "config.toml").read_text() == text
    assert _run(site, "-m", "blitzaco", "config") == text
    code = "from blitzaco.config import defaults_path; print(defaults_path())"
    assert _run(site, "-c", code).strip() == str(site / "blitzaco" / "config.toml")


def test_an_editable_install_reads_the_top_level_config_toml(tmp_path: Path) -> None:
    """An editable install (setuptools' editable wheel, as pip install -e builds it)
    carries no copy of the defaults: it reads the checkout's top-level config.toml,
    so an edit of that file is seen at once."""
    checkout, text = _checkout_with_other_defaults(tmp_path)
    out = tmp_path / "editable"
    subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_editable({str(out)!r})"],
        cwd=checkout, check=True, capture_output=True, timeout=600,
    )
    (wheel,) = out.glob("blitzaco-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if name.endswith("config.toml")]
        archive.extractall(site)
    # Without this environment's own site-packages processing (its .pth files may
    # install another copy of the engine, and its editable finder module has the same
    # name): the editable install's .pth processed first, then the packages it needs.
    packages = [path for path in sys.path if path.endswith("site-packages")]
    code = (
        f"import sys, site; site.addsitedir({str(site)!r}); sys.path += {packages!r}\n"
        "import blitzaco.config as config; print(config.__file__); print(config.defaults_path())\n"
        "print(config.dump_toml(), end='')\n"
    )
    # Nor this process's PYTHONPATH (a checkout's src/ there would come first).
    plain = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env=plain, check=True, timeout=120)
    module, defaults, printed = done.stdout.split("\n", 2)
    assert module == str(checkout / "src" / "blitzaco" / "config.py")
    assert defaults == str(checkout / "config.toml")
    assert printed == text
    edited = f"\naspiration_window = {OTHER_WINDOW + 1}\n"
    (checkout / "config.toml").write_text(text.replace(f"\naspiration_window = {OTHER_WINDOW}\n", edited))
    again = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path,
                           env=plain, check=True, timeout=120)
    assert edited in again.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="auditwheel repairs Linux wheels")
def test_the_release_wheel_installs_compiled_without_a_compiler(tmp_path: Path) -> None:
    """scripts/build_wheel.py's wheel (compiled, repaired by auditwheel to a manylinux
    tag), installed into a fresh virtual environment whose PATH has no C compiler:
    the engine is imported from it, compiled, says so, and passes the smoke test a
    GUI's use makes (scripts/smoke.py), its bench equal to the ledger's signature."""
    pytest.importorskip("mypyc.build")
    pytest.importorskip("auditwheel")
    if shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is None:
        pytest.skip("no C compiler to build the wheel with")
    house = tmp_path / "wheelhouse"
    built = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_wheel.py"), "--no-isolation",
                            "--out", str(house)], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = house.glob("blitzaco-*.whl")
    assert "manylinux" in wheel.name
    with zipfile.ZipFile(wheel) as archive:
        carried = [name for name in archive.namelist() if name.endswith(EXTENSION)]
    assert len(carried) > len(NATIVE)  # each module and mypyc's shared library
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    bin_dir = env_dir / "bin"
    # Not this process's PYTHONPATH: pip would take a checkout's src/ there (its egg-info
    # from an editable build) for the package installed, and install nothing.
    bare = {**os.environ, "PATH": str(bin_dir), "CC": "false"}  # no compiler to be found
    bare.pop("PYTHONPATH", None)
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                   check=True, timeout=300, capture_output=True, env=bare)
    # The wheel's dependencies (chess, numpy, librt) come from the packages this
    # interpreter sees: its site-packages folders, listed in a .pth file of the new
    # environment. Not --system-site-packages: run from a virtual environment, that
    # reaches the base interpreter's packages, not this environment's. The folders are
    # only added to the path, after the new environment's own site-packages (their own
    # .pth files, an editable install of the engine among them, are not processed).
    purelib = subprocess.run([str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, env=bare, check=True, timeout=120).stdout.strip()
    seen = [path for path in sys.path if Path(path).name in ("site-packages", "dist-packages")]
    (Path(purelib) / "dependencies.pth").write_text("".join(f"{path}\n" for path in seen))
    assert shutil.which("cc", path=bare["PATH"]) is None and shutil.which("gcc", path=bare["PATH"]) is None
    where = subprocess.run([str(bin_dir / "python"), "-c", "import blitzaco.board as b; print(b.__file__)"],
                           capture_output=True, text=True, env=bare, cwd=tmp_path, timeout=120)
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(env_dir)) and where.stdout.strip().endswith(EXTENSION)
    smoke = subprocess.run([str(bin_dir / "python"), str(ROOT / "scripts" / "smoke.py"), "--bench",
                            str(bench_signature()), "--compiled", str(bin_dir / "blitzaco")],
                           capture_output=True, text=True, env=bare, cwd=tmp_path, timeout=900)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "(compiled)" in smoke.stdout and "smoke: passed" in smoke.stdout
