"""Play two UCI engines against each other through python-chess's ``chess.engine``.

Each opening is played twice with colours swapped; pairs of games run in parallel
(one pair of engine processes per worker thread). Games end by the rules
(checkmate, stalemate, threefold repetition, fifty moves, insufficient material),
by optional score adjudication (resign: both engines agree one side is lost; draw:
both agree it is level), or by a fault: a time forfeit, an illegal move, a crash.
Faults are counted separately. The report gives W/D/L from the first engine's
point of view, pentanomial pair counts, Elo with a 95 % interval, LOS and, when
asked, an SPRT that stops the match as soon as it has decided.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import io
import math
import shlex
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import chess
import chess.engine
import chess.pgn

from blitzaco.tools.match.stats import Penta, Sprt, elo_interval, los, trinomial_interval

__all__ = [
    "EngineSpec",
    "MatchLimit",
    "Adjudication",
    "Opening",
    "GameRecord",
    "MatchReport",
    "load_openings",
    "play_match",
]


# ------------------------------------------------------------------- settings


@dataclass(frozen=True)
class EngineSpec:
    """How to start one engine: a command line, UCI options, and its environment;
    and, where it is not the match's, its own limit (time or node odds)."""

    name: str
    command: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    limit: MatchLimit | None = None

    @classmethod
    def parse(cls, text: str) -> EngineSpec:
        """Parse ``name=N cmd="prog args" option.Hash=16 env.PYTHONPATH=src dir=D``
        (cutechess-cli's style), with an optional limit of this engine's own:
        ``tc=20+0.2``, ``nodes=5000``, ``depth=6`` or ``st=0.5`` (seconds a move)."""
        name, command, cwd, limit = None, None, None, None
        options: list[tuple[str, Any]] = []
        env: list[tuple[str, str]] = []
        for token in shlex.split(text):
            key, sep, value = token.partition("=")
            if not sep:
                raise ValueError(f"engine setting '{token}' is not key=value")
            if key == "name":
                name = value
            elif key == "cmd":
                command = tuple(shlex.split(value))
            elif key == "dir":
                cwd = value
            elif key in _LIMIT_KEYS:
                limit = MatchLimit.parse(value if key == "tc" else f"{_LIMIT_KEYS[key]}={value}")
                if (key == "tc") != (limit.base is not None):
                    raise ValueError(f"engine setting '{token}' is not a {key} limit")
            elif key.startswith("option."):
                options.append((key[len("option.") :], _option_value(value)))
            elif key.startswith("env."):
                env.append((key[len("env.") :], value))
            else:
                raise ValueError(f"unknown engine setting '{key}'")
        if not command:
            raise ValueError(f"engine '{text}' has no cmd=")
        return cls(name or Path(command[0]).name, command, tuple(options), tuple(env), cwd, limit)

    def open(self) -> chess.engine.SimpleEngine:
        import os

        env = {**os.environ, **dict(self.env)} if self.env else None
        engine = chess.engine.SimpleEngine.popen_uci(list(self.command), timeout=60, env=env, cwd=self.cwd)
        if self.options:
            try:
                engine.configure(dict(self.options))
            except BaseException:
                engine.close()  # an option it refuses: do not leave the process behind
                raise
        return engine


# An engine's own limit, as cutechess-cli spells it, and MatchLimit's name for it.
_LIMIT_KEYS = {"tc": "tc", "nodes": "nodes", "depth": "depth", "st": "movetime"}


def _option_value(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class MatchLimit:
    """A clock (base + increment, seconds), or fixed nodes, depth or time per move."""

    base: float | None = None
    increment: float = 0.0
    nodes: int | None = None
    depth: int | None = None
    movetime: float | None = None

    @classmethod
    def parse(cls, text: str) -> MatchLimit:
        """``10+0.1`` (seconds), ``nodes=5000``, ``depth=4`` or ``movetime=0.5``."""
        key, sep, value = text.partition("=")
        if sep:
            if key == "nodes":
                return cls(nodes=int(value))
            if key == "depth":
                return cls(depth=int(value))
            if key == "movetime":
                return cls(movetime=float(value))
            raise ValueError(f"unknown limit '{text}'")
        base, _, increment = text.partition("+")
        return cls(base=float(base), increment=float(increment or 0))

    def describe(self) -> str:
        if self.base is not None:
            return f"{self.base:g}+{self.increment:g}"
        if self.nodes is not None:
            return f"nodes={self.nodes}"
        if self.depth is not None:
            return f"depth={self.depth}"
        return f"movetime={self.movetime:g}"

    def pgn_time_control(self) -> str:
        return f"{self.base:g}+{self.increment:g}" if self.base is not None else "-"


@dataclass(frozen=True)
class Adjudication:
    """Score rules, both optional. Resign: for *resign_moves* moves of each side both
    engines' scores say the same side is at least *resign_score* cp ahead. Draw:
    after move *draw_after*, for *draw_moves* moves of each side both engines' scores
    stay within *draw_score* cp of zero."""

    resign_score: int | None = None
    resign_moves: int = 5
    draw_score: int | None = None
    draw_moves: int = 8
    draw_after: int = 40

    @classmethod
    def parse(cls, resign: str | None = None, draw: str | None = None) -> Adjudication:
        """From the command-line forms ``CP:MOVES`` (resign) and ``CP:MOVES:AFTER``
        (draw); None leaves a rule off. Raises ValueError for anything else."""
        values: dict[str, int] = {}
        if resign:
            score, moves = (int(part) for part in resign.split(":"))
            values.update(resign_score=score, resign_moves=moves)
        if draw:
            score, moves, after = (int(part) for part in draw.split(":"))
            values.update(draw_score=score, draw_moves=moves, draw_after=after)
        return cls(**values)


@dataclass(frozen=True)
class Opening:
    """A starting position and the moves that led to it (kept for repetitions)."""

    fen: str
    moves: tuple[str, ...] = ()
    label: str = ""

    def board(self) -> chess.Board:
        board = chess.Board(self.fen, chess960=_is_960(self.fen))
        for uci in self.moves:
            board.push_uci(uci)
        return board


def _is_960(fen: str) -> bool:
    return chess.Board(fen, chess960=True).has_chess960_castling_rights()


def load_openings(path: str | Path) -> list[Opening]:
    """Openings from an EPD file (one position a line) or a PGN file (each game's
    main line; its moves are played from its start position)."""
    path = Path(path)
    openings: list[Opening] = []
    if path.suffix.lower() == ".pgn":
        with open(path, encoding="utf-8-sig") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                if game.errors:
                    raise ValueError(f"{path}: unreadable game {len(openings) + 1}: {game.errors[0]}")
                moves = tuple(move.uci() for move in game.mainline_moves())
                openings.append(Opening(game.board().fen(), moves, game.headers.get("Opening", "")))
    else:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                board, ops = chess.Board.from_epd(line)
            except ValueError as err:
                raise ValueError(f"{path}:{number}: {err}") from None
            openings.append(Opening(board.fen(), (), str(ops.get("id", ""))))
    if not openings:
        raise ValueError(f"{path}: no openings")
    return openings


# -------------------------------------------------------------------- results


@dataclass
class GameRecord:
    round: int
    white: str
    black: str
    result: str  # "1-0", "0-1", "1/2-1/2"
    termination: str
    plies: int
    pgn: str
    fault: str | None = None  # "time", "illegal" or "crash"
    faulty: str | None = None  # name of the engine at fault

    def points_for(self, name: str) -> float:
        if self.result == "1/2-1/2":
            return 0.5
        winner = self.white if self.result == "1-0" else self.black
        return 1.0 if winner == name else 0.0


@dataclass
class MatchReport:
    first: str
    second: str
    limit: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    penta: Penta = field(default_factory=Penta)
    faults: dict[str, dict[str, int]] = field(default_factory=dict)
    terminations: dict[str, int] = field(default_factory=dict)
    sprt: Sprt | None = None
    verdict: str | None = None
    seconds: float = 0.0
    ray_nodes: set[str] = field(default_factory=set)  # the Ray nodes that played pairs, if on Ray

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add_pair(self, records: Sequence[GameRecord]) -> None:
        points = 0.0
        for record in records:
            score = record.points_for(self.first)
            points += score
            if score == 1.0:
                self.wins += 1
            elif score == 0.5:
                self.draws += 1
            else:
                self.losses += 1
            self.terminations[record.termination] = self.terminations.get(record.termination, 0) + 1
            if record.fault and record.faulty:
                counts = self.faults.setdefault(record.faulty, {"time": 0, "illegal": 0, "crash": 0})
                counts[record.fault] += 1
        if len(records) == 2:
            self.penta.add(points)
        if self.sprt is not None:
            self.verdict = self.sprt.verdict(self.penta)

    def elo(self) -> tuple[float, float]:
        """Elo ± 95 % from pairs when there are any, else from single games."""
        if self.penta.pairs:
            return elo_interval(self.penta)
        return trinomial_interval(self.wins, self.draws, self.losses)

    def progress(self) -> str:
        elo, error = self.elo()
        text = f"[{self.games}] +{self.wins} ={self.draws} -{self.losses}"
        text += f"  Elo {_fmt(elo)} ± {_fmt(error, sign=False)}"
        text += f"  LOS {los(self.wins, self.losses) * 100:.1f}%"
        if self.sprt is not None:
            lower, upper = self.sprt.bounds()
            text += f"  LLR {self.sprt.llr(self.penta):.2f} ({lower:.2f}, {upper:.2f})"
        return text

    def summary(self) -> str:
        elo, error = self.elo()
        score = (self.wins + self.draws / 2) / self.games if self.games else 0.0
        lines = [
            f"Match {self.first} vs {self.second}, {self.limit}: {self.games} games in {self.seconds:.0f} s",
            f"Score of {self.first} vs {self.second}: {self.wins} - {self.losses} - {self.draws}  [{score:.3f}]",
            f"Elo difference: {_fmt(elo)} ± {_fmt(error, sign=False)} (95%), "
            f"LOS: {los(self.wins, self.losses) * 100:.1f} %",
            f"Ptnml(0-2): {self.penta.counts}",
        ]
        if self.sprt is not None:
            lower, upper = self.sprt.bounds()
            outcome = {"H1": "H1 was accepted", "H0": "H0 was accepted", None: "no decision"}[self.verdict]
            lines.append(
                f"SPRT ({self.sprt.elo0:g}, {self.sprt.elo1:g}), alpha {self.sprt.alpha:g}, beta {self.sprt.beta:g}: "
                f"LLR {self.sprt.llr(self.penta):.2f} ({lower:.2f}, {upper:.2f}) - {outcome}"
            )
        for name in (self.first, self.second):
            counts = self.faults.get(name, {"time": 0, "illegal": 0, "crash": 0})
            lines.append(
                f"{name}: {counts['time']} time forfeits, {counts['illegal']} illegal moves, {counts['crash']} crashes"
            )
        lines.append("Endings: " + ", ".join(f"{k} {v}" for k, v in sorted(self.terminations.items())))
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        elo, error = self.elo()
        return {
            "first": self.first,
            "second": self.second,
            "limit": self.limit,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "pentanomial": self.penta.counts,
            "elo": elo,
            "elo_error95": error,
            "los": los(self.wins, self.losses),
            "llr": self.sprt.llr(self.penta) if self.sprt else None,
            "verdict": self.verdict,
            "faults": self.faults,
            "terminations": self.terminations,
            "seconds": self.seconds,
            "ray_nodes": len(self.ray_nodes),
        }


def _fmt(value: float, sign: bool = True) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return ("-" if value < 0 else "+" if sign else "") + "inf"
    value += 0.0  # no "-0.0"
    return f"{value:+.1f}" if sign else f"{value:.1f}"


# ------------------------------------------------------------------ one game

_TERMINATIONS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.SEVENTYFIVE_MOVES: "fifty moves",
    chess.Termination.FIFTY_MOVES: "fifty moves",
    chess.Termination.THREEFOLD_REPETITION: "repetition",
    chess.Termination.FIVEFOLD_REPETITION: "repetition",
}
_MATE_CP = 100_000


class _Seat:
    """An engine process owned by one worker, restarted after a crash."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        self.engine: chess.engine.SimpleEngine | None = None

    def get(self) -> chess.engine.SimpleEngine:
        if self.engine is None:
            self.engine = self.spec.open()
        return self.engine

    def discard(self) -> None:
        if self.engine is not None:
            try:
                self.engine.close()
            except Exception:  # already dead: nothing to close
                pass
        self.engine = None

    def close(self) -> None:
        if self.engine is not None:
            try:
                self.engine.quit()
            except Exception:  # the engine died on the way out
                self.discard()
        self.engine = None


def _score_text(score: chess.engine.PovScore | None, color: chess.Color) -> str:
    if score is None:
        return ""
    pov = score.pov(color)
    mate = pov.mate()
    if mate is not None:
        return f"{'+' if mate > 0 else '-'}M{abs(mate)}"
    cp = pov.score()
    return f"{cp / 100:+.2f}" if cp is not None else ""


def _outcome(board: chess.Board) -> chess.Outcome | None:
    """The game's end as a match arbiter sees it: mate, stalemate, insufficient
    material, and the draws a player may claim once they have happened (a position
    there for the third time, fifty moves without capture or pawn move). Not
    python-chess's ``claim_draw``, which also ends the game when the side to move
    *could* repeat a third time: an engine playing for a win would not."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return outcome
    if board.is_repetition(3):
        return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
    if board.halfmove_clock >= 100:
        return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
    return None


def play_game(
    white: _Seat, black: _Seat, opening: Opening, limit: MatchLimit, adjudication: Adjudication, round_number: int
) -> GameRecord:
    board = opening.board()
    start = opening.board()
    game = chess.pgn.Game()
    root = chess.Board(opening.fen, chess960=start.chess960)
    game.setup(root)
    node: chess.pgn.GameNode = game
    for move in board.move_stack:
        node = node.add_variation(move, comment="book")
    seats = {chess.WHITE: white, chess.BLACK: black}
    limits = {chess.WHITE: white.spec.limit or limit, chess.BLACK: black.spec.limit or limit}
    clock = {colour: limits[colour].base or 0.0 for colour in chess.COLORS}
    white_pov: list[int | None] = []  # each engine's score, from White's point of view
    game_key = object()
    result, termination, fault, faulty = "*", "", None, None
    while True:
        outcome = _outcome(board)
        if outcome is not None:
            result, termination = outcome.result(), _TERMINATIONS.get(outcome.termination, outcome.termination.name)
            break
        verdict = _adjudicate(white_pov, board, adjudication)
        if verdict is not None:
            result, termination = verdict
            break
        side = board.turn
        seat = seats[side]
        own = limits[side]
        if own.base is not None:
            search_limit = _clock_limit(side, clock, limits)
        else:
            search_limit = chess.engine.Limit(nodes=own.nodes, depth=own.depth, time=own.movetime)
        try:
            # The clock runs from the request for a move: an engine started (or
            # restarted after a crash) here has its start-up off the clock, as in
            # cutechess, which starts the engines before the game.
            engine = seat.get()
            started = time.perf_counter()
            played = engine.play(
                board, search_limit, info=chess.engine.INFO_BASIC | chess.engine.INFO_SCORE, game=game_key
            )
        except (chess.engine.EngineTerminatedError, TimeoutError, concurrent.futures.TimeoutError) as err:
            # EngineTerminatedError is an EngineError: it must be caught first.
            seat.discard()
            fault, faulty = "crash", seat.spec.name
            termination = f"crash ({type(err).__name__})"
        except chess.engine.EngineError as err:
            fault, faulty, termination = "illegal", seat.spec.name, f"illegal move ({err})"
        else:
            elapsed = time.perf_counter() - started
            if played.move is None or played.move not in board.legal_moves:
                fault, faulty, termination = "illegal", seat.spec.name, f"illegal move {played.move}"
            elif own.base is not None and clock[side] - elapsed < 0:
                fault, faulty, termination = "time", seat.spec.name, "time forfeit"
            if fault is None and played.move is not None:
                if own.base is not None:
                    clock[side] += own.increment - elapsed
                score = played.info.get("score")
                white_pov.append(score.white().score(mate_score=_MATE_CP) if score is not None else None)
                node = node.add_variation(played.move)
                depth = played.info.get("depth")
                note = _score_text(score, side) + (f"/{depth}" if depth is not None else "") + f" {elapsed:.2f}s"
                node.comment = note.strip()
                if own.base is not None:
                    node.set_clock(max(clock[side], 0.0))
                board.push(played.move)
        if fault is not None:
            result = "0-1" if side == chess.WHITE else "1-0"
            break
    if limits[chess.WHITE] == limits[chess.BLACK]:
        controls = {"TimeControl": limits[chess.WHITE].pgn_time_control()}
    else:  # odds: each side's own, as cutechess-cli writes them
        controls = {"WhiteTimeControl": limits[chess.WHITE].pgn_time_control(),
                    "BlackTimeControl": limits[chess.BLACK].pgn_time_control()}
    game.headers.update(
        Event="BlitzACO match",
        Site="local",
        Date=datetime.date.today().strftime("%Y.%m.%d"),
        Round=str(round_number),
        White=white.spec.name,
        Black=black.spec.name,
        Result=result,
        **controls,
        Termination=termination,
        PlyCount=str(len(board.move_stack) - len(start.move_stack)),
    )
    if opening.label:
        game.headers["Opening"] = opening.label
    buffer = io.StringIO()
    print(game, file=buffer, end="\n\n")
    return GameRecord(
        round_number, white.spec.name, black.spec.name, result, termination,
        len(board.move_stack) - len(start.move_stack), buffer.getvalue(), fault, faulty,
    )


def _clock_limit(side: chess.Color, clock: dict[chess.Color, float], limits: dict[chess.Color, MatchLimit]
                 ) -> chess.engine.Limit:
    """The clocks as *side* is told them: its own, and its opponent's where the
    opponent plays on a clock too (else its own again: an opponent on nodes or depth
    has no clock to tell)."""
    other = not side
    shown = other if limits[other].base is not None else side
    times = {side: clock[side], other: clock[shown]}
    increments = {side: limits[side].increment, other: limits[shown].increment}
    return chess.engine.Limit(
        white_clock=max(times[chess.WHITE], 0.001),
        black_clock=max(times[chess.BLACK], 0.001),
        white_inc=increments[chess.WHITE],
        black_inc=increments[chess.BLACK],
    )


def _adjudicate(white_pov: list[int | None], board: chess.Board, rules: Adjudication) -> tuple[str, str] | None:
    if rules.resign_score is not None:
        recent = white_pov[-2 * rules.resign_moves :]
        if len(recent) == 2 * rules.resign_moves and None not in recent:
            if all(score >= rules.resign_score for score in recent):  # type: ignore[operator]
                return "1-0", "adjudication: resign"
            if all(score <= -rules.resign_score for score in recent):  # type: ignore[operator]
                return "0-1", "adjudication: resign"
    if rules.draw_score is not None and board.fullmove_number > rules.draw_after:
        recent = white_pov[-2 * rules.draw_moves :]
        if len(recent) == 2 * rules.draw_moves and all(
            score is not None and abs(score) <= rules.draw_score for score in recent
        ):
            return "1/2-1/2", "adjudication: draw"
    return None


# ----------------------------------------------------------------- Ray pairs


def config_texts(*specs: EngineSpec) -> dict[str, str]:
    """The text of each engine's ConfigFile, by engine name: what travels to a Ray
    node, which cannot read the driver's files."""
    return {spec.name: Path(value).read_text() for spec in specs for name, value in spec.options
            if name == "ConfigFile"}


def with_config_texts(spec: EngineSpec, texts: dict[str, str], folder: str) -> EngineSpec:
    """*spec* with its ConfigFile written into *folder* from *texts* (by engine name)."""
    if spec.name not in texts:
        return spec
    path = Path(folder) / f"{spec.name}.toml"
    path.write_text(texts[spec.name])
    options = tuple((name, str(path) if name == "ConfigFile" else value) for name, value in spec.options)
    return replace(spec, options=options)


def ray_pair(first: EngineSpec, second: EngineSpec, texts: dict[str, str], openings: tuple[Opening, Opening],
              limit: MatchLimit, adjudication: Adjudication, index: int) -> tuple[list[GameRecord], str]:
    """Pair *index* as a Ray task, on engines started for it: its two records and
    the Ray node that played it."""
    import tempfile

    import ray

    with tempfile.TemporaryDirectory() as folder:
        mine = _Seat(with_config_texts(first, texts, folder))
        theirs = _Seat(with_config_texts(second, texts, folder))
        try:
            records = [play_game(mine, theirs, openings[0], limit, adjudication, 2 * index + 1),
                       play_game(theirs, mine, openings[1], limit, adjudication, 2 * index + 2)]
        finally:
            mine.close()
            theirs.close()
    return records, ray.get_runtime_context().get_node_id()


def _play_on_ray(address: str, workers: int, first: EngineSpec, second: EngineSpec, todo: Sequence[int],
                 pair_openings: Callable[[int], tuple[Opening, Opening]], limit: MatchLimit,
                 adjudication: Adjudication, finish: Callable[[list[GameRecord], str], bool]) -> None:
    """The pairs *todo* as Ray tasks (retried when a worker or node dies), as many
    at once as the cluster has cores, each handed to *finish* as it ends; stops
    (cancelling the rest) when *finish* says the match is decided."""
    from blitzaco.tools.rayinit import retried_task, start_ray

    ray = start_ray(address, workers)
    try:
        task = retried_task(ray, ray_pair)
        texts = config_texts(first, second)
        window = max(workers, int(ray.cluster_resources().get("CPU", workers)))
        queue = iter(todo)
        pending: list[Any] = []

        def submit() -> None:
            index = next(queue, None)
            if index is not None:
                pending.append(task.remote(first, second, texts, pair_openings(index), limit, adjudication, index))

        for _ in range(window):
            submit()
        while pending:
            (ref,), _ = ray.wait(pending, num_returns=1)
            pending.remove(ref)
            if finish(*ray.get(ref)):
                for unfinished in pending:
                    ray.cancel(unfinished, force=True)
                return
            submit()
    finally:
        ray.shutdown()


# --------------------------------------------------------------------- resume

_FAULTS = (("crash", "crash"), ("illegal move", "illegal"), ("time forfeit", "time"))


def _record_of(game: chess.pgn.Game, text: str) -> GameRecord:
    """The record of a game read back from a match's PGN (its fault from its
    Termination: the side that lost is the one at fault)."""
    headers = game.headers
    result, termination = headers.get("Result", "*"), headers.get("Termination", "")
    fault = next((kind for prefix, kind in _FAULTS if termination.startswith(prefix)), None)
    faulty = (headers["White"] if result == "0-1" else headers["Black"]) if fault else None
    return GameRecord(int(headers["Round"]), headers["White"], headers["Black"], result, termination,
                      int(headers.get("PlyCount", "0")), text, fault, faulty)


def resume_pairs(path: str | Path, first: str, second: str, starts: Callable[[int], tuple[str, str]]
                 ) -> dict[int, list[GameRecord]]:
    """The pairs of the match of *first* against *second* that its PGN at *path*
    already holds whole, by pair index (a pair ``i`` is rounds ``2i+1`` and
    ``2i+2``, *first* White in the first). *starts(i)* gives the start positions
    (FEN) of pair *i*'s two games: a game played from another opening is an error,
    not a result. The file is rewritten without the lone game of a pair cut short
    (a match killed between its two games' writes) and without a game cut off in
    the middle; games of other engines are kept as they were."""
    path = Path(path)
    if not path.exists():
        return {}
    kept: list[str] = []
    games: dict[int, dict[int, GameRecord]] = {}
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            text = str(game) + "\n\n"
            if game.headers.get("Result", "*") == "*" or game.errors:
                continue  # cut off while it was written
            if {game.headers.get("White"), game.headers.get("Black")} != {first, second}:
                kept.append(text)
                continue
            record = _record_of(game, text)
            index, second_game = divmod(record.round - 1, 2)
            if (record.white, record.black) != ((second, first) if second_game else (first, second)):
                raise ValueError(f"{path}: round {record.round} has {record.white} White: not this match's pairing")
            start = starts(index)[second_game]
            if game.board().fen() != chess.Board(start, chess960=_is_960(start)).fen():
                raise ValueError(f"{path}: round {record.round} was played from another opening")
            games.setdefault(index, {})[second_game] = record
    pairs = {index: [both[0], both[1]] for index, both in games.items() if len(both) == 2}
    kept += [record.pgn for index in sorted(pairs) for record in pairs[index]]
    temporary = path.with_name(path.name + ".resume")
    temporary.write_text("".join(kept), encoding="utf-8")
    temporary.replace(path)
    return pairs


# ---------------------------------------------------------------------- match


def play_match(
    first: EngineSpec,
    second: EngineSpec,
    openings: Sequence[Opening],
    limit: MatchLimit,
    games: int,
    *,
    concurrency: int = 1,
    adjudication: Adjudication = Adjudication(),
    sprt: Sprt | None = None,
    pgn_path: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    opening_per_game: bool = False,
    resume: bool = False,
    ray: str | None = None,
) -> MatchReport:
    """Play up to *games* games (rounded up to whole pairs) and report. Openings are
    used in order, each for one pair; the first engine has White in the first game
    of each pair. Stops early when the SPRT decides.

    With *opening_per_game* each game of a pair takes the next opening instead: a
    match of an engine against an identical deterministic copy (self-play at fixed
    nodes) would otherwise play every game twice.

    With *resume* the pairs that *pgn_path* already holds whole count as played
    (:func:`resume_pairs`) and only the others are played: a match stopped in one
    sitting goes on in the next, its SPRT where it was.

    With *ray* (``auto``: a local Ray of *concurrency* cores; HOST:PORT: a
    cluster) each pair is a Ray task on engines started for it, retried when its
    worker or node dies; the engines' ConfigFile options travel as text.
    :attr:`MatchReport.ray_nodes` names the nodes that played."""
    if first.name == second.name:
        raise ValueError("the two engines need different names")
    pairs = (games + 1) // 2

    def pair_openings(index: int) -> tuple[Opening, Opening]:
        if opening_per_game:
            return openings[2 * index % len(openings)], openings[(2 * index + 1) % len(openings)]
        return openings[index % len(openings)], openings[index % len(openings)]

    first_limit, second_limit = first.limit or limit, second.limit or limit
    described = (
        first_limit.describe() if first_limit == second_limit
        else f"{first.name} {first_limit.describe()}, {second.name} {second_limit.describe()}"
    )
    report = MatchReport(first.name, second.name, described, sprt=sprt)
    done: dict[int, list[GameRecord]] = {}
    if resume:
        if pgn_path is None:
            raise ValueError("a match resumes from its PGN: give pgn_path")

        def starts(index: int) -> tuple[str, str]:
            one, other = pair_openings(index)
            return one.fen, other.fen

        done = resume_pairs(pgn_path, first.name, second.name, starts)
        for index in sorted(done):
            if index < pairs and report.verdict is None:
                report.add_pair(done[index])
    lock = threading.Lock()
    stop = threading.Event()
    seats: list[_Seat] = []
    local = threading.local()
    # Appended to, as cutechess-cli's -pgnout does: an earlier match's games are kept.
    pgn_file = open(pgn_path, "a", encoding="utf-8") if pgn_path else None
    started = time.perf_counter()

    def seat_pair() -> tuple[_Seat, _Seat]:
        if not hasattr(local, "seats"):
            local.seats = (_Seat(first), _Seat(second))
            with lock:
                seats.extend(local.seats)
        return local.seats  # type: ignore[no-any-return]

    def finish(records: list[GameRecord], where: str = "") -> bool:
        """Count and write a pair that ended; True once the match is decided."""
        with lock:
            report.add_pair(records)
            report.seconds = time.perf_counter() - started
            if where:
                report.ray_nodes.add(where)
            if pgn_file is not None:
                for record in records:
                    pgn_file.write(record.pgn)
                pgn_file.flush()
            if progress is not None:
                progress(report.progress())
            if report.verdict is not None:
                stop.set()
            return stop.is_set()

    def play_pair(index: int) -> None:
        if stop.is_set():
            return
        mine, theirs = seat_pair()
        first_opening, second_opening = pair_openings(index)
        finish([
            play_game(mine, theirs, first_opening, limit, adjudication, 2 * index + 1),
            play_game(theirs, mine, second_opening, limit, adjudication, 2 * index + 2),
        ])

    todo = [index for index in range(pairs) if index not in done] if report.verdict is None else []
    try:
        if ray is not None and todo:  # nothing to play: no Ray started
            _play_on_ray(ray, max(1, concurrency), first, second, todo, pair_openings, limit, adjudication, finish)
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
                for future in [pool.submit(play_pair, index) for index in todo]:
                    future.result()
    finally:
        for seat in seats:
            seat.close()
        if pgn_file is not None:
            pgn_file.close()
    report.seconds = time.perf_counter() - started
    return report


def print_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
