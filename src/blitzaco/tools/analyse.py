"""Game analysis: every move of every game in a PGN file classified against the
engine's best move, an annotated PGN, a per-player summary and an evaluation graph.

Each position of a game is searched once (the position after a move is the one
before the next), with the transposition table kept from move to move. A move's
*loss* is the engine's evaluation of the best move minus its evaluation of the move
played, from the mover's point of view, in centipawns; evaluations are capped at
±1000 cp for losses, as a position that is won stays won.

Classes (thresholds in config.toml's [analyse] section):

* Brilliant (!!): a sacrifice (the opponent can win at least
  ``brilliant_min_sacrifice`` on the moved piece's square) that is the engine's
  best move or loses at most ``brilliant_keep``;
* Excellent (!): loss at most ``excellent``; Good: at most ``good``;
* Inaccuracy (?!), Mistake (?): at most ``inaccuracy`` / ``mistake``;
* Blunder (??): more, and always when the mover had a forced mate and lets it go,
  or when the move walks into a forced mate that was not there before.

Summary per player: the count of each class, the average centipawn loss, and an
accuracy in percent: the mean over the player's moves of
``103.1668 * exp(-0.04354 * (W_before - W_after)) - 3.1669`` (clamped to 0..100),
where ``W = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1)`` is the mover's
winning chance in percent for an evaluation in centipawns (the formula lichess
publishes for its accuracy).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

from blitzaco.config import AnalyseConfig, Config
from blitzaco.engine import Bound, Engine, Reporter, SearchInfo
from blitzaco.search import MATE_BOUND
from blitzaco.timeman import Limits
from blitzaco.tools.exchange import see_ge
from blitzaco.tools.progress import progress_bar as bar

__all__ = ["CLASSES", "MoveReport", "PlayerSummary", "GameAnalysis", "analyse_pgn", "accuracy", "win_chance"]

CLASSES = ("Brilliant", "Excellent", "Good", "Inaccuracy", "Mistake", "Blunder")
NAGS = {
    "Brilliant": chess.pgn.NAG_BRILLIANT_MOVE,
    "Excellent": chess.pgn.NAG_GOOD_MOVE,
    "Good": None,
    "Inaccuracy": chess.pgn.NAG_DUBIOUS_MOVE,
    "Mistake": chess.pgn.NAG_MISTAKE,
    "Blunder": chess.pgn.NAG_BLUNDER,
}
CAP = 1000  # centipawns: evaluations are capped at this for losses and accuracy


def win_chance(cp: float) -> float:
    """The mover's winning chance in percent for an evaluation in centipawns."""
    return 50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)


def accuracy(before_cp: float, after_cp: float) -> float:
    """Accuracy of one move in percent, from the mover's evaluations before and after."""
    drop = win_chance(before_cp) - win_chance(after_cp)
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * drop) - 3.1669))


def _capped(score: int) -> int:
    if score >= MATE_BOUND:
        return CAP
    if score <= -MATE_BOUND:
        return -CAP
    return max(-CAP, min(CAP, score))


@dataclass
class MoveReport:
    game: int
    ply: int  # 1 for White's first move of the game
    color: chess.Color
    move: chess.Move
    san: str
    best: chess.Move | None
    best_line: tuple[chess.Move, ...]
    before: int  # engine's score of the best move, mover's view (centipawns or mate score)
    after: int  # engine's score after the move played, mover's view
    loss: int  # capped centipawns, >= 0
    classification: str


@dataclass
class PlayerSummary:
    name: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    losses: list[int] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)

    @property
    def moves(self) -> int:
        return len(self.losses)

    @property
    def acpl(self) -> float:
        return sum(self.losses) / len(self.losses) if self.losses else 0.0

    @property
    def accuracy(self) -> float:
        return sum(self.accuracies) / len(self.accuracies) if self.accuracies else 100.0


@dataclass
class GameAnalysis:
    number: int
    headers: dict[str, str]
    moves: list[MoveReport]
    white_evals: list[int]  # White's view, capped, for each position from the first
    players: dict[chess.Color, PlayerSummary]
    pgn: str
    problem: str | None = None


class _Analyser:
    def __init__(self, engine: Engine, limits: Limits, config: AnalyseConfig) -> None:
        self.engine = engine
        self.limits = limits
        self.config = config

    def score(self, board: chess.Board) -> tuple[int, tuple[chess.Move, ...]]:
        """The engine's score (side to move) and line in *board*."""
        if board.is_checkmate():
            return -MATE_BOUND - 100, ()
        if board.is_stalemate() or board.is_insufficient_material():
            return 0, ()
        lines: list[tuple[chess.Move, ...]] = []
        result = self.engine.think(board, self.limits, _LineCatcher(lines))
        best_line = lines[-1] if lines and lines[-1][:1] == (result.move,) else ((result.move,) if result.move else ())
        return result.score or 0, best_line

    def classify(self, board: chess.Board, move: chess.Move, before: int, after: int, best: chess.Move | None) -> str:
        config = self.config
        loss = max(0, _capped(before) - _capped(after))
        if before >= MATE_BOUND and after < MATE_BOUND:
            return "Blunder"  # a forced mate let go
        if after <= -MATE_BOUND and before > -MATE_BOUND:
            return "Blunder"  # walked into a forced mate
        if (move == best or loss <= config.brilliant_keep) and self._is_sacrifice(board, move):
            if after >= before - config.brilliant_keep:
                return "Brilliant"
        for name, limit in (("Excellent", config.excellent), ("Good", config.good),
                            ("Inaccuracy", config.inaccuracy), ("Mistake", config.mistake)):
            if loss <= limit:
                return name
        return "Blunder"

    def _is_sacrifice(self, board: chess.Board, move: chess.Move) -> bool:
        """Can the opponent win material on the moved piece's square after *move*?"""
        if board.piece_type_at(move.from_square) in (chess.PAWN, chess.KING):
            return False
        after = board.copy(stack=False)
        after.push(move)
        return any(
            see_ge(after, capture, self.config.brilliant_min_sacrifice)
            for capture in after.generate_legal_captures(chess.BB_ALL, chess.BB_SQUARES[move.to_square])
        )


class _LineCatcher(Reporter):
    """Collects the principal variations the engine reports."""

    def __init__(self, lines: list[tuple[chess.Move, ...]]) -> None:
        self.lines = lines

    def info(self, info: SearchInfo) -> None:
        if info.line.multipv == 1 and info.line.bound == Bound.EXACT and info.line.pv:
            self.lines.append(info.line.pv)


def _white(score: int, color: chess.Color) -> int:
    capped = _capped(score)
    return capped if color == chess.WHITE else -capped


def _score_text(score: int) -> str:
    if score >= MATE_BOUND:
        return "#+"
    if score <= -MATE_BOUND:
        return "#-"
    return f"{score / 100:+.2f}"


def analyse_pgn(
    path: str | Path,
    limits: Limits,
    *,
    config: Config | None = None,
    progress: Callable[[int, int, int], None] | None = None,
) -> tuple[list[GameAnalysis], list[str]]:
    """Analyse every game of the PGN file at *path*; returns the analyses and the
    problems met (malformed games, illegal moves), each naming the game and ply. The
    legal part of a game with an illegal move is still analysed."""
    config = config if config is not None else Config()
    engine = Engine(config)
    engine.set_option("own_book", False)
    analyser = _Analyser(engine, limits, config.analyse)
    analyses: list[GameAnalysis] = []
    problems: list[str] = []
    games = _read_games(path, problems)
    total = sum(len(moves) + 1 for _, _, moves, _ in games)
    done = 0
    for number, game, moves, problem in games:
        if problem is not None:
            problems.append(problem)
        engine.new_game()
        board = game.board()
        start_board = board.copy()
        scores: list[tuple[int, tuple[chess.Move, ...]]] = []
        for index in range(len(moves) + 1):
            scores.append(analyser.score(board))
            done += 1
            if progress is not None:
                progress(done, total, number)
            if index < len(moves):
                board.push(moves[index])
        analyses.append(_report(number, game, start_board, moves, scores, analyser, problem))
    return analyses, problems


_GameInput = tuple[int, chess.pgn.Game, list[chess.Move], str | None]


def _read_games(path: str | Path, problems: list[str]) -> list[_GameInput]:
    games = []
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        number = 0
        while True:
            try:
                game = chess.pgn.read_game(handle)
            except (ValueError, UnicodeDecodeError) as err:  # python-chess rarely raises, but be safe
                number += 1
                problems.append(f"game {number}: unreadable: {err}")
                continue
            if game is None:
                break
            number += 1
            moves = list(game.mainline_moves())
            problem = None
            if game.errors:
                problem = f"game {number}: {game.errors[0]} (at ply {len(moves) + 1}); analysed up to there"
            if not moves and problem is None:
                problem = f"game {number}: no moves"
            games.append((number, game, moves, problem))
    return games


def _report(
    number: int,
    game: chess.pgn.Game,
    board: chess.Board,
    moves: list[chess.Move],
    scores: list[tuple[int, tuple[chess.Move, ...]]],
    analyser: _Analyser,
    problem: str | None,
) -> GameAnalysis:
    headers = dict(game.headers)
    players = {
        chess.WHITE: PlayerSummary(headers.get("White", "White")),
        chess.BLACK: PlayerSummary(headers.get("Black", "Black")),
    }
    annotated = chess.pgn.Game()
    annotated.headers.update(game.headers)
    annotated.setup(board)
    node: chess.pgn.GameNode = annotated
    reports: list[MoveReport] = []
    white_evals = [_white(scores[0][0], board.turn)]
    for index, move in enumerate(moves):
        color = board.turn
        before, line = scores[index]
        after = -scores[index + 1][0]
        best = line[0] if line else None
        classification = analyser.classify(board, move, before, after, best)
        loss = max(0, _capped(before) - _capped(after))
        san = board.san(move)
        report = MoveReport(number, len(board.move_stack) + 1, color, move, san, best, line, before, after, loss,
                            classification)
        reports.append(report)
        summary = players[color]
        summary.counts[classification] += 1
        summary.losses.append(loss)
        summary.accuracies.append(accuracy(_capped(before), _capped(after)))
        node = node.add_variation(move)
        nag = NAGS[classification]
        if nag is not None:
            node.nags.add(nag)
        comment = f"[%eval {_white(after, color) / 100:.2f}] {classification}, {_score_text(after)}"
        if best is not None and best != move:
            comment += f"; best {board.variation_san(list(line[:6]))} {_score_text(before)}"
        node.comment = comment
        board.push(move)
        white_evals.append(_white(scores[index + 1][0], board.turn))
    buffer = io.StringIO()
    print(annotated, file=buffer, end="\n\n")
    return GameAnalysis(number, headers, reports, white_evals, players, buffer.getvalue(), problem)


def format_summary(analysis: GameAnalysis) -> str:
    headers = analysis.headers
    lines = [f"Game {analysis.number}: {headers.get('White', '?')} - {headers.get('Black', '?')} "
             f"{headers.get('Result', '*')} ({len(analysis.moves)} plies analysed)"]
    for color in (chess.WHITE, chess.BLACK):
        player = analysis.players[color]
        counts = ", ".join(f"{name} {player.counts[name]}" for name in CLASSES)
        lines.append(f"  {player.name} ({'White' if color else 'Black'}): {player.moves} moves; {counts}; "
                     f"ACPL {player.acpl:.0f}; accuracy {player.accuracy:.1f}%")
    return "\n".join(lines)


def plot(analyses: list[GameAnalysis], path: str | Path) -> None:
    """An evaluation graph per game (White's view, pawns), Mistakes and Blunders marked.
    Needs matplotlib (``pip install blitzaco[analyse]``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(len(analyses), 1, figsize=(10, 3 * len(analyses)), squeeze=False)
    for axis, analysis in zip(axes[:, 0], analyses, strict=True):
        values = [value / 100 for value in analysis.white_evals]
        axis.plot(range(len(values)), values, color="black", linewidth=1)
        axis.fill_between(range(len(values)), values, 0, where=[v >= 0 for v in values], color="#dddddd")
        axis.axhline(0, color="grey", linewidth=0.5)
        for report in analysis.moves:
            if report.classification in ("Mistake", "Blunder"):
                colour = "red" if report.classification == "Blunder" else "orange"
                axis.plot(report.ply, values[report.ply], "o", color=colour)
                axis.annotate(report.san, (report.ply, values[report.ply]), fontsize=7,
                              xytext=(3, 3), textcoords="offset points")
        headers = analysis.headers
        axis.set_title(f"{headers.get('White', '?')} - {headers.get('Black', '?')} {headers.get('Result', '')}")
        axis.set_ylabel("pawns (White)")
        axis.set_ylim(-CAP / 100 - 0.5, CAP / 100 + 0.5)
    axes[-1, 0].set_xlabel("ply")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def progress_bar(done: int, total: int, game: int) -> None:
    """A one-line progress bar on stderr."""
    bar(done, total, f"positions, game {game}")
