#!/usr/bin/env python3
"""Play a match between two UCI engines and report W/D/L, Elo ± 95 %, LOS, SPRT.

Example (the current checkout against an older one in a git worktree, SPRT):

    git worktree add /tmp/base HEAD~1
    python scripts/match.py \\
        --engine name=new cmd="python -m blitzaco" \\
        --engine name=base cmd="python -m blitzaco" env.PYTHONPATH=/tmp/base/src \\
        --openings tests/data/openings.epd --games 400 --concurrency 2 --tc 10+0.1 \\
        --sprt 0 5 --pgn runs/new-vs-base.pgn

Engines are given as cutechess-cli does: name=, cmd= (quoted), option.NAME=VALUE,
env.VAR=VALUE and dir=, either as separate words after --engine (as above) or as
one quoted string (--engine 'name=new cmd="python -m blitzaco"'). An engine may
have a limit of its own, which takes the place of the match's for it (time or
node odds): tc=20+0.2, nodes=N, depth=N or st=SECONDS (a move). The logic lives
in blitzaco.tools.match; this is its front end.

A long match need not fit one sitting: the same command with --resume counts the
pairs its --pgn file already holds whole and plays only the rest (its SPRT, if
any, where it was; the lone game of a pair cut short is dropped and played again).
With --ray each pair is a Ray task (retried if its worker or node dies): --ray auto
on this machine, --ray HOST:PORT on a cluster whose nodes have the engines.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from blitzaco.tools.match.runner import Adjudication, EngineSpec, MatchLimit, load_openings, play_match, print_progress
from blitzaco.tools.match.stats import Sprt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--engine", action="append", nargs="+", required=True, metavar="SPEC", help="twice: first, second"
    )
    parser.add_argument("--openings", required=True, help="EPD or PGN file; each opening is played twice")
    parser.add_argument("--games", type=int, default=100, help="games to play (rounded up to pairs)")
    parser.add_argument("--concurrency", type=int, default=1, help="game pairs played at once")
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--tc", help="clock, seconds: BASE+INCREMENT, e.g. 10+0.1")
    limit.add_argument("--nodes", type=int, help="fixed nodes per move")
    limit.add_argument("--depth", type=int, help="fixed depth per move")
    limit.add_argument("--movetime", type=float, help="fixed seconds per move")
    parser.add_argument("--resign", metavar="CP:MOVES", help="adjudicate a loss when both engines agree (e.g. 1000:5)")
    parser.add_argument("--draw", metavar="CP:MOVES:AFTER", help="adjudicate a draw (e.g. 10:8:40)")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"), help="stop when the SPRT decides")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--pgn", help="add the games to this file (appended to, never overwritten)")
    parser.add_argument("--resume", action="store_true",
                        help="count the pairs the --pgn file already holds whole and play only the rest "
                             "(the same command again goes on where a stopped match ended)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="play each pair as a Ray task: 'auto' (a local Ray of --concurrency cores) or "
                             "HOST:PORT (a cluster whose nodes have this package and the engines)")
    parser.add_argument("--json", help="write the report here as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)

    if len(args.engine) != 2:
        parser.error("give --engine exactly twice")
    if args.resume and not args.pgn:
        parser.error("--resume needs --pgn: a match resumes from its games")
    first, second = (EngineSpec.parse(_spec_text(words)) for words in args.engine)
    if args.tc:
        match_limit = MatchLimit.parse(args.tc)
    elif args.nodes:
        match_limit = MatchLimit(nodes=args.nodes)
    elif args.depth:
        match_limit = MatchLimit(depth=args.depth)
    else:
        match_limit = MatchLimit(movetime=args.movetime)
    adjudication = Adjudication.parse(args.resign, args.draw)
    sprt = Sprt(args.sprt[0], args.sprt[1], args.alpha, args.beta) if args.sprt else None

    report = play_match(
        first,
        second,
        load_openings(args.openings),
        match_limit,
        args.games,
        concurrency=args.concurrency,
        adjudication=adjudication,
        sprt=sprt,
        pgn_path=args.pgn,
        progress=None if args.quiet else print_progress,
        resume=args.resume,
        ray=args.ray,
    )
    print(report.summary())
    if args.ray:
        print(f"game pairs played on {len(report.ray_nodes)} Ray node(s)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report.as_dict(), handle, indent=2)
    return 0


def _spec_text(words: list[str]) -> str:
    """One engine's SPEC: a single quoted string as it is, separate words (the shell
    has already removed their quotes) quoted again so that a cmd= with spaces
    stays one field."""
    return words[0] if len(words) == 1 else shlex.join(words)


if __name__ == "__main__":
    sys.exit(main())
