"""Every tunable number of the engine, read once from TOML into frozen dataclasses.

The defaults live here, in code; the shipped ``config.toml`` is generated from them
(``blitzaco config > config.toml``) and a test proves the two agree byte for byte.
A file given with the ``ConfigFile`` UCI option replaces the defaults key by key:
keys it leaves out keep their default, an unknown key or a value of the wrong type
is refused with a :class:`ConfigError` that names the key.

Nothing else in the engine reads files for parameters, and nothing reads a global:
the :class:`Config` object is passed to whoever needs it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "AnalyseConfig",
    "BookConfig",
    "Config",
    "ConfigError",
    "EvalConfig",
    "MaterialConfig",
    "PstConfig",
    "SearchConfig",
    "TimeConfig",
    "dump_toml",
    "load_config",
    "config_from_dict",
]

PST_SIZE = 64


class ConfigError(ValueError):
    """A configuration file or mapping that cannot be used; the message names the key."""


def _param(
    default: Any, doc: str, *, lo: float | None = None, hi: float | None = None, choices: tuple[str, ...] = ()
) -> Any:
    """A scalar field with its documentation (unit included) and optional bounds or
    allowed values."""
    return field(default=default, metadata={"doc": doc, "min": lo, "max": hi, "choices": choices})


def _pair(mg: int, eg: int, doc: str) -> Any:
    """A midgame/endgame pair, written ``[mg, eg]`` in TOML."""
    return field(default=(mg, eg), metadata={"doc": doc, "pair": True})


def _table(doc: str, *values: int) -> Any:
    """A piece-square table: 64 values, a8 first and h1 last, as a board is printed
    with White at the bottom; Black uses the same table mirrored vertically."""
    assert len(values) == PST_SIZE, doc
    return field(default=tuple(values), metadata={"doc": doc, "length": PST_SIZE})


def _section(cls: type) -> Any:
    return field(default_factory=cls)


# --------------------------------------------------------------------------- search


@dataclass(frozen=True)
class SearchConfig:
    """Search parameters. Depths are in plies, scores in centipawns. Each technique
    has a switch so that a match can measure it against the search without it."""

    aspiration_depth: int = _param(
        4, "First iteration whose root search uses an aspiration window around the previous score (plies).",
        lo=1, hi=1000,
    )
    aspiration_window: int = _param(
        40, "Half-width of the first aspiration window (centipawns); it doubles after each fail.", lo=1, hi=10000
    )
    check_extension: bool = _param(True, "Search one ply deeper when the side to move is in check.")
    mate_distance_pruning: bool = _param(True, "Cut lines that cannot beat a mate already found nearer the root.")
    null_move: bool = _param(
        True, "Null-move pruning: pass, search shallower, and cut if the position still holds (never with only king "
        "and pawns, where passing may be the best move)."
    )
    null_move_min_depth: int = _param(2, "Smallest depth where a null move is tried (plies).", lo=1, hi=100)
    null_move_reduction: int = _param(
        3, "Depth reduction of the null-move search, before adjustments (plies).", lo=1, hi=20
    )
    null_move_depth_divisor: int = _param(
        4, "The reduction grows by one ply per this many plies of depth left.", lo=1, hi=100
    )
    null_move_eval_divisor: int = _param(
        200, "The reduction grows by one ply per this many centipawns the static evaluation exceeds beta (at most 3).",
        lo=1, hi=10000,
    )
    reverse_futility: bool = _param(
        True, "Reverse futility pruning: cut when the static evaluation beats beta by a margin growing with depth."
    )
    reverse_futility_depth: int = _param(
        6, "Largest depth where reverse futility pruning applies (plies).", lo=0, hi=100
    )
    reverse_futility_margin: int = _param(90, "Reverse futility margin per ply of depth (centipawns).", lo=0, hi=10000)
    futility: bool = _param(
        True, "Futility pruning: skip quiet moves that do not give check when the static evaluation plus a margin "
        "cannot reach alpha."
    )
    futility_depth: int = _param(3, "Largest depth where futility pruning applies (plies).", lo=0, hi=100)
    futility_margin: int = _param(110, "Futility margin per ply of depth (centipawns).", lo=0, hi=10000)
    late_move_pruning: bool = _param(
        True, "Late-move pruning: at shallow depth skip the quiet moves that come after the first "
        "late_move_pruning_base + depth^2."
    )
    late_move_pruning_depth: int = _param(4, "Largest depth where late-move pruning applies (plies).", lo=0, hi=100)
    late_move_pruning_base: int = _param(
        3, "Quiet moves always searched before late-move pruning (moves).", lo=0, hi=1000
    )
    late_move_reductions: bool = _param(
        True, "Late-move reductions: quiet moves late in the order are first searched shallower, by "
        "lmr_base + ln(depth) ln(move number) / lmr_divisor plies."
    )
    lmr_min_depth: int = _param(3, "Smallest depth where moves are reduced (plies).", lo=1, hi=100)
    lmr_min_moves: int = _param(3, "Moves searched at full depth before reductions start (moves).", lo=1, hi=1000)
    lmr_base: float = _param(0.75, "Constant part of the reduction (plies).", lo=-10.0, hi=10.0)
    lmr_divisor: float = _param(2.25, "Divisor of the logarithmic part of the reduction.", lo=0.1, hi=100.0)
    internal_iterative_reduction: bool = _param(
        True, "Search one ply shallower where the table has no move to try first."
    )
    iir_min_depth: int = _param(4, "Smallest depth where internal iterative reduction applies (plies).", lo=1, hi=100)
    see_ordering: bool = _param(
        True, "Order captures that lose material (by static exchange evaluation) after the quiet moves."
    )
    qsearch_see_pruning: bool = _param(True, "Skip captures that lose material in the quiescence search.")
    delta_pruning: bool = _param(
        True, "Skip quiescence captures that cannot lift the score to alpha even with a margin."
    )
    delta_margin: int = _param(200, "Delta-pruning margin over the captured piece (centipawns).", lo=0, hi=10000)
    killers: bool = _param(True, "Try two quiet moves that caused cutoffs at the same ply early.")
    counter_moves: bool = _param(True, "Try the quiet move that last refuted the opponent's previous move early.")
    history: bool = _param(True, "Order quiet moves by how often they caused cutoffs (history heuristic).")
    root_filter: bool = _param(
        False, "Game-theoretic root filter after the search: the best root candidates are scored by minimax, by "
        "maximin and by mean over the opponent's best replies; candidates dominated on every measure are dropped "
        "and the best mean among the rest is played."
    )
    root_filter_candidates: int = _param(3, "Root moves the filter compares (moves).", lo=2, hi=20)
    root_filter_replies: int = _param(3, "Opponent replies per candidate the filter scores (moves).", lo=1, hi=20)
    root_filter_margin: int = _param(
        25, "Only candidates whose minimax score is within this of the best are compared (centipawns).", lo=0, hi=1000
    )
    root_filter_reduction: int = _param(
        2, "The filter's searches are this much shallower than the last completed iteration (plies).", lo=1, hi=10
    )


# ----------------------------------------------------------------------------- time


@dataclass(frozen=True)
class TimeConfig:
    """Time management. The optimum time for a move is (remaining - reserve) /
    moves_to_go + increment_use * increment, where remaining is the clock minus Move
    Overhead and reserve is moves_to_go * max(move_latency - increment, 0); no new
    iteration starts after soft_factor * optimum, and the search is aborted at
    min(hard_factor * optimum, max_share * remaining)."""

    moves_to_go: int = _param(
        30, "Moves assumed left in the game when the clock has no movestogo (moves).", lo=1, hi=1000
    )
    increment_use: float = _param(0.8, "Share of the increment added to the optimum time (fraction).", lo=0.0, hi=1.0)
    soft_factor: float = _param(
        0.6, "Soft limit as a multiple of the optimum time: no new iteration starts after it.", lo=0.01, hi=100.0
    )
    hard_factor: float = _param(
        3.0, "Hard limit as a multiple of the optimum time: the search is aborted at it.", lo=0.01, hi=100.0
    )
    max_share: float = _param(
        0.5, "Largest share of the remaining clock one move may use (fraction).", lo=0.01, hi=0.95
    )
    move_latency: float = _param(
        10.0,
        "What a move costs beyond its search (reading the position, answering), in ms; "
        "kept in reserve for each move to come that the increment does not pay for.",
        lo=0.0,
        hi=1000.0,
    )


# ----------------------------------------------------------------------------- book


@dataclass(frozen=True)
class BookConfig:
    """How moves are chosen from the opening book (UCI options OwnBook and BookFile
    say whether and which book)."""

    selection: str = _param(
        "weighted", "weighted: at random in proportion to the entries' weights; best: always the heaviest entry.",
        choices=("weighted", "best"),
    )
    min_weight: int = _param(1, "Entries lighter than this are ignored (Polyglot weight units).", lo=0, hi=65535)
    max_ply: int = _param(
        24, "No book moves after this many plies of the game (plies, counted from the start position).",
        lo=0, hi=1000,
    )
    seed: int = _param(
        20261122,
        "Seed of the weighted choice, set at start-up: an engine started with the same seed replays the same "
        "sequence of book choices (ucinewgame does not reset it, so the games of a run differ); 0: a new seed "
        "from the operating system at every start.",
        lo=0, hi=2**63 - 1,
    )


# -------------------------------------------------------------------------- analyse


@dataclass(frozen=True)
class AnalyseConfig:
    """Move classification of ``blitzaco analyse``, by the centipawns a move loses
    against the engine's best move, from the mover's point of view."""

    excellent: int = _param(50, "Largest loss of an Excellent move (centipawns).", lo=0, hi=10000)
    good: int = _param(150, "Largest loss of a Good move (centipawns).", lo=0, hi=10000)
    inaccuracy: int = _param(300, "Largest loss of an Inaccuracy (centipawns).", lo=0, hi=10000)
    mistake: int = _param(600, "Largest loss of a Mistake; anything worse is a Blunder (centipawns).", lo=0, hi=10000)
    brilliant_keep: int = _param(
        50, "A sacrifice is Brilliant when it is the engine's best move and loses at most this (centipawns).",
        lo=0, hi=10000,
    )
    brilliant_min_sacrifice: int = _param(
        200, "Material the opponent can win on the sacrificed piece's square for it to count as a sacrifice "
        "(centipawns, by static exchange).", lo=1, hi=10000,
    )


# ----------------------------------------------------------------------------- eval


@dataclass(frozen=True)
class MaterialConfig:
    """Piece values as [midgame, endgame] pairs, in centipawns."""

    pawn: tuple[int, int] = _pair(100, 130, "Pawn value [mg, eg] (centipawns).")
    knight: tuple[int, int] = _pair(320, 300, "Knight value [mg, eg] (centipawns).")
    bishop: tuple[int, int] = _pair(330, 320, "Bishop value [mg, eg] (centipawns).")
    rook: tuple[int, int] = _pair(470, 520, "Rook value [mg, eg] (centipawns).")
    queen: tuple[int, int] = _pair(950, 980, "Queen value [mg, eg] (centipawns).")


@dataclass(frozen=True)
class PstConfig:
    """Piece-square tables in centipawns, from White's point of view: 64 values, a8
    first and h1 last (the board as printed with White at the bottom). Black uses the
    same tables mirrored vertically. These starting tables are BlitzACO's own, made
    from simple rules (centralisation, pawn advance, king shelter in the midgame and
    king activity in the endgame), for the tuner to improve."""

    pawn_mg: tuple[int, ...] = _table(
        "Pawn, midgame.",
           0,    0,    0,    0,    0,    0,    0,    0,
          36,   36,   60,   60,   60,   60,   36,   36,
          24,   24,   40,   40,   40,   40,   24,   24,
          13,   13,   22,   22,   22,   22,   13,   13,
           6,    6,   10,   20,   20,   10,    6,    6,
           2,    2,    4,   10,   10,    4,    2,    2,
           0,    0,    0,  -12,  -12,    6,    6,    6,
           0,    0,    0,    0,    0,    0,    0,    0,
    )
    pawn_eg: tuple[int, ...] = _table(
        "Pawn, endgame.",
           0,    0,    0,    0,    0,    0,    0,    0,
          92,   92,   92,   92,   92,   92,   92,   92,
          56,   56,   56,   56,   56,   56,   56,   56,
          32,   32,   32,   32,   32,   32,   32,   32,
          16,   16,   16,   16,   16,   16,   16,   16,
           6,    6,    6,    6,    6,    6,    6,    6,
           0,    0,    0,    0,    0,    0,    0,    0,
           0,    0,    0,    0,    0,    0,    0,    0,
    )
    knight_mg: tuple[int, ...] = _table(
        "Knight, midgame.",
         -48,  -37,  -26,  -15,  -15,  -26,  -37,  -48,
         -37,  -26,  -15,   -4,   -4,  -15,  -26,  -37,
         -22,  -11,    0,   11,   11,    0,  -11,  -22,
         -11,    0,   11,   22,   22,   11,    0,  -11,
         -11,    0,   11,   22,   22,   11,    0,  -11,
         -22,  -11,    0,   11,   11,    0,  -11,  -22,
         -37,  -26,  -15,   -4,   -4,  -15,  -26,  -37,
         -48,  -45,  -26,  -15,  -15,  -26,  -45,  -48,
    )
    knight_eg: tuple[int, ...] = _table(
        "Knight, endgame.",
         -40,  -31,  -22,  -13,  -13,  -22,  -31,  -40,
         -31,  -22,  -13,   -4,   -4,  -13,  -22,  -31,
         -22,  -13,   -4,    5,    5,   -4,  -13,  -22,
         -13,   -4,    5,   14,   14,    5,   -4,  -13,
         -13,   -4,    5,   14,   14,    5,   -4,  -13,
         -22,  -13,   -4,    5,    5,   -4,  -13,  -22,
         -31,  -22,  -13,   -4,   -4,  -13,  -22,  -31,
         -40,  -31,  -22,  -13,  -13,  -22,  -31,  -40,
    )
    bishop_mg: tuple[int, ...] = _table(
        "Bishop, midgame.",
         -16,  -17,  -12,   -7,   -7,  -12,  -17,  -16,
         -17,   -6,   -7,   -2,   -2,   -7,   -6,  -17,
         -12,   -7,    4,    3,    3,    4,   -7,  -12,
          -7,   -2,    3,   14,   14,    3,   -2,   -7,
          -7,   -2,    3,   14,   14,    3,   -2,   -7,
         -12,   -7,    4,    3,    3,    4,   -7,  -12,
         -17,   -6,   -7,   -2,   -2,   -7,   -6,  -17,
         -22,  -23,  -18,  -13,  -13,  -18,  -23,  -22,
    )
    bishop_eg: tuple[int, ...] = _table(
        "Bishop, endgame.",
         -22,  -17,  -12,   -7,   -7,  -12,  -17,  -22,
         -17,  -12,   -7,   -2,   -2,   -7,  -12,  -17,
         -12,   -7,   -2,    3,    3,   -2,   -7,  -12,
          -7,   -2,    3,    8,    8,    3,   -2,   -7,
          -7,   -2,    3,    8,    8,    3,   -2,   -7,
         -12,   -7,   -2,    3,    3,   -2,   -7,  -12,
         -17,  -12,   -7,   -2,   -2,   -7,  -12,  -17,
         -22,  -17,  -12,   -7,   -7,  -12,  -17,  -22,
    )
    rook_mg: tuple[int, ...] = _table(
        "Rook, midgame.",
          -4,    0,    0,    6,    6,    0,    0,   -4,
          16,   20,   20,   26,   26,   20,   20,   16,
          -4,    0,    0,    6,    6,    0,    0,   -4,
          -4,    0,    0,    6,    6,    0,    0,   -4,
          -4,    0,    0,    6,    6,    0,    0,   -4,
          -4,    0,    0,    6,    6,    0,    0,   -4,
          -4,    0,    0,    6,    6,    0,    0,   -4,
          -4,    0,    0,    6,    6,    0,    0,   -4,
    )
    rook_eg: tuple[int, ...] = _table(
        "Rook, endgame.",
           0,    0,    0,    0,    0,    0,    0,    0,
          10,   10,   10,   10,   10,   10,   10,   10,
           0,    0,    0,    0,    0,    0,    0,    0,
           0,    0,    0,    0,    0,    0,    0,    0,
           0,    0,    0,    0,    0,    0,    0,    0,
           0,    0,    0,    0,    0,    0,    0,    0,
           0,    0,    0,    0,    0,    0,    0,    0,
           0,    0,    0,    0,    0,    0,    0,    0,
    )
    queen_mg: tuple[int, ...] = _table(
        "Queen, midgame.",
         -20,  -17,  -14,  -11,  -11,  -14,  -17,  -20,
         -17,  -14,  -11,   -8,   -8,  -11,  -14,  -17,
         -14,  -11,   -8,   -5,   -5,   -8,  -11,  -14,
          -5,   -2,    1,    4,    4,    1,   -2,   -5,
          -5,   -2,    1,    4,    4,    1,   -2,   -5,
          -8,   -5,   -2,    1,    1,   -2,   -5,   -8,
         -11,   -8,   -5,   -2,   -2,   -5,   -8,  -11,
         -14,  -11,   -8,   -5,   -5,   -8,  -11,  -14,
    )
    queen_eg: tuple[int, ...] = _table(
        "Queen, endgame.",
         -24,  -18,  -12,   -6,   -6,  -12,  -18,  -24,
         -18,  -12,   -6,    0,    0,   -6,  -12,  -18,
         -12,   -6,    0,    6,    6,    0,   -6,  -12,
          -6,    0,    6,   12,   12,    6,    0,   -6,
          -6,    0,    6,   12,   12,    6,    0,   -6,
         -12,   -6,    0,    6,    6,    0,   -6,  -12,
         -18,  -12,   -6,    0,    0,   -6,  -12,  -18,
         -24,  -18,  -12,   -6,   -6,  -12,  -18,  -24,
    )
    king_mg: tuple[int, ...] = _table(
        "King, midgame.",
         -70,  -74,  -78,  -82,  -82,  -78,  -74,  -70,
         -60,  -64,  -68,  -72,  -72,  -68,  -64,  -60,
         -50,  -54,  -58,  -62,  -62,  -58,  -54,  -50,
         -40,  -44,  -48,  -52,  -52,  -48,  -44,  -40,
         -30,  -34,  -38,  -42,  -42,  -38,  -34,  -30,
         -20,  -24,  -28,  -32,  -32,  -28,  -24,  -20,
           8,    8,   -8,  -18,  -18,   -8,    8,    8,
          18,   28,    8,   -6,   -6,    8,   28,   18,
    )
    king_eg: tuple[int, ...] = _table(
        "King, endgame.",
         -38,  -27,  -16,   -5,   -5,  -16,  -27,  -38,
         -27,  -16,   -5,    6,    6,   -5,  -16,  -27,
         -16,   -5,    6,   17,   17,    6,   -5,  -16,
          -5,    6,   17,   28,   28,   17,    6,   -5,
          -5,    6,   17,   28,   28,   17,    6,   -5,
         -16,   -5,    6,   17,   17,    6,   -5,  -16,
         -27,  -16,   -5,    6,    6,   -5,  -16,  -27,
         -38,  -27,  -16,   -5,   -5,  -16,  -27,  -38,
    )


@dataclass(frozen=True)
class EvalConfig:
    """The tapered evaluation. Phase counts knights and bishops 1, rooks 2 and queens 4
    (24 = all pieces on the board); the score blends midgame and endgame by phase."""

    material: MaterialConfig = _section(MaterialConfig)
    pst: PstConfig = _section(PstConfig)


# ----------------------------------------------------------------------------- root


@dataclass(frozen=True)
class Config:
    """All of BlitzACO's tunable numbers."""

    search: SearchConfig = _section(SearchConfig)
    time: TimeConfig = _section(TimeConfig)
    book: BookConfig = _section(BookConfig)
    analyse: AnalyseConfig = _section(AnalyseConfig)
    eval: EvalConfig = _section(EvalConfig)


# ------------------------------------------------------------------------- loading


def load_config(path: str | Path) -> Config:
    """Read a TOML file into a :class:`Config`.

    Raises :class:`ConfigError` for a file that cannot be read or parsed, an unknown
    key, or a value of the wrong type or out of range; the message names the key.
    """
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path} is not valid TOML: {err}") from None
    return config_from_dict(data)


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
        return json.dumps(value)
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
