"""The frozen single-file engine, built with PyInstaller and driven through
python-chess's UCI client exactly as the installed engine is.

One test builds the binary once (about half a minute) and runs the whole scenario,
so that CI builds it once however many workers run the tests. Deselect it with
``-m 'not frozen'`` when iterating on something else.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import chess
import chess.engine
import pytest
from uci_driver import DATA, UciProcess, bench_signature, descendants, process_alive

from blitzaco.engine import MAX_THREADS

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.frozen


def test_the_frozen_binary_behaves_like_the_installed_engine(tmp_path: Path) -> None:
    pytest.importorskip("PyInstaller")
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_binary.py"), "--dist", str(tmp_path / "dist")],
        check=True, capture_output=True,
    )
    binary = tmp_path / "dist" / ("blitzaco.exe" if sys.platform == "win32" else "blitzaco")
    assert binary.is_file()

    # What the binary carries: the engine and its book, not torch, numpy or the tools.
    listing = subprocess.run(
        [sys.executable, "-m", "PyInstaller.utils.cliutils.archive_viewer", "-r", "-b", str(binary)],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert "blitzaco/assets/book.bin" in listing
    # The defaults are the top-level config.toml, exactly its values (the binary reads
    # the parsed copy the build made of that file).
    assert "blitzaco/config.toml" in listing
    printed = subprocess.run([str(binary), "config"], capture_output=True, text=True, check=True, timeout=60).stdout
    assert printed == (ROOT / "config.toml").read_text()
    # The search compiled (setup.py, mypyc) where this machine can compile it, else pure.
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    compiler = shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0])
    compiled = importlib.util.find_spec("mypyc") is not None and bool(compiler)
    if compiled:
        assert f"blitzaco/search{suffix}" in listing and "blitzaco.search" not in listing
        assert any(name.endswith(f"__mypyc{suffix}") for name in listing)
    else:
        assert "blitzaco.search" in listing
    assert "blitzaco/assets/pheromone.bin" in listing
    assert "blitzaco/assets/nn.bin" in listing
    assert "blitzaco/assets/net.bin" in listing
    absent_modules = (
        "torch", "numpy", "blitzaco.tools.match", "blitzaco.spectral", "blitzaco.tools.colony", "chess.engine",
    )
    for absent in absent_modules:
        assert not any(name == absent or name.startswith(absent + ".") for name in listing), absent

    # Run from an unrelated folder: the bundled book must be found inside the binary.
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    with tempfile.TemporaryFile() as stderr:
        engine = chess.engine.SimpleEngine.popen_uci([str(binary)], timeout=30, stderr=stderr, cwd=workdir)
        try:
            assert engine.id["name"].startswith("BlitzACO")
            assert engine.options["OwnBook"].default is True  # the bundled book was found
            engine.configure({"Hash": 32, "Move Overhead": 50, "SyzygyPath": str(DATA / "syzygy")})

            # A short game against itself, book moves first, then searched moves.
            board = chess.Board()
            for _ in range(16):
                result = engine.play(board, chess.engine.Limit(white_clock=2, black_clock=2, white_inc=0.02,
                                                               black_inc=0.02))
                assert result.move in board.legal_moves
                board.push(result.move)

            # The tablebases outside the binary are used.
            endgame = chess.Board("8/8/8/8/4k3/8/8/R3K3 w - - 0 1")
            info = engine.analyse(endgame, chess.engine.Limit(depth=3))
            assert info.get("tbhits", 0) > 0

            # An infinite analysis stopped.
            engine.configure({"OwnBook": False})
            with engine.analysis(board) as analysis:
                time.sleep(0.5)
                analysis.stop()
                best = analysis.wait()
            assert best.move in board.legal_moves
        finally:
            engine.quit()
        stderr.seek(0)
        errors = stderr.read()
    assert b"Traceback" not in errors, errors.decode("utf-8", "replace")

    def answer(name: str, config: str, commands: str) -> list[str]:
        """The binary's output for *commands* after loading *config* as a ConfigFile."""
        path = tmp_path / name
        path.write_text(config)
        return subprocess.run(
            [str(binary)], input=f"uci\nsetoption name ConfigFile value {path}\n{commands}quit\n",
            capture_output=True, text=True, timeout=60,
        ).stdout.splitlines()

    # The spectral term needs numpy, which the binary leaves out: switching it on is
    # refused with a message, and eval says so too.
    lines = answer("spectral.toml", "[eval.spectral]\nenabled = true\n", "eval\n")
    assert any("spectral term switched off" in line and "numpy" in line for line in lines)
    assert any(line.startswith("Spectral terms: not available") for line in lines)
    assert any(line.startswith("Final evaluation") for line in lines)

    # The shipped residual network, switched on, is read from inside the binary and scores.
    lines = answer("network.toml", '[eval.nn]\nenabled = true\nfile = ""\nweight = 1.0\nclassical = 0.0\n',
                   "eval\ngo depth 4\nisready\n")
    assert any("using network nn.bin" in line for line in lines), lines
    assert any(line.startswith("Network score") for line in lines)
    assert any(line.startswith("bestmove") for line in lines)
    # The replacing net, the default (blended), is read from inside the binary too.
    lines = answer("net.toml", "", "eval\ngo depth 4\nisready\n")
    assert any("using network net.bin" in line and "a whole evaluation" in line for line in lines), lines
    assert any(line.startswith("bestmove") for line in lines)

    # Threads 2: the helper is the binary started again by multiprocessing (spawn),
    # which freeze_support turns into a helper. It starts up (debug mode says so),
    # nothing goes wrong, and no process is left after quit.
    with UciProcess([str(binary)], cwd=workdir) as uci:
        uci.handshake()
        uci.send("setoption name OwnBook value false")
        uci.send("setoption name Threads value 2")
        uci.send("debug on")
        uci.send("position startpos")
        ready = False
        deadline = time.monotonic() + 120
        while not ready and time.monotonic() < deadline:
            uci.send("go depth 3")
            ready = any("helpers: 1 of 1 ready" in line for line in uci.read_until("bestmove", timeout=120))
        assert ready, uci.seen[-10:]
        uci.send("go nodes 3000")
        last = [line for line in uci.read_until("bestmove") if " nodes " in line][-1]
        assert int(last.split(" nodes ")[1].split()[0]) >= 3000
        processes = descendants(uci.proc.pid) if Path("/proc/self/stat").exists() else set()
        uci.send("quit")
        assert uci.proc.wait(timeout=30) == 0
        assert not any("error" in line for line in uci.seen), [line for line in uci.seen if "error" in line]
        assert b"Traceback" not in b"".join(uci.stderr)
    deadline = time.monotonic() + 30
    while any(process_alive(pid) for pid in processes) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(process_alive(pid) for pid in processes)

    # quit ends the process at once, also mid-search.
    process = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None
    process.stdin.write("uci\nposition startpos moves e2e4\ngo infinite\n")
    process.stdin.flush()
    time.sleep(0.5)
    process.stdin.write("quit\n")
    process.stdin.flush()
    assert process.wait(timeout=10) == 0

    # quit at Threads 2 again and again (during go infinite, right after bestmove, right
    # after readyok as the helper starts, after ucinewgame): exit 0, nothing on stderr,
    # no process left (multiprocessing's resource tracker, left running, found the
    # folder it runs from deleted by the bootloader and wrote a traceback), nothing
    # new in /dev/shm. BLITZACO_QUIT_STRESS=N runs N quits instead of 8.
    if sys.platform.startswith("linux") and MAX_THREADS >= 2:
        quits = int(os.environ.get("BLITZACO_QUIT_STRESS", "8"))
        stress = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "quit_stress.py"), "--quits", str(quits), "--", str(binary)],
            capture_output=True, text=True, cwd=workdir, timeout=60 + 30 * quits,
        )
        assert stress.returncode == 0, (stress.stdout + stress.stderr)[-3000:]
        assert f"quit_stress: 0 of {quits} runs failed" in stress.stdout, stress.stdout[-3000:]

    # The release's smoke test, as the workflow runs it on every binary it builds:
    # --version, uci, a game under a clock, go depth, quit, bench equal to the signature.
    smoke = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "smoke.py"), "--bench", str(bench_signature()),
         *(["--compiled"] if compiled else []), str(binary)],
        capture_output=True, text=True, cwd=workdir, timeout=900,
    )
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "smoke: passed" in smoke.stdout


@pytest.mark.slow
def test_the_binary_builds_from_a_plain_install(tmp_path: Path) -> None:
    """As a user builds it: a fresh virtual environment made by ``pip install .``
    (no mypy, no PyInstaller, and no setuptools with ``bdist_wheel``: Python 3.11's
    venv brings setuptools 65 without it, 3.12's none), then ``python
    scripts/build_binary.py`` with that environment's Python. The script installs what
    it lacks and builds the binary, compiled where a C compiler is found. Several
    minutes and a package index (pip downloads the tools): marked slow."""
    from script_loader import load_script

    build = load_script("scripts/build_binary.py")
    checkout = build.copy_checkout(tmp_path / "checkout")  # its own build/ folder
    for folder in ("scripts", "uci"):
        shutil.copytree(ROOT / folder, checkout / folder, ignore=shutil.ignore_patterns("__pycache__"))
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    python = env_dir / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    plain = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # not this checkout's src
    probe = subprocess.run([str(python), "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp_path / "probe"),
                            "wheel"], capture_output=True, text=True, env=plain, timeout=300)
    if probe.returncode != 0:
        pytest.skip(f"no package index to install the build's tools from: {probe.stderr[-300:]}")
    # The engine installed pure (the compiled install is not what this test is about).
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(checkout)], check=True, capture_output=True,
                   env={**plain, "BLITZACO_PURE": "1"}, timeout=900)
    # What the issue saw: this environment cannot build the wheel by itself.
    bare = subprocess.run([str(python), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                           str(tmp_path / "bare"), str(checkout)], capture_output=True, text=True, env=plain,
                          cwd=tmp_path, timeout=600)
    assert bare.returncode != 0
    tools = "import importlib.util as u; print(u.find_spec('mypyc') is None, u.find_spec('PyInstaller') is None)"
    assert subprocess.run([str(python), "-c", tools], capture_output=True, text=True, env=plain,
                          check=True).stdout.split() == ["True", "True"]

    built = subprocess.run([str(python), str(checkout / "scripts" / "build_binary.py"), "--dist",
                            str(tmp_path / "dist")], capture_output=True, text=True, env=plain, cwd=tmp_path,
                           timeout=1800)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    assert "build_binary: installing what the build needs: " in built.stderr
    binary = tmp_path / "dist" / ("blitzaco.exe" if sys.platform == "win32" else "blitzaco")
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True,
                             cwd=tmp_path, timeout=60).stdout
    compiler = shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0])
    assert version.startswith("BlitzACO") and ("(compiled)" in version) == bool(compiler), version
