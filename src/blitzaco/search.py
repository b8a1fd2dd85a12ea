"""The search: iterative-deepening principal variation search on the engine's own
board (:mod:`blitzaco.board`), compiled.

The search is a generator: :meth:`Search.iterate` yields one :class:`Iteration` per
completed depth and the caller (the engine) decides whether to start another. It
never prints; it reports failed aspiration windows and the root move being searched
through callbacks. It polls its control every :data:`POLL_INTERVAL` nodes and unwinds
with :class:`SearchStopped` when the hard limit, a node limit or ``stop`` ends it.

Inside: aspiration windows at the root; principal variation search (null windows
after the first move); check extension; mate distance pruning; the table's cut;
reverse futility pruning and razoring; null-move pruning; internal iterative
reduction; futility and late-move pruning; late-move reductions; a quiescence
search over captures (all evasions in check) with stand pat, lazy evaluation, delta
and SEE pruning. Every margin and switch is a field of
:class:`~blitzaco.config.SearchConfig`, read by the nodes through
:class:`SearchParams`. Moves come from :class:`blitzaco.movepick.MovePicker`; the
static score from the evaluator :class:`~blitzaco.static_eval.StaticEval` gives
(classical, network or their blend), plus its off-board terms (spectral, pheromone)
when one is on; the table is a :class:`~blitzaco.tt.TranspositionTable` (the
process's own, or the shared one of ``Threads`` > 1).

A node builds no Python object: moves are the board's integer codes in a
preallocated list, the ordering memory is in ``vec[i64]`` arrays; only the principal
variation is a tuple. python-chess appears at the root alone: the root moves and
their first order come in as :class:`chess.Move`, the lines go out as them, and a
tablebase probe builds a :class:`chess.Board` (only within the tables' pieces).

Scores are centipawns for the side to move; a mate in *n* plies scores ``MATE - n``
(mated: ``-MATE + n``).
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Final, final

import chess
from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import (
    BISHOP,
    INTERPRETED,
    KNIGHT,
    MAX_MOVES,
    MAX_PLY,
    PAWN,
    QUEEN,
    ROOK,
    SQ120,
    STACK_PLIES,
    WHITE,
    Board,
    legal_codes,
    unsigned_key,
)
from blitzaco.classical import Classical
from blitzaco.config import SearchConfig
from blitzaco.movepick import (
    PIECE_SQUARES,
    SEE_VALUE,
    MovePicker,
    OrderingMemory,
    capture_index,
    continuation_row,
    pick,
    piece_square,
    previous_move,
    safe_capture,
    score_captures,
    see_ge,
    see_ge_quiet,
    see_scratch,
    toward_zero,
)
from blitzaco.moves import decode_move, encode_move
from blitzaco.pheromone import Trails
from blitzaco.probe import Probe
from blitzaco.static_eval import StaticEval
from blitzaco.timeman import Poll
from blitzaco.tt import (
    EXACT,
    LOWER,
    NO_EVAL,
    UPPER,
    TranspositionTable,
    entry_bound,
    entry_depth,
    entry_eval,
    entry_move,
    entry_score,
)

if INTERPRETED and not TYPE_CHECKING:  # lists stand in for librt's vec (see board.py)
    from blitzaco.board import vec  # noqa: F811


__all__ = [
    "MATE", "MATE_BOUND", "TB_WIN", "TB_BOUND", "MAX_PLY", "MAX_DEPTH", "INFINITE", "Bound", "PvLine", "Iteration",
    "CORRECTION_SIZE", "CORRECTION_GRAIN",
    "RootChoice", "Search", "SearchMemory", "SearchParams", "SearchPlan", "SearchStopped", "Trim", "mate_in",
    "tablebase_score", "root_order",
]

MATE: Final = 32000
MAX_DEPTH: Final = 64
#: Scores at least this large (in absolute value) are mate scores.
MATE_BOUND: Final = MATE - MAX_PLY
INFINITE: Final = MATE + 1
#: Correction history: entries a side (pawn keys modulo this), and the fraction of a
#: centipawn an entry holds (its running mean keeps that much precision).
CORRECTION_SIZE: Final = 16384
CORRECTION_GRAIN: Final = 256
#: A tablebase win found *n* plies from the root scores TB_WIN - n: below every mate,
#: above every evaluation.
TB_WIN: Final = 20000
#: Scores at least this large (in absolute value) are tablebase or mate scores; the
#: table stores them relative to the node, like mate scores.
TB_BOUND: Final = TB_WIN - MAX_PLY
#: Nodes between two looks at the clock and the stop flag.
POLL_INTERVAL: Final = 64
#: Quiet moves allowed when late-move pruning does not apply.
NO_LIMIT: Final = 1 << 30
#: The quiescence search's sort key for the table's move: above every capture's.
TT_MOVE_KEY: Final = 1 << 40

_first: Final = itemgetter(0)


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
    caller (the engine's move, a helper process, a tool).

    *tt*: the process's own table, or the shared one when helper processes search
    beside this one. *control*: polled every :data:`POLL_INTERVAL` nodes
    (:class:`~blitzaco.timeman.SearchControl`, or the helpers' stop signal).
    *root_moves*: the moves searched at the root (not empty). *node_limit*: counted
    by this search alone. *on_bound*, *on_currmove*, *on_message*: what the search
    reports, as it happens. *tablebase*: probed inside the tree when set. *trails*:
    the pheromone memory when it is switched on (it orders moves; its evaluation
    bonus is *static*'s business). *trim*: when an iteration may end early, after a
    root move (see :class:`Trim`); None: never. *memory*: the game's
    :class:`SearchMemory` to learn into (made for *config*); None: a fresh one."""

    static: StaticEval
    tt: TranspositionTable
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
    memory: SearchMemory | None = None


@final
class SearchMemory:
    """What a search learns about the moves and evaluations of its game beside the
    table: the ordering memory (killers, counter-moves, the history tables) and the
    correction history (with ``[search] correction_history``: per side to move and
    pawn key, the running mean of search score less static evaluation, in
    CORRECTION_GRAIN-ths of a centipawn). A search makes its own unless its plan
    hands it one: with ``[search] keep_memory`` the engine keeps one for the game
    (emptied by ``ucinewgame``, ``Clear Hash`` and new settings), and each search
    starts from what the earlier ones learnt, less the killers."""

    config: SearchConfig
    ordering: OrderingMemory
    correction: vec[i64]

    def __init__(self, config: SearchConfig) -> None:
        self.config = config
        self.ordering = OrderingMemory(config.killers, config.counter_moves, config.history,
                                       config.continuation_history, config.capture_history, config.history_gravity,
                                       config.history_limit, config.history_bonus_quadratic,
                                       config.history_bonus_linear, config.history_bonus_max)
        self.correction = vec[i64]([0] * (2 * CORRECTION_SIZE if config.correction_history else 0))


@final
class SearchParams:
    """The fields of :class:`~blitzaco.config.SearchConfig` the nodes read, under
    the same names, as native values: a compiled read of a SearchConfig field is a
    Python attribute lookup, of one of these a load. Each field is declared here
    once and filled from the configuration by name (``tests/test_search.py`` holds
    every field here to the configuration's)."""

    mate_distance_pruning: bool
    check_extension: bool
    improving: bool
    tt_eval: bool
    reverse_futility: bool
    reverse_futility_depth: i64
    reverse_futility_margin: i64
    razoring: bool
    razoring_depth: i64
    razoring_margin: i64
    null_move: bool
    null_move_min_depth: i64
    null_move_reduction: i64
    null_move_depth_divisor: i64
    null_move_eval_max: i64
    null_move_eval_divisor: i64
    internal_iterative_reduction: bool
    iir_min_depth: i64
    singular_extensions: bool
    singular_depth: i64
    singular_tt_depth: i64
    singular_margin: i64
    singular_double_margin: i64
    singular_double_max: i64
    improving_reduction_min: i64
    lmr_captures: bool
    lmr_cut_nodes: bool
    lmr_cut_node_reduction: i64
    lmr_history: bool
    lmr_history_divisor: i64
    probcut: bool
    probcut_depth: i64
    probcut_margin: i64
    correction_history: bool
    correction_limit: i64
    see_pruning: bool
    see_pruning_depth: i64
    see_quiet_margin: i64
    see_capture_margin: i64
    futility: bool
    futility_depth: i64
    futility_margin: i64
    reduced_futility: bool
    reduced_futility_depth: i64
    reduced_futility_base: i64
    reduced_futility_margin: i64
    history_pruning: bool
    history_pruning_depth: i64
    history_pruning_margin: i64
    late_move_pruning: bool
    late_move_pruning_depth: i64
    late_move_pruning_base: i64
    late_move_pruning_improving: bool
    late_move_reductions: bool
    lmr_min_depth: i64
    lmr_min_moves: i64
    delta_pruning: bool
    delta_margin: i64
    qsearch_see_pruning: bool
    qsearch_tt: bool

    def __init__(self, config: SearchConfig) -> None:
        for name in _PARAM_NAMES:
            setattr(self, name, getattr(config, name))


#: SearchParams' fields, read once from its own declarations: a field is declared
#: there alone (its type) and in SearchConfig (its default, bounds and documentation).
#: Compiled, the class keeps no annotations but lists its attributes for pickling.
_PARAM_NAMES: Final = tuple(vars(SearchParams).get("__annotations__") or vars(SearchParams)["__mypyc_attrs__"])


def _mvv_lva(board: chess.Board, move: chess.Move) -> int | None:
    """The first-order key of a root capture or queen promotion (most valuable victim,
    a promotion counting as capturing its piece, then the cheaper attacker; a quiet
    promotion has no attacker), or None for any other move."""
    promotion = move.promotion
    if promotion is not None and promotion != chess.QUEEN:
        return None
    if board.is_en_passant(move):
        victim: int | None = chess.PAWN
    else:
        victim = board.piece_type_at(move.to_square) if board.color_at(move.to_square) == (not board.turn) else None
    if victim is None:
        return chess.QUEEN * 8 if promotion else None
    attacker = board.piece_type_at(move.from_square)
    assert attacker is not None
    return (victim + (chess.QUEEN if promotion else 0)) * 8 - attacker


def root_order(board: chess.Board, moves: Sequence[chess.Move]) -> list[chess.Move]:
    """The first order of the root moves: captures and queen promotions, most valuable
    victim first, ties in python-chess's generation order; then the rest as given.
    Later iterations sort by score."""
    generated = {move: index for index, move in enumerate(board.generate_pseudo_legal_moves())}
    keyed = [(_mvv_lva(board, move), move) for move in moves]
    tactical = sorted(((key, move) for key, move in keyed if key is not None),
                      key=lambda item: (-item[0], generated.get(item[1], 0)))
    return [move for _, move in tactical] + [move for key, move in keyed if key is None]


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


def _table_score(score: i64, ply: i64) -> i64:
    """*score*, found *ply* plies from the root, as the table keeps it: a mate or
    tablebase score counted from the node, not the root."""
    return score + ply if score >= TB_BOUND else score - ply if score <= -TB_BOUND else score


def _from_table(score: i64, ply: i64) -> i64:
    """A table's *score* as the search sees it *ply* plies from the root (the inverse
    of :func:`_table_score`)."""
    return score - ply if score >= TB_BOUND else score + ply if score <= -TB_BOUND else score


def _settles(bound: i64, score: i64, alpha: i64, beta: i64) -> bool:
    """Whether a table entry's *score* with *bound* decides the window (*alpha*, *beta*)."""
    return bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha)


def _says_more(bound: i64, score: i64, static: i64) -> bool:
    """Whether a table entry's *score* with *bound* is a sharper estimate than the
    static evaluation *static*: an exact score, a lower bound above it or an upper
    bound below it (never a mate or tablebase score)."""
    return -TB_BOUND < score < TB_BOUND and (
        bound == EXACT or (bound == LOWER and score > static) or (bound == UPPER and score < static)
    )


@functools.lru_cache(maxsize=4)
def _reduction_table(base: float, divisor: float) -> tuple[int, ...]:
    """Late-move reductions by depth and move number, ``table[depth * 64 + number]``:
    base + ln(d) ln(m) / divisor, at least 0. Cached (every search of a game uses the
    same one)."""
    table = [0] * (64 * 64)
    for depth in range(1, 64):
        for number in range(1, 64):
            table[depth * 64 + number] = max(0, int(base + math.log(depth) * math.log(number) / divisor))
    return tuple(table)


class Search:
    """One search of one position. Not reusable and not thread-safe."""

    board: Board
    eval: Classical
    table: TranspositionTable
    params: SearchParams
    memory: OrderingMemory
    pickers: list[MovePicker]
    root_ply: i64
    move_list: vec[i64]
    statics_by_ply: vec[i64]
    excluded: vec[i64]
    doubles: vec[i64]
    extension_plies: i64
    rows: vec[i64]
    continuation_on: bool
    see_scratch: vec[i64]
    lmr_table: vec[i64]
    lazy: i64
    next_poll: i64
    nodes: i64
    seldepth: i64
    tb_limit: i64
    extras_on: bool
    spectral_on: bool
    cache_eval: bool

    def __init__(self, board: chess.Board, plan: SearchPlan) -> None:
        """A search of *board* (with as much of its game as repetition detection
        needs) as *plan* says (see :class:`SearchPlan`)."""
        if not plan.root_moves:
            raise ValueError("no root moves to search")
        static, config = plan.static, plan.config
        self.static = static
        self.config = config
        self.params = SearchParams(config)
        self.control = plan.control
        self.root_moves = [_RootMove(move) for move in root_order(board, plan.root_moves)]
        multipv = plan.multipv
        self.multipv = max(1, min(multipv, len(self.root_moves)))
        self.node_limit = plan.node_limit
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
        node_limit = plan.node_limit
        self.next_poll = min(POLL_INTERVAL, node_limit) if node_limit is not None else POLL_INTERVAL
        self._pv: list[tuple[int, ...]] = [()] * STACK_PLIES  # move codes
        self._partial: _RootMove | None = None
        self._depth = 0
        self.trim = plan.trim if multipv == 1 else None
        self._anchor: _RootMove | None = None  # the previous iteration's best move

        table = plan.tt
        table.allocate()
        self.table = table
        own = Board.from_chess(board, STACK_PLIES)
        self.board = own
        self.root_ply = own.ply
        self.eval = static.evaluator()
        self.eval.reset(own)
        static.start(own)
        # The off-board terms (research switches): the spectral term entered at every
        # node, the spectral and pheromone bonus on top of the evaluator's score.
        self.spectral_on = static.per_node
        self.extras_on = static.extra_terms()
        self.cache_eval = not self.spectral_on and not self.extras_on
        # Ordering memory and correction history: fresh for every search, or the
        # game's (plan.memory, with [search] keep_memory) less its killers.
        memory = plan.memory
        if memory is None:
            memory = SearchMemory(config)
        elif memory.config != config:
            raise ValueError("the search memory was made for other [search] settings")
        else:
            memory.ordering.forget_killers()
            memory.ordering.age()
        self.memory = memory.ordering
        self.correction = memory.correction
        self.move_list = vec[i64]([0] * (MAX_MOVES * STACK_PLIES))
        self.see_scratch = see_scratch()
        trails = plan.trails if plan.trails is not None and plan.trails.config.ordering else None
        self.pickers = [MovePicker(own, self.memory, self.move_list, self.see_scratch, trails, config.see_ordering, ply)
                        for ply in range(STACK_PLIES)]
        # Static evaluation at each ply of the current line (with [search] improving);
        # -INFINITE: in check or not known, which counts as improving.
        self.statics_by_ply = vec[i64]([-INFINITE] * STACK_PLIES)
        # The move left out at each ply of the current line while singular
        # extensions test whether the table's move is the only good one (0: none).
        self.excluded = vec[i64]([0] * STACK_PLIES)
        # Double extensions (singular_double_margin) on the current line up to each ply.
        self.doubles = vec[i64]([0] * (STACK_PLIES + 1))
        # Extensions apply only at plies below this: twice the iteration's depth.
        self.extension_plies = 2 * MAX_DEPTH
        # The continuation-history row of the move made at each ply of the current
        # line, at ply + 2 (-1: a null move, or continuation history off); the node at
        # ply reads rows[ply + 1] and rows[ply] (the moves one and two plies up). The
        # root's own row is the game's last move, its piece on its target square.
        self.continuation_on = self.memory.use_continuation
        self.rows = vec[i64]([-1] * (STACK_PLIES + 2))
        last = previous_move(own)
        arrived = piece_square(own, last >> 6 & 63) if self.continuation_on and last != 0 else -1
        if arrived >= 0:
            self.rows[1] = arrived * PIECE_SQUARES
        self.lmr_table = vec[i64](list(_reduction_table(config.lmr_base, config.lmr_divisor)))
        # Lazy evaluation in the quiescence search: 0 when off.
        self.lazy = config.lazy_eval_margin if config.lazy_eval and static.classical_only() else 0

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
            self.extension_plies = 2 * depth
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
                self._make(rm.code, 0)
                minimax = -self._search(depth - 1, 1, -INFINITE, INFINITE, True, self.board.in_check())
                scores = [score for score, _ in self._best_replies(depth, cfg.root_filter_replies)]
                self._unmake()
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
            self._make(rm.code, 0)
            score = -self._search(depth - 1, 1, -INFINITE, INFINITE, True, self.board.in_check())
            self._unmake()
            scored.append((rm.move, int(score)))
        return scored

    def _best_replies(self, depth: int, count: int) -> list[tuple[int, int]]:
        """The opponent's *count* best replies in the current position (move codes),
        each with our score after it (searched *depth* - 2 plies), best for the
        opponent first."""
        ranked = []
        for reply in legal_codes(self.board):
            self._make(reply, 1)
            ranked.append((int(self._qsearch(2, -INFINITE, INFINITE, self.board.in_check())), reply))
            self._unmake()
        ranked.sort(key=_first)
        scored = []
        for _, reply in ranked[:count]:
            self._make(reply, 1)
            scored.append((int(self._search(depth - 2, 2, -INFINITE, INFINITE, True, self.board.in_check())), reply))
            self._unmake()
        scored.sort(key=_first)
        return scored

    def _make(self, code: i64, ply: i64) -> None:
        """Make *code* at *ply* (the evaluator and the continuation rows follow)."""
        if self.continuation_on:
            self.rows[ply + 2] = continuation_row(self.board, code)
        self.board.make(code)
        self.eval.make(self.board)

    def _unmake(self) -> None:
        self.board.unmake()
        self.eval.unmake()

    def _line(self, index: int, depth: int, bound: Bound = Bound.EXACT) -> PvLine:
        rm = self.root_moves[index]
        return PvLine(index + 1, depth, max(rm.seldepth, depth), rm.score, bound, rm.pv)

    def _unwind(self) -> None:
        while self.board.ply > self.root_ply:
            self._unmake()

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
            self._make(rm.code, 0)
            check = self.board.in_check()
            if first:
                score = -self._search(depth - 1, 1, -beta, -alpha, True, check)
            else:
                score = -self._search(depth - 1, 1, -alpha - 1, -alpha, True, check, True)
                if alpha < score < beta:
                    score = -self._search(depth - 1, 1, -beta, -alpha, True, check)
            self._unmake()
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
            self.next_poll = min(self.nodes + POLL_INTERVAL, limit)
        else:
            self.next_poll = self.nodes + POLL_INTERVAL
        if self.control.hard_expired():
            raise SearchStopped

    def _count_node(self) -> None:
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self._poll()

    def _evaluate(self, board: Board) -> i64:
        """The static score for the side to move: the evaluator's (the classical terms,
        the network or their blend), plus the spectral term and the pheromone bonus
        when one is on."""
        score = self.eval.evaluate(board)
        if self.extras_on:
            score += self.static.extras(board.side == WHITE, unsigned_key(board.key))
        return score

    def _static(self, board: Board, entry: i64) -> i64:
        """:meth:`_evaluate`, or the static evaluation the table's *entry* (0: none)
        holds for this position: the same number without computing it (not with a
        spectral or pheromone term, which may depend on the node)."""
        if entry != 0 and self.cache_eval:
            stored = entry_eval(entry)
            if stored != NO_EVAL:
                return stored
        return self._evaluate(board)

    def _correction_index(self, board: Board) -> i64:
        return board.side * CORRECTION_SIZE + (board.pawn_key & (CORRECTION_SIZE - 1))

    def _correct(self, index: i64, difference: i64, depth: i64) -> None:
        """Move the correction at *index* towards *difference* (a search's score less
        the static evaluation, centipawns), by a weight that grows with the *depth*
        of the search that found it (at most 16/256), within the limit."""
        weight = depth + 1 if depth < 16 else 16
        limit = self.params.correction_limit * CORRECTION_GRAIN
        entry = (self.correction[index] * (256 - weight) + difference * CORRECTION_GRAIN * weight) // 256
        self.correction[index] = limit if entry > limit else -limit if entry < -limit else entry

    def _has_pieces(self, side: i64) -> bool:
        """Whether *side* has a piece besides its king and pawns."""
        counts = self.board.counts
        mark = side << 3
        return counts[KNIGHT | mark] + counts[BISHOP | mark] + counts[ROOK | mark] + counts[QUEEN | mark] != 0

    def _pieces(self) -> i64:
        total: i64 = 0
        for piece in range(16):
            total += self.board.counts[piece]
        return total

    def _has_legal_move(self, ply: i64) -> bool:
        board = self.board
        out = self.move_list
        base = ply * MAX_MOVES
        end = board.gen_all(out, base)
        for i in range(base, end):
            board.make(out[i])
            legal = board.was_legal()
            board.unmake()
            if legal:
                return True
        return False

    def _probe(self, ply: i64) -> int | None:
        assert self.tablebase is not None
        wdl, message = self.tablebase.probe_wdl(self.board.to_chess())
        if message is not None:
            self.tb_limit = 0
            if self.on_message is not None:
                self.on_message(message)
        if wdl is None:
            return None
        self.tbhits += 1
        return tablebase_score(wdl, ply)

    def _search(self, depth: i64, ply: i64, alpha: i64, beta: i64, allow_null: bool, in_check: bool,
                cut_node: bool = False) -> i64:
        """The score of the current position within (*alpha*, *beta*), *depth* plies
        deep, *ply* plies from the root. *in_check*: whether the side to move is in
        check (the caller knows it). *cut_node*: a null-window node expected to fail
        high (Stockfish's cutNode: the reduced search of a late move, and every other
        level below it), where ``lmr_cut_nodes`` reduces more."""
        if depth <= 0:
            return self._qsearch(ply, alpha, beta, in_check)
        self._count_node()
        board = self.board
        p = self.params
        pv = self._pv
        pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        pv_node = beta - alpha > 1
        excluded = self.excluded[ply]  # a singular extension's test: the table's move left out
        if board.halfmove >= 100 and (not in_check or self._has_legal_move(ply)):
            return 0
        if board.is_repetition():
            return 0
        counts = board.counts
        if (counts[PAWN] + counts[PAWN | 8] + counts[ROOK] + counts[ROOK | 8] + counts[QUEEN] + counts[QUEEN | 8] == 0
                and board.is_insufficient_material()):
            return 0
        if ply >= MAX_PLY:
            return self._evaluate(board)
        if self.tb_limit and board.halfmove == 0 and board.castling == 0 and self._pieces() <= self.tb_limit:
            # Just after a capture or pawn move: the tablebase knows the result.
            probed = self._probe(ply)
            if probed is not None:
                return probed
        if p.mate_distance_pruning:
            if alpha < -MATE + ply:
                alpha = -MATE + ply
            if beta > MATE - ply - 1:
                beta = MATE - ply - 1
            if alpha >= beta:
                return alpha
        # Extensions only within twice the iteration's depth, so that stacked
        # extensions cannot hold the search in one line.
        extend = ply < self.extension_plies
        if in_check and p.check_extension and extend:
            depth += 1

        key = board.key
        entry = self.table.find(key)
        tt_move: i64 = 0
        if entry != 0:
            tt_move = entry_move(entry)
            if not pv_node and excluded == 0 and entry_depth(entry) >= depth:
                score = _from_table(entry_score(entry), ply)
                if _settles(entry_bound(entry), score, alpha, beta):
                    return score

        us = board.side
        if self.spectral_on:
            self.static.enter(board, ply, depth)
        static: i64 = -INFINITE if in_check else self._static(board, entry)
        raw_static = static
        correction_index: i64 = 0
        if p.correction_history and not in_check:
            correction_index = self._correction_index(board)
            static += self.correction[correction_index] // CORRECTION_GRAIN
        improving: i64 = 0
        rising = True  # the improving test, for late-move pruning's count and the reductions
        if p.improving or p.late_move_pruning_improving:
            # Has the static evaluation risen since this side's previous move? In
            # check static is -INFINITE (not improving); an unknown earlier value is
            # -INFINITE too (improving).
            statics = self.statics_by_ply
            statics[ply] = static
            rising = static > (statics[ply - 2] if ply >= 2 else -INFINITE)
            if p.improving:
                improving = 1 if rising else 0
        if p.tt_eval and entry != 0 and not in_check:
            # A bound from an earlier search of this position says more than the
            # static evaluation does: the pruning rules below read it instead.
            stored = entry_score(entry)
            if _says_more(entry_bound(entry), stored, static):
                static = stored
        if not pv_node and not in_check and excluded == 0 and -MATE_BOUND < beta < MATE_BOUND:
            # (Not in a singular extension's test: its window is the test's own.)
            # Reverse futility: far enough above beta that no quiet line falls below it.
            if (
                p.reverse_futility
                and depth <= p.reverse_futility_depth
                and static - p.reverse_futility_margin * (depth - improving) >= beta
            ):
                return static
            # Razoring: far enough below alpha that only a capture could save the node.
            if p.razoring and depth <= p.razoring_depth and static + p.razoring_margin * depth < alpha:
                score = self._qsearch(ply, alpha - 1, alpha, False)
                if score < alpha:
                    return score
            # Null move: if passing still holds beta, a real move will too (not with
            # only king and pawns, where zugzwang makes passing the best "move").
            if (p.null_move and allow_null and depth >= p.null_move_min_depth and static >= beta
                    and self._has_pieces(us)):
                gain = (static - beta) // p.null_move_eval_divisor
                null_reduction = (
                    p.null_move_reduction + depth // p.null_move_depth_divisor
                    + (gain if gain < p.null_move_eval_max else p.null_move_eval_max)
                )
                self.rows[ply + 2] = -1
                board.make_null()
                self.eval.make(board)
                score = -self._search(depth - 1 - null_reduction, ply + 1, -beta, -beta + 1, False, False, not cut_node)
                self._unmake()
                if score >= beta:
                    return beta if score >= MATE_BOUND else score

        previous = previous_move(board)
        if (p.probcut and not pv_node and not in_check and excluded == 0 and depth >= p.probcut_depth
                and -MATE_BOUND < beta < MATE_BOUND):
            probcut_beta = beta + p.probcut_margin
            if not (entry != 0 and entry_depth(entry) >= depth - 3 and entry_score(entry) < probcut_beta):
                probed = self._probcut(depth, ply, probcut_beta, static, tt_move, previous, cut_node)
                if probed >= probcut_beta:
                    return probed

        if p.internal_iterative_reduction and tt_move == 0 and excluded == 0 and depth >= p.iir_min_depth:
            depth -= 1

        extension: i64 = 0  # for the table's move
        doubles = self.doubles  # double extensions on the line to each ply
        if (p.singular_extensions and extend and excluded == 0 and tt_move != 0 and depth >= p.singular_depth
                and entry_bound(entry) != UPPER and entry_depth(entry) >= depth - p.singular_tt_depth):
            tt_score = entry_score(entry)
            if -TB_BOUND < tt_score < TB_BOUND:
                # Is the table's move singular: do all the others stay below its score
                # less a margin, searched at half the depth?
                singular_beta = tt_score - p.singular_margin * depth
                self.excluded[ply] = tt_move
                score = self._search((depth - 1) // 2, ply, singular_beta - 1, singular_beta, False, in_check,
                                     cut_node)
                self.excluded[ply] = 0
                pv[ply] = ()
                if score < singular_beta:
                    extension = 1
                    if (not pv_node and score < singular_beta - p.singular_double_margin
                            and doubles[ply] < p.singular_double_max):
                        extension = 2  # far below: the only move by a distance
                elif singular_beta >= beta:
                    return singular_beta  # multi-cut: another move holds beta too
                elif tt_score >= beta:
                    extension = -1

        prune_quiets = not pv_node and not in_check
        see_prune = prune_quiets and p.see_pruning and depth <= p.see_pruning_depth
        futile = prune_quiets and p.futility and depth <= p.futility_depth and (
            static + p.futility_margin * depth <= alpha
        )
        reduced_futile = prune_quiets and p.reduced_futility
        history_prune = prune_quiets and p.history_pruning and depth <= p.history_pruning_depth
        # Late-move pruning (Stockfish's move-count pruning): from the
        # move_limit-th move on (every move counts), the quiet moves that do not give
        # check are skipped unmade; half as many with late_move_pruning_improving
        # where the static evaluation has not risen.
        move_limit: i64 = NO_LIMIT
        if prune_quiets and p.late_move_pruning and depth <= p.late_move_pruning_depth and self._has_pieces(us):
            move_limit = p.late_move_pruning_base + depth * depth
            if p.late_move_pruning_improving and not rising:
                move_limit //= 2
        need_history = history_prune or p.lmr_history
        picker = self.pickers[ply]
        rows = self.rows
        picker.start(tt_move, previous, rows[ply + 1], rows[ply])
        lmr = p.late_move_reductions and depth >= p.lmr_min_depth
        lmr_captures = lmr and p.lmr_captures
        use_captures = self.memory.use_captures and (lmr_captures or see_prune)  # captures' history read
        lmr_row = (depth if depth < 63 else 63) * 64
        original_alpha = alpha
        best: i64 = -INFINITE
        best_code: i64 = 0
        best_tactical = False
        searched: i64 = 0
        move_count: i64 = 0  # moves reached, pruned ones included
        quiets_tried: i64 = 0
        captures_tried: i64 = 0
        memory = self.memory
        tried = memory.tried
        base = ply * MAX_MOVES
        while True:
            code = picker.next()
            if code == 0:
                break
            if code == excluded:
                continue
            tactical = picker.tactical
            move_count += 1
            move_history: i64 = picker.quiet_history(code) if need_history and not tactical else 0
            capture_history: i64 = 0
            if tactical and use_captures:
                capture_history = i64(memory.captures[capture_index(board, code)])
            prunable = not tactical and best > -MATE_BOUND and (futile or move_count >= move_limit)
            if reduced_futile and not prunable and not tactical and searched > 0 and best > -MATE_BOUND:
                # Futility at the depth the move would be searched at after its reduction.
                number = searched + 1
                reduced = depth - 1 - self.lmr_table[lmr_row + (number if number < 63 else 63)]
                prunable = reduced < p.reduced_futility_depth and (
                    static + p.reduced_futility_base + p.reduced_futility_margin * reduced <= alpha
                )
            if history_prune and not prunable and not tactical and searched > 0 and best > -MATE_BOUND:
                # History pruning: a quiet move that has mostly failed where it was tried
                # (the table move, tried first, is never here).
                prunable = not picker.is_special(code) and move_history < -p.history_pruning_margin * depth
            if see_prune and not prunable and searched > 0 and best > -MATE_BOUND:
                # SEE pruning: at shallow depth, a move that loses more than a margin
                # by static exchange is skipped unless it gives check.
                if tactical:
                    # A capture that kept refuting may lose up to a margin more (one
                    # that kept failing a margin less): its capture history / 32.
                    margin = p.see_capture_margin * depth
                    shift = toward_zero(capture_history, 32)
                    shift = margin if shift > margin else -margin if shift < -margin else shift
                    prunable = not see_ge(board, code, -margin - shift, self.see_scratch)
                else:
                    prunable = not see_ge_quiet(board, code, -p.see_quiet_margin * depth * depth, self.see_scratch)
            if prunable and not board.gives_check(code):
                continue  # pruned unmade: only a move that gives check is searched after all
            if self.continuation_on:
                rows[ply + 2] = continuation_row(board, code)
            board.make(code)
            if not board.was_legal():
                board.unmake()
                move_count -= 1
                continue
            gives_check = board.in_check()
            self.eval.make(board)
            searched += 1
            new_depth = depth - 1 + extension if code == tt_move else depth - 1
            doubles[ply + 1] = doubles[ply] + (1 if code == tt_move and extension >= 2 else 0)
            if searched == 1:
                score = -self._search(new_depth, ply + 1, -beta, -alpha, True, gives_check,
                                      False if pv_node else not cut_node)
            else:
                reduction: i64 = 0
                if (lmr and not in_check and not gives_check and searched > p.lmr_min_moves
                        and (not tactical or (lmr_captures and not pv_node))):
                    table_reduction = self.lmr_table[lmr_row + (searched if searched < 63 else 63)]
                    reduction = table_reduction
                    if tactical:
                        # A capture is reduced a ply less than a quiet move, and by its
                        # capture history as a quiet move by its history.
                        reduction -= 1
                        if p.lmr_history:
                            reduction -= toward_zero(capture_history, p.lmr_history_divisor)
                    else:
                        if p.improving and not rising and table_reduction >= p.improving_reduction_min:
                            reduction += 1  # a large reduction where this side's evaluation fell
                        if pv_node:
                            reduction -= 1
                        if picker.is_special(code):
                            reduction -= 1
                        if p.lmr_history:
                            # A move with a good history is reduced less, a bad one more.
                            reduction -= toward_zero(move_history, p.lmr_history_divisor)
                    if p.lmr_cut_nodes and cut_node:
                        reduction += p.lmr_cut_node_reduction
                    if reduction > new_depth - 1:
                        reduction = new_depth - 1
                    if reduction < 0:
                        reduction = 0
                score = -self._search(new_depth - reduction, ply + 1, -alpha - 1, -alpha, True, gives_check, True)
                if score > alpha and reduction != 0:
                    score = -self._search(new_depth, ply + 1, -alpha - 1, -alpha, True, gives_check, not cut_node)
                if alpha < score < beta:
                    score = -self._search(new_depth, ply + 1, -beta, -alpha, True, gives_check)
            self._unmake()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    best_code = code
                    best_tactical = tactical
                    pv[ply] = (int(code),) + pv[ply + 1]
                    if score >= beta:
                        if not tactical:
                            memory.reward(board, ply, code, depth, previous, quiets_tried, picker.row1, picker.row2)
                        if memory.use_captures:
                            memory.reward_captures(board, ply, code, depth, tactical, captures_tried)
                        break
            if not tactical:
                tried[base + quiets_tried] = code
                quiets_tried += 1
            elif memory.use_captures:
                memory.tried_captures[base + captures_tried] = code
                captures_tried += 1
        if searched == 0:
            if excluded != 0:
                return alpha  # the only legal move was left out: no verdict on the others
            return -MATE + ply if in_check else 0
        if excluded != 0:
            return best  # a test without the table's move: not this position's score
        bound = LOWER if best >= beta else EXACT if best > original_alpha else UPPER
        self.table.put(key, best_code, _table_score(best, ply), depth, bound, NO_EVAL if in_check else raw_static)
        if (p.correction_history and not in_check and not best_tactical and -TB_BOUND < best < TB_BOUND
                and not (bound == LOWER and best <= raw_static) and not (bound == UPPER and best >= raw_static)):
            # What the search found says the static evaluation was wrong by this
            # much (a bound only in its own direction): remember it for these pawns.
            self._correct(correction_index, best - raw_static, depth)
        return best

    def _probcut(self, depth: i64, ply: i64, probcut_beta: i64, static: i64, tt_move: i64, previous: i64,
                 cut_node: bool) -> i64:
        """ProbCut: a capture whose static exchange already reaches *probcut_beta*
        over the static evaluation, and that holds it in a quiescence search and then
        a search 4 plies shallower, makes this node fail high (its score, stored as a
        lower bound 3 plies shallower); else -INFINITE."""
        board = self.board
        picker = self.pickers[ply]
        picker.start(tt_move, previous, self.rows[ply + 1], self.rows[ply])
        while True:
            code = picker.next()
            if code == 0 or not picker.tactical:
                if code == tt_move and code != 0:
                    continue  # a quiet table move comes first: the captures follow
                return -INFINITE
            if not see_ge(board, code, probcut_beta - static, self.see_scratch):
                continue
            if self.continuation_on:
                self.rows[ply + 2] = continuation_row(board, code)
            board.make(code)
            if not board.was_legal():
                board.unmake()
                continue
            gives_check = board.in_check()
            self.eval.make(board)
            score = -self._qsearch(ply + 1, -probcut_beta, -probcut_beta + 1, gives_check)
            if score >= probcut_beta:
                score = -self._search(depth - 4, ply + 1, -probcut_beta, -probcut_beta + 1, True, gives_check,
                                      not cut_node)
            self._unmake()
            if score >= probcut_beta:
                self.table.put(board.key, code, _table_score(score, ply), depth - 3, LOWER)
                return score

    def _qsearch(self, ply: i64, alpha: i64, beta: i64, in_check: bool) -> i64:
        """Captures and queen promotions until the position is quiet; all evasions
        when in check, so that mates at the horizon are seen."""
        self._count_node()
        board = self.board
        self._pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY:
            return self._evaluate(board)
        if self.spectral_on:
            self.static.enter(board, ply, 0)
        out = self.move_list
        base = ply * MAX_MOVES
        stand_pat: i64 = -INFINITE
        best: i64 = -INFINITE
        best_code: i64 = 0
        p = self.params
        key: i64 = 0
        entry: i64 = 0
        tt_move: i64 = 0
        tt_score: i64 = 0
        tt_bound: i64 = 0
        raw: i64 = NO_EVAL  # the static evaluation, where computed, for the table
        if p.qsearch_tt:
            key = board.key
            entry = self.table.find(key)
            if entry != 0:
                tt_move = entry_move(entry)
                tt_score = _from_table(entry_score(entry), ply)
                tt_bound = entry_bound(entry)
                if beta - alpha == 1 and _settles(tt_bound, tt_score, alpha, beta):
                    return tt_score
        if in_check:
            end = board.gen_all(out, base)
            score_captures(board, out, base, end)  # captures first; quiet evasions key by their mover
        else:
            correction: i64 = 0
            if p.correction_history:
                correction = self.correction[self._correction_index(board)] // CORRECTION_GRAIN
            lazy = self.lazy
            if lazy != 0:
                # Material and tables alone, far outside the window: the classical
                # terms cannot bring the score back (see lazy_eval_margin).
                quick = self.eval.material_and_tables(board) + correction
                if quick - lazy >= beta:
                    return quick - lazy
                if quick + lazy <= alpha:
                    best = quick + lazy
                else:
                    raw = self._static(board, entry)
                    best = raw + correction
            else:
                raw = self._static(board, entry)
                best = raw + correction
            if entry != 0 and _says_more(tt_bound, tt_score, best):
                best = tt_score  # an earlier search of this position says more than the evaluation
            stand_pat = best
            if best >= beta:
                if p.qsearch_tt:
                    self._store_quiescence(key, entry, 0, best, ply, LOWER, raw)
                return best
            if best > alpha:
                alpha = best
            end = board.gen_noisy(out, base)
            score_captures(board, out, base, end)
        if tt_move != 0:
            for index in range(base, end):
                if out[index] & 0xFFFF == tt_move:
                    out[index] = tt_move | TT_MOVE_KEY  # the table's move first
                    break
        delta = p.delta_pruning and not in_check
        see_prune = p.qsearch_see_pruning
        margin = p.delta_margin
        squares = board.squares
        for index in range(base, end):
            code = pick(out, index, end)
            if not in_check:
                if see_prune and not safe_capture(board, code, self.see_scratch):
                    continue
                if delta and code >> 12 == 0:
                    # Delta pruning, Stockfish's form: even this victim and a margin
                    # cannot lift the score to alpha, and the capture gives no check
                    # (promotions always go on); the bound it could reach stands in
                    # for its score, so a fail-low returns what was in reach.
                    victim = squares[SQ120[code >> 6 & 63]] & 7
                    reach = stand_pat + SEE_VALUE[victim if victim != 0 else PAWN] + margin
                    if reach <= alpha and not board.gives_check(code):
                        if reach > best:
                            best = reach
                        continue
            board.make(code)
            if not board.was_legal():
                board.unmake()
                continue
            self.eval.make(board)
            score = -self._qsearch(ply + 1, -beta, -alpha, board.in_check())
            self._unmake()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    best_code = code
                    if score >= beta:
                        break
        if best == -INFINITE:  # in check, and no evasion (or none legal)
            return -MATE + ply
        if p.qsearch_tt:
            self._store_quiescence(key, entry, best_code, best, ply, LOWER if best >= beta else UPPER, raw)
        return best

    def _store_quiescence(self, key: i64, entry: i64, code: i64, score: i64, ply: i64, bound: i64,
                          raw: i64) -> None:
        """Store a quiescence result at depth 0 with the position's static evaluation
        (*raw*, or NO_EVAL), unless the table holds a deeper search of the same
        position (*entry*: what the node found there)."""
        if entry == 0 or entry_depth(entry) == 0:
            self.table.put(key, code, _table_score(score, ply), 0, bound, raw)
