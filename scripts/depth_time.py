#!/usr/bin/env python3
"""Time to depth from a position, engines in turn: each search a fresh engine over
UCI (python-chess's ``chess.engine``), book off, the wall time from ``go depth N``
to ``bestmove``; the median and range per engine, and the nodes it reported.

    python scripts/depth_time.py --depth 14 build/71c53b4 build/b0d3f35
    python scripts/depth_time.py --depth 14 build/71c53b4:oldnet.toml installed

An engine is a compiled build's folder (``scripts/build_at.py``: its ``site`` goes on
PYTHONPATH) or ``installed`` (the blitzaco this Python imports), optionally
followed by ``:CONFIG``, a ``ConfigFile`` for it. Run it on an idle machine; it
prints figures for a report, not pass/fail.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import chess
import chess.engine


def search(engine: str, depth: int, fen: str) -> tuple[float, int, str]:
    """One search of *engine* to *depth* from *fen*: seconds, nodes, best move."""
    build, _, config = engine.partition(":")
    env = dict(os.environ)
    if build != "installed":
        env["PYTHONPATH"] = str(Path(build, "site").resolve())
    options: dict[str, str | bool] = {"OwnBook": False}
    if config:
        options["ConfigFile"] = str(Path(config).resolve())
    with chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "blitzaco"], env=env) as uci:
        uci.configure(options)
        start = time.perf_counter()
        info = uci.analyse(chess.Board(fen), chess.engine.Limit(depth=depth))
        seconds = time.perf_counter() - start
    pv = info.get("pv") or []
    return seconds, int(info.get("nodes", 0)), pv[0].uci() if pv else "(none)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engines", nargs="+", help="build folder or 'installed', with an optional :CONFIG")
    parser.add_argument("--depth", type=int, default=14)
    parser.add_argument("--runs", type=int, default=5, help="searches per engine, in turn")
    parser.add_argument("--fen", default=chess.STARTING_FEN)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {engine: [] for engine in args.engines}
    nodes: dict[str, set[int]] = {engine: set() for engine in args.engines}
    for run in range(args.runs):
        for engine in args.engines:
            seconds, count, move = search(engine, args.depth, args.fen)
            times[engine].append(seconds)
            nodes[engine].add(count)
            print(f"run {run + 1} {engine}: depth {args.depth} in {seconds:.3f} s, {count:,} nodes, {move}",
                  flush=True)
    for engine in args.engines:
        spent = times[engine]
        counts = ", ".join(f"{count:,}" for count in sorted(nodes[engine]))
        print(f"{engine}: median {statistics.median(spent):.3f} s (range {min(spent):.3f}-{max(spent):.3f}), "
              f"nodes {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
