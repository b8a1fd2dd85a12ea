"""Colony training of the pheromone memory (``blitzaco colony``), as in the ant-colony
chess work BlitzACO grew from.

An *ant* is a self-play game from a given move history. At each ply every legal move
is scored by a shallow search, and the ant chooses with probability proportional to

    (trail + trail_floor) ** alpha * exp((score - best) / temperature) ** beta

(*adventurous* mode: a roulette wheel over those weights, so ants explore), or takes
the heaviest (*greedy* mode: it follows the best-marked move). When the game ends, by
the rules or after ``max_plies`` plies (then scored by the expected result of a
search's score), every move of it is reinforced for the side that played it by
``ant_deposit * (2 * result - 1)``: moves of the winner gain pheromone, moves of the
loser lose some. Every ``ants_per_generation`` ants the memory evaporates. The trails
go into the long-term memory, which ``blitzaco colony --out`` writes to a file that
the engine loads (by default ``assets/pheromone.bin``).

This is a tool on top of the engine: the engine never imports it.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import chess

from blitzaco.board import compute_key
from blitzaco.config import Config
from blitzaco.moves import encode_move
from blitzaco.pheromone import Trails
from blitzaco.search import MATE_BOUND, Search, SearchPlan
from blitzaco.static_eval import StaticEval
from blitzaco.timeman import Limits, SearchControl
from blitzaco.tt import TranspositionTable

__all__ = ["ColonyStats", "train", "MODES"]

MODES = ("adventurous", "greedy")
#: Scores beyond this (centipawns) are clamped when turned into a heuristic or a result.
_SCORE_CLAMP = 2000


@dataclass
class ColonyStats:
    """What a training run did."""

    ants: int = 0
    plies: int = 0
    white_points: float = 0.0  # summed results for White (1 win, 0.5 draw, 0 loss; expected when cut)
    generations: int = 0
    seconds: float = 0.0


def _scored_moves(board: chess.Board, static: StaticEval, tt: TranspositionTable, config: Config,
                  depth: int) -> list[tuple[chess.Move, int]]:
    """Every legal move with its score (centipawns, the mover's view) from a search
    of *depth* plies."""
    limits = Limits(depth=depth)
    plan = SearchPlan(static, tt, config.search, SearchControl(limits, None), list(board.legal_moves))
    search = Search(board, plan)
    return search.score_root_moves(depth)


def _expected(score: int) -> float:
    """Expected result for the side with *score* centipawns (the usual logistic, 400
    centipawns for a 10:1 ratio)."""
    score = max(-_SCORE_CLAMP, min(_SCORE_CLAMP, score))
    return 1.0 / (1.0 + 10.0 ** (-score / 400.0))


def train(
    config: Config,
    trails: Trails,
    start: chess.Board,
    ants: int,
    *,
    mode: str = "adventurous",
    seed: int = 1,
    progress: Callable[[str], None] | None = None,
) -> ColonyStats:
    """Run *ants* ants from *start* (its move stack counts for repetitions) and lay
    their trails in *trails*' long-term memory. Deterministic for a given *seed*."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    colony = config.pheromone.colony
    rng = random.Random(seed)
    static = StaticEval(config, Trails(config.pheromone))  # classical (+ spectral): no trail bonus
    tt = TranspositionTable(16)
    stats = ColonyStats()
    started = time.perf_counter()
    for ant in range(ants):
        board = start.copy()
        played: list[tuple[int, int, bool]] = []
        result_white: float | None = None
        for _ in range(colony.max_plies):
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                result_white = 1.0 if outcome.winner is chess.WHITE else 0.0 if outcome.winner is chess.BLACK else 0.5
                break
            key = compute_key(board)
            move = _choose(board, key, trails, _scored_moves(board, static, tt, config, colony.score_depth),
                           config, mode, rng)
            played.append((key, encode_move(move), board.turn))
            board.push(move)
        if result_white is None:
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                result_white = 1.0 if outcome.winner is chess.WHITE else 0.0 if outcome.winner is chess.BLACK else 0.5
            else:
                result_white = _result_by_search(board, static, tt, config)
        for key, code, color in played:
            result = result_white if color == chess.WHITE else 1.0 - result_white
            trails.deposit_long(key, code, colony.ant_deposit * (2.0 * result - 1.0))
        stats.ants += 1
        stats.plies += len(played)
        stats.white_points += result_white
        if (ant + 1) % colony.ants_per_generation == 0:
            trails.evaporate_long()
            stats.generations += 1
        if progress is not None:
            progress(
                f"ant {ant + 1}/{ants}: {len(played)} plies, White scored {result_white:.2f}; "
                f"{sum(len(row) for row in trails.long.values())} trails"
            )
    stats.seconds = time.perf_counter() - started
    return stats


def _choose(board: chess.Board, key: int, trails: Trails, scored: Sequence[tuple[chess.Move, int]],
            config: Config, mode: str, rng: random.Random) -> chess.Move:
    colony = config.pheromone.colony
    row = trails.row(key) or {}
    clamped = [max(-_SCORE_CLAMP, min(_SCORE_CLAMP, score)) for _, score in scored]
    best = max(clamped)
    weights = []
    for (move, _), score in zip(scored, clamped, strict=True):
        tau = row.get(encode_move(move), 0.0) + colony.trail_floor
        weights.append(tau**colony.alpha * math.exp((score - best) / colony.temperature * colony.beta))
    moves = [move for move, _ in scored]
    if mode == "greedy":
        return moves[max(range(len(moves)), key=lambda i: weights[i])]
    return rng.choices(moves, weights=weights)[0]


def _result_by_search(board: chess.Board, static: StaticEval, tt: TranspositionTable, config: Config) -> float:
    """White's expected result in a position where the ant stopped."""
    depth = config.pheromone.colony.result_depth
    limits = Limits(depth=depth)
    legal = list(board.legal_moves)
    plan = SearchPlan(static, tt, config.search, SearchControl(limits, None), legal)
    search = Search(board, plan)
    score = 0
    for iteration in search.iterate(depth):
        score = iteration.lines[0].score
    if abs(score) >= MATE_BOUND:
        score = _SCORE_CLAMP if score > 0 else -_SCORE_CLAMP
    expected = _expected(score)
    return expected if board.turn == chess.WHITE else 1.0 - expected
