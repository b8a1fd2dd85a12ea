"""Where the data files shipped with the engine are: ``assets/`` installed as the
package ``blitzaco.assets``, unpacked beside a frozen build's files, or, when the
engine runs from a source checkout (``PYTHONPATH=src``), the checkout's ``assets/``;
and how the engine reads a file a user names (bounded, regular files only)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

__all__ = ["bundled_file", "read_user_file"]

# blitzaco/bundled.py -> the installed package's assets
_PACKAGE_ASSETS = Path(__file__).resolve().parent / "assets"
# src/blitzaco/bundled.py -> the checkout's top folder
_CHECKOUT_ASSETS = Path(__file__).resolve().parents[2] / "assets"


def bundled_file(name: str) -> Path | None:
    """The shipped data file *name* (``book.bin``, ``pheromone.bin``), if installed."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root is not None:
        path = Path(frozen_root) / "blitzaco" / "assets" / name
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


def read_user_file(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the file at *path*, which a user named (an option, a command
    line). Raises OSError for anything but a regular file (a device such as
    ``/dev/zero``, a pipe, a directory) and for a file larger than *max_bytes*, so
    that a wrong path can neither fill the memory nor block the engine."""
    with open(path, "rb", opener=_nonblocking) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > max_bytes:
            raise OSError(f"{path} is {info.st_size} bytes, more than the {max_bytes} accepted")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while being read
        raise OSError(f"{path} is more than the {max_bytes} bytes accepted")
    return data


def _nonblocking(path: str, flags: int) -> int:
    """Open without blocking on a pipe that has no writer (POSIX; elsewhere plain)."""
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
