"""The labelled position set for the Texel fitness, from the engine's own games.

1. :func:`selfplay` plays the engine against itself at fixed nodes (through the match
   runner) from openings made of a line of the engine's opening database cut at a
   random length plus a few random moves, so that no two games are alike; the
   games go to a PGN file.
2. :func:`extract` keeps the quiet positions of those games (not in check, no
   capture or promotion that wins material by static exchange), labels each with the
   game's result, and stores the evaluation's feature trace of each: the counts
   (White's minus Black's) of every weight it uses, and the midgame and endgame sums,
   phase and endgame scale at the weights it was made with. The set is a ``.npz``
   file; :class:`PositionSet` reads it.

No data is downloaded: the positions are the engine's own.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import numpy as np

from blitzaco.classical import Classical
from blitzaco.config import Config, dump_toml
from blitzaco.tools.match.runner import EngineSpec, MatchLimit, MatchReport, play_match
from blitzaco.tools.tune.sources import is_quiet, tuning_openings
from blitzaco.trace import classical_trace

__all__ = ["tuning_openings", "selfplay", "extract", "extract_labels", "is_quiet", "PositionSet", "RESULTS"]

RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def selfplay(
    pgn_path: str | Path,
    games: int,
    *,
    nodes: int = 1000,
    concurrency: int = 1,
    config: Config | None = None,
    seed: int = 1,
    engine: tuple[str, ...] = (sys.executable, "-m", "blitzaco"),
    progress: Callable[[str], None] | None = None,
) -> MatchReport:
    """Play *games* games of the engine (with *config*, default the built-in one)
    against itself at *nodes* per move, book off, into *pgn_path*. Each game has
    its own opening: two identical engines at fixed nodes replay a game move for move
    when the colours are swapped."""
    pgn_path = Path(pgn_path)
    pgn_path.parent.mkdir(parents=True, exist_ok=True)
    options: list[tuple[str, object]] = [("OwnBook", False)]
    if config is not None:
        config_path = pgn_path.with_suffix(".toml")
        config_path.write_text(dump_toml(config))
        options.append(("ConfigFile", str(config_path)))
    first = EngineSpec("BlitzACO-A", engine, tuple(options))
    second = EngineSpec("BlitzACO-B", engine, tuple(options))
    openings = tuning_openings(2 * ((games + 1) // 2), seed)
    return play_match(first, second, openings, MatchLimit(nodes=nodes), games, concurrency=concurrency,
                      pgn_path=pgn_path, progress=progress, opening_per_game=True)


def _games(pgn_path: Path) -> Iterator[chess.pgn.Game]:
    with open(pgn_path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            yield game


def _positions(game: chess.pgn.Game, skip: int) -> Iterator[tuple[chess.Board, float]]:
    result = RESULTS.get(game.headers.get("Result", "*"))
    if result is None:
        return
    board = game.board()
    for ply, move in enumerate(game.mainline_moves()):
        board.push(move)
        if ply + 1 >= skip and not board.is_game_over() and is_quiet(board):
            yield board.copy(stack=False), result


def extract(pgn_paths: list[str | Path], out: str | Path, *, config: Config | None = None, skip: int = 10,
            seed: int = 1, progress: Callable[[int], None] | None = None) -> int:
    """Write the quiet positions of the games in *pgn_paths* (after *skip* plies)
    with their feature traces at *config*'s weights to *out* (``.npz``), each
    labelled with its game's result. Returns the number of positions.

    The games are stored in an order shuffled by *seed*, the positions of each game
    together: the last share that :meth:`PositionSet.split` holds out is then a
    random sample of the games, not the last file (a set made of several matches
    would otherwise be tested on one match's conditions only)."""
    games = [game for path in pgn_paths for game in _games(Path(path))]
    random.Random(seed).shuffle(games)
    samples = (sample for game in games for sample in _positions(game, skip))
    return _write_set(samples, out, config if config is not None else Config(), progress)


def extract_labels(label_path: str | Path, out: str | Path, *, config: Config | None = None,
                   lam: float | None = None, scale: float | None = None, limit: int = 0,
                   progress: Callable[[int], None] | None = None) -> int:
    """Write the positions of a Stockfish label file (``tune.py label``) with their
    feature traces at *config*'s weights to *out* (``.npz``), as :func:`extract`
    does for games. Each position's label is the network trainer's target,
    :func:`~blitzaco.tools.tune.labels.target` (White's view; *lam* and *scale*
    default to its), an expected result between 0 and 1 like a game's result. The label file keeps the
    positions of a game together and its games in the order a seeded run played
    them, so the share :meth:`PositionSet.split` holds out is whole games. Returns
    the number of positions (at most *limit*, when it is not 0)."""
    from blitzaco.tools.tune.labels import TARGET_LAM, TARGET_SCALE, known_result, read_labels, target

    blend = TARGET_LAM if lam is None else lam
    sigmoid_scale = TARGET_SCALE if scale is None else scale

    def samples() -> Iterator[tuple[chess.Board, float]]:
        for count, record in enumerate(read_labels(label_path)):
            if limit and count >= limit:
                return
            white = record.score if record.board.turn else -record.score
            result = known_result(white, record.result, sigmoid_scale)
            yield record.board, float(target(white, result, blend, sigmoid_scale))

    return _write_set(samples(), out, config if config is not None else Config(), progress)


def _write_set(samples: Iterable[tuple[chess.Board, float]], out: str | Path, config: Config,
               progress: Callable[[int], None] | None) -> int:
    """Trace every (board, label) of *samples* at *config*'s weights into *out*: the
    features as the evaluator on the engine's own board counts them."""
    classical = Classical(config.eval)
    tempo = config.eval.tempo
    names: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[int] = []
    results: list[float] = []
    phases: list[int] = []
    scales: list[int] = []
    mgs: list[int] = []
    egs: list[int] = []
    fens: list[str] = []
    for board, result in samples:
        trace = classical_trace(board, classical)
        row = len(results)
        for name, (white, black) in trace.features.items():
            if white != black:
                rows.append(row)
                cols.append(names.setdefault(name, len(names)))
                vals.append(white - black)
        sign = 1 if board.turn == chess.WHITE else -1
        results.append(result)
        phases.append(trace.phase)
        scales.append(trace.scale)
        mgs.append(trace.mg + sign * tempo[0])  # tempo is a feature like the others
        egs.append(trace.eg + sign * tempo[1])
        fens.append(board.fen())
        if progress is not None and len(results) % 1000 == 0:
            progress(len(results))
    np.savez_compressed(
        out,
        names=np.array(sorted(names, key=names.__getitem__)),
        rows=np.array(rows, dtype=np.int32),
        cols=np.array(cols, dtype=np.int32),
        vals=np.array(vals, dtype=np.int32),
        result=np.array(results, dtype=np.float32),
        phase=np.array(phases, dtype=np.int8),
        scale=np.array(scales, dtype=np.int8),
        mg=np.array(mgs, dtype=np.int32),
        eg=np.array(egs, dtype=np.int32),
        fen=np.array(fens),
        config=np.array(dump_toml(config)),
    )
    return len(results)


@dataclass
class PositionSet:
    """A labelled position set as :func:`extract` wrote it."""

    names: list[str]
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    result: np.ndarray
    phase: np.ndarray
    scale: np.ndarray
    mg: np.ndarray
    eg: np.ndarray
    fen: np.ndarray
    config_toml: str

    @classmethod
    def load(cls, path: str | Path, limit: int = 0) -> PositionSet:
        data = np.load(path, allow_pickle=False)
        count = len(data["result"])
        keep = count if not limit else min(limit, count)
        mask = data["rows"] < keep
        return cls(
            [str(name) for name in data["names"]],
            data["rows"][mask], data["cols"][mask], data["vals"][mask],
            data["result"][:keep], data["phase"][:keep], data["scale"][:keep],
            data["mg"][:keep], data["eg"][:keep], data["fen"][:keep], str(data["config"]),
        )

    def __len__(self) -> int:
        return len(self.result)

    def split(self, held_out: float) -> tuple[PositionSet, PositionSet]:
        """(first part, last *held_out* share) of the positions. The positions of a
        game are stored together, so the two parts share at most one game, and the
        games in shuffled order, so the last share is a random sample of them."""
        cut = len(self) - int(round(len(self) * held_out))
        first, last = self.rows < cut, self.rows >= cut

        def part(mask: np.ndarray, rows: np.ndarray, window: slice) -> PositionSet:
            return PositionSet(
                self.names, rows, self.cols[mask], self.vals[mask], self.result[window], self.phase[window],
                self.scale[window], self.mg[window], self.eg[window], self.fen[window], self.config_toml,
            )

        return (part(first, self.rows[first], slice(0, cut)),
                part(last, self.rows[last] - cut, slice(cut, len(self))))

    def dense(self, features: list[str]) -> np.ndarray:
        """The counts of *features* (columns; a name may repeat, as a midgame and an
        endgame gene share their feature) for every position (rows); a feature that
        never occurs is a column of zeros."""
        index = {name: i for i, name in enumerate(self.names)}
        # One scatter into a column per stored feature (the last one: never
        # occurs), then the wanted columns picked, repeats included.
        counts = np.zeros((len(self), len(self.names) + 1), dtype=np.float32)
        counts[self.rows, self.cols] = self.vals
        return counts[:, [index.get(name, len(self.names)) for name in features]]
