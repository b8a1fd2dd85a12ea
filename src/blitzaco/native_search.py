"""The search on the engine's own board, compiled: :class:`NativeSearch`.

It is :class:`blitzaco.search.Search` (iterative deepening, aspiration windows, the
root moves and MultiPV, the root filter, the trim, the reports: the driver is
inherited unchanged) with the nodes searched on :class:`blitzaco.board.Board` and
scored by :class:`blitzaco.classical.Classical` (evaluate's terms and numbers) or,
with the network on, :class:`blitzaco.native_net.NetEvaluator` (the network's),
the table a :class:`blitzaco.tt.NativeTable`, and the ordering memory (killers,
counter-moves, history) in ``vec[i64]`` arrays, so that a node builds no Python
object: no ``chess.Board``, no ``chess.Move``, no tuple but the principal variation's.

The node functions follow Search's rule for rule, with the same
:class:`~blitzaco.config.SearchConfig` fields (check extension, mate distance
pruning, the table cut, reverse futility, razoring, the null move, internal iterative
reduction, futility, late-move pruning and reductions, tt_eval, improving; in the
quiescence search stand pat, lazy evaluation, delta pruning and SEE pruning). The
moves come in the same stages (table move; captures and queen promotions by most
valuable victim, those losing material by SEE deferred; killers and the counter-move;
quiet moves by history; losing captures and under-promotions), but the board
generates them in another order, so equal keys tie differently and the tree is not
node for node Search's. Tablebases are probed in the search as in Search, through a
python-chess board built only when the piece count is within the tables.

The terms that live off the board, the spectral term and the pheromone memory, are
the research switches (off by default); with one on, they are asked for as in
Search: the spectral value entered at every node (:meth:`StaticEval.enter_board
<blitzaco.static_eval.StaticEval.enter_board>`, a python-chess board built only
when its cache misses), the spectral and pheromone bonus added to the evaluator's
score (:meth:`~blitzaco.static_eval.StaticEval.extras`), and the trails of the
position ordering the quiet moves they mark first, strongest first. A plan is turned
into one search or the other in one place, :func:`new_search`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import (
    BISHOP,
    EMPTY,
    INTERPRETED,
    KING,
    KING_STEPS,
    KNIGHT,
    KNIGHT_STEPS,
    MAX_MOVES,
    OFFBOARD,
    PAWN,
    QUEEN,
    ROOK,
    SLIDER_STEPS,
    SQ120,
    U_MOVE,
    UNDO_SIZE,
    WHITE,
    Board,
    unsigned_key,
)
from blitzaco.board import MAX_PLY as BOARD_PLIES
from blitzaco.classical import Classical
from blitzaco.movepick import PRIOR_SCALE
from blitzaco.position import Position
from blitzaco.search import (
    HISTORY_LIMIT,
    INFINITE,
    MATE,
    MATE_BOUND,
    MAX_PLY,
    TB_BOUND,
    Search,
    SearchPlan,
    tablebase_score,
)
from blitzaco.tt import EXACT, LOWER, UPPER, NativeTable, entry_bound, entry_depth, entry_move, entry_score

if INTERPRETED and not TYPE_CHECKING:  # lists stand in for librt's vec (see board.py)
    from blitzaco.board import vec  # noqa: F811

__all__ = ["NativeSearch", "new_search", "see_ge"]

#: Exchange values by piece type (movepick.SEE_VALUES), the king's above all else.
SEE_VALUE: Final = vec[i64]([0, 100, 320, 330, 500, 950, 20000, 0])
#: Quiet moves allowed when late-move pruning does not apply.
NO_LIMIT: Final = 1 << 30
#: Added to a quiet move's history (at most HISTORY_LIMIT in size) to make its sort
#: key positive.
QUIET_OFFSET: Final[i64] = 1 << 30
#: The sort key of a quiet move the pheromone trails mark: above every history key
#: (at most QUIET_OFFSET + HISTORY_LIMIT), the stronger trail first.
PRIOR_KEY: Final[i64] = 1 << 32
# Move list entries carry the move in the low 16 bits, its sort key above.
KEY_SHIFT: Final = 16


def _least_attacker(board: Board, target: i64, side: i64, removed: vec[i64]) -> i64:
    """The mailbox square of *side*'s least valuable piece attacking *target*,
    looking through the squares marked in *removed* as if empty (x-rays); 0: none."""
    squares = board.squares
    mark = side << 3
    pawn = PAWN | mark
    behind = target - 10 if side == WHITE else target + 10
    for square in range(behind - 1, behind + 2, 2):
        if squares[square] == pawn and removed[square] == 0:
            return square
    knight = KNIGHT | mark
    for i in range(8):
        square = target + KNIGHT_STEPS[i]
        if squares[square] == knight and removed[square] == 0:
            return square
    best: i64 = 0
    best_value: i64 = 1 << 30
    for i in range(8):
        step = SLIDER_STEPS[i]  # diagonal for i < 4
        square = target + step
        piece = squares[square]
        while piece == EMPTY or (piece != OFFBOARD and removed[square] != 0):
            square += step
            piece = squares[square]
        if piece == OFFBOARD or piece >> 3 != side:
            continue
        kind = piece & 7
        if kind == QUEEN or (kind == BISHOP and i < 4) or (kind == ROOK and i >= 4):
            if SEE_VALUE[kind] < best_value:
                best_value = SEE_VALUE[kind]
                best = square
    if best != 0:
        return best
    king = KING | mark
    for i in range(8):
        square = target + KING_STEPS[i]
        if squares[square] == king and removed[square] == 0:
            return square
    return 0


def see_ge(board: Board, move: i64, threshold: i64, removed: vec[i64]) -> bool:
    """Whether the exchange *move* starts on its target square wins at least
    *threshold* centipawns (movepick.see_code_ge on the engine's board: least
    valuable recapture first, x-rays, pins ignored; castling, en passant and
    promotions count as movepick counts them). *removed*: a zeroed 120-entry scratch
    array, left zeroed."""
    frm = SQ120[move & 63]
    to = SQ120[move >> 6 & 63]
    if move >> 12 != 0 or board.is_castle(move):
        return threshold <= 0
    squares = board.squares
    victim = squares[to] & 7
    if squares[to] == EMPTY:
        en_passant = squares[frm] & 7 == PAWN and (move >> 6 & 63) == board.ep
        return threshold <= (SEE_VALUE[PAWN] if en_passant else 0)
    swap = SEE_VALUE[victim] - threshold
    if swap < 0:
        return False
    swap = SEE_VALUE[squares[frm] & 7] - swap
    if swap <= 0:
        return True
    removed[frm] = 1
    side = board.side
    result: i64 = 1
    while True:
        side ^= 1
        attacker = _least_attacker(board, to, side, removed)
        if attacker == 0:
            break
        result ^= 1
        kind = squares[attacker] & 7
        if kind == KING:
            # Only the king is left: it may recapture only if nothing defends.
            if _least_attacker(board, to, side ^ 1, removed) != 0:
                result ^= 1
            break
        swap = SEE_VALUE[kind] - swap
        if swap < result:
            break
        removed[attacker] = 1
    for square in range(21, 99):
        removed[square] = 0
    return result != 0


def new_search(pos: Position, plan: SearchPlan) -> Search:
    """The search *plan* describes, of *pos*: on the engine's own board when
    :attr:`SearchPlan.native <blitzaco.search.SearchPlan.native>`, else on
    python-chess's. The one place a search is built (the engine's move, a helper
    process, the tools)."""
    if plan.native:
        return NativeSearch(pos, plan)
    return Search(pos, plan)


class NativeSearch(Search):
    """:class:`Search` on the engine's own board. Not reusable and not thread-safe.

    Built by :func:`blitzaco.search.new_search` when the plan says so
    (:attr:`~blitzaco.search.SearchPlan.native`)."""

    def __init__(self, pos: Position, plan: SearchPlan) -> None:
        if not plan.native:
            raise ValueError("the native search needs [search] native, a NativeTable and an evaluation it computes")
        super().__init__(pos, plan)
        tt = plan.tt
        static = plan.static
        config = plan.config
        assert isinstance(tt, NativeTable)
        tt.allocate()
        self.table = tt
        board = Board.from_chess(pos.board, BOARD_PLIES + len(pos.keys))
        board.adopt_history(pos.keys)
        self.board = board
        self.root_ply = board.ply
        self.eval = static.native_evaluator()
        self.eval.reset(board)
        self.move_list = vec[i64]([0] * (MAX_MOVES * (MAX_PLY + 2)))
        self.killer_moves = vec[i64]([0] * (2 * (MAX_PLY + 2)))
        self.counter_moves = vec[i64]([0] * 4096)
        self.history_scores = vec[i64]([0] * 8192)
        self.statics_by_ply = vec[i64]([-INFINITE] * (MAX_PLY + 2))
        self.see_scratch = vec[i64]([0] * 120)
        self.lmr_table = vec[i64]([self._lmr[d][n] for d in range(64) for n in range(64)])
        self.tried_list = vec[i64]([0] * (MAX_MOVES * (MAX_PLY + 2)))
        self.lazy = self._lazy_margin
        self.next_poll = self._next_poll
        # The off-board terms beside the spectral one (Search's _per_node) and the
        # trails' ordering (Search's trails): the research switches, see the module's
        # documentation.
        self.extras_on = static.extra_terms()
        # The configuration as native fields: a read of a SearchConfig field from
        # compiled code is a Python attribute lookup.
        self.c_mate_distance = config.mate_distance_pruning
        self.c_check_extension = config.check_extension
        self.c_improving = config.improving
        self.c_tt_eval = config.tt_eval
        self.c_rfp = config.reverse_futility
        self.c_rfp_depth = config.reverse_futility_depth
        self.c_rfp_margin = config.reverse_futility_margin
        self.c_razoring = config.razoring
        self.c_razoring_depth = config.razoring_depth
        self.c_razoring_margin = config.razoring_margin
        self.c_null = config.null_move
        self.c_null_min_depth = config.null_move_min_depth
        self.c_null_reduction = config.null_move_reduction
        self.c_null_depth_divisor = config.null_move_depth_divisor
        self.c_null_eval_max = config.null_move_eval_max
        self.c_null_eval_divisor = config.null_move_eval_divisor
        self.c_iir = config.internal_iterative_reduction
        self.c_iir_min_depth = config.iir_min_depth
        self.c_futility = config.futility
        self.c_futility_depth = config.futility_depth
        self.c_futility_margin = config.futility_margin
        self.c_lmp = config.late_move_pruning
        self.c_lmp_depth = config.late_move_pruning_depth
        self.c_lmp_base = config.late_move_pruning_base
        self.c_killers = config.killers
        self.c_counters = config.counter_moves
        self.c_history = config.history
        self.c_lmr = config.late_move_reductions
        self.c_lmr_min_depth = config.lmr_min_depth
        self.c_lmr_min_moves = config.lmr_min_moves
        self.c_see_ordering = config.see_ordering
        self.c_delta = config.delta_pruning
        self.c_delta_margin = config.delta_margin
        self.c_qsearch_see = config.qsearch_see_pruning

    board: Board
    eval: Classical
    table: NativeTable
    root_ply: i64
    move_list: vec[i64]
    killer_moves: vec[i64]
    counter_moves: vec[i64]
    history_scores: vec[i64]
    statics_by_ply: vec[i64]
    see_scratch: vec[i64]
    lmr_table: vec[i64]
    tried_list: vec[i64]
    lazy: i64
    next_poll: i64
    extras_on: bool
    c_mate_distance: bool
    c_check_extension: bool
    c_improving: bool
    c_tt_eval: bool
    c_rfp: bool
    c_rfp_depth: i64
    c_rfp_margin: i64
    c_razoring: bool
    c_razoring_depth: i64
    c_razoring_margin: i64
    c_null: bool
    c_null_min_depth: i64
    c_null_reduction: i64
    c_null_depth_divisor: i64
    c_null_eval_max: i64
    c_null_eval_divisor: i64
    c_iir: bool
    c_iir_min_depth: i64
    c_futility: bool
    c_futility_depth: i64
    c_futility_margin: i64
    c_lmp: bool
    c_lmp_depth: i64
    c_lmp_base: i64
    c_killers: bool
    c_counters: bool
    c_history: bool
    c_lmr: bool
    c_lmr_min_depth: i64
    c_lmr_min_moves: i64
    c_see_ordering: bool
    c_delta: bool
    c_delta_margin: i64
    c_qsearch_see: bool

    # ------------------------------------------------------------ the driver's board

    def _push_root(self, code: int) -> None:
        self._push(code)

    def _push(self, code: int) -> None:
        self.board.make(code)
        self.eval.make(self.board)

    def _pop(self) -> None:
        self.board.unmake()
        self.eval.unmake()

    def _checked(self) -> bool:
        return self.board.in_check()

    def _reply_codes(self) -> list[int]:
        board = self.board
        out = self.move_list
        start = MAX_MOVES * (MAX_PLY + 1)
        end = board.gen_all(out, start)
        codes = []
        for i in range(start, end):
            board.make(out[i])
            if board.was_legal():
                codes.append(int(out[i]))
            board.unmake()
        return codes

    def _unwind(self) -> None:
        while self.board.ply > self.root_ply:
            self._pop()

    def _count_node(self) -> None:
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self._next_poll = self.next_poll
            self._poll()
            self.next_poll = self._next_poll

    # ------------------------------------------------------------ move lists

    def _score_captures(self, start: i64, end: i64) -> None:
        """Sort keys of captures and queen promotions: most valuable victim (a
        promotion counts as capturing its piece), then the cheaper attacker."""
        out = self.move_list
        squares = self.board.squares
        for i in range(start, end):
            move = out[i] & 0xFFFF
            victim = squares[SQ120[move >> 6 & 63]] & 7
            attacker = squares[SQ120[move & 63]] & 7
            if victim == 0 and attacker == PAWN and move >> 12 == 0 and (move >> 6 & 63) == self.board.ep:
                victim = PAWN  # en passant
            out[i] = move | ((victim + (move >> 12)) * 8 - attacker + 64) << KEY_SHIFT

    def _pick(self, index: i64, end: i64) -> i64:
        """Bring the highest key among index..end-1 to *index*; return its move."""
        out = self.move_list
        best = index
        best_key = out[index]
        for i in range(index + 1, end):
            if out[i] > best_key:
                best_key = out[i]
                best = i
        if best != index:
            out[best] = out[index]
            out[index] = best_key
        return best_key & 0xFFFF

    def _key_quiets(self, start: i64, end: i64, late_start: i64, tt_move: i64, killer1: i64, killer2: i64,
                    counter: i64) -> i64:
        """Sort keys of the quiet moves generated at start..end-1 (the ply's list):
        their history, or above every history the level of the pheromone trail that
        marks them (with the ordering prior on); the moves already tried (the table
        move, killers, counter-move) zeroed. Under-promotions are set aside among the
        late moves, below *late_start*: returns where those now start."""
        out = self.move_list
        history = self.history_scores
        side_base = self.board.side << 12
        trails = self.trails
        prior = trails.row(unsigned_key(self.board.key)) if trails is not None else None
        for i in range(start, end):
            move = out[i]
            if move >> 12 != 0:
                late_start -= 1
                out[late_start] = move
                out[i] = 0
            elif move == tt_move or move == killer1 or move == killer2 or move == counter:
                out[i] = 0
            else:
                key: i64 = history[side_base | (move & 4095)] + QUIET_OFFSET
                if prior is not None:
                    level = prior.get(int(move))
                    if level is not None:
                        key = PRIOR_KEY + i64(int(level * PRIOR_SCALE))
                out[i] = move | key << KEY_SHIFT
        return late_start

    def _evaluate(self, board: Board) -> i64:
        """The static score for the side to move: the evaluator's (the classical terms
        or the network), plus the spectral term and the pheromone bonus when on."""
        score = self.eval.evaluate(board)
        if self.extras_on:
            score += self.static.extras(board.side == WHITE, unsigned_key(board.key))
        return score

    def _is_quiet_special(self, code: i64, tt_move: i64) -> bool:
        """Whether a killer or counter-move *code* can be tried here as a quiet move."""
        board = self.board
        if code == 0 or code == tt_move or code >> 12 != 0:
            return False
        if not board.is_pseudo_legal(code):
            return False
        target = board.squares[SQ120[code >> 6 & 63]]
        if target != EMPTY and not board.is_castle(code):
            return False
        return not (board.squares[SQ120[code & 63]] & 7 == PAWN and (code >> 6 & 63) == board.ep)

    # ------------------------------------------------------------ the nodes

    def _negamax(self, depth: int, ply: int, alpha: int, beta: int, allow_null: bool, in_check: bool) -> int:
        return self._search(depth, ply, alpha, beta, allow_null, in_check)

    def _quiesce(self, ply: int, alpha: int, beta: int, in_check: bool) -> int:
        return self._qsearch(ply, alpha, beta, in_check)

    def _search(self, depth: i64, ply: i64, alpha: i64, beta: i64, allow_null: bool, in_check: bool) -> i64:
        if depth <= 0:
            return self._qsearch(ply, alpha, beta, in_check)
        self._count_node()
        board = self.board
        pv = self._pv
        pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        pv_node = beta - alpha > 1
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
            probed = self._probe(ply)
            if probed is not None:
                return probed
        if self.c_mate_distance:
            if alpha < -MATE + ply:
                alpha = -MATE + ply
            if beta > MATE - ply - 1:
                beta = MATE - ply - 1
            if alpha >= beta:
                return alpha
        if in_check and self.c_check_extension:
            depth += 1

        key = board.key
        entry = self.table.find(key)
        tt_move: i64 = 0
        if entry != 0:
            tt_move = entry_move(entry)
            if not pv_node and entry_depth(entry) >= depth:
                stored = entry_score(entry)
                score = stored - ply if stored >= TB_BOUND else stored + ply if stored <= -TB_BOUND else stored
                bound = entry_bound(entry)
                if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                    return score

        us = board.side
        if self._per_node:
            self.static.enter_board(board, ply, depth)
        static: i64 = -INFINITE if in_check else self._evaluate(board)
        improving: i64 = 0
        lmr_extra: i64 = 0
        if self.c_improving:
            statics = self.statics_by_ply
            statics[ply] = static
            improving = 1 if static > (statics[ply - 2] if ply >= 2 else -INFINITE) else 0
            lmr_extra = 0 if improving or pv_node else 1
        if self.c_tt_eval and entry != 0 and not in_check:
            stored = entry_score(entry)
            bound = entry_bound(entry)
            if -TB_BOUND < stored < TB_BOUND and (
                bound == EXACT or (bound == LOWER and stored > static) or (bound == UPPER and stored < static)
            ):
                static = stored
        if not pv_node and not in_check and -MATE_BOUND < beta < MATE_BOUND:
            # Reverse futility: far enough above beta that no quiet line falls below it.
            if (
                self.c_rfp
                and depth <= self.c_rfp_depth
                and static - self.c_rfp_margin * (depth - improving) >= beta
            ):
                return static
            # Razoring: far enough below alpha that only a capture could save the node.
            if self.c_razoring and depth <= self.c_razoring_depth and static + self.c_razoring_margin * depth < alpha:
                score = self._qsearch(ply, alpha - 1, alpha, False)
                if score < alpha:
                    return score
            # Null move, not with only king and pawns (zugzwang).
            if (self.c_null and allow_null and depth >= self.c_null_min_depth and static >= beta
                    and self._has_pieces(us)):
                gain = (static - beta) // self.c_null_eval_divisor
                null_reduction = (
                    self.c_null_reduction + depth // self.c_null_depth_divisor
                    + (gain if gain < self.c_null_eval_max else self.c_null_eval_max)
                )
                board.make_null()
                self.eval.make(board)
                score = -self._search(depth - 1 - null_reduction, ply + 1, -beta, -beta + 1, False, False)
                board.unmake()
                self.eval.unmake()
                if score >= beta:
                    return beta if score >= MATE_BOUND else score

        if self.c_iir and tt_move == 0 and depth >= self.c_iir_min_depth:
            depth -= 1

        prune_quiets = not pv_node and not in_check
        futile = prune_quiets and self.c_futility and depth <= self.c_futility_depth and (
            static + self.c_futility_margin * depth <= alpha
        )
        quiet_limit: i64 = NO_LIMIT
        if prune_quiets and self.c_lmp and depth <= self.c_lmp_depth:
            quiet_limit = self.c_lmp_base + depth * depth
        killer1: i64 = self.killer_moves[2 * ply] if self.c_killers else 0
        killer2: i64 = self.killer_moves[2 * ply + 1] if self.c_killers else 0
        if killer2 == killer1:
            killer2 = 0
        previous = board.undo[(board.ply - 1) * UNDO_SIZE + U_MOVE]
        counter: i64 = self.counter_moves[previous & 4095] if self.c_counters and previous != 0 else 0
        if counter == killer1 or counter == killer2:
            counter = 0
        lmr = self.c_lmr and depth >= self.c_lmr_min_depth
        lmr_row = (depth if depth < 63 else 63) * 64
        original_alpha = alpha
        best: i64 = -INFINITE
        best_code: i64 = 0
        searched: i64 = 0
        quiets_tried: i64 = 0
        out = self.move_list
        tried = self.tried_list
        base = ply * MAX_MOVES
        # The stages: 0 the table move, 1 captures and queen promotions, 2 killers and
        # the counter-move, 3 quiet moves, 4 the late moves (losing captures and
        # under-promotions), set aside from the far end of this ply's list downwards.
        stage: i64 = 0
        index: i64 = 0
        end: i64 = 0
        late_start = base + MAX_MOVES
        special: i64 = 0
        while True:
            code: i64 = 0
            tactical = False
            if stage == 0:
                stage = 1
                end = board.gen_noisy(out, base)
                self._score_captures(base, end)
                index = base
                if tt_move == 0 or not board.is_pseudo_legal(tt_move):
                    continue
                code = tt_move
                tactical = self._is_tactical(code)
            elif stage == 1:
                if index >= end:
                    stage = 2
                    continue
                code = self._pick(index, end)
                index += 1
                if code == tt_move:
                    continue
                if self.c_see_ordering and not self._safe_capture(code):
                    late_start -= 1
                    out[late_start] = code
                    continue
                tactical = True
            elif stage == 2:
                if special == 3:
                    stage = 3
                    end = board.gen_quiets(out, base)
                    late_start = self._key_quiets(base, end, late_start, tt_move, killer1, killer2, counter)
                    index = base
                    continue
                code = killer1 if special == 0 else killer2 if special == 1 else counter
                special += 1
                if not self._is_quiet_special(code, tt_move):
                    continue
            elif stage == 3:
                if index >= end:
                    stage = 4
                    index = base + MAX_MOVES - 1
                    continue
                code = self._pick(index, end)
                index += 1
                if code == 0:
                    continue
            else:
                # The late moves, in the order they were set aside.
                if index < late_start:
                    break
                code = out[index]
                index -= 1
                if code == tt_move:
                    continue
                tactical = True
            skip_if_quiet = (
                not tactical and searched > 0 and best > -MATE_BOUND and (futile or quiets_tried >= quiet_limit)
            )
            board.make(code)
            if not board.was_legal():
                board.unmake()
                continue
            gives_check = board.in_check()
            if skip_if_quiet and not gives_check:
                board.unmake()
                continue
            self.eval.make(board)
            searched += 1
            new_depth = depth - 1
            if searched == 1:
                score = -self._search(new_depth, ply + 1, -beta, -alpha, True, gives_check)
            else:
                reduction: i64 = 0
                if lmr and not tactical and not in_check and not gives_check and searched > self.c_lmr_min_moves:
                    reduction = self.lmr_table[lmr_row + (searched if searched < 63 else 63)] + lmr_extra
                    if pv_node:
                        reduction -= 1
                    if code == killer1 or code == killer2 or code == counter:
                        reduction -= 1
                    if reduction > new_depth - 1:
                        reduction = new_depth - 1
                    if reduction < 0:
                        reduction = 0
                score = -self._search(new_depth - reduction, ply + 1, -alpha - 1, -alpha, True, gives_check)
                if score > alpha and reduction != 0:
                    score = -self._search(new_depth, ply + 1, -alpha - 1, -alpha, True, gives_check)
                if alpha < score < beta:
                    score = -self._search(new_depth, ply + 1, -beta, -alpha, True, gives_check)
            board.unmake()
            self.eval.unmake()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    best_code = code
                    pv[ply] = (int(code),) + pv[ply + 1]
                    if score >= beta:
                        if not tactical:
                            self._reward(ply, us, code, depth, previous, base, quiets_tried)
                        break
            if not tactical:
                tried[base + quiets_tried] = code
                quiets_tried += 1
        if searched == 0:
            return -MATE + ply if in_check else 0
        bound = LOWER if best >= beta else EXACT if best > original_alpha else UPPER
        stored = best + ply if best >= TB_BOUND else best - ply if best <= -TB_BOUND else best
        self.table.put(key, best_code, stored, depth, bound)
        return best

    def _is_tactical(self, code: i64) -> bool:
        """A capture (en passant included) or a promotion."""
        board = self.board
        if code >> 12 != 0:
            return True
        target = board.squares[SQ120[code >> 6 & 63]]
        if target != EMPTY:
            return not board.is_castle(code)
        return board.squares[SQ120[code & 63]] & 7 == PAWN and (code >> 6 & 63) == board.ep

    def _safe_capture(self, code: i64) -> bool:
        """Only a capture by a more valuable piece can lose the exchange: SEE checks
        those (movepick's RISKY rule)."""
        board = self.board
        attacker = board.squares[SQ120[code & 63]] & 7
        victim = board.squares[SQ120[code >> 6 & 63]] & 7
        if code >> 12 != 0 or SEE_VALUE[attacker] <= SEE_VALUE[victim]:
            return True
        return see_ge(board, code, 0, self.see_scratch)

    def _reward(self, ply: i64, us: i64, code: i64, depth: i64, previous: i64, base: i64, tried: i64) -> None:
        """A quiet move caused a cutoff: killer, counter-move and history up; the
        *tried* quiet moves searched before it (this ply's tried list) down."""
        if self.c_killers and self.killer_moves[2 * ply] != code:
            self.killer_moves[2 * ply + 1] = self.killer_moves[2 * ply]
            self.killer_moves[2 * ply] = code
        if self.c_counters and previous != 0:
            self.counter_moves[previous & 4095] = code
        if self.c_history:
            history = self.history_scores
            side_base = us << 12
            bonus = depth * depth
            history[side_base | (code & 4095)] += bonus
            for i in range(base, base + tried):
                history[side_base | (self.tried_list[i] & 4095)] -= bonus
            if history[side_base | (code & 4095)] > HISTORY_LIMIT:
                for i in range(8192):
                    history[i] //= 2

    def _has_pieces(self, side: i64) -> bool:
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

    def _qsearch(self, ply: i64, alpha: i64, beta: i64, in_check: bool) -> i64:
        self._count_node()
        board = self.board
        self._pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY:
            return self._evaluate(board)
        if self._per_node:
            self.static.enter_board(board, ply, 0)
        out = self.move_list
        base = ply * MAX_MOVES
        stand_pat: i64 = -INFINITE
        best: i64 = -INFINITE
        if in_check:
            end = board.gen_all(out, base)
            self._score_captures(base, end)  # captures first; quiet evasions key by their mover
        else:
            lazy = self.lazy
            if lazy != 0:
                quick = self.eval.material_and_tables(board)
                if quick - lazy >= beta:
                    return quick - lazy
                best = quick + lazy if quick + lazy <= alpha else self._evaluate(board)
            else:
                best = self._evaluate(board)
            stand_pat = best
            if best >= beta:
                return best
            if best > alpha:
                alpha = best
            end = board.gen_noisy(out, base)
            self._score_captures(base, end)
        delta = self.c_delta and not in_check
        see_prune = self.c_qsearch_see
        margin = self.c_delta_margin
        squares = board.squares
        for index in range(base, end):
            code = self._pick(index, end)
            if not in_check:
                if see_prune and not self._safe_capture(code):
                    continue
                if delta and code >> 12 == 0:
                    victim = squares[SQ120[code >> 6 & 63]] & 7
                    if stand_pat + SEE_VALUE[victim if victim != 0 else PAWN] + margin <= alpha:
                        continue
            board.make(code)
            if not board.was_legal():
                board.unmake()
                continue
            self.eval.make(board)
            score = -self._qsearch(ply + 1, -beta, -alpha, board.in_check())
            board.unmake()
            self.eval.unmake()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        if best == -INFINITE:
            return -MATE + ply
        return best

