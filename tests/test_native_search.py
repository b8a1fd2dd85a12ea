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

from blitzaco.board import Board, unsigned_key
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


def _with(config: Config, **sections: object) -> Config:
    """*config* with [pheromone] enabled and/or [eval.spectral] enabled."""
    if sections.get("pheromone"):
        config = dataclasses.replace(config, pheromone=dataclasses.replace(config.pheromone, enabled=True))
    if sections.get("spectral"):
        spectral = dataclasses.replace(config.eval.spectral, enabled=True)
        config = dataclasses.replace(config, eval=dataclasses.replace(config.eval, spectral=spectral))
    return config


def test_the_engine_searches_natively_with_every_term(built_searches: list[object]) -> None:
    """With the switch on the engine keeps a native table and searches a different
    tree (its own move order), on its own board with the research terms too: the
    pheromone memory (bonus and ordering) and the spectral term each change the
    native tree, and the python-chess search is never built."""
    from blitzaco.native_search import NativeSearch

    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    built = built_searches
    on = test_search.searching_engine()  # patched: native
    assert isinstance(on.tt, NativeTable)
    plain_config = Config()
    off = Engine(dataclasses.replace(plain_config, search=dataclasses.replace(plain_config.search, native=False)))
    off.set_option("own_book", False)
    native_nodes = on.think(board, Limits(depth=5)).nodes
    assert native_nodes != off.think(board, Limits(depth=5)).nodes
    assert [type(search).__name__ for search in built] == ["NativeSearch", "Search"]
    for terms in ({"pheromone": True}, {"spectral": True}):
        built.clear()
        engine = Engine(_with(_native(None), **terms))
        engine.set_option("own_book", False)
        result = engine.think(board, Limits(depth=5))
        assert len(built) == 1 and isinstance(built[0], NativeSearch), terms
        assert result.move in board.legal_moves
        assert result.nodes != native_nodes, terms
        if terms.get("spectral"):
            assert engine.static.spectral is not None and engine.static.spectral.computed > 0


def test_the_off_board_terms_score_alike_on_both_boards() -> None:
    """StaticEval's spectral value (entered at a node deep enough to compute it and
    at its child, which inherits it) and pheromone bonus, asked through the engine's own
    board (enter_board, extras with its key), equal what the python-chess search
    adds, on 150 random positions (Chess960 among them) with trails on half."""
    from blitzaco.pheromone import Trails
    from blitzaco.static_eval import StaticEval

    config = _with(Config(), pheromone=True, spectral=True)
    trails = Trails(config.pheromone)
    static = StaticEval(config, trails)
    static.use_trails(True)
    assert static.extra_terms()
    rng = random.Random(29)
    compared = bonus = 0
    for reference in _random_positions(29, 150)[:150]:
        pos = static.position(reference)
        own = Board.from_chess(reference)
        moves = list(reference.legal_moves)
        if moves and rng.random() < 0.5:
            trails.deposit(pos.key, code_of(rng.choice(moves)), rng.uniform(0.05, 1.0))
        for ply, depth in ((2, static._min_depth), (3, 0)):  # computed, then inherited
            static.enter(pos, ply, depth)
            expected = static.evaluate(pos) - static._base(pos)
            static.spectral.clear()  # type: ignore[union-attr]  # the native board's own way in
            static.enter_board(own, ply, depth)
            assert static.extras(own.side == 0, unsigned_key(own.key)) == expected, reference.fen()
            compared += 1
            bonus += expected != 0
    assert compared == 300 and bonus > 250


def test_pheromone_trails_order_the_quiet_moves_they_mark_first() -> None:
    """With the ordering prior on, the quiet moves the position's trails mark come
    first, strongest first, then the rest by history; without trails the order is
    history's alone."""
    from blitzaco.board import MAX_MOVES
    from blitzaco.native_search import NativeSearch
    from blitzaco.pheromone import Trails
    from blitzaco.search import SearchPlan
    from blitzaco.static_eval import StaticEval
    from blitzaco.timeman import SearchControl

    config = _with(_native(None), pheromone=True)
    trails = Trails(config.pheromone)
    static = StaticEval(config, trails)
    reference = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    pos = static.position(reference)
    marked = [chess.Move.from_uci("d2d3"), chess.Move.from_uci("e1g1"), chess.Move.from_uci("b1c3")]
    for move, level in zip(marked, (0.2, 0.9, 0.5), strict=True):
        trails.deposit(pos.key, code_of(move), level)

    def quiet_order(with_trails: Trails | None) -> list[str]:
        plan = SearchPlan(static, NativeTable(1), config.search, SearchControl(Limits(depth=1), None),
                          list(reference.legal_moves), trails=with_trails)
        search = NativeSearch(pos, plan)
        base = 1 * MAX_MOVES
        end = search.board.gen_quiets(search.move_list, base)
        late = search._key_quiets(base, end, base + MAX_MOVES, 0, 0, 0, 0)
        assert late == base + MAX_MOVES  # no under-promotion here
        order = [search._pick(index, end) for index in range(base, end)]
        return [chess.Move(code & 63, code >> 6 & 63).uci() for code in order]

    ordered = quiet_order(trails)
    assert ordered[:3] == ["e1g1", "b1c3", "d2d3"]
    plain = quiet_order(None)
    assert sorted(plain) == sorted(ordered) and plain[:3] != ordered[:3]


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
