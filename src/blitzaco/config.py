"""Every tunable number of the engine, read once from TOML into frozen dataclasses.

The defaults live in one file, ``config.toml`` at the top of the repository, read and
checked as strictly as a user's file when this module is imported. A build copies it
into the package (setup.py's build_py: wheels, and the binary built from the wheel),
so an installed engine reads ``blitzaco/config.toml``; a source checkout and an
editable install read the top-level file itself (:func:`defaults_path`). This module
holds the schema (types, ranges, the help of every key) and writes TOML back
(``blitzaco config`` prints the defaults, and a test proves that its output is that
file byte for byte; ``tune.py adopt`` rewrites that file, never code).
A file given with the ``ConfigFile`` UCI option replaces the defaults key by key:
keys it leaves out keep their default, an unknown key or a value of the wrong type
is refused with a :class:`ConfigError` that names the key.

Nothing else in the engine reads files for parameters, and nothing reads a global:
the :class:`Config` object is passed to whoever needs it.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blitzaco.bundled import read_user_file
from blitzaco.system import frozen_root

__all__ = [
    "AnalyseConfig",
    "BookConfig",
    "Config",
    "ConfigError",
    "EvalConfig",
    "MaterialConfig",
    "PheromoneConfig",
    "ColonyConfig",
    "PstConfig",
    "SearchConfig",
    "SpectralConfig",
    "TimeConfig",
    "ThreadsConfig",
    "WdlConfig",
    "LevelsConfig",
    "defaults_path",
    "dump_toml",
    "load_config",
    "read_toml",
    "config_from_dict",
]

PST_SIZE = 64
#: Largest configuration file read (the full config.toml is about 25 kB).
MAX_CONFIG_BYTES = 1 << 20


class ConfigError(ValueError):
    """A configuration file or mapping that cannot be used; the message names the key."""


def _param(doc: str, *, lo: float | None = None, hi: float | None = None, choices: tuple[str, ...] = ()) -> Any:
    """A scalar field with its documentation (unit included) and optional bounds or
    allowed values; its default comes from the shipped ``config.toml``."""
    return field(metadata={"doc": doc, "min": lo, "max": hi, "choices": choices})


def _pair(doc: str) -> Any:
    """A midgame/endgame pair, written ``[mg, eg]`` in TOML."""
    return field(metadata={"doc": doc, "pair": True})


def _table(doc: str) -> Any:
    """A piece-square table: 64 values, a8 first and h1 last, as a board is printed
    with White at the bottom; Black uses the same table mirrored vertically."""
    return field(metadata={"doc": doc, "length": PST_SIZE})


def _pairs(doc: str, length: int) -> Any:
    """A table of *length* midgame/endgame pairs indexed by a count or a rank,
    written ``[[mg, eg], ...]`` in TOML."""
    return field(metadata={"doc": doc, "pairs": length})


def _ints(doc: str, length: int) -> Any:
    """A fixed-length list of integers."""
    return field(metadata={"doc": doc, "length": length})


def _floats(doc: str, length: int) -> Any:
    """A fixed-length list of numbers."""
    return field(metadata={"doc": doc, "floats": length})


def _check_value(fld: dataclasses.Field[Any], kind: Any, raw: Any, name: str) -> Any:
    meta = fld.metadata
    if kind is bool:
        if not isinstance(raw, bool):
            raise ConfigError(f"{name}: expected true or false, got {_show(raw)}")
        return raw
    if kind is int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise ConfigError(f"{name}: expected an integer, got {_show(raw)}")
        return _check_range(raw, meta, name)
    if kind is float:
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
            raise ConfigError(f"{name}: expected a number, got {_show(raw)}")
        return _check_range(float(raw), meta, name)
    if kind is str:
        if not isinstance(raw, str):
            raise ConfigError(f"{name}: expected a string, got {_show(raw)}")
        choices = meta.get("choices")
        if choices and raw not in choices:
            raise ConfigError(f"{name}: '{raw}' is not one of {', '.join(choices)}")
        return raw
    if meta.get("pair"):
        if not (isinstance(raw, list) and len(raw) == 2 and all(_is_int(v) for v in raw)):
            raise ConfigError(f"{name}: expected an [mg, eg] pair of integers, got {_show(raw)}")
        return (raw[0], raw[1])
    if meta.get("pairs"):
        length = meta["pairs"]
        if not (
            isinstance(raw, list)
            and len(raw) == length
            and all(isinstance(v, list) and len(v) == 2 and all(_is_int(x) for x in v) for v in raw)
        ):
            raise ConfigError(f"{name}: expected a list of {length} [mg, eg] pairs of integers, got {_show(raw)}")
        return tuple((v[0], v[1]) for v in raw)
    if meta.get("floats"):
        length = meta["floats"]
        if not (
            isinstance(raw, list)
            and len(raw) == length
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in raw)
        ):
            raise ConfigError(f"{name}: expected a list of {length} numbers, got {_show(raw)}")
        return tuple(float(v) for v in raw)
    if meta.get("length"):
        length = meta["length"]
        if not (isinstance(raw, list) and len(raw) == length and all(_is_int(v) for v in raw)):
            raise ConfigError(f"{name}: expected a list of {length} integers, got {_show(raw)}")
        return tuple(raw)
    raise AssertionError(f"unhandled config type {kind!r} for {name}")  # pragma: no cover


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_range(value: Any, meta: typing.Mapping[str, Any], name: str) -> Any:
    lo, hi = meta.get("min"), meta.get("max")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(f"{name}: {value} is outside [{lo}, {hi}]")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------------- writing

_HEADER = """\
# BlitzACO configuration: every tunable number of the engine.
#
# This file holds exactly the built-in defaults; it is generated by
# `blitzaco config > config.toml` and a test checks that it matches.
# To experiment, copy it, edit the copy and load it with the UCI option
# ConfigFile (or `blitzaco --config FILE ...`). Keys left out of such a file keep
# their defaults; an unknown key or a value of the wrong type is refused with a
# message that names the key.
"""


#: The package's copy of the defaults, which a build puts there (installed engines).
_PACKAGE_CONFIG = Path(__file__).with_name("config.toml")
#: src/blitzaco/config.py -> the checkout's config.toml (a source checkout, an
#: editable install).
_CHECKOUT_CONFIG = Path(__file__).resolve().parents[2] / "config.toml"


def defaults_path() -> Path | None:
    """The file the defaults are read from: beside a frozen build's files, the
    installed package's ``blitzaco/config.toml``, or the top-level ``config.toml`` of
    the checkout this module runs from; None when the package is in a zip file."""
    frozen = frozen_root()
    if frozen is not None:
        return frozen / "blitzaco" / "config.toml"
    for path in (_PACKAGE_CONFIG, _CHECKOUT_CONFIG):
        if path.is_file():
            return path
    return None


def _shipped_defaults() -> dict[str, Any]:
    """The defaults' ``config.toml`` (:func:`defaults_path`), parsed: the source of
    every default."""
    path = defaults_path()
    if frozen_root() is not None and path is not None:  # the build put the parsed copy beside it
        return _cached_parse(path, path.with_name(CONFIG_CACHE_NAME), write=False)
    if path is not None:
        cache = _PACKAGE_CONFIG.with_name("__pycache__") / CONFIG_CACHE_NAME
        return _cached_parse(path, cache, write=not sys.dont_write_bytecode)
    from importlib import resources  # installed in a zip file: nothing to cache beside it

    return _parse_toml(resources.files("blitzaco").joinpath("config.toml").read_bytes())


def _parse_toml(data: bytes) -> dict[str, Any]:
    import tomllib  # not imported at start-up when the parsed copy is read

    return tomllib.loads(data.decode("utf-8"))


#: The file name of the parsed defaults' copy: in the ``__pycache__`` folder beside
#: this module, or beside config.toml in a frozen build (written by the build).
CONFIG_CACHE_NAME = f"config.toml.{sys.implementation.cache_tag}.marshal"


def _stamp(data: bytes) -> tuple[int, int]:
    """What the parsed copy must match: the file's size and CRC-32."""
    import zlib  # already loaded by the interpreter's start-up

    return len(data), zlib.crc32(data)


def _cached_parse(path: Path, cache: Path, *, write: bool) -> dict[str, Any]:
    """*path* parsed, through a ``marshal`` copy of the result at *cache*, keyed by
    the file's size and CRC-32 (*write*: make or renew the copy when it does not
    match, as Python keeps bytecode; not when ``sys.dont_write_bytecode``).
    Reading the copy costs about a tenth of a millisecond at start-up, importing
    tomllib and parsing the file several milliseconds. Any problem with the copy
    means parsing the file."""
    import marshal

    data = path.read_bytes()
    stamp = _stamp(data)
    try:
        cached_stamp, parsed = marshal.loads(cache.read_bytes())
        if cached_stamp == stamp and isinstance(parsed, dict):
            return parsed
    except (OSError, EOFError, ValueError, TypeError):
        pass
    parsed = _parse_toml(data)
    if write:
        try:
            _write_cache(cache, stamp, parsed)
        except (OSError, ValueError):
            pass
    return parsed


def _write_cache(cache: Path, stamp: tuple[int, int], parsed: dict[str, Any]) -> None:
    import marshal

    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    partial.write_bytes(marshal.dumps((stamp, parsed)))
    os.replace(partial, cache)  # atomic: a concurrent start reads the old copy or the new


def write_config_cache(path: str | Path, cache: str | Path) -> None:
    """Write the parsed copy of the TOML file *path* to *cache* (the frozen build
    puts it beside config.toml, so that the binary does not parse the file)."""
    data = Path(path).read_bytes()
    _write_cache(Path(cache), _stamp(data), _parse_toml(data))


_SHIPPED = _shipped_defaults()


_SCALAR_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}


def _defaults(path: str) -> Callable[[type], type]:
    """Give every field of a section its default from the shipped ``config.toml``
    (the table *path*), checked as strictly as a user's file. Applied before
    ``dataclass``, which then sees ordinary defaults."""

    def apply(cls: type) -> type:
        table: Any = _SHIPPED
        for part in path.split("."):
            table = table.get(part, {}) if isinstance(table, dict) else {}
        # The annotations are strings (postponed); the scalar kinds are named plainly
        # and the others are told apart by their metadata, so no evaluation is needed.
        annotations = cls.__dict__.get("__annotations__", {})
        for name, value in list(vars(cls).items()):
            if isinstance(value, dataclasses.Field) and value.default_factory is dataclasses.MISSING:
                key = f"{path}.{name}"
                if name not in table:
                    raise ConfigError(f"the shipped config.toml has no '{key}'")
                kind = _SCALAR_KINDS.get(annotations[name], tuple)
                value.default = _check_value(value, kind, table[name], key)
        return cls

    return apply


def _section(cls: type) -> Any:
    return field(default_factory=cls)


# --------------------------------------------------------------------------- search


@dataclass(frozen=True)
@_defaults("search")
class SearchConfig:
    """Search parameters. Depths are in plies, scores in centipawns. Each technique
    has a switch so that a match can measure it against the search without it."""

    aspiration_depth: int = _param(
        "First iteration whose root search uses an aspiration window around the previous score (plies).", lo=1, hi=1000
    )
    aspiration_window: int = _param(
        "Half-width of the first aspiration window (centipawns); it doubles after each fail.", lo=1, hi=10000
    )
    aspiration_widest: int = _param(
        "Once the doubled half-width passes this (centipawns), the window opens fully: a score that far off "
        "is better found at once than by more re-searches.",
        lo=1,
        hi=100000,
    )
    check_extension: bool = _param(
        "Search one ply deeper when the side to move is in check (as every extension, only at plies below "
        "twice the iteration's depth)."
    )
    mate_distance_pruning: bool = _param("Cut lines that cannot beat a mate already found nearer the root.")
    null_move: bool = _param(
        "Null-move pruning: pass, search shallower, and cut if the position still holds (never with only king "
        "and pawns, where passing may be the best move)."
    )
    null_move_min_depth: int = _param("Smallest depth where a null move is tried (plies).", lo=1, hi=100)
    null_move_reduction: int = _param(
        "Depth reduction of the null-move search, before adjustments (plies).", lo=1, hi=20
    )
    null_move_depth_divisor: int = _param(
        "The reduction grows by one ply per this many plies of depth left.", lo=1, hi=100
    )
    null_move_eval_divisor: int = _param(
        "The reduction grows by one ply per this many centipawns the static evaluation exceeds beta (at most "
        "null_move_eval_max plies).",
        lo=1,
        hi=10000,
    )
    null_move_eval_max: int = _param(
        "Most plies the null-move reduction grows by for the static evaluation's margin over beta.", lo=0, hi=20
    )
    reverse_futility: bool = _param(
        "Reverse futility pruning: cut when the static evaluation beats beta by a margin growing with depth."
    )
    reverse_futility_depth: int = _param("Largest depth where reverse futility pruning applies (plies).", lo=0, hi=100)
    reverse_futility_margin: int = _param("Reverse futility margin per ply of depth (centipawns).", lo=0, hi=10000)
    futility: bool = _param(
        "Futility pruning: skip quiet moves that do not give check when the static evaluation plus a margin "
        "cannot reach alpha."
    )
    futility_depth: int = _param("Largest depth where futility pruning applies (plies).", lo=0, hi=100)
    futility_margin: int = _param("Futility margin per ply of depth (centipawns).", lo=0, hi=10000)
    reduced_futility: bool = _param(
        "Futility pruning at the reduced depth (Stockfish's): at non-PV nodes not in check, a quiet move after "
        "the first that does not give check is skipped when the depth it would be searched at after its "
        "late-move reduction is below reduced_futility_depth and the static evaluation plus reduced_futility_base "
        "plus reduced_futility_margin per ply of that depth cannot reach alpha."
    )
    reduced_futility_depth: int = _param(
        "The reduced depth below which a quiet move may be skipped (plies).", lo=1, hi=100
    )
    reduced_futility_base: int = _param("The margin's constant part (centipawns).", lo=0, hi=10000)
    reduced_futility_margin: int = _param("The margin per ply of reduced depth (centipawns).", lo=0, hi=10000)
    history_pruning: bool = _param(
        "History pruning of quiet moves: at non-PV nodes not in check, up to history_pruning_depth, a quiet move "
        "after the first (not the table move, a killer or the counter-move) that does not give check is skipped "
        "when its history (with continuation_history, plus its continuation histories after the moves one and "
        "two plies up) is below -history_pruning_margin per ply of depth."
    )
    history_pruning_depth: int = _param("Largest depth where history pruning applies (plies).", lo=0, hi=100)
    history_pruning_margin: int = _param(
        "How far below zero a quiet move's history may fall, per ply of depth, before it is skipped (history "
        "units).", lo=0, hi=1 << 30
    )
    razoring: bool = _param(
        "Razoring: at shallow depth, when the static evaluation plus a margin growing with depth is below alpha, "
        "a quiescence search decides; if no capture lifts the score to alpha, the node fails low at once."
    )
    razoring_depth: int = _param("Largest depth where razoring applies (plies).", lo=0, hi=100)
    razoring_margin: int = _param("Razoring margin per ply of depth (centipawns).", lo=0, hi=10000)
    improving: bool = _param(
        "Whether the side to move's static evaluation rose since its previous move (two plies up) shapes the "
        "pruning: reverse futility prunes one ply's margin sooner when it rose, and a late quiet move whose "
        "table reduction is at least improving_reduction_min plies is reduced one ply more when it did not "
        "(Stockfish's rule: only the large reductions)."
    )
    improving_reduction_min: int = _param(
        "With improving: the smallest table reduction (before the other adjustments) that a fall of the "
        "static evaluation adds a ply to (plies).",
        lo=0,
        hi=100,
    )
    tt_eval: bool = _param(
        "The table's score sharpens the static evaluation that the pruning rules read (reverse futility, "
        "razoring, null move, futility): a lower bound above it or an upper bound below it, or an exact score, "
        "replaces it there (never a mate or tablebase score). The improving rule keeps the static evaluation."
    )
    late_move_pruning: bool = _param(
        "Late-move pruning (Stockfish's move-count pruning), at non-PV nodes not in check up to "
        "late_move_pruning_depth: from the (late_move_pruning_base + depth^2)-th move of a node on (every "
        "move counts, captures too), the quiet moves are skipped before they are made, unless they give check "
        "(not with only king and pawns, nor before a move has a score)."
    )
    late_move_pruning_depth: int = _param("Largest depth where late-move pruning applies (plies).", lo=0, hi=100)
    late_move_pruning_base: int = _param(
        "Moves always searched before late-move pruning, less depth^2 (moves).",
        lo=0,
        hi=1000,
    )
    late_move_pruning_improving: bool = _param(
        "With late-move pruning: where the static evaluation has not risen since this side's previous move "
        "(the improving rule's test, made for this whatever improving says), half as many moves are searched "
        "before the quiet ones are skipped (Stockfish's rule)."
    )
    late_move_reductions: bool = _param(
        "Late-move reductions: quiet moves late in the order are first searched shallower, by "
        "lmr_base + ln(depth) ln(move number) / lmr_divisor plies."
    )
    lmr_min_depth: int = _param("Smallest depth where moves are reduced (plies).", lo=1, hi=100)
    lmr_min_moves: int = _param("Moves searched at full depth before reductions start (moves).", lo=1, hi=1000)
    lmr_base: float = _param("Constant part of the reduction (plies).", lo=-10.0, hi=10.0)
    lmr_divisor: float = _param("Divisor of the logarithmic part of the reduction.", lo=0.1, hi=100.0)
    lmr_history: bool = _param(
        "History in the reductions: a quiet move's reduction falls by its history (with continuation_history, "
        "plus its continuation histories) divided by lmr_history_divisor, rounded toward zero (a move that often "
        "refuted others is reduced less, one that failed more)."
    )
    lmr_history_divisor: int = _param("History per ply of reduction (history units).", lo=1, hi=1 << 30)
    lmr_captures: bool = _param(
        "Late-move reductions for captures too at non-PV nodes: a late capture is reduced a ply less than a "
        "quiet move would be, and (with lmr_history and capture_history) by its capture history as a quiet "
        "move by its history."
    )
    lmr_cut_nodes: bool = _param(
        "At a cut node (a null-window node expected to fail high: the reduced search of a late move and every "
        "other level below it, as Stockfish's cutNode), late moves are reduced lmr_cut_node_reduction plies "
        "more."
    )
    lmr_cut_node_reduction: int = _param(
        "The extra reduction at cut nodes (plies).",
        lo=0,
        hi=100,
    )
    internal_iterative_reduction: bool = _param("Search one ply shallower where the table has no move to try first.")
    iir_min_depth: int = _param("Smallest depth where internal iterative reduction applies (plies).", lo=1, hi=100)
    singular_extensions: bool = _param(
        "Singular extensions: where the table's move holds a lower bound from nearly as deep a search, the "
        "other moves are searched at half the depth against that score less singular_margin per ply (a clean "
        "test: no table cut, no static-evaluation pruning, no stored result); if none reaches it, the table's "
        "move is the only good one and is searched a ply deeper, two at non-PV nodes when they stay "
        "singular_double_margin below (at most singular_double_max times on a line); if that reduced bound "
        "already holds beta, the node is cut (multi-cut); if the table's score holds beta, the move is "
        "searched a ply shallower instead (Stockfish's rule, its numbers ours). Extensions stop at twice the "
        "iteration's depth."
    )
    singular_depth: int = _param("Smallest depth where a move is tested for being singular (plies).", lo=3, hi=100)
    singular_tt_depth: int = _param(
        "How much shallower than the node the table's search may have been for the test (plies).", lo=0, hi=100
    )
    singular_margin: int = _param(
        "How far below the table's score, per ply of depth, the other moves must stay (centipawns).", lo=0, hi=1000
    )
    singular_double_margin: int = _param(
        "How far below the test's bound the other moves must stay for a double extension (centipawns).",
        lo=0,
        hi=10000,
    )
    singular_double_max: int = _param(
        "Most double extensions on one line from the root (extensions).",
        lo=0,
        hi=100,
    )
    probcut: bool = _param(
        "ProbCut: at non-PV nodes from probcut_depth, a capture whose static exchange reaches beta + probcut_margin "
        "over the static evaluation, and that holds that bound in a quiescence search and then a search 4 plies "
        "shallower, makes the node fail high (unless the table already says it will not)."
    )
    probcut_depth: int = _param("Smallest depth where ProbCut applies (plies).", lo=4, hi=100)
    probcut_margin: int = _param("How far above beta the captures must hold (centipawns).", lo=0, hi=10000)
    correction_history: bool = _param(
        "Correction history: the static evaluation (search and quiescence) is corrected by what earlier searches "
        "of this search found for positions with the same pawns and side to move: after a node whose best move is "
        "quiet and whose score says more than its static evaluation did, the difference (weighted by depth) joins "
        "a running mean kept per pawn structure, bounded by correction_limit (across the game's moves with "
        "keep_memory)."
    )
    correction_limit: int = _param("Largest correction of the static evaluation (centipawns).", lo=0, hi=10000)
    keep_memory: bool = _param(
        "Keep the search's memory across a game's moves: the history tables, counter-moves and correction "
        "history (not the killers) learnt by one move's search start the next one, as Stockfish keeps them, "
        "until ucinewgame, Clear Hash or new settings empty them; each search first halves every history entry "
        "(aged, not cleared). Off: every search starts empty. The helper processes (Threads > 1) start empty "
        "either way."
    )
    see_pruning: bool = _param(
        "SEE pruning: at non-PV nodes not in check, up to see_pruning_depth, skip a move (after the first) "
        "that loses more than see_capture_margin per ply (a capture; with capture_history, that margin moved "
        "by the capture's history / 32, at most the margin either way) or see_quiet_margin per ply squared (a "
        "quiet move) by static exchange, unless it gives check."
    )
    see_pruning_depth: int = _param("Largest depth where SEE pruning applies (plies).", lo=0, hi=100)
    see_quiet_margin: int = _param("A quiet move's allowed exchange loss per ply squared (centipawns).", lo=0, hi=10000)
    see_capture_margin: int = _param("A capture's allowed exchange loss per ply (centipawns).", lo=0, hi=10000)
    see_ordering: bool = _param(
        "Order captures that lose material (by static exchange evaluation) after the quiet moves."
    )
    qsearch_see_pruning: bool = _param("Skip captures that lose material in the quiescence search.")
    qsearch_tt: bool = _param(
        "The transposition table in the quiescence search: a non-PV node returns the table's score where its bound "
        "settles the window, the stand pat takes the table's score where its bound says more, the table's move is "
        "tried first, and the node's result is stored at depth 0 (never over a deeper entry of the same position). On "
        "since its decision match at 10 s + 0.1 s (+6.9 Elo)."
    )
    lazy_eval: bool = _param(
        "Lazy evaluation in the quiescence search: when material and piece-square tables alone are more than "
        "lazy_eval_margin beyond the window, stand pat on that bound instead of computing the classical terms "
        "(only with the classical evaluation alone: no network, spectral or pheromone term)."
    )
    lazy_eval_margin: int = _param(
        "How far the classical terms are taken to reach at most (centipawns).", lo=0, hi=10000
    )
    delta_pruning: bool = _param("Skip quiescence captures that cannot lift the score to alpha even with a margin.")
    delta_margin: int = _param("Delta-pruning margin over the captured piece (centipawns).", lo=0, hi=10000)
    killers: bool = _param("Try two quiet moves that caused cutoffs at the same ply early.")
    counter_moves: bool = _param("Try the quiet move that last refuted the opponent's previous move early.")
    history: bool = _param("Order quiet moves by how often they caused cutoffs (history heuristic).")
    history_gravity: bool = _param(
        "History with gravity (the standard shape): a cutoff raises its move's history by the history bonus "
        "and lowers the quiet moves tried before it by as much, each entry moving the less the nearer it is to "
        "+-history_limit; off: by depth^2, unbounded until an entry passes 2^20 and all are halved."
    )
    history_limit: int = _param(
        "The bound of the history tables of the standard shape (the history with gravity, the continuation and "
        "capture histories; at most 16,384: the continuation and capture tables hold 16-bit entries).",
        lo=1,
        hi=1 << 14,
    )
    history_bonus_quadratic: int = _param(
        "The history bonus of a cutoff at depth d is min(history_bonus_quadratic d^2 + history_bonus_linear d, "
        "history_bonus_max) (history units per ply squared).",
        lo=0,
        hi=1 << 20,
    )
    history_bonus_linear: int = _param("The history bonus's part per ply of depth (history units).", lo=0, hi=1 << 20)
    history_bonus_max: int = _param(
        "The largest history bonus (history units; at most history_limit).", lo=1, hi=1 << 20
    )
    capture_history: bool = _param(
        "Capture history: order captures by what they win (the victim's exchange value, plus a promotion's "
        "gain) x 16 plus how often each (piece, target, victim) caused a cutoff, then the cheaper attacker; a "
        "cutoff raises the capture that made it and lowers the captures tried before it, by the history bonus "
        "within +-history_limit (the quiescence search keeps its own order)."
    )
    continuation_history: bool = _param(
        "Continuation history: a quiet move's history also counts how often it caused a cutoff after the move "
        "one ply up and after the move two plies up (each as piece and target square, one table for both), "
        "raised on a cutoff and lowered for the quiet moves tried before it, by the history bonus within "
        "+-history_limit; the sum orders the quiet moves and is what lmr_history and history_pruning read."
    )
    root_filter: bool = _param(
        "Game-theoretic root filter after the search: the best root candidates are scored by minimax, by "
        "maximin and by mean over the opponent's best replies; candidates dominated on every measure are dropped "
        "and the best mean among the rest is played."
    )
    root_filter_candidates: int = _param("Root moves the filter compares (moves).", lo=2, hi=20)
    root_filter_replies: int = _param("Opponent replies per candidate the filter scores (moves).", lo=1, hi=20)
    root_filter_margin: int = _param(
        "Only candidates whose minimax score is within this of the best are compared (centipawns).", lo=0, hi=1000
    )
    root_filter_reduction: int = _param(
        "The filter's searches are this much shallower than the last completed iteration (plies).", lo=1, hi=10
    )


# ----------------------------------------------------------------------------- time


@dataclass(frozen=True)
@_defaults("time")
class TimeConfig:
    """Time management. The optimum time for a move is (remaining - reserve) /
    moves_to_go + increment_use * increment, where remaining is the clock minus Move
    Overhead and reserve is moves_to_go * max(move_latency - increment, 0); no new
    iteration starts after soft_factor * optimum, and the search is aborted at
    min(hard_factor * optimum, max_share * remaining)."""

    moves_to_go: int = _param("Moves assumed left in the game when the clock has no movestogo (moves).", lo=1, hi=1000)
    increment_use: float = _param("Share of the increment added to the optimum time (fraction).", lo=0.0, hi=1.0)
    soft_factor: float = _param(
        "Soft limit as a multiple of the optimum time: no new iteration starts after it.", lo=0.01, hi=100.0
    )
    hard_factor: float = _param(
        "Hard limit as a multiple of the optimum time: the search is aborted at it.", lo=0.01, hi=100.0
    )
    max_share: float = _param("Largest share of the remaining clock one move may use (fraction).", lo=0.01, hi=0.95)
    move_latency: float = _param(
        "What a move costs beyond its search (reading the position, answering), in ms; "
        "kept in reserve for each move to come that the increment does not pay for.",
        lo=0.0,
        hi=1000.0,
    )
    single_move: bool = _param(
        "With one legal move and a clock, answer after a shallow search (single_move_depth) instead of "
        "spending the move's budget on a move that is forced, as Stockfish does."
    )
    count_ponder: bool = _param(
        "On ponderhit the limits run from the go ponder, as in Stockfish: the time spent pondering the move "
        "that was played counts as spent on it, so the rest of the search is shorter. Off: they start afresh "
        "at the ponderhit."
    )
    adaptive: bool = _param(
        "Scale the soft limit after each iteration by how unsure the search is (the factors below): on since "
        "its decision match at 10 s + 0.1 s (+52.5 Elo against the flat budget)."
    )
    instability_gain: float = _param(
        "The soft limit grows by this fraction per recent change of the best move (changes halve each "
        "iteration, as Stockfish counts them).",
        lo=0.0,
        hi=10.0,
    )
    falling_cp: float = _param(
        "The soft limit grows by 1/falling_cp per centipawn the score fell below the mean of the earlier "
        "iterations' scores (and shrinks as it rose).",
        lo=1.0,
        hi=10000.0,
    )
    falling_min: float = _param("Smallest factor for a rising score.", lo=0.1, hi=1.0)
    falling_max: float = _param("Largest factor for a falling score.", lo=1.0, hi=10.0)
    stable_share: float = _param(
        "When the best move took at least this share of an iteration's nodes ...", lo=0.0, hi=1.0
    )
    stable_iterations: int = _param("... and has stayed best this many iterations ...", lo=1, hi=100)
    stable_factor: float = _param("... the soft limit is multiplied by this.", lo=0.05, hi=1.0)
    scale_min: float = _param("The soft limit's factor is kept at least this ...", lo=0.01, hi=1.0)
    scale_max: float = _param("... and at most this (the hard limit bounds it anyway).", lo=1.0, hi=10.0)
    single_move_depth: int = _param(
        "With single_move, one legal move and a clock, the search stops at this depth (plies): enough for a "
        "score and a ponder move.",
        lo=1,
        hi=64,
    )
    trim: bool = _param(
        "Once the soft limit has passed, end the current iteration after any root move as soon as the "
        "previous iteration's best move has been searched at the new depth, is still best and has not "
        "fallen by more than trim_fall: the rest of the iteration would most likely confirm it, and the "
        "time is kept for moves whose best move is unsure. Off until a match shows it wins."
    )
    trim_depth: int = _param("Iterations below this depth are never trimmed (plies).", lo=1, hi=64)
    trim_fall: int = _param(
        "A best move whose score fell by more than this since the previous iteration is not trimmed "
        "(centipawns).",
        lo=0,
        hi=10000,
    )


# -------------------------------------------------------------------------- threads


@dataclass(frozen=True)
@_defaults("threads")
class ThreadsConfig:
    """Parallel search with the Threads option (see blitzaco/smp.py): Threads - 1 helper
    processes search the same root as the main search, sharing its transposition table.
    Helper i (1, 2, ...) skips the depths d where (d + skip_phase[j]) // skip_size[j] is
    odd, j = (i - 1) mod 20, so that the helpers spread over the depths (the tables of
    Stockfish's Lazy SMP before version 10)."""

    skip_size: tuple[int, ...] = _ints("Period of the skipped depths of helper j (plies).", 20)
    skip_phase: tuple[int, ...] = _ints("Phase of the skipped depths of helper j (plies).", 20)
    hang_timeout: int = _param(
        "A helper that has not taken up a search sent to it this long ago is taken to hang: it is killed and "
        "restarted (milliseconds).",
        lo=100,
        hi=600000,
    )
    start_timeout: int = _param(
        "A helper that has not become ready (imported the engine, mapped the table) this long after it was "
        "started is taken to hang (milliseconds).",
        lo=1000,
        hi=600000,
    )
    max_restarts: int = _param(
        "A helper found dead or hanging is restarted at most this many times after Threads is set; after that "
        "it is dropped (restarts).",
        lo=0,
        hi=1000,
    )
    stop_wait: int = _param(
        "ucinewgame, Clear Hash and Hash wait at most this long for the helpers to leave their search before "
        "clearing or replacing the shared table (milliseconds).",
        lo=0,
        hi=10000,
    )


# ----------------------------------------------------------------------------- book


@dataclass(frozen=True)
@_defaults("book")
class BookConfig:
    """How moves are chosen from the opening book (UCI options OwnBook and BookFile
    say whether and which book)."""

    selection: str = _param(
        "weighted: at random in proportion to the entries' weights; best: always the heaviest entry.",
        choices=("weighted", "best"),
    )
    min_weight: int = _param("Entries lighter than this are ignored (Polyglot weight units).", lo=0, hi=65535)
    max_ply: int = _param(
        "No book moves after this many plies of the game (plies, counted from the start position).", lo=0, hi=1000
    )
    seed: int = _param(
        "Seed of the weighted choice, set at start-up: an engine started with the same seed replays the same "
        "sequence of book choices (ucinewgame does not reset it, so the games of a run differ); 0: a new seed "
        "from the operating system at every start.",
        lo=0,
        hi=2**63 - 1,
    )


# -------------------------------------------------------------------------- analyse


@dataclass(frozen=True)
@_defaults("levels")
class LevelsConfig:
    """Strength levels (``Skill Level`` 0-20, ``UCI_LimitStrength`` with ``UCI_Elo``).
    A level below single_line_from searches its pick_lines best lines to
    level_depth[level] plies (never more than level_nodes[level] nodes), then picks
    among them as Stockfish's Skill does: each line's score gets a random push growing
    with the level's weakness (120 - 2 * level) and the largest wins; the levels from
    single_line_from to 19 search one line within their limits and play its best move.
    UCI_Elo chooses the highest level whose elo_of_level is not above it; the table is
    calibrated against Stockfish 15.1's UCI_Elo (README)."""

    level_depth: tuple[int, ...] = _ints("Depth of the search at levels 0..19 (plies; level 20 is full strength).", 20)
    level_nodes: tuple[int, ...] = _ints(
        "Most nodes a move searches at levels 0..19: the levels' main limit, about x1.3 a level from 300 to "
        "20,000 at level 16, then 7,000 to 35,000 for the single-line levels 17-19 (full strength, compiled, "
        "runs some 600,000 to 780,000 nodes a second on the engine's own board). A node limit plays the same on "
        "a fast machine or a slow one and at any time control, so a calibrated UCI_Elo keeps its meaning.",
        20,
    )
    pick_lines: int = _param("Lines searched to pick from below level 20.", lo=1, hi=16)
    single_line_from: int = _param(
        "From this level up (below 20), a level searches one line within its limits and plays its best move, "
        "with no pick: weaker than full strength by its node and depth limits alone (20: every level picks).",
        lo=0,
        hi=20,
    )
    safe_level: int = _param(
        "From this level up, a mate in one is never missed and no move more than blunder_cp worse than the "
        "best is picked.",
        lo=0,
        hi=20,
    )
    blunder_cp: int = _param("See safe_level (centipawns).", lo=1, hi=10000)
    network: bool = _param(
        "Levels below 20 evaluate with the network when [eval.nn] is on; false: with the classical evaluation "
        "alone, the one elo_of_level was measured with (level 20 uses whatever [eval] says). Below level 20 the "
        "Threads helpers do not search: a level is one search within its node limit."
    )
    elo_of_level: tuple[int, ...] = _ints(
        "The UCI_Elo each level 0..20 plays at, on Stockfish 15.1's UCI_Elo scale: measured at levels 20 (full "
        "strength with the 256-neuron net and the rewired search: 200 games against UCI_Elo 2400, 2367 +- 40; "
        "at 4666bb9 with the SPSA-tuned search numbers 2271 +- 35 from 200 games against 2200 and 100 against "
        "2400; at 3c1fb9e, before the tuned numbers, 2226 against 2200; the net with the flat clock 2170 at 551fb47, the net on 7.6 million labels 2148 at 93bec8b, the "
        "one-output net 2111 at ea43d6c, the blend 2069 at df0f4bc, the classical evaluation alone 1983 at "
        "342e273), "
        "16 and 12 against Stockfish and at 8, 4 and 0 by a chain of levels below them (100 games each), "
        "at 10 s + 0.1 s, compiled, the search on the engine's own board (bdc2fb1); levels 19 and 17 (single "
        "line, 35,000 and 7,000 nodes) against Stockfish (1972 and 1766, 58f6c1a with this table); the levels "
        "between interpolated (calibrate.py measure; level 18 by the logarithm of its nodes).",
        21,
    )


@dataclass(frozen=True)
@_defaults("wdl")
class WdlConfig:
    """The win/draw/loss model of ``UCI_ShowWDL`` (:mod:`blitzaco.wdl`): with x the
    material on the board (pawn 1, minor 3, rook 5, queen 9, both sides, in
    [17, 78]) over 58, the score of an even game is a(x) and its spread b(x), each a
    cubic a0 x^3 + a1 x^2 + a2 x + a3 in centipawns. Fitted by scripts/fit_wdl.py to
    the engine's own games."""

    a: tuple[float, ...] = _floats(
        "a(x): the score at which a win and a draw are equally likely (cp), cubic coefficients a0..a3.", 4
    )
    b: tuple[float, ...] = _floats(
        "b(x): how fast the win chance grows with the score (cp), cubic coefficients b0..b3.", 4
    )


@dataclass(frozen=True)
@_defaults("analyse")
class AnalyseConfig:
    """Move classification of ``blitzaco analyse``, by the centipawns a move loses
    against the engine's best move, from the mover's point of view."""

    excellent: int = _param("Largest loss of an Excellent move (centipawns).", lo=0, hi=10000)
    good: int = _param("Largest loss of a Good move (centipawns).", lo=0, hi=10000)
    inaccuracy: int = _param("Largest loss of an Inaccuracy (centipawns).", lo=0, hi=10000)
    mistake: int = _param("Largest loss of a Mistake; anything worse is a Blunder (centipawns).", lo=0, hi=10000)
    brilliant_keep: int = _param(
        "A sacrifice is Brilliant when it is the engine's best move and loses at most this (centipawns).",
        lo=0,
        hi=10000,
    )
    brilliant_min_sacrifice: int = _param(
        "Material the opponent can win on the sacrificed piece's square for it to count as a sacrifice "
        "(centipawns, by static exchange).",
        lo=1,
        hi=10000,
    )


# ----------------------------------------------------------------------------- eval


@dataclass(frozen=True)
@_defaults("eval.material")
class MaterialConfig:
    """Piece values as [midgame, endgame] pairs, in centipawns."""

    pawn: tuple[int, int] = _pair("Pawn value [mg, eg] (centipawns).")
    knight: tuple[int, int] = _pair("Knight value [mg, eg] (centipawns).")
    bishop: tuple[int, int] = _pair("Bishop value [mg, eg] (centipawns).")
    rook: tuple[int, int] = _pair("Rook value [mg, eg] (centipawns).")
    queen: tuple[int, int] = _pair("Queen value [mg, eg] (centipawns).")


@dataclass(frozen=True)
@_defaults("eval.pst")
class PstConfig:
    """Piece-square tables in centipawns, from White's point of view: 64 values, a8
    first and h1 last (the board as printed with White at the bottom). Black uses the
    same tables mirrored vertically. These starting tables are BlitzACO's own, made
    from simple rules (centralisation, pawn advance, king shelter in the midgame and
    king activity in the endgame), for the tuner to improve."""

    pawn_mg: tuple[int, ...] = _table("Pawn, midgame.")
    pawn_eg: tuple[int, ...] = _table("Pawn, endgame.")
    knight_mg: tuple[int, ...] = _table("Knight, midgame.")
    knight_eg: tuple[int, ...] = _table("Knight, endgame.")
    bishop_mg: tuple[int, ...] = _table("Bishop, midgame.")
    bishop_eg: tuple[int, ...] = _table("Bishop, endgame.")
    rook_mg: tuple[int, ...] = _table("Rook, midgame.")
    rook_eg: tuple[int, ...] = _table("Rook, endgame.")
    queen_mg: tuple[int, ...] = _table("Queen, midgame.")
    queen_eg: tuple[int, ...] = _table("Queen, endgame.")
    king_mg: tuple[int, ...] = _table("King, midgame.")
    king_eg: tuple[int, ...] = _table("King, endgame.")


@dataclass(frozen=True)
@_defaults("eval.pawns")
class PawnConfig:
    """Pawn structure, [midgame, endgame] pairs in centipawns per pawn (negative:
    a penalty). Ranks are counted from the pawn's own side (index 0 = first rank)."""

    doubled: tuple[int, int] = _pair("A pawn with another pawn of its colour behind it on its file.")
    isolated: tuple[int, int] = _pair("A pawn with no pawn of its colour on the neighbouring files.")
    backward: tuple[int, int] = _pair(
        "A pawn whose neighbours are all ahead of it and whose square in front an enemy pawn attacks "
        "(not counted when isolated)."
    )
    supported: tuple[int, int] = _pair("A pawn defended by a pawn of its colour (connected).")
    phalanx: tuple[int, int] = _pair("A pawn with a pawn of its colour beside it on the same rank.")
    passed: tuple[tuple[int, int], ...] = _pairs(
        "A passed pawn (no enemy pawn ahead of it on its file or the neighbouring files), by rank.", 8
    )
    passed_free: tuple[tuple[int, int], ...] = _pairs(
        "Added for a passed pawn whose path to promotion is empty, by rank.", 8
    )
    passed_enemy_king: tuple[int, int] = _pair(
        "A passed pawn, per square of distance between the enemy king and the square in front of it, times "
        "(rank - 2) for pawns beyond the third rank."
    )
    passed_own_king: tuple[int, int] = _pair(
        "A passed pawn, per square of distance between its own king and the square in front of it, times (rank - 2)."
    )


@dataclass(frozen=True)
@_defaults("eval.pieces")
class PieceConfig:
    """Pieces: mobility, files, outposts, the bishop pair, and threats; [midgame,
    endgame] pairs in centipawns. Mobility counts the squares a piece attacks that are
    not occupied by its own pawns or king and not attacked by enemy pawns."""

    bishop_pair: tuple[int, int] = _pair("Both bishops (per side that has them).")
    mobility_knight: tuple[tuple[int, int], ...] = _pairs("Knight, by number of safe squares (0-8).", 9)
    mobility_bishop: tuple[tuple[int, int], ...] = _pairs("Bishop, by number of safe squares (0-13).", 14)
    mobility_rook: tuple[tuple[int, int], ...] = _pairs("Rook, by number of safe squares (0-14).", 15)
    mobility_queen: tuple[tuple[int, int], ...] = _pairs("Queen, by number of safe squares (0-27).", 28)
    rook_open_file: tuple[int, int] = _pair("A rook on a file without pawns.")
    rook_semi_open_file: tuple[int, int] = _pair("A rook on a file without pawns of its colour only.")
    rook_seventh: tuple[int, int] = _pair(
        "A rook on the seventh rank while the enemy king is on the eighth or enemy pawns are on the seventh."
    )
    knight_outpost: tuple[int, int] = _pair(
        "A knight on the fourth to sixth rank, defended by a pawn, where no enemy pawn can ever attack it."
    )
    bishop_outpost: tuple[int, int] = _pair("A bishop on such an outpost square.")
    threat_by_pawn: tuple[int, int] = _pair("A knight, bishop, rook or queen attacked by an enemy pawn.")
    threat_by_minor: tuple[int, int] = _pair("A rook or queen attacked by an enemy knight or bishop.")
    threat_by_rook: tuple[int, int] = _pair("A queen attacked by an enemy rook.")
    hanging: tuple[int, int] = _pair("A knight, bishop, rook or queen attacked by the enemy and defended by nothing.")


@dataclass(frozen=True)
@_defaults("eval.king")
class KingConfig:
    """King safety. The king zone is the king's square and the squares next to it.
    Each enemy piece attacking the zone adds its weight per zone square it attacks;
    the sum, times attacker_scale[number of attacking pieces] / 100, is the midgame
    penalty (and endgame_share percent of it the endgame penalty)."""

    shield: tuple[int, int] = _pair(
        "A pawn of the king's colour on the king's file or a neighbouring one, one or two ranks in front of it."
    )
    semi_open_file: tuple[int, int] = _pair(
        "A file at or next to the king without pawns of the king's colour (but with enemy pawns)."
    )
    open_file: tuple[int, int] = _pair("A file at or next to the king without any pawns.")
    attack_weight: tuple[int, ...] = _ints(
        "Weight of an attacked zone square by attacker: knight, bishop, rook, queen (centipawns).", 4
    )
    attacker_scale: tuple[int, ...] = _ints(
        "Share of the summed weights counted, by number of attacking pieces 0-7 (percent).", 8
    )
    endgame_share: int = _param("The endgame penalty as a share of the midgame penalty (percent).", lo=0, hi=100)


@dataclass(frozen=True)
@_defaults("eval.scale")
class ScaleConfig:
    """Endgames where the side ahead often cannot win: its endgame score is multiplied
    by factor / 64."""

    opposite_bishops: int = _param(
        "Bishops of opposite colours and no other pieces (pawns besides) (sixty-fourths).", lo=0, hi=64
    )
    opposite_bishops_with_pieces: int = _param(
        "Bishops of opposite colours with other pieces too (sixty-fourths).", lo=0, hi=64
    )
    no_pawns: int = _param(
        "The side ahead has no pawns and at most a bishop's worth more pieces (sixty-fourths).", lo=0, hi=64
    )
    no_pawns_minor: int = _param(
        "As no_pawns, when the side ahead has less than a rook's worth of pieces (sixty-fourths).", lo=0, hi=64
    )


@dataclass(frozen=True)
@_defaults("eval.spectral")
class SpectralConfig:
    """Spectral terms: features of the Laplacian and adjacency spectra of each side's
    attack and defence graph (see blitzaco/spectral.py). The advantage is the sum of
    weight * (White's feature - Black's feature), in centipawns, added to the
    evaluation for both phases. The weights were fitted to what the classical
    evaluation misses against Stockfish (scripts/fit_spectral.py)."""

    enabled: bool = _param("Add the spectral advantage to the evaluation (needs numpy).")
    min_depth: int = _param(
        "Compute the advantage only at nodes with at least this many plies left; the nodes below use their "
        "ancestor's value (plies).",
        lo=0,
        hi=100,
    )
    connectivity: float = _param("Weight of the algebraic connectivity (centipawns per unit).", lo=-1e4, hi=1e4)
    gap: float = _param("Weight of the adjacency spectral gap (centipawns per unit).", lo=-1e4, hi=1e4)
    radius: float = _param("Weight of the adjacency spectral radius (centipawns per unit).", lo=-1e4, hi=1e4)
    entropy: float = _param("Weight of the Laplacian spectral entropy (centipawns per nat).", lo=-1e4, hi=1e4)
    cohesion: float = _param(
        "Weight of the Fiedler-vector cohesion of the side's pieces (centipawns per unit, 0-1).", lo=-1e4, hi=1e4
    )
    clusters: float = _param("Weight of the number of connected clusters (centipawns each).", lo=-1e4, hi=1e4)
    king_centrality: float = _param(
        "Weight of the eigenvector centrality of the enemy king's neighbourhood (centipawns per unit).", lo=-1e4, hi=1e4
    )


@dataclass(frozen=True)
@_defaults("eval.nn")
class NetworkConfig:
    """The network term (see blitzaco/nnue.py): a small network over the pieces'
    squares, trained on Stockfish-labelled positions (tune.py train-net). A net
    trained as a residual is added to the classical evaluation; any other net replaces
    it, blended with a share of the classical score (classical; at 0 the classical
    terms are not computed). The default, the shipped net.bin alone (weight 1, classical
    0: 768x2->256x2->8, eight output buckets by the number of pieces), won the
    match at equal time that made it the default (README)."""

    enabled: bool = _param(
        "Use the network (a missing or unreadable file is reported and the classical evaluation used alone)."
    )
    file: str = _param(
        "The network file: a path, or the name of a net shipped in assets/ (nn.bin, the residual net; net.bin, "
        "the replacing net); empty: nn.bin."
    )
    weight: float = _param("Multiplier of the network's score (1 = as trained).", lo=0.0, hi=10.0)
    classical: float = _param(
        "Multiplier of the classical evaluation added to a replacing net's score (0: the net alone; a blend of "
        "the two, such as weight 0.5 and classical 0.5, evens out where either errs). A residual net always has "
        "the classical score at 1.",
        lo=0.0,
        hi=10.0,
    )
    fifty_move: int = _param(
        "With the network on, its score (the blend, the classical share included) times (fifty_move - halfmove "
        "clock) / fifty_move, rounded toward 0, as Stockfish scales its evaluation: a position that makes no "
        "progress toward a capture or a pawn move drifts toward the fifty-move draw's 0. 0: off (200 screened "
        "+8.7 +- 41.2 at 20,000 nodes a move, 200 games: no measurable gain; docs/MEASUREMENTS.md).",
        lo=0,
        hi=10000,
    )


@dataclass(frozen=True)
@_defaults("eval")
class EvalConfig:
    """The tapered evaluation. Phase counts knights and bishops 1, rooks 2 and queens 4
    (24 = all pieces on the board); the score blends midgame and endgame by phase."""

    classical: bool = _param(
        "Evaluate pawn structure, pieces, king safety, threats, tempo and drawish endgames; false: material "
        "and piece-square tables only."
    )
    tempo: tuple[int, int] = _pair("For the side to move (centipawns).")
    material: MaterialConfig = _section(MaterialConfig)
    pst: PstConfig = _section(PstConfig)
    pawns: PawnConfig = _section(PawnConfig)
    pieces: PieceConfig = _section(PieceConfig)
    king: KingConfig = _section(KingConfig)
    scale: ScaleConfig = _section(ScaleConfig)
    spectral: SpectralConfig = _section(SpectralConfig)
    nn: NetworkConfig = _section(NetworkConfig)


# ------------------------------------------------------------------------ pheromone


@dataclass(frozen=True)
@_defaults("pheromone.colony")
class ColonyConfig:
    """Colony training (``blitzaco colony``): ants are self-play games from a given
    move history; each move is drawn with probability proportional to
    (trail + trail_floor)^alpha * exp((score - best) / temperature)^beta, where score is
    a shallow search's score of the move. After an ant's game every move is reinforced
    by ant_deposit * (2 * result - 1) for the side that played it (result 1 won, 0.5
    drawn, 0 lost; games cut at max_plies are scored by the expected result of a
    search's score)."""

    alpha: float = _param("Exponent of the trail in the move choice.", lo=0.0, hi=10.0)
    beta: float = _param("Exponent of the heuristic in the move choice.", lo=0.0, hi=10.0)
    temperature: float = _param(
        "Centipawns below the best move at which the heuristic falls by a factor e.", lo=1.0, hi=10000.0
    )
    trail_floor: float = _param(
        "Added to every trail in the move choice, so unmarked moves are tried.", lo=0.0, hi=10.0
    )
    ant_deposit: float = _param("Pheromone laid (or removed) per move of a won (or lost) game.", lo=0.0, hi=10.0)
    max_plies: int = _param("An ant's game is cut after this many plies (plies).", lo=1, hi=1000)
    score_depth: int = _param("Depth of the search that scores each candidate move (plies).", lo=1, hi=10)
    result_depth: int = _param("Depth of the search that scores a cut game (plies).", lo=1, hi=20)
    ants_per_generation: int = _param("Ants between two evaporations of the memory being trained.", lo=1, hi=100000)


@dataclass(frozen=True)
@_defaults("pheromone")
class PheromoneConfig:
    """The ant-colony memory of moves (see blitzaco/pheromone.py). Trails are kept per
    position and move, as levels between 0 and max_level. After each iteration the best
    line lays pheromone on its moves; every search evaporates all trails by the factor
    evaporation. The memory has a long-term part (loaded from the PheromoneFile, kept
    across games) and a per-game part (cleared by ucinewgame)."""

    enabled: bool = _param(
        "Keep the memory: lay trails, and use them for move ordering and evaluation. Off by default: at "
        "10 s + 0.1 s it scored -10.4 +/- 35.8 Elo against the engine without it (200 games; README)."
    )
    evaporation: float = _param("Factor applied to every trail at each search.", lo=0.0, hi=1.0)
    deposit: float = _param("Pheromone laid on the first move of the best line after each iteration.", lo=0.0, hi=10.0)
    deposit_decay: float = _param(
        "Each further move of the best line gets this share of the previous one's deposit.", lo=0.0, hi=1.0
    )
    max_level: float = _param("Upper bound of a trail.", lo=0.001, hi=1000.0)
    min_level: float = _param("Trails below this are forgotten.", lo=0.0, hi=1000.0)
    ordering: bool = _param("Order marked quiet moves (strongest trail first) after the killers and the counter-move.")
    eval_weight: int = _param(
        "Bonus for the side to move per unit of the strongest trail leaving the position (centipawns).",
        lo=-1000,
        hi=1000,
    )
    variety: bool = _param(
        "Choose the root move by roulette wheel over the trails among the moves within variety_margin of "
        "the best (the search then looks at variety_candidates lines; not in analysis)."
    )
    variety_candidates: int = _param("Root moves considered for the roulette wheel (moves).", lo=2, hi=20)
    variety_margin: int = _param(
        "Largest loss against the best move of a roulette candidate (centipawns).", lo=0, hi=1000
    )
    variety_floor: float = _param("Added to every candidate's trail on the wheel.", lo=0.001, hi=100.0)
    seed: int = _param(
        "Seed of the roulette wheel, set at start-up; 0: a new seed from the operating system.", lo=0, hi=2**63 - 1
    )
    learning_rate: float = _param(
        "With the PheromoneLearning option, the per-game trails are added to the long-term memory times "
        "this at the end of a game (ucinewgame or quit), and the file is saved.",
        lo=0.0,
        hi=10.0,
    )
    colony: ColonyConfig = _section(ColonyConfig)


# ----------------------------------------------------------------------------- root


@dataclass(frozen=True)
class Config:
    """All of BlitzACO's tunable numbers."""

    search: SearchConfig = _section(SearchConfig)
    time: TimeConfig = _section(TimeConfig)
    threads: ThreadsConfig = _section(ThreadsConfig)
    book: BookConfig = _section(BookConfig)
    analyse: AnalyseConfig = _section(AnalyseConfig)
    eval: EvalConfig = _section(EvalConfig)
    pheromone: PheromoneConfig = _section(PheromoneConfig)
    wdl: WdlConfig = _section(WdlConfig)
    levels: LevelsConfig = _section(LevelsConfig)


# ------------------------------------------------------------------------- loading


def load_config(path: str | Path) -> Config:
    """Read a TOML file into a :class:`Config`.

    Raises :class:`ConfigError` for a file that cannot be read or parsed, an unknown
    key, or a value of the wrong type or out of range; the message names the key.
    """
    return config_from_dict(read_toml(path))


def read_toml(path: str | Path) -> dict[str, Any]:
    """The mapping in a TOML file. Raises :class:`ConfigError` for a file that cannot
    be read or parsed."""
    import tomllib

    try:
        data = read_user_file(path, MAX_CONFIG_BYTES)
        return tomllib.loads(data.decode("utf-8"))
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path} is not UTF-8 text: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path} is not valid TOML: {err}") from None


def config_from_dict(data: dict[str, Any]) -> Config:
    """Build a :class:`Config` from a mapping shaped like ``config.toml``; keys left
    out keep their defaults. Raises :class:`ConfigError` naming the offending key."""
    return _build(Config, data, "")


def _build(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{path or 'config'}: expected a table, got {_show(data)}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, raw in data.items():
        name = f"{path}.{key}" if path else key
        if key not in known:
            raise ConfigError(f"unknown key '{name}'")
        kind = hints[key]
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            values[key] = _build(kind, raw, name)
        else:
            values[key] = _check_value(known[key], kind, raw, name)
    return cls(**values)


def dump_toml(config: Config | None = None) -> str:
    """The TOML text of *config* (the defaults when None), with every key documented."""
    lines = [_HEADER.rstrip("\n")]
    _dump_section(config if config is not None else Config(), "", lines)
    return "\n".join(lines) + "\n"


def _dump_section(obj: Any, path: str, lines: list[str]) -> None:
    fields = dataclasses.fields(obj)
    scalars = [f for f in fields if not dataclasses.is_dataclass(getattr(obj, f.name))]
    tables = [f for f in fields if dataclasses.is_dataclass(getattr(obj, f.name))]
    if path:
        lines.append("")
        for line in _wrap(type(obj).__doc__ or ""):
            lines.append(f"# {line}".rstrip())
        lines.append(f"[{path}]")
    for f in scalars:
        for line in _wrap(f.metadata.get("doc", "")):
            lines.append(f"# {line}".rstrip())
        lines.append(f"{f.name} = {_format(getattr(obj, f.name))}")
    for f in tables:
        _dump_section(getattr(obj, f.name), f"{path}.{f.name}" if path else f.name, lines)


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        import json

        return json.dumps(value)
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):  # a table of pairs
        rows = [", ".join(_format(v) for v in value[i : i + 8]) for i in range(0, len(value), 8)]
        return "[\n" + ",\n".join(f"    {row}" for row in rows) + ",\n]"
    if isinstance(value, tuple) and len(value) == PST_SIZE:
        rows = [", ".join(f"{v:4d}" for v in value[i : i + 8]) for i in range(0, PST_SIZE, 8)]
        return "[\n" + ",\n".join(f"    {row}" for row in rows) + ",\n]"
    if isinstance(value, tuple):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    raise AssertionError(f"cannot format {value!r}")  # pragma: no cover


def _wrap(text: str, width: int = 84) -> list[str]:
    words = " ".join(text.split()).split(" ")
    lines, current = [], ""
    for word in words:
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines
