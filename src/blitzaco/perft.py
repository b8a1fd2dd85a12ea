"""Move-generation check: count the leaf nodes of the legal move tree.

Counts use the same legal move generator as the search, so a perft mismatch against
published numbers is a bug the search would suffer from too.
"""

from __future__ import annotations

import chess

__all__ = ["perft", "divide"]


def perft(board: chess.Board, depth: int) -> int:
    """Leaf nodes at *depth* plies (the last ply is counted, not played)."""
    if depth <= 0:
        return 1
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.generate_legal_moves():
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def divide(board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
    """Perft split by root move, in generation order (python-chess's ``divide``)."""
    depth = max(depth, 1)
    counts = []
    for move in list(board.generate_legal_moves()):
        board.push(move)
        counts.append((move, perft(board, depth - 1)))
        board.pop()
    return counts
