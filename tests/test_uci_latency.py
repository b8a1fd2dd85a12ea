"""scripts/uci_latency.py's start-up figures: what it times is what it names (the
figures themselves are benchmarks for the ledger, never asserted)."""

from __future__ import annotations

import subprocess
import sys

from script_loader import ROOT, load_script

latency = load_script("scripts/uci_latency.py")
ENGINE = [sys.executable, "-m", "blitzaco"]


def test_startup_times_uciok_then_a_whole_first_search() -> None:
    uciok, bestmove, cpu = latency.startup(ENGINE)
    assert 0 < uciok < bestmove
    # the first search is given FIRST_SEARCH_MS and answers after it, not before
    assert bestmove - uciok >= latency.FIRST_SEARCH_MS * 0.9
    assert cpu > 0


def test_compare_startup_alternates_and_names_each_figure() -> None:
    # the same command twice: one run of each, alternated, filed under its one name
    results = latency.compare_startup([ENGINE, ENGINE], runs=1)
    name = " ".join(ENGINE)
    assert set(results) == {
        f"{name}: start-up to uciok",
        f"{name}: to the first bestmove ({latency.FIRST_SEARCH_MS} ms search)",
        f"{name}: CPU time to exit",
    }
    assert all(len(values) == 2 for values in results.values())


def test_cold_needs_a_comparison() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "uci_latency.py"), "--cold"], capture_output=True, text=True
    )
    assert run.returncode == 2 and "--cold goes with --startup-against" in run.stderr
