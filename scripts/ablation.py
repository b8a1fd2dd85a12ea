#!/usr/bin/env python3
"""Measure what each technique is worth: for every switch named, a match of the
engine with that switch on against the same engine with it off (everything else as
configured), at equal time, from the same openings. Prints a table of Elo ± 95 %
(positive: the technique helps) and writes each match's report as JSON.

    python scripts/ablation.py --games 200 --tc 2+0.02 --concurrency 2 \\
        --out runs/ablation null_move late_move_reductions futility root_filter

A switch is a boolean field of config.toml: ``name`` for the [search] section, or
its full path (``eval.classical``, ``eval.spectral.enabled``). Switches that are off by default (such as
``root_filter``) are measured the same way: on against off. ``--set PATH=VALUE``
changes a field on both sides (a switch that works only with another one on:
``--set late_move_pruning=true late_move_pruning_improving``), ``--option
NAME=VALUE`` sets a UCI option on both (``--option OwnBook=false``, as the ledger's
matches play), ``--env NAME=VALUE`` an environment variable of both (a compiled
build: ``--env PYTHONPATH=build/B/site``). With ``--sprt ELO0 ELO1`` each match stops
when its SPRT decides (``--games`` its most), so one command measures a list of
techniques one after another at the long control:

    python scripts/ablation.py --games 600 --tc 10+0.1 --sprt -10 10 --option OwnBook=false \
        --env PYTHONPATH=build/B/site --resign 1000:5 --draw 10:8:40 --out runs/loo \
        late_move_pruning singular_extensions lmr_cut_nodes

With ``--resume`` each match counts the pairs its PGN in ``--out`` already holds and
plays only the rest: the same command, run again in a later sitting, goes on where
the last one stopped (a match already decided plays nothing).

The logic is the match runner's (blitzaco.tools.match); this only builds the
configurations.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tomllib
from pathlib import Path

from blitzaco.config import Config, config_from_dict, dump_toml
from blitzaco.tools.match.runner import Adjudication, EngineSpec, MatchLimit, load_openings, play_match, print_progress
from blitzaco.tools.match.stats import Sprt

HERE = Path(__file__).resolve().parent


def _field_path(name: str) -> list[str]:
    """A config field's path: a bare name is in [search]."""
    return name.split(".") if "." in name else ["search", name]


def _assign(tree: dict, path: list[str], value: object) -> None:
    """Set *path* to *value* in the nested tables of *tree*."""
    for part in path[:-1]:
        tree = tree.setdefault(part, {})
    tree[path[-1]] = value


def _pairs(parser: argparse.ArgumentParser, flag: str, form: str, items: list[str]) -> list[tuple[str, str]]:
    """The *items* given with *flag*, each *form*=VALUE, split at the first '='."""
    pairs = []
    for item in items:
        name, _, value = item.partition("=")
        if not value:
            parser.error(f"{flag} {item}: expected {form}=VALUE")
        pairs.append((name, value))
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("switches", nargs="+", help="boolean config fields (a [search] name or a full path)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--tc", default="2+0.02")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--openings", default=str(HERE.parent / "tests" / "data" / "openings.epd"))
    parser.add_argument("--engine", default=f"{sys.executable} -m blitzaco", help="engine command line")
    parser.add_argument("--out", default="runs/ablation", help="folder for configs, PGNs and JSON reports")
    parser.add_argument("--resign", metavar="CP:MOVES", help="adjudicate a loss when both engines agree (e.g. 1000:5)")
    parser.add_argument("--draw", metavar="CP:MOVES:AFTER", help="adjudicate a draw (e.g. 10:8:40)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="a config field set on both sides (TOML value; a bare name is in [search])")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a UCI option set on both sides")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable of both engines (PYTHONPATH=build/B/site)")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                        help="stop each match when its SPRT decides (alpha = beta = 0.05)")
    parser.add_argument("--resume", action="store_true",
                        help="go on from the games each match's PGN in --out already holds")
    args = parser.parse_args(argv)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    defaults = Config()
    both: dict = {}
    for name, text in _pairs(parser, "--set", "PATH", args.set):
        _assign(both, _field_path(name), tomllib.loads(f"v = {text}")["v"])
    options = _pairs(parser, "--option", "NAME", args.option)
    env = tuple(_pairs(parser, "--env", "NAME", args.env))
    sprt = Sprt(args.sprt[0], args.sprt[1], 0.05, 0.05) if args.sprt else None
    rows = []
    for switch in args.switches:
        path = _field_path(switch)
        node: object = defaults
        for part in path:
            node = getattr(node, part, None)
        if not isinstance(node, bool):
            parser.error(f"{switch} is not a boolean field of [{'.'.join(path[:-1])}]")
        engines = []
        for value, label in ((True, "with"), (False, "without")):
            tree: dict = copy.deepcopy(both)
            _assign(tree, path, value)
            config_path = out / f"{label}_{switch}.toml"
            config_path.write_text(dump_toml(config_from_dict(tree)))
            engines.append(
                EngineSpec(f"{label}_{switch}", tuple(args.engine.split()),
                           (("ConfigFile", str(config_path)), *options), env)
            )
        first, second = engines
        report = play_match(
            first, second, load_openings(args.openings), MatchLimit.parse(args.tc), args.games,
            concurrency=args.concurrency, adjudication=Adjudication.parse(args.resign, args.draw), sprt=sprt,
            pgn_path=out / f"{switch}.pgn", progress=print_progress, resume=args.resume,
        )
        print(report.summary(), flush=True)
        (out / f"{switch}.json").write_text(json.dumps(report.as_dict(), indent=2))
        elo, error = report.elo()
        rows.append((switch, report.games, report.wins, report.draws, report.losses, elo, error))

    print(f"\n{'technique':32s} {'games':>6s} {'+':>4s} {'=':>4s} {'-':>4s}   Elo ± 95%  ({args.tc})")
    for switch, games, wins, draws, losses, elo, error in rows:
        print(f"{switch:32s} {games:6d} {wins:4d} {draws:4d} {losses:4d}   {elo:+6.1f} ± {error:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
