"""The network's file: its format, reading and checking it, and writing it (the
trainer's side). The network is evaluated on the engine's own board by
:class:`blitzaco.network.NetEvaluator`; this module runs no network.

The network (trained by ``tune.py train-net``, :mod:`blitzaco.tools.tune.nn`):

* 768 inputs per perspective: one per (own or enemy piece, piece type, square), the
  square seen from that side (Black's squares mirrored vertically), see
  :func:`feature`; in a net with the mirrored flag, a perspective whose own king
  stands on files a-d also sees the board mirrored horizontally (:func:`flip`), so
  that its king is always on files e-h and each position teaches both halves of
  the board;
* a first layer of ``hidden`` neurons shared by both perspectives (the
  *accumulator*: bias plus the weight rows of the pieces on the board);
* the side to move's accumulator then the other side's, each clipped to [0, QA]
  (clipped ReLU) or, in a net with the squared flag, clipped and squared (SCReLU,
  ``clip(x, 0, 1) ** 2``: the activation of the strongest small nets, which lets
  a neuron's output bend without a second layer), into a linear output: the score
  for the side to move. A net may
  have several outputs (*output buckets*), one chosen by the number of pieces on the
  board (:func:`output_bucket`), as Stockfish's eight are.

A position and its colour mirror therefore get exactly opposite scores (White's
view), as the classical evaluation's do. The training bounds the weights so that no
first-layer value leaves the 16-bit range (:data:`WEIGHT_LIMIT`); a file whose
weights could is refused when read.

The file format (version 1, or 2 for a net with output buckets), little-endian:

* 8 bytes magic ``BACONNUE``;
* header ``<HHHHHH``: version, inputs (768), hidden, QA, QB, flags (bit 0: the
  net was trained as a residual over the classical evaluation; bit 1: the squared
  clipped ReLU; bit 2: the input mirrored by the king's file; a file with any other
  bit is refused);
* version 2 only: ``<H`` the number of output buckets (1 to :data:`MAX_BUCKETS`;
  version 1 has one);
* first-layer weights: ``inputs * hidden`` int16, feature-major, scaled by QA;
* first-layer biases: ``hidden`` int16, scaled by QA;
* output weights: per bucket (the first for the fewest pieces), ``2 * hidden`` int32
  (the side to move's neurons first), scaled by QB;
* output biases: one int32 per bucket, scaled by QA * QB;
* metadata: a uint32 length then that many bytes of UTF-8 JSON (how it was trained);
* a uint32 CRC-32 of everything before it.

Version 1 holds both kinds of net: a residual one (flag bit 0 set, added to the
classical evaluation, ``assets/nn.bin``) and a replacing one (flag clear, the whole
evaluation: the shipped net until 2026-11-27, 768x2->128x2->1; the shipped
``assets/net.bin`` since, 768x2->128x2->8, is version 2). A net trained by ``train-net`` since
the training record exists carries that record as its metadata (every label run and
training run it has seen; :mod:`blitzaco.tools.tune.record` documents it); the engine
only reads its ``positions`` key, for :meth:`Network.describe`.

The score in centipawns is ``(sum(w2 * crelu(acc)) + b2) * 100 // (QA * QB)``, with
the output bucket's ``w2`` and ``b2``; with the squared flag
``(sum(w2 * crelu(acc) ** 2) + b2 * QA) * 100 // (QA * QA * QB)`` (the same scales:
an activation of ``QA`` stands for 1 either way). A net with one output is written as version 1,
so that the files of earlier nets keep their bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAGIC",
    "FLAG_SQUARED",
    "FLAG_MIRRORED",
    "ACTIVATIONS",
    "VERSION",
    "INPUTS",
    "LANE_OFFSET",
    "WEIGHT_LIMIT",
    "BIAS_LIMIT",
    "QA",
    "QB",
    "NetworkError",
    "NetworkWeights",
    "Network",
    "feature",
    "flip",
    "output_bucket",
    "classical_share",
    "load_network",
    "encode_network",
    "decode_network",
    "decode_weights",
    "load_weights",
]

MAGIC = b"BACONNUE"
#: The newest format version written and read (1: one output; 2: output buckets).
VERSION = 2
INPUTS = 768
#: Activations are clipped to [0, 1]; 1.0 is QA in the integer values.
QA = 255
#: Output weights' scale.
QB = 1024
#: A first-layer value (the bias and at most 32 pieces' weights) stays within
#: +-(LANE_OFFSET - 1): 16 bits, signed, which the evaluator's packed lanes rely on.
LANE_OFFSET = 32768
#: The trainer keeps every first-layer weight within +-WEIGHT_LIMIT and every bias
#: within +-BIAS_LIMIT (floats), so that 32 pieces and the bias stay in 16 bits:
#: 32 * 3.5 * 255 + 4 * 255 = 29,580 < 32,767.
WEIGHT_LIMIT = 3.5
BIAS_LIMIT = 4.0
#: Largest hidden layer accepted from a file.
MAX_HIDDEN = 512
#: Most output buckets accepted from a file (one per piece count at most).
MAX_BUCKETS = 32
#: Largest network file read (bytes).
MAX_FILE_BYTES = 8 * 1024 * 1024
#: Residual flag in the header: trained to be added to the classical evaluation.
FLAG_RESIDUAL = 1
#: Squared clipped ReLU flag: each first-layer value clipped to [0, QA], then squared.
FLAG_SQUARED = 2
#: Mirrored input flag: a perspective whose own king is on files a-d sees the
#: board mirrored horizontally (:func:`flip`).
FLAG_MIRRORED = 4
_KNOWN_FLAGS = FLAG_RESIDUAL | FLAG_SQUARED | FLAG_MIRRORED
#: The activations by name (the trainer's ``--activation``, the record's), and their flag.
ACTIVATIONS = {"crelu": 0, "screlu": FLAG_SQUARED}
_HEADER = struct.Struct("<HHHHHH")
_BUCKETS = struct.Struct("<H")


class NetworkError(ValueError):
    """A network file that cannot be used (missing, truncated, corrupt, wrong version)."""


def feature(perspective: bool, color: bool, piece_type: int, square: int, mirror: int = 0) -> int:
    """The input index of a *color* *piece_type* (python-chess's colours, types and
    squares: True is White, a pawn 1) on *square* seen from *perspective*: own pieces
    0-383, enemy pieces 384-767, by type (pawn first) then square, with Black's view
    mirrored vertically (a8 is Black's a1); *mirror* is XORed into the square (a
    mirrored net's :func:`flip` of the perspective: 7 mirrors it horizontally)."""
    square ^= mirror
    if not perspective:
        square ^= 56
    return (0 if color == perspective else 384) + (piece_type - 1) * 64 + square


def flip(king_square: int) -> int:
    """What a mirrored net XORs into every square of a perspective whose own king
    stands on *king_square*: 7 (a horizontal mirror) with the king on files a-d, so
    that the king is seen on files e-h, else 0."""
    return 7 if king_square & 7 < 4 else 0


def output_bucket(pieces: int, buckets: int) -> int:
    """The output bucket of a position with *pieces* pieces on the board (kings
    included) in a net with *buckets* outputs: ``(pieces - 1) * buckets // 32``, at
    most the last, so that with 8 buckets each holds four piece counts, as
    Stockfish's do."""
    return min((pieces - 1) * buckets // 32, buckets - 1)


def classical_share(residual: bool, configured: float) -> float:
    """The multiplier of the classical score added to the network's: 1 for a net
    trained as a residual over it, else ``[eval.nn] classical`` (*configured*; 0: the
    net alone)."""
    return 1.0 if residual else configured


@dataclass(frozen=True)
class NetworkWeights:
    """A network file's contents as stored: the quantised weights (see the module
    docstring for their scales and order) and the metadata. What the trainer reads
    to resume training from a net, and the engine's evaluator runs."""

    hidden: int
    qa: int
    qb: int
    flags: int
    w1: tuple[int, ...]  # INPUTS * hidden
    b1: tuple[int, ...]
    w2: tuple[int, ...]  # per output bucket 2 * hidden: side to move's first
    b2: tuple[int, ...]  # per output bucket
    meta: dict[str, object]

    @property
    def buckets(self) -> int:
        """The number of outputs (:func:`output_bucket`)."""
        return len(self.b2)


class Network:
    """A network file as the engine loaded it: its weights (what
    :class:`blitzaco.network.NetEvaluator` runs) and its name. Immutable."""

    def __init__(self, weights: NetworkWeights, name: str = "") -> None:
        self.name = name
        self.weights = weights
        self.hidden = weights.hidden
        self.meta = weights.meta
        self.residual = bool(weights.flags & FLAG_RESIDUAL)
        self.squared = bool(weights.flags & FLAG_SQUARED)
        self.mirrored = bool(weights.flags & FLAG_MIRRORED)

    def describe(self) -> str:
        """One line for ``info string`` and ``eval``."""
        kind = "residual over the classical evaluation" if self.residual else "a whole evaluation"
        trained = self.meta.get("positions")
        extra = f", trained on {trained:,} positions" if isinstance(trained, int) else ""
        outputs = self.weights.buckets
        shape = f"768x2->{self.hidden}x2->1" + (f" ({outputs} output buckets)" if outputs > 1 else "")
        shape += ", squared clipped ReLU" if self.squared else ""
        shape += ", mirrored by the king's file" if self.mirrored else ""
        return f"network {self.name or '(unnamed)'}: {shape}, {kind}{extra}"


def encode_network(
    w1: list[int], b1: list[int], w2: list[int], b2: int | list[int], *, hidden: int, residual: bool = False,
    meta: dict[str, object] | None = None, qa: int = QA, qb: int = QB, activation: str = "crelu",
    mirrored: bool = False,
) -> bytes:
    """The bytes of a network file (see the module docstring) from quantised weights:
    *b2* one bias per output bucket (an int: one output), *w2* ``2 * hidden`` per
    bucket; *activation* one of :data:`ACTIVATIONS`; *mirrored*: the input mirrored
    by the king's file (:func:`flip`). One output is written as version 1, several
    as version 2."""
    import json  # only the trainer writes networks

    biases = [b2] if isinstance(b2, int) else list(b2)
    buckets = len(biases)
    if not 1 <= buckets <= MAX_BUCKETS:
        raise ValueError(f"1 to {MAX_BUCKETS} output buckets, not {buckets}")
    if len(w1) != INPUTS * hidden or len(b1) != hidden or len(w2) != 2 * hidden * buckets:
        raise ValueError("weights do not match the hidden size")
    body = bytearray(MAGIC)
    version = 1 if buckets == 1 else 2
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r} ({', '.join(ACTIVATIONS)})")
    flags = (FLAG_RESIDUAL if residual else 0) | ACTIVATIONS[activation] | (FLAG_MIRRORED if mirrored else 0)
    body += _HEADER.pack(version, INPUTS, hidden, qa, qb, flags)
    if version == 2:
        body += _BUCKETS.pack(buckets)
    body += struct.pack(f"<{len(w1)}h", *w1)
    body += struct.pack(f"<{hidden}h", *b1)
    body += struct.pack(f"<{len(w2)}i", *w2)
    body += struct.pack(f"<{buckets}i", *biases)
    text = json.dumps(meta or {}, sort_keys=True).encode()
    body += struct.pack("<I", len(text)) + text
    body += struct.pack("<I", zlib.crc32(body))
    return bytes(body)


def decode_network(data: bytes, name: str = "") -> Network:
    """A :class:`Network` from a file's bytes. Raises :class:`NetworkError`."""
    return Network(decode_weights(data), name)


def decode_weights(data: bytes) -> NetworkWeights:
    """The weights and metadata of a network file's bytes, checked as
    :func:`decode_network` checks them. Raises :class:`NetworkError`."""
    import json  # only when a network is switched on (not at start-up)

    if len(data) < len(MAGIC) + _HEADER.size + 12 or data[: len(MAGIC)] != MAGIC:
        raise NetworkError("not a BlitzACO network file")
    (crc,) = struct.unpack_from("<I", data, len(data) - 4)
    if zlib.crc32(data[:-4]) != crc:
        raise NetworkError("checksum mismatch: the file is corrupt")
    offset = len(MAGIC)
    version, inputs, hidden, qa, qb, flags = _HEADER.unpack_from(data, offset)
    offset += _HEADER.size
    if not 1 <= version <= VERSION:
        raise NetworkError(f"format version {version}; this engine reads versions 1 to {VERSION}")
    buckets = 1
    if version == 2:  # the first check left 12 bytes after the header
        (buckets,) = _BUCKETS.unpack_from(data, offset)
        offset += _BUCKETS.size
    if flags & ~_KNOWN_FLAGS:
        raise NetworkError(f"unknown flags {flags:#x}: a network of a newer kind")
    if (inputs != INPUTS or not 1 <= hidden <= MAX_HIDDEN or not 1 <= qa < LANE_OFFSET or qb < 1
            or not 1 <= buckets <= MAX_BUCKETS):
        raise NetworkError(f"unsupported shape: {inputs} inputs, {hidden} hidden, {buckets} output buckets, "
                           f"QA {qa}, QB {qb}")
    sizes = INPUTS * hidden * 2 + hidden * 2 + buckets * (hidden * 8 + 4)
    if len(data) < offset + sizes + 8:
        raise NetworkError("the file is truncated")
    w1 = struct.unpack_from(f"<{INPUTS * hidden}h", data, offset)
    offset += INPUTS * hidden * 2
    b1 = struct.unpack_from(f"<{hidden}h", data, offset)
    offset += hidden * 2
    w2 = struct.unpack_from(f"<{2 * hidden * buckets}i", data, offset)
    offset += hidden * 8 * buckets
    b2 = struct.unpack_from(f"<{buckets}i", data, offset)
    offset += 4 * buckets
    (length,) = struct.unpack_from("<I", data, offset)
    offset += 4
    if offset + length != len(data) - 4:
        raise NetworkError("the metadata length does not match the file")
    try:
        meta = json.loads(data[offset : offset + length].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise NetworkError(f"unreadable metadata: {err}") from None
    if not isinstance(meta, dict):
        raise NetworkError("unreadable metadata: not an object")
    # A first-layer value is at most 32 pieces' weights and the bias: refuse weights
    # that could leave 16 bits rather than evaluate garbage.
    limit = LANE_OFFSET - 1
    if 32 * max(map(abs, w1), default=0) + max(map(abs, b1), default=0) > limit:
        raise NetworkError("first-layer weights too large for 16-bit values")
    return NetworkWeights(hidden, qa, qb, flags, tuple(w1), tuple(b1), tuple(w2), tuple(b2), meta)


def load_network(path: str | Path) -> Network:
    """Read the network file at *path*. Raises :class:`NetworkError` (a missing or
    unreadable file included)."""
    return Network(load_weights(path), Path(path).name)


def load_weights(path: str | Path) -> NetworkWeights:
    """The weights and metadata of the network file at *path* (for the trainer).
    Raises :class:`NetworkError` (a missing or unreadable file included)."""
    from blitzaco.bundled import read_user_file

    try:
        data = read_user_file(path, MAX_FILE_BYTES)
    except OSError as err:
        raise NetworkError(f"cannot read {path}: {err.strerror or err}") from None
    return decode_weights(data)
