"""The classical evaluation on the engine's own board (:mod:`blitzaco.board`),
written for mypyc: a tapered evaluation of material and piece-square tables plus the
classical terms.

Scores are centipawns. Every weight is a midgame/endgame pair from
:class:`~blitzaco.config.EvalConfig`; the game phase (knights and bishops 1, rooks 2,
queens 4, 24 = the opening) blends the two. The terms:

* material and piece-square tables, kept up to date incrementally (a node pays
  nothing for them);
* pawn structure (doubled, isolated, backward, supported, phalanx, passed pawns by
  rank, with a free path and king distances), cached by pawn placement;
* pieces: bishop pair, mobility on safe squares, rooks on open and semi-open files
  and the seventh rank, knight and bishop outposts;
* king safety: pawn shield, open files next to the king, and the weight of the
  enemy pieces attacking the squares around it, scaled by how many attack;
* threats: pieces attacked by pawns, rooks and queens by minor pieces, queens by
  rooks, and pieces attacked and not defended;
* tempo for the side to move, and a scale factor on the endgame score for drawish
  endgames (opposite-coloured bishops; the side ahead without pawns and little more
  than a minor piece ahead).

All terms are computed for White and for Black by the same code on mirrored squares,
so a position and its colour mirror get exactly opposite scores. With
:attr:`Classical.tracing` on, the same code records every term for both colours and
phases and every feature count (:func:`blitzaco.trace.classical_trace`): the ``eval``
command prints the former, the weight tuner fits weights to the latter.
``tests/data/eval_scores.csv`` holds recorded scores of 200 positions, written when
the python-chess evaluator this one was ported from and held against left the package.

Bitboards are signed 64-bit integers here (``i64``; h8, bit 63, is the sign bit), so
that the pure and the compiled build compute the same numbers: a left shift never
carries a bit beyond bit 63 (:func:`_shl` places the bit that lands on 63 by hand)
and a right shift is made logical by a mask (:func:`_shr`), as python-chess's
unsigned bitboards shift. Pieces are visited through the mailbox, never by bit scans.

:class:`Classical` keeps the material and piece-square sums and the game phase up to
date itself from what each move changed (``Board.dirty``): call :meth:`Classical.make`
after ``Board.make``/``make_null`` and :meth:`Classical.unmake` after
``Board.unmake``. The other terms are computed when a score is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, final

import chess
from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import (
    BISHOP,
    BIT,
    CAPACITY,
    EMPTY,
    INTERPRETED,
    KING,
    KNIGHT,
    M32,
    PAWN,
    QUEEN,
    ROOK,
    SLIDER_STEPS,
    SLIDES_FROM,
    SLIDES_TO,
    SQ64,
    SQ120,
    WHITE,
    Board,
    bit_index,
)
from blitzaco.config import EvalConfig

if INTERPRETED and not TYPE_CHECKING:  # lists stand in for librt's vec (see board.py)
    from blitzaco.board import vec  # noqa: F811

__all__ = ["Classical", "TERM_NAMES", "FULL_PHASE", "SCALE_NORMAL"]

#: Phase weight by piece type: knight and bishop 1, rook 2, queen 4, so that the
#: starting position has phase FULL_PHASE.
PHASE: Final = vec[i64]([0, 0, 1, 1, 2, 4, 0, 0])
FULL_PHASE: Final = 24
#: The endgame score is multiplied by scale / SCALE_NORMAL.
SCALE_NORMAL: Final = 64
#: The rows of the trace (and of the ``eval`` table), in order.
TERM_NAMES: Final = (
    "Material", "PST", "Pawns", "Passed", "Knights", "Bishops", "Rooks", "Queens", "Mobility",
    "King safety", "Threats", "Tempo",
)
#: Piece names by type, as the features name them.
PIECE_NAMES: Final = ("", "pawn", "knight", "bishop", "rook", "queen", "king")
#: The mobility features by piece type (knight 2 ... queen 5).
MOBILITY_NAMES: Final = ("", "", "pieces.mobility_knight", "pieces.mobility_bishop", "pieces.mobility_rook",
                         "pieces.mobility_queen")
T_MATERIAL: Final = 0
T_PST: Final = 1
T_PAWNS: Final = 2
T_PASSED: Final = 3
T_KNIGHTS: Final = 4
T_BISHOPS: Final = 5
T_ROOKS: Final = 6
T_QUEENS: Final = 7
T_MOBILITY: Final = 8
T_KING: Final = 9
T_THREATS: Final = 10
T_TEMPO: Final = 11

# ------------------------------------------------------------------ bitboards

#: The sign bit, h8's bit.
SIGN: Final[i64] = -9223372036854775807 - 1


def _signed(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _table(values: list[int]) -> vec[i64]:
    return vec[i64]([_signed(v) for v in values])


#: ``LOW[n]``: the bits that a left shift by n keeps below the sign bit.
LOW: Final = vec[i64]([(1 << (63 - n)) - 1 if n < 64 else 0 for n in range(64)])
#: ``SHR[n]``: the bits a logical right shift by n can leave set.
SHR: Final = vec[i64]([-1] + [(1 << (64 - n)) - 1 for n in range(1, 64)])
FILE_A: Final[i64] = 0x0101010101010101
NOT_A: Final[i64] = ~0x0101010101010101
NOT_H: Final[i64] = ~_signed(0x8080808080808080)
OUTPOST_RANKS: Final[i64] = 0x0000FFFFFF000000
DARK: Final = _signed(chess.BB_DARK_SQUARES)
KNIGHT_ATT: Final = _table(list(chess.BB_KNIGHT_ATTACKS))
KING_ATT: Final = _table(list(chess.BB_KING_ATTACKS))
RANK_2: Final[i64] = 0x000000000000FF00
RANK_7: Final[i64] = 0x00FF000000000000
RANK_1: Final[i64] = 0x00000000000000FF
RANK_8: Final = _signed(chess.BB_RANK_8)
M8: Final[i64] = 0x00FF00FF00FF00FF
M16: Final[i64] = 0x0000FFFF0000FFFF


def _shl(x: i64, n: i64) -> i64:
    """``x << n`` truncated to 64 bits, as python-chess's bitboards shift."""
    result = (x & LOW[n]) << n
    if (x >> (63 - n)) & 1 != 0:
        result |= SIGN
    return result


def _shr(x: i64, n: i64) -> i64:
    """``x >> n`` with zeros shifted in, as for an unsigned bitboard."""
    return (x >> n) & SHR[n]


def _count32(v: i64) -> i64:
    v = v - ((v >> 1) & 0x55555555)
    v = (v & 0x33333333) + ((v >> 2) & 0x33333333)
    v = (v + (v >> 4)) & 0x0F0F0F0F
    return ((v * 0x01010101) & 0xFFFFFFFF) >> 24


def fifty_move_scaled(score: i64, halfmove: i64, plies: i64) -> i64:
    """*score* times (plies - halfmove) / plies (``[eval.nn] fifty_move``; 0 at and
    past *plies*), rounded toward 0 so that a position and its colour mirror still
    score opposite. The python-chess search calls it too."""
    left = plies - halfmove
    if left <= 0:
        return 0
    if score >= 0:
        return score * left // plies
    return -(-score * left // plies)


def popcount(x: i64) -> i64:
    """The number of squares of a bitboard."""
    return _count32(x & M32) + _count32((x >> 32) & M32)


def north_fill(bb: i64) -> i64:
    bb |= _shl(bb, 8)
    bb |= _shl(bb, 16)
    return bb | _shl(bb, 32)


def south_fill(bb: i64) -> i64:
    bb |= _shr(bb, 8)
    bb |= _shr(bb, 16)
    return bb | _shr(bb, 32)


def sideways(bb: i64) -> i64:
    return _shr(bb & NOT_A, 1) | _shl(bb & NOT_H, 1)


def white_pawn_attacks(bb: i64) -> i64:
    return _shl(bb & NOT_A, 7) | _shl(bb & NOT_H, 9)


def black_pawn_attacks(bb: i64) -> i64:
    return _shr(bb & NOT_A, 9) | _shr(bb & NOT_H, 7)


def flip(bb: i64) -> i64:
    """The bitboard mirrored vertically (rank 1 <-> rank 8)."""
    bb = (_shr(bb, 8) & M8) | _shl(bb & M8, 8)
    bb = (_shr(bb, 16) & M16) | _shl(bb & M16, 16)
    return _shr(bb, 32) | _shl(bb & M32, 32)


def _shield_table() -> vec[i64]:
    """``SHIELD[side * 64 + square]``: the king's file and its neighbours, one and two
    ranks ahead."""
    table = vec[i64]([0] * 128)
    for side in range(2):
        for square in range(64):
            one = _shl(BIT[square], 8) if side == WHITE else _shr(BIT[square], 8)
            two = _shl(one, 8) if side == WHITE else _shr(one, 8)
            table[side * 64 + square] = sideways(one) | one | sideways(two) | two
    return table


def _front_table() -> vec[i64]:
    """``FRONT[side * 64 + square]``: the squares ahead of a pawn on its file."""
    table = vec[i64]([0] * 128)
    for square in range(64):
        table[square] = north_fill(_shl(BIT[square], 8))
        table[64 + square] = south_fill(_shr(BIT[square], 8))
    return table


SHIELD: Final = _shield_table()
FRONT: Final = _front_table()
#: ``KING_FILES[square]``: the king's file and its neighbours as first-rank squares.
KING_FILES: Final = _table([
    sum(1 << f for f in range(max(0, sq % 8 - 1), min(7, sq % 8 + 1) + 1)) for sq in range(64)
])
#: Mailbox square -> its bit (0 on the border).
BIT120: Final = vec[i64]([0] * 120)
for _square in range(64):
    BIT120[SQ120[_square]] = BIT[_square]
#: Entries of the score cache (by position key) and of the pawn cache (by the two
#: sides' pawns), each emptied as a whole when it is replaced (see Classical).
EVAL_CACHE: Final = 1 << 16
PAWN_CACHE: Final = 1 << 14
#: A score cache entry is one word, so that a look-up reads one line of memory: the
#: score plus 2^23 in its low 24 bits, the key's upper 40 bits above them (with the
#: slot's 16, 56 of the key's bits checked); 0 is an empty slot. A score outside
#: +-2^23 is not cached.
_SCORE_BITS: Final = 24
_SCORE_BIAS: Final = 1 << (_SCORE_BITS - 1)
_SCORE_MASK: Final = (1 << _SCORE_BITS) - 1
_KEY_BITS: Final = -(1 << _SCORE_BITS)
#: What :meth:`Classical._cached` returns for a key not in the cache.
MISS: Final = -(1 << 40)


def distance(a: i64, b: i64) -> i64:
    """Chebyshev distance between two squares."""
    files = (a & 7) - (b & 7)
    ranks = (a >> 3) - (b >> 3)
    files = -files if files < 0 else files
    ranks = -ranks if ranks < 0 else ranks
    return files if files > ranks else ranks


def _pairs(values: tuple[tuple[int, int], ...], index: int) -> vec[i64]:
    return vec[i64]([pair[index] for pair in values])


class Classical:
    """The classical evaluation of a :class:`Board` (see the module's documentation).

    Not thread-safe: one search owns one. :meth:`reset` it on the board the search
    starts from."""

    #: psq[piece * 64 + square]: material plus table, White's view.
    psq_mg: vec[i64]
    psq_eg: vec[i64]
    classical: bool
    #: Whether :meth:`evaluate` caches its scores (see :data:`_SCORE_BITS`).
    caching: bool
    #: ``[eval.nn] fifty_move`` (the network's evaluator sets it): evaluate's score
    #: scaled by the halfmove clock; 0: not scaled.
    fifty_move: i64
    # The sums along the line searched: index ``top`` is the current position.
    mg: vec[i64]
    eg: vec[i64]
    phase: vec[i64]
    top: i64
    #: When true, :meth:`evaluate` records the terms in :attr:`terms`.
    tracing: bool
    traced_mg: i64
    traced_eg: i64
    traced_scale: i64
    features: dict[str, list[int]]
    #: ``terms[term * 4 + k]``: White mg, White eg, Black mg, Black eg (each colour's
    #: own view), as :attr:`blitzaco.trace.Trace.terms`.
    terms: vec[i64]
    #: Each colour's midgame material value by piece type (for the scale rules).
    npm: vec[i64]
    value_mg: vec[i64]
    value_eg: vec[i64]

    def __init__(self, config: EvalConfig) -> None:
        material = config.material
        values = ((0, 0), material.pawn, material.knight, material.bishop, material.rook, material.queen, (0, 0))
        self.value_mg = vec[i64]([v[0] for v in values] + [0])
        self.value_eg = vec[i64]([v[1] for v in values] + [0])
        pst = config.pst
        tables = (
            None, (pst.pawn_mg, pst.pawn_eg), (pst.knight_mg, pst.knight_eg), (pst.bishop_mg, pst.bishop_eg),
            (pst.rook_mg, pst.rook_eg), (pst.queen_mg, pst.queen_eg), (pst.king_mg, pst.king_eg),
        )
        psq_mg = [0] * (16 * 64)
        psq_eg = [0] * (16 * 64)
        for side in range(2):
            sign = 1 if side == WHITE else -1
            for piece_type in range(1, 7):
                mg_table, eg_table = tables[piece_type]  # type: ignore[misc]
                for square in range(64):
                    # Tables are written a8 first (as config.toml shows them).
                    index = square ^ 56 if side == WHITE else square
                    code = piece_type | side << 3
                    psq_mg[code * 64 + square] = sign * (values[piece_type][0] + mg_table[index])
                    psq_eg[code * 64 + square] = sign * (values[piece_type][1] + eg_table[index])
        self.psq_mg = vec[i64](psq_mg)
        self.psq_eg = vec[i64](psq_eg)
        self.classical = config.classical
        # Material and tables alone are kept incrementally: not worth a cache slot.
        self.caching = config.classical
        self.fifty_move = 0
        self.npm = vec[i64]([0, 0, material.knight[0], material.bishop[0], material.rook[0], material.queen[0], 0])
        pawns, pieces, king, scale = config.pawns, config.pieces, config.king, config.scale
        self.doubled_mg, self.doubled_eg = pawns.doubled
        self.isolated_mg, self.isolated_eg = pawns.isolated
        self.backward_mg, self.backward_eg = pawns.backward
        self.supported_mg, self.supported_eg = pawns.supported
        self.phalanx_mg, self.phalanx_eg = pawns.phalanx
        self.passed_mg = _pairs(pawns.passed, 0)
        self.passed_eg = _pairs(pawns.passed, 1)
        self.free_mg = _pairs(pawns.passed_free, 0)
        self.free_eg = _pairs(pawns.passed_free, 1)
        self.enemy_king_mg, self.enemy_king_eg = pawns.passed_enemy_king
        self.own_king_mg, self.own_king_eg = pawns.passed_own_king
        self.pair_mg, self.pair_eg = pieces.bishop_pair
        # Mobility by piece (knight 0, bishop 1, rook 2, queen 3) and count: [p * 32 + n].
        mobility = (pieces.mobility_knight, pieces.mobility_bishop, pieces.mobility_rook, pieces.mobility_queen)
        self.mob_mg = vec[i64]([t[n][0] if n < len(t) else 0 for t in mobility for n in range(32)])
        self.mob_eg = vec[i64]([t[n][1] if n < len(t) else 0 for t in mobility for n in range(32)])
        self.knight_outpost_mg, self.knight_outpost_eg = pieces.knight_outpost
        self.bishop_outpost_mg, self.bishop_outpost_eg = pieces.bishop_outpost
        self.open_mg, self.open_eg = pieces.rook_open_file
        self.semi_mg, self.semi_eg = pieces.rook_semi_open_file
        self.seventh_mg, self.seventh_eg = pieces.rook_seventh
        self.by_pawn_mg, self.by_pawn_eg = pieces.threat_by_pawn
        self.by_minor_mg, self.by_minor_eg = pieces.threat_by_minor
        self.by_rook_mg, self.by_rook_eg = pieces.threat_by_rook
        self.hanging_mg, self.hanging_eg = pieces.hanging
        self.attack_weight = vec[i64](list(king.attack_weight))
        self.attacker_scale = vec[i64]([king.attacker_scale[min(n, 7)] for n in range(17)])
        self.shield_mg, self.shield_eg = king.shield
        self.king_semi_mg, self.king_semi_eg = king.semi_open_file
        self.king_open_mg, self.king_open_eg = king.open_file
        self.endgame_share = king.endgame_share
        self.opposite_bishops = scale.opposite_bishops
        self.opposite_bishops_with_pieces = scale.opposite_bishops_with_pieces
        self.no_pawns_minor = scale.no_pawns_minor
        self.no_pawns = scale.no_pawns
        self.tempo_mg, self.tempo_eg = config.tempo
        self.mg = vec[i64]([0] * (CAPACITY + 1))
        self.eg = vec[i64]([0] * (CAPACITY + 1))
        self.phase = vec[i64]([0] * (CAPACITY + 1))
        self.top = 0
        self.tracing = False
        self.terms = vec[i64]([0] * (len(TERM_NAMES) * 4))
        # What the last traced evaluation blended: White's midgame and endgame sums
        # (tempo not included) and the endgame scale.
        self.traced_mg = 0
        self.traced_eg = 0
        self.traced_scale = SCALE_NORMAL
        # The feature counts of the last traced evaluation (as Trace.features:
        # the name of the weight, White's and Black's counts).
        self.features: dict[str, list[int]] = {}
        self.pieces = vec[i64]([0] * 64)
        self.cache = vec[i64]([0] * EVAL_CACHE)
        # Pawn cache: White's and Black's pawns, then mg, eg, both passers, both outposts.
        self.pawn_cache = vec[i64]([0] * (PAWN_CACHE * 8))

    # The weights, declared for mypyc (set in __init__).
    doubled_mg: i64
    doubled_eg: i64
    isolated_mg: i64
    isolated_eg: i64
    backward_mg: i64
    backward_eg: i64
    supported_mg: i64
    supported_eg: i64
    phalanx_mg: i64
    phalanx_eg: i64
    passed_mg: vec[i64]
    passed_eg: vec[i64]
    free_mg: vec[i64]
    free_eg: vec[i64]
    enemy_king_mg: i64
    enemy_king_eg: i64
    own_king_mg: i64
    own_king_eg: i64
    pair_mg: i64
    pair_eg: i64
    mob_mg: vec[i64]
    mob_eg: vec[i64]
    knight_outpost_mg: i64
    knight_outpost_eg: i64
    bishop_outpost_mg: i64
    bishop_outpost_eg: i64
    open_mg: i64
    open_eg: i64
    semi_mg: i64
    semi_eg: i64
    seventh_mg: i64
    seventh_eg: i64
    by_pawn_mg: i64
    by_pawn_eg: i64
    by_minor_mg: i64
    by_minor_eg: i64
    by_rook_mg: i64
    by_rook_eg: i64
    hanging_mg: i64
    hanging_eg: i64
    attack_weight: vec[i64]
    attacker_scale: vec[i64]
    shield_mg: i64
    shield_eg: i64
    king_semi_mg: i64
    king_semi_eg: i64
    king_open_mg: i64
    king_open_eg: i64
    endgame_share: i64
    opposite_bishops: i64
    opposite_bishops_with_pieces: i64
    no_pawns_minor: i64
    no_pawns: i64
    tempo_mg: i64
    tempo_eg: i64
    #: This evaluation's knights, bishops, rooks and queens: mailbox squares, White's
    #: from index 0 up, Black's from 63 down (see _classical).
    pieces: vec[i64]
    white_pieces: i64
    black_pieces: i64
    #: The score cache (see :data:`_SCORE_BITS`).
    cache: vec[i64]
    pawn_cache: vec[i64]

    # ------------------------------------------------------------ incremental sums

    def reset(self, board: Board) -> None:
        """Compute the sums of *board* from scratch; the line starts there."""
        mg: i64 = 0
        eg: i64 = 0
        phase: i64 = 0
        for square in range(64):
            piece = board.squares[SQ120[square]]
            if piece != EMPTY:
                mg += self.psq_mg[piece * 64 + square]
                eg += self.psq_eg[piece * 64 + square]
                phase += PHASE[piece & 7]
        self.top = 0
        self.mg[0] = mg
        self.eg[0] = eg
        self.phase[0] = phase

    def make(self, board: Board) -> None:
        """Follow the move just made on *board* (its ``dirty`` changes)."""
        top = self.top
        mg = self.mg[top]
        eg = self.eg[top]
        phase = self.phase[top]
        dirty = board.dirty
        for i in range(board.dirty_count):
            piece = dirty[3 * i]
            frm = dirty[3 * i + 1]
            to = dirty[3 * i + 2]
            if frm >= 0:
                mg -= self.psq_mg[piece * 64 + frm]
                eg -= self.psq_eg[piece * 64 + frm]
                phase -= PHASE[piece & 7]
            if to >= 0:
                mg += self.psq_mg[piece * 64 + to]
                eg += self.psq_eg[piece * 64 + to]
                phase += PHASE[piece & 7]
        top += 1
        self.mg[top] = mg
        self.eg[top] = eg
        self.phase[top] = phase
        self.top = top

    def unmake(self) -> None:
        """Follow ``Board.unmake``."""
        self.top -= 1

    # ------------------------------------------------------------ the score

    @final
    def material_and_tables(self, board: Board) -> i64:
        """Material and tables alone, for the side to move: the evaluation with
        ``classical`` off, and the search's lazy estimate of the classical one."""
        return self._blend(self.mg[self.top], self.eg[self.top], self.phase[self.top], SCALE_NORMAL, board.side, 0, 0)

    @final
    def evaluate(self, board: Board) -> i64:
        """The score of *board* (at the top of the line) for the side to move."""
        if self.tracing or not self.caching:
            score = self._computed(board)
        else:
            # The score depends on the position alone: cached by key (a search meets
            # the same positions again: transpositions, re-searches).
            score = self._cached(board.key)
            if score == MISS:
                score = self._computed(board)
                self._cache(board.key, score)
        if self.fifty_move != 0:  # after the cache: the key does not hold the clock
            return fifty_move_scaled(score, board.halfmove, self.fifty_move)
        return score

    def _computed(self, board: Board) -> i64:
        """:meth:`evaluate`'s score, computed (a subclass's evaluation overrides it)."""
        return self._uncached(board)

    @final
    def _uncached(self, board: Board) -> i64:
        """The classical score, computed (and traced when :attr:`tracing`)."""
        if self.tracing:
            for i in range(len(TERM_NAMES) * 4):
                self.terms[i] = 0
            self.features = {}
            self._trace_tables(board)
            self.traced_mg = self.mg[self.top]
            self.traced_eg = self.eg[self.top]
            self.traced_scale = SCALE_NORMAL
        if not self.classical:
            return self.material_and_tables(board)
        return self._classical(board)

    @final
    def _cached(self, key: i64) -> i64:
        """The score cached for *key*, or :data:`MISS`."""
        entry = self.cache[key & (EVAL_CACHE - 1)]
        if entry != 0 and (entry ^ key) & _KEY_BITS == 0:
            return (entry & _SCORE_MASK) - _SCORE_BIAS
        return MISS

    @final
    def _cache(self, key: i64, score: i64) -> None:
        """Keep *score* for *key* (replacing the slot's entry)."""
        if -_SCORE_BIAS < score < _SCORE_BIAS:
            self.cache[key & (EVAL_CACHE - 1)] = (key & _KEY_BITS) | (score + _SCORE_BIAS)

    @final
    def _blend(self, mg: i64, eg: i64, phase: i64, scale: i64, side: i64, tempo_mg: i64, tempo_eg: i64) -> i64:
        if side != WHITE:
            mg = -mg
            eg = -eg
        mg += tempo_mg
        eg += tempo_eg
        if scale != SCALE_NORMAL:
            eg = eg * scale // SCALE_NORMAL if eg >= 0 else -(-eg * scale // SCALE_NORMAL)
        if phase > FULL_PHASE:
            phase = FULL_PHASE
        return (mg * phase + eg * (FULL_PHASE - phase)) // FULL_PHASE

    @final
    def _add(self, term: i64, side: i64, mg: i64, eg: i64) -> None:
        """Record a contribution (only called when tracing)."""
        self.terms[term * 4 + side * 2] += mg
        self.terms[term * 4 + side * 2 + 1] += eg

    @final
    def _count(self, name: str, side: i64, count: i64) -> None:
        """Record *count* of the feature *name* for *side* (only called when tracing)."""
        counts = self.features.get(name)
        if counts is None:
            counts = [0, 0]
            self.features[name] = counts
        counts[side] += count

    @final
    def _trace_tables(self, board: Board) -> None:
        for square in range(64):
            piece = board.squares[SQ120[square]]
            if piece != EMPTY:
                side = piece >> 3
                sign: i64 = 1 if side == WHITE else -1
                kind = piece & 7
                self._add(T_MATERIAL, side, self.value_mg[kind], self.value_eg[kind])
                name = PIECE_NAMES[kind]
                if kind != KING:
                    self._count(f"material.{name}", side, 1)
                index = square ^ 56 if side == WHITE else square  # tables are written a8 first
                self._count(f"pst.{name}_mg[{index}]", side, 1)
                self._count(f"pst.{name}_eg[{index}]", side, 1)
                self._add(
                    T_PST, side,
                    sign * self.psq_mg[piece * 64 + square] - self.value_mg[kind],
                    sign * self.psq_eg[piece * 64 + square] - self.value_eg[kind],
                )

    @final
    def _classical(self, board: Board) -> i64:
        squares = board.squares
        wp: i64 = 0
        bp: i64 = 0
        knights: i64 = 0
        bishops: i64 = 0
        rooks: i64 = 0
        queens: i64 = 0
        kings: i64 = 0
        pieces = self.pieces
        white_pieces: i64 = 0
        black_pieces: i64 = 0
        white = board.occupied[WHITE]
        black = board.occupied[1]
        occupied = white | black
        # The pieces in square order (the board's bitboards, lowest bit first, as
        # the move generator walks them): the piece list's order is the scan's.
        for half in range(2):
            bits = (occupied >> (32 * half)) & M32
            while bits != 0:
                low = bits & -bits
                bits ^= low
                square = 32 * half + bit_index(low)
                origin = SQ120[square]
                piece = squares[origin]
                bit = BIT[square]
                kind = piece & 7
                if kind == PAWN:
                    if piece >> 3 == WHITE:
                        wp |= bit
                    else:
                        bp |= bit
                    continue
                if kind == KING:
                    kings |= bit
                    continue
                if kind == KNIGHT:
                    knights |= bit
                elif kind == BISHOP:
                    bishops |= bit
                elif kind == ROOK:
                    rooks |= bit
                else:
                    queens |= bit
                if piece >> 3 == WHITE:
                    pieces[white_pieces] = origin
                    white_pieces += 1
                else:
                    black_pieces += 1
                    pieces[64 - black_pieces] = origin
        self.white_pieces = white_pieces
        self.black_pieces = black_pieces
        pawns = wp | bp
        # Pawn structure, White's then Black's on the mirrored board, cached by the
        # pawns (but when tracing, which records the terms).
        cache = self.pawn_cache
        slot = ((wp ^ (bp >> 3) ^ (wp >> 17) ^ (bp >> 29)) & (PAWN_CACHE - 1)) * 8
        if not self.tracing and cache[slot] == wp and cache[slot + 1] == bp and (wp | bp) != 0:
            mg = cache[slot + 2]
            eg = cache[slot + 3]
            w_passed = cache[slot + 4]
            b_passed = cache[slot + 5]
            w_outposts = cache[slot + 6]
            b_outposts = cache[slot + 7]
        else:
            w_mg, w_eg, w_passed, w_outposts = self._pawn_side(wp, bp, WHITE)
            b_mg, b_eg, b_passed, b_outposts = self._pawn_side(flip(bp), flip(wp), 1)
            b_passed = flip(b_passed)
            b_outposts = flip(b_outposts)
            mg = w_mg - b_mg
            eg = w_eg - b_eg
            cache[slot] = wp
            cache[slot + 1] = bp
            cache[slot + 2] = mg
            cache[slot + 3] = eg
            cache[slot + 4] = w_passed
            cache[slot + 5] = b_passed
            cache[slot + 6] = w_outposts
            cache[slot + 7] = b_outposts
        wpa = white_pawn_attacks(wp)
        bpa = black_pawn_attacks(bp)
        w_files = south_fill(north_fill(wp))
        b_files = south_fill(north_fill(bp))
        wk = SQ64[board.kings[0]]
        bk = SQ64[board.kings[1]]
        w_area = ~(bpa | wp | (kings & white))
        b_area = ~(wpa | bp | (kings & black))
        w_zone = KING_ATT[wk] | BIT[wk]
        b_zone = KING_ATT[bk] | BIT[bk]
        no_pawn_files = ~(w_files | b_files)
        wm, we, w_att, w_minor, w_rook, w_units, w_attackers = self._pieces(
            board, WHITE, w_area, b_zone, w_outposts, no_pawn_files, ~w_files & b_files, bp, bk
        )
        bm, be, b_att, b_minor, b_rook, b_units, b_attackers = self._pieces(
            board, 1, b_area, w_zone, b_outposts, no_pawn_files, ~b_files & w_files, wp, wk
        )
        mg += wm - bm
        eg += we - be
        w_att |= wpa | KING_ATT[wk]
        b_att |= bpa | KING_ATT[bk]
        if w_passed != 0 or b_passed != 0:
            m, e = self._passers(WHITE, w_passed, occupied, wk, bk)
            mg += m
            eg += e
            m, e = self._passers(1, b_passed, occupied, bk, wk)
            mg -= m
            eg -= e
        m, e = self._king(WHITE, wk, wp, w_files, b_files, b_units, b_attackers)
        mg += m
        eg += e
        m, e = self._king(1, bk, bp, b_files, w_files, w_units, w_attackers)
        mg -= m
        eg -= e
        # Threats.
        minors_up = ~(pawns | kings)
        majors = rooks | queens
        w_targets = black & minors_up
        b_targets = white & minors_up
        a = popcount(wpa & w_targets)
        b = popcount(w_minor & black & majors)
        c = popcount(w_rook & black & queens)
        d = popcount(w_att & w_targets & ~b_att)
        e2 = popcount(bpa & b_targets)
        f = popcount(b_minor & white & majors)
        g = popcount(b_rook & white & queens)
        h = popcount(b_att & b_targets & ~w_att)
        mg += self.by_pawn_mg * (a - e2) + self.by_minor_mg * (b - f) + self.by_rook_mg * (c - g)
        mg += self.hanging_mg * (d - h)
        eg += self.by_pawn_eg * (a - e2) + self.by_minor_eg * (b - f) + self.by_rook_eg * (c - g)
        eg += self.hanging_eg * (d - h)
        if self.tracing:
            self._add(T_THREATS, WHITE, self.by_pawn_mg * a + self.by_minor_mg * b + self.by_rook_mg * c
                      + self.hanging_mg * d, self.by_pawn_eg * a + self.by_minor_eg * b + self.by_rook_eg * c
                      + self.hanging_eg * d)
            self._add(T_THREATS, 1, self.by_pawn_mg * e2 + self.by_minor_mg * f + self.by_rook_mg * g
                      + self.hanging_mg * h, self.by_pawn_eg * e2 + self.by_minor_eg * f + self.by_rook_eg * g
                      + self.hanging_eg * h)
            self._add(T_TEMPO, board.side, self.tempo_mg, self.tempo_eg)
            self._count("tempo", board.side, 1)
            self._count("pieces.threat_by_pawn", WHITE, a)
            self._count("pieces.threat_by_minor", WHITE, b)
            self._count("pieces.threat_by_rook", WHITE, c)
            self._count("pieces.hanging", WHITE, d)
            self._count("pieces.threat_by_pawn", 1, e2)
            self._count("pieces.threat_by_minor", 1, f)
            self._count("pieces.threat_by_rook", 1, g)
            self._count("pieces.hanging", 1, h)
        top = self.top
        mg += self.mg[top]
        eg += self.eg[top]
        scale = self._scale(wp | bp, white, black, knights, bishops, rooks, queens, eg)
        if self.tracing:
            self.traced_mg = mg
            self.traced_eg = eg
            self.traced_scale = scale
        return self._blend(mg, eg, self.phase[top], scale, board.side, self.tempo_mg, self.tempo_eg)

    @final
    def _pawn_side(self, own: i64, theirs: i64, side: i64) -> tuple[i64, i64, i64, i64]:
        """One side's pawn structure seen from White's side."""
        own_att = white_pawn_attacks(own)
        their_att = black_pawn_attacks(theirs)
        files = south_fill(north_fill(own))
        doubled = own & north_fill(_shl(own, 8))
        isolated = own & ~sideways(files)
        backward = own & ~north_fill(sideways(own)) & _shr(their_att, 8) & ~isolated
        supported = own & own_att
        phalanx = own & sideways(own)
        blocked_by_them = south_fill(_shr(theirs, 8)) | south_fill(their_att)
        passed = own & ~blocked_by_them & ~south_fill(_shr(own, 8))
        outposts = OUTPOST_RANKS & own_att & ~south_fill(their_att)
        n_doubled = popcount(doubled)
        n_isolated = popcount(isolated)
        n_backward = popcount(backward)
        n_supported = popcount(supported)
        n_phalanx = popcount(phalanx)
        mg = (self.doubled_mg * n_doubled + self.isolated_mg * n_isolated + self.backward_mg * n_backward
              + self.supported_mg * n_supported + self.phalanx_mg * n_phalanx)
        eg = (self.doubled_eg * n_doubled + self.isolated_eg * n_isolated + self.backward_eg * n_backward
              + self.supported_eg * n_supported + self.phalanx_eg * n_phalanx)
        if self.tracing:
            self._add(T_PAWNS, side, mg, eg)
            self._count("pawns.doubled", side, n_doubled)
            self._count("pawns.isolated", side, n_isolated)
            self._count("pawns.backward", side, n_backward)
            self._count("pawns.supported", side, n_supported)
            self._count("pawns.phalanx", side, n_phalanx)
        if passed != 0:
            passed_mg: i64 = 0
            passed_eg: i64 = 0
            for square in range(64):
                if passed & BIT[square] != 0:
                    passed_mg += self.passed_mg[square >> 3]
                    passed_eg += self.passed_eg[square >> 3]
                    if self.tracing:
                        self._count(f"pawns.passed[{square >> 3}]", side, 1)
            mg += passed_mg
            eg += passed_eg
            if self.tracing:
                self._add(T_PASSED, side, passed_mg, passed_eg)
        return mg, eg, passed, outposts

    @final
    def _pieces(
        self, board: Board, side: i64, area: i64, zone: i64, outposts: i64, open_files: i64,
        semi_open_files: i64, their_pawns: i64, their_king: i64,
    ) -> tuple[i64, i64, i64, i64, i64, i64, i64]:
        """The pieces' terms: (mg, eg, attacked, by minors, by rooks, king-attack
        units, king attackers) of one side's knights, bishops, rooks and queens."""
        squares = board.squares
        mg: i64 = 0
        eg: i64 = 0
        mob_mg: i64 = 0
        mob_eg: i64 = 0
        minor: i64 = 0
        rook_attacks: i64 = 0
        queen_attacks: i64 = 0
        units: i64 = 0
        attackers: i64 = 0
        bishops: i64 = 0
        tracing = self.tracing
        seventh = RANK_7 if side == WHITE else RANK_2
        eighth = RANK_8 if side == WHITE else RANK_1
        first = 0 if side == WHITE else 64 - self.black_pieces
        last = self.white_pieces if side == WHITE else 64
        for slot in range(first, last):
            origin = self.pieces[slot]
            square = SQ64[origin]
            piece = squares[origin]
            kind = piece & 7
            if kind == KNIGHT:
                att = KNIGHT_ATT[square]
            else:
                att = 0
                for i in range(SLIDES_FROM[kind], SLIDES_TO[kind]):
                    step = SLIDER_STEPS[i]
                    to = origin + step
                    target = squares[to]
                    while target == EMPTY:
                        att |= BIT120[to]
                        to += step
                        target = squares[to]
                    att |= BIT120[to]  # the blocker, either side's (0 on the border)
            n = popcount(att & area)
            index = (kind - KNIGHT) * 32 + n
            mob_mg += self.mob_mg[index]
            mob_eg += self.mob_eg[index]
            if kind == KNIGHT or kind == BISHOP:
                minor |= att
                if outposts & BIT[square] != 0:
                    om = self.knight_outpost_mg if kind == KNIGHT else self.bishop_outpost_mg
                    oe = self.knight_outpost_eg if kind == KNIGHT else self.bishop_outpost_eg
                    mg += om
                    eg += oe
                    if tracing:
                        self._add(T_KNIGHTS if kind == KNIGHT else T_BISHOPS, side, om, oe)
                        self._count("pieces.knight_outpost" if kind == KNIGHT else "pieces.bishop_outpost", side, 1)
                if kind == BISHOP:
                    bishops += 1
            elif kind == ROOK:
                rook_attacks |= att
                bit = BIT[square]
                rm: i64 = 0
                re: i64 = 0
                if bit & open_files != 0:
                    rm = self.open_mg
                    re = self.open_eg
                    if tracing:
                        self._count("pieces.rook_open_file", side, 1)
                elif bit & semi_open_files != 0:
                    rm = self.semi_mg
                    re = self.semi_eg
                    if tracing:
                        self._count("pieces.rook_semi_open_file", side, 1)
                if bit & seventh != 0 and (their_pawns & seventh != 0 or BIT[their_king] & eighth != 0):
                    rm += self.seventh_mg
                    re += self.seventh_eg
                    if tracing:
                        self._count("pieces.rook_seventh", side, 1)
                mg += rm
                eg += re
                if tracing:
                    self._add(T_ROOKS, side, rm, re)
            else:
                queen_attacks |= att
            z = att & zone
            if z != 0:
                attackers += 1
                units += self.attack_weight[kind - KNIGHT] * popcount(z)
                if tracing:
                    self._count(f"king.attack_weight[{kind - KNIGHT}]", side, popcount(z))
            if tracing:
                self._add(T_MOBILITY, side, self.mob_mg[index], self.mob_eg[index])
                self._count(f"{MOBILITY_NAMES[kind]}[{n}]", side, 1)
        if bishops >= 2:
            mg += self.pair_mg
            eg += self.pair_eg
            if tracing:
                self._add(T_BISHOPS, side, self.pair_mg, self.pair_eg)
                self._count("pieces.bishop_pair", side, 1)
        mg += mob_mg
        eg += mob_eg
        return mg, eg, minor | rook_attacks | queen_attacks, minor, rook_attacks, units, attackers

    @final
    def _passers(self, side: i64, passed: i64, occupied: i64, own_king: i64, their_king: i64) -> tuple[i64, i64]:
        """Passed pawns' free paths and king distances (the side's own view)."""
        mg: i64 = 0
        eg: i64 = 0
        step: i64 = 8 if side == WHITE else -8
        for square in range(64):
            if passed & BIT[square] == 0:
                continue
            rank = square >> 3 if side == WHITE else 7 - (square >> 3)
            pm: i64 = 0
            pe: i64 = 0
            if FRONT[side * 64 + square] & occupied == 0:
                pm += self.free_mg[rank]
                pe += self.free_eg[rank]
                if self.tracing:
                    self._count(f"pawns.passed_free[{rank}]", side, 1)
            factor = rank - 2
            if factor > 0:
                stop = square + step
                d_enemy = distance(their_king, stop) * factor
                d_own = distance(own_king, stop) * factor
                pm += self.enemy_king_mg * d_enemy + self.own_king_mg * d_own
                pe += self.enemy_king_eg * d_enemy + self.own_king_eg * d_own
                if self.tracing:
                    self._count("pawns.passed_enemy_king", side, d_enemy)
                    self._count("pawns.passed_own_king", side, d_own)
            mg += pm
            eg += pe
        if self.tracing:
            self._add(T_PASSED, side, mg, eg)
        return mg, eg

    @final
    def _king(
        self, side: i64, king: i64, own_pawns: i64, own_files: i64, their_files: i64, units: i64, attackers: i64
    ) -> tuple[i64, i64]:
        """Shelter and attack of one side's king (its own view)."""
        shield = popcount(own_pawns & SHIELD[side * 64 + king])
        files = KING_FILES[king]
        opened = popcount(files & ~(own_files | their_files))
        semi = popcount(files & ~own_files & their_files)
        mg = self.shield_mg * shield + self.king_semi_mg * semi + self.king_open_mg * opened
        eg = self.shield_eg * shield + self.king_semi_eg * semi + self.king_open_eg * opened
        penalty = units * self.attacker_scale[attackers] // 100
        mg -= penalty
        eg -= penalty * self.endgame_share // 100
        if self.tracing:
            self._add(T_KING, side, mg, eg)
            self._count("king.shield", side, shield)
            self._count("king.semi_open_file", side, semi)
            self._count("king.open_file", side, opened)
            self._count("king.attackers", 1 - side, attackers)  # counted for the attacking side
        return mg, eg

    @final
    def _non_pawn_material(self, side: i64, knights: i64, bishops: i64, rooks: i64, queens: i64) -> i64:
        npm = self.npm
        return (npm[KNIGHT] * popcount(knights & side) + npm[BISHOP] * popcount(bishops & side)
                + npm[ROOK] * popcount(rooks & side) + npm[QUEEN] * popcount(queens & side))

    @final
    def _scale(
        self, pawns: i64, white: i64, black: i64, knights: i64, bishops: i64, rooks: i64, queens: i64, eg: i64
    ) -> i64:
        """The endgame scale factor (of SCALE_NORMAL)."""
        wb = bishops & white
        bb = bishops & black
        if wb != 0 and bb != 0 and popcount(wb) == 1 and popcount(bb) == 1 and ((wb & DARK) != 0) != ((bb & DARK) != 0):
            if knights | rooks | queens == 0:
                return self.opposite_bishops
            return self.opposite_bishops_with_pieces
        strong = white if eg > 0 else black
        weak = black if eg > 0 else white
        if eg != 0 and pawns & strong == 0:
            strong_npm = self._non_pawn_material(strong, knights, bishops, rooks, queens)
            weak_npm = self._non_pawn_material(weak, knights, bishops, rooks, queens)
            if strong_npm - weak_npm <= self.npm[BISHOP]:
                return self.no_pawns_minor if strong_npm < self.npm[ROOK] else self.no_pawns
        return SCALE_NORMAL
