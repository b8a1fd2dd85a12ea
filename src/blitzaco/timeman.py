"""Time management: turning ``go`` limits into a soft and a hard deadline, and the
control object the UCI thread and the search thread share.

* soft limit: no new iteration starts after it;
* hard limit: the search is aborted when it passes.

For a clock (``wtime``/``btime``) the budget is computed from the remaining time
minus ``Move Overhead``, less a reserve for the latency of each move still to come
that the increment does not pay for; a move never takes more than ``max_share`` of the
remaining time, so the clock does not run out while the increment pays for the
latency of a move. A clock given for the other side only counts the side to move's
as empty (Stockfish's reading): it moves at once. A ``movestogo`` above 50 counts as
50, as in Stockfish. ``movetime`` is a hard and soft limit of its own. ``go ponder``
has no deadline until ``ponderhit``, when the clock given with the ``go`` starts to
run from that moment.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

import chess

from blitzaco.config import TimeConfig

__all__ = [
    "Limits", "TimeBudget", "time_budget", "Poll", "SearchControl", "IterationReport", "Stability", "MAX_MOVES_TO_GO",
]

#: The largest ``movestogo`` taken as given (moves): a larger one is read as this, as
#: Stockfish does, so that a GUI sending the moves left in the whole game (10,000)
#: does not cut each move to a sliver of the clock.
MAX_MOVES_TO_GO = 50


@dataclass
class Limits:
    """What a ``go`` command asked for. Times are in milliseconds."""

    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None
    movetime: int | None = None
    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    infinite: bool = False
    ponder: bool = False
    searchmoves: list[chess.Move] = field(default_factory=list)
    perft: int | None = None  # go perft N: count the move tree instead of searching

    def has_clock(self) -> bool:
        """Whether a clock was given for either side."""
        return self.wtime is not None or self.btime is not None

    def clock(self, color: chess.Color) -> tuple[int | None, int]:
        """(remaining time or None, increment) of *color*."""
        if color == chess.WHITE:
            return self.wtime, self.winc or 0
        return self.btime, self.binc or 0


@dataclass(frozen=True)
class TimeBudget:
    soft_ms: float
    hard_ms: float


def time_budget(limits: Limits, color: chess.Color, overhead_ms: int, config: TimeConfig) -> TimeBudget | None:
    """The soft and hard limits for the side *color* to move, or None when the
    limits set no time (depth, nodes, mate or infinite searches)."""
    budgets = []
    if limits.movetime is not None:
        movetime = max(limits.movetime, 1)
        budgets.append(TimeBudget(movetime, movetime))
    remaining, increment = limits.clock(color)
    if remaining is None and limits.has_clock():
        # A clock for the other side only: a missing clock counts as empty, as in
        # Stockfish, and the move comes at once rather than never.
        remaining = 0
    if remaining is not None:
        remaining = max(remaining - overhead_ms, 1)
        increment = max(increment, 0)
        moves_to_go = (
            min(limits.movestogo, MAX_MOVES_TO_GO) if limits.movestogo and limits.movestogo > 0 else config.moves_to_go
        )
        # Every move still to come costs some latency on top of its search; what
        # the increment does not pay for is kept in reserve, so that a long
        # sudden-death game does not run the clock down to the bare overhead.
        reserve = moves_to_go * max(config.move_latency - increment, 0)
        spendable = max(remaining - reserve, 1)
        optimum = spendable / moves_to_go + config.increment_use * increment
        hard = min(config.hard_factor * optimum, config.max_share * remaining)
        soft = min(config.soft_factor * optimum, hard)
        budgets.append(TimeBudget(soft, hard))
    if not budgets:
        return None
    return TimeBudget(min(b.soft_ms for b in budgets), min(b.hard_ms for b in budgets))


@dataclass(frozen=True)
class IterationReport:
    """What the search tells the time manager after a completed iteration."""

    depth: int
    best_move: chess.Move
    score: int  # centipawns, the side to move's view
    best_share: float  # share of the iteration's nodes spent under the best move


class Stability:
    """How unsure the search is, from its iteration reports, as a factor on the soft
    limit (``[time]`` adaptive): more time when the best move keeps changing or the
    score falls, less when one move has taken nearly all the effort and stayed best.
    Stockfish scales its optimum time by the same signs (best-move changes halving
    each iteration, a falling evaluation, the best move's share of the nodes)."""

    def __init__(self, config: TimeConfig) -> None:
        self.config = config
        self.changes = 0.0  # recent best-move changes, halved each iteration
        self.scores: list[int] = []
        self.best: chess.Move | None = None
        self.stable = 0  # iterations the best move has stayed best

    def update(self, report: IterationReport) -> float:
        """Take one iteration's report; returns the factor for the soft limit."""
        cfg = self.config
        self.changes /= 2
        if self.best is not None and report.best_move != self.best:
            self.changes += 1
            self.stable = 0
        else:
            self.stable += 1
        self.best = report.best_move
        factor = 1.0 + cfg.instability_gain * self.changes
        if self.scores:
            mean = sum(self.scores) / len(self.scores)
            falling = 1.0 + (mean - report.score) / cfg.falling_cp
            factor *= min(max(falling, cfg.falling_min), cfg.falling_max)
        self.scores.append(report.score)
        if self.stable >= cfg.stable_iterations and report.best_share >= cfg.stable_share:
            factor *= cfg.stable_factor
        return min(max(factor, cfg.scale_min), cfg.scale_max)


class Poll(Protocol):
    """What the search polls every few nodes: :class:`SearchControl`, or the stop
    signal of a helper process (:mod:`blitzaco.smp`)."""

    def hard_expired(self) -> bool:
        """True when the search must end now."""
        ...


class SearchControl:
    """Shared by the UCI thread (which stops or ponderhits) and the search thread
    (which polls). Deadlines are ``time.perf_counter()`` values; plain attribute
    reads and writes, which are atomic in CPython, carry the state across."""

    def __init__(
        self, limits: Limits, budget: TimeBudget | None, start: float | None = None, count_ponder: bool = False
    ) -> None:
        """*start*: the ``time.perf_counter()`` at which the clock began to run (when
        the ``go`` arrived); now by default. *count_ponder*: on ``ponderhit`` the time
        already spent pondering counts against the budget, as in Stockfish (the
        limits run from *start*), instead of the budget starting afresh."""
        self.count_ponder = count_ponder
        self.limits = limits
        self.budget = budget
        self.start = time.perf_counter() if start is None else start
        self.soft_deadline: float | None = None
        self.hard_deadline: float | None = None
        self.origin = self.start  # when the clock began to run (ponderhit moves it)
        self.pondering = limits.ponder
        self._stop = threading.Event()
        self._released = threading.Event()
        if budget is not None and not self.pondering:
            self._arm(self.start)

    def _arm(self, origin: float) -> None:
        assert self.budget is not None
        self.origin = origin
        self.soft_deadline = origin + self.budget.soft_ms / 1000.0
        self.hard_deadline = origin + self.budget.hard_ms / 1000.0

    def scale_soft(self, factor: float) -> None:
        """Move the soft limit to *factor* times the budget's, never past the hard
        limit (which stays the guarantee against losing on time)."""
        if self.budget is None or self.soft_deadline is None:
            return
        soft = self.origin + factor * self.budget.soft_ms / 1000.0
        hard = self.hard_deadline if self.hard_deadline is not None else soft
        self.soft_deadline = min(soft, hard)

    # called by the UCI thread -------------------------------------------------

    def stop(self) -> None:
        """Abort the search and let its result be printed."""
        self._stop.set()
        self._released.set()

    def ponderhit(self) -> None:
        """The opponent played the expected move: the clock runs from now (or, with
        *count_ponder*, from the ``go``: the pondering was already spent on this move,
        and none of it came off our clock)."""
        if not self.pondering:
            return
        if self.budget is not None:
            self._arm(self.start if self.count_ponder else time.perf_counter())
        self.pondering = False
        if not self.limits.infinite:
            self._released.set()

    # called by the search thread ----------------------------------------------

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000.0

    def hard_expired(self) -> bool:
        if self._stop.is_set():
            return True
        deadline = self.hard_deadline
        return deadline is not None and time.perf_counter() >= deadline

    def soft_expired(self) -> bool:
        if self._stop.is_set():
            return True
        deadline = self.soft_deadline
        return deadline is not None and time.perf_counter() >= deadline

    def fits(self, ms: float, hard: bool = False) -> bool:
        """Whether *ms* more milliseconds of work, started now, end before the soft
        limit (the hard one with *hard*) and no stop came: asked before each of the
        root's tablebase probes, which the search's polling cannot interrupt."""
        if self._stop.is_set():
            return False
        deadline = self.hard_deadline if hard else self.soft_deadline
        return deadline is None or time.perf_counter() + ms / 1000.0 < deadline

    def wait_until_released(self) -> None:
        """Block while the result may not be printed yet: ``go infinite`` waits for
        ``stop``, ``go ponder`` for ``ponderhit`` or ``stop`` (UCI forbids a
        ``bestmove`` before them)."""
        if self.limits.infinite or self.pondering:
            self._released.wait()
