"""The engine facade: ``think(board, limits, report) -> ThinkResult`` (or ``go``, the
same in the engine's own search thread), with ``stop()`` and ``ponderhit()``.

It owns the long-lived state: the options (one frozen :class:`Options` value), the
clock (the time budget from the ``go`` limits, ``Move Overhead`` and ``[time]``), the
configuration, the static evaluation, the transposition table (in shared memory when
``Threads`` > 1), the helper processes (:class:`blitzaco.smp.HelperPool`), the
pheromone memory, the book and tablebase handles. Before searching it asks the probe
layer (a book move, the tablebase-optimal root moves); then it runs the iterative
deepening (with the helpers searching beside it, if any), decides when to stop
between iterations, and reports what it found through callbacks. It never prints;
:mod:`blitzaco.uci` turns the reports into protocol lines.
"""

from __future__ import annotations

import os
import random
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chess

from blitzaco.config import Config, ConfigError, load_config
from blitzaco.moves import decode_move, encode_move
from blitzaco.pheromone import Trails, bundled_memory
from blitzaco.position import compute_key, repetition_window
from blitzaco.probe import Probe
from blitzaco.search import MATE, MATE_BOUND, MAX_DEPTH, Bound, PvLine, Search, Trim, mate_in, tablebase_score
from blitzaco.static_eval import StaticEval
from blitzaco.timeman import IterationReport, Limits, Poll, SearchControl, Stability, time_budget
from blitzaco.tt import MOVE, NativeTable, Table, TranspositionTable
from blitzaco.wdl import material, wdl

if TYPE_CHECKING:  # imported when Threads > 1 first asks for helpers (start-up stays light)
    from blitzaco.smp import HelperPool, HelperSettings

__all__ = [
    "Engine", "Options", "OptionSpec", "OptionError", "ThinkResult", "SearchInfo", "CurrMove", "Reporter",
    "DEFAULT_HASH_MB", "MAX_THREADS", "Bound", "mate_in", "print_traceback",
]


def print_traceback() -> None:
    """Print the exception being handled to stderr (a bug: the GUI gets an ``info
    string``, the log the traceback). ``traceback`` is imported here, not at start-up,
    where it cost about 4 ms (it brings ``linecache``, ``tokenize`` and ``textwrap``)."""
    import traceback

    traceback.print_exc(file=sys.stderr)

DEFAULT_HASH_MB = 64
#: The largest Threads value: the number of cores, at most 1 + smp.MAX_HELPERS (a test
#: checks that they agree).
MAX_THREADS = max(1, min(os.cpu_count() or 1, 256))
#: The root move being searched is reported only once the search is this old (ms).
CURRMOVE_AFTER_MS = 1000.0


@dataclass(frozen=True)
class SearchInfo:
    """Everything one ``info ... pv ...`` line carries."""

    line: PvLine
    nodes: int
    time_ms: int
    hashfull: int
    tbhits: int
    wdl: tuple[int, int, int] | None = None  # per mille, when UCI_ShowWDL asks for it

    @property
    def nps(self) -> int:
        return self.nodes * 1000 // self.time_ms if self.time_ms > 0 else 0


@dataclass(frozen=True)
class CurrMove:
    depth: int
    move: chess.Move
    number: int


class Reporter:
    """Receives the engine's reports; the default ignores them."""

    def info(self, info: SearchInfo) -> None:
        """A principal variation (complete, or a failed aspiration bound)."""

    def currmove(self, currmove: CurrMove) -> None:
        """The root move now being searched."""

    def message(self, text: str) -> None:
        """Something worth an ``info string``."""

    def debug(self, text: str) -> None:
        """A detail for debug mode (the time budget)."""


@dataclass(frozen=True)
class ThinkResult:
    move: chess.Move | None
    ponder: chess.Move | None = None
    score: int | None = None
    depth: int = 0
    nodes: int = 0
    source: str = "search"  # "search", "book", "tablebase" or "none" (no legal move)


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
    elo: int = _option(1742, "UCI_Elo", "spin", 750, 1742)  # within [levels] elo_of_level, up to its level 20


class OptionError(ValueError):
    """An option value the engine cannot use; nothing was changed."""


class Engine:
    """Long-lived engine state and the entry point for a search. One search at a time."""

    def __init__(self, config: Config | None = None, hash_mb: int = DEFAULT_HASH_MB) -> None:
        self.config = config if config is not None else Config()
        self.tt: Table = self._table(hash_mb)
        # The helper processes and their shared table (Threads > 1).
        self.pool: HelperPool | None = None
        self.probe = Probe(self.config.book)
        # The bundled book is opened at once; OwnBook is on when it was found.
        self.book_message = self.probe.open_book("")
        self.options = Options(hash_mb=hash_mb, own_book=self.probe.book is not None)
        # The pheromone memory, with the bundled long-term trails when installed.
        self.trails = Trails(self.config.pheromone)
        self.trails.load_later(bundled_memory())  # read when first used, after uciok
        self.static = StaticEval(self.config, self.trails)
        # The strength levels' draws (seeded: the same game replays the same way).
        self._level_rng = random.Random(0x5EED)
        # The clock of the search under way (or the last one) and its thread (go).
        self._control: SearchControl | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------- housekeeping

    def set_config(self, config: Config) -> None:
        """Use new weights; the table's scores were made with the old ones."""
        self.config = config
        self.trails.config = config.pheromone
        self.static = StaticEval(config, self.trails)
        if self.pool is None and isinstance(self.tt, NativeTable) != config.search.native:
            self.tt = self._table(self.options.hash_mb)
        reseed = config.book.seed != self.probe.book_config.seed
        self.probe.book_config = config.book
        if reseed:
            self.probe.reseed()
        self._clear_table()

    def new_game(self) -> str | None:
        """Forget what belongs to the last game: the table, the book's random state,
        the per-game pheromone trails (learnt first when learning is on). Returns a
        message for an ``info string`` when the memory could not be saved."""
        self._clear_table()
        self.probe.new_game()
        return self.end_game()

    def end_game(self) -> str | None:
        """The game is over: with pheromone learning on (and a PheromoneFile named),
        add its trails to the long-term memory and save it there; then forget them."""
        options = self.options
        if options.pheromone_learning and options.pheromone_file:
            return self.trails.learn_into(options.pheromone_file)
        self.trails.new_game()
        return None

    def set_option(self, name: str, value: Any) -> str | None:
        """Set the field *name* of :attr:`options` to *value* and act on it (open the
        file, resize the table...), even when the value is the one already set (a
        file may have changed). Returns a message for an ``info string``, or raises
        :class:`OptionError` and changes nothing."""
        message = self._apply(name, value)
        self.options = replace(self.options, **{name: value})
        return message

    def _apply(self, name: str, value: Any) -> str | None:
        if name == "hash_mb":
            try:
                if self.pool is not None:
                    self.pool.resize(value)
                    self.tt = self.pool.table
                else:
                    assert isinstance(self.tt, (TranspositionTable, NativeTable))
                    self.tt.resize(value)
            except (MemoryError, OSError) as err:  # OSError: blitzaco.shm.SharedMemoryError
                raise OptionError(f"not enough memory for Hash {value}: {err}") from None
        elif name == "threads":
            return self._set_threads(value)
        elif name == "own_book" and value and self.probe.book is None:
            return "OwnBook is on but no book is loaded (set BookFile)"
        elif name == "book_file":
            return self.probe.open_book(value)
        elif name == "syzygy_path":
            return self.probe.open_tablebases(value)
        elif name == "syzygy_probe_limit":
            self.probe.probe_limit = value
        elif name == "config_file":
            return self._load_config_file(value)
        elif name == "pheromone_file":
            return self._load_pheromone_file(value)
        elif name == "pheromone_learning" and value and not self.options.pheromone_file:
            return "pheromone learning: set PheromoneFile to the file to learn into (the bundled one stays as shipped)"
        elif name not in {spec.name for spec in fields(Options)}:
            raise OptionError(f"no option {name}")
        return None

    def _load_config_file(self, path: str) -> str:
        if not path:
            self.set_config(Config())
            return "using the built-in configuration"
        try:
            config = load_config(path)
        except ConfigError as err:
            raise OptionError(f"config not loaded: {err}") from None
        self.set_config(config)
        notes = "".join(f"; {note}" for note in (self.spectral_message, self.network_message) if note)
        return f"configuration loaded from {path}{notes}"

    def _load_pheromone_file(self, path: str) -> str:
        """Use the long-term memory in *path* (empty: the bundled one): what was
        loaded, or why nothing was (a missing file is created when learning saves to
        it)."""
        problem = self.trails.load(Path(path) if path else bundled_memory())
        if problem is not None:
            return problem
        if self.trails.path is None:
            return "pheromone: no long-term memory"
        return f"pheromone: {len(self.trails.long)} positions from {self.trails.path}"

    def clear_hash(self) -> None:
        self._clear_table()

    def _clear_table(self) -> None:
        """Empty the table; the helpers first leave their search (so that none writes
        into the emptied table)."""
        if self.pool is not None:
            self.pool.wait_idle()
        self.tt.clear()

    def _set_threads(self, threads: int) -> str:
        """Start the helper processes for *threads* (none for 1), with a shared table
        of ``Hash`` MB; the table starts empty. The helpers of the last value are
        kept when their number is right and they are well, else ended first."""
        pool = self.pool
        if pool is not None and pool.helpers == threads - 1:
            problems = pool.check()
            if pool.helpers == threads - 1:
                return "; ".join(problems + [f"Threads {threads}: {pool.describe()}"])
        self.close()  # back to a list table
        if threads == 1:
            return "Threads 1: one search process"
        from blitzaco.smp import HelperPool

        try:
            pool = HelperPool(threads - 1, self.options.hash_mb, self._helper_settings())
        except (OSError, MemoryError) as err:
            self.tt = self._table(self.options.hash_mb)
            self.options = replace(self.options, threads=1)
            raise OptionError(f"Threads {threads} not possible, Threads is 1: {err}") from None
        self.pool = pool
        self.tt = pool.table
        return f"Threads {threads}: {pool.describe()}"

    def _table(self, megabytes: int) -> Table:
        """The single-process table: the native one for the search on the engine's
        own board ([search] native), else the list table."""
        return NativeTable(megabytes) if self.config.search.native else TranspositionTable(megabytes)

    def _helper_settings(self) -> HelperSettings:
        from blitzaco.smp import HelperSettings

        options = self.options
        return HelperSettings(self.config, options.syzygy_path, options.syzygy_probe_limit)

    def _trim(self, control: SearchControl) -> Trim | None:
        """The iteration trim of ``[time]`` for a search on the clock, or None."""
        cfg = self.config.time
        return Trim(control.soft_expired, cfg.trim_depth, cfg.trim_fall) if cfg.trim else None

    def close(self) -> None:
        """End the helper processes and free the shared table (the engine then
        searches alone with a list table). Called when the engine quits."""
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.close()
            self.tt = self._table(self.options.hash_mb)

    # -------------------------------------------------------------------- think

    def think(
        self, board: chess.Board, limits: Limits, report: Reporter | None = None, *, start: float | None = None
    ) -> ThinkResult:
        """Choose a move for *board* within *limits*, in this thread. Always returns a
        legal move when there is one, however early the search is stopped.

        The clock is the engine's: the time budget comes from *limits*, the
        ``Move Overhead`` option and ``[time]`` (:func:`blitzaco.timeman.time_budget`),
        counted from *start* (a ``time.perf_counter()`` value: when the ``go``
        arrived; now by default). :meth:`stop` and :meth:`ponderhit` reach it from
        another thread."""
        report = report if report is not None else Reporter()
        if start is None:
            self.prepare()  # before the clock starts (a go's clock started when it arrived)
        return self._think(board, limits, self._new_clock(board, limits, report, start), report)

    def go(
        self,
        board: chess.Board,
        limits: Limits,
        report: Reporter,
        on_result: Callable[[ThinkResult], None],
        *,
        start: float | None = None,
    ) -> None:
        """Think in the engine's search thread and return at once; *on_result* gets
        the move when UCI allows it to be answered (``go infinite`` and ``go ponder``
        only after :meth:`stop` or :meth:`ponderhit`). One search at a time: a
        search still running is waited for (send :meth:`stop` first)."""
        self.wait()
        control = self._new_clock(board, limits, report, start)  # before the thread: stop() always reaches it
        self._thread = threading.Thread(
            target=self._run, args=(board, limits, control, report, on_result), name="search", daemon=True
        )
        self._thread.start()

    def perft(
        self,
        board: chess.Board,
        depth: int,
        on_result: Callable[[list[tuple[chess.Move, int]] | None, str | None], None],
    ) -> None:
        """Count the leaves of *board*'s move tree *depth* plies deep, split by root
        move (``go perft``), in the engine's search thread, and return at once.
        *on_result* gets the counts, or None and why (:meth:`stop` ended the count
        first, or it failed). One search or count at a time, as for :meth:`go`."""
        self.wait()
        control = SearchControl(Limits(), None)
        self._control = control

        def count() -> None:
            from blitzaco.perft import PerftStopped, divide

            try:
                on_result(divide(board, depth, control.hard_expired), None)
            except PerftStopped:
                on_result(None, "perft stopped")
            except Exception as err:
                print_traceback()
                on_result(None, f"error: perft failed: {err!r}")

        self._thread = threading.Thread(target=count, name="perft", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the running search now; its move is answered as usual."""
        control = self._control
        if control is not None:
            control.stop()

    def ponderhit(self) -> None:
        """The opponent played the move pondered on: the clock given with ``go``
        starts to run now."""
        control = self._control
        if control is not None:
            control.ponderhit()

    def wait(self) -> None:
        """Block until the search started by :meth:`go` has answered."""
        thread = self._thread
        if thread is not None:
            thread.join()
            self._thread = None

    def prepare(self) -> None:
        """Take now, outside any clock, what the next search would otherwise take at its
        start: the native table's memory (about 0.1 s for 64 MB). Called on
        ``isready`` (which the UCI specification gives for such waits); nothing while a
        search runs."""
        thread = self._thread
        if isinstance(self.tt, NativeTable) and (thread is None or not thread.is_alive()):
            self.tt.allocate()

    @property
    def searching(self) -> bool:
        """A search started by :meth:`go` has neither answered nor been stopped."""
        thread, control = self._thread, self._control
        return thread is not None and thread.is_alive() and control is not None and not control.stopped

    @property
    def awaiting_stop(self) -> bool:
        """A search started by :meth:`go` runs that may not answer before
        :meth:`stop` or :meth:`ponderhit` (``go infinite``, ``go ponder``)."""
        control = self._control
        return self.searching and control is not None and (control.limits.infinite or control.pondering)

    def _new_clock(
        self, board: chess.Board, limits: Limits, report: Reporter, start: float | None
    ) -> SearchControl:
        budget = time_budget(limits, board.turn, self.options.move_overhead, self.config.time)
        if limits.has_clock() and limits.clock(board.turn)[0] is None:
            side = "white" if board.turn else "black"
            report.message(f"no clock for {side}, the side to move: moving at once")
        report.debug(f"time budget {budget}")
        control = SearchControl(limits, budget, start=start, count_ponder=self.config.time.count_ponder)
        self._control = control
        return control

    def _run(
        self,
        board: chess.Board,
        limits: Limits,
        control: SearchControl,
        report: Reporter,
        on_result: Callable[[ThinkResult], None],
    ) -> None:
        """Body of the search thread: think, wait while UCI forbids an answer, answer."""
        try:
            result = self._think(board, limits, control, report)
        except Exception as err:  # answer the GUI whatever happened
            print_traceback()
            report.message(f"error: search failed: {err!r}")
            legal = list(board.legal_moves)
            result = ThinkResult(legal[0] if legal else None)
        control.wait_until_released()
        on_result(result)

    def _think(self, board: chess.Board, limits: Limits, control: SearchControl, report: Reporter) -> ThinkResult:
        legal = list(board.legal_moves)
        if not legal:
            score = -MATE if board.is_check() else 0
            chances = ((0, 0, 1000) if score else (0, 1000, 0)) if self.options.show_wdl else None
            report.info(SearchInfo(PvLine(1, 0, 0, score, Bound.EXACT, ()), 0, 0, 0, 0, chances))
            return ThinkResult(None, score=score, source="none")

        root_moves = legal
        if limits.searchmoves:
            root_moves = [move for move in legal if move in limits.searchmoves] or legal

        shown = self.options.multipv  # the lines the GUI asked for
        analysing = limits.infinite or bool(limits.searchmoves) or shown > 1
        if self.options.own_book and not analysing:
            book, problem = self.probe.book_move(board)
            if problem is not None:
                report.message(problem)
            if book is not None:
                report.message(f"book move {board.uci(book.move)} (weight {book.weight} of {book.total_weight})")
                line = self._score_book_move(board, book.move, control, report)
                return ThinkResult(book.move, score=line.score, depth=line.depth, source="book")

        tb_root, problem = (None, None) if limits.searchmoves else self.probe.tablebase_root(board, control.fits)
        if problem is not None:
            report.message(problem)
        tb_score = None
        if tb_root is not None:
            root_moves = list(tb_root.moves)
            tb_score = tablebase_score(tb_root.wdl, tb_root.dtz)
            report.message(
                f"tablebase: {_WDL_NAMES[tb_root.wdl]}, {len(root_moves)} of {len(legal)} moves keep it"
                + (f", {tb_root.dtz} plies to zeroing" if tb_root.dtz else "")
                + ("" if tb_root.by_dtz else " (by WDL: no time for DTZ)")
                + (f" ({tb_root.unprobed} moves not probed in time)" if tb_root.unprobed else "")
            )

        self.tt.new_search()
        pos = self.static.position(board)
        trails = self.trails if self.config.pheromone.enabled else None
        self.static.use_trails(trails is not None)
        if trails is not None:
            trails.evaporate()
        variety = trails is not None and self.config.pheromone.variety and not analysing and limits.mate is None
        multipv = max(shown, self.config.pheromone.variety_candidates) if variety else shown
        level = self.level() if not analysing and limits.mate is None else 20
        node_limit = limits.nodes
        level_depth = MAX_DEPTH
        if level < 20:
            levels = self.config.levels
            multipv = max(multipv, levels.pick_lines)
            node_limit = min(node_limit or levels.level_nodes[level], levels.level_nodes[level])
            level_depth = levels.level_depth[level]
            report.message(f"strength level {level} of 20 (UCI_Elo {levels.elo_of_level[level]}): "
                           f"{levels.pick_lines} lines to depth {level_depth}")
        budget_known = control.budget is not None
        # A game move on the clock: what the time manager's refinements ([time] adaptive,
        # trim) are for; never analysis, mate searches or fixed limits.
        on_clock = budget_known and not analysing and limits.mate is None
        pieces = material(board) if self.options.show_wdl else 0
        # With helpers, the node limit counts every process's nodes: the pool's poll
        # checks it, and the info lines report the sum.
        pool = self.pool
        poll: Poll = control
        if pool is not None:
            pooled = pool.poll(control, node_limit)
            poll, node_limit = pooled, None

        def nodes() -> int:
            return search.nodes + pool.helper_nodes() if pool is not None else search.nodes

        def currmove(depth: int, move: chess.Move, number: int) -> None:
            if control.elapsed_ms() >= CURRMOVE_AFTER_MS:
                report.currmove(CurrMove(depth, move, number))

        def publish(line: PvLine) -> None:
            if line.multipv > shown:
                return  # a roulette candidate the GUI did not ask for
            elapsed = int(control.elapsed_ms())
            if tb_score is not None and abs(line.score) < MATE_BOUND:
                line = replace(line, score=tb_score)  # the tablebase knows better than the search
            tbhits = search.tbhits + (tb_root.probes if tb_root is not None else 0)
            report.info(SearchInfo(line, nodes(), elapsed, self.tt.hashfull(), tbhits, self._chances(line, pieces)))

        search_class = Search
        if pool is None and isinstance(self.tt, NativeTable) and self.static.classical_only():
            from blitzaco.native_search import NativeSearch  # loaded only when [search] native is on

            search_class = NativeSearch
        search = search_class(
            pos,
            self.static,
            self.tt,
            self.config.search,
            poll,
            root_moves,
            multipv=multipv,
            node_limit=node_limit,
            on_bound=publish,
            on_currmove=currmove,
            tablebase=self.probe if self.probe.tablebase is not None else None,
            on_message=report.message,
            trails=trails,
            trim=self._trim(control) if on_clock else None,
        )
        max_depth = limits.depth if limits.depth is not None else MAX_DEPTH
        if level < 20:
            max_depth = min(max_depth, level_depth)
        stability = Stability(self.config.time) if self.config.time.adaptive and on_clock else None
        if self.config.time.single_move and on_clock and len(root_moves) == 1:
            # One legal move: a shallow search for a score and a ponder move, no more.
            max_depth = min(max_depth, self.config.time.single_move_depth)
        last_lines: tuple[PvLine, ...] = ()
        if pool is not None:
            pooled.search = search
            report.debug(f"helpers: {pool.ready()} of {pool.helpers} ready")
            try:
                # Only the moves a repetition can reach back to: the whole game's move
                # stack would be pickled for every search (0.4 ms at 130 plies).
                recent = board.copy(stack=repetition_window(board))
                for message in pool.start_search(recent, root_moves, max_depth, self.tt.generation,
                                                 self._helper_settings()):
                    report.message(message)
            except Exception as err:  # the main search goes on without helpers
                print_traceback()
                report.message(f"error: helpers not started: {err!r}")
        try:
            for iteration in search.iterate(max_depth):
                last_lines = iteration.lines
                for line in iteration.lines:
                    publish(line)
                if trails is not None:
                    trails.deposit_line(board, iteration.lines[0].pv)
                best = iteration.lines[0].score
                if limits.mate is not None and best >= MATE - 2 * limits.mate + 1:
                    break
                if stability is not None and iteration.lines[0].pv:
                    done = IterationReport(iteration.depth, iteration.lines[0].pv[0], best, iteration.best_share)
                    control.scale_soft(stability.update(done))
                if control.soft_expired():
                    break
                if budget_known and abs(best) >= MATE_BOUND and iteration.depth >= 2 * (MATE - abs(best)) + 2:
                    break  # a forced mate is proven; more depth will not change the move
        finally:
            if pool is not None:
                # Only the main search watches the clock and chooses: its end ends theirs.
                try:
                    for message in pool.stop_search():
                        report.message(message)
                except Exception as err:
                    print_traceback()
                    report.message(f"error: helpers: {err!r}")

        pv, score, depth = search.best_line()
        if (
            self.config.search.root_filter
            and not search.stopped
            and not analysing
            and limits.mate is None
        ):
            choice = search.root_filter()
            if choice is not None and choice.move != pv[0]:
                report.message(
                    f"root filter: {board.uci(choice.move)} (minimax {choice.minimax}, maximin {choice.maximin}, "
                    f"mean {choice.mean:.0f}) instead of {board.uci(pv[0])}"
                )
                pv, score = (choice.move,), choice.minimax
        if level < 20 and len(last_lines) > 1:
            pv, score = self._weaker_pick(board, last_lines, pv, score, level, report)
        elif variety and trails is not None and not search.stopped and len(last_lines) > 1:
            pv, score = self._roulette(board, last_lines, pv, score, report)
        if search.stopped:
            # Report where the interrupted search ended: nodes and time as of now.
            line = PvLine(1, depth, max(search.seldepth, depth), score, Bound.EXACT, pv)
            if last_lines and last_lines[0].pv[:1] == pv[:1]:
                line = last_lines[0]
            publish(line)
        ponder = pv[1] if len(pv) > 1 else self._ponder_from_tt(board, pv[0])
        return ThinkResult(pv[0], ponder, score, depth, nodes(), "tablebase" if tb_root else "search")

    def _chances(self, line: PvLine, pieces: int) -> tuple[int, int, int] | None:
        """The win/draw/loss chances of *line*'s score with *pieces* on the board, when
        UCI_ShowWDL asks for them."""
        if not self.options.show_wdl:
            return None
        return wdl(line.score, pieces, self.config.wdl, mate_in(line.score))

    def _score_book_move(
        self, board: chess.Board, move: chess.Move, control: SearchControl, report: Reporter
    ) -> PvLine:
        """Report a book move as a search would, so that a match runner or a GUI has a
        score to log and adjudicate with: a one-ply search of that move alone (its
        quiescence search included; a few nodes), within the clock. Returns the line
        reported."""
        self.tt.new_search()
        self.static.use_trails(self.config.pheromone.enabled)
        search = Search(self.static.position(board), self.static, self.tt, self.config.search, control, [move])
        for _ in search.iterate(1):
            pass
        pv, score, depth = search.best_line()
        line = PvLine(1, depth, max(search.seldepth, depth), score, Bound.EXACT, pv)
        elapsed = int(control.elapsed_ms())
        pieces = material(board) if self.options.show_wdl else 0
        report.info(SearchInfo(line, search.nodes, elapsed, self.tt.hashfull(), 0, self._chances(line, pieces)))
        return line

    @property
    def pheromone_message(self) -> str | None:
        """Why the long-term pheromone memory could not be used (reads it if pending)."""
        _ = self.trails.long
        return self.trails.message

    @property
    def spectral_message(self) -> str | None:
        """Why the spectral term is off although the configuration asks for it."""
        return self.static.spectral_message

    @property
    def network_message(self) -> str | None:
        """Which network the evaluation uses, or why the configured one is not used."""
        return self.static.network_message

    def explain(self, board: chess.Board) -> list[str]:
        """The static evaluation of *board* term by term (the ``eval`` command)."""
        return self.static.explain(board)

    def level(self) -> int:
        """The strength level in force: UCI_Elo's when UCI_LimitStrength is on (it
        wins over Skill Level, as in Stockfish), else Skill Level; 20 is full."""
        if self.options.limit_strength:
            table = self.config.levels.elo_of_level
            below = [level for level, elo in enumerate(table) if elo <= self.options.elo]
            return below[-1] if below else 0
        return self.options.skill_level

    def _weaker_pick(
        self, board: chess.Board, lines: tuple[PvLine, ...], pv: tuple[chess.Move, ...], score: int, level: int,
        report: Reporter,
    ) -> tuple[tuple[chess.Move, ...], int]:
        """Stockfish's Skill pick among the searched lines: each score plus a random
        push that grows with the weakness and the spread of the scores; the largest
        wins. From ``safe_level`` up, a mate in one is always played and nothing
        ``blunder_cp`` worse than the best is chosen."""
        levels = self.config.levels
        candidates = [line for line in lines if line.pv and line.bound == Bound.EXACT] or list(lines[:1])
        top = candidates[0].score
        if level >= levels.safe_level:
            if top >= MATE - 2:  # a mate in one
                return pv, score
            candidates = [line for line in candidates if line.score >= top - levels.blunder_cp]
        weakness = 120 - 2 * level
        delta = min(top - candidates[-1].score, 100)
        best_value, chosen = -(1 << 60), candidates[0]
        for line in candidates:
            push = (weakness * (top - line.score) + delta * self._level_rng.randrange(weakness)) // 128
            if line.score + push >= best_value:
                best_value, chosen = line.score + push, line
        if chosen.pv[0] != pv[0]:
            report.message(f"level {level}: {board.uci(chosen.pv[0])} ({chosen.score} cp) instead of the best")
        return chosen.pv, chosen.score

    def _roulette(
        self, board: chess.Board, lines: tuple[PvLine, ...], pv: tuple[chess.Move, ...], score: int, report: Reporter
    ) -> tuple[tuple[chess.Move, ...], int]:
        """The root move drawn by roulette wheel over the trails, among the lines within
        variety_margin of the best."""
        best = lines[0].score
        if abs(best) >= MATE_BOUND:
            return pv, score
        margin = self.config.pheromone.variety_margin
        near = [line for line in lines if line.bound == Bound.EXACT and line.pv and line.score >= best - margin]
        if len(near) < 2:
            return pv, score
        code = self.trails.roulette(compute_key(board), [encode_move(line.pv[0]) for line in near])
        chosen = next(line for line in near if encode_move(line.pv[0]) == code)
        if chosen.pv[0] != pv[0]:
            report.message(
                f"roulette: {board.uci(chosen.pv[0])} ({chosen.score} cp) among {len(near)} moves within {margin} cp"
            )
        return chosen.pv, chosen.score

    def _ponder_from_tt(self, board: chess.Board, move: chess.Move) -> chess.Move | None:
        """The expected reply when the PV was cut short: the table's move after *move*."""
        after = board.copy(stack=False)
        after.push(move)
        entry = self.tt.probe(compute_key(after))
        reply = decode_move(entry[MOVE]) if entry is not None else None
        if reply is not None and after.is_legal(reply):
            return reply
        return None


_WDL_NAMES = {
    2: "win",
    1: "win spoiled by the fifty-move rule",
    0: "draw",
    -1: "loss saved by the fifty-move rule",
    -2: "loss",
}
