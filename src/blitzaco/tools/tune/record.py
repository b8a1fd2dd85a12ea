"""The training record of a network: what it has learned from, kept with it.

Label files do not survive between working sessions; the shipped network does. So
the network file carries, as its metadata (:mod:`blitzaco.nnue`'s JSON block, under
the file's CRC), a record of every label run it has seen and every training run that
made it, and ``train-net --resume NET`` continues from NET's weights on new label
files and appends to NET's record. ``train-net`` writes the same record, indented,
beside the net (``assets/net.json`` beside ``assets/net.bin``) for reading and diffs;
the copy inside the net file is the one the tools read. ``tune.py label`` refuses a
seed the record lists (every label run must bring positions no net has seen).

The record, version 1 (JSON object; lists in the order things happened):

* ``record``: :data:`RECORD_VERSION`;
* ``net``: the shape: ``inputs`` (768), ``hidden``, ``activation``, ``residual``
  (false: the net replaces the classical evaluation), ``qa``, ``qb``, and
  ``output_buckets`` where there are several (absent: one); ``mirrored`` for a net
  whose input is mirrored by the king's file (absent: not mirrored);
* ``target``: what a label teaches: ``lambda`` (weight of Stockfish's win
  probability against the game's result), ``scale`` (centipawns per unit of the
  sigmoid), ``loss`` (in words);
* ``held_out``: the rule (in words) and ``share``: each training run holds out the
  last share of the records it takes from each label file (the files are written
  game by game, so at most one game straddles the cut) and never fits them;
* ``label_runs``: one entry per label run (seed) the net has seen: ``seed``,
  ``nodes`` (Stockfish's nodes per move), ``stockfish`` (its ``id name``), ``date``
  (the run's start, or its file's date where the run did not say), ``records`` (how
  many of the run's records the net has seen, its first ones: the same command with
  the same seed makes the same file, see :mod:`blitzaco.tools.tune.labels`),
  ``fitted`` (of which were fitted; the rest were held out), ``sha256`` (of the
  label file's magic and those records), ``games`` (where known); for a run labelled
  by Stockfish's static evaluation rather than by the search that played the move,
  ``label`` ("static"), ``random_moves`` and ``chess960`` (the shares of random moves
  and of Chess960 games); for a run made in batches (:mod:`blitzaco.tools.tune.labelrun`),
  ``batches``: ``games_each``, the ``rule`` that says which games a batch holds,
  ``deduplicated`` (positions before and after) and ``sha256`` (each batch's, in order);
* ``prior_seeds``: seeds used by label runs before this record began (their files
  are gone), with what they were used for: never to be used again either;
* ``trainings``: one entry per training run: ``date``, ``start`` (null for random
  weights, else the start net's ``file``, ``sha256`` and number of trainings),
  ``data`` (per label file: ``seed``, ``records`` [first, end), ``fitted``,
  ``held_out`` [first, end)), ``replay`` (in words), ``widened`` (only where the
  run widened its start net: ``from`` and ``to`` neurons, the ``rule``), ``epochs`` (planned),
  ``epochs_run``, ``best_epoch`` (the one kept; 0 is the start), ``batch``,
  ``optimiser`` (name, ``lr``, ``betas``, ``eps``, ``weight_decay``, ``state``),
  ``schedule`` (name, ``from``, ``to``, ``steps``), ``weight_limits``, ``seed``
  (torch's), ``held_out_loss`` (``start``, ``best``, ``classical``: the shipped
  classical evaluation's loss on the same held-out positions; ``engine``: the quantised
  net's, as the engine computes it; ``constant_0``; ``engine_checked_on``: how many
  held-out positions those two were computed on, all or ``--check-positions`` a
  file), ``quantisation`` (the engine's
  output against the float model's on up to 2,000 held-out positions: ``max_cp``,
  ``mean_cp``), ``microseconds_per_evaluation`` (the engine's net and the classical
  evaluation, pure Python, in process, cold caches), ``history``
  (per epoch: ``epoch``, ``train``, ``held_out``, ``seconds``), ``seconds``,
  ``threads``, ``torch``, ``commit`` (the trainer's git commit, where known),
  ``command``;
* ``positions``: how many positions the net was fitted on (the sum of the label
  runs' ``fitted``), which the engine shows.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import time
from pathlib import Path
from typing import Any

from blitzaco.nnue import FLAG_MIRRORED, INPUTS, QA, QB, load_weights
from blitzaco.tools.tune.labelfile import MAGIC, RECORD_BYTES, is_packed, record_bytes, records_sha256, run_state

__all__ = [
    "RECORD_VERSION", "PRIOR_SEEDS", "RecordError", "new_record", "validate", "used_seeds", "label_run",
    "add_training", "read_record", "shipped_net", "file_sha256", "dumps", "SHIPPED_NET", "git_commit",
    "check_resumable",
]

RECORD_VERSION = 1
#: Seeds of label runs made before the record began; their files are gone.
PRIOR_SEEDS: tuple[dict[str, object], ...] = (
    {"seed": 1, "used_for": "1,105,707 labels at 5000 nodes: the Texel-tuned classical weights and the residual "
                            "assets/nn.bin (2026-11-24/25)"},
    {"seed": 11, "used_for": "a 1,500-position probe of the label generator (2026-11-25)"},
    {"seed": 15, "used_for": "219,365 labels at 5000 nodes (2026-11-26, a 16-core machine), made while the third "
                             "net was trained; in the records of the nets trained after it"},
)
#: The file name of the replacing net in assets/ (off by default).
SHIPPED_NET = "net.bin"
HELD_OUT_RULE = ("each training run holds out the last `share` of the records it takes from each label file and never "
                 "fits them (the file is written game by game: at most one game straddles the cut)")
#: How a widened net starts (``train-net --resume NET --hidden MORE``).
WIDENED_RULE = ("the start net's neurons kept; the new ones' feature weights random, their output weights zero, so "
                "the widened net's output is the start net's until training")
_TOP_KEYS = ("record", "net", "target", "held_out", "label_runs", "prior_seeds", "trainings", "positions")


class RecordError(ValueError):
    """A training record that is missing, of another version, or malformed."""


def dumps(record: dict[str, Any]) -> str:
    """The record as the indented JSON of the sidecar file (a newline at the end)."""
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


#: The record's words for each activation (:data:`blitzaco.nnue.ACTIVATIONS`).
ACTIVATION_WORDS = {"crelu": "clipped ReLU to [0, 1], both perspectives",
                    "screlu": "squared clipped ReLU (clipped to [0, 1], then squared), both perspectives"}


def new_record(*, hidden: int, residual: bool, lam: float, scale: float, held_out: float,
               output_buckets: int = 1, activation: str = "crelu", mirror: bool = False) -> dict[str, Any]:
    """The record of a net about to be trained from random weights."""
    net: dict[str, Any] = {"inputs": INPUTS, "hidden": hidden, "residual": residual, "qa": QA, "qb": QB,
                           "activation": ACTIVATION_WORDS[activation]}
    if output_buckets != 1:
        net["output_buckets"] = output_buckets
    if mirror:
        net["mirrored"] = "each perspective mirrored horizontally when its own king is on files a-d"
    return {
        "record": RECORD_VERSION,
        "net": net,
        "target": {"lambda": lam, "scale": scale,
                   "loss": "mean squared difference between sigmoid(100 * output / scale) and lambda * "
                           "sigmoid(stockfish_cp / scale) + (1 - lambda) * result, side to move's view"},
        "held_out": {"rule": HELD_OUT_RULE, "share": held_out},
        "label_runs": [],
        "prior_seeds": [dict(item) for item in PRIOR_SEEDS],
        "trainings": [],
        "positions": 0,
    }


def validate(record: object) -> dict[str, Any]:
    """*record* if it is a training record this code reads. Raises :class:`RecordError`."""
    if not isinstance(record, dict) or "record" not in record:
        raise RecordError("no training record (a net trained before the record began?)")
    if record["record"] != RECORD_VERSION:
        raise RecordError(f"training record version {record['record']}; this code reads version {RECORD_VERSION}")
    missing = [key for key in _TOP_KEYS if key not in record]
    if missing:
        raise RecordError(f"training record without {', '.join(missing)}")
    for key in ("label_runs", "prior_seeds", "trainings"):
        if not isinstance(record[key], list) or not all(isinstance(item, dict) for item in record[key]):
            raise RecordError(f"training record: {key} is not a list of objects")
    for item in record["label_runs"] + record["prior_seeds"]:
        if not isinstance(item.get("seed"), int):
            raise RecordError(f"training record: a label run without a seed: {item}")
    seeds = [item["seed"] for item in record["label_runs"]]
    if len(set(seeds)) != len(seeds):
        raise RecordError(f"training record: a seed listed twice among the label runs: {seeds}")
    if not isinstance(record["net"], dict) or record["net"].get("inputs") != INPUTS:
        raise RecordError("training record: the net's shape is missing or not 768 inputs")
    return record


def used_seeds(record: dict[str, Any] | None) -> list[int]:
    """Every seed the record (or, without one, :data:`PRIOR_SEEDS`) says was used."""
    items = list(PRIOR_SEEDS) + ([] if record is None else record["label_runs"] + record["prior_seeds"])
    return sorted({int(item["seed"]) for item in items})  # type: ignore[call-overload]


def file_sha256(path: str | Path, records: int | None = None) -> str:
    """SHA-256 of a label file's magic and its first *records* records (all: None);
    of a packed file, that of the plain file it was packed from (the same records)."""
    if is_packed(path):
        data = record_bytes(path)
        return records_sha256([data if records is None else data[: records * RECORD_BYTES]])
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        remaining = None if records is None else len(MAGIC) + records * RECORD_BYTES
        while remaining is None or remaining > 0:
            chunk = handle.read(1 << 20 if remaining is None else min(1 << 20, remaining))
            if not chunk:
                break
            digest.update(chunk)
            if remaining is not None:
                remaining -= len(chunk)
    return digest.hexdigest()


def label_run(path: str | Path, records: int, *, stockfish: str | None = None) -> dict[str, Any]:
    """What the record says of the label file at *path*, of which the first *records*
    are used: from the run's state file (``PATH.json``, written by ``tune.py label``:
    seed, nodes, and for runs since the record began Stockfish's name and the start
    date; for static labels their kind and shares of random moves and Chess960
    games). Without a Stockfish name there, *stockfish* (the caller's probe of the
    installed one) is written, marked as probed. Raises :class:`RecordError` when
    the state file is missing (a label file of unknown seed cannot enter a record)."""
    path = Path(path)
    state_path = path.with_name(path.name + ".json")
    try:
        state = run_state(path) if is_packed(path) else json.loads(state_path.read_text())
        seed, nodes = int(state["seed"]), int(state["nodes"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise RecordError(f"{state_path}: the label run's seed and nodes are unknown ({err})") from None
    entry: dict[str, Any] = {"seed": seed, "nodes": nodes, "records": records}
    if isinstance(state.get("stockfish"), str):
        entry["stockfish"] = state["stockfish"]
    else:
        entry["stockfish"] = f"{stockfish or 'unknown'} (probed when trained: the run did not record it)"
    if isinstance(state.get("started"), str):
        entry["date"] = state["started"]
    else:
        entry["date"] = time.strftime("%Y-%m-%d", time.gmtime(path.stat().st_mtime)) + " (the file's date)"
    if records >= int(state.get("positions", -1)) and "games" in state:
        entry["games"] = int(state["games"])
    if state.get("label", "search") != "search":
        # Labelled otherwise than by the search that played the move: how.
        for key in ("label", "random_moves", "chess960", "children"):
            if key in state:
                entry[key] = state[key]
    batches = state.get("batches")
    if isinstance(batches, list) and all(isinstance(sha, str) for sha in batches) and "batch_games" in state:
        # A run made in batches (tune.py label, labelrun): each batch by its number
        # (its games follow from the seed) and the SHA-256 of its records, so that the
        # same labels can be made again and checked batch by batch.
        games = int(state["batch_games"])
        entry["batches"] = {"games_each": games,
                            "rule": f"batch b: games {games}b to {games}b+{games - 1} of the seed's games, "
                                    "merged in order, each distinct position kept once",
                            "deduplicated": state.get("deduplicated"),
                            "sha256": list(batches)}
    entry["sha256"] = file_sha256(path, records)
    return entry


def add_training(record: dict[str, Any], runs: list[dict[str, Any]], training: dict[str, Any]) -> dict[str, Any]:
    """A new record: *record* with the label runs *runs* (entries of
    :func:`label_run` with ``fitted`` set; a seed already listed is updated to the
    larger use) and *training* appended."""
    record = copy.deepcopy(record)
    listed = {item["seed"]: item for item in record["label_runs"]}
    for run in runs:
        old = listed.get(run["seed"])
        if old is None:
            record["label_runs"].append(dict(run))
            listed[run["seed"]] = record["label_runs"][-1]
        elif run["records"] > old["records"] or run["fitted"] > old.get("fitted", 0):
            old.update({key: value for key, value in run.items() if key not in ("stockfish", "date")})
    record["trainings"].append(training)
    record["positions"] = sum(int(item.get("fitted", 0)) for item in record["label_runs"])
    return validate(record)


def read_record(path: str | Path) -> dict[str, Any]:
    """The training record of the net file at *path*. Raises
    :class:`~blitzaco.nnue.NetworkError` for an unreadable net and
    :class:`RecordError` for a net without a (readable) record."""
    return validate(load_weights(path).meta)


def shipped_net() -> Path | None:
    """The shipped replacing net (``assets/net.bin``), if there is one."""
    from blitzaco.bundled import bundled_file

    return bundled_file(SHIPPED_NET)


def git_commit() -> str | None:
    """The checkout's commit (for the record), or None outside a git checkout."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                              cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def check_resumable(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """The weights and record of the net at *path* to resume from. Raises
    :class:`~blitzaco.nnue.NetworkError` or :class:`RecordError`."""
    weights = load_weights(path)
    record = validate(weights.meta)
    shape = record["net"]
    if (shape.get("hidden") != weights.hidden or bool(shape.get("residual")) != bool(weights.flags & 1)
            or shape.get("output_buckets", 1) != weights.buckets
            or "mirrored" in shape) != bool(weights.flags & FLAG_MIRRORED):
        raise RecordError(f"{path}: the record's shape does not match the net's")
    return weights, record

