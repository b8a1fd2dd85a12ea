"""Label runs in batches (``tune.py label``, :mod:`blitzaco.tools.tune.labelrun`): the
same merged file whatever the number of workers, processes or nodes, a run stopped
and continued, a worker killed mid-run (a local process, a Ray worker of a real
two-node cluster), each distinct position kept once."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import numpy as np
import pytest
from script_loader import load_script

from blitzaco.tools.tune.labelfile import MAGIC, RECORD_BYTES, encode, read_labels
from blitzaco.tools.tune.labelrun import (
    RunSettings,
    batch_folder,
    done_batches,
    merge,
    pieces_of,
    position_keys,
    run,
)
from blitzaco.tools.tune.labels import find_stockfish, generate
from blitzaco.tools.tune.record import label_run

ROOT = Path(__file__).resolve().parent.parent
needs_stockfish = pytest.mark.skipif(find_stockfish() is None, reason="Stockfish labels the positions")

#: A small static run: Chess960 starts, random moves and children, batches of 2 games.
SETTINGS = RunSettings(seed=7, nodes=100, label="static", random_moves=0.1, chess960=0.5, children=2, batch_games=2)
POSITIONS = 1200


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The merged file of the small run, by two local processes."""
    if find_stockfish() is None:
        pytest.skip("Stockfish labels the positions")
    out = tmp_path_factory.mktemp("reference") / "labels.bin"
    figures = run(out, POSITIONS, SETTINGS, workers=2, progress=False)
    assert figures["merged"]["positions"] >= POSITIONS * 0.9
    return out.read_bytes()


def test_position_keys_tell_positions_apart_and_only_positions() -> None:
    """Equal positions have equal keys whatever their score and result; the side to
    move, a castling right, an en passant capture or one piece moved changes the key."""
    fens = [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w Kkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K1R1 w kq - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3",
        "8/8/4k3/8/8/3K4/8/7R b - - 0 1",
    ]
    data = b"".join(encode(chess.Board(fen), score, result)
                    for fen in fens for score, result in ((12, 1.0), (-40, None)))
    keys = position_keys(data)
    assert keys.dtype == np.uint64 and len(keys) == 2 * len(fens)
    assert all(keys[2 * i] == keys[2 * i + 1] for i in range(len(fens))), "score and result are not the position"
    assert len(set(keys[::2].tolist())) == len(fens)
    assert pieces_of(data).tolist() == [count for fen in fens
                                        for count in [len(chess.Board(fen).piece_map())] * 2]



def test_label_distinct_counts_repeats_across_files_and_within(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/label_distinct.py: a position in two files (or twice in one, with
    another score) counts once; the second file's repeats of the first are named."""
    boards = [chess.Board()]
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5"):
        boards.append(boards[-1].copy(stack=False))
        boards[-1].push_uci(uci)
    first, second = tmp_path / "a.bin", tmp_path / "b.bin"
    first.write_bytes(MAGIC + b"".join(encode(board, 10, None) for board in boards[:4]))
    second.write_bytes(MAGIC + b"".join(encode(board, -5, 0.5) for board in boards[2:] + boards[5:]))
    script = load_script("scripts/label_distinct.py")
    monkeypatch.setattr(script, "CHUNK", 2)  # records read across chunk boundaries
    assert script.main([str(first), str(second)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{first}: 4 positions, 4 distinct, 0 of them in the files before it",
                     f"{second}: 5 positions, 4 distinct, 2 of them in the files before it",
                     "all 2 files: 9 positions, 6 distinct"]

@needs_stockfish
def test_batches_are_the_games_of_a_single_file_run_deduplicated(tmp_path: Path, reference: bytes) -> None:
    """Batch b holds games 2b and 2b+1 of the run's seed: the batches in order are the
    file ``generate`` writes for the same seed, and the merged file is that file with
    each position kept at its first occurrence; its state names the run, every
    batch's hash and the positions by piece count."""
    out = tmp_path / "labels.bin"
    figures = run(out, POSITIONS, SETTINGS, workers=1, progress=False)
    assert out.read_bytes() == reference
    merged = figures["merged"]
    batches = b"".join((batch_folder(out) / f"{index:06d}.bin").read_bytes()[len(MAGIC):]
                       for index in range(merged["batches"]))
    single = tmp_path / "single.bin"
    generate(single, len(batches) // RECORD_BYTES, seed=7, nodes=100, workers=1, progress=False, label="static",
             random_moves=0.1, chess960=0.5, children=2)
    assert single.read_bytes()[len(MAGIC):].startswith(batches)
    keys = position_keys(batches)
    _, first = np.unique(keys, return_index=True)
    records = np.frombuffer(batches, dtype=np.uint8).reshape(-1, RECORD_BYTES)
    assert out.read_bytes() == MAGIC + records[np.sort(first)].tobytes()
    assert merged["before"] == len(records) > merged["positions"] == len(first), "the openings repeat positions"
    state = json.loads(out.with_name("labels.bin.json").read_text())
    assert state["seed"] == 7 and state["label"] == "static" and state["children"] == 2
    assert state["positions"] == merged["positions"] and len(state["batches"]) == merged["batches"]
    assert sum(state["by_pieces"].values()) == merged["positions"]
    assert len(list(read_labels(out))) == merged["positions"]
    # A net trained on the file names every batch by the seed's rule and its hash.
    entry = label_run(out, merged["positions"], stockfish="Stockfish 15.1")
    assert entry["seed"] == 7 and entry["batches"]["games_each"] == 2
    assert entry["batches"]["sha256"] == [hashlib.sha256((batch_folder(out) / f"{index:06d}.bin").read_bytes())
                                          .hexdigest() for index in range(merged["batches"])]
    assert entry["batches"]["deduplicated"] == {"before": merged["before"], "after": merged["positions"]}


@needs_stockfish
def test_a_run_stopped_and_continued_makes_the_same_file(tmp_path: Path, reference: bytes) -> None:
    """A run out of time keeps the batches it finished and merges nothing; continued
    with another number of workers it plays only the rest; another seed's settings
    are refused on the same folder; a batch file changed on disk is caught at the
    merge."""
    out = tmp_path / "labels.bin"
    first = run(out, POSITIONS, SETTINGS, workers=2, progress=False, max_seconds=3)
    assert "merged" not in first and not out.exists()
    kept = done_batches(out)
    second = run(out, POSITIONS, SETTINGS, workers=1, progress=False)
    assert out.read_bytes() == reference
    assert second["batches"] == second["done"] - len(kept)
    with pytest.raises(ValueError, match="was made with"):
        run(out, POSITIONS, RunSettings(**{**SETTINGS.__dict__, "seed": 8}), workers=1, progress=False)
    with open(batch_folder(out) / "000001.bin", "r+b") as handle:
        handle.seek(len(MAGIC) + 5)
        handle.write(b"\xff")
    with pytest.raises(ValueError, match="does not match its hash"):
        merge(out, POSITIONS)


def _kill_one(name: Callable[[int, str], bool], out: Path, finished: threading.Event) -> int:
    """Once the run of *out* has written a batch, SIGKILL one process for which
    *name* (its pid, its command line) holds: a worker playing a batch. Its pid, or 0
    if none was found before the run finished."""
    folder = batch_folder(out)
    while not finished.is_set() and not (folder.exists() and any(folder.glob("0*.json"))):
        time.sleep(0.05)
    while not finished.is_set():
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if name(int(entry.name), command):
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except ProcessLookupError:
                    continue
                return int(entry.name)
        time.sleep(0.02)
    return 0


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def _run_killing_one(out: Path, name: Callable[[int, str], bool], **kwargs: Any) -> tuple[dict[str, Any], int]:
    finished = threading.Event()
    result: dict[str, Any] = {}

    def play() -> None:
        try:
            result.update(run(out, POSITIONS, SETTINGS, progress=False, **kwargs))
        finally:
            finished.set()

    thread = threading.Thread(target=play)
    thread.start()
    killed = _kill_one(name, out, finished)
    thread.join(timeout=600)
    assert not thread.is_alive()
    return result, killed


@needs_stockfish
def test_a_local_worker_killed_mid_run_loses_no_batch(tmp_path: Path, reference: bytes) -> None:
    """A pool process killed while it plays: the pool is rebuilt and the batches it
    held are played again; the merged file is the same."""
    out = tmp_path / "labels.bin"
    def pool_worker(pid: int, command: str) -> bool:
        return "spawn_main" in command and _parent(pid) == os.getpid()

    figures, killed = _run_killing_one(out, pool_worker, workers=2)
    assert killed, "a worker was killed mid-run"
    assert figures["retried"] >= 1
    assert out.read_bytes() == reference


@needs_stockfish
def test_a_two_node_ray_cluster_with_a_worker_killed_makes_the_same_file(tmp_path: Path, reference: bytes) -> None:
    """A real two-node Ray cluster started here (a head and a second ``ray start
    --address``, one core each, stopped afterwards): the batches are played on both
    nodes, a Ray worker killed while it plays a batch is retried, and the merged file
    is the one two local processes make."""
    pytest.importorskip("ray")
    from raycluster import ray_cluster

    out = tmp_path / "labels.bin"
    with ray_cluster(nodes=2, cpus=1) as address:
        figures, killed = _run_killing_one(out, lambda pid, command: command.startswith("ray::_ray_batch"),
                                           workers=2, ray=address)
    assert killed, "a Ray worker was killed mid-run"
    assert out.read_bytes() == reference
    nodes = {where.split()[1] for where in figures["workers"]}
    assert len(nodes) == 2, figures["workers"]


@needs_stockfish
def test_the_label_command_runs_in_batches_and_says_what_it_merged(tmp_path: Path, reference: bytes) -> None:
    """``tune.py label --ray none``: the batches in local processes, the merged file
    (the same as the run's) and its figures printed: positions before and after
    deduplication, batches, the SHA-256, the positions by piece count."""
    out = tmp_path / "labels.bin"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "tune.py"), "label", "--static", "--nodes", "100",
         "--random-moves", "0.1", "--chess960", "0.5", "--children", "2", "--batch-games", "2",
         "--positions", str(POSITIONS), "--seed", "7", "--force", "--workers", "2", "--ray", "none",
         "--out", str(out)],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.read_bytes() == reference
    state = json.loads(out.with_name("labels.bin.json").read_text())
    assert f"{state['positions']} distinct positions" in done.stdout
    assert f"SHA-256 {hashlib.sha256(reference).hexdigest()}" in done.stdout
    assert "by pieces: " in done.stdout and "0 retried" in done.stdout


@needs_stockfish
def test_the_label_command_stopped_by_an_interrupt_keeps_its_batches(tmp_path: Path, reference: bytes) -> None:
    """Ctrl-C (SIGINT) during a run: no traceback, exit status 130, the batches
    written kept and said; the workers ended with it; ``--merge-done`` merges the
    batches done without playing more; the same command goes on to the run's file.
    The interrupted run asks for a hundred times the positions, so that it cannot end
    before the interrupt comes (compiled, a batch takes a few hundredths of a second);
    one worker, so that its batches end in order. The run that goes on asks for the
    reference's positions: it keeps the batches done and merges the first ones."""
    out = tmp_path / "labels.bin"

    def label_command(positions: int) -> list[str]:
        return [sys.executable, str(ROOT / "scripts" / "tune.py"), "label", "--static", "--nodes", "100",
                "--random-moves", "0.1", "--chess960", "0.5", "--children", "2", "--batch-games", "2",
                "--positions", str(positions), "--seed", "7", "--force", "--workers", "1", "--ray", "none",
                "--out", str(out)]

    command, long_run = label_command(POSITIONS), label_command(100 * POSITIONS)
    # Ctrl-C's default action in the child even where this test runs with SIGINT
    # ignored (a background job of a non-interactive shell: Python then keeps it ignored).
    process = subprocess.Popen(long_run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    folder = batch_folder(out)
    deadline = time.monotonic() + 300
    while not (folder / "000000.json").exists() and process.poll() is None:  # the first batch: one to merge
        assert time.monotonic() < deadline
        time.sleep(0.05)
    children = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if _parent(pid) == process.pid]
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130 and "Traceback" not in err, err[-3000:]
    assert "batches done" in err and "the same command goes on" in err
    assert not any(Path(f"/proc/{pid}").exists() and _parent(pid) == process.pid for pid in children)
    kept = done_batches(out)
    merged = subprocess.run([*long_run, "--merge-done"], capture_output=True, text=True, timeout=600)
    assert merged.returncode == 0 and "distinct positions" in merged.stdout, merged.stderr[-3000:]
    state = json.loads(out.with_name("labels.bin.json").read_text())
    assert 0 < len(state["batches"]) <= len(kept) and state["batches"][0] == kept[0]["sha256"]
    assert done_batches(out) == kept, "--merge-done plays nothing"
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.read_bytes() == reference
