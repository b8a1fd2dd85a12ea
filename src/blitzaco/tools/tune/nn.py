"""Training the network term with torch (``tune.py train-net``).

The data is a label file of :mod:`blitzaco.tools.tune.labels` (quiet positions, each
with Stockfish's score and the game's result). The network is the one
:mod:`blitzaco.nnue` runs: 768 piece-square inputs per perspective into a shared
first layer of ``hidden`` neurons, both perspectives clipped to [0, 1] (the side to
move's first) into one linear output, the score in pawns for the side to move.

The loss is Stockfish's own trainer's: the mean squared difference, in win
probability, between ``sigmoid(100 * output / scale)`` and a blend of
``sigmoid(stockfish_cp / scale)`` (weight ``lam``) and the game's result for the side
to move. With ``residual`` the classical evaluation is added to the output before
the sigmoid, so the network learns what the classical evaluation misses; without it
the network replaces the classical evaluation (``assets/net.bin``).

Training can start from a net (``start``, ``train-net --resume``): its quantised
weights, divided by their scales, are the model's first weights (so zero epochs give
back the same file weights bit for bit), Adam's moments start afresh, and the
learning rate is the caller's (``train-net`` defaults to the one the net's last training
started from: measured against lower ones, see :data:`FRESH_LR`).
:mod:`blitzaco.tools.tune.record` keeps what every training run did.

The first layer's weights are kept within :data:`blitzaco.nnue.WEIGHT_LIMIT` after
every step, so that the engine's 16-bit lanes cannot overflow; the last records of
the file (whole games, the file is written game by game) are held out to choose the
epoch. The quantised network is written in the format :mod:`blitzaco.nnue`
documents. torch is imported here only, never by the engine.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chess
import numpy as np

from blitzaco.nnue import (
    ACTIVATIONS,
    BIAS_LIMIT,
    FLAG_MIRRORED,
    FLAG_SQUARED,
    INPUTS,
    QA,
    QB,
    WEIGHT_LIMIT,
    NetworkWeights,
    encode_network,
    feature,
    flip,
)
from blitzaco.tools.tune.labelfile import record_bytes, run_state
from blitzaco.tools.tune.labels import (
    NO_RESULT,
    RECORD_BYTES,
    TARGET_LAM,
    TARGET_SCALE,
    count_labels,
    known_result,
    target,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "LabelArrays", "read_records", "record_outcomes", "square_codes",
    "load_arrays", "board_features", "TrainSettings", "train",
    "quantise", "float_score",
    "EvalCheck", "check_evaluations", "classical_scores", "spectral_inputs", "concatenate", "take", "start_weights",
    "quantisation_error", "held_out_count", "output_bucket", "finished_records", "fitted_then_held",
    "FRESH_LR", "LR_FLOOR",
]

#: Adam's learning rate for a net trained from random weights (``train-net``'s
#: default). A resumed net starts again from the rate its last training started from:
#: the data it learned from is gone, so nothing can be replayed, and a lower rate was
#: measured to forget a little less of the old data but learn less of the new. The
#: measurement (hidden 128, batch 2048, 8 epochs, 2026-11-26): a net trained on 50,000
#: positions at 5e-3, then resumed on the next 50,000 at 5e-3, 2e-3, 1e-3 and 5e-4:
#: held-out loss on 12,500 later positions 0.01063, 0.01084, 0.01081, 0.01072 (on the
#: first half's held-out 0.01360, 0.01343, 0.01352, 0.01339; on the second's 0.01209,
#: 0.01237, 0.01300, 0.01323); trained on both halves at once 0.01023 (keeping the
#: data would be worth about 4 % at that size). The cosine schedule ends at the rate
#: divided by LR_FLOOR.
FRESH_LR = 2e-3
LR_FLOOR = 20

#: Index of the zero row that pads a position's feature list to 32 entries.
PAD = INPUTS
MAX_PIECES = 32
_DTYPE = np.dtype([("squares", "u1", (32,)), ("flags", "u1"), ("ep", "u1"), ("score", "<i2"), ("result", "u1")])
assert _DTYPE.itemsize == RECORD_BYTES


@dataclass
class LabelArrays:
    """A label file as arrays: each position's features from both perspectives (the
    side to move's first), Stockfish's score and the result, both for the side to move."""

    stm: np.ndarray  # (n, 32) int16 feature indices, PAD-padded
    other: np.ndarray
    score: np.ndarray  # (n,) centipawns
    result: np.ndarray  # (n,) 0, 0.5, 1
    white: np.ndarray  # (n,) bool: White to move
    #: Features mirrored by each perspective's king file (:func:`blitzaco.nnue.flip`).
    mirrored: bool = False

    def __len__(self) -> int:
        return len(self.score)


def take(data: LabelArrays, index: slice | np.ndarray) -> LabelArrays:
    """The positions *index* of *data*."""
    return LabelArrays(data.stm[index], data.other[index], data.score[index], data.result[index], data.white[index],
                       data.mirrored)


def concatenate(parts: list[LabelArrays]) -> LabelArrays:
    """The positions of *parts*, one after the other (all mirrored or none)."""
    if len({part.mirrored for part in parts}) > 1:
        raise ValueError("mirrored and unmirrored features cannot be trained together")
    stm, other, score, result, white = (np.concatenate([getattr(part, name) for part in parts])
                                        for name in ("stm", "other", "score", "result", "white"))
    return LabelArrays(stm, other, score, result, white, parts[0].mirrored)


def held_out_count(count: int, share: float) -> int:
    """How many of a label file's first *count* records are held out: the last
    *share* of them, at least one (``train-net``, ``check-eval`` and the sweep split
    alike)."""
    return max(1, int(count * share))


def finished_records(path: str | Path, state: dict[str, Any] | None = None) -> int:
    """The complete records of the label file at *path*: as many as it holds, or
    fewer where the run's state (*state*, else :func:`~blitzaco.tools.tune.labelfile.run_state`'s)
    says so: a record being written is not complete."""
    count = count_labels(path)
    if state is None:
        state = run_state(path)
    return min(count, int(state.get("positions", count)))


def fitted_then_held(parts: list[tuple[LabelArrays, int]]) -> LabelArrays:
    """The fitted records of every file (each part's first *cut*), then the held-out
    ones of every file: the order :func:`train` takes with ``held`` their number."""
    return concatenate([take(arrays, slice(0, cut)) for arrays, cut in parts]
                       + [take(arrays, slice(cut, None)) for arrays, cut in parts])


def read_records(path: str | Path, limit: int | None = None, start: int = 0) -> np.ndarray:
    """The records of the label file at *path*, either kind (the first *limit*; from
    record *start*) as a structured array (fields squares, flags, ep, score, result).
    A record cut short at the end (a run stopped while writing) is not read."""
    data = record_bytes(path)
    offset = start * RECORD_BYTES
    count = (len(data) - offset) // RECORD_BYTES
    if limit is not None:
        count = min(count, limit)
    count = max(count, 0)
    return np.frombuffer(data, _DTYPE, count=count, offset=offset if count else 0)


def square_codes(records: np.ndarray) -> np.ndarray:
    """Each record's 64 squares (python-chess's order) as piece codes: the type (0:
    empty), plus 8 for Black."""
    packed = records["squares"]
    codes = np.empty((len(records), 64), dtype=np.int64)
    codes[:, 0::2] = packed & 15
    codes[:, 1::2] = packed >> 4
    return codes


#: Records turned into features at a time by one thread of :func:`load_arrays` (its
#: peak memory: about 4 KB a record of each chunk under way, beside the 140 bytes a
#: record it keeps).
LOAD_CHUNK = 1 << 16


def _features_into(records: np.ndarray, stm: np.ndarray, other: np.ndarray, mirror: bool = False) -> None:
    """Write the feature indices of *records* into *stm* and *other* (views of the
    same length): the side to move's perspective, then the other; *mirror*: each
    perspective's squares mirrored horizontally when its own king is on files a-d
    (:func:`blitzaco.nnue.flip`)."""
    codes = square_codes(records)
    square = np.arange(64, dtype=np.int64)
    piece_type = codes & 7
    black = codes >> 3
    empty = piece_type == 0
    base = (piece_type - 1) * 64
    white_square, black_square = square[None, :], square[None, :] ^ 56
    if mirror:  # each side's king square (a record has both kings), then the flip
        white_flip = np.where((np.argmax(codes == chess.KING, axis=1) & 7) < 4, 7, 0)
        black_flip = np.where((np.argmax(codes == chess.KING | 8, axis=1) & 7) < 4, 7, 0)
        white_square = white_square ^ white_flip[:, None]
        black_square = black_square ^ black_flip[:, None]
    from_white = np.where(empty, PAD, black * 384 + base + white_square)
    from_black = np.where(empty, PAD, (1 - black) * 384 + base + black_square)
    # The occupied squares first (PAD is the largest index), then cut to 32.
    from_white = np.sort(from_white, axis=1)[:, :MAX_PIECES]
    from_black = np.sort(from_black, axis=1)[:, :MAX_PIECES]
    white = (records["flags"] & 1).astype(bool)[:, None]
    stm[:] = np.where(white, from_white, from_black)
    other[:] = np.where(white, from_black, from_white)


def load_arrays(path: str | Path, limit: int | None = None, start: int = 0, *,
                threads: int | None = None, mirror: bool = False) -> LabelArrays:
    """The records of the label file at *path* (the first *limit*; from record
    *start*), as arrays (feature indices as int16: 7.6 million positions in about a
    gigabyte). A record cut short at the end (a run stopped while writing) is not
    read. The features are computed in chunks on *threads* threads (default: one a
    CPU; numpy lets go of the interpreter's lock), the same arrays on any number;
    *mirror*: mirrored by each perspective's king file (:func:`_features_into`)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    records = read_records(path, limit, start)
    n = len(records)
    stm = np.empty((n, MAX_PIECES), dtype=np.int16)
    other = np.empty((n, MAX_PIECES), dtype=np.int16)
    spans = [slice(at, at + LOAD_CHUNK) for at in range(0, n, LOAD_CHUNK)]
    with ThreadPoolExecutor(max_workers=max(1, threads or os.cpu_count() or 1)) as pool:
        # list(): a chunk's exception is raised here
        list(pool.map(lambda span: _features_into(records[span], stm[span], other[span], mirror), spans))
    score, result, white = record_outcomes(records)
    return LabelArrays(stm=stm, other=other, score=score, result=result, white=white, mirrored=mirror)


def record_outcomes(records: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each record's score and result for the side to move (float32; a position
    without a game result, off the game's line, stands for its score alone) and
    whether White is to move."""
    white = (records["flags"] & 1).astype(bool)
    result_white = np.where(records["result"] == NO_RESULT, np.nan, records["result"].astype(np.float32) / 2)
    score = records["score"].astype(np.float32)
    result = known_result(score, np.where(white, result_white, 1 - result_white))
    return score, result.astype(np.float32), white


def board_features(board: chess.Board, mirror: bool = False) -> tuple[list[int], list[int]]:
    """The feature indices of *board* from the side to move's and the other side's
    perspectives, PAD-padded to 32 (the trainer's input for one position); *mirror*:
    mirrored by each perspective's king file (:func:`blitzaco.nnue.flip`)."""
    pieces = board.piece_map().items()

    def flip_of(perspective: bool) -> int:
        king = board.king(perspective)
        return flip(king) if mirror and king is not None else 0

    own_flip, other_flip = flip_of(board.turn), flip_of(not board.turn)
    own = [feature(board.turn, p.color, p.piece_type, sq, own_flip) for sq, p in pieces]
    other = [feature(not board.turn, p.color, p.piece_type, sq, other_flip) for sq, p in pieces]
    pad = [PAD] * (MAX_PIECES - len(own))
    return own + pad, other + pad


#: The first of the own king's feature indices in a perspective's list (then one per
#: square, mirrored for Black).
_OWN_KING = feature(chess.WHITE, chess.WHITE, chess.KING, chess.A1)


def king_bucket(square: np.ndarray, buckets: int) -> np.ndarray:
    """The king bucket of each own-king *square* (the perspective's own, a1 = 0):
    1 bucket: all the same; 2: the queen's half of the board or the king's (files a-d,
    e-h); 4: those halves, each split into the first two ranks and the rest."""
    if buckets == 1:
        return np.zeros_like(square)
    if buckets == 2:
        return (square & 7) >> 2
    if buckets == 4:
        return ((square & 7) >> 2) + 2 * ((square >> 3) >= 2)
    raise ValueError(f"king buckets are 1, 2 or 4, not {buckets}")


def king_bucketed(data: LabelArrays, buckets: int) -> LabelArrays:
    """*data* with each perspective's inputs split by its own king's bucket (a study of
    whether king buckets pay: the feature ``f`` becomes ``bucket * 768 + f``, the pad
    ``768 * buckets``). The engine reads 768 inputs, so such a net is compared by
    held-out loss only."""
    if buckets == 1:
        return data
    lists = []
    for features in (data.stm, data.other):
        own_king = (features >= _OWN_KING) & (features < _OWN_KING + 64)
        if not np.all(own_king.sum(axis=1) == 1):
            raise ValueError("a position without exactly one king per side")
        bucket = king_bucket(np.where(own_king, features - _OWN_KING, 0).max(axis=1), buckets)
        lists.append(np.where(features == PAD, INPUTS * buckets, bucket[:, None] * INPUTS + features).astype(np.int16))
    return LabelArrays(lists[0], lists[1], data.score, data.result, data.white, data.mirrored)


@dataclass(frozen=True)
class TrainSettings:
    hidden: int = 32
    epochs: int = 20
    batch: int = 16384
    lr: float = FRESH_LR
    lam: float = TARGET_LAM  # weight of Stockfish's score against the result in the target
    scale: float = TARGET_SCALE  # centipawns per unit of the sigmoid's argument
    held_out: float = 0.02
    seed: int = 1
    residual: bool = False
    #: Stop after the epoch that ends past this many seconds of training (0: never).
    max_seconds: float = 0.0
    #: Where torch trains: "cpu", "cuda", or "auto" (a GPU when torch sees one). The
    #: returned model is on the CPU either way.
    device: str = "cpu"
    #: Decoupled weight decay (AdamW) per step, times the learning rate; 0: plain Adam.
    weight_decay: float = 0.0
    #: Inputs split by the own king's bucket (:func:`king_bucket`; a study: the
    #: engine's format has 768 inputs, so only 1 can be quantised).
    king_buckets: int = 1
    #: Output layers chosen by the number of pieces on the board
    #: (:func:`output_bucket`; the file's version 2).
    output_buckets: int = 1
    #: The first layer's activation (:data:`blitzaco.nnue.ACTIVATIONS`): "crelu" the
    #: clipped ReLU, "screlu" its square.
    activation: str = "crelu"
    #: Each perspective's input mirrored by its king's file (the file's mirrored flag,
    #: :func:`blitzaco.nnue.flip`).
    mirror: bool = False


def torch_device(name: str) -> str:
    """The torch device that *name* ("cpu", "cuda", "auto") stands for."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


#: Adam's settings other than the learning rate (torch's defaults), for the record.
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


def output_bucket(pieces: Any, buckets: int) -> Any:
    """:func:`blitzaco.nnue.output_bucket` of arrays: the output bucket of positions
    with *pieces* pieces on the board (kings included), ``(pieces - 1) * buckets //
    32``, so that with 8 buckets each holds four piece counts, as Stockfish's do."""
    return np.minimum((np.asarray(pieces) - 1) * buckets // 32, buckets - 1)


def _model(hidden: int, extra: int = 0, inputs: int = INPUTS, buckets: int = 1, activation: str = "crelu",
           mirror: bool = False) -> Any:
    import torch
    from torch import nn

    _onehots: dict[tuple[Any, ...], tuple[torch.Tensor, torch.Tensor]] = {}

    class _FeatureSum(torch.autograd.Function):  # type: ignore[misc]
        """The feature transformer's sums: each row the sum of the weight rows its
        indices name (*inputs* pads and adds nothing), as ``nn.EmbeddingBag``'s
        "sum". The gradient of the weight is one dense product, the batch's one-hot
        rows transposed times the output's gradient: on two CPU cores the streamed
        training runs about a quarter faster than with the bag's own backward."""

        @staticmethod
        def forward(ctx: Any, weight: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
            ctx.save_for_backward(index)
            ctx.rows = weight.shape[0]
            return nn.functional.embedding_bag(index, weight, mode="sum", padding_idx=inputs)

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
            (index,) = ctx.saved_tensors
            # One zeroed one-hot matrix kept between steps (a new one each step
            # costs as much as the product, in page faults), zeroed again after use
            # where it was written.
            key = (tuple(index.shape), ctx.rows, grad.dtype, grad.device)
            if key not in _onehots:
                _onehots.clear()
                _onehots[key] = (torch.zeros(index.shape[0], ctx.rows, dtype=grad.dtype, device=grad.device),
                                 torch.ones(index.shape, dtype=grad.dtype, device=grad.device))
            onehot, ones = _onehots[key]
            onehot.scatter_add_(1, index, ones)
            weight_grad = onehot.t() @ grad
            onehot.scatter_(1, index, 0.0)
            weight_grad[inputs] = 0.0  # the padding row stays zero
            return weight_grad, None

    class Net(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            if activation not in ACTIVATIONS:
                raise ValueError(f"unknown activation {activation!r} ({', '.join(ACTIVATIONS)})")
            self.activation = activation
            self.mirror = mirror  # what its inputs are (quantise writes it as the file's flag)
            self.ft = nn.EmbeddingBag(inputs + 1, hidden, mode="sum", padding_idx=inputs)
            self.b1 = nn.Parameter(torch.full((hidden,), 0.5))
            self.out = nn.Linear(2 * hidden, buckets)
            # Dense extra inputs (the spectral features, see spectral_inputs) into the
            # first layer, each perspective reading its own side's first.
            self.extra = nn.Linear(2 * extra, hidden, bias=False) if extra else None
            with torch.no_grad():
                self.ft.weight.normal_(0.0, 0.05)
                self.ft.weight[inputs].zero_()
                self.out.weight.normal_(0.0, 0.1)
                self.out.bias.zero_()

        def forward(self, stm: torch.Tensor, other: torch.Tensor, dense: torch.Tensor | None = None,
                    bucket: torch.Tensor | None = None) -> torch.Tensor:
            # Both perspectives in one bag (int16 in memory, int64 for the bag).
            both = _FeatureSum.apply(self.ft.weight, torch.cat([stm, other]).long())
            a, b = both.chunk(2)  # two halves, also of an empty batch
            a = a + self.b1
            b = b + self.b1
            if self.extra is not None and dense is not None:
                half = dense.shape[1] // 2
                a = a + self.extra(dense)
                b = b + self.extra(torch.cat([dense[:, half:], dense[:, :half]], dim=1))
            active = torch.cat([a, b], dim=1).clamp(0.0, 1.0)
            if self.activation == "screlu":
                active = active * active
            out = self.out(active)
            if bucket is None:
                return out.squeeze(1)
            return out.gather(1, bucket[:, None]).squeeze(1)

        def clip(self) -> None:
            with torch.no_grad():
                self.ft.weight.clamp_(-WEIGHT_LIMIT, WEIGHT_LIMIT)
                self.b1.clamp_(-BIAS_LIMIT, BIAS_LIMIT)

    return Net()


def classical_scores(path: str | Path, limit: int | None = None) -> np.ndarray:
    """The classical evaluation (shipped weights, side to move's view, centipawns) of
    every record of a label file, for residual training."""
    from blitzaco.board import Board
    from blitzaco.classical import Classical
    from blitzaco.config import EvalConfig
    from blitzaco.tools.tune.labels import read_labels

    classical = Classical(EvalConfig())
    scores = []
    for record in itertools.islice(read_labels(path), limit):
        own = Board.from_chess(record.board)
        classical.reset(own)
        scores.append(int(classical.evaluate(own)))
    return np.asarray(scores, dtype=np.float32)


def spectral_inputs(path: str | Path, limit: int | None = None) -> np.ndarray:
    """The spectral features (:mod:`blitzaco.spectral`, seven a side) of every record
    of a label file, the side to move's first: candidate extra inputs of the network
    (``train-net --spectral``). About half a millisecond a position."""
    from dataclasses import astuple

    from blitzaco.spectral import position_features
    from blitzaco.tools.tune.labels import read_labels

    rows = []
    for record in itertools.islice(read_labels(path), limit):
        white, black = position_features(record.board)
        own, other = (white, black) if record.board.turn else (black, white)
        rows.append(astuple(own) + astuple(other))
    return np.asarray(rows, dtype=np.float32)


def start_weights(model: Any, start: NetworkWeights) -> None:
    """Set *model*'s weights to the quantised net *start*'s, each divided by its scale.

    A model wider than *start* is *start* widened: its first neurons are *start*'s,
    the others keep their random feature weights and get output weights of zero, so
    the model's output is *start*'s until training gives the new neurons a say."""
    import torch

    hidden = start.hidden
    wide = model.ft.weight.shape[1]
    if start.qa != QA or start.qb != QB:
        raise ValueError(f"the start net's scales are QA {start.qa}, QB {start.qb}; the trainer's {QA}, {QB}")
    if wide < hidden or model.extra is not None:
        raise ValueError(f"the start net has {hidden} hidden neurons")
    if model.out.weight.shape[0] != start.buckets:
        raise ValueError(f"the start net has {start.buckets} output buckets, the model {model.out.weight.shape[0]}")
    if bool(start.flags & FLAG_SQUARED) != (model.activation == "screlu"):
        raise ValueError(f"the start net's activation is not {model.activation}")
    if bool(start.flags & FLAG_MIRRORED) != model.mirror:
        raise ValueError(f"the start net is {'' if start.flags & FLAG_MIRRORED else 'not '}mirrored by the king's file")
    with torch.no_grad():
        w1 = torch.tensor(start.w1, dtype=torch.float64).reshape(INPUTS, hidden) / QA
        model.ft.weight[:INPUTS, :hidden] = w1.float()
        model.ft.weight[INPUTS].zero_()
        model.b1[:hidden] = (torch.tensor(start.b1, dtype=torch.float64) / QA).float()
        w2 = torch.tensor(start.w2, dtype=torch.float64).reshape(start.buckets, 2, hidden) / QB
        model.out.weight.zero_()
        model.out.weight.view(start.buckets, 2, wide)[:, :, :hidden] = w2.float()
        model.out.bias[:] = (torch.tensor(start.b2, dtype=torch.float64) / (QA * QB)).float()


def train(
    data: LabelArrays, settings: TrainSettings, *, base: np.ndarray | None = None,
    dense: np.ndarray | None = None, log: Any = print, held: int | None = None,
    start: NetworkWeights | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Train a network on *data*; *base* is the classical score (side to move,
    centipawns) for residual training, *dense* extra inputs per position (side to
    move's half first; standardised on the fitted positions here). The last *held*
    positions (default: the last ``settings.held_out`` share) are held out to choose
    the epoch. *start* is a net to start from (its hidden size must be
    ``settings.hidden``), else the weights are random. Returns the model of the best
    held-out epoch (epoch 0: the start) and a summary."""
    import torch

    torch.manual_seed(settings.seed)
    if settings.king_buckets != 1 and (start is not None or dense is not None):
        raise ValueError("king buckets are a study from random weights, without extra inputs")
    if settings.output_buckets != 1 and settings.residual:
        raise ValueError("output buckets are for a replacing net")
    if data.mirrored != settings.mirror:
        raise ValueError("the features' mirroring is not the settings'")
    buckets_of = output_bucket((data.stm != PAD).sum(axis=1), settings.output_buckets) \
        if settings.output_buckets != 1 else None
    data = king_bucketed(data, settings.king_buckets)
    n = len(data)
    if held is None:
        held = held_out_count(n, settings.held_out) if n > 1 else 0
    if not 0 <= held <= n:
        raise ValueError(f"{held} held-out positions of {n}")
    fit = n - held
    device = torch.device(torch_device(settings.device))
    stm = torch.from_numpy(data.stm).to(device)
    other = torch.from_numpy(data.other).to(device)
    expected = torch.from_numpy(target(data.score, data.result, settings.lam, settings.scale).astype(np.float32))
    expected = expected.to(device)
    offset = (torch.from_numpy((base / 100.0).astype(np.float32)) if base is not None else torch.zeros(n)).to(device)
    extra: torch.Tensor | None = None
    if dense is not None:
        half = dense.shape[1] // 2
        both = np.concatenate([dense[:fit, :half], dense[:fit, half:]])  # one scale per feature, both sides
        mean, std = both.mean(axis=0), both.std(axis=0) + 1e-6
        extra = torch.from_numpy(((dense - np.tile(mean, 2)) / np.tile(std, 2)).astype(np.float32)).to(device)
    model = _model(settings.hidden, 0 if dense is None else dense.shape[1] // 2, INPUTS * settings.king_buckets,
                   settings.output_buckets, settings.activation, settings.mirror)
    buckets = None if buckets_of is None else torch.from_numpy(buckets_of.astype(np.int64)).to(device)
    if start is not None:
        start_weights(model, start)
    model.to(device)
    optimiser: torch.optim.Optimizer
    if settings.weight_decay:
        optimiser = torch.optim.AdamW(model.parameters(), lr=settings.lr, betas=ADAM_BETAS, eps=ADAM_EPS,
                                      weight_decay=settings.weight_decay)
    else:
        optimiser = torch.optim.Adam(model.parameters(), lr=settings.lr, betas=ADAM_BETAS, eps=ADAM_EPS)
    steps = settings.epochs * math.ceil(fit / settings.batch)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, max(1, steps), eta_min=settings.lr / LR_FLOOR)
    k = 100.0 / settings.scale

    def loss_of(index: torch.Tensor) -> torch.Tensor:
        output = model(stm[index], other[index], None if extra is None else extra[index],
                       None if buckets is None else buckets[index]) + offset[index]
        return ((torch.sigmoid(output * k) - expected[index]) ** 2).mean()

    def held_out_loss() -> float:
        if not held:
            return float("nan")
        with torch.no_grad():
            index = torch.arange(fit, n, device=device)
            return float(sum(loss_of(chunk) * len(chunk) for chunk in index.split(65536)) / held)

    best = (held_out_loss(), {key: value.clone() for key, value in model.state_dict().items()}, 0)
    first_loss = best[0]
    log(f"{fit} positions to fit, {held} held out; hidden {settings.hidden}; held-out loss {best[0]:.6f} at start")
    started = time.perf_counter()
    history = []
    for epoch in range(1, settings.epochs + 1):
        if settings.max_seconds and time.perf_counter() - started > settings.max_seconds:
            log(f"stopped after epoch {epoch - 1}: the {settings.max_seconds:.0f} s allowed are spent")
            break
        order = torch.randperm(fit).to(device)  # drawn on the CPU: the same order on every device
        total = 0.0
        for index in order.split(settings.batch):
            optimiser.zero_grad()
            loss = loss_of(index)
            loss.backward()
            optimiser.step()
            schedule.step()
            model.clip()
            total += loss.item() * len(index)
        check = held_out_loss()
        history.append((epoch, total / fit, check, round(time.perf_counter() - started, 1)))
        log(f"epoch {epoch}: train {total / fit:.6f}, held out {check:.6f} ({time.perf_counter() - started:.0f} s)")
        if not check >= best[0]:
            best = (check, {key: value.clone() for key, value in model.state_dict().items()}, epoch)
    model.load_state_dict(best[1])
    model.to("cpu")
    summary = {
        "positions": fit,
        "held_out": held,
        "hidden": settings.hidden,
        "epochs": settings.epochs,
        "epochs_run": len(history),
        "best_epoch": best[2],
        "held_out_loss": best[0],
        "held_out_loss_start": first_loss,
        "steps": steps,
        "lambda": settings.lam,
        "scale": settings.scale,
        "residual": settings.residual,
        "extra_inputs": 0 if dense is None else dense.shape[1],
        "king_buckets": settings.king_buckets,
        "output_buckets": settings.output_buckets,
        "mirror": settings.mirror,
        "seconds": round(time.perf_counter() - started, 1),
        "device": str(device),
        "history": history,
    }
    return model, summary


def quantise(model: Any, *, residual: bool = False, meta: dict[str, object] | None = None) -> bytes:
    """The network file of a trained *model* (see :mod:`blitzaco.nnue`; output
    buckets: version 2)."""
    if model.ft.weight.shape[0] != INPUTS + 1:
        raise ValueError("the engine's network file has 768 inputs: a king-bucketed net cannot be written")
    w1 = model.ft.weight.detach()[:INPUTS].numpy()
    b1 = model.b1.detach().numpy()
    w2 = model.out.weight.detach().numpy()  # a row per output bucket
    b2 = model.out.bias.detach().numpy().astype(np.float64)
    hidden = w1.shape[1]
    return encode_network(
        [int(v) for v in np.rint(w1 * QA).astype(np.int64).ravel()],
        [int(v) for v in np.rint(b1 * QA).astype(np.int64)],
        [int(v) for v in np.rint(w2 * QB).astype(np.int64).ravel()],
        [int(v) for v in np.rint(b2 * QA * QB).astype(np.int64)],
        hidden=hidden,
        residual=residual,
        meta=meta,
        activation=model.activation,
        mirrored=model.mirror,
    )


def float_score(model: Any, board: chess.Board) -> float:
    """The trained model's output for *board* in centipawns, side to move (what the
    quantised network approximates)."""
    import torch

    own, other = board_features(board, model.mirror)
    with torch.no_grad():
        return 100.0 * float(model(torch.tensor([own]), torch.tensor([other]), None, _buckets(model, [board]))[0])


def _buckets(model: Any, boards: list[chess.Board]) -> Any:
    """The output bucket of each of *boards* for *model* (None for one output)."""
    import torch

    count = model.out.weight.shape[0]
    if count == 1:
        return None
    pieces = np.array([chess.popcount(board.occupied) for board in boards])
    return torch.from_numpy(output_bucket(pieces, count).astype(np.int64))


def quantisation_error(model: Any, blob: bytes, boards: list[chess.Board]) -> dict[str, float]:
    """How far the engine's quantised net (the file *blob*) is from the trained float
    *model* on *boards*: the largest and the mean absolute difference in centipawns
    (side to move's view; the engine's integer division included)."""
    import torch

    from blitzaco.board import Board
    from blitzaco.config import EvalConfig
    from blitzaco.network import NetEvaluator
    from blitzaco.nnue import decode_weights

    if not boards:
        return {"positions": 0, "max_cp": 0.0, "mean_cp": 0.0}
    net = NetEvaluator(EvalConfig(), decode_weights(blob))

    def engine_score(board: chess.Board) -> int:
        own = Board.from_chess(board.copy(stack=False))
        net.reset(own)
        return int(net.network(own))

    features = [board_features(board, model.mirror) for board in boards]
    with torch.no_grad():
        own = torch.tensor([stm for stm, _ in features])
        floats = 100.0 * model(own, torch.tensor([other for _, other in features]), None, _buckets(model, boards))
    errors = [abs(engine_score(board) - float(value)) for board, value in zip(boards, floats, strict=True)]
    return {"positions": len(boards), "max_cp": round(max(errors), 3), "mean_cp": round(sum(errors) / len(errors), 3)}


@dataclass(frozen=True)
class EvalCheck:
    """One static evaluation measured on a label file's held-out positions."""

    name: str
    loss: float  # the trainer's held-out loss (see train)
    scaled_loss: float  # the same with the score multiplied by the best factor (0.5 to 2)
    factor: float  # that factor
    microseconds: float  # per evaluation of a python-chess board (the engine's board set up from it included)
    positions: int  # the held-out positions it was measured on


def check_evaluations(paths: str | Path | list[str] | list[Path], nets: list[str], *, config: Any = None,
                      held_out: float = 0.02, lam: float = TARGET_LAM, scale: float = TARGET_SCALE,
                      limit: int | None = None, configured: bool = True,
                      most: int | None = None) -> list[EvalCheck]:
    """The held-out loss and the cost per evaluation of the engine's own static
    evaluation (no torch: what the search calls, through
    :class:`~blitzaco.static_eval.StaticEval`) on the last *held_out* share of each
    label file of *paths*, pooled (the shares ``train`` holds out, so a net is checked
    on the positions its training held out): the constant 0, the classical
    evaluation of *config* (default: the shipped weights) alone, the evaluation
    *config* names when it switches a network on (the shipped blend: "configured";
    left out when *configured* is false, for callers that read only the others),
    and each network of *nets* alone (a residual net added to the classical score,
    another net instead of it). *most*: at most this many held-out positions of each
    file, its first ones (default: all)."""
    import dataclasses

    from blitzaco.config import Config
    from blitzaco.pheromone import Trails
    from blitzaco.static_eval import StaticEval
    from blitzaco.tools.tune.labels import Record, count_labels, read_labels

    config = config if config is not None else Config()
    held: list[Record] = []
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        count = count_labels(path) if limit is None else min(limit, count_labels(path))
        start = count - held_out_count(count, held_out)
        take = count - start if most is None else min(most, count - start)
        held.extend(itertools.islice(read_labels(path, start), take))
    cp = np.array([record.score for record in held], dtype=np.float64)
    result = np.array([np.nan if record.result is None else record.result if record.board.turn
                       else 1 - record.result for record in held])
    result = known_result(cp, result)
    expected = target(cp, result, lam, scale)

    def loss(scores: np.ndarray) -> float:
        return float(np.mean((1 / (1 + np.exp(-scores / scale)) - expected) ** 2))

    def measure(name: str, evaluate: Any, positions: list[Any]) -> EvalCheck:
        started = time.perf_counter()
        scores = np.array([evaluate(position) for position in positions], dtype=np.float64)
        seconds = time.perf_counter() - started
        factors = [0.5 + 0.05 * step for step in range(31)]
        losses = [loss(factor * scores) for factor in factors]
        best = int(np.argmin(losses))
        return EvalCheck(name, loss(scores), losses[best], factors[best], 1e6 * seconds / len(positions),
                         len(positions))

    checks = [EvalCheck("constant 0", loss(np.zeros(len(held))), loss(np.zeros(len(held))), 1.0, 0.0, len(held))]
    def with_nn(**settings: Any) -> Any:
        nn_settings = dataclasses.replace(config.eval.nn, **settings)
        return dataclasses.replace(config, eval=dataclasses.replace(config.eval, nn=nn_settings))

    variants: list[tuple[str, Any]] = [("classical", with_nn(enabled=False))]
    if configured and config.eval.nn.enabled:
        variants.append(("configured", config))
    for net in nets:
        variants.append((Path(net).name, with_nn(enabled=True, file=str(net), weight=1.0, classical=0.0)))
    for name, variant in variants:
        static = StaticEval(variant, Trails(variant.pheromone))
        if variant.eval.nn.enabled and static.net is None:
            raise ValueError(f"{name}: {static.network_message or 'the network could not be loaded'}")
        checks.append(measure(name, static.evaluate, [record.board for record in held]))
    return checks
