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

from blitzaco.bundled import read_user_file

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
    "WdlConfig",
    "LevelsConfig",
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


def _pairs(doc: str, *pairs: tuple[int, int]) -> Any:
    """A table of midgame/endgame pairs indexed by a count or a rank, written
    ``[[mg, eg], ...]`` in TOML; its length is fixed."""
    return field(default=tuple(pairs), metadata={"doc": doc, "pairs": len(pairs)})


def _ints(doc: str, *values: int) -> Any:
    """A short fixed-length list of integers."""
    return field(default=tuple(values), metadata={"doc": doc, "length": len(values)})


def _floats(doc: str, *values: float) -> Any:
    """A short fixed-length list of numbers."""
    return field(default=tuple(values), metadata={"doc": doc, "floats": len(values)})


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
    aspiration_widest: int = _param(
        1000, "Once the doubled half-width passes this (centipawns), the window opens fully: a score that far off "
        "is better found at once than by more re-searches.", lo=1, hi=100000
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
        200, "The reduction grows by one ply per this many centipawns the static evaluation exceeds beta (at most "
        "null_move_eval_max plies).",
        lo=1, hi=10000,
    )
    null_move_eval_max: int = _param(
        3, "Most plies the null-move reduction grows by for the static evaluation's margin over beta.", lo=0, hi=20
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
        False, "Late-move pruning: at shallow depth skip the quiet moves that come after the first "
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
        False, "Search one ply shallower where the table has no move to try first."
    )
    iir_min_depth: int = _param(4, "Smallest depth where internal iterative reduction applies (plies).", lo=1, hi=100)
    see_ordering: bool = _param(
        True, "Order captures that lose material (by static exchange evaluation) after the quiet moves."
    )
    qsearch_see_pruning: bool = _param(True, "Skip captures that lose material in the quiescence search.")
    delta_pruning: bool = _param(
        False, "Skip quiescence captures that cannot lift the score to alpha even with a margin."
    )
    delta_margin: int = _param(200, "Delta-pruning margin over the captured piece (centipawns).", lo=0, hi=10000)
    killers: bool = _param(True, "Try two quiet moves that caused cutoffs at the same ply early.")
    counter_moves: bool = _param(False, "Try the quiet move that last refuted the opponent's previous move early.")
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
    adaptive: bool = _param(
        False,
        "Scale the soft limit after each iteration by how unsure the search is (the factors below), answer "
        "a single legal move after a shallow search, and on ponderhit count the time spent pondering. Off until "
        "a match shows it wins.",
    )
    instability_gain: float = _param(
        1.0, "The soft limit grows by this fraction per recent change of the best move (changes halve each "
        "iteration, as Stockfish counts them).", lo=0.0, hi=10.0,
    )
    falling_cp: float = _param(
        100.0, "The soft limit grows by 1/falling_cp per centipawn the score fell below the mean of the earlier "
        "iterations' scores (and shrinks as it rose).", lo=1.0, hi=10000.0,
    )
    falling_min: float = _param(0.7, "Smallest factor for a rising score.", lo=0.1, hi=1.0)
    falling_max: float = _param(1.6, "Largest factor for a falling score.", lo=1.0, hi=10.0)
    stable_share: float = _param(
        0.85, "When the best move took at least this share of an iteration's nodes ...", lo=0.0, hi=1.0
    )
    stable_iterations: int = _param(4, "... and has stayed best this many iterations ...", lo=1, hi=100)
    stable_factor: float = _param(0.6, "... the soft limit is multiplied by this.", lo=0.05, hi=1.0)
    scale_min: float = _param(0.3, "The soft limit's factor is kept at least this ...", lo=0.01, hi=1.0)
    scale_max: float = _param(2.5, "... and at most this (the hard limit bounds it anyway).", lo=1.0, hi=10.0)
    single_move_depth: int = _param(
        4, "With one legal move and a clock, the search stops at this depth (plies): enough for a score and a "
        "ponder move.", lo=1, hi=64,
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
class LevelsConfig:
    """Strength levels (``Skill Level`` 0-20, ``UCI_LimitStrength`` with ``UCI_Elo``).
    A level below 20 searches its pick_lines best lines to level_depth[level] plies
    (never more than level_nodes[level] nodes), then picks among them as Stockfish's
    Skill does: each line's score gets a random push growing with the level's
    weakness (120 - 2 * level) and the largest wins. UCI_Elo chooses the level by interpolating elo_of_level. Not yet
    calibrated against Stockfish's UCI_Elo: the Elo table is a first guess."""

    level_depth: tuple[int, ...] = _ints(
        "Depth of the search at levels 0..19 (plies; level 20 is full strength).",
        1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 10, 11, 12,
    )
    level_nodes: tuple[int, ...] = _ints(
        "Most nodes a move searches at levels 0..19, a cap for explosive positions.",
        20000, 26000, 34000, 44000, 57000, 74000, 97000, 125000, 163000, 212000, 276000, 358000, 466000, 606000,
        787000, 1024000, 1331000, 1730000, 2249000, 2924000,
    )
    pick_lines: int = _param(4, "Lines searched to pick from below level 20.", lo=1, hi=16)
    safe_level: int = _param(
        3, "From this level up, a mate in one is never missed and no move more than blunder_cp worse than the "
        "best is picked.", lo=0, hi=20,
    )
    blunder_cp: int = _param(500, "See safe_level (centipawns).", lo=1, hi=10000)
    elo_of_level: tuple[int, ...] = _ints(
        "The UCI_Elo each level 0..20 plays at: a first guess, even steps from 800 to full strength's 1750 "
        "(20 % against Stockfish 15.1 at UCI_Elo 1900 before this session's speed-up), until calibrated.",
        800, 848, 895, 943, 990, 1038, 1085, 1133, 1180, 1228, 1275, 1323, 1370, 1418, 1465, 1513, 1560, 1608,
        1655, 1703, 1750,
    )


@dataclass(frozen=True)
class WdlConfig:
    """The win/draw/loss model of ``UCI_ShowWDL`` (:mod:`blitzaco.wdl`): with x the
    material on the board (pawn 1, minor 3, rook 5, queen 9, both sides, in
    [17, 78]) over 58, the score of an even game is a(x) and its spread b(x), each a
    cubic a0 x^3 + a1 x^2 + a2 x + a3 in centipawns. Fitted by scripts/fit_wdl.py to
    the engine's own games."""

    a: tuple[float, ...] = _floats(
        "a(x): the score at which a win and a draw are equally likely (cp), cubic coefficients a0..a3.",
        -790.58, 2447.04, -2447.66, 892.89,
    )
    b: tuple[float, ...] = _floats(
        "b(x): how fast the win chance grows with the score (cp), cubic coefficients b0..b3.",
        93.40, 54.08, -256.32, 255.15,
    )


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
class PawnConfig:
    """Pawn structure, [midgame, endgame] pairs in centipawns per pawn (negative:
    a penalty). Ranks are counted from the pawn's own side (index 0 = first rank)."""

    doubled: tuple[int, int] = _pair(-10, -25, "A pawn with another pawn of its colour behind it on its file.")
    isolated: tuple[int, int] = _pair(-12, -16, "A pawn with no pawn of its colour on the neighbouring files.")
    backward: tuple[int, int] = _pair(
        -8, -12, "A pawn whose neighbours are all ahead of it and whose square in front an enemy pawn attacks "
        "(not counted when isolated)."
    )
    supported: tuple[int, int] = _pair(8, 6, "A pawn defended by a pawn of its colour (connected).")
    phalanx: tuple[int, int] = _pair(6, 4, "A pawn with a pawn of its colour beside it on the same rank.")
    passed: tuple[tuple[int, int], ...] = _pairs(
        "A passed pawn (no enemy pawn ahead of it on its file or the neighbouring files), by rank.",
        (0, 0), (4, 10), (6, 16), (14, 30), (30, 55), (55, 95), (90, 150), (0, 0),
    )
    passed_free: tuple[tuple[int, int], ...] = _pairs(
        "Added for a passed pawn whose path to promotion is empty, by rank.",
        (0, 0), (0, 0), (0, 4), (4, 12), (10, 28), (20, 50), (30, 80), (0, 0),
    )
    passed_enemy_king: tuple[int, int] = _pair(
        0, 5, "A passed pawn, per square of distance between the enemy king and the square in front of it, times "
        "(rank - 2) for pawns beyond the third rank."
    )
    passed_own_king: tuple[int, int] = _pair(
        0, -2, "A passed pawn, per square of distance between its own king and the square in front of it, times "
        "(rank - 2)."
    )


@dataclass(frozen=True)
class PieceConfig:
    """Pieces: mobility, files, outposts, the bishop pair, and threats; [midgame,
    endgame] pairs in centipawns. Mobility counts the squares a piece attacks that are
    not occupied by its own pawns or king and not attacked by enemy pawns."""

    bishop_pair: tuple[int, int] = _pair(30, 50, "Both bishops (per side that has them).")
    mobility_knight: tuple[tuple[int, int], ...] = _pairs(
        "Knight, by number of safe squares (0-8).",
        (-28, -40), (-16, -25), (-6, -12), (0, -3), (5, 3), (10, 8), (14, 12), (17, 15), (20, 17),
    )
    mobility_bishop: tuple[tuple[int, int], ...] = _pairs(
        "Bishop, by number of safe squares (0-13).",
        (-25, -40), (-14, -25), (-4, -12), (2, -3), (8, 4), (13, 10), (17, 15), (21, 19), (24, 23), (27, 26),
        (29, 28), (31, 30), (33, 32), (35, 34),
    )
    mobility_rook: tuple[tuple[int, int], ...] = _pairs(
        "Rook, by number of safe squares (0-14).",
        (-20, -40), (-12, -22), (-6, -8), (-2, 2), (0, 10), (3, 18), (6, 25), (9, 31), (12, 36), (14, 40),
        (16, 44), (18, 47), (19, 49), (20, 51), (21, 52),
    )
    mobility_queen: tuple[tuple[int, int], ...] = _pairs(
        "Queen, by number of safe squares (0-27).",
        (-15, -30), (-10, -20), (-6, -12), (-3, -6), (0, -1), (2, 3), (4, 7), (6, 11), (8, 15), (9, 18),
        (10, 21), (11, 24), (12, 26), (13, 28), (14, 30), (15, 32), (16, 34), (17, 36), (18, 38), (19, 40),
        (20, 41), (21, 42), (22, 43), (23, 44), (24, 45), (25, 46), (26, 47), (27, 48),
    )
    rook_open_file: tuple[int, int] = _pair(25, 10, "A rook on a file without pawns.")
    rook_semi_open_file: tuple[int, int] = _pair(12, 6, "A rook on a file without pawns of its colour only.")
    rook_seventh: tuple[int, int] = _pair(
        15, 25, "A rook on the seventh rank while the enemy king is on the eighth or enemy pawns are on the seventh."
    )
    knight_outpost: tuple[int, int] = _pair(
        25, 12, "A knight on the fourth to sixth rank, defended by a pawn, where no enemy pawn can ever attack it."
    )
    bishop_outpost: tuple[int, int] = _pair(12, 5, "A bishop on such an outpost square.")
    threat_by_pawn: tuple[int, int] = _pair(50, 35, "A knight, bishop, rook or queen attacked by an enemy pawn.")
    threat_by_minor: tuple[int, int] = _pair(30, 20, "A rook or queen attacked by an enemy knight or bishop.")
    threat_by_rook: tuple[int, int] = _pair(25, 15, "A queen attacked by an enemy rook.")
    hanging: tuple[int, int] = _pair(
        20, 12, "A knight, bishop, rook or queen attacked by the enemy and defended by nothing."
    )


@dataclass(frozen=True)
class KingConfig:
    """King safety. The king zone is the king's square and the squares next to it.
    Each enemy piece attacking the zone adds its weight per zone square it attacks;
    the sum, times attacker_scale[number of attacking pieces] / 100, is the midgame
    penalty (and endgame_share percent of it the endgame penalty)."""

    shield: tuple[int, int] = _pair(
        12, 0, "A pawn of the king's colour on the king's file or a neighbouring one, one or two ranks in front of it."
    )
    semi_open_file: tuple[int, int] = _pair(
        -15, 0, "A file at or next to the king without pawns of the king's colour (but with enemy pawns)."
    )
    open_file: tuple[int, int] = _pair(-25, 0, "A file at or next to the king without any pawns.")
    attack_weight: tuple[int, ...] = _ints(
        "Weight of an attacked zone square by attacker: knight, bishop, rook, queen (centipawns).", 8, 8, 12, 20
    )
    attacker_scale: tuple[int, ...] = _ints(
        "Share of the summed weights counted, by number of attacking pieces 0-7 (percent).",
        0, 0, 50, 75, 88, 94, 97, 99,
    )
    endgame_share: int = _param(
        10, "The endgame penalty as a share of the midgame penalty (percent).", lo=0, hi=100
    )


@dataclass(frozen=True)
class ScaleConfig:
    """Endgames where the side ahead often cannot win: its endgame score is multiplied
    by factor / 64."""

    opposite_bishops: int = _param(
        32, "Bishops of opposite colours and no other pieces (pawns besides) (sixty-fourths).", lo=0, hi=64
    )
    opposite_bishops_with_pieces: int = _param(
        52, "Bishops of opposite colours with other pieces too (sixty-fourths).", lo=0, hi=64
    )
    no_pawns: int = _param(
        10, "The side ahead has no pawns and at most a bishop's worth more pieces (sixty-fourths).", lo=0, hi=64
    )
    no_pawns_minor: int = _param(
        0, "As no_pawns, when the side ahead has less than a rook's worth of pieces (sixty-fourths).", lo=0, hi=64
    )


@dataclass(frozen=True)
class SpectralConfig:
    """Spectral terms: features of the Laplacian and adjacency spectra of each side's
    attack and defence graph (see blitzaco/spectral.py). The advantage is the sum of
    weight * (White's feature - Black's feature), in centipawns, added to the
    evaluation for both phases. The weights were fitted to what the classical
    evaluation misses against Stockfish (scripts/fit_spectral.py)."""

    enabled: bool = _param(False, "Add the spectral advantage to the evaluation (needs numpy).")
    min_depth: int = _param(
        4, "Compute the advantage only at nodes with at least this many plies left; the nodes below use their "
        "ancestor's value (plies).", lo=0, hi=100,
    )
    connectivity: float = _param(62.2, "Weight of the algebraic connectivity (centipawns per unit).", lo=-1e4, hi=1e4)
    gap: float = _param(-16.2, "Weight of the adjacency spectral gap (centipawns per unit).", lo=-1e4, hi=1e4)
    radius: float = _param(7.1, "Weight of the adjacency spectral radius (centipawns per unit).", lo=-1e4, hi=1e4)
    entropy: float = _param(-89.9, "Weight of the Laplacian spectral entropy (centipawns per nat).", lo=-1e4, hi=1e4)
    cohesion: float = _param(
        57.9, "Weight of the Fiedler-vector cohesion of the side's pieces (centipawns per unit, 0-1).", lo=-1e4, hi=1e4
    )
    clusters: float = _param(-29.8, "Weight of the number of connected clusters (centipawns each).", lo=-1e4, hi=1e4)
    king_centrality: float = _param(
        -18.2, "Weight of the eigenvector centrality of the enemy king's neighbourhood (centipawns per unit).",
        lo=-1e4, hi=1e4,
    )


@dataclass(frozen=True)
class EvalConfig:
    """The tapered evaluation. Phase counts knights and bishops 1, rooks 2 and queens 4
    (24 = all pieces on the board); the score blends midgame and endgame by phase."""

    classical: bool = _param(
        True, "Evaluate pawn structure, pieces, king safety, threats, tempo and drawish endgames; false: material "
        "and piece-square tables only."
    )
    tempo: tuple[int, int] = _pair(15, 5, "For the side to move (centipawns).")
    material: MaterialConfig = _section(MaterialConfig)
    pst: PstConfig = _section(PstConfig)
    pawns: PawnConfig = _section(PawnConfig)
    pieces: PieceConfig = _section(PieceConfig)
    king: KingConfig = _section(KingConfig)
    scale: ScaleConfig = _section(ScaleConfig)
    spectral: SpectralConfig = _section(SpectralConfig)


# ------------------------------------------------------------------------ pheromone


@dataclass(frozen=True)
class ColonyConfig:
    """Colony training (``blitzaco colony``): ants are self-play games from a given
    move history; each move is drawn with probability proportional to
    (trail + trail_floor)^alpha * exp((score - best) / temperature)^beta, where score is
    a shallow search's score of the move. After an ant's game every move is reinforced
    by ant_deposit * (2 * result - 1) for the side that played it (result 1 won, 0.5
    drawn, 0 lost; games cut at max_plies are scored by the expected result of a
    search's score)."""

    alpha: float = _param(1.0, "Exponent of the trail in the move choice.", lo=0.0, hi=10.0)
    beta: float = _param(2.0, "Exponent of the heuristic in the move choice.", lo=0.0, hi=10.0)
    temperature: float = _param(
        60.0, "Centipawns below the best move at which the heuristic falls by a factor e.", lo=1.0, hi=10000.0
    )
    trail_floor: float = _param(0.05, "Added to every trail in the move choice, so unmarked moves are tried.",
                                lo=0.0, hi=10.0)
    ant_deposit: float = _param(0.2, "Pheromone laid (or removed) per move of a won (or lost) game.",
                                lo=0.0, hi=10.0)
    max_plies: int = _param(40, "An ant's game is cut after this many plies (plies).", lo=1, hi=1000)
    score_depth: int = _param(1, "Depth of the search that scores each candidate move (plies).", lo=1, hi=10)
    result_depth: int = _param(4, "Depth of the search that scores a cut game (plies).", lo=1, hi=20)
    ants_per_generation: int = _param(
        8, "Ants between two evaporations of the memory being trained.", lo=1, hi=100000
    )


@dataclass(frozen=True)
class PheromoneConfig:
    """The ant-colony memory of moves (see blitzaco/pheromone.py). Trails are kept per
    position and move, as levels between 0 and max_level. After each iteration the best
    line lays pheromone on its moves; every search evaporates all trails by the factor
    evaporation. The memory has a long-term part (loaded from the PheromoneFile, kept
    across games) and a per-game part (cleared by ucinewgame)."""

    enabled: bool = _param(
        False, "Keep the memory: lay trails, and use them for move ordering and evaluation. Off by default: at "
        "10 s + 0.1 s it scored -10.4 +/- 35.8 Elo against the engine without it (200 games; README)."
    )
    evaporation: float = _param(0.95, "Factor applied to every trail at each search.", lo=0.0, hi=1.0)
    deposit: float = _param(
        0.1, "Pheromone laid on the first move of the best line after each iteration.", lo=0.0, hi=10.0
    )
    deposit_decay: float = _param(
        0.8, "Each further move of the best line gets this share of the previous one's deposit.", lo=0.0, hi=1.0
    )
    max_level: float = _param(1.0, "Upper bound of a trail.", lo=0.001, hi=1000.0)
    min_level: float = _param(0.01, "Trails below this are forgotten.", lo=0.0, hi=1000.0)
    ordering: bool = _param(
        True, "Order marked quiet moves (strongest trail first) after the killers and the counter-move."
    )
    eval_weight: int = _param(
        8, "Bonus for the side to move per unit of the strongest trail leaving the position (centipawns).",
        lo=-1000, hi=1000,
    )
    variety: bool = _param(
        False, "Choose the root move by roulette wheel over the trails among the moves within variety_margin of "
        "the best (the search then looks at variety_candidates lines; not in analysis)."
    )
    variety_candidates: int = _param(3, "Root moves considered for the roulette wheel (moves).", lo=2, hi=20)
    variety_margin: int = _param(15, "Largest loss against the best move of a roulette candidate (centipawns).",
                                 lo=0, hi=1000)
    variety_floor: float = _param(0.1, "Added to every candidate's trail on the wheel.", lo=0.001, hi=100.0)
    seed: int = _param(
        20261123, "Seed of the roulette wheel, set at start-up; 0: a new seed from the operating system.",
        lo=0, hi=2**63 - 1,
    )
    learning_rate: float = _param(
        0.5, "With the PheromoneLearning option, the per-game trails are added to the long-term memory times "
        "this at the end of a game (ucinewgame or quit), and the file is saved.", lo=0.0, hi=10.0,
    )
    colony: ColonyConfig = _section(ColonyConfig)


# ----------------------------------------------------------------------------- root


@dataclass(frozen=True)
class Config:
    """All of BlitzACO's tunable numbers."""

    search: SearchConfig = _section(SearchConfig)
    time: TimeConfig = _section(TimeConfig)
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
