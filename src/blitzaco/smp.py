"""Parallel search over processes (``Threads`` > 1), in the shape engines call Lazy
SMP: ``Threads - 1`` helper processes search the same root as the main search, with
the same root moves and depth limit, at staggered depths, and share one
transposition table in shared memory (:mod:`blitzaco.sharedtt`). They report
nothing: only the main search reports ``info`` and chooses the move; what the
helpers add is the entries they leave in the table.

Processes, not threads: CPython's global interpreter lock lets one thread run
Python at a time, so threads would share one core.

**Life cycle.** :class:`HelperPool` starts the helpers when ``Threads`` is set
(start method ``spawn`` everywhere: the same on Linux, macOS and Windows, and what a
frozen PyInstaller build supports with :func:`multiprocessing.freeze_support`) and
keeps them across moves and games. Each helper waits on a pipe for messages
(:meth:`HelperPool.start_search` sends ``go`` with the board, the root moves, the
depth limit and the table's generation; the configuration and the tablebase path
when they change). A thread per helper writes its pipe, so a helper that stops
reading never blocks the engine.

**Control block.** A small shared block of 64-bit words beside the table: word 0
is the token of the search the helpers must run (the main search's; anything else
stops them at their next poll, every 64 nodes); each helper has a slot of four
words: its node count for the current search (the token's low 16 bits above
bit 48, the nodes below), the last token it took up, the token it is searching
(0: idle), and its process id once it is ready. ``go nodes N`` counts the nodes
of every process, as Stockfish does: the main search stops when its own nodes plus
the helpers' slots reach N, and the ``info`` lines report that sum.

**Stopping.** Only the main search watches the clock (``stop``, ``ponderhit``,
the time limits): when it ends, :meth:`HelperPool.stop_search` changes word 0 and
every helper leaves its search within 64 nodes.

**Robustness.** The engine never waits for a helper while it searches. Before and
after each search the pool checks its helpers: one that has exited, or that has
not taken up a search sent ``hang_timeout`` ms ago (``start_timeout`` for one that
never became ready), is reported, killed if need be, and restarted up to
``max_restarts`` times, then dropped; the main search goes on meanwhile. No
helper outlives the engine: :meth:`HelperPool.close` (``quit``, end of input,
``Threads 1``) asks them to quit and then terminates them; each helper also
watches its parent with :func:`multiprocessing.parent_process`'s sentinel and
exits when the engine is gone, however it ended (killed, pipes closed); and they
are daemon processes, which :mod:`multiprocessing` terminates when the engine's
interpreter exits. A helper never writes to the engine's standard output: its
stdout is pointed at its stderr, its stdin at the null device.

**The resource tracker.** On POSIX the first ``spawn`` also starts
:mod:`multiprocessing`'s resource tracker, a process of its own (the engine's
executable again) that holds the read end of a pipe and exits only when every
write end is closed: left alone, after the engine itself has exited. It would
outlive the engine, and in the one-file binary it runs from the folder the
bootloader unpacked, which the bootloader deletes once the engine has exited: a
tracker still starting then failed its imports and wrote a traceback on the GUI's
standard error. So the last pool to close, after its helpers are gone (each holds a
write end too), closes the engine's write end and waits for the tracker to exit
(:func:`stop_resource_tracker`; killed after ``_TRACKER_WAIT`` s): no process the
engine started outlives ``quit``, the end of input or ``Threads 1``, in the wheel as
in the binary. A later pool starts a new tracker, as :mod:`multiprocessing` does
whenever it finds none. A tracker that was running before the first pool opened
(a program using :mod:`multiprocessing` that runs the engine in its own process)
is not the pools' to stop, and is left alone. A pool still open at the
interpreter's exit is closed then (:mod:`atexit`), so the same holds however the
engine's main thread ends.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import chess

from blitzaco.config import Config, ThreadsConfig
from blitzaco.sharedtt import SharedTranspositionTable
from blitzaco.shm import SharedMemoryError, attach_block, create_block
from blitzaco.timeman import Poll

__all__ = ["HelperPool", "HelperSettings", "MAX_HELPERS", "SharedMemoryError", "stop_resource_tracker"]

#: Most helper processes (the control block's slots).
MAX_HELPERS = 255
_TOKEN = 0
_FIRST_SLOT = 8
_SLOT_WORDS = 4
_NODES, _TAKEN, _BUSY, _READY = range(_SLOT_WORDS)
_CONTROL_WORDS = _FIRST_SLOT + _SLOT_WORDS * MAX_HELPERS
_NODE_MASK = (1 << 48) - 1
_TAG_MASK = 0xFFFF


def _slot(index: int) -> int:
    return _FIRST_SLOT + _SLOT_WORDS * (index - 1)


@dataclass(frozen=True)
class HelperSettings:
    """What a helper needs besides the position: the configuration (weights, search
    parameters) and the tablebases."""

    config: Config
    syzygy_path: str = ""
    syzygy_probe_limit: int = 7

    def same_as(self, other: HelperSettings | None) -> bool:
        return (
            other is not None
            and other.config is self.config
            and other.syzygy_path == self.syzygy_path
            and other.syzygy_probe_limit == self.syzygy_probe_limit
        )


class _Helper:
    """The pool's view of one helper process."""

    def __init__(self, index: int, process: Any, sender: _Sender, restarts: int) -> None:
        self.index = index
        self.process = process
        self.sender = sender
        self.restarts = restarts
        self.started = time.monotonic()
        self.sent_token = 0  # the last go sent (0: none since the start)
        self.sent_at = 0.0
        self.settings: HelperSettings | None = None  # the settings it has been sent

    @property
    def pid(self) -> int | None:
        return self.process.pid  # type: ignore[no-any-return]


class _Sender:
    """Writes one helper's pipe from a thread of its own."""

    def __init__(self, conn: multiprocessing.connection.Connection, name: str) -> None:
        self.conn = conn
        self.outbox: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self.broken = False
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def send(self, message: tuple[Any, ...]) -> None:
        self.outbox.put(message)

    def close(self) -> None:
        self.outbox.put(None)

    def _run(self) -> None:
        try:
            while True:
                message = self.outbox.get()
                if message is None:
                    break
                self.conn.send(message)
        except (OSError, ValueError, EOFError):
            self.broken = True  # the helper is gone; the pool's check reports it
        finally:
            try:
                self.conn.close()
            except OSError:
                pass


class HelperPool:
    """The helper processes and the shared table they search with. Used by the
    engine from one thread at a time (the UCI thread between searches, the search
    thread during one); :meth:`helper_nodes` may be read from any."""

    def __init__(self, helpers: int, megabytes: int, settings: HelperSettings) -> None:
        """Start *helpers* processes sharing a new table of *megabytes*. Raises
        :class:`SharedMemoryError` (or :class:`OSError` when a process cannot be
        started) and leaves nothing behind."""
        if not 1 <= helpers <= MAX_HELPERS:
            raise ValueError(f"1 to {MAX_HELPERS} helpers, not {helpers}")
        self._context = multiprocessing.get_context("spawn")
        self.settings = settings
        self._helpers: list[_Helper] = []
        self._token = 0
        # Counted before the table is made: a named block starts the tracker too.
        _pool_opened(self)
        self._counted = True
        try:
            self.table = SharedTranspositionTable(megabytes)
            try:
                self._block = create_block(8 * _CONTROL_WORDS)
            except OSError as err:
                raise SharedMemoryError(f"cannot create the helpers' control block: {err}") from None
            buf = self._block.buf
            self._words = buf[: 8 * _CONTROL_WORDS].cast("Q")
            for word in range(_CONTROL_WORDS):
                self._words[word] = 0
            for index in range(1, helpers + 1):
                self._helpers.append(self._spawn(index, 0))
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ queries

    @property
    def config(self) -> ThreadsConfig:
        return self.settings.config.threads

    @property
    def helpers(self) -> int:
        """Helpers running (dropped ones no longer count)."""
        return len(self._helpers)

    @property
    def pids(self) -> list[int]:
        return [helper.pid for helper in self._helpers if helper.pid is not None]

    def describe(self) -> str:
        pids = ", ".join(str(pid) for pid in self.pids)
        count = self.helpers
        return (
            f"{count} helper process{'es' if count != 1 else ''} (pid {pids}), "
            f"sharing a {self.table.megabytes:g} MB table"
        )

    def ready(self) -> int:
        """Helpers that have started up (imported the engine, mapped the table)."""
        words = self._words
        return sum(1 for helper in self._helpers if words[_slot(helper.index) + _READY])

    def wait_ready(self, timeout: float) -> bool:
        """Wait at most *timeout* seconds until every helper has started up (for
        measurements and tests; the engine never waits for its helpers)."""
        deadline = time.monotonic() + timeout
        while self.ready() < self.helpers:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def helper_nodes(self) -> int:
        """The helpers' nodes in the current (or last) search."""
        words = self._words
        tag = self._token & _TAG_MASK
        total = 0
        for helper in self._helpers:
            value = words[_slot(helper.index) + _NODES]
            if value >> 48 == tag:
                total += value & _NODE_MASK
        return total

    def poll(self, control: Poll, node_limit: int | None) -> _PooledPoll:
        """What the main search polls instead of *control*: *control*'s verdict, and
        *node_limit* counted over every process (None: no limit)."""
        return _PooledPoll(control, self, node_limit)

    # --------------------------------------------------------------- searching

    def start_search(
        self,
        board: chess.Board,
        root_moves: Sequence[chess.Move],
        max_depth: int,
        generation: int,
        settings: HelperSettings,
    ) -> list[str]:
        """Send every helper the search; returns the messages of the health check
        made first (helpers restarted or dropped)."""
        self.settings = settings
        messages = self.check()
        self._token += 1
        token = self._token
        self._words[_TOKEN] = token
        words = self._words
        now = time.monotonic()
        moves = list(root_moves)
        for helper in self._helpers:
            if not settings.same_as(helper.settings):
                helper.sender.send(("settings", settings))
                helper.settings = settings
            if helper.sent_token and words[_slot(helper.index) + _TAKEN] != helper.sent_token:
                continue  # still busy with (or starting on) the last one: skip this one
            helper.sender.send(("go", token, generation, board, moves, max_depth))
            helper.sent_token = token
            helper.sent_at = now
        return messages

    def stop_search(self) -> list[str]:
        """End the helpers' search (they leave it within 64 nodes); returns the health
        check's messages."""
        self._words[_TOKEN] = 0
        return self.check()

    def wait_idle(self) -> None:
        """Stop the helpers' search and wait (at most ``stop_wait`` ms) until none is
        inside it, so that nothing writes the table."""
        self._words[_TOKEN] = 0
        deadline = time.monotonic() + self.config.stop_wait / 1000.0
        words = self._words
        while any(words[_slot(helper.index) + _BUSY] for helper in self._helpers):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.001)

    # ------------------------------------------------------------- life cycle

    def check(self) -> list[str]:
        """Find dead and hanging helpers: report them, restart them (at most
        ``max_restarts`` times each) or drop them. Returns what was found and done."""
        messages: list[str] = []
        now = time.monotonic()
        cfg = self.config
        for helper in list(self._helpers):
            slot = _slot(helper.index)
            exitcode = helper.process.exitcode
            what = None
            if exitcode is not None:
                what = f"exited (code {exitcode})"
            elif not self._words[slot + _READY]:
                if now - helper.started > cfg.start_timeout / 1000.0:
                    what = f"did not start within {cfg.start_timeout} ms"
            elif (
                helper.sent_token
                and self._words[slot + _TAKEN] != helper.sent_token
                and now - helper.sent_at > cfg.hang_timeout / 1000.0
            ):
                what = f"has not taken up a search sent {int((now - helper.sent_at) * 1000)} ms ago"
            if what is None:
                continue
            text = f"helper {helper.index} (pid {helper.pid}) {what}"
            self._end(helper, force=True)
            if helper.restarts < cfg.max_restarts:
                try:
                    replacement = self._spawn(helper.index, helper.restarts + 1)
                except OSError as err:
                    messages.append(f"error: {text}; not restarted: {err}")
                    self._helpers.remove(helper)
                    continue
                self._helpers[self._helpers.index(helper)] = replacement
                messages.append(f"error: {text}; restarted (pid {replacement.pid})")
            else:
                self._helpers.remove(helper)
                messages.append(
                    f"error: {text}; dropped after {helper.restarts} restarts, {len(self._helpers)} helpers left"
                )
        return messages

    def resize(self, megabytes: int) -> None:
        """Replace the table by a new, empty one of *megabytes*; the helpers switch
        to it. Raises :class:`SharedMemoryError` and changes nothing when the memory
        cannot be had."""
        table = SharedTranspositionTable(megabytes)
        self.wait_idle()
        old, self.table = self.table, table
        for helper in self._helpers:
            helper.sender.send(("table", table.name))
        old.close()

    def close(self) -> None:
        """Ask every helper to quit, terminate those that do not within
        ``stop_wait`` ms, and free the shared memory; the last pool open also stops
        the resource tracker (see the module's docstring). Idempotent."""
        helpers, self._helpers = self._helpers, []
        if hasattr(self, "_words"):
            self._words[_TOKEN] = 0
        for helper in helpers:
            helper.sender.send(("quit",))
            helper.sender.close()
        deadline = time.monotonic() + self.config.stop_wait / 1000.0
        for helper in helpers:
            try:
                helper.process.join(max(0.0, deadline - time.monotonic()))
            except (ValueError, OSError):
                pass
        for helper in helpers:
            try:
                self._end(helper)
            except (ValueError, OSError):
                pass
        try:
            if hasattr(self, "_words"):
                self._words.release()
                del self._words
                self._block.close()
                self._block.unlink()
            if hasattr(self, "table"):
                self.table.close()
        finally:
            # Last: the helpers are gone and the blocks freed (a named block is
            # unregistered from the tracker as it is unlinked).
            if self._counted:
                self._counted = False
                _pool_closed(self)

    def _spawn(self, index: int, restarts: int) -> _Helper:
        words = self._words
        slot = _slot(index)
        for word in range(_SLOT_WORDS):
            words[slot + word] = 0
        reader, writer = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=helper_main,
            args=(reader, self._block.name, index, self.table.name, self.settings),
            name=f"blitzaco-helper-{index}",
            daemon=True,
        )
        try:
            process.start()
        finally:
            reader.close()
        helper = _Helper(index, process, _Sender(writer, f"helper-{index}-pipe"), restarts)
        helper.settings = self.settings
        return helper

    @staticmethod
    def _end(helper: _Helper, force: bool = False) -> None:
        """Make sure the helper's process is gone: terminate it (kill it at once when
        *force*: it hangs or is stopped), then kill it if it is still there."""
        process = helper.process
        helper.sender.close()
        if process.exitcode is None:
            if not force:
                process.terminate()
                process.join(1.0)
            if process.exitcode is None:
                process.kill()
                process.join(1.0)
        try:
            process.close()
        except ValueError:
            pass  # still running after a kill: leave it to the operating system


# ------------------------------------------------------- the resource tracker

#: Seconds :func:`stop_resource_tracker` waits for the tracker to exit before it
#: kills it (it exits as soon as it reads the end of its pipe; in the one-file
#: binary it may still be starting up, on a busy machine).
_TRACKER_WAIT = 5.0
_pools_lock = threading.Lock()
_open_pools: set[HelperPool] = set()
#: Whether the tracker running now was started by the open pools (it was not
#: running when the first of them opened): theirs to stop when the last closes.
_tracker_ours = False


def _pool_opened(pool: HelperPool) -> None:
    global _tracker_ours
    with _pools_lock:
        if not _open_pools:
            _tracker_ours = not _tracker_running()
        _open_pools.add(pool)


def _pool_closed(pool: HelperPool) -> None:
    global _tracker_ours
    with _pools_lock:
        _open_pools.discard(pool)
        if _open_pools or not _tracker_ours:
            return
        _tracker_ours = False
        # Held meanwhile: a pool opening in another thread must not spawn with the
        # descriptor being closed.
        stop_resource_tracker()


def _tracker() -> Any:
    """multiprocessing's resource tracker of this process (None where there is none:
    Windows, or a standard library without it)."""
    if os.name != "posix":
        return None
    try:
        from multiprocessing import resource_tracker
    except ImportError:
        return None
    return getattr(resource_tracker, "_resource_tracker", None)


def _tracker_running() -> bool:
    tracker = _tracker()
    return tracker is not None and getattr(tracker, "_fd", None) is not None


def stop_resource_tracker(timeout: float = _TRACKER_WAIT) -> None:
    """Stop the resource tracker this process started, if it runs, and reap it:
    close this process's end of its pipe (it then frees what is still registered
    and exits), wait at most *timeout* seconds, then kill it. Never raises. The
    next ``spawn`` (or named shared block) starts a new one.

    What the standard library's private ``ResourceTracker._stop`` does, bounded: a
    process holding another write end (a helper that would not die) must not hang
    ``quit``. Only its private ``_fd``, ``_pid`` and ``_lock`` are used, and
    nothing happens where they are missing."""
    try:
        tracker = _tracker()
        lock = getattr(tracker, "_lock", None)
        if lock is None or not lock.acquire(timeout=timeout):
            return
        try:
            fd, pid = getattr(tracker, "_fd", None), getattr(tracker, "_pid", None)
            if fd is None or pid is None:
                return  # none running, or one this process did not start (a helper's)
            tracker._fd = None
            tracker._pid = None
            try:
                os.close(fd)
            except OSError:
                pass
        finally:
            lock.release()
        _reap(pid, timeout)
    except Exception:  # never at quit: at worst the tracker exits on its own later
        pass


def _reap(pid: int, timeout: float) -> None:
    """Wait at most *timeout* seconds for the child *pid* to exit, kill it if it
    has not, and collect its exit status."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    try:
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() >= deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
    except ChildProcessError:
        pass  # already collected


@atexit.register
def _close_open_pools() -> None:
    """At the interpreter's exit, close the pools still open (whose helpers
    :mod:`multiprocessing` would terminate anyway, but whose tracker it leaves)."""
    with _pools_lock:
        pools = list(_open_pools)
    for pool in pools:
        try:
            pool.close()
        except Exception:
            pass


class _PooledPoll:
    """The main search's poll with helpers: the clock's verdict, and the node limit
    over every process."""

    __slots__ = ("control", "pool", "limit", "search")

    def __init__(self, control: Poll, pool: HelperPool, limit: int | None) -> None:
        self.control = control
        self.pool = pool
        self.limit = limit
        self.search: Any = None  # the main Search, set once it exists

    def hard_expired(self) -> bool:
        if self.control.hard_expired():
            return True
        limit = self.limit
        if limit is not None and self.search is not None:
            return self.search.nodes + self.pool.helper_nodes() >= limit  # type: ignore[no-any-return]
        return False


# ------------------------------------------------------------------ the helper


class _HelperPoll:
    """A helper's poll: publish its node count, and stop when word 0 changes."""

    __slots__ = ("words", "token", "tag", "slot", "search")

    def __init__(self, words: memoryview, token: int, slot: int) -> None:
        self.words = words
        self.token = token
        self.tag = (token & _TAG_MASK) << 48
        self.slot = slot
        self.search: Any = None

    def hard_expired(self) -> bool:
        words = self.words
        if self.search is not None:
            words[self.slot] = self.tag | self.search.nodes
        return words[_TOKEN] != self.token  # type: ignore[no-any-return]


class _HelperSearcher:
    """A helper process's state: its evaluation, tablebases and table."""

    def __init__(self, words: memoryview, index: int, table: SharedTranspositionTable | None,
                 settings: HelperSettings) -> None:
        from blitzaco.probe import Probe

        self.words = words
        self.index = index
        self.slot = _slot(index)
        self.table = table
        self.probe = Probe()
        self.configure(settings)

    def configure(self, settings: HelperSettings) -> None:
        from blitzaco.pheromone import Trails
        from blitzaco.probe import Probe
        from blitzaco.static_eval import StaticEval

        self.config = settings.config
        # No pheromone memory: the trails are the main process's (see the README).
        self.static = StaticEval(settings.config, Trails(settings.config.pheromone))
        self.static.use_trails(False)
        self.probe.close_tablebases()
        self.probe = Probe(settings.config.book)
        if settings.syzygy_path:
            self.probe.open_tablebases(settings.syzygy_path)
        self.probe.probe_limit = settings.syzygy_probe_limit
        cfg = settings.config.threads
        j = (self.index - 1) % len(cfg.skip_size)
        size, phase = max(1, cfg.skip_size[j]), cfg.skip_phase[j]
        self.skip: Callable[[int], bool] = lambda depth: (depth + phase) // size % 2 == 1

    def attach(self, name: str) -> None:
        if self.table is not None:
            self.table.close()
        try:
            self.table = SharedTranspositionTable(name=name)
        except FileNotFoundError:
            self.table = None  # already replaced again: the next message names the new one

    def search(self, token: int, generation: int, board: chess.Board, root_moves: list[chess.Move],
               max_depth: int) -> None:
        from blitzaco.search import Search, SearchPlan

        words = self.words
        slot = self.slot
        words[slot + _TAKEN] = token
        if words[_TOKEN] != token or self.table is None:
            return  # the main search is already over
        words[slot + _BUSY] = token
        poll = _HelperPoll(words, token, slot + _NODES)
        words[slot + _NODES] = poll.tag
        try:
            table = self.table
            table.generation = generation
            search = Search(board, SearchPlan(
                self.static, table, self.config.search, poll, root_moves,
                tablebase=self.probe if self.probe.tablebase is not None else None,
            ))
            poll.search = search
            for _ in search.iterate(max_depth, self.skip):
                if words[_TOKEN] != token:
                    break
            words[slot + _NODES] = poll.tag | search.nodes
        finally:
            words[slot + _BUSY] = 0


def _quiet_stdio() -> None:
    """The engine's stdout is the UCI channel: a helper must never write to it, nor
    hold it (nor its stdin) open after the engine is gone."""
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)
    except OSError:
        pass
    sys.stdout = sys.stderr


def _watch_parent() -> None:
    """Exit at once when the engine process ends, however it ended."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def helper_main(
    conn: multiprocessing.connection.Connection, block_name: str, index: int, table_name: str,
    settings: HelperSettings,
) -> None:
    """A helper process's body: search what the pipe says until ``quit`` or the end
    of the pipe."""
    _quiet_stdio()
    _watch_parent()
    # Ctrl-C in a terminal reaches the whole process group: the engine handles it,
    # and its end ends the helpers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        block = attach_block(block_name)
    except FileNotFoundError:
        return  # the pool was closed before this process got going
    buf = block.buf
    assert buf is not None
    words = buf[: 8 * _CONTROL_WORDS].cast("Q")
    try:
        table: SharedTranspositionTable | None = SharedTranspositionTable(name=table_name)
    except FileNotFoundError:
        table = None
    helper = _HelperSearcher(words, index, table, settings)
    words[_slot(index) + _READY] = os.getpid()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        kind = message[0]
        if kind == "quit":
            break
        try:
            if kind == "go":
                helper.search(*message[1:])
            elif kind == "settings":
                helper.configure(message[1])
            elif kind == "table":
                helper.attach(message[1])
        except Exception:  # a bug: say so, and stay available for the next search
            traceback.print_exc(file=sys.stderr)
    if helper.table is not None:
        helper.table.close()
    words.release()
    block.close()
