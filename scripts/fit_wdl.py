#!/usr/bin/env python3
"""Fit the UCI_ShowWDL model to match runner PGNs and print the [wdl] section.

    python scripts/fit_wdl.py runs/speed/speed_vs_main.pgn --plot wdl.png
    python scripts/fit_wdl.py new.pgn --check other.pgn    # is a refit better on other games?
"""

from __future__ import annotations

import argparse

from blitzaco.config import Config, WdlConfig, dump_toml
from blitzaco.tools.wdlfit import fit, log_loss, observations, plot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+")
    parser.add_argument("--plot", help="PNG of observed against predicted shares")
    parser.add_argument("--check", nargs="+", metavar="PGN", help="other games to compare both models on (held out)")
    args = parser.parse_args(argv)
    data, games = observations(args.pgn)
    model = fit(data)
    print(f"{len(data)} scored moves of {games} games; log loss {log_loss(data, WdlConfig()):.4f} (defaults) -> "
          f"{log_loss(data, model):.4f} (fitted)")
    if args.check:
        held, held_games = observations(args.check)
        print(f"held out, {len(held)} scored moves of {held_games} games: log loss "
              f"{log_loss(held, WdlConfig()):.4f} (defaults), {log_loss(held, model):.4f} (fitted)")
    section = dump_toml(Config(wdl=model)).split("[wdl]\n")[1].split("\n\n")[0]  # up to the blank line ending it
    print("[wdl]\n" + section)
    if args.plot:
        plot(data, model, args.plot, games)
        print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
