"""blitzaco analyse on real games: blunders found, brilliancies found, summaries
that add up, problems reported without stopping the rest."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import chess.pgn
import pytest
from uci_driver import DATA, ENGINE_COMMAND

from blitzaco.timeman import Limits
from blitzaco.tools.analyse import CLASSES, accuracy, analyse_pgn, win_chance

GAMES = DATA / "analyse_games.pgn"


@pytest.fixture(scope="module")
def analysed():
    return analyse_pgn(GAMES, Limits(depth=4))


def _move(analyses, game: int, san: str, ply: int):
    analysis = next(a for a in analyses if a.number == game)
    return next(m for m in analysis.moves if m.san == san and m.ply == ply)


def test_walking_into_mate_is_a_blunder(analysed) -> None:
    analyses, _ = analysed
    assert _move(analyses, 2, "Nf6", 6).classification == "Blunder"


def test_missed_mate_and_hanging_queen_are_blunders(analysed) -> None:
    analyses, _ = analysed
    assert _move(analyses, 4, "Nf3", 7).classification == "Blunder"  # Qxf7# was mate
    assert _move(analyses, 4, "Qh4", 8).classification == "Blunder"  # the queen hangs


def test_the_opera_game_queen_sacrifice_is_brilliant(analysed) -> None:
    analyses, _ = analysed
    assert _move(analyses, 1, "Qb8+", 31).classification == "Brilliant"
    mate = _move(analyses, 1, "Rd8#", 33)
    assert mate.classification in ("Excellent", "Brilliant")


def test_illegal_move_reported_with_game_and_ply_rest_analysed(analysed) -> None:
    analyses, problems = analysed
    assert any(problem.startswith("game 3:") and "ply 3" in problem for problem in problems)
    assert [analysis.number for analysis in analyses] == [1, 2, 3, 4]
    assert len(next(a for a in analyses if a.number == 3).moves) == 2  # 1. e4 e5 analysed


def test_summaries_add_up(analysed) -> None:
    analyses, _ = analysed
    for analysis in analyses:
        for color, player in analysis.players.items():
            moves = [m for m in analysis.moves if m.color == color]
            assert player.moves == len(moves) == sum(player.counts.values())
            assert set(player.counts) == set(CLASSES)
            assert 0.0 <= player.accuracy <= 100.0
            assert player.acpl == pytest.approx(sum(m.loss for m in moves) / len(moves) if moves else 0.0)
    loser = next(a for a in analyses if a.number == 2).players[chess.BLACK]
    assert loser.counts["Blunder"] >= 1 and loser.accuracy < 90


def test_annotated_pgn_has_nags_and_evaluations(analysed) -> None:
    analyses, _ = analysed
    game = chess.pgn.read_game(io.StringIO(analyses[1].pgn))
    assert game is not None
    nodes = list(game.mainline())
    blunder = nodes[5]
    assert chess.pgn.NAG_BLUNDER in blunder.nags
    assert "[%eval" in blunder.comment and "best" in blunder.comment
    assert game.headers["White"] == "A"


def test_accuracy_formula() -> None:
    assert win_chance(0) == pytest.approx(50.0)
    assert accuracy(100, 100) == pytest.approx(100.0, abs=0.01)
    assert accuracy(300, -300) < accuracy(300, 200) < 100


def test_command_line(tmp_path: Path) -> None:
    out = tmp_path / "annotated.pgn"
    graph = tmp_path / "eval.png"
    run = subprocess.run(
        [*ENGINE_COMMAND, "analyse", str(GAMES), "--depth", "3", "--out", str(out), "--graph", str(graph)],
        capture_output=True, text=True, check=True,
    )
    assert "Game 1: Paul Morphy - Duke Karl / Count Isouard 1-0" in run.stdout
    assert "accuracy" in run.stdout and "game 3:" in run.stderr
    assert "positions" in run.stderr  # the progress bar
    assert out.read_text().count("[Event ") == 4
    assert graph.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
