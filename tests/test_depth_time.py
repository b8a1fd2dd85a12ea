"""scripts/depth_time.py at a trivially small depth: each engine searched in turn
over UCI, its times and nodes reported, a ConfigFile reaching its engine (the
figures are measurements, not behaviour: only their presence and the nodes are
checked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from script_loader import load_script

KP = "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"


def test_each_engine_reports_its_runs_and_nodes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two engines (the installed one, and the same with a ConfigFile that turns the
    null move and the pruning off), two runs each: four run lines, two summaries;
    the same engine searches the same tree every run, the other configuration a
    different one."""
    depth_time = load_script("scripts/depth_time.py")
    config = tmp_path / "plain.toml"
    config.write_text("[search]\nnull_move = false\nlate_move_reductions = false\nfutility = false\n")
    engines = ["installed", f"installed:{config}"]
    assert depth_time.main(["--depth", "5", "--runs", "2", "--fen", KP, *engines]) == 0
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
    seconds, nodes, move = depth_time.search("installed", 3, KP)
    assert seconds > 0 and nodes > 0
    assert chess.Move.from_uci(move) in chess.Board(KP).legal_moves
