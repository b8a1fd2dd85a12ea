"""Transposition table: a fixed-size array of entries indexed by the low bits of the
Zobrist key, sized from the UCI ``Hash`` option.

An entry is a plain tuple of integers ``(key, move, score, depth, bound,
generation)`` with the move packed by :func:`blitzaco.moves.encode_move`. Only integers, so that
CPython's cyclic garbage collector stops tracking the entries: with ``chess.Move``
objects inside, one full collection over a filled 64 MB table took 180 ms, long
enough to lose on time at bullet speeds; with integers it takes 7 ms.

Mate scores are stored relative to the node ("mate in 3 from here"), not to the
root, so that they stay right when the position is reached at another ply: see
:func:`score_to_tt`.

Replacement prefers depth and freshness: a slot is overwritten when it is empty,
when it holds the same position, when it was written by an earlier search, or when
the new entry's depth is at least the old one's.
"""

from __future__ import annotations

from typing import Final, Protocol

from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import INTERPRETED

__all__ = [
    "Table",
    "Entry",
    "TranspositionTable",
    "EXACT",
    "LOWER",
    "UPPER",
    "KEY",
    "MOVE",
    "SCORE",
    "DEPTH",
    "BOUND",
    "GENERATION",
    "score_to_tt",
    "score_from_tt",
    "ENTRY_BYTES",
    "NativeTable",
    "NATIVE_ENTRY_BYTES",
    "pack_entry",
    "replacement",
    "entry_generation",
    "entry_move",
    "entry_score",
    "entry_depth",
    "entry_bound",
]

EXACT: Final = 0
LOWER: Final = 1
UPPER: Final = 2
#: Positions of the fields in an entry tuple.
KEY, MOVE, SCORE, DEPTH, BOUND, GENERATION = range(6)
#: An entry: key, move code, score, depth, bound, generation.
Entry = tuple[int, int, int, int, int, int]

#: Memory one filled entry costs in CPython, its list slot included: 207 bytes
#: measured with tracemalloc over a table filled with realistic entries (the 6-tuple
#: 88 bytes, the 64-bit key 40, the move, score and generation 32 each in pymalloc's
#: size classes, the 8-byte slot; depth and bound are cached small integers). It
#: turns megabytes into a number of entries, so that ``Hash`` bounds the table.
ENTRY_BYTES: Final = 208


def score_to_tt(score: int, ply: int, mate_bound: int) -> int:
    """A score as stored: mate distances counted from this node, not from the root."""
    if score >= mate_bound:
        return score + ply
    if score <= -mate_bound:
        return score - ply
    return score


def score_from_tt(score: int, ply: int, mate_bound: int) -> int:
    """The inverse of :func:`score_to_tt` at *ply*."""
    if score >= mate_bound:
        return score - ply
    if score <= -mate_bound:
        return score + ply
    return score


class Table(Protocol):
    """What the search asks of a table: this list table, or the shared-memory one of
    ``Threads`` > 1 (:class:`blitzaco.sharedtt.SharedTranspositionTable`)."""

    generation: int

    def __len__(self) -> int: ...

    def clear(self) -> None: ...

    def new_search(self) -> None: ...

    def probe(self, key: int) -> Entry | None: ...

    def store(self, key: int, move: int, score: int, depth: int, bound: int) -> None: ...

    def hashfull(self) -> int: ...


class TranspositionTable:
    """Not thread-safe; the engine's single search thread owns it while searching."""

    def __init__(self, megabytes: int) -> None:
        self.generation = 0
        self.resize(megabytes)

    def resize(self, megabytes: int) -> None:
        """Reallocate for *megabytes* (a power-of-two number of entries); clears it."""
        entries = max(1, megabytes * 1024 * 1024 // ENTRY_BYTES)
        size = 1 << (entries.bit_length() - 1)
        self.mask = size - 1
        self.table: list[Entry | None] = [None] * size

    def __len__(self) -> int:
        return len(self.table)

    def clear(self) -> None:
        self.table = [None] * len(self.table)
        self.generation = 0

    def new_search(self) -> None:
        """Age the entries: those of earlier searches become the first to replace."""
        self.generation += 1

    def probe(self, key: int) -> Entry | None:
        entry = self.table[key & self.mask]
        if entry is not None and entry[0] == key:
            return entry
        return None

    def store(self, key: int, move: int, score: int, depth: int, bound: int) -> None:
        """Store a result; *move* is a :func:`blitzaco.moves.encode_move` code (0: none known)."""
        index = key & self.mask
        old = self.table[index]
        if old is not None:
            if old[0] != key:
                if old[5] == self.generation and depth < old[3]:
                    return
            elif not move:
                move = old[1]
        self.table[index] = (key, move, score, depth, bound, self.generation)

    def hashfull(self) -> int:
        """Permille of the first thousand slots written during the current search."""
        sample = self.table[:1000]
        used = sum(1 for entry in sample if entry is not None and entry[5] == self.generation)
        return used * 1000 // len(sample)


#: Bytes a NativeTable entry takes: its key and its packed data, two 64-bit words.
NATIVE_ENTRY_BYTES: Final = 16
# A NativeTable entry's data: move (16 bits), score + SCORE_OFFSET (18 bits), depth
# (8 bits), bound (2 bits), generation (8 bits). Data 0 is an empty slot: a stored
# entry never packs to 0, its score field being at least 1.
_SCORE_OFFSET: Final = 1 << 17
_SCORE_SHIFT: Final = 16
_DEPTH_SHIFT: Final = 34
_BOUND_SHIFT: Final = 42
_GENERATION_SHIFT: Final = 44


class NativeTable:
    """The transposition table of the search on the engine's own board
    (:mod:`blitzaco.native_search`): two ``vec[i64]`` arrays (keys as signed 64-bit
    integers, entries packed in one integer) instead of a list of tuples, read and
    written by :meth:`find` and :meth:`put` without building an object. The same
    replacement rule as :class:`TranspositionTable`; :meth:`probe` and :meth:`store`
    serve the :class:`Table` protocol (unsigned keys, entry tuples) for everything
    else. Not thread-safe."""

    keys: vec[i64]
    data: vec[i64]
    mask: i64
    salt: i64
    generation: int

    def __init__(self, megabytes: int) -> None:
        self.generation = 0
        self.salt = 0
        self.resize(megabytes)

    def resize(self, megabytes: int) -> None:
        """Size for *megabytes* (a power-of-two number of entries); clears it. The
        memory is taken when a search first needs it (:meth:`allocate`), not here:
        64 MB take about 0.1 s to fill, which the engine's start-up should not pay."""
        entries = max(1, megabytes * 1024 * 1024 // NATIVE_ENTRY_BYTES)
        size = 1 << (entries.bit_length() - 1)
        self.mask = size - 1
        self.salt = 0
        self.keys = vec[i64]()
        self.data = vec[i64]()

    @property
    def allocated(self) -> bool:
        """Whether the table holds its memory."""
        return len(self.keys) == self.mask + 1

    def allocate(self) -> None:
        """Take the table's memory, empty, unless it is held already."""
        if not self.allocated:
            self.keys = vec[i64]([0] * (self.mask + 1))
            self.data = vec[i64]([0] * (self.mask + 1))

    def __len__(self) -> int:
        return int(self.mask + 1)

    def clear(self) -> None:
        """Empty the table (keeping its memory when it holds it). Compiled, by a new
        salt: slots hold the key XOR the salt, and the salt goes up by one at each
        clearing, so no slot written before it can match a key again (a slot's key
        agrees with every key probed there in the index bits, the old and the new
        salt never do), as Stockfish's `ucinewgame` clears its table but without
        touching the memory (zeroing 64 MB took 10 ms, a sixth of `bench`); only
        when the salt would come round to a used one is the memory zeroed. The
        search count goes on, so an old slot counts as one of an earlier search and
        is replaced as an empty one would be (`bench` searches the same tree; once the
        count's 8 bits come round, 256 searches later, such a slot may hold its place
        against a shallower store for one search, as an aged slot can without any
        clearing).
        Interpreted, the memory is taken afresh (faster there than a Python loop)."""
        if len(self.keys) == 0:
            return
        if INTERPRETED:
            self.keys = vec[i64]()
            self.data = vec[i64]()
            self.allocate()
            return
        if self.salt < self.mask:
            self.salt += 1
            return
        self.salt = 0
        keys = self.keys
        data = self.data
        for index in range(len(keys)):
            keys[index] = 0
            data[index] = 0

    def new_search(self) -> None:
        self.allocate()
        self.generation += 1

    def find(self, key: i64) -> i64:
        """The packed entry of *key* (signed), or 0."""
        index = key & self.mask
        if self.keys[index] == key ^ self.salt:
            return self.data[index]
        return 0

    def put(self, key: i64, move: i64, score: i64, depth: i64, bound: i64) -> None:
        """Store a result for *key* (signed) by :class:`TranspositionTable`'s rule."""
        index = key & self.mask
        salted = key ^ self.salt
        data = replacement(self.data[index], self.keys[index] == salted, move, score, depth, bound, self.generation)
        if data != 0:
            self.keys[index] = salted
            self.data[index] = data

    def probe(self, key: int) -> Entry | None:
        self.allocate()
        signed = key - (1 << 64) if key >= 1 << 63 else key
        data = self.find(signed)
        if data == 0:
            return None
        return (key, entry_move(data), entry_score(data), entry_depth(data), entry_bound(data), entry_generation(data))

    def store(self, key: int, move: int, score: int, depth: int, bound: int) -> None:
        self.allocate()
        self.put(key - (1 << 64) if key >= 1 << 63 else key, move, score, depth, bound)

    def hashfull(self) -> int:
        """Permille of the first thousand slots written during the current search."""
        sample = min(1000, len(self.keys))
        if sample == 0:
            return 0
        generation = self.generation & 255
        used = 0
        for index in range(sample):
            data = self.data[index]
            if data != 0 and entry_generation(data) == generation:
                used += 1
        return used * 1000 // sample


def pack_entry(move: i64, score: i64, depth: i64, bound: i64, generation: i64) -> i64:
    """A NativeTable entry's data (never 0); a depth above 255 is kept as 255."""
    if depth > 255:
        depth = 255
    return (
        move | (score + _SCORE_OFFSET) << _SCORE_SHIFT | depth << _DEPTH_SHIFT | bound << _BOUND_SHIFT
        | generation << _GENERATION_SHIFT
    )


def replacement(old: i64, same_key: bool, move: i64, score: i64, depth: i64, bound: i64, generation: i64) -> i64:
    """The data to store over *old* (the slot's data; 0: empty) by
    :class:`TranspositionTable`'s rule, or 0 to keep *old*: an empty slot, the same
    position (keeping its move when the new result has none), an entry of an earlier
    search, or one no deeper than the new one is replaced. *generation*: the table's
    search count."""
    current: i64 = generation & 255
    if old != 0:
        if not same_key:
            if entry_generation(old) == current and depth < entry_depth(old):
                return 0
        elif move == 0:
            move = entry_move(old)
    return pack_entry(move, score, depth, bound, current)


def entry_move(data: i64) -> i64:
    return data & 0xFFFF


def entry_score(data: i64) -> i64:
    return ((data >> _SCORE_SHIFT) & 0x3FFFF) - _SCORE_OFFSET


def entry_depth(data: i64) -> i64:
    return (data >> _DEPTH_SHIFT) & 255


def entry_bound(data: i64) -> i64:
    return (data >> _BOUND_SHIFT) & 3


def entry_generation(data: i64) -> i64:
    return (data >> _GENERATION_SHIFT) & 255
