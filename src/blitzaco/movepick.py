"""Move ordering and static exchange evaluation on the engine's own board, compiled.

A node asks its :class:`MovePicker` for one move at a time, so that a node cut off
early never pays for the moves it did not need. The stages:

1. the transposition table's move, checked only for pseudo-legality;
2. captures and queen promotions, most valuable victim first (a promotion counts as
   capturing its piece), the cheaper attacker breaking ties; those that lose the
   exchange (:func:`see_ge`, with ``[search] see_ordering``) are set aside;
3. the two killer moves of this ply and the counter-move to the opponent's last move;
4. the other quiet moves: those on a pheromone trail first (strongest first, with the
   trails' ordering on), then the rest by history;
5. the late moves: the captures set aside and the under-promotions.

The memory behind the order (killers, counter-moves, history) is
:class:`OrderingMemory`, fresh for every search (deterministic node counts) and
rewarded by the search when a quiet move causes a cutoff.

Moves are pseudo-legal: the search makes each one and drops it if it left the king
attacked (:meth:`blitzaco.board.Board.was_legal`). A move list entry carries the move
in its low 16 bits and its sort key above them (:data:`KEY_SHIFT`), so that picking
the best is a comparison of plain integers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, final

from librt.vecs import vec
from mypy_extensions import i16, i64

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
    STACK_PLIES,
    U_MOVE,
    UNDO_SIZE,
    WHITE,
    Board,
    unsigned_key,
)

if INTERPRETED and not TYPE_CHECKING:  # lists stand in for librt's vec (see board.py)
    from blitzaco.board import vec  # noqa: F811

if TYPE_CHECKING:
    from blitzaco.pheromone import Trails

__all__ = [
    "SEE_VALUE", "PRIOR_SCALE", "HISTORY_LIMIT", "KEY_SHIFT", "MovePicker", "OrderingMemory", "see_ge", "see_ge_quiet",
    "see_scratch", "continuation_row", "toward_zero",
    "is_tactical", "score_captures", "pick",
]

#: Exchange values by piece type (centipawns; index 0 none, 7 unused): the king's
#: only has to exceed everything else.
SEE_VALUE: Final = vec[i64]([0, 100, 320, 330, 500, 950, 20000, 0])
#: Move list entries carry the move in the low 16 bits, its sort key above.
KEY_SHIFT: Final = 16
#: The history table without gravity is halved when an entry passes this.
HISTORY_LIMIT: Final = 1 << 20
#: Entries of the counter-move table (one per from-to pair) and of the history (one
#: per side and from-to pair).
FROM_TO: Final = 4096
HISTORY_SIZE: Final = 2 * FROM_TO
#: Continuation history: a quiet move's worth given an earlier move of the line (the
#: opponent's last, or this side's previous one), both as (piece, target square) (12
#: pieces x 64 squares each): ``continuation[row + column]``, the row that of the
#: earlier move (:func:`continuation_row`), the column the quiet move's
#: (:func:`move_column`); one table serves both distances, as in Stockfish.
PIECE_SQUARES: Final = 12 * 64
CONTINUATION_SIZE: Final = PIECE_SQUARES * PIECE_SQUARES
#: Capture history: ``captures[(piece * 64 + target) * 8 + captured type]`` (0 for a
#: promotion without capture).
CAPTURE_SIZE: Final = 12 * 64 * 8
#: A capture's sort key with capture history: CAPTURE_VALUE_WEIGHT x what it wins
#: (the victim's exchange value, plus the promotion's gain), plus its history (within
#: +-history_limit: the history can overturn about three knights' worth at 16,384),
#: then the cheaper attacker; CAPTURE_KEY_OFFSET keeps the key positive.
CAPTURE_VALUE_WEIGHT: Final = 16
CAPTURE_KEY_OFFSET: Final = 1 << 21
#: Added to a quiet move's history (at most HISTORY_LIMIT in size) to make its sort
#: key positive.
QUIET_OFFSET: Final[i64] = 1 << 30
#: The sort key of a quiet move the pheromone trails mark: above every history key
#: (at most QUIET_OFFSET + HISTORY_LIMIT), the stronger trail first.
PRIOR_KEY: Final[i64] = 1 << 32
#: Trail levels (0 to the trails' max_level) to sort key units.
PRIOR_SCALE: Final = 1_000_000

# The stages of MovePicker.
_TT: Final = 0
_CAPTURES: Final = 1
_SPECIALS: Final = 2
_QUIETS: Final = 3
_LATE: Final = 4
_DONE: Final = 5


# ------------------------------------------------------------------ exchanges

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
    *threshold* centipawns: the least valuable recapture first, x-rays seen, pins
    ignored; castling and promotions count as 0 (≥ threshold when it is ≤ 0), en
    passant as a pawn, a quiet move as 0 (see :func:`see_ge_quiet` for what it risks).
    *removed*: a zeroed 120-entry scratch array, left zeroed."""
    frm = SQ120[move & 63]
    to = SQ120[move >> 6 & 63]
    if move >> 12 != 0 or board.is_castle(move):
        return threshold <= 0
    squares = board.squares
    if squares[to] == EMPTY:
        en_passant = squares[frm] & 7 == PAWN and (move >> 6 & 63) == board.ep
        return threshold <= (SEE_VALUE[PAWN] if en_passant else 0)
    return _exchange_ge(board, frm, to, SEE_VALUE[squares[to] & 7], threshold, removed)


def see_ge_quiet(board: Board, move: i64, threshold: i64, removed: vec[i64]) -> bool:
    """:func:`see_ge` for a quiet move too: whether the exchange on its target square,
    the moved piece taken there first, leaves at least *threshold* (a knight moved
    where a pawn takes it: -320). Captures as :func:`see_ge`."""
    frm = SQ120[move & 63]
    to = SQ120[move >> 6 & 63]
    if move >> 12 != 0 or board.is_castle(move):
        return threshold <= 0
    squares = board.squares
    gain = SEE_VALUE[squares[to] & 7]
    if squares[to] == EMPTY and squares[frm] & 7 == PAWN and (move >> 6 & 63) == board.ep:
        gain = SEE_VALUE[PAWN]
    return _exchange_ge(board, frm, to, gain, threshold, removed)


def _exchange_ge(board: Board, frm: i64, to: i64, gain: i64, threshold: i64, removed: vec[i64]) -> bool:
    """The exchange on mailbox square *to* after the piece on *frm* moved there
    winning *gain*: whether the side to move keeps at least *threshold*."""
    squares = board.squares
    swap = gain - threshold
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


def see_scratch() -> vec[i64]:
    """The zeroed scratch array :func:`see_ge` needs."""
    return vec[i64]([0] * 120)


def safe_capture(board: Board, code: i64, removed: vec[i64]) -> bool:
    """Whether capture *code* does not lose the exchange. Only a capture by a more
    valuable piece can lose it: SEE checks those alone. Promotions are safe."""
    attacker = board.squares[SQ120[code & 63]] & 7
    victim = board.squares[SQ120[code >> 6 & 63]] & 7
    if code >> 12 != 0 or SEE_VALUE[attacker] <= SEE_VALUE[victim]:
        return True
    return see_ge(board, code, 0, removed)


def is_tactical(board: Board, code: i64) -> bool:
    """Whether *code* is a capture (en passant included) or a promotion."""
    if code >> 12 != 0:
        return True
    target = board.squares[SQ120[code >> 6 & 63]]
    if target != EMPTY:
        return not board.is_castle(code)
    return board.squares[SQ120[code & 63]] & 7 == PAWN and (code >> 6 & 63) == board.ep


# ------------------------------------------------------------------ move lists

def score_captures(board: Board, out: vec[i64], start: i64, end: i64) -> None:
    """Sort keys of the captures and queen promotions at ``out[start:end]``: most
    valuable victim (a promotion counts as capturing its piece), then the cheaper
    attacker. Quiet moves among them (check evasions) key by their mover alone."""
    squares = board.squares
    ep = board.ep
    for i in range(start, end):
        move = out[i] & 0xFFFF
        victim = squares[SQ120[move >> 6 & 63]] & 7
        attacker = squares[SQ120[move & 63]] & 7
        if victim == 0 and attacker == PAWN and move >> 12 == 0 and (move >> 6 & 63) == ep:
            victim = PAWN  # en passant
        out[i] = move | ((victim + (move >> 12)) * 8 - attacker + 64) << KEY_SHIFT


def capture_index(board: Board, code: i64) -> i64:
    """Capture (or promotion) *code* of *board* as a capture-history index."""
    squares = board.squares
    piece = squares[SQ120[code & 63]]
    to = code >> 6 & 63
    captured = squares[SQ120[to]] & 7
    if captured == 0 and piece & 7 == PAWN and code >> 12 == 0 and to == board.ep:
        captured = PAWN  # en passant
    return (_piece_index(piece) * 64 + to) * 8 + captured


def score_captures_by_history(board: Board, out: vec[i64], start: i64, end: i64, history: vec[i16]) -> None:
    """:func:`score_captures` with capture history: what the capture wins (the
    victim's exchange value, plus a promotion's gain) x CAPTURE_VALUE_WEIGHT, plus
    the history of (piece, target, victim), then the cheaper attacker. A capture that
    kept refuting can thus come before a richer one that kept failing."""
    squares = board.squares
    for i in range(start, end):
        move = out[i] & 0xFFFF
        index = capture_index(board, move)
        promotion = move >> 12
        gain = SEE_VALUE[index & 7] + (SEE_VALUE[promotion] - SEE_VALUE[PAWN] if promotion != 0 else 0)
        attacker = squares[SQ120[move & 63]] & 7
        key = CAPTURE_KEY_OFFSET + gain * CAPTURE_VALUE_WEIGHT + i64(history[index]) + (8 - attacker)
        out[i] = move | key << KEY_SHIFT


def pick(out: vec[i64], index: i64, end: i64) -> i64:
    """Bring the highest key among ``out[index:end]`` to *index*; return its move."""
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


# ------------------------------------------------------------------ the memory

@final
class OrderingMemory:
    """Killers, counter-moves and history of a search (or of a game's searches, see
    :class:`blitzaco.search.SearchMemory`): ``killers[2 * ply]`` and
    ``[2 * ply + 1]``, ``counters[previous & 4095]``, ``history[side << 12 | from <<
    6 | to]``, the continuation history (``continuation[row + column]``) and the
    capture history; and each ply's quiet moves and captures searched so far
    (``tried[ply * MAX_MOVES + i]``), which a cutoff's reward lowers. With a switch
    off, its table stays empty.

    The tables of the standard shape (the main history with ``gravity``, the
    continuation and capture histories) all move by one rule, :meth:`bonus` of the
    cutoff's depth through :func:`moved` within +-``limit``: the refuting move's
    entry rises, each move tried before it falls by as much, an entry moving the
    less the nearer it is to the bound on that side."""

    killers: vec[i64]
    counters: vec[i64]
    history: vec[i64]
    continuation: vec[i16]
    captures: vec[i16]
    tried: vec[i64]
    tried_captures: vec[i64]
    use_killers: bool
    use_counters: bool
    use_history: bool
    use_continuation: bool
    use_captures: bool
    gravity: bool
    limit: i64
    bonus_quadratic: i64
    bonus_linear: i64
    bonus_max: i64

    def __init__(self, killers: bool, counters: bool, history: bool, continuation: bool = False,
                 captures: bool = False, gravity: bool = False, limit: i64 = 16384,
                 bonus_quadratic: i64 = 16, bonus_linear: i64 = 320, bonus_max: i64 = 2048) -> None:
        self.killers = vec[i64]([0] * (2 * STACK_PLIES))
        self.counters = vec[i64]([0] * FROM_TO)
        self.history = vec[i64]([0] * HISTORY_SIZE)
        # 16-bit entries (the bound is at most 2^14): the continuation table is 1.2 MB, not 4.7.
        self.continuation = vec[i16]([0] * (CONTINUATION_SIZE if continuation else 0))
        self.captures = vec[i16]([0] * (CAPTURE_SIZE if captures else 0))
        self.tried = vec[i64]([0] * (MAX_MOVES * STACK_PLIES))
        self.tried_captures = vec[i64]([0] * (MAX_MOVES * STACK_PLIES if captures else 0))
        self.use_killers = killers
        self.use_counters = counters
        self.use_history = history
        self.use_continuation = continuation
        self.use_captures = captures
        self.gravity = gravity
        self.limit = limit
        self.bonus_quadratic = bonus_quadratic
        self.bonus_linear = bonus_linear
        self.bonus_max = bonus_max if bonus_max < limit else limit

    def forget_killers(self) -> None:
        """Empty the killers, before a search that keeps the rest of this memory: a
        killer's ply belongs to the tree of the search that found it."""
        killers = self.killers
        for i in range(len(killers)):
            killers[i] = 0

    def age(self) -> None:
        """Halve every history entry (toward zero), before a search that keeps this
        memory: what the game's earlier moves taught still orders the moves, and what
        this search finds soon outweighs it."""
        _halve(self.history)
        _halve16(self.continuation)
        _halve16(self.captures)

    def bonus(self, depth: i64) -> i64:
        """What a cutoff at *depth* moves the tables of the standard shape by:
        min(bonus_quadratic depth² + bonus_linear depth, bonus_max) (bonus_max at
        most the bound)."""
        value = self.bonus_quadratic * depth * depth + self.bonus_linear * depth
        return value if value < self.bonus_max else self.bonus_max

    def killer(self, ply: i64, which: i64) -> i64:
        """Killer *which* (0 or 1) of *ply*, or 0."""
        return self.killers[2 * ply + which] if self.use_killers else 0

    def counter(self, previous: i64) -> i64:
        """The counter-move to *previous* (0: a null move or none), or 0."""
        return self.counters[previous & 4095] if self.use_counters and previous != 0 else 0

    def reward(self, board: Board, ply: i64, code: i64, depth: i64, previous: i64, tried: i64,
               row1: i64, row2: i64) -> None:
        """Quiet move *code* caused a cutoff at *ply* of *board* (the node's position):
        it becomes the first killer and the counter-move to *previous*; its history
        and its continuation histories after the moves one and two plies up (rows
        *row1*, *row2*; -1: none) rise by :meth:`bonus`, and the *tried* quiet moves
        searched before it at this ply fall by as much. The main history without
        ``gravity`` moves by depth² instead, unbounded until an entry passes
        HISTORY_LIMIT and all are halved."""
        if self.use_killers and self.killers[2 * ply] != code:
            self.killers[2 * ply + 1] = self.killers[2 * ply]
            self.killers[2 * ply] = code
        if self.use_counters and previous != 0:
            self.counters[previous & 4095] = code
        base = ply * MAX_MOVES
        if self.use_history:
            history = self.history
            side_base = board.side << 12
            if self.gravity:
                bonus = self.bonus(depth)
                index = side_base | (code & 4095)
                history[index] = moved(history[index], bonus, self.limit)
                for i in range(base, base + tried):
                    index = side_base | (self.tried[i] & 4095)
                    history[index] = moved(history[index], -bonus, self.limit)
            else:
                bonus = depth * depth
                history[side_base | (code & 4095)] += bonus
                for i in range(base, base + tried):
                    history[side_base | (self.tried[i] & 4095)] -= bonus
                if history[side_base | (code & 4095)] > HISTORY_LIMIT:
                    for i in range(HISTORY_SIZE):
                        history[i] //= 2
        if self.use_continuation and (row1 >= 0 or row2 >= 0):
            bonus = self.bonus(depth)
            self._continue(move_column(board, code), bonus, row1, row2)
            for i in range(base, base + tried):
                self._continue(move_column(board, self.tried[i]), -bonus, row1, row2)

    def _continue(self, column: i64, bonus: i64, row1: i64, row2: i64) -> None:
        """Move a quiet move's continuation entries (its *column*) after the moves
        one and two plies up (rows *row1*, *row2*; -1: none) by *bonus*."""
        for row in (row1, row2):
            if row >= 0:
                _gravity16(self.continuation, row + column, bonus, self.limit)

    def reward_captures(self, board: Board, ply: i64, code: i64, depth: i64, tactical: bool, tried: i64) -> None:
        """A cutoff at *ply* of *board* (the node's position) by *code*: a capture's
        history rises (*tactical*), and the *tried* captures searched before it fall
        whatever the move, each by :meth:`bonus`."""
        bonus = self.bonus(depth)
        table = self.captures
        if tactical:
            _gravity16(table, capture_index(board, code), bonus, self.limit)
        base = ply * MAX_MOVES
        for i in range(base, base + tried):
            _gravity16(table, capture_index(board, self.tried_captures[i]), -bonus, self.limit)


# ------------------------------------------------------------------ the picker

@final
class MovePicker:
    """The moves of one ply of a search, one at a time in stages (see the module's
    documentation). One per ply, made once per search; :meth:`start` at every node.
    Uses its ply's part of the shared move list (``MAX_MOVES`` entries)."""

    board: Board
    memory: OrderingMemory
    out: vec[i64]
    removed: vec[i64]
    trails: Trails | None
    see_ordering: bool
    ply: i64
    base: i64
    stage: i64
    index: i64
    end: i64
    late_start: i64
    special: i64
    tt_move: i64
    killer1: i64
    killer2: i64
    counter: i64
    #: Where this node's continuation histories start, after the moves one and two
    #: plies up (-1: none, or continuation history off).
    row1: i64
    row2: i64
    #: Whether the move :meth:`next` returned last is a capture or a promotion.
    tactical: bool

    def __init__(self, board: Board, memory: OrderingMemory, out: vec[i64], removed: vec[i64],
                 trails: Trails | None, see_ordering: bool, ply: i64) -> None:
        self.board = board
        self.memory = memory
        self.out = out
        self.removed = removed
        self.trails = trails
        self.see_ordering = see_ordering
        self.ply = ply
        self.base = ply * MAX_MOVES
        self.stage = _DONE
        self.index = 0
        self.end = 0
        self.late_start = 0
        self.special = 0
        self.tt_move = 0
        self.killer1 = 0
        self.killer2 = 0
        self.counter = 0
        self.row1 = -1
        self.row2 = -1
        self.tactical = False

    def start(self, tt_move: i64, previous: i64, row1: i64 = -1, row2: i64 = -1) -> None:
        """A new node at this ply: its table move (0: none), the move that led to it
        (0: a null move or none), for the counter-move, and the continuation-history
        rows of the moves one and two plies up (:func:`continuation_row`; -1: none)."""
        memory = self.memory
        killer1 = memory.killer(self.ply, 0)
        killer2 = memory.killer(self.ply, 1)
        if killer2 == killer1:
            killer2 = 0
        counter = memory.counter(previous)
        if counter == killer1 or counter == killer2:
            counter = 0
        self.tt_move = tt_move
        self.killer1 = killer1
        self.killer2 = killer2
        self.counter = counter
        use = memory.use_continuation
        self.row1 = row1 if use else -1
        self.row2 = row2 if use else -1
        self.stage = _TT
        self.special = 0
        self.late_start = self.base + MAX_MOVES

    def is_special(self, code: i64) -> bool:
        """Whether *code* is one of this node's killers or its counter-move."""
        return code == self.killer1 or code == self.killer2 or code == self.counter

    def quiet_history(self, code: i64) -> i64:
        """Quiet move *code*'s history at this node, the one score that orders the
        quiet moves and feeds their reductions and pruning: its history, plus its
        continuation histories after the moves one and two plies up (where that is
        on)."""
        board = self.board
        memory = self.memory
        value = memory.history[board.side << 12 | (code & 4095)]
        if self.row1 >= 0 or self.row2 >= 0:
            column = move_column(board, code)
            if self.row1 >= 0:
                value += i64(memory.continuation[self.row1 + column])
            if self.row2 >= 0:
                value += i64(memory.continuation[self.row2 + column])
        return value

    def next(self) -> i64:
        """The next pseudo-legal move (:attr:`tactical` says whether it is a capture
        or a promotion), or 0 when there are no more."""
        board = self.board
        out = self.out
        while True:
            stage = self.stage
            if stage == _TT:
                self.stage = _CAPTURES
                self.end = board.gen_noisy(out, self.base)
                if self.memory.use_captures:
                    score_captures_by_history(board, out, self.base, self.end, self.memory.captures)
                else:
                    score_captures(board, out, self.base, self.end)
                self.index = self.base
                tt_move = self.tt_move
                if tt_move == 0 or not board.is_pseudo_legal(tt_move):
                    continue
                self.tactical = is_tactical(board, tt_move)
                return tt_move
            if stage == _CAPTURES:
                if self.index >= self.end:
                    self.stage = _SPECIALS
                    continue
                code = pick(out, self.index, self.end)
                self.index += 1
                if code == self.tt_move:
                    continue
                if self.see_ordering and not safe_capture(board, code, self.removed):
                    self.late_start -= 1
                    out[self.late_start] = code
                    continue
                self.tactical = True
                return code
            if stage == _SPECIALS:
                special = self.special
                if special == 3:
                    self.stage = _QUIETS
                    self.end = board.gen_quiets(out, self.base)
                    self._key_quiets()
                    self.index = self.base
                    continue
                code = self.killer1 if special == 0 else self.killer2 if special == 1 else self.counter
                self.special = special + 1
                if not self._is_quiet_special(code):
                    continue
                self.tactical = False
                return code
            if stage == _QUIETS:
                if self.index >= self.end:
                    self.stage = _LATE
                    self.index = self.base + MAX_MOVES - 1
                    continue
                code = pick(out, self.index, self.end)
                self.index += 1
                if code == 0:
                    continue
                self.tactical = False
                return code
            if stage == _LATE:
                # The late moves, in the order they were set aside.
                if self.index < self.late_start:
                    self.stage = _DONE
                    return 0
                code = out[self.index]
                self.index -= 1
                if code == self.tt_move:
                    continue
                self.tactical = True
                return code
            return 0

    def _is_quiet_special(self, code: i64) -> bool:
        """Whether a killer or counter-move *code* can be tried here as a quiet move."""
        board = self.board
        if code == 0 or code == self.tt_move or code >> 12 != 0:
            return False
        if not board.is_pseudo_legal(code):
            return False
        target = board.squares[SQ120[code >> 6 & 63]]
        if target != EMPTY and not board.is_castle(code):
            return False
        return not (board.squares[SQ120[code & 63]] & 7 == PAWN and (code >> 6 & 63) == board.ep)

    def _key_quiets(self) -> None:
        """Sort keys of the quiet moves just generated: their history, or above every
        history the level of the pheromone trail that marks them (with the trails'
        ordering on); the moves already tried (the table move, killers,
        counter-move) zeroed. Under-promotions are set aside among the late moves."""
        out = self.out
        board = self.board
        trails = self.trails
        prior = trails.row(unsigned_key(board.key)) if trails is not None else None
        tt_move = self.tt_move
        late_start = self.late_start
        for i in range(self.base, self.end):
            move = out[i]
            if move >> 12 != 0:
                late_start -= 1
                out[late_start] = move
                out[i] = 0
            elif move == tt_move or move == self.killer1 or move == self.killer2 or move == self.counter:
                out[i] = 0
            else:
                key: i64 = self.quiet_history(move) + QUIET_OFFSET
                if prior is not None:
                    level = prior.get(int(move))
                    if level is not None:
                        key = PRIOR_KEY + i64(int(level * PRIOR_SCALE))
                out[i] = move | key << KEY_SHIFT
        self.late_start = late_start


def _piece_index(piece: i64) -> i64:
    """A piece code as 0-11, White's pieces first (the history tables' piece index)."""
    return (piece & 7) - 1 + 6 * (piece >> 3)


def toward_zero(value: i64, divisor: i64) -> i64:
    """*value* / *divisor* rounded toward zero, as C divides (Python's ``//`` rounds
    toward minus infinity: -1 // 8192 is -1, a whole unit from nothing)."""
    return value // divisor if value >= 0 else -(-value // divisor)


def _halve(table: vec[i64]) -> None:
    """Every entry of *table* halved toward zero (:meth:`OrderingMemory.age`)."""
    for i in range(len(table)):
        table[i] = toward_zero(table[i], 2)


def _halve16(table: vec[i16]) -> None:
    """:func:`_halve` on a 16-bit table."""
    for i in range(len(table)):
        table[i] = i16(toward_zero(i64(table[i]), 2))


if INTERPRETED and not TYPE_CHECKING:  # never entered compiled (mypyc skips such blocks)
    def _halve(table: list[int]) -> None:  # noqa: F811 -- one comprehension: interpreted, a tenth of the loop's time
        table[:] = [value >> 1 if value >= 0 else -(-value >> 1) for value in table]

    _halve16 = _halve  # noqa: F811


def moved(entry: i64, bonus: i64, limit: i64) -> i64:
    """History *entry* moved by *bonus* (a malus when negative) with gravity: the
    less the nearer it already is to the bound on that side (the product divided
    toward zero, as C divides), so that it stays within +-*limit* when ``|bonus| <=
    limit``."""
    magnitude = bonus if bonus >= 0 else -bonus
    return entry + bonus - toward_zero(entry * magnitude, limit)


def _gravity16(table: vec[i16], index: i64, bonus: i64, limit: i64) -> None:
    """:func:`moved` on a 16-bit table's entry."""
    table[index] = i16(moved(i64(table[index]), bonus, limit))


def piece_square(board: Board, square: i64) -> i64:
    """The piece on *square* and the square, as a continuation-history index (piece
    0-11, White's first, times 64 plus the square), or -1 for an empty square."""
    piece = board.squares[SQ120[square]]
    if piece == EMPTY:
        return -1
    return _piece_index(piece) * 64 + square


def continuation_row(board: Board, code: i64) -> i64:
    """Where the continuation history after move *code* starts, *code* not yet made
    on *board* (the mover on its from-square), or -1 for a null move (0)."""
    return move_column(board, code) * PIECE_SQUARES if code != 0 else -1


def move_column(board: Board, code: i64) -> i64:
    """Quiet move *code* of *board* as a continuation-history index: the moving
    piece (on its from-square) and its target square."""
    return _piece_index(board.squares[SQ120[code & 63]]) * 64 + (code >> 6 & 63)


def previous_move(board: Board) -> i64:
    """The move that led to *board*'s position (0: a null move, or none)."""
    return board.undo[(board.ply - 1) * UNDO_SIZE + U_MOVE]
