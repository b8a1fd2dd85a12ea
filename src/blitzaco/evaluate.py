"""The tapered evaluator: material and piece-square tables plus the classical terms.

Scores are centipawns. Every weight is a midgame/endgame pair from
:class:`~blitzaco.config.EvalConfig`; the game phase (knights and bishops 1, rooks 2,
queens 4, 24 = the opening) blends the two. The terms:

* material and piece-square tables, kept up to date incrementally by
  :class:`~blitzaco.position.Position` (a node pays nothing for them);
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

:meth:`Evaluator.trace` computes the same score through the same code and records
every term for both colours and both phases, and every feature count (how many
isolated pawns, which mobility entry...): the ``eval`` command prints the former,
the weight tuner fits weights to the latter. A test checks that the two agree.

All terms are computed for White and for Black by the same code on mirrored
squares, so a position and its colour mirror get exactly opposite scores.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import chess

from blitzaco.config import EvalConfig

if TYPE_CHECKING:
    from blitzaco.position import Position

__all__ = [
    "Evaluator", "Trace", "PHASE_WEIGHT", "FULL_PHASE", "SCALE_NORMAL", "PsqTable", "TERMS", "format_trace",
    "material_and_tables",
]

#: Phase contribution by piece type (index = chess.PAWN ... chess.KING): knight and
#: bishop 1, rook 2, queen 4, so the starting position has phase 24.
PHASE_WEIGHT: Final = (0, 0, 1, 1, 2, 4, 0)
FULL_PHASE: Final = 24
#: The endgame score is multiplied by scale / SCALE_NORMAL.
SCALE_NORMAL: Final = 64
#: Pawn-structure cache entries before the cache is emptied.
PAWN_CACHE_SIZE: Final = 1 << 16
#: Evaluation cache entries (by position key) before the cache is emptied.
EVAL_CACHE_SIZE: Final = 1 << 18

#: ``table[color][piece_type][square] == (mg, eg)``, signed from White's point of
#: view (Black's entries are negative) and including the piece's material value.
PsqTable = tuple[tuple[tuple[tuple[int, int], ...], ...], ...]

#: The rows of the ``eval`` table, in order.
TERMS: Final = (
    "Material", "PST", "Pawns", "Passed", "Knights", "Bishops", "Rooks", "Queens", "Mobility",
    "King safety", "Threats", "Tempo",
)

_ALL: Final = chess.BB_ALL
_NOT_A: Final = ~chess.BB_FILE_A & _ALL
_NOT_H: Final = ~chess.BB_FILE_H & _ALL
_OUTPOST_RANKS: Final = chess.BB_RANK_4 | chess.BB_RANK_5 | chess.BB_RANK_6
_DARK: Final = chess.BB_DARK_SQUARES
_KNIGHT_ATT: Final = chess.BB_KNIGHT_ATTACKS
_KING_ATT: Final = chess.BB_KING_ATTACKS
_DIAG_MASKS: Final = chess.BB_DIAG_MASKS
_DIAG_ATT: Final = chess.BB_DIAG_ATTACKS
_FILE_MASKS: Final = chess.BB_FILE_MASKS
_FILE_ATT: Final = chess.BB_FILE_ATTACKS
_RANK_MASKS: Final = chess.BB_RANK_MASKS
_RANK_ATT: Final = chess.BB_RANK_ATTACKS
_FLIP: Final = chess.flip_vertical
_DIST: Final = [[chess.square_distance(a, b) for b in chess.SQUARES] for a in chess.SQUARES]


#: A (midgame, endgame) pair packed in one integer, mg << _PACK_SHIFT plus eg, so
#: that a sum of pairs costs one addition; exact while every endgame sum stays
#: within +-_PACK_HALF centipawns.
_PACK_SHIFT: Final = 20
_PACK_HALF: Final = 1 << (_PACK_SHIFT - 1)
_PACK_MASK: Final = (1 << _PACK_SHIFT) - 1


def _pack(mg: int, eg: int) -> int:
    return (mg << _PACK_SHIFT) + eg


def _north_fill(bb: int) -> int:
    bb |= bb << 8
    bb |= bb << 16
    bb |= bb << 32
    return bb & _ALL


def _south_fill(bb: int) -> int:
    bb |= bb >> 8
    bb |= bb >> 16
    bb |= bb >> 32
    return bb


def _sideways(bb: int) -> int:
    return ((bb & _NOT_A) >> 1) | ((bb & _NOT_H) << 1)


def _white_pawn_attacks(bb: int) -> int:
    return (((bb & _NOT_A) << 7) | ((bb & _NOT_H) << 9)) & _ALL


def _black_pawn_attacks(bb: int) -> int:
    return ((bb & _NOT_A) >> 9) | ((bb & _NOT_H) >> 7)


#: Squares ahead of a pawn on its file, by colour and square (the path to promotion).
_FRONT: Final = (
    [_south_fill(chess.BB_SQUARES[sq] >> 8) for sq in chess.SQUARES],
    [_north_fill(chess.BB_SQUARES[sq] << 8) for sq in chess.SQUARES],
)
#: Shield squares: the king's file and its neighbours, one and two ranks ahead, by
#: colour and king square.
def _shield(square: int, color: bool) -> int:
    one = (chess.BB_SQUARES[square] << 8) & _ALL if color else chess.BB_SQUARES[square] >> 8
    two = (one << 8) & _ALL if color else one >> 8
    return _sideways(one) | one | _sideways(two) | two


_SHIELD: Final = (
    [_shield(sq, chess.BLACK) for sq in chess.SQUARES],
    [_shield(sq, chess.WHITE) for sq in chess.SQUARES],
)
#: The king's file and its neighbours, as their squares on the first rank, by square.
_KING_FILES: Final = [
    sum(chess.BB_SQUARES[f] for f in range(max(0, sq % 8 - 1), min(7, sq % 8 + 1) + 1)) for sq in chess.SQUARES
]
#: The seventh and eighth ranks, by colour.
_SEVENTH: Final = (chess.BB_RANK_2, chess.BB_RANK_7)
_EIGHTH: Final = (chess.BB_RANK_1, chess.BB_RANK_8)


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

    terms: dict[str, list[int]] = field(default_factory=lambda: {name: [0, 0, 0, 0] for name in TERMS})
    features: dict[str, list[int]] = field(default_factory=dict)
    phase: int = 0
    scale: int = SCALE_NORMAL
    mg: int = 0  # White's view, before scaling and blending
    eg: int = 0
    score: int = 0  # White's view, what evaluate() returns for White

    def add(self, term: str, color: bool, weight: tuple[int, int], count: int = 1, feature: str = "") -> None:
        """Record *count* times *weight* for *color*, under *term* and *feature*."""
        row = self.terms[term]
        offset = 0 if color else 2
        row[offset] += weight[0] * count
        row[offset + 1] += weight[1] * count
        if feature:
            counts = self.features.setdefault(feature, [0, 0])
            counts[0 if color else 1] += count

    def count(self, feature: str, color: bool, count: int) -> None:
        """Record a feature count that enters the score through a formula (king attacks)."""
        counts = self.features.setdefault(feature, [0, 0])
        counts[0 if color else 1] += count

    def rows(self) -> Iterator[tuple[str, int, int, int, int, int, int]]:
        """(term, white mg, white eg, black mg, black eg, total mg, total eg) per term."""
        for name in TERMS:
            wm, we, bm, be = self.terms[name]
            yield name, wm, we, bm, be, wm - bm, we - be


class Evaluator:
    """Evaluation with weights from an :class:`EvalConfig`. Thread-safe; it keeps
    caches of pawn-structure results and of scores by position key, which only ever
    hold correct entries (a 64-bit key collision aside)."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self.psq: PsqTable = _build_psq(config)
        self.classical = config.classical
        self._pawn_cache: dict[int, tuple[int, ...]] = {}
        self._eval_cache: dict[int, int] = {}
        pieces, king = config.pieces, config.king
        self._mobility = (pieces.mobility_knight, pieces.mobility_bishop, pieces.mobility_rook, pieces.mobility_queen)
        self._mobility_packed = tuple(tuple(_pack(m, e) for m, e in table) for table in self._mobility)
        self._attack_weight = king.attack_weight
        threat_names = ("threat_by_pawn", "threat_by_minor", "threat_by_rook", "hanging")
        self._threat_weights = tuple(getattr(pieces, name) for name in threat_names)
        self._threat_names = tuple(f"pieces.{name}" for name in threat_names)
        # By number of attackers, the last entry repeated up to the 16 pieces a side has.
        self._attacker_scale = tuple(king.attacker_scale[min(n, 7)] for n in range(17))
        material = config.material
        #: Non-pawn material by piece type, for the endgame scale rules (midgame values).
        self._npm = (0, 0, material.knight[0], material.bishop[0], material.rook[0], material.queen[0], 0)

    # ----------------------------------------------------------------- entry points

    def evaluate(self, pos: Position) -> int:
        """Score of *pos* for the side to move. Scores are cached by position key: a
        search meets the same position again and again (transpositions, re-searches)."""
        board = pos.board
        if not self.classical:
            return material_and_tables(pos)
        cache = self._eval_cache
        score = cache.get(pos.key)
        if score is not None:
            return score
        mg, eg = self._terms(board, None)
        mg += pos.mg
        eg += pos.eg
        tempo = self.config.tempo
        score = _blend(mg, eg, pos.phase, self._scale(board, eg), board.turn, tempo[0], tempo[1])
        if len(cache) >= EVAL_CACHE_SIZE:
            cache.clear()
        cache[pos.key] = score
        return score

    def trace(self, board: chess.Board) -> Trace:
        """Every term of *board*'s evaluation, and the score (White's view)."""
        trace = Trace()
        values = _material_values(self.config)
        mg = eg = phase = 0
        for square, piece in board.piece_map().items():
            color, piece_type = piece.color, piece.piece_type
            m, e = self.psq[color][piece_type][square]
            mg += m
            eg += e
            phase += PHASE_WEIGHT[piece_type]
            sign = 1 if color else -1
            value = values[piece_type]
            name = chess.piece_name(piece_type)
            trace.add("Material", color, value, 1, f"material.{name}" if piece_type < 6 else "")
            trace.add("PST", color, (sign * m - value[0], sign * e - value[1]))
            index = square ^ 56 if color else square  # tables are written a8 first
            trace.count(f"pst.{name}_mg[{index}]", color, 1)
            trace.count(f"pst.{name}_eg[{index}]", color, 1)
        tempo = (0, 0)
        if self.classical:
            cmg, cemg = self._terms(board, trace)
            mg += cmg
            eg += cemg
            tempo = self.config.tempo
            trace.add("Tempo", board.turn, tempo, 1, "tempo")
        trace.phase = min(phase, FULL_PHASE)
        trace.scale = self._scale(board, eg) if self.classical else SCALE_NORMAL
        trace.mg, trace.eg = mg, eg
        score = _blend(mg, eg, phase, trace.scale, board.turn, tempo[0], tempo[1])
        trace.score = score if board.turn else -score
        return trace

    # ------------------------------------------------------------------ the terms

    def _terms(self, board: chess.Board, trace: Trace | None) -> tuple[int, int]:
        """The classical terms, (midgame, endgame) from White's point of view."""
        occupied = board.occupied
        black, white = board.occupied_co  # indexed by colour: BLACK = 0
        pawns, kings = board.pawns, board.kings
        wp, bp = pawns & white, pawns & black
        if trace is None:
            key = wp << 64 | bp
            entry = self._pawn_cache.get(key)
            if entry is None:
                if len(self._pawn_cache) >= PAWN_CACHE_SIZE:
                    self._pawn_cache.clear()
                entry = self._pawn_cache[key] = self._pawn_structure(wp, bp, None)
        else:
            entry = self._pawn_structure(wp, bp, trace)
        mg, eg, wpa, bpa, w_passed, b_passed, w_outposts, b_outposts, w_files, b_files = entry
        wk = (kings & white).bit_length() - 1
        bk = (kings & black).bit_length() - 1
        if wk < 0 or bk < 0:  # not a legal position; material and tables only
            return 0, 0

        # Safe squares: not attacked by an enemy pawn, not blocked by our pawn or king.
        w_area = ~(bpa | wp | (kings & white)) & _ALL
        b_area = ~(wpa | bp | (kings & black)) & _ALL
        w_zone = _KING_ATT[wk] | chess.BB_SQUARES[wk]
        b_zone = _KING_ATT[bk] | chess.BB_SQUARES[bk]
        no_pawn_files = ~(w_files | b_files) & _ALL
        wm, we, w_att, w_minor, w_rook, w_units, w_attackers = self._pieces(
            board, chess.WHITE, white, w_area, b_zone, w_outposts, no_pawn_files, ~w_files & b_files, bp, bk, trace
        )
        bm, be, b_att, b_minor, b_rook, b_units, b_attackers = self._pieces(
            board, chess.BLACK, black, b_area, w_zone, b_outposts, no_pawn_files, ~b_files & w_files, wp, wk, trace
        )
        mg += wm - bm
        eg += we - be
        w_att |= wpa | _KING_ATT[wk]
        b_att |= bpa | _KING_ATT[bk]

        # Passed pawns: a free path, and the kings' distances to the square in front.
        if w_passed or b_passed:
            m, e = self._passers(chess.WHITE, w_passed, occupied, wk, bk, trace)
            mg += m
            eg += e
            m, e = self._passers(chess.BLACK, b_passed, occupied, bk, wk, trace)
            mg -= m
            eg -= e

        # King safety.
        m, e = self._king(chess.WHITE, wk, wp, w_files, b_files, b_units, b_attackers, trace)
        mg += m
        eg += e
        m, e = self._king(chess.BLACK, bk, bp, b_files, w_files, w_units, w_attackers, trace)
        mg -= m
        eg -= e

        # Threats, both sides written out (a loop over the two costs more here).
        minors_up = ~(pawns | kings) & _ALL
        majors = board.rooks | board.queens
        queens = board.queens
        (by_pawn, by_minor, by_rook, hanging), names = self._threat_weights, self._threat_names
        w_targets = black & minors_up
        b_targets = white & minors_up
        w_counts = (
            (wpa & w_targets).bit_count(),
            (w_minor & black & majors).bit_count(),
            (w_rook & black & queens).bit_count(),
            (w_att & w_targets & ~b_att).bit_count(),
        )
        b_counts = (
            (bpa & b_targets).bit_count(),
            (b_minor & white & majors).bit_count(),
            (b_rook & white & queens).bit_count(),
            (b_att & b_targets & ~w_att).bit_count(),
        )
        a, b, c, d = w_counts
        e, f, g, h = b_counts
        mg += by_pawn[0] * (a - e) + by_minor[0] * (b - f) + by_rook[0] * (c - g) + hanging[0] * (d - h)
        eg += by_pawn[1] * (a - e) + by_minor[1] * (b - f) + by_rook[1] * (c - g) + hanging[1] * (d - h)
        if trace is not None:
            for weight, name, white_count, black_count in zip(
                self._threat_weights, names, w_counts, b_counts, strict=True
            ):
                if white_count:
                    trace.add("Threats", chess.WHITE, weight, white_count, name)
                if black_count:
                    trace.add("Threats", chess.BLACK, weight, black_count, name)
        return mg, eg

    def _pawn_structure(self, wp: int, bp: int, trace: Trace | None) -> tuple[int, ...]:
        """Everything that depends on the pawns only: the structure's score (White's
        view) and the bitboards the other terms need."""
        w = _pawn_side(wp, bp, self.config, chess.WHITE, trace)
        b = _pawn_side(_FLIP(bp), _FLIP(wp), self.config, chess.BLACK, trace)
        return (
            w[0] - b[0], w[1] - b[1],
            _white_pawn_attacks(wp), _black_pawn_attacks(bp),
            w[2], _FLIP(b[2]),  # passed pawns
            w[3], _FLIP(b[3]),  # outpost squares
            _south_fill(_north_fill(wp)), _south_fill(_north_fill(bp)),  # files with pawns
        )

    def _pieces(
        self, board: chess.Board, color: bool, ours: int, area: int, zone: int, outposts: int,
        open_files: int, semi_open_files: int, their_pawns: int, their_king: int, trace: Trace | None,
    ) -> tuple[int, int, int, int, int, int, int]:
        """One side's pieces: (mg, eg, squares attacked, squares attacked by minor
        pieces, by rooks, king-attack weight, king attackers). Its own view.

        The four loops repeat their common part (attacks, mobility, king zone) on
        purpose: a helper call per piece would cost more than the repetition."""
        pieces = self.config.pieces
        mob_n, mob_b, mob_r, mob_q = self._mobility
        # Mobility summed packed (see _pack): one addition a piece instead of two.
        pk_n, pk_b, pk_r, pk_q = self._mobility_packed
        mobility = 0
        w_n, w_b, w_r, w_q = self._attack_weight
        occupied = board.occupied
        mg = eg = 0
        attacks = minor = rook_attacks = units = attackers = 0

        bb = board.knights & ours
        while bb:
            sq = bb.bit_length() - 1
            bb ^= 1 << sq
            att = _KNIGHT_ATT[sq]
            minor |= att
            n = (att & area).bit_count()
            mobility += pk_n[n]
            if outposts >> sq & 1:
                mg += pieces.knight_outpost[0]
                eg += pieces.knight_outpost[1]
                if trace is not None:
                    trace.add("Knights", color, pieces.knight_outpost, 1, "pieces.knight_outpost")
            z = att & zone
            if z:
                attackers += 1
                units += w_n * z.bit_count()
                if trace is not None:
                    trace.count("king.attack_weight[0]", color, z.bit_count())
            if trace is not None:
                trace.add("Mobility", color, mob_n[n], 1, f"pieces.mobility_knight[{n}]")

        bb = board.bishops & ours
        if bb & (bb - 1):
            mg += pieces.bishop_pair[0]
            eg += pieces.bishop_pair[1]
            if trace is not None:
                trace.add("Bishops", color, pieces.bishop_pair, 1, "pieces.bishop_pair")
        while bb:
            sq = bb.bit_length() - 1
            bb ^= 1 << sq
            att = _DIAG_ATT[sq][_DIAG_MASKS[sq] & occupied]
            minor |= att
            n = (att & area).bit_count()
            mobility += pk_b[n]
            if outposts >> sq & 1:
                mg += pieces.bishop_outpost[0]
                eg += pieces.bishop_outpost[1]
                if trace is not None:
                    trace.add("Bishops", color, pieces.bishop_outpost, 1, "pieces.bishop_outpost")
            z = att & zone
            if z:
                attackers += 1
                units += w_b * z.bit_count()
                if trace is not None:
                    trace.count("king.attack_weight[1]", color, z.bit_count())
            if trace is not None:
                trace.add("Mobility", color, mob_b[n], 1, f"pieces.mobility_bishop[{n}]")

        bb = board.rooks & ours
        while bb:
            sq = bb.bit_length() - 1
            bb ^= 1 << sq
            att = _RANK_ATT[sq][_RANK_MASKS[sq] & occupied] | _FILE_ATT[sq][_FILE_MASKS[sq] & occupied]
            rook_attacks |= att
            n = (att & area).bit_count()
            mobility += pk_r[n]
            bit = 1 << sq
            weight, name = None, ""
            if bit & open_files:
                weight, name = pieces.rook_open_file, "pieces.rook_open_file"
            elif bit & semi_open_files:
                weight, name = pieces.rook_semi_open_file, "pieces.rook_semi_open_file"
            if weight is not None:
                mg += weight[0]
                eg += weight[1]
                if trace is not None:
                    trace.add("Rooks", color, weight, 1, name)
            if bit & _SEVENTH[color] and (their_pawns & _SEVENTH[color] or (1 << their_king) & _EIGHTH[color]):
                mg += pieces.rook_seventh[0]
                eg += pieces.rook_seventh[1]
                if trace is not None:
                    trace.add("Rooks", color, pieces.rook_seventh, 1, "pieces.rook_seventh")
            z = att & zone
            if z:
                attackers += 1
                units += w_r * z.bit_count()
                if trace is not None:
                    trace.count("king.attack_weight[2]", color, z.bit_count())
            if trace is not None:
                trace.add("Mobility", color, mob_r[n], 1, f"pieces.mobility_rook[{n}]")

        bb = board.queens & ours
        queen_attacks = 0
        while bb:
            sq = bb.bit_length() - 1
            bb ^= 1 << sq
            att = (
                _DIAG_ATT[sq][_DIAG_MASKS[sq] & occupied]
                | _RANK_ATT[sq][_RANK_MASKS[sq] & occupied]
                | _FILE_ATT[sq][_FILE_MASKS[sq] & occupied]
            )
            queen_attacks |= att
            n = (att & area).bit_count()
            mobility += pk_q[n]
            z = att & zone
            if z:
                attackers += 1
                units += w_q * z.bit_count()
                if trace is not None:
                    trace.count("king.attack_weight[3]", color, z.bit_count())
            if trace is not None:
                trace.add("Mobility", color, mob_q[n], 1, f"pieces.mobility_queen[{n}]")
        attacks = minor | rook_attacks | queen_attacks
        mobility_eg = ((mobility + _PACK_HALF) & _PACK_MASK) - _PACK_HALF
        mg += (mobility - mobility_eg) >> _PACK_SHIFT
        eg += mobility_eg
        return mg, eg, attacks, minor, rook_attacks, units, attackers

    def _passers(
        self, color: bool, passed: int, occupied: int, own_king: int, their_king: int, trace: Trace | None
    ) -> tuple[int, int]:
        """Free paths and king distances of one side's passed pawns (its own view)."""
        cfg = self.config.pawns
        free_table, enemy, own = cfg.passed_free, cfg.passed_enemy_king, cfg.passed_own_king
        front = _FRONT[color]
        mg = eg = 0
        step = 8 if color else -8
        while passed:
            sq = (passed & -passed).bit_length() - 1
            passed &= passed - 1
            rank = sq >> 3 if color else 7 - (sq >> 3)
            if not front[sq] & occupied:
                m, e = free_table[rank]
                mg += m
                eg += e
                if trace is not None:
                    trace.add("Passed", color, free_table[rank], 1, f"pawns.passed_free[{rank}]")
            factor = rank - 2
            if factor > 0:
                stop = sq + step
                d_enemy = _DIST[their_king][stop] * factor
                d_own = _DIST[own_king][stop] * factor
                mg += enemy[0] * d_enemy + own[0] * d_own
                eg += enemy[1] * d_enemy + own[1] * d_own
                if trace is not None:
                    trace.add("Passed", color, enemy, d_enemy, "pawns.passed_enemy_king")
                    trace.add("Passed", color, own, d_own, "pawns.passed_own_king")
        return mg, eg

    def _king(
        self, color: bool, king: int, own_pawns: int, own_files: int, their_files: int, units: int, attackers: int,
        trace: Trace | None,
    ) -> tuple[int, int]:
        """Shelter and attack of one side's king (its own view). *own_files* and
        *their_files*: the files holding each side's pawns, filled."""
        cfg = self.config.king
        shield = (own_pawns & _SHIELD[color][king]).bit_count()
        mg = cfg.shield[0] * shield
        eg = cfg.shield[1] * shield
        # The king's file and its neighbours, one square of each on the first rank.
        files = _KING_FILES[king]
        opened = (files & ~(own_files | their_files)).bit_count()
        semi = (files & ~own_files & their_files).bit_count()
        mg += cfg.semi_open_file[0] * semi + cfg.open_file[0] * opened
        eg += cfg.semi_open_file[1] * semi + cfg.open_file[1] * opened
        penalty = units * self._attacker_scale[attackers] // 100
        mg -= penalty
        eg -= penalty * cfg.endgame_share // 100
        if trace is not None:
            trace.add("King safety", color, cfg.shield, shield, "king.shield")
            trace.add("King safety", color, cfg.semi_open_file, semi, "king.semi_open_file")
            trace.add("King safety", color, cfg.open_file, opened, "king.open_file")
            trace.add("King safety", color, (-penalty, -(penalty * cfg.endgame_share // 100)))
            trace.count("king.attackers", not color, attackers)  # counted for the attacking side
        return mg, eg

    def _non_pawn_material(self, board: chess.Board, side: int) -> int:
        npm = self._npm
        return (
            npm[chess.KNIGHT] * (board.knights & side).bit_count()
            + npm[chess.BISHOP] * (board.bishops & side).bit_count()
            + npm[chess.ROOK] * (board.rooks & side).bit_count()
            + npm[chess.QUEEN] * (board.queens & side).bit_count()
        )

    def _scale(self, board: chess.Board, eg: int) -> int:
        """Scale factor (of SCALE_NORMAL) of the endgame score *eg* (White's view)."""
        cfg = self.config.scale
        bishops = board.bishops
        black, white = board.occupied_co  # indexed by colour: BLACK = 0
        wb, bb = bishops & white, bishops & black
        if (
            wb and bb and not wb & (wb - 1) and not bb & (bb - 1)
            and bool(wb & _DARK) != bool(bb & _DARK)
        ):
            if not (board.knights | board.rooks | board.queens):
                return cfg.opposite_bishops
            return cfg.opposite_bishops_with_pieces
        strong, weak = (white, black) if eg > 0 else (black, white)
        if eg and not board.pawns & strong:
            strong_npm, weak_npm = self._non_pawn_material(board, strong), self._non_pawn_material(board, weak)
            if strong_npm - weak_npm <= self._npm[chess.BISHOP]:
                return cfg.no_pawns_minor if strong_npm < self._npm[chess.ROOK] else cfg.no_pawns
        return SCALE_NORMAL


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


def material_and_tables(pos: Position) -> int:
    """The score of material and piece-square tables alone (kept incrementally by
    the position), for the side to move: the evaluation with ``classical`` off, and
    the search's lazy estimate of the classical one."""
    return _blend(pos.mg, pos.eg, pos.phase, SCALE_NORMAL, pos.board.turn, 0, 0)


def _blend(mg: int, eg: int, phase: int, scale: int, turn: bool, tempo_mg: int, tempo_eg: int) -> int:
    """The side to move's score: the endgame part scaled, both blended by phase. The
    arithmetic is done on the side to move's view so that a position and its colour
    mirror get exactly opposite scores (// rounds towards -infinity)."""
    if not turn:
        mg, eg = -mg, -eg
    mg += tempo_mg
    eg += tempo_eg
    if scale != SCALE_NORMAL:
        eg = eg * scale // SCALE_NORMAL if eg >= 0 else -(-eg * scale // SCALE_NORMAL)
    phase = phase if phase < FULL_PHASE else FULL_PHASE
    return (mg * phase + eg * (FULL_PHASE - phase)) // FULL_PHASE


def _pawn_side(
    own: int, theirs: int, config: EvalConfig, color: bool, trace: Trace | None
) -> tuple[int, int, int, int]:
    """Pawn structure of one side, with its pawns *own* and the enemy's *theirs* seen
    from White's side of the board (Black's are mirrored first): (mg, eg, passed
    pawns, outpost squares), the bitboards in the same orientation."""
    cfg = config.pawns
    own_att = _white_pawn_attacks(own)
    their_att = _black_pawn_attacks(theirs)
    files = _south_fill(_north_fill(own))
    doubled = own & _north_fill(own << 8)
    isolated = own & ~_sideways(files)
    backward = own & ~_north_fill(_sideways(own)) & (their_att >> 8) & ~isolated
    supported = own & own_att
    phalanx = own & _sideways(own)
    blocked_by_them = _south_fill(theirs >> 8) | _south_fill(their_att)
    passed = own & ~blocked_by_them & ~_south_fill(own >> 8)
    outposts = _OUTPOST_RANKS & own_att & ~_south_fill(their_att)
    mg = eg = 0
    for weight, bb, name in (
        (cfg.doubled, doubled, "pawns.doubled"),
        (cfg.isolated, isolated, "pawns.isolated"),
        (cfg.backward, backward, "pawns.backward"),
        (cfg.supported, supported, "pawns.supported"),
        (cfg.phalanx, phalanx, "pawns.phalanx"),
    ):
        if bb:
            count = bb.bit_count()
            mg += weight[0] * count
            eg += weight[1] * count
            if trace is not None:
                trace.add("Pawns", color, weight, count, name)
    bb = passed
    while bb:
        sq = (bb & -bb).bit_length() - 1
        bb &= bb - 1
        m, e = cfg.passed[sq >> 3]
        mg += m
        eg += e
        if trace is not None:
            trace.add("Passed", color, (m, e), 1, f"pawns.passed[{sq >> 3}]")
    return mg, eg, passed, outposts


def _material_values(config: EvalConfig) -> tuple[tuple[int, int], ...]:
    material = config.material
    return ((0, 0), material.pawn, material.knight, material.bishop, material.rook, material.queen, (0, 0))


def _build_psq(config: EvalConfig) -> PsqTable:
    values = _material_values(config)
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
                squares.append((sign * (value[0] + mg_table[index]), sign * (value[1] + eg_table[index])))
            by_type.append(tuple(squares))
        by_color.append(tuple(by_type))
    return tuple(by_color)
