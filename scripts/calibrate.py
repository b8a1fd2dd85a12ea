#!/usr/bin/env python3
"""Calibrate the strength levels against Stockfish 15.1's UCI_Elo (issue 23).

    # measure Skill Levels (against Stockfish, and below its 1350 by a chain of levels)
    python scripts/calibrate.py measure --levels 20 16 12 8 4 0 --games 100 \\
        --tc 10+0.1 --concurrency 2 --pgn-folder runs/calibrate
    # then check the UCI_Elo scale: BlitzACO at X against Stockfish at X
    python scripts/calibrate.py verify --elo 1400 1600 --games 100 --tc 10+0.1 --concurrency 2

With ``--pgn-folder`` the calibration can be spread over several sittings: a match
whose games are all in the folder is read back instead of played again.

``measure`` prints the table of matches and the fitted ``[levels] elo_of_level``
(paste it into config.toml); ``verify`` prints its table. The engine
is this checkout's (``--engine`` to change it, cutechess-cli style as
scripts/match.py), Stockfish the one on PATH or in /usr/games. The logic lives in
blitzaco.tools.calibrate.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from blitzaco.config import Config
from blitzaco.tools.calibrate import Plan, fitted_table, format_rows, measure, verify
from blitzaco.tools.match.runner import Adjudication, EngineSpec, MatchLimit, load_openings, print_progress


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("measure", "verify"))
    parser.add_argument(
        "--levels",
        type=int,
        nargs="+",
        default=[20, 16, 12, 8, 4, 0],
        help="measure: the Skill Levels (0-20) to measure",
    )
    parser.add_argument(
        "--first-guess",
        type=float,
        help="measure: the Elo guessed for the highest level, instead of its elo_of_level entry",
    )
    parser.add_argument("--elo", type=int, nargs="+", default=[1400, 1600], help="verify: the UCI_Elo values")
    parser.add_argument(
        "--engine",
        default=f'name=blitzaco cmd="{sys.executable} -m blitzaco" option.OwnBook=false',
        help="BlitzACO, as scripts/match.py takes an engine",
    )
    parser.add_argument("--stockfish", help="the Stockfish binary (default: on PATH or in /usr/games)")
    parser.add_argument("--openings", default="tests/data/openings.epd")
    parser.add_argument("--games", type=int, default=100, help="games per match")
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--resign", default="1000:5")
    parser.add_argument("--draw", default="10:8:40")
    parser.add_argument(
        "--pgn-folder",
        help="write each match's games here; a match finished there by an earlier run is read back, not replayed",
    )
    args = parser.parse_args(argv)

    stockfish = args.stockfish or shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")
    if not stockfish:
        parser.error("no Stockfish found: install it (apt-get install stockfish) or give --stockfish")
    folder = Path(args.pgn_folder) if args.pgn_folder else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    plan = Plan(
        engine=EngineSpec.parse(args.engine),
        stockfish=EngineSpec("stockfish", (stockfish,), (("Threads", 1), ("Hash", 16))),
        openings=load_openings(args.openings),
        limit=MatchLimit.parse(args.tc),
        games=args.games,
        concurrency=args.concurrency,
        adjudication=Adjudication.parse(args.resign, args.draw),
        pgn_folder=folder,
    )
    if args.command == "measure":
        table = Config().levels.elo_of_level
        results = measure(plan, args.levels, table, print_progress, args.first_guess)
        print("\n".join(format_rows(results)))
        print(f"elo_of_level = {list(fitted_table(results, table))}")
    else:
        print("\n".join(format_rows(verify(plan, args.elo, print_progress))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
