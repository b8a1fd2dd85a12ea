"""The search on the engine's own board ([search] native, blitzaco.native_search).

Every test of test_search.py runs again here with the switch on (the engine then
searches with NativeSearch); the tests below check what is its own: the native
table, the exchange evaluation against movepick's, and the engine's choice of search.
"""

from __future__ import annotations

import dataclasses
import random

import chess
import pytest
import test_search
from librt.vecs import vec
from mypy_extensions import i64
from test_search import *  # noqa: F403 -- the same tests, collected again with the fixture below

from blitzaco.board import Board
from blitzaco.config import Config
from blitzaco.engine import Engine
from blitzaco.movepick import see_code_ge
from blitzaco.native_search import see_ge
from blitzaco.timeman import Limits
from blitzaco.tools.boardcheck import code_of, table_check
from blitzaco.tt import EXACT, LOWER, NativeTable, TranspositionTable


def _native(config: Config | None) -> Config:
    config = config if config is not None else Config()
    return dataclasses.replace(config, search=dataclasses.replace(config.search, native=True))


@pytest.fixture(autouse=True)
def native_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """test_search's engines, with [search] native on."""
    plain = test_search.searching_engine

    def searching_engine(config: Config | None = None) -> Engine:
        return plain(_native(config))

    monkeypatch.setattr(test_search, "searching_engine", searching_engine)


def _random_positions(seed: int, count: int) -> list[chess.Board]:
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if rng.random() < 0.3 else chess.Board()
        for _ in range(rng.randrange(10, 80)):
            moves = list(board.legal_moves)
            if not moves:
                break
            captures = [m for m in moves if board.is_capture(m)]
            board.push(rng.choice(captures) if captures and rng.random() < 0.3 else rng.choice(moves))
            boards.append(board.copy(stack=False))
    return boards


def test_exchange_evaluation_agrees_with_movepick() -> None:
    """see_ge on the engine's board answers as movepick.see_code_ge for every
    capture, promotion and en passant of 400 positions, at several thresholds."""
    scratch = vec[i64]([0] * 120)
    compared = 0
    for reference in _random_positions(3, 400):
        board = Board.from_chess(reference)
        for move in reference.pseudo_legal_moves:
            if not (reference.is_capture(move) or move.promotion):
                continue
            code = code_of(move)
            for threshold in (-200, 0, 1, 100, 250):
                assert see_ge(board, code, threshold, scratch) == see_code_ge(reference, code, threshold), (
                    reference.fen(), move.uci(), threshold,
                )
                compared += 1
        assert list(scratch) == [0] * 120
    assert compared > 2000


def test_native_table_keeps_the_list_tables_replacement_rule() -> None:
    """The same stores (colliding keys, several searches) leave both tables
    answering every probe alike."""
    native = NativeTable(1)
    plain = TranspositionTable(1)
    plain.mask = native.mask  # the same number of slots
    plain.table = [None] * len(native)
    rng = random.Random(5)
    keys = [rng.getrandbits(64) for _ in range(40)] + [rng.getrandbits(40) << 24 for _ in range(40)]
    for step in range(3000):
        if step % 500 == 0:
            native.new_search()
            plain.new_search()
        key = rng.choice(keys)
        args = (key, rng.choice((0, rng.getrandbits(15))), rng.randint(-32100, 32100), rng.randint(1, 60),
                rng.choice((EXACT, LOWER, 2)))
        native.store(*args)
        plain.store(*args)
        probed = rng.choice(keys)
        mine, theirs = native.probe(probed), plain.probe(probed)
        assert (mine is None) == (theirs is None)
        if mine is not None and theirs is not None:
            assert mine[:5] == theirs[:5]


def test_a_cleared_table_forgets_every_entry() -> None:
    """Compiled, clearing changes the table's salt instead of zeroing its memory
    (test_native.py runs the same check there, the salt coming round)."""
    assert table_check(16, 40) > 300


def test_the_engine_searches_natively_only_when_it_can() -> None:
    """With the switch on the engine keeps a native table and searches a different
    tree (its own move order); with a term only the python-chess search has (the
    pheromone bonus), it falls back to that search, tree for tree."""
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    on = test_search.searching_engine()  # patched: native
    assert isinstance(on.tt, NativeTable)
    plain_config = Config()
    off = Engine(dataclasses.replace(plain_config, search=dataclasses.replace(plain_config.search, native=False)))
    off.set_option("own_book", False)
    assert on.think(board, Limits(depth=6)).nodes != off.think(board, Limits(depth=6)).nodes
    pheromone = dataclasses.replace(Config().pheromone, enabled=True)
    with_trails = dataclasses.replace(_native(None), pheromone=pheromone)
    fallback = Engine(with_trails)
    fallback.set_option("own_book", False)
    plain = Engine(dataclasses.replace(off.config, pheromone=pheromone))
    plain.set_option("own_book", False)
    assert fallback.think(board, Limits(depth=4)).nodes == plain.think(board, Limits(depth=4)).nodes


def test_the_native_table_takes_its_memory_on_isready_not_on_the_clock() -> None:
    """The table's memory is taken by prepare (what isready calls), kept by clear
    (ucinewgame) and resize empties it; not at start-up, which stays quick."""
    engine = test_search.searching_engine()  # patched: native
    table = engine.tt
    assert isinstance(table, NativeTable) and not table.allocated
    engine.prepare()
    assert table.allocated and len(table) == table.mask + 1
    table.store(12345, 77, 10, 3, EXACT)
    engine.new_game()
    assert table.allocated and table.probe(12345) is None
    engine.set_option("hash_mb", 2)
    assert not table.allocated and len(table) == 2 * 1024 * 1024 // 16
