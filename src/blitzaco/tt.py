"""The transposition table: a fixed-size array of entries indexed by the low bits of
the board's Zobrist key, sized from the UCI ``Hash`` option, compiled.

Two ``vec[i64]`` arrays: the keys (signed 64-bit, as the board keeps them, XORed
with a salt, see :meth:`TranspositionTable.clear`) and the entries, each packed into
one integer (:func:`pack_entry`), so that the search reads and writes them by
:meth:`~TranspositionTable.find` and :meth:`~TranspositionTable.put` without
building an object. :meth:`~TranspositionTable.probe` and
:meth:`~TranspositionTable.store` serve everything else (unsigned keys, entry
tuples). The shared table of ``Threads`` > 1
(:class:`blitzaco.sharedtt.SharedTranspositionTable`) is one of these over shared
memory.

Mate and tablebase scores are stored relative to the node ("mate in 3 from here"),
not to the root, so that they stay right when the position is reached at another
ply: the search converts them on the way in and out.

Replacement prefers depth and freshness: a slot is overwritten when it is empty,
when it holds the same position, when it was written by an earlier search, or when
the new entry's depth is at least the old one's (:func:`replacement`).
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import INTERPRETED

__all__ = [
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
    "ENTRY_BYTES",
    "pack_entry",
    "replacement",
    "entry_generation",
    "entry_move",
    "entry_score",
    "entry_depth",
    "entry_bound",
    "entry_eval",
    "NO_EVAL",
]

EXACT: Final = 0
LOWER: Final = 1
UPPER: Final = 2
#: Positions of the fields in an entry tuple (:meth:`TranspositionTable.probe`).
KEY, MOVE, SCORE, DEPTH, BOUND, GENERATION = range(6)
#: An entry as :meth:`TranspositionTable.probe` gives it: unsigned key, move code,
#: score, depth, bound, generation.
Entry = tuple[int, int, int, int, int, int]

#: Bytes an entry takes: its key and its packed data, two 64-bit words.
ENTRY_BYTES: Final = 16
# An entry's data: move (16 bits), score + SCORE_OFFSET (17 bits), depth
# (8 bits), bound (2 bits), generation (8 bits), static evaluation + EVAL_OFFSET
# (12 bits, 0: not known; the sign bit stays clear). Data 0 is an empty slot: a
# stored entry never packs to 0, its score field being at least 1.
_SCORE_OFFSET: Final = 1 << 16
_SCORE_SHIFT: Final = 16
_DEPTH_SHIFT: Final = 33
_BOUND_SHIFT: Final = 41
_GENERATION_SHIFT: Final = 43
_EVAL_SHIFT: Final = 51
_EVAL_OFFSET: Final = 1 << 11
#: The static evaluation of an entry that holds none (in check, not computed, or
#: beyond +-2047 centipawns, which the search evaluates again).
NO_EVAL: Final = -(1 << 30)


class TranspositionTable:
    """The search's table (see the module's documentation). Not thread-safe: the
    engine's search thread owns it while searching."""

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
        entries = max(1, megabytes * 1024 * 1024 // ENTRY_BYTES)
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
        """Age the entries: those of earlier searches become the first to replace."""
        self.allocate()
        self.generation += 1

    def find(self, key: i64) -> i64:
        """The packed entry of *key* (signed), or 0."""
        index = key & self.mask
        if self.keys[index] == key ^ self.salt:
            return self.data[index]
        return 0

    def put(self, key: i64, move: i64, score: i64, depth: i64, bound: i64, static: i64 = NO_EVAL) -> None:
        """Store a result for *key* (signed), with the position's static evaluation
        (*static*; NO_EVAL: not known), by the replacement rule (:func:`replacement`)."""
        index = key & self.mask
        salted = key ^ self.salt
        data = replacement(self.data[index], self.keys[index] == salted, move, score, depth, bound, self.generation,
                           static)
        if data != 0:
            self.keys[index] = salted
            self.data[index] = data

    def probe(self, key: int) -> Entry | None:
        """The entry of *key* (unsigned), or None."""
        self.allocate()
        signed = key - (1 << 64) if key >= 1 << 63 else key
        data = self.find(signed)
        if data == 0:
            return None
        return (key, entry_move(data), entry_score(data), entry_depth(data), entry_bound(data), entry_generation(data))

    def store(self, key: int, move: int, score: int, depth: int, bound: int) -> None:
        """Store a result for *key* (unsigned); *move* is a
        :func:`blitzaco.moves.encode_move` code (0: none known)."""
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


def pack_entry(move: i64, score: i64, depth: i64, bound: i64, generation: i64, static: i64 = NO_EVAL) -> i64:
    """An entry's data (never 0); a depth above 255 is kept as 255, a static
    evaluation beyond +-2047 as none."""
    if depth > 255:
        depth = 255
    stored: i64 = static + _EVAL_OFFSET if -_EVAL_OFFSET < static < _EVAL_OFFSET else 0
    return (
        move | (score + _SCORE_OFFSET) << _SCORE_SHIFT | depth << _DEPTH_SHIFT | bound << _BOUND_SHIFT
        | generation << _GENERATION_SHIFT | stored << _EVAL_SHIFT
    )


def replacement(old: i64, same_key: bool, move: i64, score: i64, depth: i64, bound: i64, generation: i64,
                static: i64 = NO_EVAL) -> i64:
    """The data to store over *old* (the slot's data; 0: empty), or 0 to keep *old*: an empty slot, the same
    position (keeping its move when the new result has none, and its static
    evaluation when the new one is not known), an entry of an earlier search, or one
    no deeper than the new one is replaced. *generation*: the table's search count."""
    current: i64 = generation & 255
    if old != 0:
        if not same_key:
            if entry_generation(old) == current and depth < entry_depth(old):
                return 0
        else:
            if move == 0:
                move = entry_move(old)
            if static == NO_EVAL:
                static = entry_eval(old)
    return pack_entry(move, score, depth, bound, current, static)


def entry_move(data: i64) -> i64:
    return data & 0xFFFF


def entry_score(data: i64) -> i64:
    return ((data >> _SCORE_SHIFT) & 0x1FFFF) - _SCORE_OFFSET


def entry_depth(data: i64) -> i64:
    return (data >> _DEPTH_SHIFT) & 255


def entry_bound(data: i64) -> i64:
    return (data >> _BOUND_SHIFT) & 3


def entry_generation(data: i64) -> i64:
    return (data >> _GENERATION_SHIFT) & 255


def entry_eval(data: i64) -> i64:
    """The static evaluation stored with the entry (raw: before the correction
    history), or NO_EVAL."""
    stored = (data >> _EVAL_SHIFT) & 0xFFF
    return stored - _EVAL_OFFSET if stored != 0 else NO_EVAL
