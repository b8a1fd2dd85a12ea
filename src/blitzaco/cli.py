"""The ``blitzaco`` command: the UCI engine by default, plus development commands."""

from __future__ import annotations

import argparse
import sys

import chess

from blitzaco import ENGINE_NAME, __version__
from blitzaco.config import Config, ConfigError, dump_toml, load_config

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blitzaco",
        description=f"{ENGINE_NAME} {__version__}, a UCI chess engine. "
        "Without a command it speaks UCI on stdin/stdout.",
    )
    parser.add_argument("--config", metavar="FILE", help="a config.toml replacing the built-in defaults")
    parser.add_argument("--version", action="version", version=f"{ENGINE_NAME} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("uci", help="speak UCI on stdin/stdout (the default)")
    bench = commands.add_parser("bench", help="search the fixed bench positions; prints the node count last")
    bench.add_argument("depth", type=int, nargs="?", help="search depth (default: %(default)s)")
    perft = commands.add_parser("perft", help="count leaf nodes of the move tree, split by root move")
    perft.add_argument("depth", type=int)
    perft.add_argument("fen", nargs="*", help="position (default: the start position)")
    commands.add_parser("config", help="print the built-in configuration as TOML (this is config.toml)")
    evaluate = commands.add_parser("eval", help="print the static evaluation of a position")
    evaluate.add_argument("fen", nargs="*", help="position (default: the start position)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    config = Config()
    if args.config:
        try:
            config = load_config(args.config)
        except ConfigError as err:
            print(f"blitzaco: {err}", file=sys.stderr)
            return 2

    if args.command in (None, "uci"):
        from blitzaco import uci
        from blitzaco.engine import Engine

        return uci.main(Engine(config))

    if args.command == "bench":
        from blitzaco.bench import DEFAULT_BENCH_DEPTH, run_bench

        run_bench(args.depth if args.depth is not None else DEFAULT_BENCH_DEPTH, config)
        return 0

    if args.command == "config":
        sys.stdout.write(dump_toml(config))
        return 0

    board = _board(args.fen)
    if board is None:
        return 2
    if args.command == "perft":
        from blitzaco.perft import divide

        if args.depth < 1:
            print("blitzaco: perft depth must be at least 1", file=sys.stderr)
            return 2
        total = 0
        for move, count in divide(board, args.depth):
            print(f"{move.uci()}: {count}")
            total += count
        print()
        print(f"Nodes searched: {total}")
        return 0

    from blitzaco.evaluate import Evaluator

    score = Evaluator(config.eval).evaluate_board(board)
    white = score if board.turn == chess.WHITE else -score
    print(f"Static evaluation: {white / 100:+.2f} (white side)")
    return 0


def _board(fen_words: list[str]) -> chess.Board | None:
    if not fen_words:
        return chess.Board()
    fen = " ".join(fen_words)
    try:
        board = chess.Board(fen, chess960=True)
    except ValueError as err:
        print(f"blitzaco: bad FEN '{fen}': {err}", file=sys.stderr)
        return None
    board.chess960 = board.has_chess960_castling_rights()
    return board
