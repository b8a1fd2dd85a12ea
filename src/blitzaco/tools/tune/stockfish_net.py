"""Stockfish 15.1's network evaluation computed here, many positions at a time.

The static labels (``tune.py label --static``) are Stockfish's ``eval`` command's
``NNUE evaluation`` line. Asked through the pipe, each costs Stockfish a full trace
(the network evaluated once per piece on the board, to print each piece's worth)
and the worker the reading of about sixty lines of it: that, not the network, held
the static labels to about 2,000 a second on a core. Here the same number comes from
the network Stockfish exports (its ``export_net`` command, so nothing is downloaded
or kept in the repository) evaluated with numpy in one batch per call, integer for
integer as Stockfish's own scalar code does it; :func:`check` holds every answer
against Stockfish's before a run uses it.

Our own code, written after reading how Stockfish 15.1's sources define the network
(none of them copied; the network itself comes from the user's Stockfish):

* the file: a header (version, hash, description), then the feature transformer
  (hash, 1,024 int16 biases, 22,528 x 1,024 int16 weights, 22,528 x 8 int32
  material weights), then eight layer stacks (hash, then for each of three affine
  layers its int32 biases and its int8 weights, one row per output, each row padded
  to a multiple of 32 inputs);
* a feature is a piece (king included) on a square seen from one side's king: the
  board mirrored so that side's king stands on files e-h (and, for Black, flipped
  so that Black plays up the board), one of 32 king squares, one of 11 piece kinds
  (own and other side's pawns ... queens, and one for both kings);
* each side's 1,024 sums (int16, wrapping) are clamped to 0..127 and its two halves
  multiplied pairwise (/128): 512 inputs per side, the side to move's first;
* the stack (and the material bucket) chosen by the piece count, ``(pieces - 1) // 4``;
  its first layer gives 16 outputs: 15 go on squared (``x * x >> 19``, at most 127)
  and clamped (``x >> 6``, 0..127), 30 inputs to a 32-output layer, clamped, then
  one output; the first layer's 16th output is added as it stands (scaled by
  600 x 16 / (127 x 64));
* the evaluation: (half the material buckets' difference + that output) / 16, in
  Stockfish's internal units; the ``eval`` command prints it / 361 with two decimals
  from White's side.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Sequence
from pathlib import Path

import chess
import numpy as np

from blitzaco.tools.tune.labelfile import encode
from blitzaco.tools.tune.stockfish_pipe import Stockfish

__all__ = ["StockfishNet", "NetMismatch", "export", "check", "load", "record_codes", "board_codes"]

_VERSION = 0x7AF32F20
_FEATURES = 22528  # 32 king buckets x 11 piece kinds x 64 squares
_HALF = 1024
_PSQT_BUCKETS = 8
_STACKS = 8
_FC0, _FC1 = 16, 32
_PIECE_KINDS = 11 * 64
#: A position that differs from the one before it on more squares than this is
#: summed from scratch rather than updated.
_UPDATE_SQUARES = 6
#: The ``eval`` command's centipawn scale (Stockfish 15.1's pawn normalisation).
_PAWN = 361


def _affine_hash(outputs: int, previous: int) -> int:
    value = (0xCC03DAE4 + outputs) & 0xFFFFFFFF
    value ^= previous >> 1
    value ^= (previous << 31) & 0xFFFFFFFF
    return value


def _relu_hash(previous: int) -> int:
    return (0x538D24C7 + previous) & 0xFFFFFFFF


def _stack_hash() -> int:
    value = 0xEC42E90D ^ (_HALF * 2)
    value = _affine_hash(_FC0, value)
    value = _relu_hash(value)
    value = _affine_hash(_FC1, value)
    value = _relu_hash(value)
    return _affine_hash(1, value)


_TRANSFORMER_HASH = 0x7F234CB8 ^ (_HALF * 2)
_NETWORK_HASH = _TRANSFORMER_HASH ^ _stack_hash()


def _king_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per king square, for White's and Black's view: the king bucket's offset and
    the mask the piece squares are XORed with (mirror to files e-h; Black's view
    also upside down)."""
    squares = np.arange(64)
    files, ranks = squares & 7, squares >> 3
    column = np.minimum(files, 7 - files)
    bucket_white = ((7 - ranks) * 4 + column) * _PIECE_KINDS
    bucket_black = (ranks * 4 + column) * _PIECE_KINDS
    left = files < 4
    orient_white = np.where(left, 7, 0)
    orient_black = np.where(left, 63, 56)
    return bucket_white, bucket_black, orient_white, orient_black


_BUCKET_WHITE, _BUCKET_BLACK, _ORIENT_WHITE, _ORIENT_BLACK = _king_tables()


def _div(a: np.ndarray, b: int) -> np.ndarray:
    """Integer division rounding toward zero, as C++ divides."""
    quotient = np.abs(a) // b
    return np.where(a < 0, -quotient, quotient)


class NetMismatch(ValueError):
    """The file is not a network of the shape this module evaluates."""


class StockfishNet:
    """The network of a Stockfish 15.1 ``.nnue`` file (see the module's
    description)."""

    def __init__(self, path: str | Path) -> None:
        data = Path(path).read_bytes()
        at = 0

        def take(dtype: str, count: int) -> np.ndarray:
            nonlocal at
            size = np.dtype(dtype).itemsize * count
            if at + size > len(data):
                raise NetMismatch(f"{path}: the file ends early")
            array = np.frombuffer(data, dtype=dtype, count=count, offset=at)
            at += size
            return array

        def word() -> int:
            return int(take("<u4", 1)[0])

        version, header_hash, size = word(), word(), word()
        if version != _VERSION or header_hash != _NETWORK_HASH:
            raise NetMismatch(f"{path}: not a Stockfish 15.1 network (version {version:#x}, hash {header_hash:#x})")
        self.description = bytes(take("u1", size)).decode("utf-8", "replace")
        if word() != _TRANSFORMER_HASH:
            raise NetMismatch(f"{path}: unexpected feature transformer")
        self.biases = take("<i2", _HALF).copy()
        # A last row of zeros: the feature an empty slot points at.
        weights = take("<i2", _FEATURES * _HALF).reshape(_FEATURES, _HALF)
        self.weights = np.vstack([weights, np.zeros((1, _HALF), np.int16)])
        psqt = take("<i4", _FEATURES * _PSQT_BUCKETS).reshape(_FEATURES, _PSQT_BUCKETS)
        self.psqt = np.vstack([psqt, np.zeros((1, _PSQT_BUCKETS), np.int32)]).astype(np.int64)
        self.stacks = []
        for _ in range(_STACKS):
            if word() != _stack_hash():
                raise NetMismatch(f"{path}: unexpected layer stack")
            b0 = take("<i4", _FC0).astype(np.int64)
            w0 = take("i1", _FC0 * _HALF).reshape(_FC0, _HALF).astype(np.float64)
            b1 = take("<i4", _FC1).astype(np.int64)
            w1 = take("i1", _FC1 * 32).reshape(_FC1, 32)[:, :30].astype(np.float64)
            b2 = take("<i4", 1).astype(np.int64)
            w2 = take("i1", 32).astype(np.float64)
            self.stacks.append((b0, w0.T.copy(), b1, w1.T.copy(), int(b2[0]), w2))
        if at != len(data):
            raise NetMismatch(f"{path}: {len(data) - at} bytes after the network")

    def _accumulate(self, codes: np.ndarray, view: int, king: np.ndarray, bucket: np.ndarray,
                    orient: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One side's 1,024 sums (int16) and material buckets of each position, as
        Stockfish keeps them: a position whose king (this side's) stands where the
        previous one's did and which differs from it on a few squares is the previous
        one's sums updated by those squares' features; the others are summed from
        scratch. (The label positions come in runs of a game position and its
        children, a move apart.) The sums wrap as Stockfish's int16 do, so updating
        and summing afresh give the same numbers."""
        count = len(codes)

        def features(rows: np.ndarray, squares: np.ndarray, pieces: np.ndarray) -> np.ndarray:
            at = king[rows]
            kind = (pieces & 7) - 1
            other = (pieces >> 3 != view).astype(np.int64)
            found = (squares ^ orient[at]) + np.where(kind == 5, 10, 2 * kind + other) * 64 + bucket[at]
            return np.where(pieces != 0, found, _FEATURES)  # an empty square: the zero row

        def gather(added: np.ndarray, removed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
            """The sums of the rows of features *added*, less those *removed*."""
            total = np.zeros((len(added), _HALF), np.int16)
            material = np.zeros((len(added), _PSQT_BUCKETS), np.int64)
            for slot in added.T:
                total += self.weights[slot]
                material += self.psqt[slot]
            for slot in (removed.T if removed is not None else ()):
                total -= self.weights[slot]
                material -= self.psqt[slot]
            return total, material

        def padded(rows: np.ndarray, values: np.ndarray, height: int) -> np.ndarray:
            """The *values* of each row (of *height*) side by side, padded with the
            zero feature; *rows* ascending."""
            column = np.arange(len(rows)) - np.searchsorted(rows, rows)
            table = np.full((height, int(column.max(initial=-1)) + 1), _FEATURES)
            table[rows, column] = values
            return table

        changed = np.zeros((count, 64), bool)
        changed[1:] = codes[1:] != codes[:-1]
        fresh = np.ones(count, bool)
        fresh[1:] = (king[1:] != king[:-1]) | (changed[1:].sum(axis=1) > _UPDATE_SQUARES)
        steps = np.zeros((count, _HALF), np.int16)
        step_material = np.zeros((count, _PSQT_BUCKETS), np.int64)
        # From scratch: every piece, plus the biases.
        anew = np.flatnonzero(fresh)
        rows, squares = np.nonzero(codes[anew])
        table = padded(rows, features(anew[rows], squares, codes[anew][rows, squares]), len(anew))
        total, material = gather(table)
        steps[anew] = total + self.biases
        step_material[anew] = material
        # Updates: the features of the squares that changed, added and taken away.
        update = np.flatnonzero(~fresh)
        if len(update):
            rows, squares = np.nonzero(changed[update])
            where = update[rows]
            added = padded(rows, features(where, squares, codes[where, squares]), len(update))
            removed = padded(rows, features(where, squares, codes[where - 1, squares]), len(update))
            steps[update], step_material[update] = gather(added, removed)
        # Each position: the running sum since its run's first (fresh) position, as
        # the running sum less the one before that position (the sums start with a
        # row of zeros, the one before the first position).
        running = np.zeros((count + 1, _HALF), np.int16)
        np.cumsum(steps, axis=0, dtype=np.int16, out=running[1:])
        running_material = np.zeros((count + 1, _PSQT_BUCKETS), np.int64)
        np.cumsum(step_material, axis=0, out=running_material[1:])
        start = np.maximum.accumulate(np.where(fresh, np.arange(count), 0))
        return running[1:] - running[start], running_material[1:] - running_material[start]

    def internal(self, codes: np.ndarray, white: np.ndarray) -> np.ndarray:
        """Stockfish's ``NNUE::evaluate`` (internal units, the side to move's view)
        of each position: *codes* (n x 64, A1 first) holds each square's piece as
        the label records do (type 1-6, + 8 for Black, 0 empty), *white* whether
        White is to move. Every position has both kings."""
        codes = np.asarray(codes, dtype=np.int64)
        white = np.asarray(white, dtype=bool)
        count = len(codes)
        sums = []
        materials = []
        for view, piece, bucket, orient in ((0, chess.KING, _BUCKET_WHITE, _ORIENT_WHITE),
                                            (1, chess.KING + 8, _BUCKET_BLACK, _ORIENT_BLACK)):
            king = np.argmax(codes == piece, axis=1)
            total, material = self._accumulate(codes, view, king, bucket, orient)
            sums.append(total.astype(np.int32))
            materials.append(material)
        mover = np.where(white[:, None], sums[0], sums[1])
        waiting = np.where(white[:, None], sums[1], sums[0])
        halves = []
        for side in (mover, waiting):
            clamped = np.clip(side, 0, 127)
            halves.append(clamped[:, :_HALF // 2] * clamped[:, _HALF // 2:] // 128)
        inputs = np.concatenate(halves, axis=1).astype(np.float64)
        stack = (np.count_nonzero(codes, axis=1) - 1) // 4
        white_material, black_material = (side[np.arange(count), stack] for side in materials)
        material = _div(np.where(white, white_material - black_material, black_material - white_material), 2)
        positional = np.zeros(count, np.int64)
        for index in np.unique(stack):
            chosen = stack == index
            b0, w0, b1, w1, b2, w2 = self.stacks[index]
            # Exact in float64: every product and sum is an integer far below 2**53.
            first = np.rint(inputs[chosen] @ w0).astype(np.int64) + b0
            squared = np.minimum(127, first[:, :15] * first[:, :15] >> 19)
            clamped = np.clip(first[:, :15] >> 6, 0, 127)
            second = np.rint(np.concatenate([squared, clamped], axis=1).astype(np.float64) @ w1).astype(np.int64) + b1
            third = np.rint(np.clip(second >> 6, 0, 127).astype(np.float64) @ w2).astype(np.int64) + b2
            forward = _div(first[:, 15] * (600 * 16), 127 * 64)
            positional[chosen] = third + forward
        return _div(material + positional, 16)

    def labels(self, codes: np.ndarray, white: np.ndarray) -> list[int]:
        """The static labels of the positions (see :meth:`internal`): the ``eval``
        command's ``NNUE evaluation`` line read as the pipe reads it (pawns from
        White's side, two decimals), in centipawns from the side to move's view."""
        values = []
        for value, turn in zip(self.internal(codes, white).tolist(), np.asarray(white).tolist(), strict=True):
            shown = value if turn else -value
            centipawns = round(100 * float(f"{shown / _PAWN:.2f}"))
            values.append(centipawns if turn else -centipawns)
        return values


def record_codes(records: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The :meth:`StockfishNet.internal` arrays of label records
    (:mod:`~blitzaco.tools.tune.labelfile`'s, all of one length; only their first 33
    bytes are read: the squares two a byte, the lower nibble first, then the flags
    whose lowest bit is White to move)."""
    heads = np.frombuffer(b"".join(records), dtype=np.uint8).reshape(len(records), -1)
    codes = np.empty((len(heads), 64), dtype=np.int64)
    codes[:, 0::2] = heads[:, :32] & 15
    codes[:, 1::2] = heads[:, :32] >> 4
    return codes, (heads[:, 32] & 1).astype(bool)


def export(stockfish: str, path: str | Path) -> Path:
    """Have *stockfish* write its network to *path* (its ``export_net`` command)."""
    path = Path(path)
    answer = subprocess.run([stockfish], input=f"export_net {path}\nquit\n", capture_output=True,
                            text=True, timeout=120, check=False).stdout
    if not path.exists() or "saved successfully" not in answer:
        raise NetMismatch(f"{stockfish} did not export its network ({answer.strip()[-200:]!r})")
    return path


def sample_positions(count: int, seed: int = 0) -> list[chess.Board]:
    """*count* positions not in check, from random games (seeded): a spread of piece
    counts, so that every layer stack is met."""
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    while len(boards) < count:
        board = chess.Board()
        for _ in range(rng.randrange(1, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_check() and not board.is_game_over():
            boards.append(board.copy(stack=False))
    return boards


def board_codes(boards: Sequence[chess.Board]) -> tuple[np.ndarray, np.ndarray]:
    """The :meth:`StockfishNet.internal` arrays of python-chess boards."""
    return record_codes([encode(board, 0, None) for board in boards])


def check(net: StockfishNet, stockfish: str, count: int = 200, seed: int = 0) -> int:
    """Compare *net*'s labels with *stockfish*'s own ``eval`` on *count* positions of
    random games; raise :class:`NetMismatch` at the first difference. Returns the
    number compared."""
    boards = sample_positions(count, seed)
    engine = Stockfish(stockfish)
    try:
        piped = [engine.static_eval(board) for board in boards]
    finally:
        engine.quit()
    ours = net.labels(*board_codes(boards))
    for board, theirs, mine in zip(boards, piped, ours, strict=True):
        if theirs != mine:
            raise NetMismatch(f"{board.fen()}: Stockfish says {theirs}, the exported network {mine}")
    return len(boards)


def load(stockfish: str, folder: str | Path) -> tuple[StockfishNet, Path]:
    """Export *stockfish*'s network into *folder*, read it and :func:`check` it.
    Returns the network and the file's path."""
    path = export(stockfish, Path(folder) / "stockfish.nnue")
    net = StockfishNet(path)
    check(net, stockfish)
    return net, path
