#!/usr/bin/env python3
"""Measure the protocol's response times, the figures the README quotes.

For an engine command (default: this Python running ``-m blitzaco``) it measures,
over several runs, from the moment the command is written to the moment the answer
arrives:

* start-up: process start to ``uciok``;
* isready while a search runs: ``isready`` to ``readyok``;
* stop: ``stop`` during ``go infinite`` to ``bestmove``;
* quit: ``quit`` during ``go infinite`` to process exit;
* a move at a bare clock: the engine plays a game against itself as a GUI drives
  it (``position startpos moves …`` with the whole game, then ``go wtime 20 btime
  20 winc 10 binc 10``, a clock below Move Overhead, so the search gets well under
  a millisecond), and the time from ``position`` to ``bestmove`` is taken for
  every move after ply 100: the fixed cost of a move late in a long game, which
  must stay below a bullet increment.

It prints the minimum, median and maximum of each, in milliseconds. These are
benchmark figures for a report, not test assertions: a shared machine makes them
vary from run to run.

    python scripts/uci_latency.py [--runs 10] [-- ENGINE COMMAND ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


class Engine:
    def __init__(self, command: list[str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(self, line: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return time.perf_counter()

    def read_until(self, prefix: str) -> str:
        """The first line starting with *prefix*."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(prefix):
                return line
        raise EOFError(f"engine ended before '{prefix}'")

    def wait_for(self, prefix: str) -> float:
        self.read_until(prefix)
        return time.perf_counter()

    def search_for(self, seconds: float) -> None:
        self.send("position startpos moves e2e4 e7e5 g1f3 b8c6")
        self.send("go infinite")
        time.sleep(seconds)


def late_moves(engine: Engine, plies: int = 160, after: int = 100) -> list[float]:
    """Self-play at a bare clock; the position-to-bestmove times after ply *after*."""
    moves: list[str] = []
    times = []
    engine.send("ucinewgame")
    for ply in range(plies):
        sent = engine.send("position startpos moves " + " ".join(moves) if moves else "position startpos")
        engine.send("go wtime 20 btime 20 winc 10 binc 10")
        line = engine.read_until("bestmove")
        if ply >= after:
            times.append(time.perf_counter() - sent)
        move = line.split()[1]
        if move == "0000":  # the game is over
            break
        moves.append(move)
    return times


def measure(command: list[str], runs: int) -> dict[str, list[float]]:
    names = ("start-up to uciok", "isready during search", "stop to bestmove", "quit to exit", "move after ply 100")
    results: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(runs):
        engine = Engine(command)
        engine.send("uci")
        results["start-up to uciok"].append(engine.wait_for("uciok") - engine.started)
        engine.search_for(0.5)
        sent = engine.send("isready")
        results["isready during search"].append(engine.wait_for("readyok") - sent)
        sent = engine.send("stop")
        results["stop to bestmove"].append(engine.wait_for("bestmove") - sent)
        results["move after ply 100"].extend(late_moves(engine))
        engine.search_for(0.5)
        sent = engine.send("quit")
        engine.proc.wait(timeout=30)
        results["quit to exit"].append(time.perf_counter() - sent)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("command", nargs="*", help="engine command (default: python -m blitzaco)")
    args = parser.parse_args()
    command = args.command or [sys.executable, "-m", "blitzaco"]
    results = measure(command, args.runs)
    print(f"{' '.join(command)}: {args.runs} runs, milliseconds (min / median / max)")
    for name, values in results.items():
        ms = sorted(v * 1000 for v in values)
        if not ms:  # e.g. every self-play game ended before ply 100
            print(f"  {name:24s} no measurement")
            continue
        print(f"  {name:24s} {ms[0]:7.1f} / {statistics.median(ms):7.1f} / {ms[-1]:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
