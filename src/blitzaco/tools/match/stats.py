"""Match statistics: Elo with a 95 % interval, likelihood of superiority, and the
sequential probability ratio test used to stop a match as soon as it has decided.

Games are played in pairs (one opening, colours swapped), so the natural unit is
the pair: its score is 0, 0.5, 1, 1.5 or 2 points, the five *pentanomial* outcomes.
Counting pairs instead of games takes the correlation between the two games of an
opening into account, which makes the error bars honest (usually smaller).

Elo is the logistic Elo: a score share ``s`` is ``-400 log10(1/s - 1)`` Elo. The
SPRT is the generalised SPRT on pentanomial pairs as fishtest computes it
(``LLR_logistic``): LLR = N (s1 - s0)(2 mu - s0 - s1) / (2 var), with mu and var the
mean and variance of the per-pair score (scaled to [0, 1]) and s0, s1 the scores
expected at elo0 and elo1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = [
    "Penta",
    "Sprt",
    "elo_from_score",
    "score_from_elo",
    "elo_interval",
    "trinomial_interval",
    "los",
]

#: z for a two-sided 95 % interval.
Z95 = 1.959963984540054
#: Count given to empty pentanomial bins when computing the LLR (as fishtest does).
SPRT_PRIOR = 1e-3
#: Pairs before the SPRT may decide: the variance of a handful of pairs is no
#: estimate (one pair of a win and a draw gives an LLR of 7.2 for H1 of +20).
SPRT_MIN_PAIRS = 20


def score_from_elo(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(score: float) -> float:
    """Logistic Elo of a score share; ±inf at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass
class Penta:
    """Counts of game pairs by points scored in the pair: 0, 0.5, 1, 1.5, 2."""

    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])

    def add(self, points: float) -> None:
        self.counts[int(round(points * 2))] += 1

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def mean_and_variance(self, prior: float = 0.0) -> tuple[float, float]:
        """Mean and variance of a pair's score scaled to [0, 1]. A *prior* count
        replaces empty bins (the SPRT's regularisation: without it a run of
        identical results has no variance and never decides)."""
        counts = [c if c else prior for c in self.counts]
        n = sum(counts)
        if n == 0:
            return 0.5, 0.0
        mean = sum(c * i / 4 for i, c in enumerate(counts)) / n
        var = sum(c * (i / 4 - mean) ** 2 for i, c in enumerate(counts)) / n
        return mean, var


def elo_interval(penta: Penta) -> tuple[float, float]:
    """(Elo, half-width of its 95 % interval) from pentanomial pairs."""
    n = penta.pairs
    mean, var = penta.mean_and_variance()
    if n == 0:
        return 0.0, math.inf
    delta = Z95 * math.sqrt(var / n)
    elo = elo_from_score(mean)
    low, high = elo_from_score(mean - delta), elo_from_score(mean + delta)
    return elo, (high - low) / 2.0


def trinomial_interval(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """(Elo, half-width of its 95 % interval) treating games as independent."""
    n = wins + draws + losses
    if n == 0:
        return 0.0, math.inf
    score = (wins + draws / 2) / n
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / n
    delta = Z95 * math.sqrt(var / n)
    return elo_from_score(score), (elo_from_score(score + delta) - elo_from_score(score - delta)) / 2.0


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority: the probability that the first engine is stronger
    (draws carry no information about it)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


@dataclass(frozen=True)
class Sprt:
    """H0: the Elo difference is elo0; H1: it is elo1 (logistic Elo)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def bounds(self) -> tuple[float, float]:
        """(lower, upper): accept H0 below the lower bound, H1 above the upper."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, penta: Penta) -> float:
        n = penta.pairs
        mean, var = penta.mean_and_variance(prior=SPRT_PRIOR)
        if n == 0 or var == 0.0:
            return 0.0
        s0, s1 = score_from_elo(self.elo0), score_from_elo(self.elo1)
        return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)

    def verdict(self, penta: Penta) -> str | None:
        """"H0", "H1" or None while undecided (always before SPRT_MIN_PAIRS pairs)."""
        if penta.pairs < SPRT_MIN_PAIRS:
            return None
        lower, upper = self.bounds()
        value = self.llr(penta)
        if value <= lower:
            return "H0"
        if value >= upper:
            return "H1"
        return None
