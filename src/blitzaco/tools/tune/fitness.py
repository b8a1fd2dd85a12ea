"""The two fitness functions. Both take a population (a torch tensor, one candidate
per row, genes in the genome's order) and return one number per candidate, higher
is better.

* :class:`PositionFitness`: minus the Texel error: the mean squared difference
  between each position's game result and ``1 / (1 + 10 ** (-k * eval / 400))``,
  where *eval* is the static evaluation (White's view) rebuilt from the position's
  feature counts, in one batch for the whole population (thousands of candidates
  per second); optionally minus an l2 penalty on the distance from the base weights,
  which keeps rarely seen weights (a queen with 27 safe squares) from drifting on
  noise. Only weights that enter the evaluation linearly can be tuned this way.
* :class:`GameFitness`: the points each candidate scores in a mini-match against the
  base configuration at fixed nodes, through the match runner; candidates play in
  parallel, as threads driving engine processes on this machine or as tasks on a
  Ray cluster (``ray_address``).
"""

from __future__ import annotations

import concurrent.futures
import math
import os
import socket
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from blitzaco.config import config_from_dict, dump_toml
from blitzaco.tools.match.runner import EngineSpec, MatchLimit, Opening, load_openings, play_match
from blitzaco.tools.rayinit import retried_task, start_ray
from blitzaco.tools.tune.positions import PositionSet, tuning_openings
from blitzaco.tools.tune.spec import GameSettings, Genome

__all__ = ["PositionFitness", "GameFitness", "LINEAR_PATHS", "texel_error"]

#: Config fields whose weights the evaluation uses linearly (count times weight).
LINEAR_PATHS = (
    "eval.material.", "eval.pst.", "eval.pawns.", "eval.pieces.", "eval.tempo",
    "eval.king.shield", "eval.king.semi_open_file", "eval.king.open_file",
)
_LN10_400 = math.log(10.0) / 400.0


def texel_error(evals: torch.Tensor, results: torch.Tensor, k: float) -> torch.Tensor:
    """Mean squared error of the expected results of *evals* (centipawns, White's
    view; one column per candidate) against *results* (1, 0.5, 0 for White)."""
    expected = torch.sigmoid(evals * (k * _LN10_400))
    return ((expected - results.unsqueeze(1)) ** 2).mean(dim=0)


class PositionFitness:
    """Minus the Texel error of each candidate on a :class:`PositionSet`."""

    def __init__(self, data: PositionSet, genome: Genome, k: float = 0.0, l2: float = 0.0) -> None:
        base = config_from_dict(tomllib.loads(data.config_toml))
        if base.eval != genome.base.eval:
            raise ValueError(
                "the position set was traced with other evaluation weights than the genome's base config; "
                "extract it again with these weights (or tune from the weights it was made with)"
            )
        for gene in genome.genes:
            if not gene.path.startswith(LINEAR_PATHS):
                raise ValueError(f"{gene.path} does not enter the evaluation linearly: tune it with the games fitness")
        self.genome = genome
        self.count = len(data)
        features = data.dense([gene.feature for gene in genome.genes])
        self.x = torch.from_numpy(features)
        self.midgame = torch.tensor([gene.phase == 0 for gene in genome.genes])
        self.theta0 = torch.tensor(genome.encode(), dtype=torch.float32)
        self.mg0 = torch.from_numpy(data.mg.astype("float32"))
        self.eg0 = torch.from_numpy(data.eg.astype("float32"))
        phase = torch.from_numpy(data.phase.astype("float32"))
        scale = torch.from_numpy(data.scale.astype("float32"))
        self.mg_weight = (phase / 24.0).unsqueeze(1)
        self.eg_weight = ((24.0 - phase) / 24.0 * scale / 64.0).unsqueeze(1)
        self.results = torch.from_numpy(data.result.astype("float32"))
        self.k = k if k > 0 else self.fit_k()
        self.l2 = l2
        self.span = (torch.tensor(genome.upper) - torch.tensor(genome.lower)).clamp(min=1e-9)
        self.evaluations = 0

    def evals(self, population: torch.Tensor) -> torch.Tensor:
        """Static evaluations (positions x candidates), White's view."""
        delta = population.to(torch.float32) - self.theta0
        mg = self.mg0.unsqueeze(1) + self.x @ (delta * self.midgame).T
        eg = self.eg0.unsqueeze(1) + self.x @ (delta * ~self.midgame).T
        return mg * self.mg_weight + eg * self.eg_weight

    def error(self, population: torch.Tensor, k: float | None = None) -> torch.Tensor:
        return texel_error(self.evals(population), self.results, self.k if k is None else k)

    def __call__(self, population: torch.Tensor, round: int = 0) -> torch.Tensor:
        """Minus the error, and minus the l2 penalty on the distance from the base
        weights (in shares of each gene's range) when one is set."""
        self.evaluations += len(population)
        fitness = -self.error(population)
        if self.l2:
            fitness -= self.l2 * (((population - self.theta0) / self.span) ** 2).mean(dim=1)
        return fitness

    def fit_k(self) -> float:
        """The sigmoid scale that best fits the base weights (golden-section search
        between 0.05 and 10: a set of mostly drawn games can put the best at the
        lower bound)."""
        base = self.theta0.unsqueeze(0)
        evals = self.evals(base)
        lo, hi = 0.05, 10.0
        ratio = (math.sqrt(5) - 1) / 2
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        fa = float(texel_error(evals, self.results, a)[0])
        fb = float(texel_error(evals, self.results, b)[0])
        for _ in range(60):
            if fa < fb:
                hi, b, fb = b, a, fa
                a = hi - ratio * (hi - lo)
                fa = float(texel_error(evals, self.results, a)[0])
            else:
                lo, a, fa = a, b, fb
                b = lo + ratio * (hi - lo)
                fb = float(texel_error(evals, self.results, b)[0])
        return (lo + hi) / 2


def _play_candidate(candidate_toml: str, base_toml: str, openings: Sequence[Opening], nodes: int, games: int,
                    engine: Sequence[str] | None = None) -> tuple[float, int, str]:
    """A mini-match of one candidate config against the base config; returns the
    candidate's score (0..1), the games played and where they were played
    (``host:pid``). Runs where it is called: in a thread here, or in a Ray worker
    (which uses its own Python)."""
    command = tuple(engine) if engine else (sys.executable, "-m", "blitzaco")
    with tempfile.TemporaryDirectory(prefix="blitzaco-tune-") as folder:
        candidate_path = Path(folder) / "candidate.toml"
        base_path = Path(folder) / "base.toml"
        candidate_path.write_text(candidate_toml)
        base_path.write_text(base_toml)
        common = (("OwnBook", False), ("Hash", 16))
        first = EngineSpec("candidate", command, (*common, ("ConfigFile", str(candidate_path))))
        second = EngineSpec("base", command, (*common, ("ConfigFile", str(base_path))))
        report = play_match(first, second, openings, MatchLimit(nodes=nodes), games)
    score = (report.wins + report.draws / 2) / max(report.games, 1)
    return score, report.games, f"{socket.gethostname()}:{os.getpid()}"


class GameFitness:
    """The score of each candidate in a mini-match (``pairs`` game pairs at ``nodes``
    per move) against the base config. Every candidate of one call plays the same
    openings; each round takes new ones (from the engine's opening database, or
    from ``settings.openings``, which should not be the openings of a validation)."""

    def __init__(self, genome: Genome, settings: GameSettings, *, ray_address: str | None = None,
                 engine: Sequence[str] | None = None, seed: int = 1) -> None:
        self.genome = genome
        self.settings = settings
        self.engine = tuple(engine) if engine else None
        self.base_toml = dump_toml(genome.base)
        self.seed = seed
        self.evaluations = 0
        self.workers: set[str] = set()  # host:pid of the processes that played
        self.games = 0
        self._openings: list[Opening] | None = (
            load_openings(settings.openings) if settings.openings else None
        )
        self._ray: Any = None
        if ray_address and ray_address != "none":
            self._ray = start_ray(ray_address, max(1, settings.workers))
            self._remote = retried_task(self._ray, _play_candidate)

    def openings(self, round: int) -> list[Opening]:
        """The openings of call number *round*: the same for every candidate of it."""
        count = self.settings.pairs
        if self._openings is None:
            return tuning_openings(count, seed=self.seed * 100003 + round)
        start = (round * count) % len(self._openings)
        return [self._openings[(start + i) % len(self._openings)] for i in range(count)]

    def __call__(self, population: torch.Tensor, round: int = 0) -> torch.Tensor:
        openings = self.openings(round)
        tomls = [dump_toml(self.genome.decode(row.tolist())) for row in population]
        games = 2 * self.settings.pairs
        args = [(text, self.base_toml, openings, self.settings.nodes, games, self.engine) for text in tomls]
        if self._ray is not None:
            results = self._ray.get([self._remote.remote(*arg) for arg in args])  # type: ignore[call-arg]
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, self.settings.workers)) as pool:
                results = list(pool.map(lambda arg: _play_candidate(*arg), args))
        self.evaluations += len(population)
        self.games += sum(played for _, played, _ in results)
        self.workers.update(where for _, _, where in results)
        return torch.tensor([score for score, _, _ in results], dtype=torch.float32)

    def close(self) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None
