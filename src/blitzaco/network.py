"""The network, evaluated on the engine's own board: the accumulator kept with the
evaluator, updated from what each move changed (:attr:`blitzaco.board.Board.dirty`).

The file format, the inputs and the scales are :mod:`blitzaco.nnue`'s: 768 inputs
per perspective, a first layer of ``hidden`` neurons shared by both perspectives,
clipped ReLU (or its square), one output (or one per output bucket, chosen by the number of pieces on
the board), in integers, so that the score is the same number wherever
it is computed (``tests/data/eval_scores.csv`` records it). The accumulator
is a ``vec[i64]`` per ply holding its ``2 * hidden`` values three to a word (White's
perspective, then Black's; see :data:`_LANE_BITS`), so that a pass over a row adds a
third as many words as there are neurons. Making a move notes the first-layer rows of the
pieces that left or reached a square; only when a score is asked for (and the
score is not cached) are the line's missing plies computed, each the parent's
values plus and minus those rows, both perspectives, and then the output (a dot
product over ``2 * hidden`` clipped values). In a mirrored net (the king's file
mirrors a perspective, :func:`blitzaco.nnue.flip`) a king move that takes its own
perspective across the d/e boundary computes that perspective afresh when it is
made (a move in a few hundred: castling long, a king walking to the other wing);
every other move stays incremental. On the bench positions at depth 5
with the blend, a third of the moves made never need their values (a table cut, a
check, a cached score). The trainer bounds the weights
so that no value leaves the 16-bit range (:data:`blitzaco.nnue.WEIGHT_LIMIT`, checked
when a file is read).

:class:`NetEvaluator` is a :class:`~blitzaco.classical.Classical` (the search calls
one evaluator): with a replacing net its score is the network's alone
(times ``[eval.nn] weight``) plus, when ``[eval.nn] classical`` is not 0, that
share of the classical score; with a residual net the classical score plus the
network's. The board knows nothing of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import CAPACITY, EMPTY, INTERPRETED, SQ64, SQ120, WHITE, Board
from blitzaco.classical import Classical
from blitzaco.config import EvalConfig
from blitzaco.nnue import FLAG_MIRRORED, FLAG_RESIDUAL, FLAG_SQUARED, INPUTS, NetworkWeights, classical_share

if INTERPRETED and not TYPE_CHECKING:  # lists stand in for librt's vec (see board.py)
    from blitzaco.board import vec  # noqa: F811

__all__ = ["NetEvaluator", "feature_index"]

#: Plies of accumulators kept: as many as a board makes moves by default.
_PLIES: Final = CAPACITY + 1
#: The accumulator's neurons are kept three to a 64-bit word, a neuron ``v`` in lane
#: ``k`` adding ``v << (21 * k)`` (exact integer sums: no masks, no carries to undo):
#: a pass over a row adds a third as many words as it has neurons. A neuron's value
#: stays within 16 bits (:data:`blitzaco.nnue.WEIGHT_LIMIT`), and while a move's rows
#: are added and taken away within 19, so a lane never reaches its neighbour and a
#: word's magnitude stays below 2^62.
_LANE_BITS: Final = 21
_LANES: Final = 3
_LANE_MASK: Final = (1 << _LANE_BITS) - 1
#: A 1 at the bottom of each lane; 2^20 in each lane is the output's offset (a
#: neuron's value plus 2^20 lies in [0, 2^21) since it stays within 16 bits), kept in
#: a native field (:attr:`NetEvaluator.offsets`): a constant above 2^62 would be a
#: Python integer to the compiled code.
_ONES: Final = 1 | 1 << _LANE_BITS | 1 << (2 * _LANE_BITS)


def _packed(values: list[int], words: int) -> list[int]:
    """*values* three to a word (see :data:`_LANE_BITS`), zeros after the last."""
    padded = values + [0] * (words * _LANES - len(values))
    return [sum(padded[_LANES * word + lane] << (_LANE_BITS * lane) for lane in range(_LANES))
            for word in range(words)]


def feature_index(perspective: i64, piece: i64, square: i64) -> i64:
    """:func:`blitzaco.nnue.feature` for a board piece (``type | side << 3``) on a
    python-chess square, seen from *perspective* (0 White, 1 Black)."""
    side = piece >> 3
    if perspective != WHITE:
        square ^= 56
    return (0 if side == perspective else 384) + ((piece & 7) - 1) * 64 + square


class NetEvaluator(Classical):
    """The network's score on the engine's own board (see the module's documentation).
    One search at a time."""

    hidden: i64
    words: i64
    qa_lanes: i64
    cap: i64
    offsets: i64
    divisor: i64
    buckets: i64
    b2: vec[i64]
    weight: float
    classical_weight: float
    w1: vec[i64]
    zero_row: i64
    b1: vec[i64]
    w2: vec[i64]
    acc: vec[i64]
    rows: vec[i64]
    computed: vec[i64]
    ply: i64
    squared: bool
    mirrored: bool
    flips: vec[i64]

    def __init__(self, config: EvalConfig, weights: NetworkWeights, weight: float = 1.0,
                 classical: float = 0.0, fifty_move: int = 0) -> None:
        super().__init__(config)
        self.caching = True  # the blended score, by key, as the classical score is
        self.fifty_move = fifty_move
        if len(weights.w1) != INPUTS * weights.hidden:
            raise ValueError("the network's first layer does not match its hidden size")
        self.hidden = weights.hidden
        words = (weights.hidden + _LANES - 1) // _LANES
        self.words = words
        self.qa_lanes = _ONES * weights.qa
        self.cap = _ONES * ((1 << (_LANE_BITS - 1)) - 1 - weights.qa)
        self.offsets = _ONES << (_LANE_BITS - 1)
        # The squared clipped ReLU's values are in QA * QA: its bias and divisor too.
        self.squared = bool(weights.flags & FLAG_SQUARED)
        square = weights.qa if self.squared else 1
        self.divisor = weights.qa * weights.qb * square
        self.buckets = weights.buckets
        self.b2 = vec[i64]([bias * square for bias in weights.b2])
        self.weight = weight
        self.classical_weight = classical_share(bool(weights.flags & FLAG_RESIDUAL), classical)
        # The first-layer rows, feature-major, each packed into `words` words, and a
        # row of zeros after them (the row of a change a move does not have).
        hidden = self.hidden
        w1 = list(weights.w1)
        rows: list[int] = []
        for feature in range(INPUTS):
            rows.extend(_packed(w1[feature * hidden:(feature + 1) * hidden], words))
        self.w1 = vec[i64](rows + [0] * words)
        self.zero_row = INPUTS * words
        self.b1 = vec[i64](_packed(list(weights.b1), words))
        # Output weights in the accumulator's lane order (White's neurons, then
        # Black's, each padded to whole words): with White to move the side to move's
        # weights first, with Black to move the other side's, so that the output is
        # one pass over the 2 * words words. One such pair per output bucket.
        lanes = words * _LANES
        w2: list[int] = []
        for bucket in range(self.buckets):
            at = bucket * 2 * hidden
            own = list(weights.w2[at:at + hidden]) + [0] * (lanes - hidden)
            other = list(weights.w2[at + hidden:at + 2 * hidden]) + [0] * (lanes - hidden)
            w2.extend(own + other + other + own)
        self.w2 = vec[i64](w2)
        self.acc = vec[i64]([0] * (_PLIES * 2 * words))
        # Per ply: the rows :meth:`make` noted (to add twice, to subtract twice, per
        # perspective) and whether the ply's accumulator is computed.
        self.rows = vec[i64]([0] * (_PLIES * 8))
        self.computed = vec[i64]([0] * _PLIES)
        self.ply = 0
        # Mirrored nets: per ply and perspective, what its squares are XORed with
        # (blitzaco.nnue.flip of its own king's square; 0 in a net without the flag).
        self.mirrored = bool(weights.flags & FLAG_MIRRORED)
        self.flips = vec[i64]([0] * (_PLIES * 2))

    def reset(self, board: Board) -> None:
        """The accumulator of *board* from scratch; the line starts there."""
        super().reset(board)
        self.ply = 0
        self.computed[0] = 1
        for perspective in range(2):
            self.flips[perspective] = self._flip(board, perspective)
            self._afresh(board, 0, perspective)

    def _flip(self, board: Board, perspective: i64) -> i64:
        """:func:`blitzaco.nnue.flip` of *perspective*'s own king on *board* in a
        mirrored net, else 0."""
        if not self.mirrored:
            return 0
        return 7 if SQ64[board.kings[perspective]] & 7 < 4 else 0

    def _afresh(self, board: Board, ply: i64, perspective: i64) -> None:
        """*perspective*'s values at *ply* from scratch: the biases plus the rows of
        every piece on *board*, with the ply's flip."""
        words = self.words
        acc = self.acc
        w1 = self.w1
        base = ply * 2 * words + perspective * words
        for j in range(words):
            acc[base + j] = self.b1[j]
        flip = self.flips[ply * 2 + perspective]
        for square in range(64):
            piece = board.squares[SQ120[square]]
            if piece != EMPTY:
                row = feature_index(perspective, piece, square ^ flip) * words
                for j in range(words):
                    acc[base + j] += w1[row + j]

    def make(self, board: Board) -> None:
        """Follow the move just made on *board*, lazily: note the first-layer rows of
        the pieces that reached a square and of those that left one, per perspective
        (a move changes at most two of each); the values are computed only when a
        score is asked for at this ply or below it (:meth:`_refresh`). In a mirrored
        net, a perspective whose flip the move changed is computed afresh now (its
        row marked -1)."""
        super().make(board)
        words = self.words
        ply = self.ply + 1
        self.ply = ply
        self.computed[ply] = 0
        rows = self.rows
        base = ply * 8
        dirty = board.dirty
        count = board.dirty_count
        zero = self.zero_row
        flips = self.flips
        for perspective in range(2):
            flip: i64 = 0
            if self.mirrored:
                flip = self._flip(board, perspective)
                flips[ply * 2 + perspective] = flip
                if flip != flips[ply * 2 - 2 + perspective]:
                    self._afresh(board, ply, perspective)
                    rows[base + 4 * perspective] = -1
                    continue
            add0 = zero
            add1 = zero
            sub0 = zero
            sub1 = zero
            for i in range(count):  # none for a null move: the parent's values
                piece = dirty[3 * i]
                frm = dirty[3 * i + 1]
                to = dirty[3 * i + 2]
                if frm >= 0:
                    row = feature_index(perspective, piece, frm ^ flip) * words
                    if sub0 == zero:
                        sub0 = row
                    else:
                        sub1 = row
                if to >= 0:
                    row = feature_index(perspective, piece, to ^ flip) * words
                    if add0 == zero:
                        add0 = row
                    else:
                        add1 = row
            at = base + 4 * perspective
            rows[at] = add0
            rows[at + 1] = add1
            rows[at + 2] = sub0
            rows[at + 3] = sub1

    def _refresh(self) -> None:
        """Compute the accumulators of the plies of the line not yet computed, from
        the deepest computed one (the root's always is) down to the current ply: the
        parent's values plus the rows noted by :meth:`make`. A node whose score is
        never asked for (a table cut, a check, a cached score) costs no pass."""
        ply = self.ply
        computed = self.computed
        if computed[ply] != 0:
            return
        first = ply
        while computed[first - 1] == 0:
            first -= 1
        words = self.words
        size = 2 * words
        acc = self.acc
        w1 = self.w1
        rows = self.rows
        zero = self.zero_row
        for at_ply in range(first, ply + 1):
            for perspective in range(2):
                at = at_ply * 8 + 4 * perspective
                add0 = rows[at]
                if add0 < 0:  # computed afresh by make
                    continue
                add1 = rows[at + 1]
                sub0 = rows[at + 2]
                sub1 = rows[at + 3]
                src = (at_ply - 1) * size + perspective * words
                dst = src + size
                # The general pass below with zero rows gives the same values; the
                # quiet move's own pass reads two rows fewer.
                if add1 == zero and sub1 == zero:  # a quiet move, a promotion, a null move
                    for j in range(words):
                        acc[dst + j] = acc[src + j] + w1[add0 + j] - w1[sub0 + j]
                else:  # a capture, castling
                    for j in range(words):
                        acc[dst + j] = acc[src + j] + w1[add0 + j] + w1[add1 + j] - w1[sub0 + j] - w1[sub1 + j]
            computed[at_ply] = 1

    def unmake(self) -> None:
        super().unmake()
        self.ply -= 1

    def network(self, board: Board) -> i64:
        """The network's score in centipawns for the side to move (not cached:
        :meth:`~blitzaco.classical.Classical.evaluate` caches the blended score)."""
        self._refresh()
        size = 2 * self.words
        acc = self.acc
        w2 = self.w2
        base = self.ply * size
        bucket: i64 = 0
        buckets = self.buckets
        if buckets > 1:  # blitzaco.nnue.output_bucket of the pieces on the board
            counts = board.counts
            pieces: i64 = 0
            for code in range(16):
                pieces += counts[code]
            bucket = min((pieces - 1) * buckets // 32, buckets - 1)
        # This bucket's output weights, in this side to move's order.
        weights = (2 * bucket + board.side) * size * _LANES
        cap = self.cap
        qa_lanes = self.qa_lanes
        offsets = self.offsets
        total: i64 = self.b2[bucket]
        squared = self.squared
        for j in range(size):
            # The clipped ReLU on the word's three lanes at once, without a branch
            # (about half the neurons are active, in no order a branch predictor
            # could learn): each lane offset by 2^20 reads as an unsigned field whose
            # bit 20 says the neuron is not negative; those lanes keep their value
            # (the offset taken off), the others become 0; then the lanes above qa,
            # found alike by the bit 20 of value + 2^20 - 1 - qa, become qa.
            word = acc[base + j] + offsets
            keep = ((word >> (_LANE_BITS - 1)) & _ONES) * _LANE_MASK
            word = (word ^ offsets) & keep
            over = (((word + cap) >> (_LANE_BITS - 1)) & _ONES) * _LANE_MASK
            word = (word & ~over) | (qa_lanes & over)
            at = weights + _LANES * j
            low = word & _LANE_MASK
            middle = (word >> _LANE_BITS) & _LANE_MASK
            high = word >> (2 * _LANE_BITS)
            if squared:  # the same for every word of a net: predicted
                total += w2[at] * low * low + w2[at + 1] * middle * middle + w2[at + 2] * high * high
            else:
                total += w2[at] * low + w2[at + 1] * middle + w2[at + 2] * high
        return total * 100 // self.divisor

    def _computed(self, board: Board) -> i64:
        """:meth:`evaluate`'s score, computed: the network's share and the classical."""
        score = self.network(board)
        if self.weight != 1.0:
            score = i64(int(self.weight * float(score)))
        if self.classical_weight == 1.0:
            score += self._uncached(board)
        elif self.classical_weight != 0.0:
            score += i64(int(self.classical_weight * float(self._uncached(board))))
        return score
