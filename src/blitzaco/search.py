"""Iterative-deepening principal variation search.

The search is a generator: :meth:`Search.iterate` yields one :class:`Iteration` per
completed depth and the caller (the engine) decides whether to start another. It
never prints; it reports failed aspiration windows and the root move being searched
through callbacks. It polls :class:`~blitzaco.timeman.SearchControl` every
:data:`POLL_INTERVAL` nodes and unwinds with :class:`SearchStopped` when the hard
limit, a node limit or ``stop`` ends it.

Inside: aspiration windows at the root; principal variation search (null windows
after the first move); check extension; mate distance pruning; null-move pruning;
reverse futility, futility and late-move pruning; late-move reductions; internal
iterative reduction; a quiescence search over captures with static exchange and
delta pruning; killer, counter-move and history ordering (:mod:`blitzaco.movepick`).
Every margin is a field of :class:`~blitzaco.config.SearchConfig`.

Moves inside the search are integer codes (:mod:`blitzaco.moves`), made and unmade
by :class:`~blitzaco.position.Position`; the static score comes from one object,
:class:`~blitzaco.static_eval.StaticEval`. Scores are centipawns for the side to
move; a mate in *n* plies scores ``MATE - n`` (mated: ``-MATE + n``).
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Final

import chess

from blitzaco.config import SearchConfig
from blitzaco.evaluate import material_and_tables
from blitzaco.movepick import (
    CODE_MASK,
    RISKY,
    SEE_VALUES,
    CheckTest,
    capture_moves,
    evasion_codes,
    evasions,
    is_check,
    legality_masks,
    ordered_moves,
    see_code_ge,
    was_into_check,
)
from blitzaco.moves import decode_move, encode_move
from blitzaco.pheromone import Trails
from blitzaco.position import Position
from blitzaco.probe import Probe
from blitzaco.static_eval import StaticEval
from blitzaco.timeman import Poll
from blitzaco.tt import EXACT, LOWER, UPPER, NativeTable, Table, score_from_tt, score_to_tt

__all__ = [
    "MATE",
    "MATE_BOUND",
    "TB_WIN",
    "TB_BOUND",
    "MAX_PLY",
    "MAX_DEPTH",
    "INFINITE",
    "Bound",
    "PvLine",
    "Iteration",
    "RootChoice",
    "Search",
    "SearchStopped",
    "Trim",
    "mate_in",
    "tablebase_score",
]

MATE: Final = 32000
MAX_PLY: Final = 128
MAX_DEPTH: Final = 64
#: Scores at least this large (in absolute value) are mate scores.
MATE_BOUND: Final = MATE - MAX_PLY
INFINITE: Final = MATE + 1
#: A tablebase win found *n* plies from the root scores TB_WIN - n: below every mate,
#: above every evaluation.
TB_WIN: Final = 20000
#: Scores at least this large (in absolute value) are tablebase or mate scores; the
#: table stores them relative to the node, like mate scores.
TB_BOUND: Final = TB_WIN - MAX_PLY
#: Nodes between two looks at the clock and the stop flag (a node costs tens of µs).
POLL_INTERVAL: Final = 64

_BB_SQUARES: Final = chess.BB_SQUARES
_first: Final = itemgetter(0)
#: Values of captured pieces for delta pruning (centipawns), by piece type: the
#: exchange values (a king is never captured).
_DELTA_VALUES: Final = SEE_VALUES
#: Quiet moves allowed when late-move pruning does not apply.
_NO_LIMIT: Final = 1 << 30
#: The history table is halved when an entry passes this.
HISTORY_LIMIT: Final = 1 << 20
_NO_KILLERS: Final = [0, 0]


class Bound(enum.Enum):
    """How a reported score relates to the true value (the protocol's words for
    these are :mod:`blitzaco.uci`'s business)."""

    EXACT = "exact"
    LOWER = "lower"  # the search failed high: the value is at least the score
    UPPER = "upper"  # it failed low: the value is at most the score


@dataclass(frozen=True)
class PvLine:
    """One principal variation as reported in an ``info`` line."""

    multipv: int
    depth: int
    seldepth: int
    score: int
    bound: Bound
    pv: tuple[chess.Move, ...]


@dataclass(frozen=True)
class Iteration:
    depth: int
    lines: tuple[PvLine, ...]
    #: Share of the iteration's nodes spent under its best root move (0 to 1): the
    #: time manager's measure of how clear the choice is.
    best_share: float = 1.0


@dataclass(frozen=True)
class RootChoice:
    """A root candidate as the root filter measures it (centipawns, our view)."""

    move: chess.Move
    minimax: int
    maximin: int
    mean: float

    def dominates(self, other: RootChoice) -> bool:
        mine = (self.minimax, self.maximin, self.mean)
        theirs = (other.minimax, other.maximin, other.mean)
        return all(a >= b for a, b in zip(mine, theirs, strict=True)) and mine != theirs


@dataclass(frozen=True)
class Trim:
    """When an iteration may end before its last root move ([time] trim): from
    *depth* on, once *due* (the soft limit has passed) and the previous iteration's
    best move is confirmed at the new depth, within *fall* centipawns."""

    due: Callable[[], bool]
    depth: int
    fall: int


class SearchStopped(Exception):
    """Raised inside the search when it must end now."""


def tablebase_score(wdl: int, plies: int) -> int:
    """The score of a tablebase result (WDL -2..2, side to move's view) reached or
    converted *plies* from the root: a win below every mate and above every
    evaluation, sooner better; a win or loss spoiled by the fifty-move rule is a
    draw, slightly coloured (its WDL value as centipawns)."""
    if wdl == 2:
        return TB_WIN - plies
    if wdl == -2:
        return -TB_WIN + plies
    return wdl


def mate_in(score: int) -> int | None:
    """Moves to mate (negative: being mated) for a mate score, else None."""
    if score >= MATE_BOUND:
        return (MATE - score + 1) // 2
    if score <= -MATE_BOUND:
        return -((MATE + score) // 2)
    return None


@dataclass(frozen=True)
class SearchPlan:
    """Everything one search is built from besides the position, assembled by its
    caller (the engine's move, a helper process, a tool) and turned into a search in
    one place, :func:`blitzaco.native_search.new_search`.

    *tt*: the process's own table, or the shared one when helper processes search
    beside this one. *control*: polled every :data:`POLL_INTERVAL` nodes
    (:class:`~blitzaco.timeman.SearchControl`, or the helpers' stop signal).
    *root_moves*: the moves searched at the root (not empty). *node_limit*: counted
    by this search alone. *on_bound*, *on_currmove*, *on_message*: what the search
    reports, as it happens. *tablebase*: probed inside the tree when set. *trails*:
    the pheromone memory when it is switched on (it orders moves; its evaluation
    bonus is *static*'s business). *trim*: when an iteration may end early, after a
    root move (see :class:`Trim`); None: never."""

    static: StaticEval
    tt: Table
    config: SearchConfig
    control: Poll
    root_moves: Sequence[chess.Move]
    multipv: int = 1
    node_limit: int | None = None
    on_bound: Callable[[PvLine], None] | None = None
    on_currmove: Callable[[int, chess.Move, int], None] | None = None
    tablebase: Probe | None = None
    on_message: Callable[[str], None] | None = None
    trails: Trails | None = None
    trim: Trim | None = None

    @property
    def native(self) -> bool:
        """Whether the search runs on the engine's own board
        (:class:`blitzaco.native_search.NativeSearch`) rather than python-chess's:
        ``[search] native`` on and a native table (the process's own or the shared
        one of ``Threads`` > 1). Every term of the score runs on either board (the
        spectral term and the pheromone memory are asked of *static* on both)."""
        return self.config.native and isinstance(self.tt, NativeTable)


class _RootMove:
    __slots__ = ("move", "code", "score", "previous_score", "pv", "seldepth", "nodes")

    def __init__(self, move: chess.Move) -> None:
        self.move = move
        self.code = encode_move(move)
        self.score = -INFINITE
        self.previous_score = -INFINITE
        self.pv: tuple[chess.Move, ...] = (move,)
        self.seldepth = 0
        self.nodes = 0  # searched under this move in the current iteration


class Search:
    """One search of one position. Not reusable and not thread-safe."""

    def __init__(self, pos: Position, plan: SearchPlan) -> None:
        """A search of *pos* as *plan* says (see :class:`SearchPlan`); build one with
        :func:`blitzaco.native_search.new_search`, which chooses the board."""
        static, tt, config, root_moves = plan.static, plan.tt, plan.config, plan.root_moves
        multipv, node_limit, trails = plan.multipv, plan.node_limit, plan.trails
        if not root_moves:
            raise ValueError("no root moves to search")
        self.pos = pos
        self.static = static
        self.evaluate = static.evaluate
        self._per_node = static.per_node
        static.start(pos)
        self.tt = tt
        self.config = config
        self.control = plan.control
        self.root_moves = [_RootMove(move) for move in _root_order(pos.board, root_moves)]
        self.multipv = max(1, min(multipv, len(self.root_moves)))
        self.node_limit = node_limit
        self.on_bound = plan.on_bound
        self.on_currmove = plan.on_currmove
        self.on_message = plan.on_message
        self.tablebase = plan.tablebase
        self.tb_limit = plan.tablebase.tb_limit if plan.tablebase is not None else 0
        self.tbhits = 0
        self.nodes = 0
        self.seldepth = 0
        self.completed_depth = 0
        self.stopped = False
        self._next_poll = min(POLL_INTERVAL, node_limit) if node_limit is not None else POLL_INTERVAL
        self._pv: list[tuple[int, ...]] = [()] * (MAX_PLY + 2)  # move codes
        self._partial: _RootMove | None = None
        self._depth = 0
        self.trim = plan.trim if multipv == 1 else None
        self._anchor: _RootMove | None = None  # the previous iteration's best move
        # Ordering memory, fresh for every search (deterministic node counts).
        self._killers = [[0, 0] for _ in range(MAX_PLY + 2)]
        self._counters = [0] * 4096
        self._history = [0] * 8192
        self._moves = [0] * (MAX_PLY + 2)  # encoded move made at each ply (0: null or none)
        # Static evaluation at each ply of the current line (with [search] improving);
        # -INFINITE: in check or not known, which counts as improving.
        self._statics = [-INFINITE] * (MAX_PLY + 2)
        self._lmr = _reduction_table(config.lmr_base, config.lmr_divisor)
        # Lazy evaluation in the quiescence search: 0 when off.
        self._lazy_margin = config.lazy_eval_margin if config.lazy_eval and static.classical_only() else 0
        # Pheromone trails: the ordering prior.
        self.trails = trails if trails is not None and trails.config.ordering else None

    # ------------------------------------------------------------------ results

    def best_line(self) -> tuple[tuple[chess.Move, ...], int, int]:
        """(pv, score, depth) of the move to play: the last completed iteration's
        best, or a move of the interrupted iteration that proved better than it."""
        if self._partial is not None:
            return self._partial.pv, self._partial.score, self._depth
        best = self.root_moves[0]
        if self.completed_depth == 0:
            return (best.move,), 0, 0
        return best.pv, best.score, self.completed_depth

    # -------------------------------------------------------------- driver loop

    def iterate(self, max_depth: int = MAX_DEPTH, skip: Callable[[int], bool] | None = None) -> Iterator[Iteration]:
        """Search depth 1, 2, ... *max_depth*, yielding after each completed depth.
        Ends early (without raising) when the search is stopped. *skip*: depths it
        returns true for are not searched (a helper process's staggered depths)."""
        for depth in range(1, max(1, min(max_depth, MAX_DEPTH)) + 1):
            if skip is not None and skip(depth):
                continue
            self._depth = depth
            for root_move in self.root_moves:
                root_move.previous_score = root_move.score
                root_move.nodes = 0
            self._anchor = self.root_moves[0] if self.completed_depth else None
            started = self.nodes
            try:
                for pv_index in range(self.multipv):
                    self._aspiration(depth, pv_index)
                if self.multipv > 1:
                    # A later line can score above an earlier one (each excludes the
                    # lines before it, and the tables differ by then): order them, as
                    # Stockfish does, so that line 1 is the best move.
                    self.root_moves[: self.multipv] = sorted(
                        self.root_moves[: self.multipv], key=lambda rm: -rm.score
                    )
            except SearchStopped:
                self.stopped = True
                self._unwind()
                return
            self.completed_depth = depth
            self._partial = None
            share = self.root_moves[0].nodes / max(1, self.nodes - started)
            yield Iteration(depth, tuple(self._line(i, depth) for i in range(self.multipv)), share)

    def root_filter(self) -> RootChoice | None:
        """The game-theoretic root filter (config ``root_filter``), run after the
        iterations: each of the best root candidates gets three measures, searched
        ``root_filter_reduction`` plies shallower than the last iteration:

        * minimax: its score against every reply;
        * maximin: its worst score over the opponent's ``root_filter_replies`` best
          replies (ranked by a quiescence search);
        * mean: its average score over those replies, the chances it leaves the
          opponent to go wrong.

        Candidates more than ``root_filter_margin`` below the best minimax, or
        dominated on every measure by another candidate, are dropped; the best mean
        among the rest is chosen. Returns None when stopped or when there is nothing
        to compare."""
        cfg = self.config
        if self.completed_depth < 2 or len(self.root_moves) < 2:
            return None
        depth = max(1, self.completed_depth - cfg.root_filter_reduction)
        measures: list[RootChoice] = []
        try:
            for rm in self.root_moves[: cfg.root_filter_candidates]:
                self._push(rm.code)
                minimax = -self._negamax(depth - 1, 1, -INFINITE, INFINITE, True, self._checked())
                scores = [score for score, _ in self._best_replies(depth, cfg.root_filter_replies)]
                self._pop()
                if not scores:  # the candidate mates or stalemates: minimax says it all
                    scores = [minimax]
                measures.append(RootChoice(rm.move, minimax, min(scores), sum(scores) / len(scores)))
        except SearchStopped:
            self._unwind()
            return None
        best_minimax = max(choice.minimax for choice in measures)
        if abs(best_minimax) >= MATE_BOUND:
            return None
        close = [choice for choice in measures if choice.minimax >= best_minimax - cfg.root_filter_margin]
        undominated = [choice for choice in close if not any(other.dominates(choice) for other in close)]
        return max(undominated, key=lambda choice: (choice.mean, choice.minimax))

    def score_root_moves(self, depth: int) -> list[tuple[chess.Move, int]]:
        """Every root move with its exact score from a full-window search of *depth*
        plies (1: the move, then the quiescence search), in root order. For tools
        (colony training) that need all the scores, not just the best."""
        scored = []
        for rm in self.root_moves:
            self._push_root(rm.code)
            score = -self._negamax(depth - 1, 1, -INFINITE, INFINITE, True, self._checked())
            self._pop()
            scored.append((rm.move, score))
        return scored

    def _best_replies(self, depth: int, count: int) -> list[tuple[int, int]]:
        """The opponent's *count* best replies in the current position (move codes),
        each with our score after it (searched *depth* - 2 plies), best for the
        opponent first."""
        ranked = []
        for reply in self._reply_codes():
            self._push(reply)
            ranked.append((self._quiesce(2, -INFINITE, INFINITE, self._checked()), reply))
            self._pop()
        ranked.sort(key=_first)
        scored = []
        for _, reply in ranked[:count]:
            self._push(reply)
            scored.append((self._negamax(depth - 2, 2, -INFINITE, INFINITE, True, self._checked()), reply))
            self._pop()
        scored.sort(key=_first)
        return scored

    # The board the driver above moves on: these five are all it asks of it, so that
    # a search on another board (blitzaco.native_search) overrides them and the
    # node functions, and keeps everything else.

    def _push_root(self, code: int) -> None:
        """Make root move *code* (remembered for the counter-move table)."""
        self._moves[0] = code
        self.pos.push(code)

    def _push(self, code: int) -> None:
        self.pos.push(code)

    def _pop(self) -> None:
        self.pos.pop()

    def _checked(self) -> bool:
        """Whether the side to move is in check."""
        return is_check(self.pos.board)

    def _reply_codes(self) -> list[int]:
        """The legal moves of the current position, as codes."""
        return [encode_move(move) for move in self.pos.board.legal_moves]

    def _line(self, index: int, depth: int, bound: Bound = Bound.EXACT) -> PvLine:
        rm = self.root_moves[index]
        return PvLine(index + 1, depth, max(rm.seldepth, depth), rm.score, bound, rm.pv)

    def _unwind(self) -> None:
        pos = self.pos
        while len(pos.keys) - 1 > pos.root_index:
            pos.pop()

    def _aspiration(self, depth: int, pv_index: int) -> None:
        previous = self.root_moves[pv_index].previous_score
        delta = self.config.aspiration_window
        if depth >= self.config.aspiration_depth and -MATE_BOUND < previous < MATE_BOUND:
            alpha, beta = max(previous - delta, -INFINITE), min(previous + delta, INFINITE)
        else:
            alpha, beta = -INFINITE, INFINITE
        while True:
            score = self._root(depth, pv_index, alpha, beta)
            self._sort_root(pv_index)
            if score <= alpha and alpha > -INFINITE:
                self._report_bound(pv_index, depth, Bound.UPPER)
                beta = (alpha + beta) // 2
                alpha = max(score - delta, -INFINITE)
            elif score >= beta and beta < INFINITE:
                self._report_bound(pv_index, depth, Bound.LOWER)
                beta = min(score + delta, INFINITE)
            else:
                return
            delta *= 2
            if delta > self.config.aspiration_widest:
                alpha, beta = -INFINITE, INFINITE

    def _report_bound(self, pv_index: int, depth: int, bound: Bound) -> None:
        if self.on_bound is not None:
            self.on_bound(self._line(pv_index, depth, bound))

    def _sort_root(self, pv_index: int) -> None:
        tail = self.root_moves[pv_index:]
        tail.sort(key=lambda rm: rm.score, reverse=True)
        self.root_moves[pv_index:] = tail

    def _root(self, depth: int, pv_index: int, alpha: int, beta: int) -> int:
        """Search the root moves from *pv_index* on; earlier ones are MultiPV lines
        already placed at this depth. Returns the best score (a bound on failure)."""
        best = -INFINITE
        first = True
        for number, rm in enumerate(self.root_moves[pv_index:], start=pv_index + 1):
            if self.on_currmove is not None:
                self.on_currmove(depth, rm.move, number)
            self.seldepth = 0
            before = self.nodes
            self._push_root(rm.code)
            check = self._checked()
            if first:
                score = -self._negamax(depth - 1, 1, -beta, -alpha, True, check)
            else:
                score = -self._negamax(depth - 1, 1, -alpha - 1, -alpha, True, check)
                if alpha < score < beta:
                    score = -self._negamax(depth - 1, 1, -beta, -alpha, True, check)
            self._pop()
            rm.nodes += self.nodes - before
            if first or score > alpha:
                rm.score = score
                rm.pv = (rm.move,) + tuple(map(decode_move, self._pv[1]))  # type: ignore[arg-type]
                rm.seldepth = self.seldepth
            else:
                rm.score = -INFINITE
            first = False
            if score > best:
                best = score
            if score > alpha:
                alpha = score
                if pv_index == 0:
                    self._partial = rm
                if score >= beta:
                    break
            if self._trimmed(depth):
                raise SearchStopped
        return best

    def _trimmed(self, depth: int) -> bool:
        """Whether the iteration at *depth* may end here: the previous iteration's
        best move has been searched at this depth, is still the best and has not
        fallen by more than the trim's margin, and the trim's signal (the soft limit)
        says the time is up."""
        trim = self.trim
        anchor = self._anchor
        return (
            trim is not None
            and anchor is not None
            and self._partial is anchor
            and depth >= trim.depth
            and anchor.score >= anchor.previous_score - trim.fall
            and trim.due()
        )

    # -------------------------------------------------------------------- nodes

    def _poll(self) -> None:
        limit = self.node_limit
        if limit is not None:
            if self.nodes >= limit:
                raise SearchStopped
            self._next_poll = min(self.nodes + POLL_INTERVAL, limit)
        else:
            self._next_poll = self.nodes + POLL_INTERVAL
        if self.control.hard_expired():
            raise SearchStopped

    # _negamax and _quiesce share their first lines (count the node, poll, seldepth)
    # on purpose: a helper call per node costs more than the repetition.

    def _negamax(self, depth: int, ply: int, alpha: int, beta: int, allow_null: bool, in_check: bool) -> int:
        """*in_check*: whether the side to move is in check (the caller knows it)."""
        if depth <= 0:
            return self._quiesce(ply, alpha, beta, in_check)
        self.nodes += 1
        if self.nodes >= self._next_poll:
            self._poll()
        pos = self.pos
        board = pos.board
        pv = self._pv
        pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        cfg = self.config
        pv_node = beta - alpha > 1
        if board.halfmove_clock >= 100 and (not in_check or any(board.generate_legal_moves())):
            return 0
        if pos.is_repetition():
            return 0
        if not (board.pawns | board.rooks | board.queens) and board.is_insufficient_material():
            return 0
        if ply >= MAX_PLY:
            return self.evaluate(pos)
        if (
            self.tb_limit
            and board.halfmove_clock == 0
            and chess.popcount(board.occupied) <= self.tb_limit
            and not board.castling_rights
        ):
            # Just after a capture or pawn move: the tablebase knows the result.
            score = self._probe_tablebase(ply)
            if score is not None:
                return score
        if cfg.mate_distance_pruning:
            if alpha < -MATE + ply:
                alpha = -MATE + ply
            if beta > MATE - ply - 1:
                beta = MATE - ply - 1
            if alpha >= beta:
                return alpha
        if in_check and cfg.check_extension:
            depth += 1

        key = pos.key
        entry = self.tt.probe(key)
        tt_move = 0
        if entry is not None:
            tt_move = entry[1]
            if not pv_node and entry[3] >= depth:
                score = score_from_tt(entry[2], ply, TB_BOUND)
                bound = entry[4]
                if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                    return score

        us = board.turn
        if self._per_node:
            self.static.enter(pos, ply, depth)
        static = -INFINITE if in_check else self.evaluate(pos)
        improving = 0
        lmr_extra = 0
        if cfg.improving:
            # Has the static evaluation risen since this side's previous move?
            statics = self._statics
            statics[ply] = static
            # In check static is -INFINITE (not improving); an unknown earlier value
            # is -INFINITE too (improving).
            improving = 1 if static > (statics[ply - 2] if ply >= 2 else -INFINITE) else 0
            lmr_extra = 0 if improving or pv_node else 1
        if cfg.tt_eval and entry is not None and not in_check:
            # A bound from an earlier search of this position says more than the
            # static evaluation does: the pruning rules below read it instead.
            stored = entry[2]
            bound = entry[4]
            if -TB_BOUND < stored < TB_BOUND and (
                bound == EXACT or (bound == LOWER and stored > static) or (bound == UPPER and stored < static)
            ):
                static = stored
        if not pv_node and not in_check and -MATE_BOUND < beta < MATE_BOUND:
            # Reverse futility: far enough above beta that no quiet line will fall below it.
            if (
                cfg.reverse_futility
                and depth <= cfg.reverse_futility_depth
                and static - cfg.reverse_futility_margin * (depth - improving) >= beta
            ):
                return static
            # Razoring: far enough below alpha that only a capture could save the node.
            if cfg.razoring and depth <= cfg.razoring_depth and static + cfg.razoring_margin * depth < alpha:
                score = self._quiesce(ply, alpha - 1, alpha, False)
                if score < alpha:
                    return score
            # Null move: if passing still holds beta, a real move will too (not with
            # only king and pawns, where zugzwang makes passing the best "move").
            if (
                cfg.null_move
                and allow_null
                and depth >= cfg.null_move_min_depth
                and static >= beta
                and board.occupied_co[us] & ~(board.pawns | board.kings)
            ):
                reduction = (
                    cfg.null_move_reduction
                    + depth // cfg.null_move_depth_divisor
                    + min(cfg.null_move_eval_max, (static - beta) // cfg.null_move_eval_divisor)
                )
                self._moves[ply] = 0
                pos.push_null()
                score = -self._negamax(depth - 1 - reduction, ply + 1, -beta, -beta + 1, False, False)
                pos.pop()
                if score >= beta:
                    return beta if score >= MATE_BOUND else score

        if cfg.internal_iterative_reduction and not tt_move and depth >= cfg.iir_min_depth:
            depth -= 1

        prune_quiets = not pv_node and not in_check
        futile = (
            prune_quiets and cfg.futility and depth <= cfg.futility_depth
            and static + cfg.futility_margin * depth <= alpha
        )
        quiet_limit = (
            cfg.late_move_pruning_base + depth * depth
            if prune_quiets and cfg.late_move_pruning and depth <= cfg.late_move_pruning_depth
            else _NO_LIMIT
        )
        killers = self._killers[ply] if cfg.killers else _NO_KILLERS
        previous = self._moves[ply - 1]
        counter = self._counters[previous & 4095] if cfg.counter_moves and previous else 0
        moves: Iterable[tuple[int, bool]]
        if in_check:
            moves = evasions(board, tt_move)
        else:
            moves = ordered_moves(
                board, tt_move, killers, counter, self._history, cfg.see_ordering,
                self.trails.row(key) if self.trails is not None else None,
            )
        lmr = cfg.late_move_reductions and depth >= cfg.lmr_min_depth
        lmr_table = self._lmr[min(depth, 63)]
        suspects, ep_square = legality_masks(board)
        check_test = None
        original_alpha = alpha
        best = -INFINITE
        best_code = 0
        searched = 0
        quiets_tried: list[int] = []
        made = self._moves
        for code, tactical in moves:
            skip_if_quiet = (
                not tactical and searched and best > -MATE_BOUND and (futile or len(quiets_tried) >= quiet_limit)
            )
            if skip_if_quiet:
                # Pruned unless it gives check; find out without making it when possible.
                if check_test is None:
                    check_test = CheckTest(board)
                if not check_test.maybe(board, code):
                    continue
            pos.push(code)
            if (_BB_SQUARES[code & 63] & suspects or code >> 6 & 63 == ep_square) and was_into_check(board):
                pos.pop()
                continue
            gives_check = is_check(board)
            if skip_if_quiet and not gives_check:
                pos.pop()
                continue
            searched += 1
            made[ply] = code
            new_depth = depth - 1
            if searched == 1:
                score = -self._negamax(new_depth, ply + 1, -beta, -alpha, True, gives_check)
            else:
                reduction = 0
                if lmr and not tactical and not in_check and not gives_check and searched > cfg.lmr_min_moves:
                    reduction = lmr_table[min(searched, 63)] + lmr_extra
                    if pv_node:
                        reduction -= 1
                    if code == killers[0] or code == killers[1] or code == counter:
                        reduction -= 1
                    if reduction > new_depth - 1:
                        reduction = new_depth - 1
                    if reduction < 0:
                        reduction = 0
                score = -self._negamax(new_depth - reduction, ply + 1, -alpha - 1, -alpha, True, gives_check)
                if score > alpha and reduction:
                    score = -self._negamax(new_depth, ply + 1, -alpha - 1, -alpha, True, gives_check)
                if alpha < score < beta:
                    score = -self._negamax(new_depth, ply + 1, -beta, -alpha, True, gives_check)
            pos.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    best_code = code
                    pv[ply] = (code,) + pv[ply + 1]
                    if score >= beta:
                        if not tactical:
                            self._reward_quiet(ply, us, code, quiets_tried, depth, previous)
                        break
            if not tactical:
                quiets_tried.append(code)
        if not searched:
            return -MATE + ply if in_check else 0
        bound = LOWER if best >= beta else EXACT if best > original_alpha else UPPER
        self.tt.store(key, best_code, score_to_tt(best, ply, TB_BOUND), depth, bound)
        return best

    def _probe_tablebase(self, ply: int) -> int | None:
        assert self.tablebase is not None
        wdl, message = self.tablebase.probe_wdl(self.pos.board)
        if message is not None:
            self.tb_limit = 0
            if self.on_message is not None:
                self.on_message(message)
        if wdl is None:
            return None
        self.tbhits += 1
        return tablebase_score(wdl, ply)

    def _reward_quiet(self, ply: int, us: bool, code: int, tried: list[int], depth: int, previous: int) -> None:
        """A quiet move caused a cutoff: remember it as killer and counter-move, raise
        its history and lower the history of the quiet moves tried before it."""
        cfg = self.config
        if cfg.killers:
            killers = self._killers[ply]
            if killers[0] != code:
                killers[1] = killers[0]
                killers[0] = code
        if cfg.counter_moves and previous:
            self._counters[previous & 4095] = code
        if cfg.history:
            history = self._history
            base = us << 12
            bonus = depth * depth
            history[base | (code & 4095)] += bonus
            for other in tried:
                history[base | (other & 4095)] -= bonus
            if history[base | (code & 4095)] > HISTORY_LIMIT:
                for index in range(len(history)):
                    history[index] //= 2

    def _quiesce(self, ply: int, alpha: int, beta: int, in_check: bool) -> int:
        """Captures and queen promotions until the position is quiet; all evasions
        when in check, so that mates at the horizon are seen."""
        self.nodes += 1
        if self.nodes >= self._next_poll:
            self._poll()
        pos = self.pos
        board = pos.board
        self._pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY:
            return self.evaluate(pos)
        if self._per_node:
            self.static.enter(pos, ply, 0)
        if in_check:
            best = -INFINITE
            moves = evasion_codes(board)  # pseudo-legal: tested below; none legal is mate
            stand_pat = -INFINITE
        else:
            lazy_margin = self._lazy_margin
            if lazy_margin:
                # Material and tables alone, far outside the window: the classical
                # terms cannot bring the score back (see lazy_eval_margin).
                quick = material_and_tables(pos)
                if quick - lazy_margin >= beta:
                    return quick - lazy_margin
                best = quick + lazy_margin if quick + lazy_margin <= alpha else self.evaluate(pos)
            else:
                best = self.evaluate(pos)
            stand_pat = best
            if best >= beta:
                return best
            if best > alpha:
                alpha = best
            targets = chess.BB_ALL
            if self.config.delta_pruning:
                # Delta pruning at the source: only victims worth more than this
                # can lift the score to alpha (promotions are always generated).
                need = alpha - stand_pat - self.config.delta_margin
                if need >= _DELTA_VALUES[chess.PAWN]:
                    targets = board.occupied_co[not board.turn] & _delta_targets(board, need)
            moves = capture_moves(board, targets)
        if not moves and not in_check:
            return best
        cfg = self.config
        delta = cfg.delta_pruning and not in_check
        see_prune = cfg.qsearch_see_pruning
        # The moves that may leave the king attacked (see legality_masks), tested inline.
        suspects, ep_square = legality_masks(board)
        for code in moves:
            if code & RISKY:  # never in check: evasions carry no flag
                code &= CODE_MASK
                if see_prune and not see_code_ge(board, code):
                    continue
            if delta and not code >> 12:
                victim = board.piece_type_at(code >> 6 & 63) or chess.PAWN
                if stand_pat + _DELTA_VALUES[victim] + cfg.delta_margin <= alpha:
                    continue
            pos.push(code)
            if (_BB_SQUARES[code & 63] & suspects or code >> 6 & 63 == ep_square) and was_into_check(board):
                pos.pop()
                continue
            score = -self._quiesce(ply + 1, -beta, -alpha, is_check(board))
            pos.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        if best == -INFINITE:  # in check, and no evasion (or none legal)
            return -MATE + ply
        return best


@functools.lru_cache(maxsize=4)
def _reduction_table(base: float, divisor: float) -> list[list[int]]:
    """Late-move reductions by depth and move number: base + ln(d) ln(m) / divisor.
    Cached (every search of a game uses the same one); read-only."""
    table = [[0] * 64 for _ in range(64)]
    for depth in range(1, 64):
        for number in range(1, 64):
            table[depth][number] = max(0, int(base + math.log(depth) * math.log(number) / divisor))
    return table


def _root_order(board: chess.Board, moves: Sequence[chess.Move]) -> list[chess.Move]:
    """Initial order of the root moves: captures and promotions first (most valuable
    victim), then the rest as generated; later iterations sort by score."""
    by_code = {encode_move(move): move for move in moves}
    captures = [code & CODE_MASK for code in capture_moves(board)]
    tactical = set(captures)
    first = [by_code[code] for code in captures if code in by_code]
    return first + [move for move in moves if encode_move(move) not in tactical]


def _delta_targets(board: chess.Board, need: int) -> chess.Bitboard:
    """Pieces whose capture is worth more than *need* centipawns (pawns excluded:
    the caller only asks when a pawn is not enough)."""
    targets = 0
    if _DELTA_VALUES[chess.KNIGHT] > need:
        targets |= board.knights
    if _DELTA_VALUES[chess.BISHOP] > need:
        targets |= board.bishops
    if _DELTA_VALUES[chess.ROOK] > need:
        targets |= board.rooks
    if _DELTA_VALUES[chess.QUEEN] > need:
        targets |= board.queens
    return targets
