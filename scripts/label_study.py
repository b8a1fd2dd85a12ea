#!/usr/bin/env python3
"""What a Stockfish label costs and how good it is, per setting of the label generator
(``tune.py label``), for choosing its nodes per move:

    python scripts/label_study.py cost --nodes 1000 2000 5000 --games 12
    python scripts/label_study.py quality --data runs/data/labels_s12.bin --positions 2000 --workers 2
    python scripts/label_study.py games runs/sf/sf2200.pgn --nodes 5000 --out own.bin
    python scripts/label_study.py kept --data labels_s2.bin --data labels_s3.bin --held-out labels_s18.bin

* ``cost``: label games played in this process, one worker, as ``tune.py label``
  plays them (seed 90, games 0..N-1). For each setting: positions kept per game, and
  the processor time per kept position of this process (python-chess's board, the
  quiet test, the UCI driver) and of Stockfish (from /proc, its start not counted). Processor time,
  not wall time, so a busy machine gives the same figures; positions per hour on two
  cores is 2 x 3600 s over the sum (both kept busy, as the pool does). With
  ``PYTHONPATH=build/COMMIT/source/src`` it measures an older commit's worker.
* ``quality``: the last *positions* records of a label file labelled again from
  scratch (a fresh table each) at each nodes setting and at depth 12 (the reference):
  the mean squared difference of ``sigmoid(cp / 361)`` (the score's share of the
  training target) from the reference's, and the mean absolute difference in
  centipawns (scores clipped to +-1500). In a game the search also inherits the
  table of the moves before, so these from-scratch labels are a little noisier than
  the games' own; the comparison between settings is the point.

* ``games``: the quiet positions of PGN games labelled the same way, as a label
  file: a held-out set from the positions the engine's own games reach, for
  ``tune.py check-eval``.

* ``kept``: what a position is worth when its game's other positions are kept too.
  The label files' games (recovered from the records: see :func:`game_starts`) are
  drawn in a seeded order; for each *every* = k, one position in k of each game (at
  a random offset) is kept until *positions* are, so k = 1 takes whole games and
  k = 8 eight times as many games, one position in eight of each. Each set trains
  the same network (``tune.py train-net``'s trainer and settings) and is scored on
  the same held-out file (another seed's games). Equal held-out losses would say
  that a game's neighbouring positions are worth as much as independent ones; the
  label generator keeps every quiet position, so keeping one in k costs k times the
  games per position.

Prints a table; ``--json FILE`` writes the figures too.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from typing import Any

import numpy as np

from blitzaco.tools.tune import labels
from blitzaco.tools.tune.positions import tuning_openings

REFERENCE_DEPTH = 12
CLIP = 1500


def _process_seconds(pid: int) -> float:
    """The processor time (user and system) of process *pid* so far (Linux's /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cost(nodes: int, games: int, stockfish: str) -> dict[str, float]:
    fens = [opening.board().fen() for opening in tuning_openings(4096, seed=90, random_plies=0)]
    labels._start_worker(stockfish)
    engine: Any = labels._worker_engine
    assert engine is not None
    if hasattr(engine, "new_game"):
        engine.new_game()  # Stockfish has loaded its network: its start is not counted
        pid = engine.pid
    else:  # an older commit's worker: python-chess's SimpleEngine (PYTHONPATH=build/COMMIT/source/src)
        engine.ping()
        pid = engine.protocol.transport.get_pid()
    own, children, wall = time.process_time(), _process_seconds(pid), time.perf_counter()
    kept = 0
    for index in range(games):
        kept += len(labels._play((index, 90, nodes, fens[index])))
    python = time.process_time() - own
    sf = _process_seconds(pid) - children
    engine.quit()
    per = (python + sf) / max(kept, 1)
    return {"nodes": nodes, "games": games, "kept": kept, "kept_per_game": kept / games,
            "python_ms": 1000 * python / max(kept, 1), "stockfish_ms": 1000 * sf / max(kept, 1),
            "python_share": python / (python + sf), "per_hour_two_cores": 2 * 3600 / per,
            "wall_seconds": time.perf_counter() - wall}


_engine: labels.Stockfish | None = None


def _start(stockfish: str) -> None:
    global _engine
    _engine = labels.Stockfish(stockfish)


def _label(task: tuple[str, list[int]]) -> list[int]:
    fen, nodes_list = task
    assert _engine is not None
    import chess

    board = chess.Board(fen)
    scores = []
    for nodes in [0, *nodes_list]:
        _engine.new_game()
        _, score, mate = _engine.play(board, nodes=nodes, depth=0 if nodes else REFERENCE_DEPTH)
        value = 0 if score is None else score
        scores.append((CLIP if value > 0 else -CLIP) if mate else max(-CLIP, min(CLIP, value)))
    return scores


def quality(data: str, positions: int, nodes_list: list[int], workers: int, stockfish: str) -> list[dict[str, float]]:
    count = labels.count_labels(data)
    fens = [record.board.fen() for record in labels.read_labels(data, max(0, count - positions))]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers, initializer=_start, initargs=(stockfish,)) as pool:
        rows = np.array(pool.map(_label, [(fen, nodes_list) for fen in fens], chunksize=8), dtype=np.float64)
    seconds = time.perf_counter() - started
    share = 1.0 / (1.0 + np.exp(-rows / labels.TARGET_SCALE))
    out = []
    for column, nodes in enumerate(nodes_list, start=1):
        out.append({"nodes": nodes, "positions": len(fens), "reference_depth": REFERENCE_DEPTH,
                    "mse_sigmoid": float(np.mean((share[:, column] - share[:, 0]) ** 2)),
                    "mean_abs_cp": float(np.mean(np.abs(rows[:, column] - rows[:, 0]))),
                    "seconds_all_settings": seconds})
    return out


def from_games(pgns: list[str], nodes: int, out: str, stockfish: str) -> dict[str, float]:
    """The quiet positions of the games in *pgns* (the label generator's rule: after
    ply 8, quiet, the move played quiet), labelled by Stockfish at *nodes* and the
    game's result, written as a label file: held-out positions from the games the
    engine itself plays, to set beside the label runs' own (``tune.py check-eval
    --data OUT --held-out 0.999``)."""
    import chess
    import chess.pgn

    engine = labels.Stockfish(stockfish)
    results = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
    games = kept = 0
    with open(out, "wb") as handle:
        handle.write(labels.MAGIC)
        for path in pgns:
            with open(path) as source:
                while (game := chess.pgn.read_game(source)) is not None:
                    result = results.get(game.headers.get("Result", "*"))
                    if result is None:
                        continue
                    games += 1
                    engine.new_game()
                    board = game.board()
                    for move in game.mainline_moves():
                        if board.ply() >= labels.SKIP_PLIES and labels._quiet(board, move):
                            _, score, mate = engine.play(board, nodes=nodes)
                            if score is not None and not mate and abs(score) < labels.RESIGN_CP:
                                handle.write(labels.encode(board, score, result))
                                kept += 1
                        board.push(move)
    engine.quit()
    return {"games": games, "positions": kept}


def game_starts(path: str) -> np.ndarray:
    """The index of each game's first record in the label file at *path*. The format
    has no game marker; within a game the records follow the game, so a new game
    starts where the piece count rises, where a side has more pawns on its second
    rank than in the record before, or where the result (White's) changes. Games
    that kept no position are not seen, and a game that starts with no more pieces
    and pawns than the last one ended with and the same result is missed: on the
    label runs here the count comes within 0.4 % of the games the run played."""
    from blitzaco.tools.tune.nn import read_records, square_codes

    records = read_records(path)
    codes = square_codes(records)
    count = len(records)
    pieces = (codes != 0).sum(axis=1)
    white_home = (codes[:, 8:16] == 1).sum(axis=1)  # White pawns on the second rank
    black_home = (codes[:, 48:56] == 9).sum(axis=1)
    result = records["result"]
    new = np.ones(count, dtype=bool)
    new[1:] = ((pieces[1:] > pieces[:-1]) | (white_home[1:] > white_home[:-1])
               | (black_home[1:] > black_home[:-1]) | (result[1:] != result[:-1]))
    return np.flatnonzero(new)


def kept(data: list[str], held_file: str, held: int, positions: int, every: list[int], seeds: list[int],
         hidden: int, epochs: int, batch: int, lr: float) -> list[dict[str, Any]]:
    from blitzaco.tools.tune import nn

    arrays = nn.concatenate([nn.load_arrays(path) for path in data])
    games: list[tuple[int, int]] = []  # (first record, end) in the concatenation
    offset = 0
    for path in data:
        starts = game_starts(path)
        ends = np.append(starts[1:], labels.count_labels(path))
        games.extend((offset + int(a), offset + int(b)) for a, b in zip(starts, ends, strict=True))
        offset += labels.count_labels(path)
    rng = np.random.default_rng(7)
    order = rng.permutation(len(games))
    held_arrays = nn.load_arrays(held_file, limit=held)
    figures = []
    for k in every:
        chosen: list[np.ndarray] = []
        total = 0
        used = 0
        for g in order:
            first, end = games[g]
            take = np.arange(first + int(rng.integers(k)), end, k)
            chosen.append(take)
            total += len(take)
            used += 1
            if total >= positions:
                break
        if total < positions:
            raise SystemExit(f"label_study: {total} positions for one in {k}, {positions} wanted: more data needed")
        index = np.concatenate(chosen)[:positions]
        fitted = nn.concatenate([nn.take(arrays, index), held_arrays])
        for seed in seeds:
            settings = nn.TrainSettings(hidden=hidden, epochs=epochs, batch=batch, lr=lr, lam=1.0, seed=seed)
            _, summary = nn.train(fitted, settings, held=len(held_arrays), log=lambda line: None)
            figures.append({"every": k, "games": used, "positions": positions, "seed": seed,
                            "held_out_loss": summary["held_out_loss"], "best_epoch": summary["best_epoch"],
                            "seconds": summary["seconds"]})
            print(f"one in {k}: {used} games, {positions} positions, seed {seed}: held-out loss "
                  f"{summary['held_out_loss']:.6f} (epoch {summary['best_epoch']}, {summary['seconds']:.0f} s)",
                  flush=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stockfish", default=labels.find_stockfish())
    parser.add_argument("--json", help="write the figures here too")
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("cost")
    c.add_argument("--nodes", type=int, nargs="+", default=[1000, 2000, 5000])
    c.add_argument("--games", type=int, default=12)
    q = commands.add_parser("quality")
    q.add_argument("--data", required=True)
    q.add_argument("--positions", type=int, default=2000)
    q.add_argument("--nodes", type=int, nargs="+", default=[1000, 2000, 5000])
    q.add_argument("--workers", type=int, default=2)
    g = commands.add_parser("games", help="label the quiet positions of PGN games (a held-out set of the engine's own)")
    g.add_argument("pgn", nargs="+")
    g.add_argument("--nodes", type=int, default=5000)
    g.add_argument("--out", required=True)
    k = commands.add_parser("kept", help="held-out loss of nets trained on one position in k of k times the games")
    k.add_argument("--data", required=True, action="append", help="label file to draw from; repeatable")
    k.add_argument("--held-out", required=True, help="label file of other games, the common held-out set")
    k.add_argument("--held", type=int, default=40000, help="its first N records")
    k.add_argument("--positions", type=int, default=150000)
    k.add_argument("--every", type=int, nargs="+", default=[1, 2, 4, 8])
    k.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    k.add_argument("--hidden", type=int, default=64)
    k.add_argument("--epochs", type=int, default=20)
    k.add_argument("--batch", type=int, default=2048)
    k.add_argument("--lr", type=float, default=0.005)
    args = parser.parse_args(argv)
    figures: list[dict[str, Any]]
    if args.command == "kept":
        figures = kept(args.data, args.held_out, args.held, args.positions, args.every, args.seeds,
                       args.hidden, args.epochs, args.batch, args.lr)
        if args.json:
            with open(args.json, "w") as handle:
                json.dump({"command": " ".join(["label_study.py", *(argv or sys.argv[1:])]),
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "figures": figures},
                          handle, indent=2)
        return 0
    if args.stockfish is None:
        print("label_study: Stockfish not found", file=sys.stderr)
        return 2
    if args.command == "games":
        made = from_games(args.pgn, args.nodes, args.out, args.stockfish)
        print(f"{made['positions']:.0f} positions of {made['games']:.0f} games labelled at {args.nodes} nodes: "
              f"{args.out}")
        return 0
    if args.command == "cost":
        figures = [cost(nodes, args.games, args.stockfish) for nodes in args.nodes]
        print(f"{'nodes':>6} | kept/game | python ms | stockfish ms | python share | per hour, 2 cores")
        for row in figures:
            print(f"{row['nodes']:6d} | {row['kept_per_game']:9.1f} | {row['python_ms']:9.2f} | "
                  f"{row['stockfish_ms']:12.2f} | {row['python_share']:12.1%} | {row['per_hour_two_cores']:,.0f}")
    else:
        figures = quality(args.data, args.positions, args.nodes, args.workers, args.stockfish)
        print(f"{'nodes':>6} | positions | mse of sigmoid vs depth {REFERENCE_DEPTH} | mean |cp| difference")
        for row in figures:
            print(f"{row['nodes']:6d} | {row['positions']:9d} | {row['mse_sigmoid']:27.6f} | {row['mean_abs_cp']:.1f}")
    stockfish_id = labels.stockfish_name(args.stockfish)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"command": " ".join(["label_study.py", *(argv or sys.argv[1:])]), "stockfish": stockfish_id,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "figures": figures},
                      handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
