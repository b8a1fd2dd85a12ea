"""Where the data files shipped with the engine are: ``assets/`` installed as the
package ``blitzaco.assets``, unpacked beside a frozen build's files, or, when the
engine runs from a source checkout (``PYTHONPATH=src``), the checkout's ``assets/``;
and how the engine opens a file a user names (regular files only, never blocking;
read bounded)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from blitzaco.system import frozen_root

__all__ = ["bundled_file", "open_regular", "read_user_file"]

# blitzaco/bundled.py -> the installed package's assets
_PACKAGE_ASSETS = Path(__file__).resolve().parent / "assets"
# src/blitzaco/bundled.py -> the checkout's top folder
_CHECKOUT_ASSETS = Path(__file__).resolve().parents[2] / "assets"


def bundled_file(name: str) -> Path | None:
    """The shipped data file *name* (``book.bin``, ``pheromone.bin``), if installed."""
    frozen = frozen_root()
    if frozen is not None:
        path = frozen / "blitzaco" / "assets" / name
        return path if path.is_file() else None
    # Installed (a wheel puts blitzaco.assets beside this module), or a source
    # checkout run with PYTHONPATH=src (a worktree of an older commit in a match,
    # say), which finds its own book and memory: plain files, found without
    # importlib.resources (several milliseconds of start-up where nothing else
    # imported it).
    for path in (_PACKAGE_ASSETS / name, _CHECKOUT_ASSETS / name):
        if path.is_file():
            return path
    from importlib import resources  # elsewhere (a zip file, an editable install's finder)

    try:
        found = resources.files("blitzaco.assets").joinpath(name)
    except (ModuleNotFoundError, TypeError):
        return None
    return Path(str(found)) if found.is_file() else None


def open_regular(path: str | Path, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A file descriptor of the file at *path*, which a user named (an option, a
    command line), opened with *flags* (and *mode* when created). Raises OSError for
    anything but a regular file (a device such as ``/dev/zero``, a pipe, a
    directory), and opens without blocking: a pipe with no writer (or, to write, no
    reader) is refused at once instead of stopping the engine for good."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        pass  # os.open says so, or creates it
    else:
        if not stat.S_ISREG(named.st_mode):  # said plainly, before the open refuses a pipe with ENXIO
            raise OSError(f"{path} is not a regular file")
    handle = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0), mode)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(f"{path} is not a regular file")
    except BaseException:
        os.close(handle)
        raise
    return handle


def read_user_file(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the file at *path*, which a user named. Raises OSError for
    anything but a regular file (:func:`open_regular`) and for a file larger than
    *max_bytes*, so that a wrong path can neither fill the memory nor block the
    engine."""
    with open(open_regular(path), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise OSError(f"{path} is {size} bytes, more than the {max_bytes} accepted")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while being read
        raise OSError(f"{path} is more than the {max_bytes} bytes accepted")
    return data
