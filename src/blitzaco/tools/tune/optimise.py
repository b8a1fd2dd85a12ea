"""The optimisers: a genetic algorithm on a tensor population and simulated
annealing, over the same genome and either fitness (higher is better).

Genetic algorithm, one generation: the ``elitism`` best candidates pass unchanged;
every other child takes, gene by gene (uniform crossover, ``crossover`` the chance
of the second parent's gene), from two parents each chosen as the best of
``tournament`` random candidates; then each gene mutates with chance
``mutation_rate`` by a Gaussian step of ``sigma`` times the gene's range, and
``sigma`` decays by ``sigma_decay`` per generation. The first population is the base
weights and mutations of them. Everything random comes from one seeded torch
generator, whose state is saved in the checkpoint with the population: a run
stopped and resumed gives the same result as a run straight through.

Simulated annealing: from the base weights, each step moves ``genes_per_step``
random genes by ``step_sigma`` of their range; a better candidate is accepted, a
worse one with probability exp(change / temperature), the temperature falling
geometrically from ``t_start`` to ``t_end``.

Texel gradient descent (positions fitness only, whose evaluation is linear in the
genes): full-batch Adam on minus the fitness (the Texel error plus its l2 penalty),
each gene's step a share ``lr`` of its range, cosine-annealed to a twentieth over
``steps`` steps, every gene kept inside its bounds after each step. Deterministic:
nothing random.

Each run writes into its folder: ``log.csv`` (one row per generation, or per 50
annealing steps), ``fitness.png`` (fitness over the run), ``checkpoint.pt``,
``tuned.toml`` (the base config with the best genes: never the shipped file) and
``summary.json``; a progress bar goes to stderr.
"""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from blitzaco.config import dump_toml
from blitzaco.tools.progress import progress_bar
from blitzaco.tools.tune.spec import AnnealSettings, GaSettings, Genome, TexelSettings

__all__ = ["RunResult", "genetic", "anneal", "texel", "plot"]

#: fitness(population, round) -> one score per candidate; *round* numbers the calls
#: of a run (a generation, an annealing step) so that a resumed run repeats them.
Fitness = Callable[[torch.Tensor, int], torch.Tensor]


@dataclass
class RunResult:
    best: list[float]
    best_fitness: float
    base_fitness: float
    evaluations: int
    seconds: float
    rows: list[dict[str, float]]


class _Run:
    """The files of one run: CSV log, checkpoint, plot, result."""

    def __init__(self, out: Path, genome: Genome, columns: list[str]) -> None:
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.genome = genome
        self.columns = columns
        self.checkpoint = out / "checkpoint.pt"
        self.log = out / "log.csv"

    def start_log(self, rows: list[dict[str, float]]) -> None:
        with open(self.log, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns)
            writer.writeheader()
            writer.writerows(rows)

    def append(self, row: dict[str, float]) -> None:
        with open(self.log, "a", newline="", encoding="utf-8") as handle:
            csv.DictWriter(handle, fieldnames=self.columns).writerow(row)

    def save(self, state: dict[str, Any]) -> None:
        """Write the checkpoint atomically: a temporary file of its own (two runs in
        one folder never share one), then a rename."""
        state["genes"] = [gene.name for gene in self.genome.genes]
        handle, name = tempfile.mkstemp(dir=self.out, prefix="checkpoint.", suffix=".tmp")
        os.close(handle)
        temporary = Path(name)
        try:
            torch.save(state, temporary)
            temporary.replace(self.checkpoint)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    def load(self) -> dict[str, Any] | None:
        """The checkpoint's state, read as tensors and plain values only
        (``weights_only``): a planted file cannot run code."""
        if not self.checkpoint.is_file():
            return None
        state = torch.load(self.checkpoint, weights_only=True)
        if state.get("genes") != [gene.name for gene in self.genome.genes]:
            raise ValueError(f"{self.checkpoint} belongs to another genome")
        return state

    def finish(self, result: RunResult, kind: str, settings: Any, x: str, ys: list[str]) -> None:
        (self.out / "tuned.toml").write_text(dump_toml(self.genome.decode(result.best)))
        summary = {
            "optimiser": kind,
            "settings": asdict(settings),
            "genes": len(self.genome),
            "base_fitness": result.base_fitness,
            "best_fitness": result.best_fitness,
            "evaluations": result.evaluations,
            "seconds": result.seconds,
            "evaluations_per_minute": 60 * result.evaluations / result.seconds if result.seconds else None,
            "changed": {
                gene.name: [base, round(value, 2)]
                for gene, base, value in zip(self.genome.genes, self.genome.encode(), result.best, strict=True)
                if round(value) != round(base) or not gene.integer and value != base
            },
        }
        (self.out / "summary.json").write_text(json.dumps(summary, indent=2))
        plot(result.rows, x, ys, self.out / "fitness.png", f"{kind}: fitness")


def plot(rows: list[dict[str, float]], x: str, ys: list[str], path: Path, title: str) -> bool:
    """Fitness over the run as a PNG (needs matplotlib; False without it)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for name in ys:
        axes.plot([row[x] for row in rows], [row[name] for row in rows], label=name.replace("_", " "))
    axes.set_xlabel(x)
    axes.set_ylabel("fitness (higher is better)")
    axes.set_title(title)
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True


def genetic(fitness: Fitness, genome: Genome, settings: GaSettings, out: str | Path, *,
            resume: bool = False, progress: bool = True) -> RunResult:
    """Run the genetic algorithm; see the module documentation."""
    run = _Run(Path(out), genome, ["generation", "evaluations", "best", "mean", "worst", "sigma", "seconds"])
    lower = torch.tensor(genome.lower)
    upper = torch.tensor(genome.upper)
    span = (upper - lower).clamp(min=1e-9)
    base = torch.tensor(genome.encode())
    size = max(2, settings.population)
    elite = min(max(0, settings.elitism), size - 1)
    state = run.load() if resume else None
    if state is not None:
        generator = torch.Generator()
        generator.set_state(state["generator"])
        population = state["population"]
        generation = int(state["generation"])
        sigma = float(state["sigma"])
        rows = list(state["rows"])
        evaluations = int(state["evaluations"])
        elapsed = float(state["seconds"])
        base_fitness = float(state["base_fitness"])
        best, best_fitness = state["best"], float(state["best_fitness"])
        run.start_log(rows)
    else:
        generator = torch.Generator().manual_seed(settings.seed)
        sigma = settings.sigma
        noise = torch.randn(size - 1, len(genome), generator=generator) * span * sigma * 2
        population = torch.cat([base.unsqueeze(0), (base + noise).clamp(lower, upper)])
        generation, rows, evaluations, elapsed = 0, [], 0, 0.0
        base_fitness, best, best_fitness = float("nan"), base.clone(), -math.inf
        run.start_log([])
    started = time.perf_counter() - elapsed
    total = settings.generations
    while generation < total:
        scores = fitness(population, generation)
        evaluations += len(population)
        if generation == 0 and state is None:
            base_fitness = float(scores[0])
        order = torch.argsort(scores, descending=True)
        if float(scores[order[0]]) > best_fitness:
            best_fitness = float(scores[order[0]])
            best = population[order[0]].clone()
        generation += 1
        row = {
            "generation": generation, "evaluations": evaluations, "best": float(scores.max()),
            "mean": float(scores.mean()), "worst": float(scores.min()), "sigma": sigma,
            "seconds": round(time.perf_counter() - started, 3),
        }
        rows.append(row)
        run.append(row)
        # The next population.
        children = [population[order[:elite]]]
        count = size - elite
        picks = torch.randint(0, size, (2, count, max(1, settings.tournament)), generator=generator)
        winners = scores[picks]
        parents = torch.gather(picks, 2, winners.argmax(dim=2, keepdim=True)).squeeze(2)
        take_second = torch.rand(count, len(genome), generator=generator) < settings.crossover
        child = torch.where(take_second, population[parents[1]], population[parents[0]])
        mutate = torch.rand(count, len(genome), generator=generator) < settings.mutation_rate
        steps = torch.randn(count, len(genome), generator=generator) * span * sigma
        child = (child + mutate * steps).clamp(lower, upper)
        children.append(child)
        population = torch.cat(children)
        sigma *= settings.sigma_decay
        run.save({
            "generator": generator.get_state(), "population": population, "generation": generation,
            "sigma": sigma, "rows": rows, "evaluations": evaluations, "seconds": time.perf_counter() - started,
            "base_fitness": base_fitness, "best": best, "best_fitness": best_fitness,
        })
        if progress:
            progress_bar(generation, total, f"generations, best {best_fitness:.6f} (base {base_fitness:.6f})")
    result = RunResult(best.tolist(), best_fitness, base_fitness, evaluations, time.perf_counter() - started, rows)
    run.finish(result, "genetic algorithm", settings, "generation", ["best", "mean"])
    return result


def anneal(fitness: Fitness, genome: Genome, settings: AnnealSettings, out: str | Path, *,
           resume: bool = False, progress: bool = True, log_every: int = 50) -> RunResult:
    """Run simulated annealing; see the module documentation."""
    run = _Run(Path(out), genome, ["step", "evaluations", "temperature", "current", "best", "accepted", "seconds"])
    lower = torch.tensor(genome.lower)
    upper = torch.tensor(genome.upper)
    span = (upper - lower).clamp(min=1e-9)
    state = run.load() if resume else None
    if state is not None:
        generator = torch.Generator()
        generator.set_state(state["generator"])
        current, current_fitness = state["current"], float(state["current_fitness"])
        best, best_fitness = state["best"], float(state["best_fitness"])
        step, accepted = int(state["step"]), int(state["accepted"])
        rows = list(state["rows"])
        base_fitness = float(state["base_fitness"])
        elapsed = float(state["seconds"])
        run.start_log(rows)
    else:
        generator = torch.Generator().manual_seed(settings.seed)
        current = torch.tensor(genome.encode())
        current_fitness = base_fitness = float(fitness(current.unsqueeze(0), 0)[0])
        best, best_fitness = current.clone(), current_fitness
        step, accepted, rows, elapsed = 0, 0, [], 0.0
        run.start_log([])
    started = time.perf_counter() - elapsed
    total = settings.steps
    ratio = settings.t_end / settings.t_start
    while step < total:
        temperature = settings.t_start * ratio ** (step / max(1, total - 1))
        genes = torch.randperm(len(genome), generator=generator)[: max(1, settings.genes_per_step)]
        candidate = current.clone()
        candidate[genes] += torch.randn(len(genes), generator=generator) * span[genes] * settings.step_sigma
        candidate = candidate.clamp(lower, upper)
        candidate_fitness = float(fitness(candidate.unsqueeze(0), step + 1)[0])
        change = candidate_fitness - current_fitness
        draw = float(torch.rand(1, generator=generator))
        if change >= 0 or draw < math.exp(change / temperature):
            current, current_fitness = candidate, candidate_fitness
            accepted += 1
            if current_fitness > best_fitness:
                best, best_fitness = current.clone(), current_fitness
        step += 1
        if step % log_every == 0 or step == total:
            row = {
                "step": step, "evaluations": step + 1, "temperature": temperature, "current": current_fitness,
                "best": best_fitness, "accepted": accepted, "seconds": round(time.perf_counter() - started, 3),
            }
            rows.append(row)
            run.append(row)
            run.save({
                "generator": generator.get_state(), "current": current, "current_fitness": current_fitness,
                "best": best, "best_fitness": best_fitness, "step": step, "accepted": accepted, "rows": rows,
                "base_fitness": base_fitness, "seconds": time.perf_counter() - started,
            })
            if progress:
                text = f"steps, best {best_fitness:.6f} (base {base_fitness:.6f}), T {temperature:.2e}"
                progress_bar(step, total, text)
    result = RunResult(best.tolist(), best_fitness, base_fitness, step + 1, time.perf_counter() - started, rows)
    run.finish(result, "simulated annealing", settings, "step", ["best", "current"])
    return result


def texel(fitness: Fitness, genome: Genome, settings: TexelSettings, out: str | Path, *,
          progress: bool = True) -> RunResult:
    """Run Texel gradient descent; see the module documentation. *fitness* must be
    differentiable in the population (the positions fitness is)."""
    run = _Run(Path(out), genome, ["step", "fitness", "lr", "seconds"])
    lower = torch.tensor(genome.lower)
    upper = torch.tensor(genome.upper)
    span = (upper - lower).clamp(min=1e-9)
    # The genes as shares of their ranges, so that one learning rate suits them all.
    share = ((torch.tensor(genome.encode()) - lower) / span).requires_grad_(True)
    optimiser = torch.optim.Adam([share], lr=settings.lr)
    total = max(1, settings.steps)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, total, eta_min=settings.lr / 20)
    run.start_log([])
    rows: list[dict[str, float]] = []
    started = time.perf_counter()
    base_fitness = best_fitness = -math.inf
    best = torch.tensor(genome.encode())
    for step in range(total + 1):
        optimiser.zero_grad()
        value = fitness((lower + share * span).unsqueeze(0), step)[0]
        current = float(value.detach())
        if step == 0:
            base_fitness = current
        if current > best_fitness:
            best_fitness, best = current, (lower + share.detach() * span).clone()
        if step % max(1, settings.log_every) == 0 or step == total:
            row = {"step": step, "fitness": current, "lr": optimiser.param_groups[0]["lr"],
                   "seconds": round(time.perf_counter() - started, 3)}
            rows.append(row)
            run.append(row)
            if progress:
                progress_bar(step, total, f"steps, fitness {current:.6f} (base {base_fitness:.6f})")
        if step == total:
            break
        (-value).backward()
        optimiser.step()
        schedule.step()
        with torch.no_grad():
            share.clamp_(0.0, 1.0)
    result = RunResult(best.tolist(), best_fitness, base_fitness, total + 1, time.perf_counter() - started, rows)
    run.finish(result, "Texel gradient descent", settings, "step", ["fitness"])
    return result
