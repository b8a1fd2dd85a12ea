"""Move-generation check: count the leaf nodes of the legal move tree (perft), for
``blitzaco perft`` and the UCI command ``go perft N``.

The tree is walked exactly as the search walks it: the search's own staged move
generator (:func:`blitzaco.movepick.ordered_moves`, or the evasions in check), its
legality test after each move, and its own make/unmake
(:class:`blitzaco.position.Position`). So a perft mismatch against published
numbers is a bug the search would suffer from too.
"""

from __future__ import annotations

from collections.abc import Callable

import chess

from blitzaco.config import EvalConfig
from blitzaco.evaluate import Evaluator
from blitzaco.movepick import evasions, is_check, legality_masks, ordered_moves, was_into_check
from blitzaco.moves import decode_move
from blitzaco.position import Position

__all__ = ["perft", "divide", "PerftStopped"]

_BB_SQUARES = chess.BB_SQUARES
_NO_KILLERS = (0, 0)
_NO_HISTORY = [0] * 8192


def _legal_codes(pos: Position) -> list[int]:
    """The legal moves of *pos* as codes, found as the search finds them."""
    board = pos.board
    checked = is_check(board)
    if checked:
        moves = evasions(board, 0)
    else:
        moves = list(ordered_moves(board, 0, _NO_KILLERS, 0, _NO_HISTORY, False))
    suspects, ep_square = legality_masks(board)
    legal = []
    for code, _ in moves:
        if _BB_SQUARES[code & 63] & suspects or code >> 6 & 63 == ep_square:
            pos.push(code)
            illegal = was_into_check(board)
            pos.pop()
            if illegal:
                continue
        legal.append(code)
    return legal


class PerftStopped(Exception):
    """The count was ended by its *stopped* callback."""


def _never() -> bool:
    return False


def _count(pos: Position, depth: int, stopped: Callable[[], bool]) -> int:
    moves = _legal_codes(pos)
    if depth == 1:
        return len(moves)
    if stopped():
        raise PerftStopped
    total = 0
    for code in moves:
        pos.push(code)
        total += _count(pos, depth - 1, stopped)
        pos.pop()
    return total


def _position(board: chess.Board) -> Position:
    return Position(board, Evaluator(EvalConfig()).psq)


def perft(board: chess.Board, depth: int) -> int:
    """Leaf nodes at *depth* plies (the last ply is counted, not played)."""
    if depth <= 0:
        return 1
    return _count(_position(board), depth, _never)


def divide(
    board: chess.Board, depth: int, stopped: Callable[[], bool] = _never
) -> list[tuple[chess.Move, int]]:
    """Perft split by root move, in the search's generation order. *stopped* is asked
    at every node above the last ply; when it says true the count ends with
    :class:`PerftStopped`."""
    depth = max(depth, 1)
    pos = _position(board)
    counts = []
    for code in _legal_codes(pos):
        pos.push(code)
        counts.append((decode_move(code), _count(pos, depth - 1, stopped) if depth > 1 else 1))
        pos.pop()
    return counts  # type: ignore[return-value]
