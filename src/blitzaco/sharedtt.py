"""The transposition table in shared memory, for ``Threads`` > 1: one table that the
main search and every helper process (:mod:`blitzaco.smp`) read and write at once.

It is a :class:`blitzaco.tt.TranspositionTable` whose two words per entry live in
shared memory: the search (:mod:`blitzaco.search`) reads and writes it with ``find``
and ``put`` as it does its own table, everything else with ``probe``, ``store``,
``new_search``, ``clear`` and ``hashfull``. ``Threads 1`` keeps the process's own
table, which costs less per probe (see ``scripts/smp_bench.py``).

Layout: a shared block (:mod:`blitzaco.shm`) of ``2 * entries`` signed 64-bit words,
a power-of-two number of entries of 16 bytes, the entry of key *k* at ``k & (entries
- 1)``. An entry is two words::

    word 0: key ^ data
    word 1: data, packed as in tt.py: move (bits 0-15) | score + 2**17 (16-33)
            | depth (34-41) | bound (42-43) | generation & 255 (44-51); 0 is empty

Writers take no lock. Two processes storing the same slot at once can leave word 0
of one entry beside word 1 of the other (a torn entry), and a word read while it is
written may mix both; the key is only recovered as ``word 0 ^ word 1``, so such an
entry does not give back the key probed and reads as a miss (the lockless hashing
of Hyatt and Mann, 2002, as in Crafty): a torn entry is indistinguishable from a
foreign one, whose chance to pass is that of a 64-bit key collision. (When both
halves carry the same data the entry is whole anyway.) Each word is
written with one aligned 8-byte store (``memoryview`` of format ``q``).

The memory is made and sized once; every process maps it, so ``Hash`` counts once
whatever the number of threads. The process that creates the block owns it and
frees it (:meth:`SharedTranspositionTable.close`); helpers attach by its name
(:mod:`blitzaco.shm`, which this module leaves to the interpreter: setup.py compiles
this one, and a compiled module cannot define a subclass of ``OSError``). On Linux
the block never has a name in ``/dev/shm``, so a killed engine leaves nothing there.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from blitzaco.shm import SharedBlock, attach_block, create_block
from blitzaco.tt import ENTRY_BYTES, NO_EVAL, TranspositionTable, entry_generation, pack_entry, replacement

__all__ = ["SharedTranspositionTable", "SHARED_ENTRY_BYTES", "pack_entry"]

#: Bytes per entry: two 64-bit words.
SHARED_ENTRY_BYTES: Final = ENTRY_BYTES
_ZERO_CHUNK: Final = bytes(1 << 20)


def _entries_for(megabytes: int) -> int:
    entries = max(1, megabytes * 1024 * 1024 // SHARED_ENTRY_BYTES)
    return 1 << (entries.bit_length() - 1)


class SharedTranspositionTable(TranspositionTable):
    """The table in shared memory. Safe to use from several processes at once (torn
    entries read as misses); one process's object is used by one thread at a time.
    Its own arrays (``keys``, ``data``) stay empty: the entries are in :attr:`words`."""

    words: memoryview

    def __init__(self, megabytes: int | None = None, *, name: str | None = None) -> None:
        """Create a table of at most *megabytes* (a power-of-two number of entries),
        cleared; or, with *name*, attach to the table another process created.
        Raises :class:`SharedMemoryError` when the memory cannot be had and
        :class:`FileNotFoundError` when no block has that *name*."""
        super().__init__(0)
        self._owner = name is None
        if name is None:
            if megabytes is None:
                raise ValueError("give the size or the name")
            self._shm: SharedBlock = create_block(_entries_for(megabytes) * SHARED_ENTRY_BYTES)
        else:
            self._shm = attach_block(name)
        # The block may be rounded up to a page: the entries are what the size says.
        buf = self._shm.buf
        assert buf is not None
        entries = 1 << ((len(buf) // SHARED_ENTRY_BYTES).bit_length() - 1)
        self._bytes = buf[: entries * SHARED_ENTRY_BYTES]
        self.words = self._bytes.cast("q")
        self.mask = entries - 1
        self._closed = False
        # Whether a search may have written since the table was made or cleared. A
        # new block reads as zeros (POSIX and Windows both hand out zeroed pages),
        # and clearing it before anything was written (ucinewgame before the first
        # game) would only make the system hand out every page of it: 160 ms for
        # 64 MB on a busy machine. A table attached by name cannot know.
        self._searched = not self._owner

    @property
    def name(self) -> str:
        """What other processes attach by."""
        return self._shm.name

    @property
    def megabytes(self) -> float:
        return len(self) * SHARED_ENTRY_BYTES / (1 << 20)

    def close(self) -> None:
        """Unmap the table; the creating process also frees it (other processes'
        mappings stay valid until they close theirs)."""
        if self._closed:
            return
        self._closed = True  # a released view raises ValueError if still used
        self.words.release()
        self._bytes.release()
        self._shm.close()
        if self._owner:
            self._shm.unlink()

    def resize(self, megabytes: int) -> None:
        """Not in place: a shared block keeps its size. The owner of helpers makes a
        new table (:meth:`blitzaco.smp.HelperPool.resize`). (TranspositionTable's
        constructor sizes itself through this method: only its empty arrays.)"""
        if megabytes:
            raise NotImplementedError("a shared table is resized by replacing it")
        super().resize(0)

    @property
    def allocated(self) -> bool:
        """Always: the memory is the shared block's, taken when the table was made."""
        return True

    def allocate(self) -> None:
        """The memory is the shared block's, taken when the table was made."""

    def clear(self) -> None:
        """Empty every entry (for every process: the memory is shared). Nothing to do
        when no search has begun (:meth:`new_search`, which the engine calls before
        every search, the helpers' included) since the table was made or cleared."""
        self.generation = 0
        if not self._searched:
            return
        self._searched = not self._owner
        view = self._bytes
        chunk = len(_ZERO_CHUNK)
        for start in range(0, len(view), chunk):
            end = min(start + chunk, len(view))
            view[start:end] = _ZERO_CHUNK[: end - start]

    def new_search(self) -> None:
        """Age the entries: those of earlier searches become the first to replace."""
        self.generation += 1
        self._searched = True

    def find(self, key: i64) -> i64:
        """The packed entry of *key* (signed), or 0: also for a torn entry."""
        index = (key & self.mask) << 1
        words = self.words
        data: i64 = words[index + 1]
        if data != 0 and words[index] ^ data == key:
            return data
        return 0

    def put(self, key: i64, move: i64, score: i64, depth: i64, bound: i64, static: i64 = NO_EVAL) -> None:
        """Store a result by the rule of the process's own table
        (:func:`blitzaco.tt.replacement`)."""
        index = (key & self.mask) << 1
        words = self.words
        old: i64 = words[index + 1]
        data = replacement(old, old != 0 and words[index] ^ old == key, move, score, depth, bound, self.generation,
                           static)
        if data != 0:
            words[index] = key ^ data
            words[index + 1] = data

    def hashfull(self) -> int:
        """Permille of the first thousand slots written during the current search."""
        words = self.words
        generation = self.generation & 255
        sample = min(1000, len(self))
        used = 0
        for index in range(1, 2 * sample, 2):
            data: i64 = words[index]
            if data != 0 and entry_generation(data) == generation:
                used += 1
        return used * 1000 // sample
