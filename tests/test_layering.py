"""The engine never imports a tool: loading every engine module (the UCI loop and
everything under it) must not load anything from ``blitzaco.tools`` (nor torch)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import blitzaco

#: Every module of the engine proper: the package's top-level modules except the
#: command dispatcher (``cli``, which loads a tool for the command it runs).
ENGINE_MODULES = sorted(
    f"blitzaco.{info.name}"
    for info in pkgutil.iter_modules(blitzaco.__path__)
    if not info.ispkg and info.name not in ("cli", "__main__")
)


def test_the_engine_modules_are_the_expected_ones() -> None:
    assert {"blitzaco.uci", "blitzaco.engine", "blitzaco.search", "blitzaco.static_eval"} <= set(ENGINE_MODULES)
    assert not any(name.startswith("blitzaco.tools") for name in ENGINE_MODULES)


def test_importing_the_engine_loads_no_tool() -> None:
    code = (
        "import sys\n"
        f"for name in {ENGINE_MODULES!r}:\n"
        "    if name != 'blitzaco.spectral':  # numpy, loaded only when the term is on\n"
        "        __import__(name)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "blitzaco.uci" in loaded and "blitzaco.search" in loaded
    tools = [name for name in loaded if name.startswith("blitzaco.tools") or name.split(".")[0] in ("torch", "numpy")]
    assert tools == []


def test_the_check_would_see_a_tool() -> None:
    """The check above can fail: importing a tool shows up in the same listing."""
    code = "import sys, blitzaco.uci, blitzaco.tools.bench\nprint('\\n'.join(sorted(sys.modules)))\n"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "blitzaco.tools.bench" in loaded


def test_start_up_does_not_load_traceback_until_a_bug_is_reported(capsys) -> None:  # type: ignore[no-untyped-def]
    """``traceback`` (with ``textwrap``) cost about 4 ms of start-up: the UCI loop loads
    it only when it reports a bug, and then prints the exception being handled."""
    code = "import sys, blitzaco.cli, blitzaco.uci\nprint('traceback' in sys.modules, 'textwrap' in sys.modules)\n"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == ["False", "False"]
    from blitzaco.engine import print_traceback

    try:
        raise ValueError("a planted bug")
    except ValueError:
        print_traceback()
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: a planted bug" in err
