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

import random
import threading
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chess

from blitzaco.board import INTERPRETED, compute_key, repetition_window
from blitzaco.config import Config, ConfigError, load_config
from blitzaco.options import DEFAULT_HASH_MB, MAX_THREADS, Options, OptionSpec
from blitzaco.pheromone import Trails, bundled_memory
from blitzaco.probe import Probe
from blitzaco.search import (
    Bound,
    SearchMemory,
    mate_in,
)
from blitzaco.static_eval import StaticEval
from blitzaco.timeman import Limits, SearchControl, time_budget
from blitzaco.tt import TranspositionTable
from blitzaco.turn import CurrMove, Reporter, SearchInfo, ThinkResult, Turn, print_traceback

if TYPE_CHECKING:  # imported when Threads > 1 first asks for helpers (start-up stays light)
    from blitzaco.smp import HelperPool, HelperSettings

__all__ = [
    "Engine", "Options", "OptionSpec", "OptionError", "ThinkResult", "SearchInfo", "CurrMove", "Reporter",
    "DEFAULT_HASH_MB", "MAX_THREADS", "Bound", "mate_in", "print_traceback", "compute_key", "repetition_window",
]


#: How many times fewer nodes a second the interpreted build searches than the
#: compiled one: ``blitzaco bench`` (depth 7, the shipped blend), 2026-11-27, the
#: project's 2-core machine, in three pairs: 8,164 nodes/s pure against 473,625
#: compiled (58x); 10,277 against 575,064 (56x); 10,557 against 651,825 (62x).
INTERPRETED_SLOWDOWN = 58


class OptionError(ValueError):
    """An option value the engine cannot use; nothing was changed."""


class Engine:
    """Long-lived engine state and the entry point for a search. One search at a time."""

    def __init__(self, config: Config | None = None, hash_mb: int = DEFAULT_HASH_MB) -> None:
        self.config = config if config is not None else Config()
        self.tt = TranspositionTable(hash_mb)
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
        # The evaluation of the levels below 20 when it is not self.static's (made
        # when first used; see static_for).
        self._level_static: StaticEval | None = None
        # The strength levels' draws (seeded: the same game replays the same way).
        self.level_rng = random.Random(0x5EED)
        # What the game's searches learnt (with [search] keep_memory; see search_memory).
        self._memory: SearchMemory | None = None
        # The clock of the search under way (or the last one) and its thread (go).
        self._control: SearchControl | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------- housekeeping

    def set_config(self, config: Config) -> None:
        """Use new weights; the table's scores were made with the old ones."""
        self.config = config
        self.trails.config = config.pheromone
        self.static = StaticEval(config, self.trails)
        self._level_static = None
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
        """Empty the table and the searches' memory; the helpers first leave their
        search (so that none writes into the emptied table)."""
        if self.pool is not None:
            self.pool.wait_idle()
        self.tt.clear()
        self._memory = None

    def search_memory(self) -> SearchMemory | None:
        """The memory this game's searches learn into, with ``[search] keep_memory``
        (made when first asked for; emptied with the table), else None: each search
        makes its own."""
        settings = self.config.search
        if not settings.keep_memory:
            return None
        if self._memory is None or self._memory.config != settings:
            self._memory = SearchMemory(settings)
        return self._memory

    def _set_threads(self, threads: int) -> str:
        """Start the helper processes for *threads* (none for 1), with a shared table
        of ``Hash`` MB; the table starts empty. The helpers of the last value are
        kept when their number is right and they are well, else ended first."""
        pool = self.pool
        if pool is not None and pool.helpers == threads - 1:
            problems = pool.check()
            if pool.helpers == threads - 1:
                return "; ".join(problems + [f"Threads {threads}: {pool.describe()}"])
        self.close()  # back to the process's own table
        if threads == 1:
            return "Threads 1: one search process"
        from blitzaco.smp import HelperPool

        try:
            pool = HelperPool(threads - 1, self.options.hash_mb, self.helper_settings())
        except (OSError, MemoryError) as err:
            self.tt = TranspositionTable(self.options.hash_mb)
            self.options = replace(self.options, threads=1)
            raise OptionError(f"Threads {threads} not possible, Threads is 1: {err}") from None
        self.pool = pool
        self.tt = pool.table
        return f"Threads {threads}: {pool.describe()}"

    def helper_settings(self) -> HelperSettings:
        from blitzaco.smp import HelperSettings

        options = self.options
        return HelperSettings(self.config, options.syzygy_path, options.syzygy_probe_limit)

    def close(self) -> None:
        """End the helper processes (and multiprocessing's resource tracker, which
        starting them started) and free the shared table (the engine then searches
        alone with a table of its own). Called when the engine quits."""
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.close()
            self.tt = TranspositionTable(self.options.hash_mb)

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
        start: the table's memory (about 0.1 s for 64 MB). Called on
        ``isready`` (which the UCI specification gives for such waits); nothing while a
        search runs."""
        thread = self._thread
        if thread is None or not thread.is_alive():
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
        """One move's steps (:class:`blitzaco.turn.Turn`): no legal move, a book move,
        the tablebases' root moves, the search, the choice of the move to play."""
        turn = Turn(self, board, limits, control, report)
        if not turn.legal:
            return turn.no_move()
        book = turn.book_move()
        if book is not None:
            return book
        turn.consult_tablebases()
        turn.search()
        return turn.choose()

    @property
    def pheromone_message(self) -> str | None:
        """Why the long-term pheromone memory could not be used (reads it if pending)."""
        _ = self.trails.long
        return self.trails.message

    @property
    def build_message(self) -> str | None:
        """What a GUI's user should know of this build: that it runs interpreted (no
        C compiler, an editable install, or ``BLITZACO_PURE=1``), how much slower,
        and how to get the compiled one; None when compiled."""
        if not INTERPRETED:
            return None
        return (f"interpreted build: it searches about {INTERPRETED_SLOWDOWN} times fewer nodes a second than the "
                "compiled one; for that, install with a C compiler: python -m pip install . (not -e, without "
                "BLITZACO_PURE=1), or without one the release's compiled wheel or binary (docs/release.md)")

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

    def static_for(self, level: int) -> StaticEval:
        """The evaluation a search at strength *level* uses: :attr:`static`, but below
        level 20 with the network on and ``[levels] network`` off, the same evaluation
        without the network (the one the levels' UCI_Elo was measured with)."""
        config = self.config
        if level >= 20 or config.levels.network or self.static.net is None:
            return self.static
        if self._level_static is None:
            classical = replace(config.eval, nn=replace(config.eval.nn, enabled=False))
            self._level_static = StaticEval(replace(config, eval=classical), self.trails)
        return self._level_static

    def level(self) -> int:
        """The strength level in force: UCI_Elo's when UCI_LimitStrength is on (it
        wins over Skill Level, as in Stockfish), else Skill Level; 20 is full."""
        if self.options.limit_strength:
            table = self.config.levels.elo_of_level
            below = [level for level, elo in enumerate(table) if elo <= self.options.elo]
            return below[-1] if below else 0
        return self.options.skill_level
