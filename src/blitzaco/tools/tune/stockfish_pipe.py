"""Stockfish driven over its pipes, as the label games (:mod:`~blitzaco.tools.tune.labels`)
and the check of its exported network (:mod:`~blitzaco.tools.tune.stockfish_net`)
need it and no more: a new game, a search of so many nodes, the static evaluation.

Its own module so that both import it: the labels read the exported network, and the
network is checked against this pipe.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import chess
import chess.engine

from blitzaco.tools.tune.labelgame import Game, game_of

__all__ = ["Stockfish"]

#: Evaluations asked of Stockfish before their answers are read: its traces (about
#: 3 KB each) must not fill the pipe while the worker is still writing.
_PIPE_AHEAD = 8


class Stockfish:
    """A UCI engine driven over its pipes, as the label games need it and no more:
    a new game, then the move and the score of a search of so many nodes. Four times
    lighter than python-chess's engine layer (its event loop, a thread and a lock per
    command), which cost as much processor time as Stockfish's own search at 1,000
    nodes (``scripts/label_study.py``). It sends what python-chess's ``play`` sends
    (``ucinewgame``, the root position with the moves since, ``go nodes``) and reads
    the score as it does (the last one reported), so the games are the same."""

    def __init__(self, binary: str) -> None:
        self._process = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self._send("uci")
        self._read_until("uciok")
        self._send("setoption name Threads value 1")
        self._send("setoption name Hash value 16")
        self._chess960 = False
        self._asked: list[bool] = []  # the side to move of each evaluation asked for, not read yet
        self._answers: list[int] = []  # evaluations read, not given yet

    @property
    def pid(self) -> int:
        return self._process.pid

    def _send(self, line: str) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()

    def _lines(self) -> Iterator[str]:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            yield line
        raise chess.engine.EngineTerminatedError("Stockfish ended")

    def _read_until(self, word: str) -> None:
        for line in self._lines():
            if line.startswith(word):
                return

    def new_game(self, chess960: bool = False) -> None:
        """``ucinewgame``: the table cleared, so that a game does not depend on the last;
        ``UCI_Chess960`` set for a Chess960 game."""
        if self._asked:
            self._read_evals()
        if chess960 != self._chess960:
            self._send(f"setoption name UCI_Chess960 value {'true' if chess960 else 'false'}")
            self._chess960 = chess960
        self._send("ucinewgame")
        self._send("isready")
        self._read_until("readyok")

    def static_eval(self, board: chess.Board | Game) -> int:
        """Stockfish's static network evaluation of *board* (its ``eval`` command's
        ``NNUE evaluation`` line, pawns from White's side, two decimals) in
        centipawns from the side to move's view. *board* must not be in check
        (Stockfish then evaluates nothing)."""
        self.ask_eval(board)
        return self.evals()[0]

    def ask_eval(self, board: chess.Board | Game, snapshot: Any = None) -> None:
        """Ask for :meth:`static_eval` of *board* without waiting: Stockfish works on
        it while the caller goes on; :meth:`evals` gives the answers, in order.
        (*snapshot*: the game's, unused here; :class:`NetEvaluator` reads it.)"""
        game = game_of(board)
        assert self._process.stdin is not None
        self._process.stdin.write(f"position fen {game.fen()}\neval\n")
        self._asked.append(game.white())
        if len(self._asked) >= _PIPE_AHEAD:  # a full pipe would stall both sides
            self._read_evals()

    def _read_evals(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.flush()
        value: int | None = None
        for turn in self._asked:
            for line in self._lines():
                if line.startswith("NNUE evaluation"):
                    value = round(100 * float(line.split()[2]))
                elif line.startswith("Final evaluation"):
                    break
            if value is None:
                raise ValueError("Stockfish gave no network evaluation")
            self._answers.append(value if turn else -value)
            value = None
        self._asked = []

    def evals(self) -> list[int]:
        """The answers to every :meth:`ask_eval` since the last call, in order."""
        self._read_evals()
        values, self._answers = self._answers, []
        return values

    def play(self, board: chess.Board | Game, nodes: int = 0, depth: int = 0) -> tuple[Any, int | None, bool]:
        """The move Stockfish plays in *board* after *nodes* nodes (or to *depth*),
        its last score (centipawns, or moves to mate) and whether that score is a
        mate, from the side to move's view; (None, None, False) when it gives no move.
        The move is the board's kind (a python-chess move, or a code on the engine's
        board)."""
        if self._asked:  # the evaluations' answers come first in the pipe
            self._read_evals()
        game = game_of(board)
        root, moves = game.line()
        where = "startpos" if root == chess.STARTING_FEN else f"fen {root}"
        self._send(f"position {where}" + (f" moves {' '.join(moves)}" if moves else ""))
        self._send(f"go depth {depth}" if depth else f"go nodes {nodes}")
        score: int | None = None
        mate = False
        for line in self._lines():
            if line.startswith("bestmove"):
                words = line.split()
                move = game.parse(words[1]) if len(words) > 1 and words[1] != "(none)" else None
                return move, score, mate
            if line.startswith("info") and " score " in line:
                words = line.split()
                at = words.index("score")
                mate, score = words[at + 1] == "mate", int(words[at + 2])
        raise AssertionError("unreachable")

    def quit(self) -> None:
        try:
            self._send("quit")
            self._process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
