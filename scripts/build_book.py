#!/usr/bin/env python3
"""Build a Polyglot opening book from BlitzACO's text opening database and/or PGN
files. Without arguments it rebuilds the shipped book:

    python scripts/build_book.py                       # assets/openings.txt -> assets/book.bin
    python scripts/build_book.py --pgn games.pgn --out my.bin --min-games 5

Malformed database lines and unreadable games are reported (with their line or game
number) on stderr and skipped. PGN moves are weighted as PolyGlot's make-book does
(2 points per win of the side that played the move, 1 per draw), so the same PGN
gives the same bytes. The logic lives in blitzaco.tools.book.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from blitzaco.tools.book import build_book

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", help="opening database (default: assets/openings.txt unless --pgn is given)")
    parser.add_argument("--pgn", nargs="*", default=[], help="PGN files to add")
    parser.add_argument("--out", default=str(ROOT / "assets" / "book.bin"), help="the .bin to write")
    parser.add_argument("--max-ply", type=int, help="plies of each line or game to use")
    parser.add_argument("--min-games", type=int, default=3, help="PGN: games a move needs to be kept")
    args = parser.parse_args(argv)

    database = args.database or (None if args.pgn else str(ROOT / "assets" / "openings.txt"))
    data, problems, count = build_book(database, args.pgn, max_ply=args.max_ply, min_games=args.min_games)
    for problem in problems:
        print(f"skipped: {problem}", file=sys.stderr)
    Path(args.out).write_bytes(data)
    print(f"{args.out}: {count} entries, {len(data)} bytes" + (f", {len(problems)} problems" if problems else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
