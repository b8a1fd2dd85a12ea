"""scripts/depth_time.py at a trivially small depth: each engine (match.py's engine
specs) searched in turn over UCI, its times and nodes reported, a ConfigFile
reaching its engine (the figures are measurements, not behaviour: only their
presence and the nodes are checked)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from script_loader import load_script

from blitzaco.tools.match.runner import EngineSpec

ENGINE = f'cmd="{sys.executable} -m blitzaco"'
KP = "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"


def test_each_engine_reports_its_runs_and_nodes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two engines (the installed one, and the same with a ConfigFile that turns the
    null move and the pruning off), two runs each: four run lines, two summaries;
    the same engine searches the same tree every run, the other configuration a
    different one."""
    depth_time = load_script("scripts/depth_time.py")
    config = tmp_path / "unpruned.toml"
    config.write_text("[search]\nnull_move = false\nlate_move_reductions = false\nfutility = false\n")
    engines = ["plain", "unpruned"]
    specs = [f"name=plain {ENGINE}", f"name=unpruned {ENGINE} option.ConfigFile={config}"]
    argv = ["--depth", "5", "--runs", "2", "--fen", KP, "--engine", specs[0], "--engine", specs[1]]
    assert depth_time.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = [line for line in lines if line.startswith("run ")]
    assert len(runs) == 4 and all("depth 5 in " in line for line in runs), lines
    summaries = {line.split(": median")[0]: line.split("nodes ")[-1] for line in lines if ": median " in line}
    assert set(summaries) == set(engines), lines
    assert all(", " not in nodes for nodes in summaries.values()), summaries  # one count an engine
    assert summaries[engines[0]] != summaries[engines[1]], summaries
    assert all(int(nodes.replace(",", "")) > 0 for nodes in summaries.values()), summaries


def test_a_search_returns_time_nodes_and_move() -> None:
    """One search: positive time and nodes, a legal move of the position."""
    import chess

    depth_time = load_script("scripts/depth_time.py")
    seconds, nodes, move = depth_time.search(EngineSpec.parse(ENGINE), 3, KP)
    assert seconds > 0 and nodes > 0
    assert chess.Move.from_uci(move) in chess.Board(KP).legal_moves


def test_two_engines_of_one_name_are_refused() -> None:
    """The summary is by name: two engines named alike are refused before a search."""
    depth_time = load_script("scripts/depth_time.py")
    with pytest.raises(SystemExit):
        depth_time.main(["--depth", "1", "--engine", f"name=a {ENGINE}", "--engine", f"name=a {ENGINE}"])
