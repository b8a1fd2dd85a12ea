#!/usr/bin/env python3
"""Show how match runner PGNs spend the time per move: a summary table per player and
a plot of the mean seconds per move (with quartiles) against the move number.

    python scripts/plot_time.py runs/tm/tm400.pgn --plot time.png --players adaptive flat
"""

from __future__ import annotations

import argparse
import sys

from blitzaco.tools.timeplot import MIN_GAMES, plot, read_games, summarise, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+")
    parser.add_argument("--plot", help="PNG of the seconds per move against the move number")
    parser.add_argument("--players", nargs="+", help="only these players (default: all)")
    parser.add_argument("--min-games", type=int, default=MIN_GAMES,
                        help=f"plot a move number while this many games reach it (default {MIN_GAMES})")
    args = parser.parse_args(argv)
    records, left_out = read_games(args.pgn)
    if args.players:
        unknown = sorted(set(args.players) - {record.player for record in records})
        if unknown:
            parser.error(f"no games of {', '.join(unknown)} in {', '.join(args.pgn)}")
        records = [record for record in records if record.player in args.players]
    games = len({record.game for record in records})
    print(f"{games} games" + (f" ({left_out} incomplete or untimed left out)" if left_out else ""))
    print(table(summarise(records).values()))
    if args.plot:
        try:
            plot(records, args.plot, args.min_games)
        except ValueError as err:
            print(f"no plot: {err}", file=sys.stderr)
            return 1
        print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
