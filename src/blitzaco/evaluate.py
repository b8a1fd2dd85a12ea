"""The tapered evaluator: material plus piece-square tables, midgame and endgame.

Scores are centipawns. The search keeps the midgame and endgame sums and the game
phase up to date incrementally (see :mod:`blitzaco.position`), so evaluating a node
is a blend of two numbers; :meth:`Evaluator.evaluate_board` computes the same value
from scratch and is what tests and the ``eval`` command compare against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from blitzaco.config import EvalConfig

if TYPE_CHECKING:
    from blitzaco.position import Position

__all__ = ["Evaluator", "PHASE_WEIGHT", "FULL_PHASE", "PsqTable"]

#: Phase contribution by piece type (index = chess.PAWN ... chess.KING): knight and
#: bishop 1, rook 2, queen 4, so the starting position has phase 24.
PHASE_WEIGHT = (0, 0, 1, 1, 2, 4, 0)
FULL_PHASE = 24

#: ``table[color][piece_type][square] == (mg, eg)``, signed from White's point of
#: view (Black's entries are negative) and including the piece's material value.
PsqTable = tuple[tuple[tuple[tuple[int, int], ...], ...], ...]


class Evaluator:
    """Evaluation with weights from an :class:`EvalConfig`. Immutable and thread-safe."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self.psq: PsqTable = _build_psq(config)

    def evaluate(self, pos: Position) -> int:
        """Score of *pos* for the side to move, from its incremental sums."""
        phase = pos.phase if pos.phase < FULL_PHASE else FULL_PHASE
        blend = pos.mg * phase + pos.eg * (FULL_PHASE - phase)
        # Divide after taking the side to move's view so that a position and its
        # colour mirror get exactly the same score (// rounds towards -infinity).
        return blend // FULL_PHASE if pos.board.turn else -blend // FULL_PHASE

    def evaluate_board(self, board: chess.Board) -> int:
        """Score of *board* for the side to move, computed from scratch."""
        mg, eg, phase = self.sums(board)
        phase = min(phase, FULL_PHASE)
        blend = mg * phase + eg * (FULL_PHASE - phase)
        return blend // FULL_PHASE if board.turn else -blend // FULL_PHASE

    def sums(self, board: chess.Board) -> tuple[int, int, int]:
        """The (midgame, endgame, phase) sums of *board*, White's point of view."""
        mg = eg = phase = 0
        psq = self.psq
        for square, piece in board.piece_map().items():
            m, e = psq[piece.color][piece.piece_type][square]
            mg += m
            eg += e
            phase += PHASE_WEIGHT[piece.piece_type]
        return mg, eg, phase


def _build_psq(config: EvalConfig) -> PsqTable:
    material = config.material
    values = (None, material.pawn, material.knight, material.bishop, material.rook, material.queen, (0, 0))
    pst = config.pst
    tables = (
        None,
        (pst.pawn_mg, pst.pawn_eg),
        (pst.knight_mg, pst.knight_eg),
        (pst.bishop_mg, pst.bishop_eg),
        (pst.rook_mg, pst.rook_eg),
        (pst.queen_mg, pst.queen_eg),
        (pst.king_mg, pst.king_eg),
    )
    by_color = []
    for color in (chess.BLACK, chess.WHITE):
        sign = 1 if color == chess.WHITE else -1
        by_type: list[tuple[tuple[int, int], ...]] = [()]
        for piece_type in chess.PIECE_TYPES:
            value = values[piece_type]
            mg_table, eg_table = tables[piece_type]  # type: ignore[misc]
            squares = []
            for square in chess.SQUARES:
                # Tables are written a8 first; White's square s sits at row-major
                # index s ^ 56, Black's (mirrored vertically) at index s.
                index = square ^ 56 if color == chess.WHITE else square
                squares.append(
                    (sign * (value[0] + mg_table[index]), sign * (value[1] + eg_table[index]))  # type: ignore[index]
                )
            by_type.append(tuple(squares))
        by_color.append(tuple(by_type))
    return tuple(by_color)
