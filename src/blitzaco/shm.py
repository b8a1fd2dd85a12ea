"""Shared-memory plumbing for ``Threads`` > 1: the blocks the shared table and the
helpers' control words live in, how another process attaches to one, and the error
a block that cannot be had raises. Used by the shared table
(:mod:`blitzaco.sharedtt`, compiled by setup.py) and the helper pool
(:mod:`blitzaco.smp`); it stays interpreted because a compiled module cannot
subclass ``OSError``.

On Linux a block is an anonymous memory file (``memfd_create``): it has no name in
``/dev/shm`` at any moment, so nothing is left there however the processes end (a
GUI's ``kill -9`` of the whole process group included, which also kills the
resource tracker that would free a named block). Another process attaches through
the creator's descriptor, ``/proc/<pid>/fd/<fd>``, checking that it is the same
block; the memory goes when the last process has let go of it. Elsewhere (or
without ``/proc``) a block is :class:`multiprocessing.shared_memory.SharedMemory`,
named, which the creator unlinks when it closes it (Windows frees it with the last
handle anyway).
"""

from __future__ import annotations

import mmap
import os
import re
import secrets
import sys
from multiprocessing import shared_memory

from blitzaco.system import anonymous_shared_memory, is_linux

__all__ = ["SharedBlock", "SharedMemoryError", "create_block", "attach_block", "shared_room"]

#: The name of a block in an anonymous memory file: the creator's process id, its
#: descriptor of the file, and the file's own label (checked on attaching).
_MEMFD_NAME = re.compile(r"memfd:(\d+):(\d+):(blitzaco-[0-9a-f]+)")


class SharedMemoryError(OSError):
    """The shared block cannot be created or mapped (not enough shared memory)."""


class SharedBlock:
    """A block of memory shared between processes: :attr:`buf` maps it, :attr:`name`
    is what another process attaches by (:func:`attach_block`), :meth:`close` unmaps
    it and :meth:`unlink` (the creator's) frees its name, if it has one."""

    def __init__(self, buf: memoryview, name: str, closer: object, named: shared_memory.SharedMemory | None,
                 handle: int = -1) -> None:
        self.buf = buf
        self.name = name
        self._map = closer
        self._named = named
        self._handle = handle

    def close(self) -> None:
        """Unmap the block (every view of :attr:`buf` must have been released)."""
        if self._named is not None:
            self._named.close()
            return
        self.buf.release()
        self._map.close()  # type: ignore[attr-defined]
        if self._handle >= 0:
            os.close(self._handle)
            self._handle = -1

    def unlink(self) -> None:
        """Free the block's name (the creator, once); an anonymous block has none."""
        if self._named is not None:
            try:
                self._named.unlink()
            except FileNotFoundError:
                pass


def shared_room() -> int | None:
    """Bytes a new block may take, or None when this cannot be told: on Linux the
    memory available (an anonymous block) or the room left in /dev/shm (a named
    block, which a container may keep small: written past it, the process crashes
    with a bus error)."""
    if not is_linux():
        return None
    if anonymous_shared_memory():
        try:
            with open("/proc/meminfo", encoding="ascii") as meminfo:
                for line in meminfo:
                    if line.startswith("MemAvailable:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            return None
        return None
    if os.path.isdir("/dev/shm"):
        stat = os.statvfs("/dev/shm")
        return stat.f_bavail * stat.f_frsize
    return None


def create_block(size: int) -> SharedBlock:
    """A new block of *size* bytes, zeroed. Raises :class:`SharedMemoryError` when
    the memory cannot be had (more than :func:`shared_room`, or refused)."""
    room = shared_room()
    if room is not None and size > room:
        where = "available" if anonymous_shared_memory() else "free in /dev/shm"
        raise SharedMemoryError(f"{size >> 20} MB of shared memory asked, {room >> 20} MB {where}")
    try:
        if anonymous_shared_memory():
            label = f"blitzaco-{secrets.token_hex(8)}"
            handle = os.memfd_create(label)  # close-on-exec: helpers attach, they do not inherit it
            try:
                os.ftruncate(handle, size)
                mapped = mmap.mmap(handle, size)
            except BaseException:
                os.close(handle)
                raise
            return SharedBlock(memoryview(mapped), f"memfd:{os.getpid()}:{handle}:{label}", mapped, None, handle)
        named = shared_memory.SharedMemory(create=True, size=size)
    except OSError as err:
        raise SharedMemoryError(f"cannot create {size >> 20} MB of shared memory: {err}") from None
    assert named.buf is not None
    return SharedBlock(named.buf, named.name, named, named)


def attach_block(name: str) -> SharedBlock:
    """Map the block *name* that another process created. A named block is not
    handed to this process's resource tracker: the creator owns it and frees it, and
    a block registered twice would be freed twice. Raises :class:`FileNotFoundError`
    when it is gone."""
    anonymous = _MEMFD_NAME.fullmatch(name)
    if anonymous is not None:
        pid, fd, label = anonymous.groups()
        handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR)  # FileNotFoundError once the creator closed it
        try:
            # The descriptor's number may have been reused for another file since.
            if os.readlink(f"/proc/self/fd/{handle}") != f"/memfd:{label} (deleted)":
                raise FileNotFoundError(f"shared block {name} is gone")
            mapped = mmap.mmap(handle, os.fstat(handle).st_size)
        finally:
            os.close(handle)  # the mapping keeps the block
        return SharedBlock(memoryview(mapped), name, mapped, None)
    named = _attach_named(name)
    assert named.buf is not None
    return SharedBlock(named.buf, named.name, named, named)


def _attach_named(name: str) -> shared_memory.SharedMemory:
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
