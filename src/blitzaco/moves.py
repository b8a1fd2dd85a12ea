"""Moves as small integers, the form the search, the transposition table and the
pheromone memory share: ``from | to << 6 | promotion << 12`` (15 bits; 0 is no
move). Castling is written as python-chess writes it on the board it came from
(king two squares, or king takes rook in Chess960).
"""

from __future__ import annotations

from typing import Final

import chess

__all__ = ["encode_move", "decode_move", "PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"]

#: The piece types, for the modules that make and generate moves. Final, like their
#: other module constants: compiled (setup.py), a Final is a C global instead of a
#: lookup in the module's dictionary.
PAWN: Final = chess.PAWN
KNIGHT: Final = chess.KNIGHT
BISHOP: Final = chess.BISHOP
ROOK: Final = chess.ROOK
QUEEN: Final = chess.QUEEN
KING: Final = chess.KING


def encode_move(move: chess.Move | None) -> int:
    """A move as an integer: from | to << 6 | promotion << 12 (0 for no move)."""
    if move is None:
        return 0
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def decode_move(code: int) -> chess.Move | None:
    """The inverse of :func:`encode_move`."""
    if not code:
        return None
    return chess.Move(code & 63, (code >> 6) & 63, (code >> 12) or None)
