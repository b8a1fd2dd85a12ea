"""Win/draw/loss chances from a score, as ``UCI_ShowWDL`` prints them.

The model is Stockfish's form: with *x* the material on the board (pawn 1, knight
and bishop 3, rook 5, queen 9, both sides, kept in [17, 78]) divided by 58,

    a(x) = a0 x^3 + a1 x^2 + a2 x + a3        (the score of an even game, cp)
    b(x) = b0 x^3 + b1 x^2 + b2 x + b3        (its spread, cp)
    win  = 1 / (1 + exp((a - score) / b)),  loss = 1 / (1 + exp((a + score) / b))

and the draw is what is left. The parameters live in ``config.toml``'s ``[wdl]``;
they are fitted to the engine's own games (``scripts/fit_wdl.py``,
:mod:`blitzaco.tools.wdlfit`).
"""

from __future__ import annotations

import math

import chess

from blitzaco.config import WdlConfig

__all__ = ["material", "wdl"]

def material(board: chess.Board) -> int:
    """Material on the board, both sides (pawn 1, minor 3, rook 5, queen 9)."""
    return (
        chess.popcount(board.pawns)
        + 3 * chess.popcount(board.knights | board.bishops)
        + 5 * chess.popcount(board.rooks)
        + 9 * chess.popcount(board.queens)
    )


def _poly(coefficients: tuple[float, ...], x: float) -> float:
    result = 0.0
    for coefficient in coefficients:
        result = result * x + coefficient
    return result


def wdl(score: int, pieces: int, config: WdlConfig, mate: int | None = None) -> tuple[int, int, int]:
    """(win, draw, loss) per mille for the side whose *score* (centipawns) it is,
    with *pieces* the :func:`material` on the board; *mate* (moves, negative when
    being mated) overrides the score. The three add up to 1000."""
    if mate is not None:
        return (1000, 0, 0) if mate > 0 else (0, 0, 1000)
    x = min(max(pieces, 17), 78) / 58
    a = _poly(config.a, x)
    b = max(_poly(config.b, x), 1.0)
    win = round(1000 / (1 + math.exp(min(max((a - score) / b, -500.0), 500.0))))
    loss = round(1000 / (1 + math.exp(min(max((a + score) / b, -500.0), 500.0))))
    return win, 1000 - win - loss, loss
