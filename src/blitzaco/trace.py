"""The classical evaluation term by term: what ``eval`` prints and the tuner fits.

:func:`classical_trace` runs :class:`blitzaco.classical.Classical` on a position with
its tracing on and returns a :class:`Trace`: every term for both colours and both
phases, every feature count (how many isolated pawns, which mobility entry...), the
phase, the endgame scale and the score. The same code computes the score with
tracing off, so the trace always adds up to what the search sees.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import chess

from blitzaco.board import Board
from blitzaco.classical import FULL_PHASE, SCALE_NORMAL, TERM_NAMES, Classical
from blitzaco.config import EvalConfig

__all__ = ["Trace", "classical_trace", "format_trace"]


@dataclass
class Trace:
    """The terms of one evaluation: ``terms[name] = [white_mg, white_eg, black_mg,
    black_eg]`` (each colour's own contribution, positive = good for it), and
    ``features[name] = [white_count, black_count]`` with *name* the config weight it
    multiplies (``pawns.isolated``, ``pieces.mobility_knight[4]``, ``pst.knight_mg[27]``;
    a pair counts for both phases, a table named ``_mg``/``_eg`` for its phase).
    The king-attack features (``king.attack_weight[i]``: zone squares attacked by
    that piece type; ``king.attackers``) enter through the attack formula, counted
    for the attacking side."""

    terms: dict[str, list[int]] = field(default_factory=lambda: {name: [0, 0, 0, 0] for name in TERM_NAMES})
    features: dict[str, list[int]] = field(default_factory=dict)
    phase: int = 0
    scale: int = SCALE_NORMAL
    mg: int = 0  # White's view, before scaling and blending
    eg: int = 0
    score: int = 0  # White's view, what the evaluation returns for White

    def rows(self) -> Iterator[tuple[str, int, int, int, int, int, int]]:
        """(term, white mg, white eg, black mg, black eg, total mg, total eg) per term."""
        for name in TERM_NAMES:
            wm, we, bm, be = self.terms[name]
            yield name, wm, we, bm, be, wm - bm, we - be


def classical_trace(board: chess.Board, classical: Classical | None = None, config: EvalConfig | None = None) -> Trace:
    """The classical evaluation of *board* term by term and feature by feature, by
    *classical* (given, or made from *config*, or from the shipped weights)."""
    if classical is None:
        classical = Classical(config if config is not None else EvalConfig())
    own = Board.from_chess(board.copy(stack=False))  # the evaluation reads no history
    classical.reset(own)
    classical.tracing = True
    try:
        score = classical.evaluate(own)
    finally:
        classical.tracing = False
    trace = Trace()
    for index, name in enumerate(TERM_NAMES):
        trace.terms[name] = [classical.terms[index * 4 + k] for k in range(4)]
    trace.features = classical.features
    trace.phase = min(classical.phase[classical.top], FULL_PHASE)
    trace.scale = classical.traced_scale
    trace.mg, trace.eg = classical.traced_mg, classical.traced_eg
    trace.score = score if board.turn else -score
    return trace


def format_trace(trace: Trace) -> list[str]:
    """The trace as a table in pawns, each colour's own contribution and the total
    from White's point of view, as Stockfish's ``eval`` prints it."""

    def cell(mg: int, eg: int) -> str:
        return f"{mg / 100:6.2f} {eg / 100:6.2f}"

    rule = "--------------+---------------+---------------+--------------"
    lines = [
        "         Term |     White     |     Black     |     Total",
        "              |    MG     EG  |    MG     EG  |    MG     EG",
        rule,
    ]
    for name, wm, we, bm, be, tm, te in trace.rows():
        blank = f"{'----':>6} {'----':>6}"
        white = cell(wm, we) if name != "Tempo" or wm or we else blank
        black = cell(bm, be) if name != "Tempo" or bm or be else blank
        lines.append(f"{name:>13} | {white} | {black} | {cell(tm, te)}")
    lines.append(rule)
    total_mg = sum(row[5] for row in trace.rows())
    total_eg = sum(row[6] for row in trace.rows())
    lines.append(f"{'Total':>13} | {'':13} | {'':13} | {cell(total_mg, total_eg)}")
    lines.append("")
    share = 100 * trace.phase // FULL_PHASE
    lines.append(
        f"Phase {trace.phase}/{FULL_PHASE} (midgame {share}%, endgame {100 - share}%), "
        f"endgame scale {trace.scale}/{SCALE_NORMAL}"
    )
    return lines
