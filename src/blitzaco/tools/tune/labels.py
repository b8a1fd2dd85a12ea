"""Stockfish-labelled positions: the data for tuning on strong labels and for the
network (``tune.py label``).

Games of Stockfish against itself at a fixed number of nodes per move, each from an
opening of its own (a line of the engine's opening database cut at a random length,
then a few random legal moves), label the positions they pass through with the score
of the search that played the move from them, as Stockfish's own data tools do, and
with the game's result. Nothing is downloaded; a label is Stockfish 15.1's opinion at
that node count, not the truth.

Kept are the quiet positions (:func:`~blitzaco.tools.tune.sources.is_quiet`: not
in check, no capture winning material by static exchange, no promotion) whose move
played is neither a capture nor a promotion, without a mate score. Games end by the
rules, or are adjudicated when both sides' scores stay past :data:`RESIGN_CP` for
:data:`RESIGN_PLIES` plies, or drawn after :data:`MAX_PLIES`.

Two kinds of label (``label``):

* ``search`` (the default): the score of the search that played the move, at
  ``nodes`` nodes (5,000 for the shipped nets): about 280 labels a second on the two
  cores at 1,000 nodes, 80 at 5,000;
* ``static``: Stockfish's static network evaluation (its ``eval`` command, the
  ``NNUE evaluation`` line) of each quiet position of games played at a few hundred
  nodes a move; the move played may be anything. A share of the moves
  (``random_moves``) is a random legal move instead of Stockfish's, and a share of
  the games (``chess960``) starts from a Chess960 position, so that the positions
  are more varied than a strong engine's games; and from each position where
  Stockfish moves, up to ``children`` random legal moves other than its own lead to
  positions labelled too (when quiet), without a game result (:data:`NO_RESULT`): the
  positions a search meets after a bad move, which its evaluation must judge, at
  the cost of an evaluation each instead of a move of the game. A Chess960 position is stored
  without its castling rights (the record keeps standard chess's four; no
  evaluation reads them). Cheap, so regenerated from the seed rather than kept.
  The evaluations come from Stockfish's own network, exported once a run
  (``export_net``) and evaluated here a game's positions at a time
  (:mod:`~blitzaco.tools.tune.stockfish_net`, checked against the ``eval`` command
  first: the same numbers, so the same file), or, where that network cannot be read
  (another Stockfish), through the pipe (``evaluator``).

Seeded and resumable: game *i* uses its own random generator (seed and *i*), the
games are written in their order, and a run that is stopped goes on from the last
game written (``OUT.json`` says where; it also names the seed, the nodes per move,
Stockfish's ``id name`` and the run's start date, which a network's training record
copies). Stockfish runs with one thread and a table
cleared for every game, so the same seed gives the same file. The games are played
on the engine's own board (generator 2, :mod:`~blitzaco.tools.tune.labelgame`) or,
for the files made before it, python-chess's (generator 1); a file's state names its
generator and a continued run keeps it.

The files (one record a position, and the packed form that is committed) are
:mod:`blitzaco.tools.tune.labelfile`'s.
"""

from __future__ import annotations

import contextlib
import functools
import json
import multiprocessing
import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.engine
import numpy as np

from blitzaco.system import environment, run_in_background
from blitzaco.tools.progress import progress_bar
from blitzaco.tools.tune.labelfile import (
    MAGIC,
    NO_RESULT,
    RECORD_BYTES,
    Record,
    count_labels,
    decode,
    encode,
    read_labels,
)
from blitzaco.tools.tune.labelgame import GENERATORS, LATEST_GENERATOR, ChessGame, Game, NativeGame, game_of
from blitzaco.tools.tune.sources import tuning_openings
from blitzaco.tools.tune.stockfish_net import NetMismatch, StockfishNet, record_codes
from blitzaco.tools.tune.stockfish_net import load as load_stockfish_net
from blitzaco.tools.tune.stockfish_pipe import Stockfish

__all__ = [
    "MAGIC", "RECORD_BYTES", "Record", "find_stockfish", "generate", "read_labels", "count_labels", "encode", "decode",
    "TARGET_LAM", "TARGET_SCALE", "target", "stockfish_name", "Stockfish", "NO_RESULT", "known_result",
]

#: Adjudication: a game is over when the side to move's score stays beyond this
#: (centipawns, either sign) for this many plies in a row.
RESIGN_CP = 1500
RESIGN_PLIES = 6
#: Games longer than this are drawn (plies).
MAX_PLIES = 300
#: Positions this close to the opening are not kept (plies of the game).
SKIP_PLIES = 8
#: What a label teaches (the network trainer, the Texel set, check-eval): this
#: share of Stockfish's win probability, its score through a sigmoid of
#: :data:`TARGET_SCALE` centipawns, plus the rest of the game's result.
TARGET_LAM = 0.75
TARGET_SCALE = 361.0


def find_stockfish() -> str | None:
    """Stockfish on ``PATH`` or where Debian puts it (``/usr/games``)."""
    found = shutil.which("stockfish")
    if found is None and Path("/usr/games/stockfish").is_file():
        found = "/usr/games/stockfish"
    return found


def stockfish_name(binary: str | None = None) -> str | None:
    """The ``id name`` of the Stockfish *binary* (default: :func:`find_stockfish`'s),
    or None when there is none or it does not start."""
    binary = binary or find_stockfish()
    if binary is None:
        return None
    try:
        # A generous wait: on a busy machine (a label run idle-class beside a match)
        # Stockfish's first answer can take seconds, and its name would be lost.
        engine = chess.engine.SimpleEngine.popen_uci(binary, timeout=120)
    except (OSError, chess.engine.EngineError):
        return None
    try:
        return str(engine.id.get("name", "")) or None
    finally:
        engine.quit()


def target(score: Any, result: Any, lam: float = TARGET_LAM, scale: float = TARGET_SCALE) -> Any:
    """The expected result a label stands for (one view: Stockfish's *score* in
    centipawns and the game's *result*, 1, 0.5 or 0, both for the same side):
    ``lam * sigmoid(score / scale) + (1 - lam) * result``. Numbers or numpy arrays."""
    return lam / (1.0 + np.exp(-score / scale)) + (1.0 - lam) * result


def known_result(score: Any, result: Any, scale: float = TARGET_SCALE) -> Any:
    """*result* (1, 0.5, 0; NaN or None where there is none), with the expectation of
    the label's own *score* standing in where there is none, so that such a label's
    target (:func:`target`) is its score's alone whatever the weight of the result.
    Numbers or numpy arrays (both for the same side)."""
    implied = 1.0 / (1.0 + np.exp(-np.asarray(score, dtype=np.float64) / scale))
    if result is None:
        return float(implied)
    return np.where(np.isnan(np.asarray(result, dtype=np.float64)), implied, result)


# ----------------------------------------------------------------------- games

class NetEvaluator:
    """:meth:`Stockfish.ask_eval` and :meth:`Stockfish.evals` answered by Stockfish's
    own network evaluated here (:mod:`~blitzaco.tools.tune.stockfish_net`), all the
    positions asked for at once: the same numbers, without Stockfish's trace and
    the pipe."""

    def __init__(self, net: StockfishNet) -> None:
        self.net = net
        self._asked: list[bytes] = []

    def ask_eval(self, board: chess.Board | Game, snapshot: Any = None) -> None:
        game = game_of(board)
        self._asked.append(game.record(game.snapshot() if snapshot is None else snapshot, 0, None))

    def evals(self) -> list[int]:
        if not self._asked:
            return []
        asked, self._asked = self._asked, []
        return self.net.labels(*record_codes(asked))


#: The folders of the networks exported by this process (removed when it ends).
_NET_FOLDERS: list[tempfile.TemporaryDirectory[str]] = []


@functools.lru_cache(maxsize=None)
def _checked_net(stockfish: str) -> str:
    """The path of *stockfish*'s network, exported and checked against its ``eval``
    once per process."""
    folder = tempfile.TemporaryDirectory(prefix="blitzaco-sfnet-")
    _NET_FOLDERS.append(folder)
    return str(load_stockfish_net(stockfish, folder.name)[1])


_worker_engine: Stockfish | None = None
#: What evaluates the static labels' positions: the worker's Stockfish, or its
#: network read here.
_worker_evaluator: Stockfish | NetEvaluator | None = None


def _one_thread_numpy() -> contextlib.AbstractContextManager[None]:
    """Processes started inside inherit numpy's linear algebra on one thread."""
    return environment(dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1"))


def _start_worker(stockfish: str, net_path: str | None = None) -> None:
    global _worker_engine, _worker_evaluator
    _worker_engine = Stockfish(stockfish)
    _worker_evaluator = NetEvaluator(StockfishNet(net_path)) if net_path else _worker_engine


@dataclass(frozen=True)
class _Task:
    """One game of a run: its number, the run's settings and its opening."""

    index: int
    seed: int
    nodes: int
    fen: str
    label: str = "search"
    random_moves: float = 0.0
    chess960: float = 0.0
    children: int = 0
    generator: int = LATEST_GENERATOR


def _play(task: _Task) -> list[bytes]:
    """Game number *task.index* of the run with *task.seed*: its kept positions, encoded."""
    engine = _worker_engine
    assert engine is not None
    rng = random.Random(task.seed * 1_000_003 + task.index)
    static = task.label == "static"
    if static and rng.random() < task.chess960:
        start = chess.Board.from_chess960_pos(rng.randrange(960))
    else:
        start = chess.Board(task.fen)
    engine.new_game(start.chess960)
    game: Game = ChessGame(start) if task.generator == 1 else NativeGame(start, MAX_PLIES + 32)
    for _ in range(rng.randint(0, 6)):
        legal = game.legal()
        if not legal:
            break
        game.push(rng.choice(legal))
    kept: list[tuple[Any, int]] = []
    off_line: list[tuple[Any, int]] = []  # children: no game result
    # Static labels: the positions asked for (on the game's line or not), their
    # evaluations read once the game is over.
    evaluator = _worker_evaluator
    asked: list[tuple[bool, Any]] = []

    def ask(on_line: bool) -> None:
        assert evaluator is not None
        snapshot = game.snapshot()
        evaluator.ask_eval(game, snapshot)
        asked.append((on_line, snapshot))

    extreme = 0
    result = 0.5
    while True:
        ended = game.result()
        if ended is not None:
            result = ended
            break
        if game.ply() >= MAX_PLIES:
            break
        if static and rng.random() < task.random_moves:
            if game.ply() >= SKIP_PLIES and game.quiet():
                ask(True)
            game.push(rng.choice(game.legal()))
            continue
        move, score, mate = engine.play(game, task.nodes)
        if move is None or score is None:
            break
        if mate or abs(score) >= RESIGN_CP:
            extreme += 1
            if extreme >= RESIGN_PLIES:
                winning = score > 0  # "mate 0": the side to move is mated
                result = float(winning == game.white())
                break
        else:
            extreme = 0
            if game.ply() >= SKIP_PLIES and static:
                if game.quiet():
                    ask(True)
                others = [other for other in game.legal() if other != move] if task.children else []
                for other in rng.sample(others, min(task.children, len(others))):
                    game.push(other, on_line=False)
                    if not game.child_over() and game.quiet():
                        ask(False)
                    game.pop()
            elif game.ply() >= SKIP_PLIES and game.quiet_move(move) and game.quiet():
                kept.append((game.snapshot(), score))
        game.push(move)
    if asked:
        assert evaluator is not None
        for (on_line, snapshot), value in zip(asked, evaluator.evals(), strict=True):
            (kept if on_line else off_line).append((snapshot, value))
    return ([game.record(position, score, result) for position, score in kept]
            + [game.record(position, score, None) for position, score in off_line])


def generate(
    out: str | Path,
    positions: int,
    *,
    seed: int = 1,
    nodes: int = 5000,
    workers: int = 2,
    stockfish: str | None = None,
    progress: bool = True,
    max_seconds: float = 0.0,
    label: str = "search",
    random_moves: float = 0.0,
    chess960: float = 0.0,
    children: int = 0,
    idle: bool = False,
    generator: int | None = None,
    evaluator: str = "auto",
) -> dict[str, float]:
    """Add labelled positions to *out* until it holds *positions* (or more: whole
    games are kept), or until *max_seconds* have passed (0: no limit; the games under
    way then are not kept), continuing an earlier run of the same settings. *label*:
    ``search`` or ``static`` (see the module's documentation; *random_moves* and
    *chess960* are the static kind's shares, *children* its positions off the line
    per move). *idle*: run (with Stockfish) in the
    idle scheduling class (Linux), so that a match beside it keeps its cores.
    *generator*: the board the games are played on (:mod:`~blitzaco.tools.tune.labelgame`:
    1 python-chess's, 2 the engine's); default: the file's when a run is continued
    (1 for a file that names none), else :data:`~blitzaco.tools.tune.labelgame.LATEST_GENERATOR`.
    *evaluator* (static labels): ``pipe`` asks Stockfish's ``eval`` command, ``net``
    evaluates the network Stockfish exports here (:class:`NetEvaluator`: the same
    numbers, checked against Stockfish's on 200 positions first), ``auto`` the
    network where that works, else the pipe; the run's figures say which (``net``
    1 or 0). Returns the run's figures: games, positions, seconds, positions per
    hour."""
    if label not in ("search", "static"):
        raise ValueError(f"unknown label kind {label!r} (search or static)")
    if label == "search" and (random_moves or chess960 or children):
        raise ValueError("random moves, Chess960 games and children are for static labels")
    if evaluator not in ("auto", "net", "pipe"):
        raise ValueError(f"unknown evaluator {evaluator!r} (auto, net or pipe)")
    if generator is not None and generator not in GENERATORS:
        raise ValueError(f"unknown generator {generator} ({', '.join(map(str, GENERATORS))})")
    if idle:
        run_in_background()  # the workers (and Stockfish) inherit it
    stockfish = stockfish or find_stockfish()
    if stockfish is None:
        raise FileNotFoundError("Stockfish not found (apt-get install stockfish): it labels the positions")
    out = Path(out)
    state_path = out.with_name(out.name + ".json")
    state: dict[str, Any] = {"seed": seed, "nodes": nodes, "games": 0, "positions": 0,
                             "stockfish": stockfish_name(stockfish) or stockfish,
                             "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if label == "static":
        state.update(label=label, random_moves=random_moves, chess960=chess960)
        if children:
            state["children"] = children
    settings = ("seed", "nodes", "label", "random_moves", "chess960", "children", "generator")
    if out.exists() and state_path.exists():
        saved = json.loads(state_path.read_text())
        saved.setdefault("generator", 1)  # a file made before there was a choice
        state["generator"] = saved["generator"] if generator is None else generator
        if any(saved.get(key, state.get(key)) != state.get(key) for key in settings):
            made = ", ".join(f"{key} {saved[key]}" for key in settings if key in saved)
            raise ValueError(f"{out} was made with {made}")
        saved.setdefault("stockfish", state["stockfish"])  # an older run's file may lack it (and its start date)
        state = saved
        with open(out, "r+b") as cut:  # drop a record cut short by a crash
            cut.truncate(len(MAGIC) + state["positions"] * RECORD_BYTES)
    else:
        state["generator"] = LATEST_GENERATOR if generator is None else generator
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(MAGIC)
        state_path.write_text(json.dumps(state))
    fens = [opening.board().fen() for opening in tuning_openings(4096, seed=seed, random_plies=0)]
    started = time.perf_counter()
    first_game, first_positions = state["games"], state["positions"]

    def out_of_time() -> bool:
        return max_seconds > 0 and time.perf_counter() - started >= max_seconds

    net_path: str | None = None
    if label == "static" and evaluator != "pipe":
        try:
            net_path = _checked_net(stockfish)
        except NetMismatch as error:
            if evaluator == "net":
                raise
            print(f"the static labels come through Stockfish's pipe: {error}")
    context = multiprocessing.get_context("spawn")
    index = first_game
    with _one_thread_numpy():  # the workers' small products: threads only cost (25 % of the rate)
        pool = context.Pool(workers, initializer=_start_worker, initargs=(stockfish, net_path))
    with pool, open(out, "ab") as handle:
        while state["positions"] < positions and not out_of_time():
            # A few games per worker at a time, written in their order (imap).
            batch = [_Task(i, seed, nodes, fens[i % len(fens)], label, random_moves, chess960, children,
                           state["generator"])
                     for i in range(index, index + 4 * workers)]
            index += len(batch)
            for records in pool.imap(_play, batch):
                handle.write(b"".join(records))
                handle.flush()
                state["games"] += 1
                state["positions"] += len(records)
                state_path.write_text(json.dumps(state))
                if progress:
                    rate = (state["positions"] - first_positions) / max(time.perf_counter() - started, 1e-9) * 3600
                    progress_bar(min(state["positions"], positions), positions, f"positions, {rate:,.0f}/hour")
                if state["positions"] >= positions or out_of_time():
                    break
        pool.terminate()
    seconds = time.perf_counter() - started
    made = state["positions"] - first_positions
    return {
        "games": state["games"] - first_game,
        "positions": made,
        "total": state["positions"],
        "seconds": seconds,
        "per_hour": made / seconds * 3600 if seconds > 0 else 0.0,
        "net": 1.0 if net_path else 0.0,
    }
