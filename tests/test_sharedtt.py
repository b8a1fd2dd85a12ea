"""The shared-memory transposition table of Threads > 1, through its public API:
every field round-trips, torn and foreign entries read as misses, it and the
process's own table replace entries by the documented rule (a plain model of it
below), and processes writing the same slots at once never read a mixed entry."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator

import pytest

from blitzaco.sharedtt import SharedTranspositionTable, pack_entry
from blitzaco.tt import EXACT, LOWER, UPPER, Entry, TranspositionTable


@pytest.fixture
def table() -> Iterator[SharedTranspositionTable]:
    shared = SharedTranspositionTable(1)
    yield shared
    shared.close()


def test_the_shared_table_round_trips_every_field(table: SharedTranspositionTable) -> None:
    assert len(table) == 1 << 16  # 1 MB of 16-byte entries
    rng = random.Random(1)
    table.new_search()
    stored = {}
    for score in (-32001, -31990, -20000, -1, 0, 1, 250, 19900, 31999, 32001):
        key = rng.getrandbits(64)
        move = rng.randrange(1, 1 << 15)
        depth = rng.randrange(1, 256)
        bound = rng.choice((EXACT, LOWER, UPPER))
        table.store(key, move, score, depth, bound)
        stored[key] = (key, move, score, depth, bound, 1)
    for key, entry in stored.items():
        assert table.probe(key) == entry
    # Another process maps the same memory by name and sees the same entries.
    other = SharedTranspositionTable(name=table.name)
    try:
        for key, entry in stored.items():
            assert other.probe(key) == entry
    finally:
        other.close()


def test_a_deeper_than_255_entry_keeps_the_largest_depth(table: SharedTranspositionTable) -> None:
    table.store(12345, 1, 0, 300, EXACT)
    entry = table.probe(12345)
    assert entry is not None and entry[3] == 255


def test_foreign_and_torn_entries_read_as_misses(table: SharedTranspositionTable) -> None:
    a = 0x1234_5678_9ABC_0007
    b = 0x0FED_CBA9_8765_0007  # same slot (same low bits), another position
    table.store(a, 77, 10, 5, EXACT)
    assert table.probe(b) is None  # a foreign entry: another key in the slot
    index = (a & table.mask) << 1
    data_a = pack_entry(77, 10, 5, EXACT, 0)
    data_b = pack_entry(99, -40, 9, LOWER, 0)
    # Torn: the key word of one writer beside the data word of the other.
    table.words[index], table.words[index + 1] = a ^ data_a, data_b
    assert table.probe(a) is None and table.probe(b) is None
    table.words[index], table.words[index + 1] = b ^ data_b, data_a
    assert table.probe(a) is None and table.probe(b) is None
    # A word half written (its upper half from one entry, its lower from the other).
    mixed = (data_a & ~0xFFFF_FFFF) | (data_b & 0xFFFF_FFFF)
    table.words[index], table.words[index + 1] = a ^ data_a, mixed
    assert table.probe(a) is None and table.probe(b) is None
    # Whole again: found.
    table.words[index], table.words[index + 1] = b ^ data_b, data_b
    assert table.probe(b) == (b, 99, -40, 9, LOWER, 0)


class ModelTable:
    """The replacement rule written plainly (tt.py's module documentation): one
    entry per slot (the low bits of the key); a store replaces the slot's entry when
    it is empty, holds the same position (whose move is kept when the new result has
    none), was written by an earlier search, or is no deeper than the new one."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.entries: dict[int, Entry] = {}
        self.generation = 0

    def new_search(self) -> None:
        self.generation += 1

    def store(self, key: int, move: int, score: int, depth: int, bound: int) -> None:
        old = self.entries.get(key % self.slots)
        generation = self.generation & 255
        if old is not None:
            if old[0] == key:
                move = move or old[1]
            elif old[5] == generation and depth < old[3]:
                return
        self.entries[key % self.slots] = (key, move, score, min(depth, 255), bound, generation)

    def probe(self, key: int) -> Entry | None:
        entry = self.entries.get(key % self.slots)
        return entry if entry is not None and entry[0] == key else None


def test_the_model_can_tell_the_rules_apart() -> None:
    """The model keeps a deeper entry of this search against a shallower store of
    another position, and gives way to it in the next search."""
    model = ModelTable(16)
    model.store(16 + 3, 5, 10, 9, EXACT)
    model.store(32 + 3, 6, 20, 2, EXACT)
    assert model.probe(16 + 3) is not None and model.probe(32 + 3) is None
    model.new_search()
    model.store(32 + 3, 6, 20, 2, EXACT)
    assert model.probe(16 + 3) is None and model.probe(32 + 3) == (32 + 3, 6, 20, 2, EXACT, 1)


@pytest.mark.parametrize("seed", range(3))
def test_both_tables_replace_by_the_rule(table: SharedTranspositionTable, seed: int) -> None:
    """Keys that share their low 16 bits meet in one slot (and some in other slots,
    and some with the top bit set): the same sequence of stores and searches (past
    the generation's 8 bits) leaves the process's own table, the shared one and the
    model answering every probe alike, and the search's view (signed keys, packed
    entries) is the same in both tables."""
    own = TranspositionTable(1)
    model = ModelTable(len(own))
    rng = random.Random(seed)
    keys = [rng.getrandbits(48) << 16 | 0x2A2A for _ in range(6)] + [rng.getrandbits(64) for _ in range(6)]
    keys += [1 << 63 | rng.getrandbits(47) << 16 | 0x2A2A for _ in range(3)]
    differing = 0
    for step in range(4000):
        if rng.random() < 0.08:
            own.new_search()
            table.new_search()
            model.new_search()
        key = rng.choice(keys)
        move = rng.choice((0, rng.randrange(1, 1 << 15)))
        args = (key, move, rng.randrange(-32100, 32100), rng.randrange(1, 300), rng.choice((EXACT, LOWER, UPPER)))
        own.store(*args)
        table.store(*args)
        model.store(*args)
        probe = rng.choice(keys)
        assert own.probe(probe) == table.probe(probe) == model.probe(probe), step
        signed = probe - (1 << 64) if probe >= 1 << 63 else probe
        assert own.find(signed) == table.find(signed), step
        differing += model.probe(probe) is None
    assert own.generation > 256 and differing > 100  # the generation came round; slots were taken from others


def test_clear_new_search_and_hashfull(table: SharedTranspositionTable) -> None:
    assert table.hashfull() == 0
    table.new_search()
    for key in range(500):  # the first 500 slots
        table.store(key, 1, 0, 1, EXACT)
    assert table.hashfull() == 500
    table.new_search()
    assert table.hashfull() == 0  # entries of an earlier search are not counted
    assert table.probe(3) is not None
    table.clear()
    assert table.probe(3) is None and table.generation == 0


_WRITER = """
import random, sys
from blitzaco.sharedtt import SharedTranspositionTable

def fields(key):
    return (key >> 20 & 0x7FFF, (key >> 35 & 0x3FFF) - 8000, 1 + (key >> 50 & 0x3F), (key >> 60) % 3)

table = SharedTranspositionTable(name=sys.argv[1])
rng = random.Random(int(sys.argv[2]))
hits = bad = 0
for _ in range(int(sys.argv[3])):
    key = rng.getrandbits(60) << 4 & ~0xFFFF | rng.randrange(8)  # 8 slots, many keys
    table.new_search()
    table.store(key, *fields(key))
    probe = rng.getrandbits(60) << 4 & ~0xFFFF | rng.randrange(8) if rng.random() < 0.5 else key
    entry = table.probe(probe)
    if entry is not None:
        hits += 1
        if entry[:5] != (probe, *fields(probe)):
            bad += 1
table.close()
print(hits, bad)
"""


def test_processes_writing_the_same_slots_never_read_a_mixed_entry(table: SharedTranspositionTable) -> None:
    """Two processes store and probe eight slots as fast as they can; every entry
    found must be whole: its fields are those stored with its key."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, table.name, str(seed), "60000"],
                         stdout=subprocess.PIPE, text=True, env=env)
        for seed in (1, 2)
    ]
    results = [writer.communicate(timeout=300)[0].split() for writer in writers]
    assert all(writer.returncode == 0 for writer in writers)
    for hits, bad in results:
        assert int(hits) > 0
        assert int(bad) == 0


@pytest.mark.parametrize("kind", ["own", "shared"])
def test_an_entry_keeps_the_static_evaluation(kind: str, table: SharedTranspositionTable) -> None:
    """The static evaluation packed beside the score: every other field intact,
    +-2047 kept, beyond that none (the search evaluates again), and a store of the
    same position without one keeps the one it had; another position's store does
    not inherit it. Both tables, the process's own and the shared one."""
    from blitzaco.tt import NO_EVAL, entry_eval, entry_score

    target = table if kind == "shared" else TranspositionTable(1)
    target.allocate()
    for static in (-2047, -1, 0, 1, 2047, 2048, -2048, NO_EVAL):
        for score in (-32001, 0, 32001):
            data = pack_entry(77, score, 200, UPPER, 255, static)
            assert entry_score(data) == score and data > 0
            assert entry_eval(data) == (static if -2048 < static < 2048 else NO_EVAL)
    target.put(5, 11, 30, 4, EXACT, -321)
    target.put(5, 0, 40, 6, LOWER)  # the same position, no evaluation: keeps -321 (and the move)
    entry = target.find(5)
    assert (entry_eval(entry), entry_score(entry), entry & 0xFFFF) == (-321, 40, 11)
    other = 5 + len(target)  # the same slot, another position
    target.put(other, 0, 10, 9, EXACT)
    assert target.find(5) == 0 and entry_eval(target.find(other)) == NO_EVAL
