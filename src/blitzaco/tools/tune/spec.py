"""The tuning spec and the genome.

A spec is a TOML file::

    [genome]
    # config path = [lowest, highest]: every number of that field becomes a gene
    # (a [mg, eg] pair two, a table of pairs two per entry, a piece-square table 64)
    "eval.pawns.isolated" = [-60, 0]
    "eval.pieces.mobility_knight" = [-80, 60]

    [ga]          # genetic algorithm (see blitzaco.tools.tune.optimise)
    population = 48
    ...
    [anneal]      # simulated annealing
    ...
    [texel]       # gradient descent on the Texel error (positions fitness only)
    ...
    [positions]   # the Texel fitness
    ...
    [games]       # the match fitness
    ...

Unknown keys are refused, as in config.toml. A :class:`Genome` turns a
:class:`~blitzaco.config.Config` into a vector of floats (config units) and back,
rounding to integers where the config wants integers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from blitzaco.config import Config, ConfigError, config_from_dict, read_toml

__all__ = [
    "Gene", "Genome", "TuneSpec", "GaSettings", "AnnealSettings", "TexelSettings", "PositionSettings", "GameSettings",
    "load_spec", "default_spec_path", "lookup",
]


@dataclass(frozen=True)
class Gene:
    """One tunable number: ``path`` (``eval.pawns.isolated``), ``index`` into a table
    (or None), ``component`` of a pair (0 midgame, 1 endgame, or None), its bounds,
    and whether the config stores an integer."""

    path: str
    index: int | None
    component: int | None
    lo: float
    hi: float
    integer: bool

    @property
    def name(self) -> str:
        """``eval.pieces.mobility_knight[3].eg``-style name."""
        text = self.path + (f"[{self.index}]" if self.index is not None else "")
        return text + ("" if self.component is None else (".mg" if self.component == 0 else ".eg"))

    @property
    def feature(self) -> str:
        """The evaluation trace's feature name this gene multiplies."""
        path = self.path.removeprefix("eval.")
        return path + (f"[{self.index}]" if self.index is not None else "")

    @property
    def phase(self) -> int:
        """0 when the gene weighs the midgame sum, 1 the endgame sum."""
        if self.component is not None:
            return self.component
        return 1 if self.path.endswith("_eg") else 0


def lookup(config: Any, path: str) -> Any:
    """The value of the field at *path* (``eval.pawns.isolated``) of *config*."""
    value = config
    for part in path.split("."):
        if not dataclasses.is_dataclass(value) or not hasattr(value, part):
            raise ConfigError(f"genome: '{path}' is not a config field")
        value = getattr(value, part)
    return value


class Genome:
    """The genes of a spec, in a fixed order."""

    def __init__(self, bounds: dict[str, tuple[float, float]], base: Config | None = None) -> None:
        base = base if base is not None else Config()
        self.base = base
        genes: list[Gene] = []
        for path, (lo, hi) in bounds.items():
            value = lookup(base, path)
            meta = _metadata(base, path)
            if lo > hi:
                raise ConfigError(f"genome: '{path}': lowest {lo} above highest {hi}")
            if dataclasses.is_dataclass(value) or isinstance(value, (bool, str)):
                raise ConfigError(f"genome: '{path}' is not a number, a pair or a table")
            if meta.get("pair"):
                genes += [Gene(path, None, c, lo, hi, True) for c in (0, 1)]
            elif meta.get("pairs"):
                genes += [Gene(path, i, c, lo, hi, True) for i in range(len(value)) for c in (0, 1)]
            elif meta.get("length"):
                genes += [Gene(path, i, None, lo, hi, True) for i in range(len(value))]
            else:
                genes.append(Gene(path, None, None, lo, hi, isinstance(value, int)))
        if not genes:
            raise ConfigError("genome: no genes")
        self.genes = tuple(genes)

    def __len__(self) -> int:
        return len(self.genes)

    @property
    def lower(self) -> list[float]:
        return [gene.lo for gene in self.genes]

    @property
    def upper(self) -> list[float]:
        return [gene.hi for gene in self.genes]

    def encode(self, config: Config | None = None) -> list[float]:
        """The genes' values in *config* (default: the base config)."""
        config = config if config is not None else self.base
        values = []
        for gene in self.genes:
            value = lookup(config, gene.path)
            if gene.index is not None:
                value = value[gene.index]
            if gene.component is not None:
                value = value[gene.component]
            values.append(float(value))
        return values

    def decode(self, values: Sequence[float]) -> Config:
        """The base config with the genes set to *values* (clamped to their bounds,
        rounded where the config holds integers)."""
        if len(values) != len(self.genes):
            raise ValueError(f"expected {len(self.genes)} values, got {len(values)}")
        fields: dict[str, Any] = {}
        for gene, raw in zip(self.genes, values, strict=True):
            value: float | int = min(max(float(raw), gene.lo), gene.hi)
            if gene.integer:
                value = int(round(value))
            if gene.path not in fields:
                fields[gene.path] = _mutable(lookup(self.base, gene.path))
            slot = fields[gene.path]
            if gene.index is not None and gene.component is not None:
                slot[gene.index][gene.component] = value
            elif gene.index is not None:
                slot[gene.index] = value
            elif gene.component is not None:
                slot[gene.component] = value
            else:
                fields[gene.path] = value
        tree: dict[str, Any] = {}
        for path, value in fields.items():
            node = tree
            parts = path.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
        return _merge(self.base, tree)


def _metadata(config: Config, path: str) -> Any:
    section, _, name = path.rpartition(".")
    owner = lookup(config, section) if section else config
    for f in dataclasses.fields(owner):
        if f.name == name:
            return f.metadata
    raise ConfigError(f"genome: '{path}' is not a config field")  # pragma: no cover (lookup failed first)


def _mutable(value: Any) -> Any:
    """A config value as nested lists, to be changed in place."""
    if isinstance(value, tuple):
        return [list(v) if isinstance(v, tuple) else v for v in value]
    return value


def _merge(base: Config, changes: dict[str, Any]) -> Config:
    """*base* with the fields in the nested mapping *changes* replaced (checked like a
    config file)."""

    def tree(obj: Any) -> dict[str, Any]:
        return {
            f.name: tree(value) if dataclasses.is_dataclass(value) else _mutable(value)
            for f in dataclasses.fields(obj)
            for value in (getattr(obj, f.name),)
        }

    def update(target: dict[str, Any], source: dict[str, Any]) -> None:
        for key, value in source.items():
            if isinstance(value, dict):
                update(target[key], value)
            else:
                target[key] = value

    data = tree(base)
    update(data, changes)
    return config_from_dict(data)


# ------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class GaSettings:
    population: int = 48
    generations: int = 60
    tournament: int = 3  # candidates per tournament
    crossover: float = 0.5  # uniform crossover: chance of taking each gene from the second parent
    mutation_rate: float = 0.15  # chance of mutating each gene
    sigma: float = 0.08  # first mutation scale, as a share of each gene's range
    sigma_decay: float = 0.97  # per generation
    elitism: int = 2  # best candidates copied unchanged
    seed: int = 1


@dataclass(frozen=True)
class AnnealSettings:
    steps: int = 3000
    t_start: float = 1e-4  # fitness units
    t_end: float = 1e-7
    step_sigma: float = 0.05  # share of each gene's range
    genes_per_step: int = 4
    seed: int = 1


@dataclass(frozen=True)
class TexelSettings:
    steps: int = 600  # full-batch gradient steps
    lr: float = 0.004  # Adam's step, as a share of each gene's range (cosine-annealed to 1/20)
    log_every: int = 10


@dataclass(frozen=True)
class PositionSettings:
    k: float = 0.0  # scale of the sigmoid; 0: fitted to the base weights first
    max_positions: int = 0  # 0: all
    held_out: float = 0.2  # last share of the positions kept out of the fit, to measure it
    l2: float = 0.0  # penalty: l2 * mean(((gene - base) / range) ** 2) added to the error


@dataclass(frozen=True)
class GameSettings:
    nodes: int = 1000  # per move
    pairs: int = 4  # game pairs per candidate against the base config
    workers: int = 2  # candidates played at once on one machine
    openings: str = ""  # EPD/PGN; empty: the engine's own opening database


@dataclass(frozen=True)
class TuneSpec:
    bounds: dict[str, tuple[float, float]]
    ga: GaSettings = field(default_factory=GaSettings)
    anneal: AnnealSettings = field(default_factory=AnnealSettings)
    texel: TexelSettings = field(default_factory=TexelSettings)
    positions: PositionSettings = field(default_factory=PositionSettings)
    games: GameSettings = field(default_factory=GameSettings)

    def genome(self, base: Config | None = None) -> Genome:
        return Genome(self.bounds, base)


def _settings(cls: type, data: Any, section: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"spec: [{section}] must be a table")
    known = {f.name: f for f in dataclasses.fields(cls)}
    values = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"spec: unknown key '{section}.{key}'")
        kind: Any = type(known[key].default)  # int, float or str
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (type(value) is kind or kind is float and number):
            raise ConfigError(f"spec: '{section}.{key}' must be of type {kind.__name__}")
        values[key] = kind(value)
    return cls(**values)


def load_spec(path: str | Path) -> TuneSpec:
    """Read a tuning spec. Raises :class:`~blitzaco.config.ConfigError` naming the
    offending key."""
    data = read_toml(path)
    unknown = set(data) - {"genome", "ga", "anneal", "texel", "positions", "games"}
    if unknown:
        raise ConfigError(f"spec: unknown section '{sorted(unknown)[0]}'")
    bounds: dict[str, tuple[float, float]] = {}
    for key, value in data.get("genome", {}).items():
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value)):
            raise ConfigError(f"spec: genome '{key}' must be [lowest, highest]")
        bounds[key] = (float(value[0]), float(value[1]))
    spec = TuneSpec(
        bounds,
        _settings(GaSettings, data.get("ga", {}), "ga"),
        _settings(AnnealSettings, data.get("anneal", {}), "anneal"),
        _settings(TexelSettings, data.get("texel", {}), "texel"),
        _settings(PositionSettings, data.get("positions", {}), "positions"),
        _settings(GameSettings, data.get("games", {}), "games"),
    )
    spec.genome()  # every path must exist
    return spec


def default_spec_path() -> Path:
    """The spec shipped with the package: the classical evaluation terms."""
    return Path(str(resources.files("blitzaco.tools.tune").joinpath("default_spec.toml")))
