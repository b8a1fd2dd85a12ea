"""``blitzaco bench``: the search's signature.

Thirty fixed positions (openings, middlegames, tactics, endgames) are searched to a
fixed depth, each from a fresh state (empty table, no book, no tablebases, no
pheromone trails). The node
count depends only on the code and the configuration, not on the machine or the
clock, so the same code prints the same ``Nodes searched`` everywhere; commits that
change the search or the evaluation quote it as ``Bench: N``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import chess

from blitzaco.config import Config
from blitzaco.engine import Engine
from blitzaco.timeman import Limits

__all__ = ["BENCH_FENS", "DEFAULT_BENCH_DEPTH", "run_bench"]

DEFAULT_BENCH_DEPTH = 7

BENCH_FENS = (
    # openings and early middlegames
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5",
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2N2N2/PPPP1PPP/R1BQK2R w KQkq - 6 5",
    "rnbqkbnr/pp3ppp/4p3/2pP4/8/3P2P1/PP2PP1P/RNBQKBNR b KQkq - 0 4",
    "r1bqkbnr/pppn1ppp/3p4/4p3/3PP3/8/PPP1BPPP/RNBQK1NR b KQkq - 1 4",
    "rnbq1rk1/ppp1ppbp/3p1np1/8/2PPP3/2N2N2/PP2BPPP/R1BQK2R b KQ - 3 6",
    # perft positions: castling, promotions, en passant, pins
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    # tactics (Win At Chess)
    "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
    "r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1",
    "5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1",
    "5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - 0 1",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1",
    # quieter middlegames
    "3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - 0 1",
    "2q1rr1k/3bbnnp/p2p1pp1/2pPp3/PpP1P1P1/1P2BNNP/2BQ1PRK/7R b - - 0 1",
    "r1bqr1k1/pp1nbppp/2p2n2/3p4/2PP4/2NBPN2/PPQ2PPP/R3K2R w KQ - 4 9",
    # endgames
    "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1",
    "8/k7/3p4/p2P1p2/P2P1P2/8/8/K7 w - - 0 1",
    "6k1/5pp1/7p/8/3R4/6P1/r4PKP/8 w - - 0 40",
    "8/5pk1/4p1p1/3pP3/3P1PK1/8/8/8 w - - 0 50",
    "4k3/8/8/8/8/8/8/4KQ2 w - - 0 1",
    "8/8/3k4/8/8/3K4/3B4/3N4 w - - 0 1",
    "2r3k1/5pp1/4p2p/1p6/3n4/1B3P2/5KPP/3R4 b - - 0 30",
    "8/8/1p1k4/1P6/2K5/8/8/8 w - - 0 1",
    "8/pp3k2/2p5/3p1K2/3P4/2P5/PP6/8 w - - 0 1",
)


def run_bench(
    depth: int = DEFAULT_BENCH_DEPTH,
    config: Config | None = None,
    out: Callable[[str], None] = print,
) -> tuple[int, float]:
    """Search every bench position to *depth*; returns (nodes, seconds)."""
    engine = Engine(config)
    engine.set_option("own_book", False)  # the signature measures the search, not the book
    engine.trails.clear()  # nor a trained pheromone memory
    total_nodes = 0
    started = time.perf_counter()
    for number, fen in enumerate(BENCH_FENS, start=1):
        engine.new_game()
        board = chess.Board(fen)
        limits = Limits(depth=depth)
        result = engine.think(board, limits)
        total_nodes += result.nodes
        move = board.uci(result.move) if result.move else "0000"
        out(f"Position {number:2d}/{len(BENCH_FENS)}: {result.nodes:9d} nodes, bestmove {move}")
    elapsed = time.perf_counter() - started
    out("")
    out(f"Total time (ms): {int(elapsed * 1000)}")
    out(f"Nodes searched: {total_nodes}")
    out(f"Nodes/second: {int(total_nodes / elapsed) if elapsed > 0 else 0}")
    return total_nodes, elapsed
