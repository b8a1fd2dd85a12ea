"""Shared-memory plumbing for ``Threads`` > 1: the error a block that cannot be had
raises, attaching to a block another process created, and the room check for
Linux's /dev/shm. Used by the shared table (:mod:`blitzaco.sharedtt`, compiled by
setup.py) and the helper pool (:mod:`blitzaco.smp`); it stays interpreted because a
compiled module cannot subclass ``OSError``.
"""

from __future__ import annotations

import os
import sys
from multiprocessing import shared_memory

__all__ = ["SharedMemoryError", "attach_block", "check_room"]


class SharedMemoryError(OSError):
    """The shared block cannot be created or mapped (not enough shared memory)."""


def attach_block(name: str) -> shared_memory.SharedMemory:
    """Map the shared block *name* that another process created, without handing it
    to this process's resource tracker: the creator owns the block and frees it (its
    tracker frees it too when the creator is killed), and a block registered twice
    would be freed twice. Raises :class:`FileNotFoundError` when it is gone."""
    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)  # type: ignore[call-arg,unused-ignore]
    from multiprocessing import resource_tracker

    register = resource_tracker.register
    resource_tracker.register = _untracked
    try:
        return shared_memory.SharedMemory(name=name)
    finally:
        resource_tracker.register = register


def _untracked(name: object, rtype: str) -> None:
    """Stands in for the resource tracker's register while a block is attached."""


def check_room(size: int) -> None:
    """On Linux the block lives in /dev/shm, which a container may keep small; a
    block larger than the room left there is created but crashes the process (bus
    error) when written past it, so refuse it now."""
    if sys.platform.startswith("linux") and os.path.isdir("/dev/shm"):
        stat = os.statvfs("/dev/shm")
        room = stat.f_bavail * stat.f_frsize
        if size > room:
            raise SharedMemoryError(f"{size >> 20} MB of shared memory asked, {room >> 20} MB free in /dev/shm")
