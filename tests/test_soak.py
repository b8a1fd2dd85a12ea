"""scripts/soak.py's reading of the runner's games and its search for the engine's
processes (the soak itself needs fastchess and runs by hand: see the ledger)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from script_loader import load_script

soak = load_script("scripts/soak.py")
pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the soak reads /proc (Linux)")

PGN = """[Event "?"]
[White "BlitzACO"]
[Black "sf2200"]
[Result "0-1"]
[Termination "time forfeit"]

1. e4 0-1

[Event "?"]
[White "sf2200"]
[Black "BlitzACO"]
[Result "0-1"]
[Termination "time forfeit"]

1. e4 0-1

[Event "?"]
[White "sf2200"]
[Black "BlitzACO"]
[Result "1-0"]
[Termination "abandoned"]

1. e4 1-0

[Event "?"]
[White "BlitzACO"]
[Black "sf2200"]
[Result "1/2-1/2"]
[Termination "adjudication"]

1. e4 1/2-1/2

[Event "?"]
[White "BlitzACO"]
[Black "sf2200"]
[Result "1-0"]
[Termination "illegal move"]

1. e4 1-0
"""


def test_the_games_charge_forfeits_and_crashes_to_the_side_that_lost() -> None:
    """A time forfeit the engine lost counts, one Stockfish lost does not; an
    abandoned game it lost is a crash; an illegal move by the other side is not
    the engine's."""
    counts = soak._games(PGN, "BlitzACO")
    assert counts == {"games": 5, "wins": 2, "losses": 2, "draws": 1, "crashes": 1, "illegal": 0, "forfeits": 1}
    assert soak._games(PGN, "sf2200")["illegal"] == 1


def test_the_engine_processes_are_found_by_their_mark_wherever_they_hang() -> None:
    """A process carrying the mark in its environment is found, and a child it left
    behind too after its parent exits (re-parented); an unmarked one is not."""
    mark = f"BLITZACO_SOAK=test-{os.getpid()}"
    script = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])"
    env = {**os.environ, "BLITZACO_SOAK": mark.split("=", 1)[1]}
    subprocess.run([sys.executable, "-c", script], env=env, check=True)
    plain = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        found = soak.marked(mark)
        assert len(found) == 1 and plain.pid not in found
    finally:
        plain.kill()
        for pid in soak.marked(mark):
            os.kill(pid, 9)
    deadline = time.monotonic() + 30
    while soak.marked(mark) and time.monotonic() < deadline:  # killed: gone once it is reaped
        time.sleep(0.05)
    assert soak.marked(mark) == []
