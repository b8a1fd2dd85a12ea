"""Static exchange evaluation of a python-chess move, for the tools (the analysis's
sacrifice test, the tuner's quiet-position rule): the search's own
:func:`blitzaco.movepick.see_ge`, on the engine's board set up from the position."""

from __future__ import annotations

import chess

from blitzaco.board import Board
from blitzaco.movepick import see_ge as board_see_ge
from blitzaco.movepick import see_scratch
from blitzaco.moves import encode_move

__all__ = ["see_ge", "any_see_ge"]


def see_ge(board: chess.Board, move: chess.Move, threshold: int = 0) -> bool:
    """Whether the exchange *move* starts on its target square wins at least
    *threshold* centipawns for the side to move of *board* (least valuable recapture
    first, x-rays seen, pins ignored; castling and promotions count as 0, en passant
    as a pawn)."""
    return any_see_ge(board, [move], threshold)


def any_see_ge(board: chess.Board, moves: list[chess.Move], threshold: int = 0) -> bool:
    """Whether any of *moves* wins at least *threshold* by :func:`see_ge`, the
    engine's board set up once for them all."""
    if not moves:
        return False
    own = Board.from_chess(board.copy(stack=False), 1)
    scratch = see_scratch()
    return any(board_see_ge(own, encode_move(move), threshold, scratch) for move in moves)
