"""scripts/drift.py: which moves count (until the game first reaches -3 pawns for
the player), the losses' shares by size and by move number, the turning moves, and
(with Stockfish installed) a real game judged end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import chess
import pytest
from script_loader import load_script

drift = load_script("scripts/drift.py")
W, B = chess.WHITE, chess.BLACK


def test_moves_count_until_the_player_first_reaches_minus_three_pawns() -> None:
    # White's view after each ply; White plays moves 1, 2, 3, 4 (plies 0, 2, 4, 6).
    evaluations = [20, 30, 10, 40, -100, -110, -90, -380, -900, -950, -990]
    movers = [W, B] * 5
    numbers = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    # Move 4 leaves White at -3.8: counted, and the last counted.
    assert drift.counted_moves(evaluations, movers, numbers, W) == [(1, 0), (2, 0), (3, 10), (4, 290)]
    # Black's view is the negation; Black's moves are plies 1, 3, 5, 7, 9.
    assert drift.counted_moves(evaluations, movers, numbers, B) == [(1, 0), (2, 0), (3, 20), (4, 0), (5, 0)]
    # Already lost before the player's move (the opponent's move did it): not counted.
    assert drift.counted_moves([0, -500, -500], [B, W], [1, 2], W) == []


def test_the_shares_add_up_and_turning_moves_are_only_in_games_not_won() -> None:
    games = [
        drift.GameMoves("a", won=False, moves=[(3, 40), (10, 100), (20, 200)]),
        drift.GameMoves("b", won=True, moves=[(5, 160)]),  # won: no turning move counted
        drift.GameMoves("c", won=False, moves=[(16, 60), (30, 0)]),
    ]
    result = drift.figures(games)
    total = 40 + 100 + 200 + 160 + 60
    assert result["centipawns"] == total and result["moves"] == 6
    assert result["share_small"] == round(40 / total, 4)
    assert result["share_50_150"] == round(160 / total, 4)
    assert result["share_large"] == round(360 / total, 4)
    assert result["share_at_most_150"] == round(200 / total, 4)
    assert result["share_first_15_moves"] == round((40 + 100 + 160) / total, 4)
    assert (result["games"], result["not_won"], result["turned"]) == (3, 2, 1)
    assert result["turning_moves"] == [("a", 20)]


def test_a_mate_counts_as_the_cap() -> None:
    score = chess.engine.PovScore(chess.engine.Mate(3), chess.WHITE)
    assert drift.capped(score, W) == drift.CAP and drift.capped(score, B) == -drift.CAP
    assert drift.capped(chess.engine.PovScore(chess.engine.Cp(-4000), chess.BLACK), B) == -drift.CAP


@pytest.mark.skipif(shutil.which("stockfish") is None and not Path("/usr/games/stockfish").exists(),
                    reason="needs Stockfish")
def test_a_game_is_judged_by_stockfish(tmp_path: Path) -> None:
    """A short game where White ("us") hangs its queen: the move is a turning move
    of the game it did not win, and counting stops there (-3 pawns reached)."""
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[White "us"]\n[Black "them"]\n[Result "0-1"]\n\n1. e4 e5 2. Qh5 Nc6 3. Qxf7+ Kxf7 0-1\n')
    out = tmp_path / "d.json"
    assert drift.main([str(pgn), "--player", "us", "--depth", "6", "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    (game,) = written["games"]
    assert [number for number, _ in game["moves"]] == [1, 2, 3]
    assert game["moves"][-1][1] > 500
    assert written["figures"]["turned"] == 1 and written["figures"]["turning_moves"] == [["g.pgn#1", 3]]
    assert drift.main([str(pgn), "--player", "nobody"]) == 1
