#!/usr/bin/env python3
"""Run EPD test suites (WAC, Bratko-Kopec) on one or more UCI engines at a fixed
time per position and print the solved counts side by side.

    python scripts/suite.py --time 1 tests/data/wac.epd tests/data/bratko-kopec.epd \\
        --engine "python -m blitzaco" --engine "python3 /path/to/sunfish.py"

The logic lives in blitzaco.tools.suite; this is its front end.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from blitzaco.tools.suite import load_suite, run_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="+", help="EPD files with bm/am operations")
    parser.add_argument("--engine", action="append", required=True, help="engine command line (repeatable)")
    parser.add_argument("--time", type=float, default=1.0, help="seconds per position")
    parser.add_argument("--concurrency", type=int, default=1, help="engine processes per engine")
    parser.add_argument("--verbose", action="store_true", help="one line per position")
    args = parser.parse_args(argv)

    table = []
    for command in args.engine:
        row = [command]
        for suite in args.suites:
            positions = load_suite(suite)

            def show(result, command=command) -> None:  # type: ignore[no-untyped-def]
                if args.verbose:
                    mark = "ok " if result.solved else "-- "
                    print(f"{mark}{result.position.id:10s} {result.move} depth {result.depth}  [{command}]", flush=True)

            results = run_suite(shlex.split(command), positions, args.time, concurrency=args.concurrency, progress=show)
            solved = sum(result.solved for result in results)
            row.append(f"{solved}/{len(results)}")
        table.append(row)

    names = [suite.rsplit("/", 1)[-1] for suite in args.suites]
    width = max(len(row[0]) for row in table)
    print(f"{'engine':{width}s}  " + "  ".join(f"{name:>16s}" for name in names) + f"   ({args.time:g} s per position)")
    for row in table:
        print(f"{row[0]:{width}s}  " + "  ".join(f"{cell:>16s}" for cell in row[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
