#!/usr/bin/env python3
"""Time to depth from a position, engines in turn: each search a fresh engine over
UCI (python-chess's ``chess.engine``), book off, the wall time from ``go depth N``
to ``bestmove``; the median and range per engine, and the nodes it reported.

    python scripts/depth_time.py --depth 14 \\
        --engine 'name=new cmd="python -m blitzaco" env.PYTHONPATH=build/71c53b4/site' \\
        --engine 'name=old cmd="python -m blitzaco" env.PYTHONPATH=build/b0d3f35/site'

Each ``--engine`` is written as ``match.py``'s (``name=``, ``cmd=``, ``option.X=``,
``env.X=``, ``dir=``; :class:`blitzaco.tools.match.runner.EngineSpec`): a compiled
build by its ``site`` on PYTHONPATH (``scripts/build_at.py``), a ``ConfigFile`` by
``option.ConfigFile=``. ``OwnBook`` is off unless an engine sets it. Run it on an idle
machine; it prints figures for a report, not pass/fail.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time

import chess
import chess.engine

from blitzaco.tools.match.runner import EngineSpec


def search(spec: EngineSpec, depth: int, fen: str) -> tuple[float, int, str]:
    """One search of a fresh *spec* engine to *depth* from *fen*: seconds, nodes, best move."""
    booked = dataclasses.replace(spec, options=(("OwnBook", False), *spec.options))
    engine = booked.open()
    try:
        start = time.perf_counter()
        info = engine.analyse(chess.Board(fen), chess.engine.Limit(depth=depth))
        seconds = time.perf_counter() - start
    finally:
        engine.quit()
    pv = info.get("pv") or []
    return seconds, int(info.get("nodes", 0)), pv[0].uci() if pv else "(none)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", action="append", required=True, metavar="SPEC",
                        help="an engine as match.py takes it; give it once per engine")
    parser.add_argument("--depth", type=int, default=14)
    parser.add_argument("--runs", type=int, default=5, help="searches per engine, in turn")
    parser.add_argument("--fen", default=chess.STARTING_FEN)
    args = parser.parse_args(argv)
    specs = [EngineSpec.parse(text) for text in args.engine]
    if len({spec.name for spec in specs}) != len(specs):
        parser.error("each --engine needs its own name=")
    times: dict[str, list[float]] = {spec.name: [] for spec in specs}
    nodes: dict[str, set[int]] = {spec.name: set() for spec in specs}
    for run in range(args.runs):
        for spec in specs:
            seconds, count, move = search(spec, args.depth, args.fen)
            times[spec.name].append(seconds)
            nodes[spec.name].add(count)
            print(f"run {run + 1} {spec.name}: depth {args.depth} in {seconds:.3f} s, {count:,} nodes, {move}",
                  flush=True)
    for name, spent in times.items():
        counts = ", ".join(f"{count:,}" for count in sorted(nodes[name]))
        print(f"{name}: median {statistics.median(spent):.3f} s (range {min(spent):.3f}-{max(spent):.3f}), "
              f"nodes {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
