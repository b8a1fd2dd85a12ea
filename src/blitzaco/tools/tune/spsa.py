"""SPSA: tune the search's numbers by games of the engine against itself.

Simultaneous perturbation stochastic approximation as the chess testing frameworks
run it (fishtest's schedule): at iteration *k* of *N* every parameter moves by
``c_k`` up or down at random (one coin per parameter), the engine with the values
moved up plays the engine with them moved down (a few game pairs from the next
openings, each with both colours, at a short control), and every parameter moves
towards the side that won: ``theta += r_k * c_k * (wins - losses) * delta``.

The schedules end at the spec's numbers: ``c_k = c / k^gamma`` with ``c_N`` the
parameter's ``step``, ``r_k = a_k / c_k^2`` with ``a_k = a / (A + k)^alpha`` and
``r_N`` the spec's ``learning`` rate, ``A`` a share (``stability``) of the
iterations. Values stay within the parameter's bounds; an integer field plays the
rounded value.

The parameters, their bounds and steps are declared in one place, the spec (the
shipped ``spsa_spec.toml``)::

    [params]
    # config path = [lowest, highest, step]
    "search.futility_margin" = [40, 250, 12]

    [spsa]
    iterations = 1000
    pairs = 2
    tc = "2+0.02"

A run writes its state (the values, the iteration, each iteration's result) after
every iteration and continues from it, and writes the values reached as a small
config file (the keys it tunes) for ``ConfigFile``. Seeded: the coins of iteration
*k* come from the seed and *k*. Its result is adopted only after a decision match
at 10 s + 0.1 s (``tune.py adopt`` makes a config the defaults).
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from blitzaco.config import Config, ConfigError, read_toml
from blitzaco.tools.match.runner import (
    Adjudication,
    EngineSpec,
    MatchLimit,
    MatchReport,
    Opening,
    config_texts,
    play_match,
    ray_pair,
)
from blitzaco.tools.rayinit import retried_task, start_ray
from blitzaco.tools.tune.spec import lookup

__all__ = ["SpsaParam", "SpsaSettings", "load_spsa_spec", "default_spsa_spec_path", "schedule", "run_spsa",
           "config_text", "RayPlay"]


@dataclass(frozen=True)
class SpsaParam:
    """One tuned number: its config path (``search.futility_margin``), bounds, the
    step its perturbation ends at, whether the config stores an integer."""

    path: str
    lo: float
    hi: float
    step: float
    integer: bool

    def clamp(self, value: float) -> float:
        return min(self.hi, max(self.lo, value))

    def played(self, value: float) -> float | int:
        """The value the engine plays: rounded for an integer field."""
        return int(round(value)) if self.integer else value


@dataclass(frozen=True)
class SpsaSettings:
    """The [spsa] table: the run's length and schedule, its games."""

    iterations: int = 1000
    pairs: int = 2
    tc: str = "2+0.02"
    learning: float = 0.002
    alpha: float = 0.602
    gamma: float = 0.101
    stability: float = 0.1
    seed: int = 1
    resign: str | None = "1000:5"
    draw: str | None = "10:8:40"


def default_spsa_spec_path() -> Path:
    """The spec shipped with the package: the search's numbers."""
    return Path(str(resources.files("blitzaco.tools.tune").joinpath("spsa_spec.toml")))


def _default(defaults: Config, path: str) -> Any:
    try:
        return lookup(defaults, path)
    except ConfigError:
        raise ConfigError(f"{path}: no such config field") from None


def load_spsa_spec(path: str | Path) -> tuple[list[SpsaParam], SpsaSettings]:
    """The parameters and settings of the spec at *path*. Raises ConfigError for an
    unknown key, a field that is not a single number, bounds that do not hold the
    default, or a step that is not positive."""
    data = read_toml(path)
    unknown = set(data) - {"params", "spsa"}
    if unknown:
        raise ConfigError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}")
    params = []
    defaults = Config()
    for name, value in data.get("params", {}).items():
        if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, (int, float)) for v in value)):
            raise ConfigError(f"{path}: {name} needs [lowest, highest, step]")
        default = _default(defaults, name)
        if isinstance(default, bool) or not isinstance(default, (int, float)):
            raise ConfigError(f"{name} is not a single number")
        lo, hi, step = (float(v) for v in value)
        if not lo <= default <= hi or step <= 0:
            raise ConfigError(f"{name}: bounds [{lo}, {hi}] must hold the default {default}, the step be positive")
        params.append(SpsaParam(name, lo, hi, step, isinstance(default, int)))
    if not params:
        raise ConfigError(f"{path}: no [params]")
    table = data.get("spsa", {})
    fields = {f.name: f.type for f in dataclasses.fields(SpsaSettings)}
    unknown = set(table) - set(fields)
    if unknown:
        raise ConfigError(f"{path}: unknown [spsa] key(s) {', '.join(sorted(unknown))}")
    settings = SpsaSettings(**table)
    if settings.iterations < 1 or settings.pairs < 1:
        raise ConfigError(f"{path}: iterations and pairs must be at least 1")
    MatchLimit.parse(settings.tc)  # refuses a control it cannot read
    return params, settings


def schedule(param: SpsaParam, settings: SpsaSettings, k: int) -> tuple[float, float]:
    """(c_k, r_k) of *param* at iteration *k* (1-based): the perturbation and the
    learning rate; at the last iteration they are the step and the spec's rate."""
    n = settings.iterations
    big_a = settings.stability * n
    c = param.step * n ** settings.gamma
    a_end = settings.learning * param.step ** 2
    a = a_end * (big_a + n) ** settings.alpha
    c_k = c / k ** settings.gamma
    a_k = a / (big_a + k) ** settings.alpha
    return c_k, a_k / c_k ** 2


def config_text(params: Sequence[SpsaParam], values: Sequence[float]) -> str:
    """A config file setting *params* to *values* (as the engine plays them) and
    nothing else: what ``ConfigFile`` reads, keys left out keeping their defaults."""
    sections: dict[str, list[str]] = {}
    for param, value in zip(params, values, strict=True):
        section, _, key = param.path.rpartition(".")
        sections.setdefault(section, []).append(f"{key} = {param.played(value)!r}")
    return "\n".join(f"[{section}]\n" + "\n".join(lines) + "\n" for section, lines in sections.items())


#: A match function with play_match's signature (tests pass their own).
Play = Callable[..., MatchReport]
#: No adjudication (play_match's default).
_ADJUDICATION = Adjudication()


class RayPlay:
    """A :data:`Play` whose game pairs are Ray tasks, all of an iteration's pairs at
    once (retried by Ray when a worker or node dies): on a local instance of
    *workers* cores (``auto``) or a cluster (HOST:PORT; every node with this package
    installed). The engines' ConfigFile options travel as text. :attr:`nodes`: the
    Ray nodes that played pairs."""

    def __init__(self, address: str, workers: int) -> None:
        self._ray = start_ray(address, workers)
        self._remote = retried_task(self._ray, ray_pair)
        self.nodes: set[str] = set()

    def __call__(self, first: EngineSpec, second: EngineSpec, openings: Sequence[Opening], limit: MatchLimit,
                 games: int, *, concurrency: int = 1, adjudication: Adjudication = _ADJUDICATION) -> MatchReport:
        texts = config_texts(first, second)
        pairs = [openings[i % len(openings)] for i in range((games + 1) // 2)]
        refs = [self._remote.remote(first, second, texts, (opening, opening), limit, adjudication, index)
                for index, opening in enumerate(pairs)]
        report = MatchReport(first.name, second.name, str(limit))
        for records, node in self._ray.get(refs):
            report.add_pair(records)
            self.nodes.add(node)
        return report

    def close(self) -> None:
        self._ray.shutdown()


def run_spsa(
    params: Sequence[SpsaParam],
    settings: SpsaSettings,
    out: str | Path,
    *,
    command: Sequence[str],
    openings: Sequence[Opening],
    options: Sequence[tuple[str, str]] = (),
    concurrency: int = 1,
    iterations: int | None = None,
    play: Play = play_match,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run (or continue) the SPSA run whose state is the JSON file *out*, up to
    *iterations* in all (default: the spec's), playing *command* (with the UCI
    *options*) against itself from *openings*. After each iteration the state and
    ``OUT.toml`` (the values reached, as a config) are written. Returns the state."""
    out = Path(out)
    names = [param.path for param in params]
    if out.exists():
        state = json.loads(out.read_text())
        if state["params"] != names or state["settings"] != dataclasses.asdict(settings):
            raise ValueError(f"{out} is a run of other parameters or settings")
    else:
        defaults = Config()
        state = {"params": names, "settings": dataclasses.asdict(settings), "iteration": 0,
                 "theta": [float(_default(defaults, name)) for name in names], "results": []}
    if not openings:
        raise ValueError("no openings")
    limit = MatchLimit.parse(settings.tc)
    adjudication = Adjudication.parse(settings.resign, settings.draw)
    end = min(settings.iterations, iterations if iterations is not None else settings.iterations)
    plus_path, minus_path = out.with_name(out.stem + ".plus.toml"), out.with_name(out.stem + ".minus.toml")
    theta: list[float] = state["theta"]
    while state["iteration"] < end:
        k = state["iteration"] + 1
        coins = random.Random(settings.seed * 1_000_003 + k)
        delta = [coins.choice((-1, 1)) for _ in params]
        steps = [schedule(param, settings, k) for param in params]
        moves = list(zip(params, theta, steps, delta, strict=True))
        plus = [p.clamp(t + c * d) for p, t, (c, _), d in moves]
        minus = [p.clamp(t - c * d) for p, t, (c, _), d in moves]
        plus_path.write_text(config_text(params, plus))
        minus_path.write_text(config_text(params, minus))
        start = (k - 1) * settings.pairs
        chosen = [openings[(start + i) % len(openings)] for i in range(settings.pairs)]
        report = play(
            EngineSpec("plus", tuple(command), (("ConfigFile", str(plus_path)), *options)),
            EngineSpec("minus", tuple(command), (("ConfigFile", str(minus_path)), *options)),
            chosen, limit, 2 * settings.pairs, concurrency=concurrency, adjudication=adjudication,
        )
        result = report.wins - report.losses
        theta = [p.clamp(t + r * c * result * d) for p, t, (c, r), d in moves]
        state["theta"] = theta
        state["iteration"] = k
        state["results"].append([report.wins, report.draws, report.losses])
        out.write_text(json.dumps(state, indent=1))
        out.with_suffix(".toml").write_text(config_text(params, theta))
        if progress is not None:
            pairs = zip(params, theta, strict=True)
            shown = ", ".join(f"{p.path.rpartition('.')[2]} {p.played(t):g}" for p, t in pairs)
            progress(f"iteration {k}/{end}: {report.wins}-{report.losses}-{report.draws}; {shown}")
    return state
