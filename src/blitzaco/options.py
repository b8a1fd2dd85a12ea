"""The settings a GUI changes (:class:`Options`): one frozen value that
:meth:`blitzaco.engine.Engine.set_option` replaces and the engine reads, each field
with its UCI name, type and range, from which :mod:`blitzaco.uci` declares and
checks it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Options", "OptionSpec", "DEFAULT_HASH_MB", "MAX_THREADS"]

DEFAULT_HASH_MB = 64
#: The largest Threads value: the number of cores, at most 1 + smp.MAX_HELPERS (a test
#: checks that they agree).
MAX_THREADS = max(1, min(os.cpu_count() or 1, 256))


@dataclass(frozen=True)
class OptionSpec:
    """How a field of :class:`Options` is offered as a UCI option."""

    name: str
    kind: str  # "check", "spin" or "string"
    low: int | None = None
    high: int | None = None


def _option(default: Any, name: str, kind: str, low: int | None = None, high: int | None = None) -> Any:
    return field(default=default, metadata={"uci": OptionSpec(name, kind, low, high)})


@dataclass(frozen=True)
class Options:
    """The settings a GUI changes, as one frozen value: :meth:`Engine.set_option`
    replaces it and the engine reads it. Each field carries its UCI name, type and
    range, from which :mod:`blitzaco.uci` declares and checks it, so an option is one
    field here and one use in the engine."""

    hash_mb: int = _option(DEFAULT_HASH_MB, "Hash", "spin", 1, 32768)
    threads: int = _option(1, "Threads", "spin", 1, MAX_THREADS)
    multipv: int = _option(1, "MultiPV", "spin", 1, 256)
    move_overhead: int = _option(30, "Move Overhead", "spin", 0, 5000)
    own_book: bool = _option(True, "OwnBook", "check")
    book_file: str = _option("", "BookFile", "string")
    syzygy_path: str = _option("", "SyzygyPath", "string")
    syzygy_probe_limit: int = _option(7, "SyzygyProbeLimit", "spin", 0, 7)
    config_file: str = _option("", "ConfigFile", "string")
    pheromone_file: str = _option("", "PheromoneFile", "string")
    pheromone_learning: bool = _option(False, "PheromoneLearning", "check")
    show_wdl: bool = _option(False, "UCI_ShowWDL", "check")
    skill_level: int = _option(20, "Skill Level", "spin", 0, 20)
    limit_strength: bool = _option(False, "UCI_LimitStrength", "check")
    # Up to [levels] elo_of_level's level 20 (full strength); a value below level 0's entry plays level 0.
    elo: int = _option(2367, "UCI_Elo", "spin", 750, 2367)
