"""The UCI protocol over stdin/stdout.

This module only translates: it parses commands, owns the game's
:class:`chess.Board`, declares the options (the engine's from
:class:`blitzaco.engine.Options`) and prints what the engine reports. How moves are
chosen, how long to think and the search thread are
:class:`blitzaco.engine.Engine`'s business.

Robustness rules:

* every line written is flushed at once; ``isready`` is answered at once, also while
  a search runs (the search runs in the engine's thread, the main thread keeps reading);
* bad input never kills the engine or changes its state: an unknown command, a bad
  FEN, an illegal move, a malformed number, an over-long or non-UTF-8 line each get
  an ``info string error: ...``;
* a FEN Stockfish plays from is accepted: an impossible en passant square or castling
  right is dropped, with an ``info string``; a position that cannot be played at all
  is refused, and until a position is accepted again a ``go`` answers
  ``bestmove 0000`` with an error (the GUI's board is not the last good one: a move
  of that one would be illegal there); ``d`` and ``eval`` still show the last good
  position;
* as the UCI specification asks, unknown tokens before a command are skipped
  (``joho debug on`` switches debug on);
* every ``go`` ends in exactly one ``bestmove`` (``bestmove 0000`` when there is no
  legal move), after ``stop`` or ``ponderhit`` for ``go infinite`` / ``go ponder``;
  ``go perft N`` (Stockfish's) prints the leaf count of each root move and
  ``Nodes searched: N`` instead, in the search thread, and ``stop`` ends it;
* EOF on stdin is ``quit``.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import chess

from blitzaco import ENGINE_AUTHOR, ENGINE_NAME, __version__
from blitzaco.bundled import open_regular
from blitzaco.engine import (
    Bound,
    CurrMove,
    Engine,
    OptionError,
    Options,
    OptionSpec,
    Reporter,
    SearchInfo,
    ThinkResult,
    compute_key,
    mate_in,
    print_traceback,
    repetition_window,
)
from blitzaco.timeman import Limits

__all__ = ["UciProtocol", "main", "format_score", "MAX_LINE_BYTES"]

#: Longest input line accepted (bytes). A game of several thousand moves fits.
MAX_LINE_BYTES = 1 << 20

_COMMANDS = (
    "uci", "debug", "isready", "setoption", "register", "ucinewgame", "position",
    "go", "stop", "ponderhit", "quit", "d", "eval",
)

#: Position problems python-chess cannot search safely.
_UNPLAYABLE = (
    chess.STATUS_EMPTY
    | chess.STATUS_NO_WHITE_KING
    | chess.STATUS_NO_BLACK_KING
    | chess.STATUS_TOO_MANY_KINGS
    | chess.STATUS_PAWNS_ON_BACKRANK
    | chess.STATUS_OPPOSITE_CHECK
)
_STATUS_TEXT = {
    chess.STATUS_EMPTY: "the board is empty",
    chess.STATUS_NO_WHITE_KING: "White has no king",
    chess.STATUS_NO_BLACK_KING: "Black has no king",
    chess.STATUS_TOO_MANY_KINGS: "there are too many kings",
    chess.STATUS_PAWNS_ON_BACKRANK: "there are pawns on the first or last rank",
    chess.STATUS_OPPOSITE_CHECK: "the side not to move is in check",
}

_GO_INTEGERS = {
    # name: (lowest accepted value, highest accepted value)
    "depth": (1, 10_000),
    "nodes": (1, 10**15),
    "mate": (1, 10_000),
    "movetime": (0, 10**12),
    "wtime": (-(10**12), 10**12),
    "btime": (-(10**12), 10**12),
    "winc": (0, 10**12),
    "binc": (0, 10**12),
    "movestogo": (1, 10_000),
    "perft": (1, 100),
}
_GO_KEYWORDS = set(_GO_INTEGERS) | {"infinite", "ponder", "searchmoves"}


#: The protocol's words for a score that is only a bound.
_BOUND_WORDS = {Bound.LOWER: "lowerbound", Bound.UPPER: "upperbound"}


def format_score(score: int) -> str:
    mate = mate_in(score)
    return f"score mate {mate}" if mate is not None else f"score cp {score}"


def format_info(info: SearchInfo) -> str:
    line = info.line
    parts = ["info", f"depth {line.depth}", f"seldepth {line.seldepth}", f"multipv {line.multipv}"]
    parts.append(format_score(line.score))
    if info.wdl is not None:
        parts.append("wdl {} {} {}".format(*info.wdl))
    if line.bound != Bound.EXACT:
        parts.append(_BOUND_WORDS[line.bound])
    parts += [
        f"nodes {info.nodes}",
        f"nps {info.nps}",
        f"hashfull {info.hashfull}",
        f"tbhits {info.tbhits}",
        f"time {info.time_ms}",
    ]
    if line.pv:
        # Moves come from a board in the right mode, so Move.uci() already writes
        # castling king-takes-rook in Chess960 and king-two-squares otherwise.
        parts.append("pv " + " ".join(move.uci() for move in line.pv))
    return " ".join(parts)


class _UciError(Exception):
    """A command that cannot be carried out; the text becomes an info string."""


@dataclass
class _Option:
    name: str
    kind: str  # "check", "spin", "button" or "string"
    default: Any = None
    low: int | None = None
    high: int | None = None
    apply: Callable[[Any], str | None] | None = None

    def declaration(self) -> str:
        text = f"option name {self.name} type {self.kind}"
        if self.kind == "check":
            text += f" default {'true' if self.default else 'false'}"
        elif self.kind == "spin":
            text += f" default {self.default} min {self.low} max {self.high}"
        elif self.kind == "string":
            text += f" default {self.default or '<empty>'}"
        return text

    def parse(self, raw: str | None) -> Any:
        """The typed value of *raw*, or :class:`_UciError` saying what is wrong."""
        if self.kind == "button":
            return None
        if self.kind == "string":
            return "" if raw is None or raw == "<empty>" else raw
        if raw is None:
            raise _UciError(f"option {self.name} needs a value")
        if self.kind == "check":
            if raw.lower() not in ("true", "false"):
                raise _UciError(f"option {self.name} takes true or false, not '{_clip(raw)}'")
            return raw.lower() == "true"
        try:
            number = int(raw)
        except ValueError:
            raise _UciError(f"option {self.name} takes an integer, not '{_clip(raw)}'") from None
        assert self.low is not None and self.high is not None
        if not self.low <= number <= self.high:
            raise _UciError(f"option {self.name} value {number} is outside [{self.low}, {self.high}]")
        return number


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Reporter(Reporter):
    def __init__(self, protocol: UciProtocol, board: chess.Board) -> None:
        self.protocol = protocol
        self.board = board

    def info(self, info: SearchInfo) -> None:
        self.protocol.send(format_info(info))

    def currmove(self, currmove: CurrMove) -> None:
        self.protocol.send(
            f"info depth {currmove.depth} currmove {currmove.move.uci()} currmovenumber {currmove.number}"
        )

    def message(self, text: str) -> None:
        self.protocol.send(f"info string {text}")

    def debug(self, text: str) -> None:
        if self.protocol.debug:
            self.protocol.send(f"info string {text}")


class UciProtocol:
    """One UCI session: feed it lines with :meth:`handle`, or run :meth:`run`."""

    def __init__(self, output: IO[str] | None = None, engine: Engine | None = None) -> None:
        self.output = output if output is not None else sys.stdout
        self.engine = engine if engine is not None else Engine()
        self.board = chess.Board()
        # What the last good position command said (setup and chess960 flag, moves):
        # a command that only adds moves to it is applied to self.board in place.
        self._origin: tuple[tuple[str, ...], bool] | None = None
        self._moves: list[str] = []
        self.position_given = False
        # Why the last position command was refused (None: it was accepted): no move
        # of the last good position is answered for the GUI's unknown one.
        self._refused: str | None = None
        # When the line being handled was read: the clock of a go starts then.
        self._received = time.perf_counter()
        self.debug = False
        self.chess960 = False
        self._log: IO[str] | None = None
        self._lock = threading.Lock()
        # Clear from a go until its bestmove is printed (by the engine's search
        # thread): from then on a new go may start, although the thread may not have
        # exited yet.
        self._answered = threading.Event()
        self._answered.set()
        self.closed = False
        self.options = {option.name.lower(): option for option in self._declare_options()}
        # setoption and ucinewgame received during go infinite / go ponder, carried
        # out once that search has answered.
        self._deferred: list[tuple[str, list[str], str]] = []

    # ------------------------------------------------------------------ output

    def send(self, text: str) -> None:
        """Write one line and flush it, control characters escaped (whatever a GUI
        sent that is echoed back stays one printable line). Thread-safe."""
        if not text.isprintable():
            text = "".join(char if char.isprintable() else f"\\x{ord(char):02x}" for char in text)
        with self._lock:
            if self.closed:
                return
            try:
                self.output.write(text + "\n")
                self.output.flush()
            except (OSError, ValueError):
                self.closed = True  # the GUI went away; the input loop will end
                return
            if self._log is not None:
                self._write_log(">> " + text)

    def _error(self, text: str) -> None:
        self.send(f"info string error: {text}")

    def _write_log(self, text: str) -> None:
        try:
            assert self._log is not None
            self._log.write(text + "\n")
            self._log.flush()
        except (OSError, ValueError):
            self._log = None

    # ----------------------------------------------------------------- options

    def _declare_options(self) -> list[_Option]:
        """The protocol's own options, then the engine's (:class:`Options`, each
        declared from its field), with the Clear Hash button after Hash."""
        declared = [
            _Option("Debug Log File", "string", "", apply=self._set_log_file),
            _Option("Ponder", "check", False),
            _Option("UCI_Chess960", "check", False, apply=self._set_chess960),
        ]
        for spec_field in dataclasses.fields(Options):
            spec: OptionSpec = spec_field.metadata["uci"]
            default = getattr(self.engine.options, spec_field.name)
            declared.append(
                _Option(spec.name, spec.kind, default, spec.low, spec.high, apply=self._engine_option(spec_field.name))
            )
            if spec_field.name == "hash_mb":
                declared.append(_Option("Clear Hash", "button", apply=lambda _: self.engine.clear_hash()))
        return declared

    def _engine_option(self, name: str) -> Callable[[Any], str | None]:
        def apply(value: Any) -> str | None:
            try:
                return self.engine.set_option(name, value)
            except OptionError as err:
                raise _UciError(str(err)) from None

        return apply

    def _set_log_file(self, path: str) -> str | None:
        if self._log is not None:
            self._log.close()
            self._log = None
        if path:
            try:
                handle = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                self._log = open(handle, "a", encoding="utf-8")
            except OSError as err:
                raise _UciError(f"cannot open debug log {path}: {err.strerror or err}") from None
        return None

    def _set_chess960(self, on: bool) -> str | None:
        self.chess960 = on
        self.board.chess960 = on or self.board.has_chess960_castling_rights()
        return None

    # ------------------------------------------------------------------- input

    def run(self, stream: IO[bytes] | None = None) -> None:
        """Read commands until ``quit`` or end of input, then shut down."""
        stream = stream if stream is not None else sys.stdin.buffer
        try:
            while not self.closed:
                raw = stream.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                if len(raw) > MAX_LINE_BYTES:
                    while raw and not raw.endswith(b"\n"):  # drop the rest of the line
                        raw = stream.readline(MAX_LINE_BYTES)
                    self._error(f"line longer than {MAX_LINE_BYTES} bytes ignored")
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    self._error("line is not valid UTF-8; ignored")
                    continue
                if not self.handle(line):
                    break
        except KeyboardInterrupt:
            pass
        self.shutdown()

    def handle(self, line: str) -> bool:
        """Carry out one command line. Returns False after ``quit``."""
        self._received = time.perf_counter()
        if self._log is not None:
            self._write_log("<< " + line.rstrip("\r\n"))
        tokens = [(match.group(), match.start()) for match in re.finditer(r"\S+", line)]
        if not tokens:
            return True
        index = next((i for i, (token, _) in enumerate(tokens) if token in _COMMANDS), None)
        if index is None:
            self._error(f"unknown command '{_clip(line.strip())}'")
            return True
        command, start = tokens[index]
        if index:
            self._error(f"unknown token(s) '{_clip(line[:start].strip())}' ignored")
        args = [token for token, _ in tokens[index + 1 :]]
        rest = line[start + len(command) :].strip()
        if command == "quit":
            return False
        if command not in ("isready", "stop", "ponderhit"):
            self._flush_deferred()
        try:
            getattr(self, "_cmd_" + command)(args, rest)
        except _UciError as err:
            self._error(str(err))
        except Exception as err:  # a bug must not take the engine down with it
            print_traceback()
            self._error(f"internal error in '{command}': {err!r}")
        return True

    def _defer(self, command: str, args: list[str], rest: str) -> bool:
        """During ``go infinite`` or ``go ponder`` (which must not answer before
        ``stop`` or ``ponderhit``) *command* waits until the search has answered;
        true when it was put aside. A timed search is stopped instead (its bestmove
        printed), as for any other search."""
        if self._answered.is_set() or not self.engine.awaiting_stop:
            return False
        self._deferred.append((command, args, rest))
        if self.debug:
            self.send(f"info string {command} deferred until the search has answered")
        return True

    def _flush_deferred(self) -> None:
        """Carry out the commands put aside during a search that has answered since."""
        while self._deferred and self._answered.is_set():
            command, args, rest = self._deferred.pop(0)
            try:
                getattr(self, "_cmd_" + command)(args, rest)
            except _UciError as err:
                self._error(str(err))

    def shutdown(self) -> None:
        """Stop any search (its bestmove is still printed), keep what the game taught
        (pheromone learning), end the helper processes and close files."""
        self._stop_search()
        message = self.engine.end_game()
        if message:
            self.send(f"info string {message}")
        self.engine.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        self.engine.probe.close_book()
        self.engine.probe.close_tablebases()

    # ---------------------------------------------------------------- commands

    def _cmd_uci(self, args: list[str], rest: str) -> None:
        self.send(f"id name {ENGINE_NAME} {__version__}")
        self.send(f"id author {ENGINE_AUTHOR}")
        for option in self.options.values():
            self.send(option.declaration())
        self.send("uciok")
        engine = self.engine
        for message in (engine.build_message, engine.pheromone_message, engine.spectral_message,
                        engine.network_message):
            if message:
                self.send(f"info string {message}")

    def _cmd_isready(self, args: list[str], rest: str) -> None:
        self.engine.prepare()
        self.send("readyok")

    def _cmd_debug(self, args: list[str], rest: str) -> None:
        if args[:1] == ["on"]:
            self.debug = True
        elif args[:1] == ["off"]:
            self.debug = False
        else:
            raise _UciError("debug takes on or off")

    def _cmd_register(self, args: list[str], rest: str) -> None:
        if self.debug:
            self.send("info string BlitzACO needs no registration")

    def _cmd_ucinewgame(self, args: list[str], rest: str) -> None:
        if self._defer("ucinewgame", args, rest):
            return
        self._stop_search()
        message = self.engine.new_game()
        if message:
            self.send(f"info string {message}")

    def _cmd_setoption(self, args: list[str], rest: str) -> None:
        match = re.fullmatch(r"name\s+(?P<name>.+?)(?:\s+value(?:\s+(?P<value>.*?))?)?\s*", rest, re.DOTALL)
        if match is None:
            raise _UciError("setoption needs: setoption name <id> [value <x>]")
        name = " ".join(match.group("name").split())
        option = self.options.get(name.lower())
        if option is None:
            raise _UciError(f"unknown option '{_clip(name)}'")
        value = option.parse(match.group("value"))
        if self._defer("setoption", args, rest):
            return
        self._stop_search()
        message = option.apply(value) if option.apply is not None else None
        if message:
            self.send(f"info string {message}")

    def _cmd_position(self, args: list[str], rest: str) -> None:
        try:
            self._set_position(args, rest)
        except _UciError as err:
            self._refused = str(err)
            raise

    def _set_position(self, args: list[str], rest: str) -> None:
        if not args:
            raise _UciError("position needs startpos or fen")
        if "moves" in args:
            split = args.index("moves")
            setup, moves = args[:split], args[split + 1 :]
        else:
            setup, moves = args, []
        if setup == ["startpos"]:
            fen = chess.STARTING_FEN
        elif len(setup) > 1 and setup[0] == "fen":
            fen = " ".join(setup[1:])
        else:
            raise _UciError(f"position not understood: '{_clip(rest)}'; position refused")
        origin = (tuple(setup), self.chess960)
        done = len(self._moves)
        if origin == self._origin and moves[:done] == self._moves:
            # The usual case in a game: the last position plus the moves since.
            # Replaying only those keeps the cost of a move independent of the
            # game's length.
            board = self.board
        else:
            board = self._board_from_fen(fen)
            done = 0
        refused = None
        for number, text in enumerate(moves[done:], start=done + 1):
            try:
                move = board.parse_uci(text)
            except ValueError:
                move = None
            if not move:
                # As Stockfish: the position stands up to the last legal move.
                kind = "null move" if move is not None else "illegal or malformed move"
                refused = f"{kind} '{_clip(text)}' (move {number}) refused; position set up to move {number - 1}"
                moves = moves[: number - 1]
                break
            board.push(move)
        self.board = board
        self._origin = origin
        self._moves = moves
        self.position_given = True
        self._refused = None
        if refused is not None:  # only a report: the legal part of the move list stands
            self._error(refused)

    def _board_from_fen(self, fen: str) -> chess.Board:
        try:
            board = chess.Board(fen, chess960=True)
        except ValueError as err:
            raise _UciError(f"bad FEN '{_clip(fen)}': {err}; position refused") from None
        status = board.status()
        problems = status & _UNPLAYABLE
        if problems:
            reasons = ", ".join(text for flag, text in _STATUS_TEXT.items() if problems & flag)
            raise _UciError(f"bad FEN '{_clip(fen)}': {reasons}; position refused")
        # What Stockfish plays from is played from: the impossible part is dropped.
        if status & chess.STATUS_INVALID_EP_SQUARE and board.ep_square is not None:
            self.send(f"info string en passant square {chess.square_name(board.ep_square)} is impossible; dropped")
            board.ep_square = None
        cleaned = board.clean_castling_rights()
        if cleaned != board.castling_rights:
            board.castling_rights = cleaned
            given = fen.split()[2]  # the board has parsed it: the field is there
            self.send(f"info string castling rights {given} impossible in part; playing with {board.castling_xfen()}")
        board.chess960 = self.chess960 or board.has_chess960_castling_rights()
        return board

    def _cmd_go(self, args: list[str], rest: str) -> None:
        if not self._answered.is_set():
            # Every go ends in one bestmove: the running search answers first.
            self._stop_search()
        self._flush_deferred()
        limits = self._parse_go(args)
        if self._refused is not None:
            self._error(f"no position to search: the last position command was refused ({self._refused})")
            if limits.perft is None:
                self.send("bestmove 0000")
            return
        if not self.position_given:
            self._error("go before position: searching the start position")
            self.position_given = True
        # The search needs the history only back to the last capture or pawn move
        # (repetitions); copying all of a long game's would cost time on the clock.
        board = self.board.copy(stack=repetition_window(self.board))
        answered = self._answered = threading.Event()
        if limits.perft is not None:
            # As Stockfish: the other limits are left aside, and no bestmove follows.
            self.engine.perft(
                board, limits.perft, lambda counts, problem: self._perft(board, counts, problem, answered)
            )
            return
        self.engine.go(
            board, limits, _Reporter(self, board), lambda result: self._answer(board, result, answered),
            start=self._received,
        )

    def _parse_go(self, args: list[str]) -> Limits:
        limits = Limits()
        i = 0
        while i < len(args):
            token = args[i]
            i += 1
            if token in _GO_INTEGERS:
                if i >= len(args):
                    self._error(f"go {token} needs a value; ignored")
                    continue
                low, high = _GO_INTEGERS[token]
                try:
                    value = int(args[i])
                except ValueError:
                    self._error(f"go {token} takes an integer, not '{_clip(args[i])}'; ignored")
                    i += 1
                    continue
                i += 1
                if not low <= value <= high:
                    self._error(f"go {token} {value} is outside [{low}, {high}]; ignored")
                    continue
                setattr(limits, token, value)
            elif token == "infinite":
                limits.infinite = True
            elif token == "ponder":
                limits.ponder = True
            elif token == "searchmoves":
                while i < len(args) and args[i] not in _GO_KEYWORDS:
                    text = args[i]
                    i += 1
                    try:
                        limits.searchmoves.append(self.board.parse_uci(text))
                    except ValueError:
                        self._error(f"searchmoves: '{_clip(text)}' is not a legal move; ignored")
            else:
                self._error(f"go: unknown token '{_clip(token)}' ignored")
        return limits

    def _answer(self, board: chess.Board, result: ThinkResult, answered: threading.Event) -> None:
        """The engine's search thread has a move that may be answered: print it."""
        text = "bestmove 0000"
        if result.move is not None:
            text = f"bestmove {board.uci(result.move)}"
            if result.ponder is not None:
                after = board.copy(stack=False)
                after.push(result.move)
                if after.is_legal(result.ponder):
                    text += f" ponder {after.uci(result.ponder)}"
        answered.set()
        self.send(text)

    def _perft(self, board: chess.Board, counts: list[tuple[chess.Move, int]] | None, problem: str | None,
               answered: threading.Event) -> None:
        """Print a finished ``go perft`` as Stockfish does: ``e2e4: 20`` per root move,
        a blank line, ``Nodes searched: N``, a blank line."""
        if counts is None:
            self.send(f"info string {problem}")
        else:
            for move, count in counts:
                self.send(f"{board.uci(move)}: {count}")
            self.send("")
            self.send(f"Nodes searched: {sum(count for _, count in counts)}")
            self.send("")
        answered.set()

    def _stop_search(self) -> None:
        self.engine.stop()
        self.engine.wait()

    def _cmd_stop(self, args: list[str], rest: str) -> None:
        if not self._answered.is_set():
            self.engine.stop()

    def _cmd_ponderhit(self, args: list[str], rest: str) -> None:
        if not self._answered.is_set():
            self.engine.ponderhit()

    def _cmd_d(self, args: list[str], rest: str) -> None:
        for row in str(self.board).splitlines():
            self.send(row)
        self.send(f"Fen: {self.board.fen()}")
        self.send(f"Key: {compute_key(self.board):016X}")
        checkers = chess.SquareSet(self.board.checkers_mask())
        self.send("Checkers: " + " ".join(chess.square_name(square) for square in checkers))

    def _cmd_eval(self, args: list[str], rest: str) -> None:
        if not self._answered.is_set():
            # The search thread is laying pheromone trails that the breakdown reads.
            raise _UciError("eval while searching: send stop first")
        for line in self.engine.explain(self.board):
            self.send(line)


def main(engine: Engine | None = None) -> int:
    """Run a UCI session on this process's stdin and stdout."""
    protocol = UciProtocol(engine=engine)
    # Everything allocated so far (modules, tables) lives as long as the process:
    # keep it out of the cyclic garbage collector's full collections.
    gc.freeze()
    protocol.run()
    return 0
