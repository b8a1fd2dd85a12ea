"""Training on more labels than memory holds (``train-net --stream``).

:func:`~blitzaco.tools.tune.nn.train` turns every position into features before the
first step (about 1.3 KB a position at its peak): 17 million positions fill most of
the two-core machine's 24 GiB. Here the label files stay on disk (a plain file is
mapped, never copied whole; a packed one, small, is unpacked) and an epoch reads
them a *group* at a time: the fitted records are cut into chunks of
:attr:`StreamSettings.chunk` consecutive records, each epoch visits the chunks in
an order of its own, and a group of :attr:`StreamSettings.group` chunks is turned
into features, shuffled together and trained in batches. A file is written game by
game, so a chunk holds a few hundred whole games; a group mixes positions of
thousands of games from anywhere in the files.

Every draw comes from a generator seeded by the run's seed, the epoch and the
group, so the order of the positions does not depend on when the run was stopped:
a checkpoint (written every :attr:`StreamSettings.checkpoint_seconds`, at a
stop and at the end, to a temporary name then renamed) holds the model, Adam's
moments, where the run is (epoch, group, step), the best epoch's weights and the
history; the same command resumes from it, and a run stopped and resumed ends with
the weights a run straight through ends with (tested). The learning rate follows
the cosine of :func:`~blitzaco.tools.tune.nn.train` over the run's steps, set at
each step from the step's number (nothing else to keep). The held-out records (the
last share of each file, as :func:`~blitzaco.tools.tune.nn.train` holds out) are
evaluated after each epoch and the best epoch's weights are kept. Progress:
positions a second, the loss so far and the time left, on the log.

The model is :func:`~blitzaco.tools.tune.nn.train`'s (a replacing net, output
buckets by piece count); the same code runs on a GPU (``device``).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blitzaco.tools.tune.labelfile import MAGIC, RECORD_BYTES, is_packed, record_bytes
from blitzaco.tools.tune.labels import target
from blitzaco.tools.tune.nn import (
    _DTYPE,
    ADAM_BETAS,
    ADAM_EPS,
    LR_FLOOR,
    MAX_PIECES,
    PAD,
    TrainSettings,
    _features_into,
    _model,
    output_bucket,
    record_outcomes,
    start_weights,
    torch_device,
)

__all__ = ["StreamSettings", "Source", "train_stream", "CHECKPOINT_VERSION"]

CHECKPOINT_VERSION = 1


@dataclass(frozen=True)
class StreamSettings:
    """How the files are streamed (beside :class:`~blitzaco.tools.tune.nn.TrainSettings`)."""

    #: Consecutive records read as one piece (65,536: a few hundred games).
    chunk: int = 1 << 16
    #: Chunks mixed and shuffled together (32 x 65,536: 2 million positions, about
    #: 300 MB of features and targets).
    group: int = 32
    #: A checkpoint at least this often (seconds of training), and at every stop.
    checkpoint_seconds: float = 1800.0


@dataclass(frozen=True)
class Source:
    """A label file and how many of its first records are used, of which the last
    *held* are held out."""

    path: str
    records: int
    held: int

    @property
    def fitted(self) -> int:
        return self.records - self.held


class _Records:
    """A label file's records without reading them all: a plain file mapped, a packed
    one unpacked (packed files are the small committed ones)."""

    def __init__(self, source: Source) -> None:
        if is_packed(source.path):
            self.array = np.frombuffer(record_bytes(source.path), _DTYPE)[: source.records]
        else:
            self.array = np.memmap(source.path, dtype=_DTYPE, mode="r", offset=len(MAGIC), shape=(source.records,))
            with open(source.path, "rb") as handle:
                if handle.read(len(MAGIC)) != MAGIC:
                    raise ValueError(f"{source.path} is not a label file")
            if os.path.getsize(source.path) < len(MAGIC) + source.records * RECORD_BYTES:
                raise ValueError(f"{source.path} holds fewer than {source.records} records")

    def take(self, start: int, stop: int) -> np.ndarray:
        return np.array(self.array[start:stop])  # a copy: the map stays unread elsewhere


def _arrays(records: np.ndarray, settings: TrainSettings) -> dict[str, np.ndarray]:
    """Features, target and output bucket of *records* (as ``load_arrays`` and
    ``train`` make them)."""
    n = len(records)
    stm = np.empty((n, MAX_PIECES), dtype=np.int16)
    other = np.empty((n, MAX_PIECES), dtype=np.int16)
    _features_into(records, stm, other, settings.mirror)
    score, result, _ = record_outcomes(records)
    expected = target(score, result, settings.lam, settings.scale).astype(np.float32)
    buckets = output_bucket((stm != PAD).sum(axis=1), settings.output_buckets).astype(np.int64)
    return {"stm": stm, "other": other, "expected": expected, "bucket": buckets}


def _chunks(sources: list[Source], chunk: int) -> list[tuple[int, int, int]]:
    """The fitted records of every source as chunks (source, start, stop)."""
    return [(i, start, min(start + chunk, source.fitted))
            for i, source in enumerate(sources) for start in range(0, source.fitted, chunk)]


def _epoch_groups(chunks: list[tuple[int, int, int]], seed: int, epoch: int, group: int) -> list[list[int]]:
    """The chunks of *epoch*, in its order, cut into groups of *group*."""
    order = np.random.default_rng([seed, epoch]).permutation(len(chunks)).tolist()
    return [order[at: at + group] for at in range(0, len(order), group)]


def _steps(groups: list[list[int]], chunks: list[tuple[int, int, int]], batch: int) -> int:
    return sum(math.ceil(sum(chunks[c][2] - chunks[c][1] for c in members) / batch) for members in groups)


def train_stream(sources: list[Source], settings: TrainSettings, stream: StreamSettings = StreamSettings(), *,
                 start: Any = None, checkpoint: str | Path | None = None,
                 log: Callable[[str], None] = print) -> tuple[Any, dict[str, Any]]:
    """Train the network of *settings* on *sources*, streamed (see the module), from
    *start* (a quantised net) or random weights; resumed from *checkpoint* where it
    exists, and checkpointed there. Stops after ``settings.max_seconds`` of training
    (0: when the epochs are done). Returns the model of the best held-out epoch (on
    the CPU) and a summary with :func:`~blitzaco.tools.tune.nn.train`'s keys."""
    import torch

    if settings.residual or settings.king_buckets != 1:
        raise ValueError("the streamed trainer trains a replacing net without king buckets")
    if not sources or any(source.fitted < 1 or source.held < 0 for source in sources):
        raise ValueError("every file needs records to fit")
    device = torch.device(torch_device(settings.device))
    torch.manual_seed(settings.seed)
    model = _model(settings.hidden, 0, buckets=settings.output_buckets, activation=settings.activation,
                   mirror=settings.mirror)
    if start is not None:
        start_weights(model, start)
    model.to(device)
    if settings.weight_decay:
        optimiser: torch.optim.Optimizer = torch.optim.AdamW(
            model.parameters(), lr=settings.lr, betas=ADAM_BETAS, eps=ADAM_EPS, weight_decay=settings.weight_decay)
    else:
        optimiser = torch.optim.Adam(model.parameters(), lr=settings.lr, betas=ADAM_BETAS, eps=ADAM_EPS)
    files = [_Records(source) for source in sources]
    chunks = _chunks(sources, stream.chunk)
    plans = [_epoch_groups(chunks, settings.seed, epoch, stream.group) for epoch in range(1, settings.epochs + 1)]
    steps = sum(_steps(groups, chunks, settings.batch) for groups in plans)
    fit = sum(source.fitted for source in sources)
    held = sum(source.held for source in sources)
    k = 100.0 / settings.scale
    floor = settings.lr / LR_FLOOR
    # What a checkpoint must share with the run that resumes it: not the time allowed
    # (each sitting its own), nor the device (a run can go on on a GPU), nor how often
    # it is saved.
    trained = {key: value for key, value in asdict(settings).items() if key not in ("max_seconds", "device")}
    identity = {"version": CHECKPOINT_VERSION, "settings": trained, "stream": {"chunk": stream.chunk,
                                                                               "group": stream.group},
                "sources": [asdict(source) for source in sources]}

    def loss_of(batch: dict[str, torch.Tensor]) -> torch.Tensor:
        output = model(batch["stm"], batch["other"], None, batch["bucket"] if settings.output_buckets > 1 else None)
        return ((torch.sigmoid(output * k) - batch["expected"]) ** 2).mean()

    def on_device(arrays: dict[str, np.ndarray], index: np.ndarray | slice) -> dict[str, torch.Tensor]:
        return {name: torch.from_numpy(np.ascontiguousarray(array[index])).to(device)
                for name, array in arrays.items()}

    def held_out_loss() -> float:
        if not held:
            return float("nan")
        total = 0.0
        with torch.no_grad():
            for records, source in zip(files, sources, strict=True):
                for at in range(source.fitted, source.records, stream.chunk):
                    arrays = _arrays(records.take(at, min(at + stream.chunk, source.records)), settings)
                    total += float(loss_of(on_device(arrays, slice(None)))) * len(arrays["expected"])
        return total / held

    def snapshot() -> dict[str, torch.Tensor]:
        return {key: value.detach().to("cpu").clone() for key, value in model.state_dict().items()}

    state: dict[str, Any]
    path = Path(checkpoint) if checkpoint is not None else None
    if path is not None and path.is_file():
        state = torch.load(path, map_location="cpu", weights_only=True)
        saved = {key: state.get(key) for key in identity}
        if saved != identity:
            raise ValueError(f"{path} is the checkpoint of another training (other settings or files); "
                             "remove it or name another --checkpoint")
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        log(f"resumed from {path}: epoch {state['epoch']}, group {state['group']}, step {state['step']} of {steps}")
    else:
        first = held_out_loss()
        state = {**identity, "epoch": 1, "group": 0, "step": 0, "seconds": 0.0, "epoch_loss": 0.0, "epoch_positions": 0,
                 "first_loss": first, "best_loss": first, "best_epoch": 0, "best": snapshot(), "history": [],
                 "model": None, "optimiser": None}
        log(f"{fit} positions to fit, {held} held out, streamed in {len(chunks)} chunks of {stream.chunk}; hidden "
            f"{settings.hidden}; held-out loss {first:.6f} at start")

    def save() -> None:
        if path is None:
            return
        state.update(model=snapshot(), optimiser=optimiser.state_dict())
        temporary = path.with_name(path.name + ".tmp")
        torch.save(state, temporary)
        os.replace(temporary, path)

    started = time.perf_counter()
    seconds_before = float(state["seconds"])
    last_save = started
    positions_here = 0
    stopped = False
    while state["epoch"] <= settings.epochs and not stopped:
        epoch = state["epoch"]
        groups = plans[epoch - 1]
        while state["group"] < len(groups):
            members = groups[state["group"]]
            arrays_list = [_arrays(files[chunks[c][0]].take(chunks[c][1], chunks[c][2]), settings) for c in members]
            arrays = {name: np.concatenate([part[name] for part in arrays_list]) for name in arrays_list[0]}
            order = np.random.default_rng([settings.seed, epoch, state["group"]]).permutation(len(arrays["expected"]))
            for at in range(0, len(order), settings.batch):
                batch = on_device(arrays, order[at: at + settings.batch])
                cosine = (1 + math.cos(math.pi * state["step"] / steps)) / 2  # annealed as train's, per step
                for param_group in optimiser.param_groups:
                    param_group["lr"] = floor + (settings.lr - floor) * cosine
                optimiser.zero_grad()
                loss = loss_of(batch)
                loss.backward()
                optimiser.step()
                model.clip()
                state["step"] += 1
                state["epoch_loss"] += float(loss.detach()) * len(batch["expected"])
            state["group"] += 1
            positions_here += len(order)
            now = time.perf_counter()
            state["seconds"] = seconds_before + now - started
            rate = positions_here / max(now - started, 1e-9)
            left = (steps - state["step"]) * settings.batch / max(rate, 1e-9)
            state["epoch_positions"] += len(order)
            log(f"epoch {epoch}, group {state['group']}/{len(groups)}: {rate:,.0f} positions/s, loss "
                f"{state['epoch_loss'] / state['epoch_positions']:.6f}, about {left / 60:,.0f} min left")
            if settings.max_seconds and now - started >= settings.max_seconds:
                stopped = True
                break
            if now - last_save >= stream.checkpoint_seconds:
                save()
                last_save = now
        if stopped:
            break
        check = held_out_loss()
        state["history"].append((epoch, state["epoch_loss"] / fit, check, round(state["seconds"], 1)))
        log(f"epoch {epoch}: train {state['epoch_loss'] / fit:.6f}, held out {check:.6f} ({state['seconds']:.0f} s)")
        if not check >= state["best_loss"]:
            state.update(best_loss=check, best_epoch=epoch, best=snapshot())
        state.update(epoch=epoch + 1, group=0, epoch_loss=0.0, epoch_positions=0)
    save()
    if stopped:
        log(f"stopped in epoch {state['epoch']} at group {state['group']}: the {settings.max_seconds:.0f} s allowed "
            f"are spent" + ("; the same command resumes from the checkpoint" if path else ""))
    model.load_state_dict(state["best"])
    model.to("cpu")
    summary = {
        "positions": fit, "held_out": held, "hidden": settings.hidden, "epochs": settings.epochs,
        "epochs_run": len(state["history"]), "best_epoch": state["best_epoch"], "held_out_loss": state["best_loss"],
        "held_out_loss_start": state["first_loss"], "steps": steps, "lambda": settings.lam, "scale": settings.scale,
        "residual": False, "extra_inputs": 0, "king_buckets": 1, "output_buckets": settings.output_buckets,
        "mirror": settings.mirror,
        "seconds": round(state["seconds"], 1), "device": str(device), "history": [tuple(h) for h in state["history"]],
        "finished": state["epoch"] > settings.epochs,
        "stream": asdict(stream),
    }
    return model, summary
