"""Where the tuning positions come from, shared by the self-play set
(:mod:`blitzaco.tools.tune.positions`) and Stockfish's labels
(:mod:`blitzaco.tools.tune.labels`): the openings the games start from, and the one
definition of a quiet position."""

from __future__ import annotations

import random

import chess

from blitzaco.bundled import bundled_file
from blitzaco.tools.book import read_database
from blitzaco.tools.exchange import any_see_ge
from blitzaco.tools.match.runner import Opening

__all__ = ["tuning_openings", "is_quiet"]


def tuning_openings(count: int, seed: int = 1, random_plies: int = 2) -> list[Opening]:
    """*count* openings: a line of the engine's opening database (weighted by its
    weight) cut after 4 plies or more, then *random_plies* random legal moves."""
    database = bundled_file("openings.txt")
    if database is None:
        raise FileNotFoundError("the opening database assets/openings.txt is not installed")
    lines, _ = read_database(database)
    rng = random.Random(seed)
    openings: list[Opening] = []
    while len(openings) < count:
        line = rng.choices(lines, weights=[line.weight for line in lines])[0]
        board = chess.Board()
        moves = list(line.moves[: rng.randint(min(4, len(line.moves)), len(line.moves))])
        for move in moves:
            board.push(move)
        for _ in range(random_plies):
            legal = list(board.legal_moves)
            if not legal:
                break
            move = rng.choice(legal)
            board.push(move)
            moves.append(move)
        if board.is_game_over():
            continue
        openings.append(Opening(chess.STARTING_FEN, tuple(move.uci() for move in moves), line.name))
    return openings


def is_quiet(board: chess.Board) -> bool:
    """Not in check, no capture winning material by static exchange, no promotion
    (the tuner's and the label generator's one definition of a quiet position)."""
    if board.is_check():
        return False
    captures = list(board.generate_legal_captures())
    if any(move.promotion for move in captures) or any_see_ge(board, captures, 1):
        return False
    return not any(move.promotion for move in board.generate_legal_moves(board.pawns))
