"""Every difference between the operating systems the engine runs on, in one place.
Each function reads :data:`PLATFORM` when it is called, so that
``tests/test_system.py`` runs every system's branch here by setting it (and, for
Windows' file lock, a stand-in for ``msvcrt``):

* **A frozen build's files** (the PyInstaller binary, any system): they are unpacked
  under ``sys._MEIPASS`` (:func:`frozen_root`).
* **``SyzygyPath``**: folders separated by ``;`` on Windows (where ``:`` follows a
  drive letter), ``:`` elsewhere (:func:`split_paths`).
* **The pheromone memory's file lock**: ``msvcrt.locking`` on Windows, ``flock``
  elsewhere (:func:`lock_exclusive`); on POSIX a save renames a new file over the
  locked one, on Windows, where a file open elsewhere cannot be replaced, it writes
  in place (:func:`rename_replaces_open_files`).
* **``Threads``' shared memory**: on Linux an anonymous memory file (``memfd``, freed
  with the last process that maps it; the room for it is the memory available), on
  macOS and Windows a named block of ``multiprocessing.shared_memory`` (the creator
  frees its name; no room can be told in advance) (:func:`anonymous_shared_memory`).
* **Background jobs** (label runs, packing): on Linux the idle scheduling class, and
  the session's process group (an autogroup) at nice 19 (:func:`run_in_background`);
  elsewhere they run at normal priority.
* **Environment variables for the processes a job starts** (:func:`environment`).
* **Line endings**: none to handle. Commands are read as bytes and split on any
  whitespace, so the ``\\r`` of a Windows pipe's ``\\r\\n`` is dropped with the
  rest; output is text written with ``\\n``, which Windows' text mode writes as
  ``\\r\\n`` and every GUI reads.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["PLATFORM", "environment", "frozen_root", "path_separator", "split_paths", "lock_exclusive",
           "rename_replaces_open_files", "anonymous_shared_memory", "is_windows", "is_linux", "run_in_background"]

#: ``sys.platform`` (``linux``, ``darwin``, ``win32``); tests set it to run another
#: system's branch.
PLATFORM = sys.platform


def is_windows() -> bool:
    return PLATFORM == "win32"


def is_linux() -> bool:
    return PLATFORM.startswith("linux")


def frozen_root() -> Path | None:
    """Where a frozen build (PyInstaller) unpacked its files; None when not frozen."""
    root = getattr(sys, "_MEIPASS", None)
    return Path(root) if root is not None else None


def path_separator() -> str:
    """What separates the folders of a path list (``SyzygyPath``)."""
    return ";" if is_windows() else ":"


def split_paths(value: str) -> list[str]:
    """The folders of a path list, empty parts left out."""
    return [part for part in value.split(path_separator()) if part.strip()]


def lock_exclusive(handle: int) -> None:
    """Wait for an exclusive lock on the open file *handle* (released when it is
    closed, or with the process). Windows: ``msvcrt.locking`` of its first byte, which
    retries for about 10 s and then raises :class:`OSError`; elsewhere ``flock``."""
    if is_windows():
        import msvcrt

        msvcrt.locking(handle, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined, unused-ignore]
        return
    import fcntl

    fcntl.flock(handle, fcntl.LOCK_EX)


def rename_replaces_open_files() -> bool:
    """Whether a new file may be renamed over one that another process holds open
    (POSIX); on Windows it cannot, and such a file is written in place."""
    return not is_windows()


def anonymous_shared_memory() -> bool:
    """Whether shared memory blocks are anonymous memory files here (Linux with
    ``memfd_create`` and ``/proc``, through which another process maps one); else
    named blocks."""
    return (is_linux() and hasattr(os, "memfd_create")
            and os.path.isdir(f"/proc/{os.getpid()}/fd"))


def run_in_background() -> bool:
    """Make this process, and every process it starts from now on, leave the
    processor to the rest of the machine (a match beside a label run). On Linux: the
    idle scheduling class, and the nice value 19 for this session's autogroup. The
    second matters as much as the first: where the kernel groups processes by session
    (``/proc/sys/kernel/sched_autogroup_enabled``), a group competes with another
    session's group at the group's own weight, whatever the class of the processes in
    it, so an idle-class job started in its own session (``setsid``, ``nohup``) would
    still take half the cores from a match started in another; measured 2026-11-27:
    a label run's two Stockfish processes at 56 % and 52 % of a core beside a match
    whose Stockfish then lost 28 games in a row on time; with its group at 19, 3 %.
    The group is the whole session's: started from a terminal, the terminal's other
    commands yield too. Returns whether anything was changed (nothing off Linux)."""
    if not is_linux():
        return False
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    try:
        Path("/proc/self/autogroup").write_text("19")
    except OSError:
        pass  # no autogroups (or not allowed): the class alone
    return True


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """*values* set in this process's environment inside the block (the processes
    started there inherit them), each variable given back its value, or its absence,
    after it."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
