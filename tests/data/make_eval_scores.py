#!/usr/bin/env python3
"""Write eval_scores.csv: the evaluation's recorded scores of 200 fixed positions.

Written once, at 0b793a0 + the one-stack change (2026-11-27), when the python-chess
evaluator that the engine's own had been held against term by term left the
package: from then on these numbers are the reference (tests/test_classical.py,
tests/test_nnue.py). Each row: the FEN, whether it is a Chess960 position, then the score for the side to move
(centipawns) of

* ``classical``: the shipped classical evaluation alone;
* ``perturbed``: the classical evaluation with every weight moved a little (the
  seeded ``perturbed_config`` below: a weight swapped in a later change shows here
  even where the shipped weights are equal by chance);
* ``tables``: material and piece-square tables alone (``classical = false``);
* ``network``: the shipped network alone (weight 1, no classical share);
* ``blend``: the shipped configuration (the network's share and the classical's).

Run from the repository's root: ``python tests/data/make_eval_scores.py``. At the
time it was written the classical columns were also checked against the python-chess
evaluator (blitzaco.evaluate, now gone); rerunning it with today's code rewrites the
file with today's numbers, which is only right after a change meant to move them.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import chess

from blitzaco.board import Board
from blitzaco.bundled import bundled_file
from blitzaco.classical import Classical
from blitzaco.config import Config, EvalConfig
from blitzaco.network import NetEvaluator
from blitzaco.nnue import load_weights

HERE = Path(__file__).resolve().parent
OUT = HERE / "eval_scores.csv"
COLUMNS = ("fen", "chess960", "classical", "perturbed", "tables", "network", "blend")


def perturbed_config(value: object, rng: random.Random) -> object:
    """Every weight of *value* (an EvalConfig) moved a little, seeded by *rng*."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return dataclasses.replace(value, **{f.name: perturbed_config(getattr(value, f.name), rng) for f in fields})
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value + (rng.randint(-7, 7) if value > 10 else rng.randint(0, 3))
    if isinstance(value, tuple):
        return tuple(perturbed_config(item, rng) for item in value)
    return value


def positions() -> list[chess.Board]:
    """200 positions: 120 from the test openings and 40 from the test endgames, each
    followed by seeded random moves, and 40 Chess960 games."""
    rng = random.Random(20261127)
    out: list[chess.Board] = []
    openings = [line.split(" c0")[0] for line in (HERE / "openings.epd").read_text().splitlines() if line.strip()]
    endgames = [" ".join(line.split()[:4]) for line in (HERE / "endgames.epd").read_text().splitlines()
                if line.strip()]

    def walk(board: chess.Board, plies: int) -> None:
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                return
            board.push(rng.choice(moves))
        if not board.is_game_over():
            out.append(board.copy(stack=False))

    while len(out) < 120:
        walk(chess.Board(openings[len(out) * 2 % len(openings)]), rng.randrange(0, 50))
    while len(out) < 160:
        walk(chess.Board(endgames[len(out) % len(endgames)] + " 0 1"), rng.randrange(0, 12))
    while len(out) < 200:
        walk(chess.Board.from_chess960_pos(rng.randrange(960)), rng.randrange(0, 60))
    return out


def scores(board: chess.Board, evaluators: list[Classical]) -> list[int]:
    result = []
    for evaluator in evaluators:
        own = Board.from_chess(board)
        evaluator.reset(own)
        result.append(int(evaluator.evaluate(own)))
    return result


def main() -> None:
    config = Config()
    shipped = config.eval
    classical_config = dataclasses.replace(shipped, nn=dataclasses.replace(shipped.nn, enabled=False))
    perturbed = perturbed_config(classical_config, random.Random(0))
    assert isinstance(perturbed, EvalConfig) and perturbed != classical_config
    tables = dataclasses.replace(classical_config, classical=False)
    path = bundled_file(shipped.nn.file)
    assert path is not None
    weights = load_weights(path)
    nn = shipped.nn
    evaluators: list[Classical] = [
        Classical(classical_config), Classical(perturbed), Classical(tables),
        NetEvaluator(classical_config, weights, 1.0, 0.0), NetEvaluator(classical_config, weights, nn.weight,
                                                                         nn.classical, nn.fifty_move),
    ]
    rows = [";".join(COLUMNS)]
    for board in positions():
        values = [str(score) for score in scores(board, evaluators)]
        rows.append(";".join([board.fen(en_passant="fen"), str(int(board.chess960)), *values]))
    OUT.write_text("\n".join(rows) + "\n")
    print(f"{len(rows) - 1} positions written to {OUT}")


if __name__ == "__main__":
    main()
