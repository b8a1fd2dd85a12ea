"""``scripts/smp_bench.py``: what ``Threads`` buys and what the shared table costs.

Two measurements, both on this machine as it is (run them on an idle machine, and
more than once: a shared machine varies by several per cent from run to run):

* **Time to depth.** The bench positions (:data:`blitzaco.tools.bench.BENCH_FENS`)
  searched to a fixed depth from a fresh state (``ucinewgame``, no book, no
  pheromone trails) with ``Threads`` 1, then 2 (or the values given): the wall time
  of each search, its nodes (every process's) and the node rate. The speed-up is
  the ratio of the total times, and the geometric mean of the per-position ratios.
  The helpers are started and waited for before the clock runs.
* **Table cost.** The microseconds of a probe (hit and miss) and of a store, in the
  process's own table of ``Threads`` 1 and in the shared-memory table, both of ``--hash``
  MB, filled with random entries first; each figure is the best of a few rounds,
  the cost of the bare loop taken off.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess

from blitzaco.config import Config, ConfigError, load_config
from blitzaco.engine import Engine
from blitzaco.sharedtt import SharedTranspositionTable
from blitzaco.timeman import Limits
from blitzaco.tools.bench import BENCH_FENS
from blitzaco.tt import EXACT, TranspositionTable

__all__ = ["DepthRun", "TableCost", "time_to_depth", "table_costs", "main"]

#: Longest wait for the helpers to start before a time-to-depth run (seconds).
HELPER_START_TIMEOUT = 120.0


@dataclass(frozen=True)
class DepthRun:
    """One position searched to the depth with some number of threads."""

    threads: int
    position: int
    seconds: float
    nodes: int
    depth: int
    move: str


@dataclass(frozen=True)
class TableCost:
    """Microseconds per operation of one table."""

    table: str
    probe_hit_us: float
    probe_miss_us: float
    store_us: float


def time_to_depth(
    depth: int,
    threads: int,
    fens: Sequence[str] = BENCH_FENS,
    hash_mb: int = 64,
    config: Config | None = None,
    out: Callable[[str], None] = print,
) -> list[DepthRun]:
    """Search every position of *fens* to *depth* with *threads*; one
    :class:`DepthRun` each (wall time of the search alone)."""
    engine = Engine(config, hash_mb=hash_mb)
    runs = []
    try:
        engine.set_option("own_book", False)
        engine.trails.clear()
        if threads > 1:
            out(f"info: {engine.set_option('threads', threads)}")
            assert engine.pool is not None
            if not engine.pool.wait_ready(HELPER_START_TIMEOUT):
                raise RuntimeError(f"the helpers did not start within {HELPER_START_TIMEOUT:g} s")
        for number, fen in enumerate(fens, start=1):
            engine.new_game()
            board = chess.Board(fen)
            started = time.perf_counter()
            result = engine.think(board, Limits(depth=depth))
            seconds = time.perf_counter() - started
            move = board.uci(result.move) if result.move else "0000"
            run = DepthRun(threads, number, seconds, result.nodes, result.depth, move)
            runs.append(run)
            out(
                f"Threads {threads} position {number:2d}/{len(fens)}: {seconds * 1000:9.0f} ms "
                f"{result.nodes:9d} nodes {_rate(result.nodes, seconds):7d} nodes/s depth {result.depth} {move}"
            )
    finally:
        engine.close()
    return runs


def _rate(nodes: int, seconds: float) -> int:
    return int(nodes / seconds) if seconds > 0 else 0


def table_costs(operations: int = 200_000, hash_mb: int = 64, rounds: int = 3, seed: int = 1) -> list[TableCost]:
    """The cost of probe and store (through ``probe`` and ``store``, from Python) in
    the process's own table and the shared table."""
    costs = [_measure("own", TranspositionTable(hash_mb), operations, rounds, seed)]
    shared = SharedTranspositionTable(hash_mb)
    try:
        costs.append(_measure("shared", shared, operations, rounds, seed))
    finally:
        shared.close()
    return costs


def _measure(name: str, table: TranspositionTable, operations: int, rounds: int, seed: int) -> TableCost:
    rng = random.Random(seed)
    table.new_search()
    size = len(table)
    # Fill the table, then keep keys known to be there (hits) and keys that are not.
    for _ in range(size):
        table.store(rng.getrandbits(64), rng.randrange(1, 1 << 15), rng.randrange(-300, 300), 5, EXACT)
    hits = [rng.getrandbits(64) for _ in range(operations)]
    for key in hits:
        table.store(key, 1, 0, 9, EXACT)
    hits = [key for key in hits if table.probe(key) is not None][: max(1, operations)]
    misses = [rng.getrandbits(64) for _ in range(operations)]
    probe, store = table.probe, table.store

    def loop(keys: list[int]) -> float:
        started = time.perf_counter()
        for _key in keys:
            pass
        return time.perf_counter() - started

    def probes(keys: list[int]) -> float:
        started = time.perf_counter()
        for key in keys:
            probe(key)
        return time.perf_counter() - started

    def stores(keys: list[int]) -> float:
        started = time.perf_counter()
        for key in keys:
            store(key, 77, 12, 9, EXACT)
        return time.perf_counter() - started

    def best(step: Callable[[list[int]], float], keys: list[int]) -> float:
        bare = min(loop(keys) for _ in range(rounds))
        spent = min(step(keys) for _ in range(rounds))
        return max(0.0, spent - bare) / len(keys) * 1e6

    return TableCost(name, best(probes, hits), best(probes, misses), best(stores, misses))


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(
        prog="smp_bench.py",
        description="Time to depth and node rate with Threads 1 and 2 on the bench positions, "
        "and the cost of a shared-table probe and store against the process's own table.",
    )
    parser.add_argument("--depth", type=int, default=8, help="search depth (default: %(default)s)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="Threads values (default: 1 2)")
    parser.add_argument("--positions", type=int, default=len(BENCH_FENS),
                        help="the first N bench positions (default: all %(default)s)")
    parser.add_argument("--hash", type=int, default=64, help="table size in MB (default: %(default)s)")
    parser.add_argument("--operations", type=int, default=200_000,
                        help="table operations timed per figure (default: %(default)s)")
    parser.add_argument("--config", metavar="FILE",
                        help="a config.toml for the searches, e.g. other [threads] skip tables "
                        "(default: the shipped one)")
    parser.add_argument("--no-search", action="store_true", help="only the table costs")
    parser.add_argument("--no-table", action="store_true", help="only the time to depth")
    args = parser.parse_args(argv)
    if args.depth < 1 or args.positions < 1 or args.hash < 1 or args.operations < 1 or min(args.threads) < 1:
        parser.error("depth, positions, hash, operations and threads must be positive")
    try:
        config = load_config(args.config) if args.config else None
    except ConfigError as err:
        parser.error(str(err))

    if not args.no_table:
        out(f"Table cost, {args.hash} MB, filled ({args.operations} operations per figure, best of 3):")
        out(f"{'table':>8} {'probe hit':>10} {'probe miss':>11} {'store':>8}   (microseconds)")
        for cost in table_costs(args.operations, args.hash):
            out(f"{cost.table:>8} {cost.probe_hit_us:10.3f} {cost.probe_miss_us:11.3f} {cost.store_us:8.3f}")
        out("")

    if not args.no_search:
        fens = BENCH_FENS[: args.positions]
        totals: dict[int, list[DepthRun]] = {}
        for threads in args.threads:
            totals[threads] = time_to_depth(args.depth, threads, fens, args.hash, config, out=out)
        out("")
        out(f"Time to depth {args.depth}, {len(fens)} positions:")
        base = args.threads[0]
        for threads, runs in totals.items():
            seconds = sum(run.seconds for run in runs)
            nodes = sum(run.nodes for run in runs)
            line = f"Threads {threads}: {seconds:8.2f} s {nodes:10d} nodes {_rate(nodes, seconds):7d} nodes/s"
            if threads != base:
                reference = totals[base]
                ratios = [old.seconds / new.seconds for old, new in zip(reference, runs, strict=True) if new.seconds]
                geometric = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else 0.0
                speedup = sum(run.seconds for run in reference) / seconds if seconds else 0.0
                line += (
                    f"   time-to-depth speed-up against Threads {base}: {speedup:.2f} "
                    f"(geometric mean {geometric:.2f})"
                )
            out(line)
    return 0
