"""The tuner's command line (``scripts/tune.py``).

    tune.py selfplay --games 1000 --nodes 1000 --concurrency 2 --out runs/tune/selfplay.pgn
    tune.py positions runs/tune/selfplay.pgn --out runs/tune/positions.npz
    tune.py positions --labels runs/data/labels.bin --out runs/tune/labels.npz
    tune.py label --positions 2000000 --nodes 5000 --workers 2 --seed 3 --out runs/data/labels_s3.bin
    tune.py label --static --random-moves 0.05 --chess960 0.1 --idle --seed 24 --out runs/data/static_s24.bin
    tune.py train-net --data runs/data/labels_s2.bin --hidden 128 --epochs 20 --out assets/net.bin
    tune.py train-net --resume assets/net.bin --data runs/data/labels_s3.bin --epochs 10 --out assets/net.bin
    tune.py check-eval --data runs/data/labels.bin --net runs/nn/nn.bin   # held-out loss, us per evaluation
    tune.py ga --fitness positions --data runs/tune/positions.npz --out runs/tune/ga
    tune.py anneal --fitness positions --data runs/tune/positions.npz --out runs/tune/sa
    tune.py texel --data runs/tune/labels.npz --spec .../labels_spec.toml --out runs/tune/texel
    tune.py ga --fitness games --out runs/tune/ga-games [--ray HOST:PORT]
    tune.py adopt runs/tune/ga/tuned.toml      # make the tuned weights the shipped defaults

Each optimiser run writes tuned.toml, log.csv, fitness.png, checkpoint.pt and
summary.json into its --out folder and never touches the shipped config.toml;
``adopt`` does, when asked.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
from pathlib import Path
from typing import Any

from blitzaco.config import Config, ConfigError, load_config

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from blitzaco.tools.tune.labels import TARGET_LAM, TARGET_SCALE
    from blitzaco.tools.tune.nn import FRESH_LR

    parser = argparse.ArgumentParser(prog="tune.py", description="Tune BlitzACO's weights by self-play.")
    commands = parser.add_subparsers(dest="command", required=True)

    selfplay = commands.add_parser("selfplay", help="play the engine against itself at fixed nodes into a PGN")
    selfplay.add_argument("--games", type=int, default=1000)
    selfplay.add_argument("--nodes", type=int, default=1000, help="nodes per move")
    selfplay.add_argument("--concurrency", type=int, default=1, help="game pairs played at once")
    selfplay.add_argument("--seed", type=int, default=1, help="seed of the openings")
    selfplay.add_argument("--config", help="weights to play with (default: the built-in ones)")
    selfplay.add_argument("--out", required=True, help="PGN file to write")

    label = commands.add_parser(
        "label", help="quiet positions labelled by Stockfish (games at fixed nodes, its score and the result)"
    )
    label.add_argument("--positions", type=int, default=2_000_000, help="stop when the file holds this many")
    label.add_argument("--nodes", type=int, help="Stockfish's nodes per move (default: 5000; 200 with --static)")
    label.add_argument("--static", action="store_true",
                       help="label by Stockfish's static network evaluation (its eval command) instead of the score "
                            "of the search that played the move: cheap, regenerated from the seed")
    label.add_argument("--random-moves", type=float, default=0.0,
                       help="with --static: the share of moves played at random instead of by Stockfish")
    label.add_argument("--chess960", type=float, default=0.0,
                       help="with --static: the share of games from a Chess960 start")
    label.add_argument("--children", type=int, default=0,
                       help="with --static: positions off the game's line labelled per move (random legal moves "
                            "other than Stockfish's), without a game result")
    label.add_argument("--idle", action="store_true",
                       help="run in the idle scheduling class (Linux; Stockfish too): a match beside it keeps "
                            "its cores")
    label.add_argument("--generator", type=int, choices=(1, 2), default=None,
                       help="the board the games are played on: 2 the engine's own (the default for a new file), "
                            "1 python-chess's (the files made before 2026-11-28); a continued run keeps its file's")
    label.add_argument("--evaluator", choices=("auto", "net", "pipe"), default="auto",
                       help="with --static: net evaluates the network Stockfish exports here (the same numbers as "
                            "its eval command, checked first, without its trace), pipe asks Stockfish's eval; auto: "
                            "net where that works")
    label.add_argument("--workers", type=int, default=2, help="games played at once (one Stockfish each)")
    label.add_argument("--seed", type=int, required=True,
                       help="a seed no earlier run used (the shipped net's training record lists the used ones)")
    label.add_argument("--record", help="the net whose training record lists the used seeds "
                                        "(default: the shipped assets/net.bin)")
    label.add_argument("--force", action="store_true",
                       help="label with a seed already used (its positions are not new to the net)")
    label.add_argument("--stockfish", help="the Stockfish binary (default: found on PATH or in /usr/games)")
    label.add_argument("--max-minutes", type=float, default=0.0,
                       help="stop after this many minutes (0: no limit); the run can be continued later")
    label.add_argument("--out", required=True,
                       help="label file, merged from the batches in OUT.batches/ once they hold --positions; an "
                            "earlier run of the same settings is continued (a file made before batches, by its "
                            "own single-file way)")
    label.add_argument("--ray", default=None, metavar="ADDRESS",
                       help="play the batches as Ray tasks: auto a local Ray instance (the default where Ray is "
                            "installed), HOST:PORT a cluster (every node with this package and Stockfish); none "
                            "local processes")
    label.add_argument("--merge-done", action="store_true",
                       help="merge the batches done so far (from the first, without a gap) into OUT and play none")
    label.add_argument("--batch-games", type=int, default=None,
                       help="games a batch (default 256): a batch is one task and one file")

    pack = commands.add_parser(
        "pack", help="pack a label file as its games (about 5 bytes a position, for the repository); the trainer "
                     "reads either kind")
    pack.add_argument("source", help="label file written by label (its state file SOURCE.json goes in the header)")
    pack.add_argument("out", help="packed file to write")
    pack.add_argument("--workers", type=int, default=2, help="processes")
    pack.add_argument("--idle", action="store_true", help="run in the idle scheduling class (Linux)")

    net = commands.add_parser("train-net", help="train the network term on label files (torch) and write it with "
                                                "its training record")
    net.add_argument("--data", required=True, action="append",
                     help="label file (tune.py label; its state file FILE.json names the seed); repeatable")
    net.add_argument("--limit", type=int, help="use only the first N records of each file")
    net.add_argument("--resume", metavar="NET",
                     help="start from NET's weights and append to its training record (NET's shape is kept)")
    net.add_argument("--replay", action="store_true",
                     help="with --resume: accept label runs NET has already seen (their seeds are in its record)")
    net.add_argument("--hidden", type=int, help="neurons per perspective (default 32; with --resume, NET's, or "
                     "more to widen it: its neurons kept, the new ones starting with no say in the output)")
    net.add_argument("--output-buckets", type=int,
                     help="outputs chosen by the number of pieces, as Stockfish's 8 (default 1; with --resume, NET's)")
    net.add_argument("--epochs", type=int, default=20)
    net.add_argument("--batch", type=int, default=16384)
    net.add_argument("--lr", type=float, help=f"Adam's learning rate, cosine-annealed to 1/20 (default "
                                              f"{FRESH_LR:g}; with --resume, the rate of NET's last training)")
    net.add_argument("--held-out", type=float, default=0.02,
                     help="the last share of each file's records, held out to choose the epoch")
    net.add_argument("--max-minutes", type=float, default=0.0,
                     help="stop after the epoch that ends past this many minutes of training (0: no limit)")
    net.add_argument("--check-positions", type=int,
                     help="the engine's own evaluations (classical, the quantised net) are checked on at most this "
                          "many held-out positions of each file, its first (default: all; they run in Python, "
                          "about a millisecond each)")
    net.add_argument("--lam", type=float, default=TARGET_LAM, help="weight of Stockfish's score against the result")
    net.add_argument("--scale", type=float, default=TARGET_SCALE, help="centipawns per unit of the sigmoid")
    net.add_argument("--residual", action="store_true", help="learn what the classical evaluation misses")
    net.add_argument("--spectral", action="store_true",
                     help="the spectral features as extra inputs, to measure their held-out loss: the engine cannot "
                          "run such a net, so only the summary (OUT with .json) is written")
    net.add_argument("--seed", type=int, default=1)
    net.add_argument("--weight-decay", type=float, default=0.0,
                     help="AdamW's decoupled weight decay (0: Adam without decay)")
    net.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                     help="where torch trains (auto: a GPU when torch sees one)")
    net.add_argument("--activation", choices=("crelu", "screlu"),
                     help="the first layer's activation: crelu the clipped ReLU, screlu its square (default crelu; "
                          "with --resume, NET's)")
    net.add_argument("--mirror", action="store_true",
                     help="each perspective's input mirrored horizontally when its own king is on files a-d, so that "
                          "every position teaches both halves of the board (with --resume, as NET is)")
    net.add_argument("--stream", action="store_true",
                     help="read the label files a group of chunks at a time instead of all at once (for more labels "
                          "than memory holds), checkpointed and resumable; a replacing net")
    net.add_argument("--checkpoint", metavar="FILE",
                     help="with --stream: the checkpoint to write and to resume from (default: OUT.ckpt)")
    net.add_argument("--checkpoint-minutes", type=float, default=30.0,
                     help="with --stream: a checkpoint at least this often (and at every stop)")
    net.add_argument("--chunk", type=int, default=1 << 16, help="with --stream: consecutive records read at once")
    net.add_argument("--group", type=int, default=32, help="with --stream: chunks shuffled together")
    net.add_argument("--out", required=True, help="network file to write (e.g. assets/nn.bin)")

    check = commands.add_parser(
        "check-eval", help="held-out loss and cost per evaluation of the classical evaluation and of networks")
    check.add_argument("--data", action="append", required=True,
                       help="label file (tune.py label); its last share is held out; repeatable (the shares pooled)")
    check.add_argument("--lam", type=float, default=TARGET_LAM,
                       help="weight of Stockfish's score against the result in the target (train-net's --lam)")
    check.add_argument("--net", action="append", default=[], help="a network file (repeatable)")
    check.add_argument("--config", help="classical weights (default: the built-in ones)")
    check.add_argument("--held-out", type=float, default=0.02, help="the last share of the file (as train-net)")
    check.add_argument("--limit", type=int, help="use only the first N records (as train-net)")
    check.add_argument("--most", type=int,
                       help="at most the first N held-out positions of each file (default: all; the engine's "
                            "evaluations run in Python, a fraction of a millisecond each compiled)")

    positions = commands.add_parser(
        "positions", help="the labelled quiet positions of PGN games, or of a Stockfish label file, traced")
    positions.add_argument("pgn", nargs="*")
    positions.add_argument("--labels", help="a label file (tune.py label) instead of games")
    positions.add_argument("--lam", type=float, default=TARGET_LAM,
                           help="with --labels: weight of Stockfish's score against the result")
    positions.add_argument("--scale", type=float, default=TARGET_SCALE,
                           help="with --labels: centipawns per unit of the sigmoid of Stockfish's score")
    positions.add_argument("--limit", type=int, default=0, help="with --labels: the first N positions only")
    positions.add_argument("--skip", type=int, default=10, help="plies left out at the start of each game")
    positions.add_argument("--config", help="weights to trace with (default: the built-in ones)")
    positions.add_argument("--seed", type=int, default=1, help="shuffles the order of the games")
    positions.add_argument("--out", required=True, help=".npz file to write")

    for name, text in (("ga", "genetic algorithm"), ("anneal", "simulated annealing"),
                       ("texel", "Texel gradient descent (positions fitness)")):
        run = commands.add_parser(name, help=f"tune with the {text}")
        run.add_argument("--fitness", choices=("positions", "games"), default="positions")
        run.add_argument("--data", help="position set (.npz) for the positions fitness")
        run.add_argument("--spec", help="tuning spec (default: the shipped one, the classical terms)")
        run.add_argument("--config", help="base weights (default: the built-in ones)")
        run.add_argument("--out", required=True, help="folder for tuned.toml, log.csv, fitness.png, checkpoint")
        if name != "texel":
            run.add_argument("--resume", action="store_true", help="continue from the folder's checkpoint")
            run.add_argument("--ray", metavar="ADDRESS",
                             help="play the games fitness as Ray tasks: auto a local Ray instance, HOST:PORT a "
                                  "cluster (every node with this package); none or left out: local processes")
        run.add_argument("--quiet", action="store_true", help="no progress bar")
        if name == "ga":
            run.add_argument("--generations", type=int, help="override the spec")
            run.add_argument("--population", type=int, help="override the spec")
        else:
            run.add_argument("--steps", type=int, help="override the spec")

    spsa = commands.add_parser(
        "spsa", help="tune the search's numbers by SPSA: games of the engine against itself, the values moved up "
                     "against the values moved down (blitzaco/tools/tune/spsa.py)")
    spsa.add_argument("--spec", help="SPSA spec (default: the shipped spsa_spec.toml, the search's numbers)")
    spsa.add_argument("--out", required=True, help="state file (JSON); an earlier run is continued; OUT.toml "
                                                   "gets the values reached, as a config")
    spsa.add_argument("--iterations", type=int, help="stop after this many iterations in all (default: the spec's)")
    spsa.add_argument("--engine", default=f"{sys.executable} -m blitzaco", help="engine command line")
    spsa.add_argument("--option", action="append", default=["OwnBook=false"], metavar="NAME=VALUE",
                      help="a UCI option for both engines (OwnBook=false always)")
    spsa.add_argument("--openings", help="EPD or PGN of openings (default: the tuning openings)")
    spsa.add_argument("--concurrency", type=int, default=2, help="games at once (with --ray auto: its cores)")
    spsa.add_argument("--ray", default=None, metavar="ADDRESS",
                      help="play each iteration's game pairs as Ray tasks: auto a local Ray instance (the default "
                           "where Ray is installed), HOST:PORT a cluster (every node with this package); none "
                           "local games")
    spsa.add_argument("--idle", action="store_true", help="run in the background scheduling class (Linux)")

    adopt = commands.add_parser("adopt", help="make a tuned config the shipped defaults (config.toml)")
    adopt.add_argument("tuned", help="a tuned.toml")
    return parser


def _ray_address(asked: str | None) -> str:
    """The ``--ray`` address: as asked, else ``auto`` where Ray is installed (the
    ``tune`` extra), else ``none``."""
    if asked is not None:
        return asked
    return "auto" if importlib.util.find_spec("ray") is not None else "none"


def _spsa(args: argparse.Namespace) -> int:
    from blitzaco.system import run_in_background
    from blitzaco.tools.match.runner import load_openings, play_match
    from blitzaco.tools.tune.sources import tuning_openings
    from blitzaco.tools.tune.spsa import RayPlay, default_spsa_spec_path, load_spsa_spec, run_spsa

    try:
        params, settings = load_spsa_spec(args.spec or default_spsa_spec_path())
    except ConfigError as err:
        print(f"tune: {err}", file=sys.stderr)
        return 2
    options = []
    for item in args.option:
        name, _, value = item.partition("=")
        if not value:
            print(f"tune: --option {item}: expected NAME=VALUE", file=sys.stderr)
            return 2
        options.append((name, value))
    if args.idle:
        run_in_background()
    openings = load_openings(args.openings) if args.openings else tuning_openings(500, seed=settings.seed)
    address = _ray_address(args.ray)
    play = RayPlay(address, args.concurrency) if address != "none" else play_match
    try:
        state = run_spsa(params, settings, args.out, command=args.engine.split(), openings=openings,
                         options=options, concurrency=args.concurrency, iterations=args.iterations, play=play,
                         progress=print)
    except ValueError as err:
        print(f"tune: {err}", file=sys.stderr)
        return 2
    finally:
        if isinstance(play, RayPlay):
            print(f"game pairs played on {len(play.nodes)} Ray node(s)")
            play.close()
    print(f"{state['iteration']} iterations; the values reached: {Path(args.out).with_suffix('.toml')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    try:
        base = load_config(args.config) if getattr(args, "config", None) else Config()
    except ConfigError as err:
        print(f"tune: {err}", file=sys.stderr)
        return 2
    if args.command == "selfplay":
        from blitzaco.tools.match.runner import print_progress
        from blitzaco.tools.tune.positions import selfplay

        report = selfplay(args.out, args.games, nodes=args.nodes, concurrency=args.concurrency,
                          config=base if args.config else None, seed=args.seed, progress=print_progress)
        print(report.summary())
        return 0
    if args.command == "label":
        from blitzaco.tools.tune.labels import generate

        if not _seed_allowed(args.seed, args.record, args.force):
            return 2
        nodes = args.nodes if args.nodes is not None else 200 if args.static else 5000
        if args.merge_done:
            from blitzaco.tools.tune.labelrun import done_positions, merge

            positions = done_positions(args.out)
            if not positions:
                print(f"tune: {args.out}: no batch done yet", file=sys.stderr)
                return 2
            _say_merged(args.out, merge(args.out, positions))
            return 0
        if not _single_file_run(args.out):
            return _label_batches(args, nodes)
        try:
            figures = generate(args.out, args.positions, seed=args.seed, nodes=nodes, workers=args.workers,
                               stockfish=args.stockfish, max_seconds=60 * args.max_minutes,
                               label="static" if args.static else "search", random_moves=args.random_moves,
                               chess960=args.chess960, children=args.children, idle=args.idle,
                               generator=args.generator, evaluator=args.evaluator)
        except ValueError as err:
            print(f"tune: {err}", file=sys.stderr)
            return 2
        print(f"{figures['positions']:.0f} positions from {figures['games']:.0f} games in {figures['seconds']:.0f} s "
              f"({figures['per_hour']:,.0f} per hour); {args.out} holds {figures['total']:.0f}"
              + (" (evaluated by Stockfish's exported network)" if figures.get("net") else ""))
        return 0

    if args.command == "pack":
        from blitzaco.system import run_in_background
        from blitzaco.tools.progress import progress_bar
        from blitzaco.tools.tune.labelfile import count_labels, pack_file

        if args.idle:
            run_in_background()  # the workers (and Stockfish) inherit it
        total = count_labels(args.source)
        packed = pack_file(args.source, args.out, workers=args.workers,
                           progress=lambda done: progress_bar(done, total, "records"))
        print(f"{packed['positions']} positions in {packed['chains']} chains: {packed['bytes']:,} bytes "
              f"({packed['per_position']:.2f} a position), checked equal to {args.source}")
        return 0
    if args.command == "train-net":
        return _train_net(args, argv)
    if args.command == "spsa":
        return _spsa(args)
    if args.command == "check-eval":
        from blitzaco.tools.tune.nn import check_evaluations

        try:
            checks = check_evaluations(args.data, args.net, config=base, held_out=args.held_out, lam=args.lam,
                                       limit=args.limit, most=args.most)
        except (OSError, ValueError) as err:
            print(f"tune: {err}", file=sys.stderr)
            return 2
        print(f"{'evaluation':>24} | held-out loss | best factor: loss | us per evaluation")
        for item in checks:
            print(f"{item.name:>24} | {item.loss:13.6f} | {item.factor:4.2f}: {item.scaled_loss:.6f} | "
                  f"{item.microseconds:8.1f}")
        print(f"on {checks[0].positions:,} held-out positions, lambda {args.lam}")
        return 0
    if args.command == "positions":
        from blitzaco.tools.tune.positions import extract, extract_labels

        if bool(args.pgn) == bool(args.labels):
            print("tune: positions needs PGN files or --labels, not both", file=sys.stderr)
            return 2

        def say_count(count: int) -> None:
            print(f"{count} positions", file=sys.stderr, flush=True)

        if args.labels:
            count = extract_labels(args.labels, args.out, config=base, lam=args.lam, scale=args.scale,
                                   limit=args.limit, progress=say_count)
        else:
            count = extract(args.pgn, args.out, config=base, skip=args.skip, seed=args.seed, progress=say_count)
        print(f"{count} quiet positions written to {args.out}")
        return 0
    if args.command == "adopt":
        from blitzaco.tools.tune.adopt import adopt, shipped_config_path

        try:
            tuned = load_config(args.tuned)
        except ConfigError as err:
            print(f"tune: {err}", file=sys.stderr)
            return 2
        path = shipped_config_path()
        count = adopt(tuned, path)
        print(f"{count} fields of the shipped defaults ({path}) changed")
        return 0
    return _optimise(args, base)


def _optimise(args: argparse.Namespace, base: Config) -> int:
    import torch

    from blitzaco.tools.tune.fitness import GameFitness, PositionFitness
    from blitzaco.tools.tune.optimise import anneal, genetic, texel
    from blitzaco.tools.tune.positions import PositionSet
    from blitzaco.tools.tune.spec import default_spec_path, load_spec

    try:
        spec = load_spec(args.spec or default_spec_path())
    except ConfigError as err:
        print(f"tune: {err}", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, torch.get_num_threads()))
    genome = spec.genome(base)
    fitness: object
    check = None
    if args.command == "texel" and args.fitness != "positions":
        print("tune: texel tunes with the positions fitness only", file=sys.stderr)
        return 2
    if args.fitness == "positions":
        if not args.data:
            print("tune: the positions fitness needs --data (make it with: tune.py positions)", file=sys.stderr)
            return 2
        data, held_out = PositionSet.load(args.data, spec.positions.max_positions).split(spec.positions.held_out)
        try:
            fitness = PositionFitness(data, genome, spec.positions.k, spec.positions.l2)
            check = PositionFitness(held_out, genome, fitness.k) if len(held_out) else None
        except ValueError as err:
            print(f"tune: {err}", file=sys.stderr)
            return 2
        print(f"{len(data)} positions to fit, {len(held_out)} held out, {len(genome)} genes, "
              f"sigmoid scale k = {fitness.k:.4f}", file=sys.stderr)
    else:
        fitness = GameFitness(genome, spec.games, ray_address=args.ray)  # never texel: refused above
    out = Path(args.out)
    try:
        if args.command == "ga":
            settings = spec.ga
            if args.generations:
                settings = dataclasses.replace(settings, generations=args.generations)
            if args.population:
                settings = dataclasses.replace(settings, population=args.population)
            result = genetic(fitness, genome, settings, out, resume=args.resume, progress=not args.quiet)  # type: ignore[arg-type]
        elif args.command == "texel":
            settings_tx = spec.texel if not args.steps else dataclasses.replace(spec.texel, steps=args.steps)
            result = texel(fitness, genome, settings_tx, out, progress=not args.quiet)  # type: ignore[arg-type]
        else:
            settings_sa = spec.anneal if not args.steps else dataclasses.replace(spec.anneal, steps=args.steps)
            result = anneal(fitness, genome, settings_sa, out, resume=args.resume, progress=not args.quiet)  # type: ignore[arg-type]
    finally:
        if isinstance(fitness, GameFitness):
            fitness.close()
    rate = 60 * result.evaluations / result.seconds if result.seconds else 0.0
    print(f"fitness {result.base_fitness:.6f} -> {result.best_fitness:.6f}; {result.evaluations} candidates in "
          f"{result.seconds:.1f} s ({rate:.0f} per minute)")
    if args.fitness == "positions" and check is not None:
        base_error, best_error = check.error(torch.stack([check.theta0, torch.tensor(result.best)])).tolist()
        print(f"held-out Texel error {base_error:.6f} -> {best_error:.6f} ({len(held_out)} positions)")
        _note(out / "summary.json", held_out_error=[base_error, best_error], k=check.k)
    if isinstance(fitness, GameFitness):
        print(f"{fitness.games} games ({60 * fitness.games / result.seconds:.1f} per minute) "
              f"played by {len(fitness.workers)} worker processes")
    print(f"written: {out / 'tuned.toml'}, {out / 'log.csv'}, {out / 'fitness.png'}, {out / 'summary.json'}")
    return 0


def _single_file_run(out: str) -> bool:
    """Whether *out* is a label file made before batches (its state beside it, no
    batch folder): such a run is continued as it was made."""
    from blitzaco.tools.tune.labelrun import batch_folder

    path = Path(out)
    return path.is_file() and path.with_name(path.name + ".json").is_file() and not batch_folder(path).exists()


def _label_batches(args: argparse.Namespace, nodes: int) -> int:
    """``label`` in batches (:mod:`blitzaco.tools.tune.labelrun`): on Ray where it is
    installed (or asked for), else in local processes."""
    from blitzaco.tools.tune.labelgame import LATEST_GENERATOR
    from blitzaco.tools.tune.labelrun import BATCH_GAMES, RunSettings, batch_folder, done_batches, run

    address = _ray_address(args.ray)
    try:
        settings = RunSettings(args.seed, nodes, "static" if args.static else "search", args.random_moves,
                               args.chess960, args.children, args.generator or LATEST_GENERATOR,
                               args.batch_games or BATCH_GAMES)
        figures = run(args.out, args.positions, settings, workers=args.workers,
                      ray=None if address == "none" else address, stockfish=args.stockfish,
                      evaluator=args.evaluator, idle=args.idle, max_seconds=60 * args.max_minutes)
    except (ValueError, FileNotFoundError) as err:
        print(f"tune: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the batches written are kept; those under way are played again
        print(f"\nstopped: {len(done_batches(args.out))} batches done in {batch_folder(args.out)}; the same command "
              "goes on", file=sys.stderr)
        return 130
    workers = ", ".join(f"{where} {count}" for where, count in sorted(figures["workers"].items()))
    print(f"{figures['positions']} positions in {figures['batches']} batches in {figures['seconds']:.0f} s "
          f"({figures['per_hour']:,.0f} per hour; {figures['retried']} retried; by {workers or 'none'}); "
          f"{figures['done']} batches done")
    merged = figures.get("merged")
    if merged is None:
        print(f"not merged yet: the first batches do not hold {args.positions} positions; the same command goes on "
              "(--merge-done merges those done)")
        return 0
    _say_merged(args.out, merged)
    return 0


def _say_merged(out: str, merged: dict[str, Any]) -> None:
    print(f"{out}: {merged['positions']} distinct positions ({merged['before']} before deduplication) from "
          f"{merged['games']} games in {merged['batches']} batches, SHA-256 {merged['sha256']}")
    print("by pieces: " + ", ".join(f"{pieces}: {count}" for pieces, count in merged["by_pieces"].items()))


def _seed_allowed(seed: int, record_path: str | None, force: bool) -> bool:
    """Whether ``label`` may run with *seed*: not one the training record of the net
    at *record_path* (default: the shipped replacing net) lists, unless *force*.
    Prints the used seeds either way."""
    from blitzaco.nnue import NetworkError
    from blitzaco.tools.tune.record import RecordError, read_record, shipped_net, used_seeds

    path = record_path or shipped_net()
    record = None
    if path is not None:
        try:
            record = read_record(path)
        except (NetworkError, RecordError) as err:
            print(f"tune: the training record of {path} cannot be read: {err}", file=sys.stderr)
            return False
    seeds = used_seeds(record)
    source = f"the training record of {path}" if path is not None else "no net yet; the seeds used before the record"
    print(f"label: seeds already used ({source}): {', '.join(map(str, seeds))}", file=sys.stderr)
    if seed not in seeds:
        return True
    if not force:
        print(f"tune: seed {seed} was used already: its positions are not new to the net; choose another seed "
              f"(next free: {max(seeds) + 1}) or pass --force", file=sys.stderr)
        return False
    print(f"label: WARNING: seed {seed} was used already; labelling it again because of --force", file=sys.stderr)
    return True


def _train_net(args: argparse.Namespace, argv: list[str]) -> int:
    import hashlib
    import itertools
    import json
    import shlex
    import time

    import numpy as np
    import torch

    from blitzaco.nnue import (
        BIAS_LIMIT,
        FLAG_MIRRORED,
        FLAG_SQUARED,
        MAX_BUCKETS,
        WEIGHT_LIMIT,
        NetworkError,
        decode_network,
    )
    from blitzaco.tools.tune import record as rec
    from blitzaco.tools.tune.labelfile import run_state
    from blitzaco.tools.tune.labels import read_labels, stockfish_name
    from blitzaco.tools.tune.nn import (
        ADAM_BETAS,
        ADAM_EPS,
        FRESH_LR,
        LR_FLOOR,
        TrainSettings,
        check_evaluations,
        classical_scores,
        finished_records,
        fitted_then_held,
        held_out_count,
        load_arrays,
        quantisation_error,
        quantise,
        spectral_inputs,
        train,
    )

    def fail(message: str) -> int:
        print(f"tune: {message}", file=sys.stderr)
        return 2

    start = None
    record = None
    if args.resume:
        try:
            start, record = rec.check_resumable(args.resume)
        except (NetworkError, rec.RecordError) as err:
            return fail(f"cannot resume from {args.resume}: {err}")
        if args.hidden is not None and args.hidden < start.hidden:
            return fail(f"{args.resume} has {start.hidden} hidden neurons: it can be widened, not narrowed to "
                        f"{args.hidden}")
        if args.output_buckets is not None and args.output_buckets != start.buckets:
            return fail(f"{args.resume} has {start.buckets} output buckets, not {args.output_buckets}")
        if bool(start.flags & 1) != args.residual:
            return fail(f"{args.resume} is {'a residual' if start.flags & 1 else 'a replacing'} net")
        if args.spectral:
            return fail("--spectral trains a net the engine cannot run: it cannot resume one")
        if (record["target"]["lambda"], record["target"]["scale"]) != (args.lam, args.scale):
            print(f"tune: note: the target changes from lambda {record['target']['lambda']}, scale "
                  f"{record['target']['scale']} to {args.lam}, {args.scale}", file=sys.stderr)
    if start is not None:
        activation = "screlu" if start.flags & FLAG_SQUARED else "crelu"
        if args.activation is not None and args.activation != activation:
            return fail(f"{args.resume}'s activation is {activation}, not {args.activation}")
        mirror = bool(start.flags & FLAG_MIRRORED)
        if args.mirror and not mirror:
            return fail(f"{args.resume} is not mirrored by the king's file")
    else:
        activation = args.activation or "crelu"
        mirror = args.mirror
    if activation != "crelu" and (args.residual or args.spectral):
        return fail("--activation screlu is for a replacing net")
    hidden = args.hidden or (start.hidden if start is not None else 32)
    buckets = start.buckets if start is not None else (args.output_buckets or 1)
    if not 1 <= buckets <= MAX_BUCKETS:
        return fail(f"--output-buckets is 1 to {MAX_BUCKETS}")
    lr = args.lr if args.lr is not None else FRESH_LR
    if args.lr is None and record is not None and record["trainings"]:
        lr = float(record["trainings"][-1].get("optimiser", {}).get("lr", FRESH_LR))
    if not 0 < args.held_out < 1:
        return fail("--held-out is a share between 0 and 1")

    # Each file: its first `count` records, of which the last share is held out.
    runs: list[dict[str, Any]] = []
    parts: list[tuple[Any, list[Any], int]] = []
    held_parts: list[int] = []
    uses: list[dict[str, Any]] = []
    seen = set(rec.used_seeds(record)) if record is not None else set()
    stockfish = None
    for path in args.data:
        try:
            state = run_state(path)
            count = finished_records(path, state)
            if args.limit is not None:
                count = min(count, args.limit)
            if count < 2:
                return fail(f"{path} holds {count} records")
            if args.spectral:  # a measurement: no net, so no record, and any label file will do
                run = {"seed": -1 - len(runs), "records": count}
            else:
                if stockfish is None and not isinstance(state.get("stockfish"), str):
                    stockfish = stockfish_name()
                run = rec.label_run(path, count, stockfish=stockfish)
        except (OSError, ValueError) as err:
            return fail(f"{path}: {err}")
        if any(run["seed"] == other["seed"] for other in runs):
            return fail(f"two label files of seed {run['seed']}")
        if run["seed"] in seen and not args.replay:
            return fail(f"{path}: seed {run['seed']} is used in {args.resume}'s record already (pass --replay to "
                        f"train on it again)")
        held = held_out_count(count, args.held_out)
        run["fitted"] = count - held
        runs.append(run)
        uses.append({"seed": run["seed"], "file": str(path), "records": [0, count], "fitted": count - held,
                     "held_out": [count - held, count]})
        held_parts.append(held)
        if args.stream:
            continue
        try:
            arrays = load_arrays(path, count, mirror=mirror)
        except ValueError as err:
            return fail(str(err))
        extra = []
        if args.residual:
            extra.append(classical_scores(path, count))
        if args.spectral:
            extra.append(spectral_inputs(path, count))
        parts.append((arrays, extra, count - held))

    torch.set_num_threads(max(1, torch.get_num_threads()))
    settings = TrainSettings(hidden=hidden, epochs=args.epochs, batch=args.batch, lr=lr, lam=args.lam,
                             scale=args.scale, held_out=args.held_out, seed=args.seed, residual=args.residual,
                             max_seconds=60 * args.max_minutes, device=args.device,
                             weight_decay=args.weight_decay, output_buckets=buckets, activation=activation,
                             mirror=mirror)
    dense = None
    if args.stream:
        from blitzaco.tools.tune.stream import Source, StreamSettings, train_stream

        if args.residual or args.spectral:
            return fail("--stream trains a replacing net (no --residual, no --spectral)")
        sources = [Source(str(path), use["records"][1], held) for path, use, held in zip(args.data, uses, held_parts,
                                                                                            strict=True)]
        stream = StreamSettings(chunk=args.chunk, group=args.group, checkpoint_seconds=60 * args.checkpoint_minutes)
        try:
            model, summary = train_stream(sources, settings, stream, start=start,
                                          checkpoint=args.checkpoint or f"{args.out}.ckpt",
                                          log=lambda line: print(line, file=sys.stderr, flush=True))
        except ValueError as err:
            return fail(str(err))
        if not summary["finished"]:
            print(f"stopped before the last epoch: nothing written to {args.out}; the same command resumes",
                  file=sys.stderr)
            return 0
    else:
        # The fitted records of every file, then the held-out ones of every file.
        data = fitted_then_held([(arrays, cut) for arrays, _, cut in parts])
        extras = [np.concatenate([extra[i][:cut] for _, extra, cut in parts]
                                 + [extra[i][cut:] for _, extra, cut in parts]) for i in range(len(parts[0][1]))]
        base = extras.pop(0) if args.residual else None
        dense = extras.pop(0) if args.spectral else None
        try:
            model, summary = train(data, settings, base=base, dense=dense, held=sum(held_parts), start=start,
                                   log=lambda line: print(line, file=sys.stderr, flush=True))
        except ValueError as err:
            return fail(str(err))
    summary["data"] = [str(path) for path in args.data]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if dense is not None:
        out.with_suffix(".json").write_text(json.dumps(summary, indent=2))
        print(f"held-out loss {summary['held_out_loss']:.6f} (epoch {summary['best_epoch']}) with the spectral "
              f"features as extra inputs; no network file (the engine reads piece-square inputs only), the training "
              f"summary in {out.with_suffix('.json')}")
        return 0

    # The engine's own figures on the held-out positions: the classical evaluation's
    # loss and the quantised net's, with the cost of each per evaluation.
    blob = quantise(model, residual=args.residual)
    probe = out.with_name(out.name + ".probe")
    probe.write_bytes(blob)
    try:
        checks = [check_evaluations(path, [str(probe)], held_out=args.held_out, lam=args.lam, scale=args.scale,
                                    configured=False, limit=use["records"][1], most=args.check_positions)
                  for path, use in zip(args.data, uses, strict=True)]
    finally:
        probe.unlink()
    # The held-out positions each file's engine checks ran on (all, or --check-positions).
    checked = [found[0].positions for found in checks]
    total_checked = sum(checked)
    # The engine's output against the float model's on (up to 2,000 of) the held-out positions.
    boards = [record.board for path, use in zip(args.data, uses, strict=True)
              for record in itertools.islice(read_labels(path, use["held_out"][0]),
                                             min(2000 // len(uses), use["held_out"][1] - use["held_out"][0]))]

    def mean(index: int, field: str) -> float:
        pairs = zip(checks, checked, strict=True)
        return float(sum(getattr(found[index], field) * held for found, held in pairs) / total_checked)

    training = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "start": None if start is None else {"file": str(args.resume),
                                             "sha256": hashlib.sha256(Path(args.resume).read_bytes()).hexdigest(),
                                             "trainings": len(record["trainings"]) if record else 0},
        "data": uses,
        "replay": ("the label runs " + ", ".join(str(run["seed"]) for run in runs if run["seed"] in seen)
                   + " again (--replay)") if args.replay and any(run["seed"] in seen for run in runs)
                  else "none (only new label runs)",
        "epochs": args.epochs,
        "epochs_run": summary["epochs_run"],
        "best_epoch": summary["best_epoch"],
        "batch": args.batch,
        "optimiser": {"name": "AdamW" if args.weight_decay else "Adam", "lr": lr, "betas": list(ADAM_BETAS),
                      "eps": ADAM_EPS, "weight_decay": args.weight_decay,
                      "state": "fresh at the start of each training run (Adam's moments are not kept)"},
        "schedule": {"name": "cosine annealing per step", "from": lr, "to": lr / LR_FLOOR, "steps": summary["steps"]},
        "streamed": summary.get("stream", False),
        "weight_limits": {"first_layer": WEIGHT_LIMIT, "first_bias": BIAS_LIMIT},
        "seed": args.seed,
        "held_out_loss": {"start": summary["held_out_loss_start"], "best": summary["held_out_loss"],
                          "engine": mean(-1, "loss"), "classical": mean(1, "loss"), "constant_0": mean(0, "loss"),
                          "engine_checked_on": total_checked},
        "quantisation": quantisation_error(model, blob, boards),
        "microseconds_per_evaluation": {"engine": mean(-1, "microseconds"), "classical": mean(1, "microseconds"),
                                        "note": "pure Python, in process, cold caches, this machine"},
        "history": [{"epoch": epoch, "train": fit_loss, "held_out": held_loss, "seconds": seconds}
                    for epoch, fit_loss, held_loss, seconds in summary["history"]],
        "seconds": summary["seconds"],
        "device": summary["device"],
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "commit": rec.git_commit(),
        "command": shlex.join(["tune.py", *argv]),
    }
    if start is not None and start.hidden != hidden:
        training["widened"] = {"from": start.hidden, "to": hidden, "rule": rec.WIDENED_RULE}
    if record is None:
        record = rec.new_record(hidden=hidden, residual=args.residual, lam=args.lam, scale=args.scale,
                                held_out=args.held_out, output_buckets=buckets, activation=activation,
                                mirror=mirror)
    else:
        record = {**record, "net": {**record["net"], "hidden": hidden}}
    record = rec.add_training(record, runs, training)
    blob = quantise(model, residual=args.residual, meta=record)
    decode_network(blob)  # the engine must be able to read what was written
    out.write_bytes(blob)
    out.with_suffix(".json").write_text(rec.dumps(record))
    loss = training["held_out_loss"]
    print(f"held-out loss {loss['start']:.6f} at the start, {loss['best']:.6f} at epoch {summary['best_epoch']} "
          f"(the engine's quantised net {loss['engine']:.6f}, the classical evaluation {loss['classical']:.6f}, on "
          f"{total_checked} held-out positions); {len(blob):,} bytes written to {out}, its training record also to "
          f"{out.with_suffix('.json')}")
    return 0


def _note(path: Path, **values: object) -> None:
    """Add *values* to a run's summary.json."""
    import json

    summary = json.loads(path.read_text())
    summary.update(values)
    path.write_text(json.dumps(summary, indent=2))
