"""Fit the win/draw/loss model of ``UCI_ShowWDL`` (:mod:`blitzaco.wdl`) to games.

Every move of a match runner PGN carries the mover's score in its comment
(``{ +0.73/4 0.26s }``); each becomes an observation: that score, the material on
the board before the move, and how the game ended for the mover. The eight cubic
coefficients of a(x) and b(x) are fitted by maximum likelihood (torch, L-BFGS), and
a plot shows the observed share of wins, draws and losses by score against the
model's prediction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

from blitzaco.config import WdlConfig
from blitzaco.wdl import material, wdl

__all__ = ["Observation", "observations", "fit", "plot"]

_SCORE = re.compile(r"^\s*([+-]\d+\.\d+)/\d+")
_RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
#: Scores beyond this (cp) say little about the model's middle: left out.
MAX_SCORE = 1500


@dataclass(frozen=True)
class Observation:
    score: int  # centipawns, the mover's view
    material: int
    result: float  # for the mover: 1 win, 0.5 draw, 0 loss


def observations(paths: Iterable[str | Path]) -> tuple[list[Observation], int]:
    """The scored moves of the games in *paths* (mate scores and big scores left
    out), and the number of finished games read."""
    found: list[Observation] = []
    games = 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                white_result = _RESULTS.get(game.headers.get("Result", "*"))
                if white_result is None:
                    continue
                games += 1
                board = game.board()
                for node in game.mainline():
                    match = _SCORE.match(node.comment)
                    if match is not None:
                        score = round(float(match.group(1)) * 100)
                        if abs(score) < MAX_SCORE:
                            result = white_result if board.turn else 1.0 - white_result
                            found.append(Observation(score, material(board), result))
                    board.push(node.move)
    return found, games


def fit(data: list[Observation], start: WdlConfig | None = None, steps: int = 200) -> WdlConfig:
    """The maximum-likelihood model for *data* (torch is imported here only)."""
    import torch

    start = start if start is not None else WdlConfig()
    score = torch.tensor([o.score for o in data], dtype=torch.float64)
    x = torch.tensor([min(max(o.material, 17), 78) / 58 for o in data], dtype=torch.float64)
    result = torch.tensor([o.result for o in data], dtype=torch.float64)
    a = torch.tensor(start.a, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(start.b, dtype=torch.float64, requires_grad=True)
    powers = torch.stack([x**3, x**2, x, torch.ones_like(x)], dim=1)
    optimiser = torch.optim.LBFGS([a, b], max_iter=steps, line_search_fn="strong_wolfe")

    def loss() -> torch.Tensor:
        optimiser.zero_grad()
        centre = powers @ a
        spread = torch.nn.functional.softplus(powers @ b) + 1.0
        win = torch.sigmoid((score - centre) / spread)
        lose = torch.sigmoid((-score - centre) / spread)
        draw = (1 - win - lose).clamp_min(1e-9)
        likelihood = torch.where(result == 1.0, win, torch.where(result == 0.0, lose, draw))
        value = -torch.log(likelihood.clamp_min(1e-9)).mean()
        value.backward()  # type: ignore[no-untyped-call]
        return value

    optimiser.step(loss)  # type: ignore[no-untyped-call]
    # softplus(b) + 1 is the spread used; store the cubic that gives it near the data
    # by refitting the spread's values with a plain cubic (least squares).
    with torch.no_grad():
        spread = torch.nn.functional.softplus(powers @ b) + 1.0
        cubic = torch.linalg.lstsq(powers, spread.unsqueeze(1)).solution.squeeze(1)
    return WdlConfig(tuple(float(v) for v in a.detach()), tuple(float(v) for v in cubic))


def log_loss(data: list[Observation], config: WdlConfig) -> float:
    """Mean negative log-likelihood of *data* under *config* (lower is better)."""
    total = 0.0
    for observation in data:
        win, draw, lose = wdl(observation.score, observation.material, config)
        chance = {1.0: win, 0.5: draw, 0.0: lose}[observation.result]
        total -= math.log(max(chance, 1) / 1000)
    return total / max(1, len(data))


def plot(data: list[Observation], config: WdlConfig, path: str | Path, games: int) -> None:
    """Observed win/draw/loss shares by score (25 cp bins) against the model's mean
    prediction over the same observations. Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins: dict[int, list[Observation]] = {}
    for observation in data:
        bins.setdefault(round(observation.score / 25) * 25, []).append(observation)
    centres = sorted(score for score, members in bins.items() if len(members) >= 20)
    figure, axes = plt.subplots(figsize=(8, 5))
    for index, (name, value, colour) in enumerate((("win", 1.0, "tab:green"), ("draw", 0.5, "tab:grey"),
                                                    ("loss", 0.0, "tab:red"))):
        observed = [sum(o.result == value for o in bins[c]) / len(bins[c]) for c in centres]
        predicted = [sum(wdl(o.score, o.material, config)[index] for o in bins[c]) / 1000 / len(bins[c])
                     for c in centres]
        axes.plot(centres, observed, "o", color=colour, markersize=3, label=f"{name}, observed")
        axes.plot(centres, predicted, "-", color=colour, label=f"{name}, model")
    axes.set_xlabel("score of the side to move (cp)")
    axes.set_ylabel("share of games")
    axes.set_title(f"Win/draw/loss against score: {len(data)} moves of {games} games")
    axes.legend(fontsize=8)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
