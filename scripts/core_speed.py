#!/usr/bin/env python3
"""Speed of the engine's board and evaluations, in CPU time of this process:

    PYTHONPATH=build/HEAD/site python scripts/core_speed.py   # the compiled build (scripts/build_at.py)
    python scripts/core_speed.py                              # the installed or source build

* perft: leaves per second of ``blitzaco.board.perft``, start position depth 5 and
  Kiwipete depth 4 (the python-chess search's walk it was once compared with is
  gone; the ledger keeps those figures);
* evaluation: microseconds per evaluation of ``blitzaco.classical`` over the
  positions of 20 seeded random games, each pass with a fresh evaluator (every score
  computed, the pawn-structure cache shared within the pass, as in a search);
* the network on the engine's board (``blitzaco.network`` with ``assets/net.bin``):
  microseconds to follow a move (make and unmake, the board's own subtracted) and
  per output, over every legal move of those positions (best of 3).

It prints which build it measured (compiled modules or pure).
"""

from __future__ import annotations

import argparse
import random
import time

import chess

from blitzaco import board as core
from blitzaco.bundled import bundled_file
from blitzaco.classical import Classical
from blitzaco.config import Config
from blitzaco.network import NetEvaluator
from blitzaco.nnue import load_weights
from blitzaco.tools.boardcheck import code_of

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def _timed(function, *args):  # type: ignore[no-untyped-def]
    start = time.process_time()
    result = function(*args)
    return result, time.process_time() - start


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    compiled = not core.__file__.endswith((".py", ".pyc"))
    print(f"build: {'compiled' if compiled else 'pure'} ({core.__file__})")
    for fen, depth in ((chess.STARTING_FEN, 5), (KIWIPETE, 4)):
        leaves, seconds = _timed(core.perft, core.Board.from_chess(chess.Board(fen)), depth)
        print(f"perft board  {fen.split()[0][:16]:16} depth {depth}: {leaves:>9} leaves {seconds:7.3f} s "
              f"{leaves / seconds:12,.0f} leaves/s")
    rng = random.Random(1)
    boards = []
    for _ in range(20):
        board = chess.Board()
        for _ in range(80):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            boards.append(board.copy(stack=False))
    config = Config().eval
    natives = [core.Board.from_chess(board) for board in boards]
    passes = 20
    start = time.process_time()
    for _ in range(passes):
        evaluator = Classical(config)
        for native in natives:
            evaluator.reset(native)
            evaluator.evaluate(native)
    native_us = (time.process_time() - start) / (passes * len(natives)) * 1e6
    print(f"evaluation over {len(boards)} positions: classical.py {native_us:.2f} us (reset included)")
    _network(boards[::8])


def _network(boards: list[chess.Board]) -> None:
    """The network evaluator's cost to follow a move and to compute its output."""
    path = bundled_file("net.bin")
    if path is None:
        print("network: assets/net.bin is not installed")
        return
    evaluator = NetEvaluator(Config().eval, load_weights(path))
    items = [(core.Board.from_chess(board, 4), [code_of(move) for move in board.legal_moves]) for board in boards]

    def loop(follow: bool, evaluate: bool) -> float:
        moves = 0
        start = time.process_time()
        for _ in range(20):
            for native, codes in items:
                evaluator.reset(native)
                for code in codes:
                    native.make(code)
                    if follow:
                        evaluator.make(native)
                        if evaluate:
                            evaluator.evaluate(native)
                        evaluator.unmake()
                    native.unmake()
                    moves += 1
        return (time.process_time() - start) / moves * 1e6

    bare = min(loop(False, False) for _ in range(3))
    follow = min(loop(True, False) for _ in range(3))
    full = min(loop(True, True) for _ in range(3))
    print(f"network {evaluator.hidden}x2 over {sum(len(codes) for _, codes in items)} moves: follow a move "
          f"{follow - bare:.3f} us, output {full - follow:.3f} us (the board's make and unmake {bare:.3f} us)")


if __name__ == "__main__":
    main()
