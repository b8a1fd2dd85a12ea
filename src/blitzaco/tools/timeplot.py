"""Where the time of a game goes: the seconds per move of match runner PGNs.

Every engine move of a match runner PGN carries the seconds the mover spent on it
and, in a timed match, the mover's clock after it (``{ +0.08/5 0.68s [%clk
0:00:09.42] }``); opening moves carry ``{ book }`` instead. For each player this
module lists the seconds spent on its 1st, 2nd, ... own move of every game (book
moves are not counted), summarises them (mean, median, the lowest clock, the mean
clock left after the player's last move of a game, time forfeits, the share of the
time spent in each phase of the game) and plots the mean and interquartile range
against the move number.

The runner does not write the move that loses on time (it records the forfeit
instead), so that move's time is missing and the lowest clock seen is the one before
it.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

__all__ = [
    "MIN_GAMES",
    "PHASES",
    "PlayerGame",
    "Summary",
    "TimedMove",
    "plot",
    "read_games",
    "seconds_by_move",
    "summarise",
    "table",
]

#: The plot follows a player up to the last move number that at least this many of
#: its games reach: beyond it the mean and quartiles stand on too few games.
MIN_GAMES = 20
#: Phases of a game in the player's own move numbers (first, last; None: to the end).
PHASES: tuple[tuple[int, int | None], ...] = ((1, 10), (11, 30), (31, 60), (61, None))

# "0.68s" as a word of the comment: seconds spent on the move.
_SPENT = re.compile(r"(?:^|\s)(\d+(?:\.\d+)?)s(?=\s|$)")
# A Termination header that says the game was lost on time ("time forfeit" from our
# runner and from cutechess); a word, so that "crash (TimeoutError)" is not one.
_ON_TIME = re.compile(r"\btime\b", re.IGNORECASE)
_BOOK = "book"


@dataclass(frozen=True)
class TimedMove:
    number: int  # the player's own move number in the game, from 1, book moves not counted
    seconds: float  # spent on the move
    clock: float | None  # seconds left after the move (None: no [%clk])


@dataclass(frozen=True)
class PlayerGame:
    """One player's timed moves in one game."""

    player: str
    opponent: str
    game: str  # where it is: "<pgn path> round <Round>" ("game <n>" without a Round header)
    time_control: str  # the TimeControl header ("" without one)
    moves: tuple[TimedMove, ...]
    lost_on_time: bool


@dataclass(frozen=True)
class Summary:
    player: str
    games: int
    moves: int  # moves with a time
    mean: float  # seconds per move
    median: float  # seconds per move
    lowest_clock: float | None  # seconds, lowest [%clk] of any move (None: no clock)
    lowest_clock_game: str | None  # PlayerGame.game of that move
    final_clock: float | None  # seconds, mean over games of the clock after the player's last move (None: no clock)
    forfeits: int  # games lost on time
    shares: tuple[float, ...]  # share of the player's total time spent in each of PHASES


def read_games(paths: Iterable[str | Path]) -> tuple[list[PlayerGame], int]:
    """Two records (White's and Black's) for every game of the PGN files *paths*, and
    the number of games left out: those without a single timed move, and those whose
    moves fall short of their ``PlyCount`` header (a game still being written to a
    growing file).

    A game counts as lost on time for the loser by its ``Result`` when its
    ``Termination`` header has the word "time" in it. Raises OSError if a file cannot
    be read."""
    records: list[PlayerGame] = []
    left_out = 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            index = 0
            while (game := chess.pgn.read_game(handle)) is not None:
                index += 1
                where = f"round {game.headers['Round']}" if "Round" in game.headers else f"game {index}"
                found = _read_game(game, f"{path} {where}")
                if found is None:
                    left_out += 1
                else:
                    records.extend(found)
    return records, left_out


def _read_game(game: chess.pgn.Game, label: str) -> tuple[PlayerGame, PlayerGame] | None:
    headers = game.headers
    moves: dict[chess.Color, list[TimedMove]] = {chess.WHITE: [], chess.BLACK: []}
    numbers = {chess.WHITE: 0, chess.BLACK: 0}
    engine_plies = 0
    for node in game.mainline():
        if node.comment.strip() == _BOOK:
            continue
        engine_plies += 1
        side = not node.turn()  # the side that made node.move
        numbers[side] += 1
        spent = _SPENT.search(node.comment)
        if spent is not None:
            moves[side].append(TimedMove(numbers[side], float(spent.group(1)), node.clock()))
    expected = headers.get("PlyCount", "")
    if not (moves[chess.WHITE] or moves[chess.BLACK]) or (expected.isdigit() and int(expected) != engine_plies):
        return None
    on_time = _ON_TIME.search(headers.get("Termination", "")) is not None
    loser = {"1-0": chess.BLACK, "0-1": chess.WHITE}.get(headers.get("Result", "*"))
    names = {chess.WHITE: headers.get("White", "?"), chess.BLACK: headers.get("Black", "?")}
    white, black = (
        PlayerGame(names[side], names[not side], label, headers.get("TimeControl", ""), tuple(moves[side]),
                   lost_on_time=on_time and loser == side)
        for side in (chess.WHITE, chess.BLACK)
    )
    return white, black


def seconds_by_move(records: Iterable[PlayerGame]) -> dict[str, dict[int, list[float]]]:
    """Per player, per own move number: the seconds spent on that move in each game
    that has it (in the order of *records*)."""
    collected: dict[str, dict[int, list[float]]] = {}
    for record in records:
        by_number = collected.setdefault(record.player, {})
        for move in record.moves:
            by_number.setdefault(move.number, []).append(move.seconds)
    return collected


def summarise(records: Iterable[PlayerGame]) -> dict[str, Summary]:
    """A Summary per player of *records*, by player name in alphabetical order.
    A player without a single timed move has mean and median 0."""
    mine: dict[str, list[PlayerGame]] = {}
    for record in records:
        mine.setdefault(record.player, []).append(record)
    summaries: dict[str, Summary] = {}
    for player in sorted(mine):
        games = mine[player]
        seconds = [move.seconds for game in games for move in game.moves]
        clocks = [(move.clock, game.game) for game in games for move in game.moves if move.clock is not None]
        lowest = min(clocks, key=lambda pair: pair[0], default=(None, None))
        # The clock a game ended with: time the player never used.
        finals = [next((move.clock for move in reversed(game.moves) if move.clock is not None), None)
                  for game in games]
        ended = [clock for clock in finals if clock is not None]
        total = sum(seconds)
        shares = tuple(
            sum(move.seconds for game in games for move in game.moves
                if first <= move.number and (last is None or move.number <= last)) / total if total else 0.0
            for first, last in PHASES
        )
        summaries[player] = Summary(
            player, len(games), len(seconds), statistics.fmean(seconds) if seconds else 0.0,
            statistics.median(seconds) if seconds else 0.0, lowest[0], lowest[1],
            statistics.fmean(ended) if ended else None,
            sum(game.lost_on_time for game in games), shares,
        )
    return summaries


def _phase_name(first: int, last: int | None) -> str:
    return f"{first}-{last}" if last is not None else f"{first}+"


def table(summaries: Iterable[Summary]) -> str:
    """*summaries* as a plain-text table, one player a line (phase shares in per cent)."""
    rows = [["player", "games", "moves", "mean s", "median s", "forfeits",
             *(_phase_name(*phase) for phase in PHASES), "clock left at end", "lowest clock"]]
    for summary in summaries:
        lowest = (f"{summary.lowest_clock:.3f}s ({summary.lowest_clock_game})"
                  if summary.lowest_clock is not None else "-")
        rows.append([summary.player, str(summary.games), str(summary.moves), f"{summary.mean:.3f}",
                     f"{summary.median:.3f}", str(summary.forfeits),
                     *(f"{share:.1%}" for share in summary.shares),
                     f"{summary.final_clock:.2f}s" if summary.final_clock is not None else "-", lowest])
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join([row[0].ljust(widths[0]), *(cell.rjust(width) for cell, width in zip(row[1:-1], widths[1:],
                                                                                        strict=True)), row[-1]])
        for row in rows
    )


def plot(records: list[PlayerGame], path: str | Path, min_games: int = MIN_GAMES) -> None:
    """Write a PNG to *path*: per player, the mean seconds per move (line) and the
    interquartile range (band) against the player's move number, up to the last move
    number that *min_games* of its games reach. Needs matplotlib. Raises ValueError
    if no player has *min_games* games with a timed first move."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    collected = seconds_by_move(records)
    played = Counter(record.player for record in records)
    curves: dict[str, tuple[list[int], list[float], list[float], list[float]]] = {}
    for player, by_number in collected.items():
        numbers: list[int] = []
        number = 1
        while len(by_number.get(number, [])) >= min_games:
            numbers.append(number)
            number += 1
        if numbers:
            samples = [np.asarray(by_number[n]) for n in numbers]
            curves[player] = (numbers, [float(s.mean()) for s in samples],
                              [float(np.percentile(s, 25)) for s in samples],
                              [float(np.percentile(s, 75)) for s in samples])
    if not curves:
        raise ValueError(f"no player has {min_games} games with a timed first move")
    games = len({record.game for record in records})
    controls = sorted({record.time_control for record in records if record.time_control})
    figure, axes = plt.subplots(figsize=(9, 5))
    for player in sorted(curves):
        numbers, mean, low, high = curves[player]
        (line,) = axes.plot(numbers, mean, "-", label=f"{player}: mean ({played[player]} games)")
        axes.fill_between(numbers, low, high, color=line.get_color(), alpha=0.2, label=f"{player}: quartiles")
    axes.set_xlabel("the player's move number (book moves not counted)")
    axes.set_ylabel("seconds spent on the move")
    axes.set_title(f"Time per move: {games} games" + (f" at {', '.join(controls)}" if controls else "")
                   + f" (each curve while {min_games}+ of its games last)")
    axes.set_ylim(bottom=0)
    axes.legend(fontsize=8)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
