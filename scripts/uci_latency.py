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

With ``--startup-against OTHER`` it measures start-up only, for the engine command
and OTHER (a shell-quoted command line) alternately, run after run, so that both
see the same machine: the wall time from process start to ``uciok``, from process
start to the ``bestmove`` of a first search (``go movetime 1000`` from the start
position, book off, sent right after ``uciok``: what start-up left for the first
``go`` to do shows here), and the process's CPU time (user + system, read when it
has exited after ``quit``). ``--cold`` empties the kernel's page cache before every
run (``sync``, then ``3`` to ``/proc/sys/vm/drop_caches``; root only), so each
start reads the engine's files from disk, as the first start after a reboot does.
Set ``PYTHONPATH`` per command with ``env``, e.g. to compare with an older
checkout::

    python scripts/uci_latency.py --runs 15 --startup-against \
        "env PYTHONPATH=/path/to/old/src python -m blitzaco"

Python compiles a module at every start unless its bytecode is cached: unset
``PYTHONDONTWRITEBYTECODE`` and let one run warm the cache (the first run of each
command is left out of the figures).

    python scripts/uci_latency.py [--runs 10] [--startup-against OTHER] [-- ENGINE COMMAND ...]
"""

from __future__ import annotations

import argparse
import os
import shlex
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


FIRST_SEARCH_MS = 1000


def drop_page_cache() -> None:
    """Empty the kernel's page cache (root only): the next start reads from disk."""
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as caches:
        caches.write("3\n")


def startup(command: list[str]) -> tuple[float, float, float]:
    """Process start to ``uciok``, to the first search's ``bestmove`` (wall) and
    the CPU time to exit, in ms."""
    engine = Engine(command)
    engine.send("uci")
    uciok = engine.wait_for("uciok") - engine.started
    engine.send("setoption name OwnBook value false")  # a search, not a book move
    engine.send("position startpos")
    engine.send(f"go movetime {FIRST_SEARCH_MS}")
    bestmove = engine.wait_for("bestmove") - engine.started
    engine.send("quit")
    _, _, usage = os.wait4(engine.proc.pid, 0)
    engine.proc.returncode = 0  # reaped above
    return uciok * 1000, bestmove * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def compare_startup(commands: list[list[str]], runs: int, cold: bool = False) -> dict[str, list[float]]:
    """Start-up of each command, alternated, after one warming run each (cold:
    the page cache emptied before every run)."""
    results: dict[str, list[float]] = {}
    for command in commands:
        startup(command)
    for _ in range(runs):
        for command in commands:
            if cold:
                drop_page_cache()
            uciok, bestmove, cpu = startup(command)
            name = " ".join(command)
            results.setdefault(f"{name}: start-up to uciok", []).append(uciok)
            results.setdefault(f"{name}: to the first bestmove ({FIRST_SEARCH_MS} ms search)", []).append(bestmove)
            results.setdefault(f"{name}: CPU time to exit", []).append(cpu)
    return results


def _print(results: dict[str, list[float]], scale: float) -> None:
    for name, values in results.items():
        ms = sorted(v * scale for v in values)
        if not ms:  # e.g. every self-play game ended before ply 100
            print(f"  {name:24s} no measurement")
            continue
        print(f"  {name:24s} {ms[0]:7.1f} / {statistics.median(ms):7.1f} / {ms[-1]:7.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--startup-against", metavar="OTHER", help="measure start-up only, alternating with this command line"
    )
    parser.add_argument(
        "--cold", action="store_true", help="with --startup-against: empty the page cache before every run (root)"
    )
    parser.add_argument("command", nargs="*", help="engine command (default: python -m blitzaco)")
    args = parser.parse_args()
    command = args.command or [sys.executable, "-m", "blitzaco"]
    if args.cold and not args.startup_against:
        parser.error("--cold goes with --startup-against")
    if args.startup_against:
        results = compare_startup([command, shlex.split(args.startup_against)], args.runs, args.cold)
        state = "cold (page cache emptied before each run)" if args.cold else "warm"
        print(f"start-up, {state}, {args.runs} alternated runs each, milliseconds (min / median / max)")
        _print(results, 1.0)
        return 0
    results = measure(command, args.runs)
    print(f"{' '.join(command)}: {args.runs} runs, milliseconds (min / median / max)")
    _print(results, 1000.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
