#!/usr/bin/env python3
"""Fit the spectral weights of config.toml to what the classical evaluation misses.

Positions are sampled from PGN games (every --every plies after --skip, positions in
check left out). For each, the target is a reference engine's score (Stockfish by
default, searched to --depth) minus BlitzACO's classical static evaluation, both in
centipawns from White's point of view; the inputs are the spectral features, White's
minus Black's. A ridge least-squares fit on half of the positions gives the weights;
the other half measures how much of the residual they explain out of sample.

    python scripts/fit_spectral.py runs/abl2/*.pgn --positions 6000 --depth 8

Prints the weights (centipawns per unit), their standard errors, and the held-out
share of variance explained; --toml prints them as a config.toml section.
"""

from __future__ import annotations

import argparse
import json
import sys

import chess
import chess.engine
import chess.pgn
import numpy as np

from blitzaco.classical import Classical
from blitzaco.config import Config
from blitzaco.spectral import FEATURES, position_features
from blitzaco.trace import classical_trace


def sample_positions(paths: list[str], every: int, skip: int, limit: int) -> list[chess.Board]:
    boards = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                for ply, move in enumerate(game.mainline_moves()):
                    board.push(move)
                    if ply >= skip and ply % every == 0 and not board.is_check() and not board.is_game_over():
                        boards.append(board.copy(stack=False))
    step = max(1, len(boards) // limit) if limit else 1
    return boards[::step][:limit] if limit else boards


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", nargs="+", help="games to sample positions from")
    parser.add_argument("--positions", type=int, default=6000, help="at most this many positions")
    parser.add_argument("--every", type=int, default=5, help="sample every this many plies")
    parser.add_argument("--skip", type=int, default=8, help="plies skipped at the start of each game")
    parser.add_argument("--depth", type=int, default=8, help="reference search depth")
    parser.add_argument("--engine", default="stockfish", help="reference engine command")
    parser.add_argument("--clip", type=int, default=400, help="residuals beyond this (centipawns) are left out")
    parser.add_argument("--ridge", type=float, default=1.0, help="ridge penalty")
    parser.add_argument("--json", help="write the data set (features, targets) here")
    parser.add_argument("--toml", action="store_true", help="print the weights as config.toml lines")
    args = parser.parse_args(argv)

    boards = sample_positions(args.pgn, args.every, args.skip, args.positions)
    classical = Classical(Config().eval)
    rows, targets = [], []
    with chess.engine.SimpleEngine.popen_uci(args.engine.split()) as reference:
        for number, board in enumerate(boards, start=1):
            info = reference.analyse(board, chess.engine.Limit(depth=args.depth))
            score = info["score"].white().score(mate_score=100000)
            ours = classical_trace(board, classical).score
            residual = score - ours
            if abs(score) > 1000 or abs(residual) > args.clip:
                continue
            white, black = position_features(board)
            rows.append([getattr(white, name) - getattr(black, name) for name in FEATURES])
            targets.append(residual)
            if number % 500 == 0:
                print(f"{number}/{len(boards)} positions", file=sys.stderr, flush=True)
    x = np.array(rows)
    y = np.array(targets, dtype=float)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"features": FEATURES, "x": x.tolist(), "y": y.tolist()}, handle)

    train, test = slice(0, None, 2), slice(1, None, 2)
    xt, yt = x[train], y[train]
    mean_x, mean_y = xt.mean(axis=0), yt.mean()
    xc, yc = xt - mean_x, yt - mean_y
    gram = xc.T @ xc + args.ridge * np.eye(len(FEATURES))
    weights = np.linalg.solve(gram, xc.T @ yc)
    dof = max(1, len(yt) - len(FEATURES) - 1)
    sigma2 = float(((yc - xc @ weights) ** 2).sum()) / dof
    errors = np.sqrt(np.diag(sigma2 * np.linalg.inv(gram)))
    # Out of sample: the spectral advantage has no intercept in the engine.
    predicted = x[test] @ weights
    target = y[test]
    explained = 1.0 - float(((target - predicted) ** 2).sum()) / float(((target - target.mean()) ** 2).sum())
    print(f"{len(y)} positions ({len(yt)} fit, {len(target)} held out), reference depth {args.depth}")
    print(f"{'feature':16s} {'weight':>9s} {'± s.e.':>8s}   (centipawns per unit)")
    for name, weight, error in zip(FEATURES, weights, errors, strict=True):
        print(f"{name:16s} {weight:9.2f} {error:8.2f}")
    print(f"held-out variance of the residual explained: {100 * explained:.2f} %")
    if args.toml:
        print("[eval.spectral]")
        for name, weight in zip(FEATURES, weights, strict=True):
            print(f"{name} = {round(float(weight), 2)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
