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
