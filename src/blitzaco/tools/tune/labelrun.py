"""Label runs in batches: the games of a run cut into batches of so many games, each
batch a task for a worker (a local process, or a Ray task on this machine or a
cluster), each batch's labels a file of its own, merged in batch order at the end.

Game *i* of a run is played exactly as :mod:`~blitzaco.tools.tune.labels` plays it
(its random generator seeded from the run's seed and *i*, its opening the run's
*i*-th), and batch *b* holds games ``b * batch_games`` to ``(b + 1) * batch_games - 1``:
so a batch's seed is derived from the run's and its number, and its file is the same
whichever worker, process or node played it, and whenever. The merged file takes the
smallest run of batches from the first that holds the positions asked for, in batch
order, and keeps each distinct position once (its first occurrence: deduplicated by
a Zobrist key of the record's position, :func:`position_keys`): the same bytes for
any number of workers or nodes.

On disk, beside the merged file ``OUT`` (a plain label file, its state ``OUT.json``
as :func:`~blitzaco.tools.tune.labels.generate` writes it, with the batches' SHA-256
and the deduplication's figures added), the folder ``OUT.batches/`` holds:

* ``run.json``: the run's settings (seed, label kind, nodes, shares, children,
  generator, games a batch), Stockfish's name and the start date; a continued run
  must have the same settings;
* ``NNNNNN.bin``: batch *N*'s records (a plain label file), written to a temporary
  name and renamed, then ``NNNNNN.json``: its games, positions and SHA-256. A batch
  is done when both are there and its file's hash is the one written; a batch that
  is not done is played again (a worker killed, a node lost, the run stopped), and a
  done one is never played or written again.

Workers: ``ray=None`` runs local processes (a pool rebuilt, and the batches it had
not finished given again, when one of its processes dies); ``ray="auto"`` starts a
local Ray instance with one worker a core asked for (``workers``), and ``ray=HOST:PORT``
joins a running cluster, whose every node must have this package and Stockfish
installed. Ray retries a task whose worker or node died (:data:`RETRIES`).
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import functools
import hashlib
import json
import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blitzaco.system import run_in_background
from blitzaco.tools.progress import progress_bar
from blitzaco.tools.tune import labels as labelling
from blitzaco.tools.tune.labelfile import MAGIC, RECORD_BYTES
from blitzaco.tools.tune.labelgame import LATEST_GENERATOR
from blitzaco.tools.rayinit import RETRIES, retried_task, start_ray
from blitzaco.tools.tune.sources import tuning_openings

__all__ = [
    "BATCH_GAMES", "RETRIES", "RunSettings", "label_batch", "position_keys", "pieces_of", "run", "merge",
    "batch_folder", "done_batches", "done_positions",
]

#: Games a batch (about 50,000 positions and 15 s of a core at the default static
#: settings): small enough that a lost batch costs little, large enough that a
#: task's overhead (a few milliseconds on Ray) does not count.
BATCH_GAMES = 256
#: The number of openings a run draws its games' openings from (as ``generate``).
_OPENINGS = 4096
#: Seed of the Zobrist table of :func:`position_keys` (any fixed number: a key is
#: only compared with keys of the same code).
_ZOBRIST_SEED = 0x5EED_B17A


@dataclass(frozen=True)
class RunSettings:
    """What makes a run's games: the same settings give the same batches."""

    seed: int
    nodes: int = 200
    label: str = "static"
    random_moves: float = 0.0
    chess960: float = 0.0
    children: int = 0
    generator: int = LATEST_GENERATOR
    batch_games: int = BATCH_GAMES

    def __post_init__(self) -> None:
        if self.label not in ("search", "static"):
            raise ValueError(f"unknown label kind {self.label!r} (search or static)")
        if self.label == "search" and (self.random_moves or self.chess960 or self.children):
            raise ValueError("random moves, Chess960 games and children are for static labels")
        if self.batch_games < 1:
            raise ValueError("a batch holds at least one game")


# ------------------------------------------------------------------ the workers

@functools.lru_cache(maxsize=4)
def _openings(seed: int) -> list[str]:
    """The run's openings, as ``generate`` draws them (once a process)."""
    return [opening.board().fen() for opening in tuning_openings(_OPENINGS, seed=seed, random_plies=0)]


def label_batch(settings: RunSettings, index: int, stockfish: str | None = None,
                evaluator: str = "auto") -> tuple[int, bytes, str]:
    """Play batch *index* of the run with *settings* here: its games, its records
    (one string, in game order) and where it was played (``host:pid``). The
    process's Stockfish (and Stockfish's network, evaluated here) is started at the
    first batch and kept for the next."""
    binary = stockfish or labelling.find_stockfish()
    if binary is None:
        raise FileNotFoundError(f"Stockfish not found on {socket.gethostname()} (apt-get install stockfish)")
    if labelling._worker_engine is None:
        net = None
        if settings.label == "static" and evaluator != "pipe":
            try:
                net = labelling._checked_net(binary)
            except labelling.NetMismatch:
                if evaluator == "net":
                    raise
        labelling._start_worker(binary, net)
    fens = _openings(settings.seed)
    first = index * settings.batch_games
    records: list[bytes] = []
    for game in range(first, first + settings.batch_games):
        task = labelling._Task(game, settings.seed, settings.nodes, fens[game % len(fens)], settings.label,
                               settings.random_moves, settings.chess960, settings.children, settings.generator)
        records.extend(labelling._play(task))
    return settings.batch_games, b"".join(records), f"{socket.gethostname()}:{os.getpid()}"


class _Processes:
    """Batches played by local processes. A process that dies breaks the pool: the
    pool is rebuilt and the batches it had not given back are given again."""

    def __init__(self, workers: int, run: Callable[[int], Any]) -> None:
        self._workers, self._run = workers, run
        self._pool = self._new_pool()
        self._futures: dict[concurrent.futures.Future[Any], int] = {}
        self.retried = 0

    def _new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        # Started as batches are given, inside run()'s one-thread numpy environment.
        return concurrent.futures.ProcessPoolExecutor(self._workers, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, index: int) -> None:
        self._futures[self._pool.submit(self._run, index)] = index

    def pending(self) -> int:
        return len(self._futures)

    def next_done(self) -> tuple[int, Any]:
        while True:
            done, _ = concurrent.futures.wait(self._futures, return_when=concurrent.futures.FIRST_COMPLETED)
            future = next(iter(done))
            index = self._futures.pop(future)
            try:
                return index, future.result()
            except concurrent.futures.process.BrokenProcessPool:
                self.retried += 1
                if self.retried > RETRIES * self._workers:
                    raise
                lost = [index, *self._futures.values()]
                self._futures.clear()
                self.close()
                self._pool = self._new_pool()
                for again in lost:
                    self.submit(again)

    def close(self) -> None:
        """Stop now: the batches under way are not kept (they are played again when the
        run goes on). The executor has no way to stop a running call but ending its
        processes, which it keeps in ``_processes``."""
        processes = list(getattr(self._pool, "_processes", {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.kill()
        for process in processes:
            process.join()


def _ray_batch(settings: RunSettings, index: int, stockfish: str | None, evaluator: str) -> tuple[int, bytes, str]:
    """:func:`label_batch` as a Ray task: where it was played names the Ray node too."""
    import ray

    games, records, where = label_batch(settings, index, stockfish, evaluator)
    return games, records, f"node {ray.get_runtime_context().get_node_id()[:8]} {where}"


class _Ray:
    """Batches played as Ray tasks (retried by Ray when their worker or node dies)."""

    def __init__(self, address: str, workers: int, settings: RunSettings, stockfish: str | None,
                 evaluator: str) -> None:
        with labelling._one_thread_numpy():  # the workers inherit the environment of a local instance started here
            ray = start_ray(address, workers)
        self._ray = ray
        self._remote = retried_task(ray, _ray_batch)
        self._args = (settings, stockfish, evaluator)
        self._refs: dict[Any, int] = {}
        self.retried = 0

    def submit(self, index: int) -> None:
        settings, stockfish, evaluator = self._args
        self._refs[self._remote.remote(settings, index, stockfish, evaluator)] = index  # type: ignore[call-arg]

    def pending(self) -> int:
        return len(self._refs)

    def next_done(self) -> tuple[int, Any]:
        (ref,), _ = self._ray.wait(list(self._refs), num_returns=1)
        index = self._refs.pop(ref)
        return index, self._ray.get(ref)

    def close(self) -> None:
        for ref in self._refs:
            self._ray.cancel(ref, force=True)
        self._ray.shutdown()


# ------------------------------------------------------------------ the run

def batch_folder(out: str | Path) -> Path:
    """The folder of the batches of the run whose merged file is *out*."""
    out = Path(out)
    return out.with_name(out.name + ".batches")


def _batch_path(folder: Path, index: int) -> Path:
    return folder / f"{index:06d}.bin"


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def done_batches(out: str | Path) -> dict[int, dict[str, Any]]:
    """The done batches of the run whose merged file is *out*: number to what its
    ``NNNNNN.json`` says (games, positions, SHA-256). A batch whose records file is
    missing is not done; its hash is checked when the batches are merged."""
    folder = batch_folder(out)
    done: dict[int, dict[str, Any]] = {}
    for info in folder.glob("[0-9]*.json"):
        index = int(info.stem)
        if _batch_path(folder, index).is_file():
            done[index] = json.loads(info.read_text())
    return done


def _settings_state(settings: RunSettings, stockfish_name: str) -> dict[str, Any]:
    state = asdict(settings)
    state.update(stockfish=stockfish_name, started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return state


def _open_run(out: Path, settings: RunSettings, stockfish_name: str) -> dict[str, Any]:
    """The run's state (``run.json``): made for a new run, read (and its settings
    checked) for a continued one."""
    folder = batch_folder(out)
    state_path = folder / "run.json"
    if state_path.is_file():
        saved: dict[str, Any] = json.loads(state_path.read_text())
        mine = asdict(settings)
        if any(saved.get(key) != value for key, value in mine.items()):
            made = ", ".join(f"{key} {saved.get(key)}" for key in mine)
            raise ValueError(f"{folder} was made with {made}")
        return saved
    folder.mkdir(parents=True, exist_ok=True)
    state = _settings_state(settings, stockfish_name)
    _write_atomically(state_path, json.dumps(state, indent=1).encode())
    return state


def _prefix(done: dict[int, dict[str, Any]]) -> Iterator[int]:
    """The positions of the batches done from the first without a gap, added up
    batch by batch."""
    total = index = 0
    while index in done:
        total += int(done[index]["positions"])
        index += 1
        yield total


def done_positions(out: str | Path) -> int:
    """The positions of the run's batches done from the first without a gap: what
    :func:`merge` can take now."""
    return max(_prefix(done_batches(out)), default=0)


def _needed(done: dict[int, dict[str, Any]], positions: int) -> int | None:
    """The number of batches from the first whose positions reach *positions*, if the
    batches done so far decide it (all of them done), else None."""
    return next((count for count, total in enumerate(_prefix(done), 1) if total >= positions), None)


def run(out: str | Path, positions: int, settings: RunSettings, *, workers: int = 2, ray: str | None = None,
        stockfish: str | None = None, evaluator: str = "auto", idle: bool = False, progress: bool = True,
        max_seconds: float = 0.0, merge_at_end: bool = True) -> dict[str, Any]:
    """Play the batches of the run whose merged file is *out* until the first ones
    hold *positions*, then (*merge_at_end*) merge them into *out*. A run stopped
    (*max_seconds*, an interruption) keeps the batches it finished and goes on from
    them. *ray*: None local processes, ``auto`` a local Ray instance, ``HOST:PORT`` a
    cluster; *workers*: the batches played at once (with a cluster, the batches in
    flight: at least its cores). Returns the run's figures: batches and positions
    made here, seconds, positions per hour, retried batches, where they were played,
    and ``merged`` (the merge's figures) when the file was written."""
    if evaluator not in ("auto", "net", "pipe"):
        raise ValueError(f"unknown evaluator {evaluator!r} (auto, net or pipe)")
    if idle:
        run_in_background()  # the workers (Stockfish, a local Ray) inherit it
    out = Path(out)
    binary = stockfish or labelling.find_stockfish()
    if ray is None and binary is None:
        raise FileNotFoundError("Stockfish not found (apt-get install stockfish): it labels the positions")
    name = (labelling.stockfish_name(binary) if binary else None) or str(binary or "stockfish on the cluster")
    _open_run(out, settings, name)
    done = done_batches(out)
    executor: _Processes | _Ray
    with labelling._one_thread_numpy():  # the workers' small products: threads only cost (25 % of the rate)
        if ray is None:
            executor = _Processes(workers, _BatchCall(settings, stockfish, evaluator))
        else:
            executor = _Ray(ray, workers, settings, stockfish, evaluator)
        return _play_batches(out, positions, executor, done, workers, progress, max_seconds, merge_at_end)


def _play_batches(out: Path, positions: int, executor: _Processes | _Ray, done: dict[int, dict[str, Any]],
                  workers: int, progress: bool, max_seconds: float, merge_at_end: bool) -> dict[str, Any]:
    """:func:`run`'s loop: batches given to *executor* and written as they come back."""
    folder = batch_folder(out)
    started = time.perf_counter()
    made_batches = made_positions = 0
    where: dict[str, int] = {}
    in_flight = max(2 * workers, 2)

    def queued() -> Iterator[int]:
        index = 0
        while True:
            if index not in done:
                yield index
            index += 1

    upcoming = queued()
    total_done = sum(int(item["positions"]) for item in done.values())
    try:
        while _needed(done, positions) is None:
            if max_seconds > 0 and time.perf_counter() - started >= max_seconds:
                break
            while executor.pending() < in_flight:
                candidate = next(upcoming)
                # Far enough ahead: the batches before it already hold the positions
                # (when they are done); more would be played for nothing.
                if sum(int(item["positions"]) for index, item in done.items() if index < candidate) >= positions:
                    break
                executor.submit(candidate)
            if executor.pending() == 0:
                break
            index, (games, records, worker) = executor.next_done()
            digest = hashlib.sha256(MAGIC + records).hexdigest()
            _write_atomically(_batch_path(folder, index), MAGIC + records)
            info = {"games": games, "positions": len(records) // RECORD_BYTES, "sha256": digest, "worker": worker}
            _write_atomically(folder / f"{index:06d}.json", json.dumps(info).encode())
            done[index] = info
            made_batches += 1
            made_positions += info["positions"]
            total_done += info["positions"]
            where[worker] = where.get(worker, 0) + 1
            if progress:
                seconds = max(time.perf_counter() - started, 1e-9)
                rate = made_positions / seconds * 3600
                left = max(positions - total_done, 0) / rate * 3600 if rate else 0.0
                progress_bar(min(total_done, positions), positions,
                             f"positions, {rate:,.0f}/hour, {len(done)} batches, {left / 60:,.0f} min left")
    finally:
        retried = executor.retried
        executor.close()
    seconds = time.perf_counter() - started
    figures: dict[str, Any] = {
        "batches": made_batches, "positions": made_positions, "seconds": seconds,
        "per_hour": made_positions / seconds * 3600 if seconds > 0 else 0.0, "retried": retried,
        "workers": where, "done": len(done),
    }
    if merge_at_end and _needed(done, positions) is not None:
        figures["merged"] = merge(out, positions)
    return figures


class _BatchCall:
    """``label_batch`` with the run's settings, for a process pool (picklable)."""

    def __init__(self, settings: RunSettings, stockfish: str | None, evaluator: str) -> None:
        self.settings, self.stockfish, self.evaluator = settings, stockfish, evaluator

    def __call__(self, index: int) -> tuple[int, bytes, str]:
        return label_batch(self.settings, index, self.stockfish, self.evaluator)


# ------------------------------------------------------------------ the merge

def _zobrist_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(_ZOBRIST_SEED)
    squares = rng.integers(0, 2**64, size=(64, 16), dtype=np.uint64, endpoint=False)
    squares[:, 0] = 0  # an empty square adds nothing
    flags = rng.integers(0, 2**64, size=256, dtype=np.uint64, endpoint=False)
    en_passant = rng.integers(0, 2**64, size=256, dtype=np.uint64, endpoint=False)
    en_passant[0] = 0
    return squares, flags, en_passant


_SQUARES, _FLAGS, _EN_PASSANT = _zobrist_tables()


def _piece_codes(records: np.ndarray) -> np.ndarray:
    """The records' 64 squares' codes (``N x 64``, a1 first): two to a byte, low nibble first."""
    packed = records[:, :32]
    codes = np.empty((len(records), 64), dtype=np.uint8)
    codes[:, 0::2] = packed & 0x0F
    codes[:, 1::2] = packed >> 4
    return codes


def _as_records(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)[: len(data) // RECORD_BYTES * RECORD_BYTES].reshape(-1, RECORD_BYTES)


def position_keys(data: bytes) -> np.ndarray:
    """A 64-bit Zobrist key of each record's position in *data* (records, no magic):
    the pieces on their squares, the side to move and castling rights, the en passant
    file; not the score or the result. Equal positions have equal keys."""
    records = _as_records(data)
    codes = _piece_codes(records)
    keys = np.bitwise_xor.reduce(_SQUARES[np.arange(64), codes], axis=1)
    return np.asarray(keys ^ _FLAGS[records[:, 32]] ^ _EN_PASSANT[records[:, 33]], dtype=np.uint64)


def pieces_of(data: bytes) -> np.ndarray:
    """The number of pieces (kings included) of each record's position in *data*."""
    return np.count_nonzero(_piece_codes(_as_records(data)), axis=1)


def _batch_records(folder: Path, index: int, info: dict[str, Any]) -> bytes:
    data = _batch_path(folder, index).read_bytes()
    if hashlib.sha256(data).hexdigest() != info["sha256"] or data[: len(MAGIC)] != MAGIC:
        raise ValueError(f"batch {index} of {folder} does not match its hash: delete {index:06d}.json to play it again")
    return data[len(MAGIC):]


def merge(out: str | Path, positions: int) -> dict[str, Any]:
    """Merge the first batches of the run whose merged file is *out*, as many as hold
    *positions*, into *out* (a plain label file) and its state ``OUT.json``: each
    batch's hash checked, each distinct position kept once (its first occurrence in
    batch order). Returns the merge's figures: batches, games, positions before and
    after deduplication, positions by number of pieces, the file's SHA-256."""
    out = Path(out)
    folder = batch_folder(out)
    state: dict[str, Any] = json.loads((folder / "run.json").read_text())
    done = done_batches(out)
    count = _needed(done, positions)
    if count is None:
        raise ValueError(f"{folder} does not hold {positions} positions in its first batches yet")
    keys = np.concatenate([position_keys(_batch_records(folder, index, done[index])) for index in range(count)])
    _, first = np.unique(keys, return_index=True)
    keep = np.zeros(len(keys), dtype=bool)
    keep[first] = True
    del keys, first
    by_pieces = np.zeros(33, dtype=np.int64)
    digest = hashlib.sha256(MAGIC)
    temporary = out.with_name(out.name + ".tmp")
    at = 0
    with open(temporary, "wb") as handle:
        handle.write(MAGIC)
        for index in range(count):
            records = _as_records(_batch_records(folder, index, done[index]))
            kept = records[keep[at: at + len(records)]]
            at += len(records)
            chunk = kept.tobytes()
            handle.write(chunk)
            digest.update(chunk)
            by_pieces += np.bincount(pieces_of(chunk), minlength=33)
    os.replace(temporary, out)
    merged = {
        "batches": count,
        "games": sum(int(done[index]["games"]) for index in range(count)),
        "before": int(len(keep)),
        "positions": int(keep.sum()),
        "by_pieces": {str(pieces): int(n) for pieces, n in enumerate(by_pieces) if n},
        "sha256": digest.hexdigest(),
    }
    # The state a label file's readers (the training record) take: generate's, with
    # the batches and the deduplication added.
    file_state = {key: state[key] for key in ("seed", "nodes", "stockfish", "started", "generator")}
    if state["label"] == "static":
        file_state.update(label="static", random_moves=state["random_moves"], chess960=state["chess960"])
        if state["children"]:
            file_state["children"] = state["children"]
    file_state.update(games=merged["games"], positions=merged["positions"], batch_games=state["batch_games"],
                      batches=[done[index]["sha256"] for index in range(count)],
                      deduplicated={"before": merged["before"], "after": merged["positions"]},
                      by_pieces=merged["by_pieces"])
    _write_atomically(out.with_name(out.name + ".json"), json.dumps(file_state, indent=1).encode())
    return merged
