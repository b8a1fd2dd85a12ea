#!/usr/bin/env python3
"""Smoke-test a built engine as a GUI would use it: the release workflow runs it on
every wheel and binary it builds, and it runs here on the Linux ones.

    python scripts/smoke.py --bench N --compiled blitzaco
    python scripts/smoke.py --bench N --compiled dist/blitzaco
    python scripts/smoke.py python -m blitzaco

N is the bench signature, the number in the ``Bench:`` line of the commit's
message. ENGINE, last, is the command that starts the engine (its arguments after it). Checked, in
order: ``--version`` names BlitzACO (and says "compiled" with ``--compiled``);
``uci`` answers ``uciok`` with the engine's id, ``isready`` ``readyok``; six moves
of a game under a clock (5 s + 0.1 s a side) are legal and each within the time
left; ``go depth 5`` (the book off) reports its depth and a score; ``quit`` ends the process with
status 0; ``bench`` prints its node count, equal to ``--bench`` when given (the
signature of the commit: its message's ``Bench:`` line). Prints one line per check
and the figures (time to ``uciok``, the bench's nodes and nodes a second); exit
status 1 on the first failure.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time

import chess
import chess.engine

GAME_PLIES = 6


class SmokeError(Exception):
    pass


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise SmokeError(what)


def version(command: list[str], compiled: bool) -> str:
    out = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=120)
    line = out.stdout.strip()
    _check(out.returncode == 0 and line.startswith("BlitzACO"), f"--version: {line or out.stderr.strip()!r}")
    if compiled:
        _check("(compiled)" in line, f"not the compiled build: {line!r}")
    return line


def uci(command: list[str]) -> dict[str, float]:
    started = time.perf_counter()
    engine = chess.engine.SimpleEngine.popen_uci(command, timeout=60)
    uciok = time.perf_counter() - started
    try:
        _check(str(engine.id.get("name", "")).startswith("BlitzACO"), f"id name {engine.id.get('name')!r}")
        engine.ping()
        board = chess.Board()
        clock = {chess.WHITE: 5.0, chess.BLACK: 5.0}
        for _ in range(GAME_PLIES):
            limit = chess.engine.Limit(white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                                       white_inc=0.1, black_inc=0.1)
            began = time.perf_counter()
            played = engine.play(board, limit)
            spent = time.perf_counter() - began
            _check(played.move is not None and played.move in board.legal_moves, f"move {played.move} in {board.fen()}")
            _check(spent < clock[board.turn], f"{spent:.2f} s spent of {clock[board.turn]:.2f} s left")
            clock[board.turn] += 0.1 - spent
            board.push(played.move)  # type: ignore[arg-type]
        if "OwnBook" in engine.options:
            engine.configure({"OwnBook": False})  # a search, not the book's answer
        info = engine.analyse(board, chess.engine.Limit(depth=5))
        _check(info.get("depth", 0) >= 5 and "score" in info, f"go depth 5 reported {info}")
    finally:
        engine.quit()
    code = engine.protocol.returncode.result() if hasattr(engine.protocol, "returncode") else 0
    _check(code == 0, f"quit: exit status {code}")
    return {"uciok_ms": 1000 * uciok}


def bench(command: list[str], expected: int | None) -> dict[str, float]:
    out = subprocess.run([*command, "bench"], capture_output=True, text=True, timeout=600)
    text = out.stdout + out.stderr
    nodes = re.search(r"Nodes searched: (\d+)", text)
    rate = re.search(r"Nodes/second: (\d+)", text)
    _check(out.returncode == 0 and nodes is not None, f"bench printed no node count:\n{text[-2000:]}")
    assert nodes is not None
    if expected is not None:
        _check(int(nodes.group(1)) == expected, f"bench {nodes.group(1)}, the signature is {expected}")
    return {"bench_nodes": float(nodes.group(1)), "nodes_per_second": float(rate.group(1)) if rate else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=int, help="the node count bench must print (the commit's signature)")
    parser.add_argument("--compiled", action="store_true", help="require the compiled build")
    parser.add_argument("engine", nargs=argparse.REMAINDER, help="the engine's command")
    args = parser.parse_args(argv)
    if not args.engine:
        parser.error("the engine's command is missing")
    try:
        print(f"version: {version(args.engine, args.compiled)}")
        figures = uci(args.engine)
        print(f"uci: uciok in {figures['uciok_ms']:.0f} ms, {GAME_PLIES} moves under a clock, go depth 5, quit")
        figures = bench(args.engine, args.bench)
        print(f"bench: {figures['bench_nodes']:.0f} nodes, {figures['nodes_per_second']:.0f} nodes/s")
    except (SmokeError, chess.engine.EngineError, subprocess.TimeoutExpired, OSError) as err:
        print(f"smoke: FAILED: {err}", file=sys.stderr)
        return 1
    print("smoke: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
