"""The engine's own board, written for mypyc: the ground floor of the native core.

A 10×12 mailbox (the 8×8 board inside a two-square border, so that a knight's or a
slider's step off the board lands on a border square instead of wrapping round) in a
``librt.vecs.vec[i64]``, with the state a search needs kept up to date by
:meth:`Board.make` and restored by :meth:`Board.unmake` from an undo stack:

* a 64-bit Zobrist key from Polyglot's random numbers, equal to
  ``chess.polyglot.zobrist_hash`` in standard chess (and to
  :func:`compute_key` of the python-chess board in Chess960 too: castling rights are
  keyed by the square of the rook that holds them);
* castling rights (standard and Chess960), the en passant square, the halfmove
  clock, the kings' squares and a count of every piece;
* the keys of every position since the setup, for repetition detection that counts
  the game before the root;
* what the last move changed (:attr:`Board.dirty`): the pieces that left or
  reached a square, so that an evaluator can keep its own sums and accumulator. The
  board itself knows nothing of evaluation.

Moves are the engine's 15-bit codes, ``from | to << 6 | promotion << 12`` on
python-chess's squares (a1 = 0, h8 = 63) and piece types (knight 2 … queen 5), as
:mod:`blitzaco.moves` packs them; castling is written king-two-squares in standard
chess and king-takes-rook in Chess960, as python-chess writes it. Generation is
pseudo-legal and staged (:meth:`Board.gen_noisy`, :meth:`Board.gen_quiets`); a
table move is checked by :meth:`Board.is_pseudo_legal` before anything is
generated; a move is legal when, made, it does not leave the mover's king attacked
(:meth:`Board.was_legal`).

The same source runs interpreted and compiled, and must give the same results: keys
are kept as signed 64-bit integers (an XOR never leaves that range), and nothing here
shifts, multiplies or adds a key.

python-chess is used only to set a board up and to write one back
(:meth:`Board.from_chess`, :meth:`Board.to_chess`); never inside a move.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Final, final

import chess
from chess.polyglot import POLYGLOT_RANDOM_ARRAY
from librt.vecs import vec
from mypy_extensions import i64


def _probe() -> None:
    """Compiled by mypyc, a native function; interpreted, a Python function."""


#: Whether the native core runs interpreted (not compiled by mypyc). Its modules are
#: compiled together or not at all, so this one test serves them all.
INTERPRETED: Final = type(_probe).__name__ == "function"
if INTERPRETED and not TYPE_CHECKING:  # never entered compiled (mypyc skips such blocks)
    class vec:  # noqa: F811 -- interpreted, a Python list indexes faster than librt's vec
        def __class_getitem__(cls, item: object) -> type:
            return list

__all__ = [
    "Board", "perft", "divide", "legal_codes", "WHITE", "BLACK", "PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING",
    "EMPTY", "OFFBOARD", "NO_SQUARE", "MAX_MOVES", "MAX_PLY", "STACK_PLIES", "CAPACITY", "unsigned_key",
    "compute_key", "repetition_window",
]

# ------------------------------------------------------------------------ pieces
#: Sides: the side to move is 0 (White) or 1 (Black), the colour bit of a piece.
WHITE: Final = 0
BLACK: Final = 1
#: Piece types, numbered as python-chess numbers them.
PAWN: Final = 1
KNIGHT: Final = 2
BISHOP: Final = 3
ROOK: Final = 4
QUEEN: Final = 5
KING: Final = 6
#: A square's content: 0 empty, ``type | side << 3`` a piece (White 1–6, Black
#: 9–14), 16 the border. ``content >> 3`` is then 0 or 1 for a piece's side and 2 for
#: the border, which is neither side.
EMPTY: Final = 0
OFFBOARD: Final = 16
#: The en passant square when there is none, and any other missing square.
NO_SQUARE: Final = -1
#: More pseudo-legal moves than any position has (the record is 218 legal moves).
MAX_MOVES: Final = 256
#: The deepest ply a search reaches (its lines are at most this long, null moves
#: included): the search's, the move picker's and the evaluation's per-ply state
#: are sized by it, and mate scores are those within it of MATE.
MAX_PLY: Final = 128
#: Plies of per-ply state a search keeps: every ply of its deepest line, the ply
#: beyond it (a node at MAX_PLY still reads its child's principal variation and
#: may look for a legal move), and one to spare.
STACK_PLIES: Final = MAX_PLY + 2
#: Moves a board makes beyond its setup unless told otherwise (a search needs
#: STACK_PLIES; the tools' walks through whole games more).
CAPACITY: Final = 256

# ------------------------------------------------------------------------ squares
# A square of the mailbox is 21 + 10 * rank + file; python-chess's square is
# 8 * rank + file. North (towards Black) is +10, east +1.
NORTH: Final = 10
SOUTH: Final = -10


def _mailbox_tables() -> tuple[vec[i64], vec[i64]]:
    to120 = vec[i64]([0] * 64)
    to64 = vec[i64]([NO_SQUARE] * 120)
    for square in range(64):
        mailbox = 21 + 10 * (square >> 3) + (square & 7)
        to120[square] = mailbox
        to64[mailbox] = square
    return to120, to64


_TABLES: Final = _mailbox_tables()
#: python-chess square → mailbox square.
SQ120: Final = _TABLES[0]
#: mailbox square → python-chess square (-1 on the border).
SQ64: Final = _TABLES[1]

KNIGHT_STEPS: Final = vec[i64]([-21, -19, -12, -8, 8, 12, 19, 21])
KING_STEPS: Final = vec[i64]([-11, -10, -9, -1, 1, 9, 10, 11])
BISHOP_STEPS: Final = vec[i64]([-11, -9, 9, 11])
ROOK_STEPS: Final = vec[i64]([-10, -1, 1, 10])
#: The sliders' rays: the four diagonal steps, then the four straight ones. A piece of
#: type t steps along ``SLIDER_STEPS[SLIDES_FROM[t]:SLIDES_TO[t]]``.
SLIDER_STEPS: Final = vec[i64]([-11, -9, 9, 11, -10, -1, 1, 10])
SLIDES_FROM: Final = vec[i64]([0, 0, 0, 0, 4, 0, 0, 0])
SLIDES_TO: Final = vec[i64]([0, 0, 0, 4, 8, 8, 0, 0])


def _line_steps() -> vec[i64]:
    """``LINE_STEP[to - from + 77]``: the step of the ray from one square to another
    on a rank, file or diagonal, 0 when they share none. In the 10×12 layout every
    distance between two board squares belongs to at most one ray (the multiples of
    1, 9, 10 and 11 up to seven steps never meet), as in 0x88."""
    steps = vec[i64]([0] * 155)
    for step in (-11, -10, -9, -1, 1, 9, 10, 11):
        for count in range(1, 8):
            steps[step * count + 77] = step
    return steps


LINE_STEP: Final = _line_steps()
#: ``BIT[square]``: a python-chess square's bit in a 64-bit bitboard (bit 63 is the
#: sign bit of an ``i64``).
BIT: Final = vec[i64]([(1 << square) - (1 << 64 if square == 63 else 0) for square in range(64)])
#: The low 32 bits.
M32: Final[i64] = 0xFFFFFFFF
#: A de Bruijn sequence of 32 bits: ``(b * DEBRUIJN32 & M32) >> 27`` is a different
#: number for each single bit b of a 32-bit word, and ``LOW_BIT`` maps it back to the
#: bit's index (a product below 2**58: no overflow, pure or compiled).
DEBRUIJN32: Final[i64] = 0x077CB531


def _low_bits() -> vec[i64]:
    table = vec[i64]([0] * 32)
    for index in range(32):
        table[((1 << index) * DEBRUIJN32 & M32) >> 27] = index
    return table


LOW_BIT: Final = _low_bits()


def bit_index(bit: i64) -> i64:
    """The index (0-31) of *bit*, a single set bit of a 32-bit word: with
    ``bits & -bits`` a walk over a bitboard's squares, lowest first."""
    return LOW_BIT[(bit * DEBRUIJN32 & M32) >> 27]

# ------------------------------------------------------------------------ keys


def _signed(value: int) -> int:
    """An unsigned 64-bit number as the signed 64-bit integer with the same bits."""
    return value - (1 << 64) if value >= 1 << 63 else value


def unsigned_key(value: int) -> int:
    """A key of this board (signed) as python-chess and the rest of the engine keep
    it: the unsigned 64-bit number with the same bits."""
    return value & 0xFFFFFFFFFFFFFFFF


def _piece_keys() -> vec[i64]:
    """``PIECE_KEY[piece * 64 + square]``: Polyglot's number for *piece* (our code)
    on *square* (python-chess's). Polyglot orders its pieces black pawn, white pawn,
    black knight, …"""
    keys = vec[i64]([0] * (16 * 64))
    for piece_type in range(1, 7):
        for side in (WHITE, BLACK):
            polyglot_colour = 1 if side == WHITE else 0
            for square in range(64):
                value = POLYGLOT_RANDOM_ARRAY[64 * ((piece_type - 1) * 2 + polyglot_colour) + square]
                keys[(piece_type | side << 3) * 64 + square] = _signed(value)
    return keys


def _castle_square_keys() -> vec[i64]:
    """Castling rights keyed by the square of the rook that holds them: Polyglot's
    four numbers on the corners, numbers of our own (from a fixed seed) elsewhere for
    Chess960."""
    rng = random.Random(0x626C69747A61636F)  # "blitzaco"
    keys = [rng.getrandbits(64) for _ in range(64)]
    keys[chess.H1] = POLYGLOT_RANDOM_ARRAY[768]
    keys[chess.A1] = POLYGLOT_RANDOM_ARRAY[769]
    keys[chess.H8] = POLYGLOT_RANDOM_ARRAY[770]
    keys[chess.A8] = POLYGLOT_RANDOM_ARRAY[771]
    return vec[i64]([_signed(value) for value in keys])


PIECE_KEY: Final = _piece_keys()
CASTLE_SQUARE_KEY: Final = _castle_square_keys()
EP_FILE_KEY: Final = vec[i64]([_signed(POLYGLOT_RANDOM_ARRAY[772 + file]) for file in range(8)])
WHITE_TO_MOVE_KEY: Final = _signed(POLYGLOT_RANDOM_ARRAY[780])


def compute_key(board: chess.Board) -> int:
    """The key of a python-chess *board* from scratch, unsigned, as a :class:`Board`
    set up from it keeps it: ``chess.polyglot.zobrist_hash`` in standard chess, the
    castling rights keyed by their rooks' squares in Chess960 too. For the game's
    positions (the pheromone memory, the ``d`` command, the ponder move's entry), not
    for a search's nodes."""
    key = 0
    for square, piece in board.piece_map().items():
        key ^= PIECE_KEY[(piece.piece_type | (0 if piece.color == chess.WHITE else 1) << 3) * 64 + square]
    for square in chess.scan_forward(board.clean_castling_rights()):
        key ^= CASTLE_SQUARE_KEY[square]
    ep = board.ep_square
    if ep is not None and board.pawns & board.occupied_co[board.turn] & chess.BB_PAWN_ATTACKS[not board.turn][ep]:
        key ^= EP_FILE_KEY[ep & 7]  # only when a pawn stands ready to take, as Polyglot keys it
    if board.turn == chess.WHITE:
        key ^= WHITE_TO_MOVE_KEY
    return unsigned_key(key)


def repetition_window(board: chess.Board) -> int:
    """How many of *board*'s last moves repetition detection needs: those since the
    last capture or pawn move (no position before it can recur)."""
    return min(board.halfmove_clock, len(board.move_stack))

# ------------------------------------------------------------------------ castling
# Four rights, one bit each: White's h-side (king side), White's a-side, Black's
# h-side, Black's a-side. Right r belongs to side r >> 1; r & 1 is 0 for the h-side.
ALL_RIGHTS: Final = 15

# ------------------------------------------------------------------------ undo
# What make saves for unmake, UNDO_SIZE numbers a move in one flat array.
U_MOVE: Final = 0
U_CAPTURED: Final = 1  # the captured piece (EMPTY: none); for castling the rook's square
U_KIND: Final = 2
U_CASTLING: Final = 3
U_EP: Final = 4
U_HALFMOVE: Final = 5
U_BARRIER: Final = 6
UNDO_SIZE: Final = 7
# The kinds of move, for unmake.
K_NORMAL: Final = 0
K_EN_PASSANT: Final = 1
K_CASTLE: Final = 2
K_NULL: Final = 3
#: :attr:`Board.checks`: not yet known, the side to move in check, not in check.
CHECK_UNKNOWN: Final = 0
IN_CHECK: Final = 1
NOT_IN_CHECK: Final = 2

#: What the last move changed: up to three ``(piece, from, to)`` triples, python-chess
#: squares, -1 where a piece appeared (from) or vanished (to).
DIRTY_SIZE: Final = 9


@final
class Board:
    """A chess position with make/unmake, the Polyglot key, pseudo-legal staged
    generation and attack tests.

    Not thread-safe: one search owns one board. Build one with
    :meth:`from_chess`; :meth:`copy` gives an independent one.
    """

    squares: vec[i64]
    #: Side to move: WHITE (0) or BLACK (1).
    side: i64
    #: Castling rights, a bit each (see ALL_RIGHTS).
    castling: i64
    #: En passant target square (python-chess numbering) when a pawn of the side to
    #: move stands ready to take there (pseudo-legally, as Polyglot keys it); else -1.
    ep: i64
    halfmove: i64
    fullmove: i64
    key: i64
    chess960: bool
    #: Mailbox squares of the White and the Black king.
    kings: vec[i64]
    #: How many of each piece (indexed by piece code) are on the board.
    counts: vec[i64]
    #: For each right, the square of its rook (python-chess numbering; -1 if none).
    castle_rook: vec[i64]
    #: ``castle_clear[square]``: the rights that survive a move from or to it.
    castle_clear: vec[i64]
    #: The key of each castling-rights mask on this board.
    castle_keys: vec[i64]
    #: ``keys[i]``: the key after the i-th move since setup (keys[0] is the setup).
    keys: vec[i64]
    #: The key of the pawns alone (their part of :attr:`key`): the pawn structure's
    #: name, for the search's correction history.
    pawn_key: i64
    #: ``pawn_keys[i]``: the pawn key after the i-th move since setup.
    pawn_keys: vec[i64]
    undo: vec[i64]
    #: Moves made since setup (``keys[ply]`` is the current key).
    ply: i64
    #: The ply of the search's root: positions up to it are the game before the search.
    root: i64
    #: ``keys`` index of the position after the last null move (0: none).
    barrier: i64
    dirty: vec[i64]
    dirty_count: i64
    #: ``checks[ply]``: whether the side to move at that ply is in check, once
    #: :meth:`in_check` has said (CHECK_UNKNOWN until then; every move resets it).
    checks: vec[i64]
    #: ``occupied[side]``: the squares of that side's pieces, a bitboard (python-chess
    #: squares), kept by every change of :attr:`squares`; move generation walks it.
    occupied: vec[i64]

    def __init__(self, capacity: i64 = CAPACITY) -> None:
        """An empty board (no pieces, White to move); :meth:`from_chess` fills one.
        *capacity* is how many moves it can make beyond its setup."""
        squares = vec[i64]([OFFBOARD] * 120)
        for square in range(64):
            squares[SQ120[square]] = EMPTY
        self.squares = squares
        self.side = WHITE
        self.castling = 0
        self.ep = NO_SQUARE
        self.halfmove = 0
        self.fullmove = 1
        self.key = WHITE_TO_MOVE_KEY
        self.chess960 = False
        self.kings = vec[i64]([0, 0])
        self.counts = vec[i64]([0] * 16)
        self.castle_rook = vec[i64]([NO_SQUARE] * 4)
        self.castle_clear = vec[i64]([ALL_RIGHTS] * 64)
        self.castle_keys = vec[i64]([0] * 16)
        self.keys = vec[i64]([0] * (capacity + 1))
        self.keys[0] = self.key
        self.pawn_key = 0
        self.pawn_keys = vec[i64]([0] * (capacity + 1))
        self.undo = vec[i64]([0] * (capacity * UNDO_SIZE))
        self.ply = 0
        self.root = 0
        self.barrier = 0
        self.dirty = vec[i64]([0] * DIRTY_SIZE)
        self.dirty_count = 0
        self.checks = vec[i64]([CHECK_UNKNOWN] * (capacity + 1))
        self.occupied = vec[i64]([0, 0])

    # ---------------------------------------------------------------- set-up

    @staticmethod
    def from_chess(board: chess.Board, capacity: i64 = CAPACITY) -> Board:
        """The position of *board*, with as much of its game as repetition detection
        can need (the moves since the last capture or pawn move), made on this board
        so that their keys are in :attr:`keys`. The search's root is the last of them.
        *capacity*: moves the search may make beyond it."""
        replay = repetition_window(board)
        start = board.copy(stack=replay).root() if replay else board.copy(stack=False)
        result = Board(capacity + replay)
        result._place(start)
        for move in board.move_stack[len(board.move_stack) - replay:]:
            if move:
                result.make(_code_of(move))
            else:
                result.make_null()
        result.root = result.ply
        return result

    def _place(self, board: chess.Board) -> None:
        self.chess960 = board.chess960
        for square, piece in board.piece_map().items():
            code = piece.piece_type | (0 if piece.color == chess.WHITE else 1) << 3
            self.squares[SQ120[square]] = code
            self.counts[code] += 1
            self.occupied[code >> 3] |= BIT[square]
            if piece.piece_type == KING:
                self.kings[code >> 3] = SQ120[square]
        self.side = WHITE if board.turn == chess.WHITE else BLACK
        rights = board.clean_castling_rights()
        for side in (WHITE, BLACK):
            colour = chess.WHITE if side == WHITE else chess.BLACK
            king = board.king(colour)
            for rook in chess.scan_forward(rights & board.occupied_co[colour] & chess.BB_BACKRANKS):
                right = side * 2 + (0 if king is not None and rook > king else 1)
                self.castle_rook[right] = rook
                self.castling |= 1 << right
                self.castle_clear[rook] &= ~(1 << right)
                if king is not None:
                    self.castle_clear[king] &= ~(3 << (side * 2))
        for mask in range(16):
            key = 0
            for right in range(4):
                if mask >> right & 1:
                    key ^= CASTLE_SQUARE_KEY[self.castle_rook[right]]
            self.castle_keys[mask] = key
        self.halfmove = board.halfmove_clock
        self.fullmove = board.fullmove_number
        self.ep = NO_SQUARE
        if board.ep_square is not None and self._ep_capturable(board.ep_square, self.side):
            self.ep = board.ep_square
        self.key = self.compute_key()
        self.keys[0] = self.key
        self.pawn_key = self.compute_pawn_key()
        self.pawn_keys[0] = self.pawn_key
        self.checks[0] = CHECK_UNKNOWN

    def _ep_capturable(self, ep: i64, side: i64) -> bool:
        """Whether a pawn of *side* stands ready to take en passant on *ep*."""
        target = SQ120[ep]
        pawn = PAWN | side << 3
        behind = target - NORTH if side == WHITE else target + NORTH
        return self.squares[behind - 1] == pawn or self.squares[behind + 1] == pawn

    def _placement_key(self, pawns_only: bool) -> i64:
        """The pieces' part of the key (the pawns' alone with *pawns_only*), from
        scratch."""
        key: i64 = 0
        for square in range(64):
            piece = self.squares[SQ120[square]]
            if piece != EMPTY and (not pawns_only or piece & 7 == PAWN):
                key ^= PIECE_KEY[piece * 64 + square]
        return key

    def compute_key(self) -> i64:
        """The key from scratch (slow: for setting up and for tests)."""
        key = self._placement_key(False)
        key ^= self.castle_keys[self.castling]
        if self.ep != NO_SQUARE:
            key ^= EP_FILE_KEY[self.ep & 7]
        if self.side == WHITE:
            key ^= WHITE_TO_MOVE_KEY
        return key

    def compute_pawn_key(self) -> i64:
        """The pawn key from scratch (slow: for setting up and for tests)."""
        return self._placement_key(True)

    def copy(self) -> Board:
        """An independent board in the same state, with the same history."""
        other = Board(0)
        other.squares = vec[i64](self.squares)
        other.side = self.side
        other.castling = self.castling
        other.ep = self.ep
        other.halfmove = self.halfmove
        other.fullmove = self.fullmove
        other.key = self.key
        other.chess960 = self.chess960
        other.kings = vec[i64](self.kings)
        other.counts = vec[i64](self.counts)
        other.castle_rook = vec[i64](self.castle_rook)
        other.castle_clear = vec[i64](self.castle_clear)
        other.castle_keys = vec[i64](self.castle_keys)
        other.keys = vec[i64](self.keys)
        other.pawn_key = self.pawn_key
        other.pawn_keys = vec[i64](self.pawn_keys)
        other.undo = vec[i64](self.undo)
        other.ply = self.ply
        other.root = self.root
        other.barrier = self.barrier
        other.dirty = vec[i64](self.dirty)
        other.dirty_count = self.dirty_count
        other.checks = vec[i64](self.checks)
        other.occupied = vec[i64](self.occupied)
        return other

    def to_chess(self) -> chess.Board:
        """This position as a :class:`chess.Board` (without the game's moves)."""
        board = chess.Board(None, chess960=self.chess960)
        for square in range(64):
            piece = self.squares[SQ120[square]]
            if piece != EMPTY:
                board.set_piece_at(square, chess.Piece(piece & 7, piece >> 3 == WHITE))
        board.turn = self.side == WHITE
        rooks = 0
        for right in range(4):
            if self.castling >> right & 1:
                rooks |= chess.BB_SQUARES[self.castle_rook[right]]
        board.castling_rights = rooks
        board.ep_square = self.ep if self.ep != NO_SQUARE else None
        board.halfmove_clock = self.halfmove
        board.fullmove_number = self.fullmove
        return board

    def piece_at(self, square: i64) -> i64:
        """The piece code on *square* (python-chess numbering): 0 for none."""
        return self.squares[SQ120[square]]

    # ---------------------------------------------------------------- attacks

    def attacked(self, target: i64, by: i64) -> bool:
        """Whether side *by* attacks the mailbox square *target* (pins ignored)."""
        squares = self.squares
        mark = by << 3
        if by == WHITE:
            if squares[target - 9] == PAWN or squares[target - 11] == PAWN:
                return True
        elif squares[target + 9] == PAWN | 8 or squares[target + 11] == PAWN | 8:
            return True
        knight = KNIGHT | mark
        king = KING | mark
        for i in range(8):
            if squares[target + KNIGHT_STEPS[i]] == knight or squares[target + KING_STEPS[i]] == king:
                return True
        queen = QUEEN | mark
        rook = ROOK | mark
        bishop = BISHOP | mark
        # A ray is walked only when the side has a piece that moves along it (the
        # piece counts: the endgames' many tests end here).
        counts = self.counts
        straight = counts[rook] + counts[queen] != 0
        diagonal = counts[bishop] + counts[queen] != 0
        for i in range(4):
            if straight:
                step = ROOK_STEPS[i]
                square = target + step
                piece = squares[square]
                while piece == EMPTY:
                    square += step
                    piece = squares[square]
                if piece == rook or piece == queen:
                    return True
            if diagonal:
                step = BISHOP_STEPS[i]
                square = target + step
                piece = squares[square]
                while piece == EMPTY:
                    square += step
                    piece = squares[square]
                if piece == bishop or piece == queen:
                    return True
        return False

    def in_check(self) -> bool:
        """Whether the side to move is in check (kept for the ply: the search asks
        at every node, move generation and :meth:`was_legal` again)."""
        known = self.checks[self.ply]
        if known != CHECK_UNKNOWN:
            return known == IN_CHECK
        check = self.attacked(self.kings[self.side], self.side ^ 1)
        self.checks[self.ply] = IN_CHECK if check else NOT_IN_CHECK
        return check

    def gives_check(self, move: i64) -> bool:
        """Whether pseudo-legal *move* gives check, without making it: the moved
        piece's attack on the king from its target square, or a slider's attack
        uncovered through the square it left. Castling, en passant and promotions
        (rare) are made and unmade."""
        squares = self.squares
        frm = SQ120[move & 63]
        to = SQ120[move >> 6 & 63]
        piece = squares[frm]
        kind = piece & 7
        if (move >> 12 != 0 or self.is_castle(move)
                or (kind == PAWN and squares[to] == EMPTY and (move >> 6 & 63) == self.ep)):
            self.make(move)
            check = self.in_check()
            self.unmake()
            return check
        us = self.side
        king = self.kings[us ^ 1]
        if kind == PAWN:
            ahead = to + NORTH if us == WHITE else to - NORTH
            if king == ahead - 1 or king == ahead + 1:
                return True
        elif kind == KNIGHT:
            for i in range(8):
                if to + KNIGHT_STEPS[i] == king:
                    return True
        elif kind != KING:
            step = LINE_STEP[king - to + 77]
            diagonal = step == 9 or step == -9 or step == 11 or step == -11
            if step != 0 and (kind == QUEEN or (kind == BISHOP) == diagonal):
                square = to + step
                while square != king and (squares[square] == EMPTY or square == frm):
                    square += step
                if square == king:
                    return True
        # Discovered: the square left was the only piece between the king and a slider.
        step = LINE_STEP[frm - king + 77]
        if step == 0 or LINE_STEP[to - king + 77] == step:
            return False
        square = king + step
        while squares[square] == EMPTY:
            square += step
        if square != frm:
            return False
        square += step
        while squares[square] == EMPTY:
            square += step
        other = squares[square]
        mark = us << 3
        if other == QUEEN | mark:
            return True
        if step == 1 or step == -1 or step == NORTH or step == -NORTH:
            return other == ROOK | mark
        return other == BISHOP | mark

    def was_legal(self) -> bool:
        """After :meth:`make`: whether the move left the mover's king safe. When the
        mover is known not to have been in check before and the move is an ordinary
        one by a piece other than the king, only the ray from the king through the
        square it left can have opened: that ray alone is looked at."""
        ply = self.ply
        us = self.side ^ 1
        king = self.kings[us]
        base = (ply - 1) * UNDO_SIZE
        move = self.undo[base + U_MOVE]
        if (self.checks[ply - 1] != NOT_IN_CHECK or self.undo[base + U_KIND] != K_NORMAL
                or king == SQ120[move >> 6 & 63]):
            return not self.attacked(king, self.side)
        step = LINE_STEP[SQ120[move & 63] - king + 77]
        if step == 0:
            return True
        squares = self.squares
        square = king + step
        piece = squares[square]
        while piece == EMPTY:
            square += step
            piece = squares[square]
        mark = self.side << 3
        if piece == QUEEN | mark:
            return False
        if step == 1 or step == -1 or step == NORTH or step == -NORTH:
            return piece != ROOK | mark
        return piece != BISHOP | mark

    # ---------------------------------------------------------------- make/unmake

    def _remove(self, square: i64, piece: i64) -> None:
        self.squares[SQ120[square]] = EMPTY
        piece_key = PIECE_KEY[piece * 64 + square]
        self.key ^= piece_key
        if piece & 7 == PAWN:
            self.pawn_key ^= piece_key
        self.counts[piece] -= 1
        self.occupied[piece >> 3] &= ~BIT[square]

    def _put(self, square: i64, piece: i64) -> None:
        self.squares[SQ120[square]] = piece
        piece_key = PIECE_KEY[piece * 64 + square]
        self.key ^= piece_key
        if piece & 7 == PAWN:
            self.pawn_key ^= piece_key
        self.counts[piece] += 1
        self.occupied[piece >> 3] |= BIT[square]

    def _dirty(self, piece: i64, frm: i64, to: i64) -> None:
        n = self.dirty_count * 3
        self.dirty[n] = piece
        self.dirty[n + 1] = frm
        self.dirty[n + 2] = to
        self.dirty_count += 1

    def is_castle(self, move: i64) -> bool:
        """Whether *move*, by the side to move, is castling (king takes own rook, or
        outside Chess960 the king two squares along its rank)."""
        frm = move & 63
        to = move >> 6 & 63
        piece = self.squares[SQ120[frm]]
        if piece & 7 != KING:
            return False
        if self.squares[SQ120[to]] == ROOK | (piece & 8):
            return True
        return not self.chess960 and (to - frm == 2 or frm - to == 2)

    def _begin(self, move: i64) -> i64:
        """What every move and null move does first: save the state unmake restores
        (returning where), take the side to move and the en passant square out of
        the key, count the halfmove."""
        base = self.ply * UNDO_SIZE
        undo = self.undo
        undo[base + U_MOVE] = move
        undo[base + U_CASTLING] = self.castling
        undo[base + U_EP] = self.ep
        undo[base + U_HALFMOVE] = self.halfmove
        undo[base + U_BARRIER] = self.barrier
        self.dirty_count = 0
        if self.ep != NO_SQUARE:
            self.key ^= EP_FILE_KEY[self.ep & 7]
        self.key ^= WHITE_TO_MOVE_KEY
        self.ep = NO_SQUARE
        self.halfmove += 1
        return base

    def make(self, move: i64) -> None:
        """Make the pseudo-legal *move* (its code) for the side to move."""
        frm = move & 63
        to = move >> 6 & 63
        promotion = move >> 12 & 7
        squares = self.squares
        us = self.side
        piece = squares[SQ120[frm]]
        base = self._begin(move)
        undo = self.undo
        rights = self.castling
        if piece & 7 == KING and self.is_castle(move):
            right = us * 2 + (0 if to > frm else 1)
            rook_from = self.castle_rook[right]
            rank = frm & 56
            king_to = rank + (6 if to > frm else 2)
            rook_to = rank + (5 if to > frm else 3)
            rook = ROOK | us << 3
            self._remove(frm, piece)
            self._remove(rook_from, rook)
            self._put(king_to, piece)
            self._put(rook_to, rook)
            self.kings[us] = SQ120[king_to]
            self._dirty(piece, frm, king_to)
            self._dirty(rook, rook_from, rook_to)
            rights &= ~(3 << (us * 2))
            undo[base + U_KIND] = K_CASTLE
            undo[base + U_CAPTURED] = rook_from
        else:
            captured = squares[SQ120[to]]
            kind = K_NORMAL
            if captured != EMPTY:
                self._remove(to, captured)
                self._dirty(captured, to, NO_SQUARE)
                self.halfmove = 0
            elif piece & 7 == PAWN and to == undo[base + U_EP]:
                kind = K_EN_PASSANT
                victim_square = to - 8 if us == WHITE else to + 8
                victim = PAWN | (us ^ 1) << 3
                self._remove(victim_square, victim)
                self._dirty(victim, victim_square, NO_SQUARE)
            self._remove(frm, piece)
            if promotion != 0:
                arrived = promotion | us << 3
                self._dirty(piece, frm, NO_SQUARE)
                self._dirty(arrived, NO_SQUARE, to)
            else:
                arrived = piece
                self._dirty(piece, frm, to)
            self._put(to, arrived)
            if piece & 7 == PAWN:
                self.halfmove = 0
                if (to - frm == 16 or frm - to == 16) and self._ep_capturable((frm + to) >> 1, us ^ 1):
                    self.ep = (frm + to) >> 1
            elif piece & 7 == KING:
                self.kings[us] = SQ120[to]
            rights &= self.castle_clear[frm] & self.castle_clear[to]
            undo[base + U_KIND] = kind
            undo[base + U_CAPTURED] = captured
        if rights != self.castling:
            self.key ^= self.castle_keys[self.castling] ^ self.castle_keys[rights]
            self.castling = rights
        if self.ep != NO_SQUARE:
            self.key ^= EP_FILE_KEY[self.ep & 7]
        if us == BLACK:
            self.fullmove += 1
        self.side = us ^ 1
        self.ply += 1
        self.keys[self.ply] = self.key
        self.pawn_keys[self.ply] = self.pawn_key
        self.checks[self.ply] = CHECK_UNKNOWN

    def make_null(self) -> None:
        """Pass the move (null-move pruning): the side to move and the en passant
        right change. Positions before a null move never count as repetitions of
        positions after it."""
        base = self._begin(0)
        self.undo[base + U_KIND] = K_NULL
        if self.side == BLACK:
            self.fullmove += 1
        self.side ^= 1
        self.ply += 1
        self.keys[self.ply] = self.key
        self.pawn_keys[self.ply] = self.pawn_key
        self.checks[self.ply] = CHECK_UNKNOWN
        self.barrier = self.ply

    def unmake(self) -> None:
        """Take back the last :meth:`make` or :meth:`make_null`."""
        self.ply -= 1
        base = self.ply * UNDO_SIZE
        undo = self.undo
        us = self.side ^ 1
        self.side = us
        if us == BLACK:
            self.fullmove -= 1
        kind = undo[base + U_KIND]
        move = undo[base + U_MOVE]
        frm = move & 63
        to = move >> 6 & 63
        squares = self.squares
        if kind == K_CASTLE:
            rank = frm & 56
            king_to = rank + (6 if to > frm else 2)
            rook_to = rank + (5 if to > frm else 3)
            king = KING | us << 3
            rook = ROOK | us << 3
            squares[SQ120[king_to]] = EMPTY
            squares[SQ120[rook_to]] = EMPTY
            squares[SQ120[undo[base + U_CAPTURED]]] = rook
            squares[SQ120[frm]] = king
            occupied = self.occupied
            occupied[us] = (occupied[us] & ~(BIT[king_to] | BIT[rook_to])) | BIT[undo[base + U_CAPTURED]] | BIT[frm]
            self.kings[us] = SQ120[frm]
        elif kind != K_NULL:
            arrived = squares[SQ120[to]]
            piece = arrived
            if move >> 12 != 0:
                piece = PAWN | us << 3
                self.counts[arrived] -= 1
                self.counts[piece] += 1
            squares[SQ120[frm]] = piece
            captured = undo[base + U_CAPTURED]
            squares[SQ120[to]] = captured
            occupied = self.occupied
            occupied[us] = (occupied[us] & ~BIT[to]) | BIT[frm]
            if captured != EMPTY:
                self.counts[captured] += 1
                occupied[us ^ 1] |= BIT[to]
            elif kind == K_EN_PASSANT:
                victim = PAWN | (us ^ 1) << 3
                victim_square = to - 8 if us == WHITE else to + 8
                squares[SQ120[victim_square]] = victim
                self.counts[victim] += 1
                occupied[us ^ 1] |= BIT[victim_square]
            if piece & 7 == KING:
                self.kings[us] = SQ120[frm]
        self.castling = undo[base + U_CASTLING]
        self.ep = undo[base + U_EP]
        self.halfmove = undo[base + U_HALFMOVE]
        self.barrier = undo[base + U_BARRIER]
        self.key = self.keys[self.ply]
        self.pawn_key = self.pawn_keys[self.ply]
        self.dirty_count = 0

    # ---------------------------------------------------------------- generation

    def gen_noisy(self, out: vec[i64], start: i64) -> i64:
        """Write the captures (en passant included) and queen promotions of the side
        to move into *out* from index *start*; return the index after the last."""
        return self._generate(out, start, True)

    def gen_quiets(self, out: vec[i64], start: i64) -> i64:
        """Write the other pseudo-legal moves (quiet moves, under-promotions,
        castling) into *out* from *start*; return the index after the last."""
        return self._generate(out, start, False)

    def gen_all(self, out: vec[i64], start: i64) -> i64:
        """Every pseudo-legal move: :meth:`gen_noisy`'s, then :meth:`gen_quiets`'."""
        return self._generate(out, self._generate(out, start, True), False)

    def _generate(self, out: vec[i64], n: i64, noisy: bool) -> i64:
        us = self.side
        own = self.occupied[us]
        # The side's pieces in square order (a1, b1, ..., h8), as a scan of the board
        # would meet them: the low half of the bitboard, then the high half.
        for half in range(2):
            bits = (own >> (32 * half)) & M32
            while bits != 0:
                low = bits & -bits
                bits ^= low
                n = self._piece_moves(out, n, 32 * half + bit_index(low), noisy)
        if not noisy and self.castling >> (us * 2) & 3 != 0:
            n = self._castling_moves(out, n)
        return n

    def _piece_moves(self, out: vec[i64], n: i64, origin: i64, noisy: bool) -> i64:
        """The moves of the piece on *origin* (a python-chess square) of the side to
        move, the noisy or the quiet ones, written from *n*; the index after them."""
        squares = self.squares
        them = self.side ^ 1
        frm = SQ120[origin]
        kind = squares[frm] & 7
        if kind == PAWN:
            n = self._pawn_moves(out, n, frm, noisy)
        elif kind == KNIGHT or kind == KING:
            for i in range(8):
                to = frm + (KNIGHT_STEPS[i] if kind == KNIGHT else KING_STEPS[i])
                target = squares[to]
                if target == EMPTY:
                    if not noisy:
                        out[n] = origin | SQ64[to] << 6
                        n += 1
                elif noisy and target >> 3 == them:
                    out[n] = origin | SQ64[to] << 6
                    n += 1
        else:
            for i in range(SLIDES_FROM[kind], SLIDES_TO[kind]):
                step = SLIDER_STEPS[i]
                to = frm + step
                target = squares[to]
                while target == EMPTY:
                    if not noisy:
                        out[n] = origin | SQ64[to] << 6
                        n += 1
                    to += step
                    target = squares[to]
                if noisy and target >> 3 == them:
                    out[n] = origin | SQ64[to] << 6
                    n += 1
        return n

    def _pawn_moves(self, out: vec[i64], n: i64, frm: i64, noisy: bool) -> i64:
        squares = self.squares
        us = self.side
        forward = NORTH if us == WHITE else SOUTH
        origin = SQ64[frm]
        rank = origin >> 3
        last = rank == (6 if us == WHITE else 1)
        ahead = frm + forward
        if squares[ahead] == EMPTY:
            code = origin | SQ64[ahead] << 6
            if last:
                n = _promotions(out, n, code, noisy)
            elif not noisy:
                out[n] = code
                n += 1
                if rank == (1 if us == WHITE else 6) and squares[ahead + forward] == EMPTY:
                    out[n] = origin | SQ64[ahead + forward] << 6
                    n += 1
        for to in range(ahead - 1, ahead + 2, 2):
            target = squares[to]
            if target != EMPTY and target >> 3 == us ^ 1:
                code = origin | SQ64[to] << 6
                if last:
                    n = _promotions(out, n, code, noisy)
                elif noisy:
                    out[n] = code
                    n += 1
            elif noisy and target == EMPTY and SQ64[to] == self.ep:
                out[n] = origin | SQ64[to] << 6
                n += 1
        return n

    def _castling_moves(self, out: vec[i64], n: i64) -> i64:
        us = self.side
        if self.in_check():
            return n
        for right in range(us * 2, us * 2 + 2):
            if self.castling >> right & 1 and self.can_castle(right):
                king = SQ64[self.kings[us]]
                rook = self.castle_rook[right]
                if self.chess960:
                    to = rook
                else:
                    to = king + (2 if rook > king else -2)
                out[n] = king | to << 6
                n += 1
        return n

    def can_castle(self, right: i64) -> bool:
        """Whether the side to move, holding castling right *right* and not in check,
        may castle with it now: every square between the king, the rook and their
        destinations is empty (but for those two) and no square the king crosses is
        attacked. Whether the king stands attacked on arrival is left to the
        legality test after the move, as for every move."""
        us = self.side
        king = SQ64[self.kings[us]]
        rook = self.castle_rook[right]
        rank = king & 56
        king_to = rank + (6 if rook > king else 2)
        rook_to = rank + (5 if rook > king else 3)
        low = min(min(king, rook), min(king_to, rook_to))
        high = max(max(king, rook), max(king_to, rook_to))
        squares = self.squares
        for square in range(low, high + 1):
            if square != king and square != rook and squares[SQ120[square]] != EMPTY:
                return False
        step: i64 = 1 if king_to > king else -1
        square = king
        while square != king_to:
            square += step
            if square != king_to and self.attacked(SQ120[square], us ^ 1):
                return False
        return True

    def is_pseudo_legal(self, move: i64) -> bool:
        """Whether *move* (any 15-bit code, for example a table move from another
        position) is one that :meth:`gen_all` would give here."""
        frm = move & 63
        to = move >> 6 & 63
        promotion = move >> 12 & 7
        if move < 0 or move >> 15 != 0 or frm == to:
            return False
        squares = self.squares
        us = self.side
        piece = squares[SQ120[frm]]
        if piece == EMPTY or piece >> 3 != us:
            return False
        kind = piece & 7
        target = squares[SQ120[to]]
        if kind == KING and self.is_castle(move):
            if promotion != 0 or self.in_check():
                return False
            right = us * 2 + (0 if to > frm else 1)
            if not self.castling >> right & 1:
                return False
            rook = self.castle_rook[right]
            if self.chess960 and to != rook:
                return False
            if not self.chess960 and to != frm + (2 if rook > frm else -2):
                return False
            return self.can_castle(right)
        if target != EMPTY and (target >> 3 == us or target & 7 == KING):
            return False
        origin = SQ120[frm]
        delta = SQ120[to] - origin
        if kind == PAWN:
            forward = NORTH if us == WHITE else SOUTH
            last = to >> 3 == (7 if us == WHITE else 0)
            if last != (promotion != 0) or (last and (promotion < KNIGHT or promotion > QUEEN)):
                return False
            if delta == forward:
                return target == EMPTY
            if delta == 2 * forward:
                return frm >> 3 == (1 if us == WHITE else 6) and target == EMPTY and squares[origin + forward] == EMPTY
            if delta == forward - 1 or delta == forward + 1:
                return target != EMPTY or (to == self.ep and not last)
            return False
        if promotion != 0:
            return False
        if kind == KNIGHT or kind == KING:
            for i in range(8):
                if delta == (KNIGHT_STEPS[i] if kind == KNIGHT else KING_STEPS[i]):
                    return True
            return False
        if delta < -77 or delta > 77:
            return False
        step = LINE_STEP[delta + 77]
        if step == 0:
            return False
        diagonal = step == 9 or step == 11 or step == -9 or step == -11
        if (kind == BISHOP and not diagonal) or (kind == ROOK and diagonal):
            return False
        square = origin + step
        end = origin + delta
        while square != end:
            if squares[square] != EMPTY:
                return False
            square += step
        return True

    # ---------------------------------------------------------------- draws

    def is_repetition(self) -> bool:
        """True when the position repeats one that occurred after the root, or
        occurs for the third time counting the game before the root."""
        keys = self.keys
        last = self.ply
        key = keys[last]
        stop = max(max(last - self.halfmove, self.barrier), 0)
        seen: i64 = 0
        index = last - 4
        while index >= stop:
            if keys[index] == key:
                if index > self.root:
                    return True
                seen += 1
                if seen == 2:
                    return True
            index -= 2
        return False

    def is_insufficient_material(self) -> bool:
        """Neither side can mate, by python-chess's rule: no pawns, rooks or queens;
        a side with a knight has nothing else and faces at most a queen; a side with
        bishops has them all on one colour of square and there are no knights."""
        counts = self.counts
        for side in range(2):
            mark = side << 3
            if counts[PAWN | mark] != 0 or counts[ROOK | mark] != 0 or counts[QUEEN | mark] != 0:
                return False
        for side in range(2):
            mark = side << 3
            other = (side ^ 1) << 3
            knights = counts[KNIGHT | mark]
            bishops = counts[BISHOP | mark]
            if knights != 0:
                if knights + bishops > 1:
                    return False
                if counts[KNIGHT | other] + counts[BISHOP | other] != 0:
                    return False
            elif bishops != 0:
                if counts[KNIGHT] + counts[KNIGHT | 8] != 0:
                    return False
                colours: i64 = 0
                for square in range(64):
                    if self.squares[SQ120[square]] & 7 == BISHOP:
                        colours |= 1 << (((square >> 3) + square) & 1)
                if colours == 3:
                    return False
        return True


def _promotions(out: vec[i64], n: i64, code: i64, noisy: bool) -> i64:
    """Write the promotions of the pawn move *code* for one stage (the queen's noisy,
    the others quiet, as Stockfish splits them); return the index after them."""
    if noisy:
        out[n] = code | QUEEN << 12
        return n + 1
    out[n] = code | KNIGHT << 12
    out[n + 1] = code | ROOK << 12
    out[n + 2] = code | BISHOP << 12
    return n + 3


def _code_of(move: chess.Move) -> i64:
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def _legal_moves(board: Board, out: vec[i64], start: i64) -> i64:
    """Compact the legal moves of *board* into *out* from *start*; return the end."""
    end = board.gen_all(out, start)
    n = start
    for i in range(start, end):
        move = out[i]
        board.make(move)
        if board.was_legal():
            out[n] = move
            n += 1
        board.unmake()
    return n


def _perft(board: Board, depth: i64, out: vec[i64], start: i64) -> i64:
    end = _legal_moves(board, out, start)
    if depth == 1:
        return end - start
    total: i64 = 0
    for i in range(start, end):
        board.make(out[i])
        total += _perft(board, depth - 1, out, end)
        board.unmake()
    return total


def perft(board: Board, depth: i64) -> i64:
    """The number of leaves of the legal move tree *depth* plies deep."""
    if depth <= 0:
        return 1
    out = vec[i64]([0] * (MAX_MOVES * (depth + 1)))
    return _perft(board, depth, out, 0)


def legal_codes(board: Board) -> list[int]:
    """The legal moves of *board*, as codes, in the board's generation order."""
    out = vec[i64]([0] * MAX_MOVES)
    end = _legal_moves(board, out, 0)
    return [int(out[i]) for i in range(end)]


def divide(board: Board, depth: i64) -> list[tuple[i64, i64]]:
    """Each legal move with the leaves under it (perft of *depth* split by move)."""
    out = vec[i64]([0] * (MAX_MOVES * (depth + 1)))
    end = _legal_moves(board, out, 0)
    split: list[tuple[i64, i64]] = []
    for i in range(end):
        board.make(out[i])
        split.append((out[i], _perft(board, depth - 1, out, end) if depth > 1 else 1))
        board.unmake()
    return split
