"""Move-generation check: count the leaf nodes of the legal move tree (perft), for
``blitzaco perft`` and the UCI command ``go perft N``.

The tree is walked on the engine's own board (:mod:`blitzaco.board`), with the
generator, the legality test and the make/unmake the search uses, so a perft
mismatch against published numbers is a bug the search would suffer from too.
python-chess only sets the board up and writes the root moves.
"""

from __future__ import annotations

from collections.abc import Callable

import chess

from blitzaco.board import Board, legal_codes
from blitzaco.board import perft as board_perft
from blitzaco.moves import decode_move

__all__ = ["perft", "divide", "PerftStopped"]

#: Subtrees this shallow are counted in one call to the board's own perft (compiled:
#: about a millisecond at most), without looking at *stopped*.
_UNINTERRUPTED = 3


class PerftStopped(Exception):
    """The count was ended by its *stopped* callback."""


def _never() -> bool:
    return False


def _count(board: Board, depth: int, stopped: Callable[[], bool]) -> int:
    if depth <= _UNINTERRUPTED:
        return int(board_perft(board, depth))
    if stopped():
        raise PerftStopped
    total = 0
    for code in legal_codes(board):
        board.make(code)
        total += _count(board, depth - 1, stopped)
        board.unmake()
    return total


def perft(board: chess.Board, depth: int) -> int:
    """Leaf nodes at *depth* plies (the last ply is counted, not played)."""
    if depth <= 0:
        return 1
    return _count(Board.from_chess(board), depth, _never)


def divide(
    board: chess.Board, depth: int, stopped: Callable[[], bool] = _never
) -> list[tuple[chess.Move, int]]:
    """Perft split by root move, in the board's generation order. *stopped* is asked
    at every node more than three plies above the leaves; when it says true the
    count ends with :class:`PerftStopped`."""
    depth = max(depth, 1)
    own = Board.from_chess(board)
    counts: list[tuple[chess.Move, int]] = []
    for code in legal_codes(own):
        if stopped():
            raise PerftStopped
        own.make(code)
        move = decode_move(code)
        assert move is not None
        counts.append((move, _count(own, depth - 1, stopped) if depth > 1 else 1))
        own.unmake()
    return counts
