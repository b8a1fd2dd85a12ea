"""The ``blitzaco`` command: the UCI engine by default, plus development commands."""

from __future__ import annotations

import argparse
import sys

import chess

from blitzaco import ENGINE_NAME, __version__
from blitzaco.config import Config, ConfigError, dump_toml, load_config

__all__ = ["main"]


class _Version(argparse.Action):
    """``--version``: the name, the version and the build, compiled or interpreted
    (the board is imported only when asked: the UCI start-up does not pay for it)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object,
                 option_string: str | None = None) -> None:
        from blitzaco.board import INTERPRETED

        build = "compiled"
        if INTERPRETED:
            build = "interpreted: install with a C compiler, or the release's wheel, for the compiled build"
        print(f"{ENGINE_NAME} {__version__} ({build})")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="blitzaco",
        description=f"{ENGINE_NAME} {__version__}, a UCI chess engine. "
        "Without a command it speaks UCI on stdin/stdout.",
    )
    parser.add_argument("--config", metavar="FILE", help="a config.toml replacing the built-in defaults")
    parser.add_argument("--version", action=_Version, help="the version, and whether this build is compiled")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("uci", help="speak UCI on stdin/stdout (the default)")
    bench = commands.add_parser("bench", help="search the fixed bench positions; prints the node count last")
    bench.add_argument("depth", type=int, nargs="?", help="search depth (default: %(default)s)")
    perft = commands.add_parser("perft", help="count leaf nodes of the move tree, split by root move")
    perft.add_argument("depth", type=int)
    perft.add_argument("fen", nargs="*", help="position (default: the start position)")
    commands.add_parser("config", help="print the built-in configuration as TOML (config.toml, the defaults)")
    analyse = commands.add_parser("analyse", help="classify every move of the games in a PGN file")
    analyse.add_argument("pgn", help="the games")
    budget = analyse.add_mutually_exclusive_group()
    budget.add_argument("--depth", type=int, help="search depth per position (default: 7)")
    budget.add_argument("--nodes", type=int, help="nodes per position")
    budget.add_argument("--movetime", type=int, help="milliseconds per position")
    analyse.add_argument("--out", help="annotated PGN (default: GAME.annotated.pgn beside the input)")
    analyse.add_argument("--graph", help="write an evaluation graph here (PNG; needs matplotlib)")
    analyse.add_argument("--quiet", action="store_true", help="no progress bar")
    colony = commands.add_parser("colony", help="train the pheromone memory with ants (self-play games)")
    colony.add_argument("--ants", type=int, default=100, help="self-play games (default: %(default)s)")
    colony.add_argument("--mode", choices=("adventurous", "greedy"), default="adventurous",
                        help="adventurous: roulette-wheel moves; greedy: the best-marked move (default: %(default)s)")
    colony.add_argument("--fen", help="start position (default: the start position)")
    colony.add_argument("--moves", default="", help="moves played from it first, in UCI (e.g. 'e2e4 e7e5')")
    colony.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    colony.add_argument("--memory", help="start from this pheromone file instead of an empty memory")
    colony.add_argument("--out", default="assets/pheromone.bin", help="file to write (default: %(default)s)")
    colony.add_argument("--quiet", action="store_true", help="no progress lines")
    evaluate = commands.add_parser("eval", help="print the static evaluation of a position, term by term")
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
        from blitzaco.tools.bench import DEFAULT_BENCH_DEPTH, run_bench

        run_bench(args.depth if args.depth is not None else DEFAULT_BENCH_DEPTH, config)
        return 0

    if args.command == "config":
        sys.stdout.write(dump_toml(config))
        return 0

    if args.command == "analyse":
        return _analyse(args, config)

    if args.command == "colony":
        return _colony(args, config)

    board = _board(args.fen)
    if board is None:
        return 2
    if args.command == "perft":
        from blitzaco.perft import divide

        if args.depth < 1:
            print("blitzaco: perft depth must be at least 1", file=sys.stderr)
            return 2
        total = 0
        split = [(board.uci(move), count) for move, count in divide(board, args.depth)]
        for move, count in split:
            print(f"{move}: {count}")
            total += count
        print()
        print(f"Nodes searched: {total}")
        return 0

    from blitzaco.engine import Engine

    for line in Engine(config).explain(board):
        print(line)
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


def _analyse(args: argparse.Namespace, config: Config) -> int:
    from pathlib import Path

    try:
        from blitzaco.tools.analyse import analyse_pgn, format_summary, plot, progress_bar
    except ImportError as err:  # the frozen engine leaves out chess.pgn
        print(f"blitzaco: analyse is not available in this build ({err}); "
              "install the package: pip install blitzaco", file=sys.stderr)
        return 2
    from blitzaco.timeman import Limits

    source = Path(args.pgn)
    if not source.is_file():
        print(f"blitzaco: no such file: {source}", file=sys.stderr)
        return 2
    limits = Limits(depth=args.depth if args.depth or args.nodes or args.movetime else 7, nodes=args.nodes,
                    movetime=args.movetime)
    analyses, problems = analyse_pgn(source, limits, config=config, progress=None if args.quiet else progress_bar)
    for problem in problems:
        print(f"blitzaco: {problem}", file=sys.stderr)
    out = Path(args.out) if args.out else source.with_suffix(".annotated.pgn")
    out.write_text("".join(analysis.pgn for analysis in analyses), encoding="utf-8")
    for analysis in analyses:
        print(format_summary(analysis))
    print(f"annotated PGN: {out}")
    if args.graph and analyses:
        try:
            plot(analyses, args.graph)
        except ImportError:
            print("blitzaco: the graph needs matplotlib (pip install 'blitzaco[analyse]')", file=sys.stderr)
            return 1
        print(f"graph: {args.graph}")
    return 0


def _colony(args: argparse.Namespace, config: Config) -> int:
    from blitzaco.pheromone import Trails
    from blitzaco.tools.colony import train

    board = _board(args.fen.split() if args.fen else [])
    if board is None:
        return 2
    try:
        for text in args.moves.split():
            board.push(board.parse_uci(text))
    except ValueError as err:
        print(f"blitzaco: bad move in --moves: {err}", file=sys.stderr)
        return 2
    if args.ants < 1:
        print("blitzaco: --ants must be at least 1", file=sys.stderr)
        return 2
    trails = Trails(config.pheromone)
    if args.memory:
        problem = trails.load(args.memory)
        if problem is not None:
            print(f"blitzaco: {problem}", file=sys.stderr)
            return 2
    stats = train(config, trails, board, args.ants, mode=args.mode, seed=args.seed,
                  progress=None if args.quiet else lambda text: print(text, file=sys.stderr, flush=True))
    problem = trails.save(args.out)
    if problem is not None:
        print(f"blitzaco: {problem}", file=sys.stderr)
        return 1
    print(f"{stats.ants} ants ({args.mode}), {stats.plies} plies, {stats.generations} evaporations, "
          f"White scored {stats.white_points / stats.ants:.3f} per game, {stats.seconds:.1f} s")
    trail_count = sum(len(row) for row in trails.long.values())
    print(f"{trail_count} trails on {len(trails.long)} positions written to {args.out}")
    return 0
