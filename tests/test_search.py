"""The search (:class:`blitzaco.search.Search` on the engine's own board), through the
engine facade and directly: mates, draws (repetition with the game's history, the
fifty-move rule, insufficient material), limits, MultiPV and searchmoves,
determinism, the pruning switches, the strength levels, the root's first order, the
node functions against the static evaluation, the off-board terms (spectral,
pheromone) in the tree, the parameters the nodes read, and the transposition table
as the search uses it (the shared table: test_sharedtt.py).
"""

from __future__ import annotations

import ast
import dataclasses
import random
import time
from pathlib import Path
from typing import Any

import chess
import pytest
from recorder import Recorder

from blitzaco.board import INTERPRETED, WHITE, Board, compute_key, legal_codes, unsigned_key
from blitzaco.config import Config, SearchConfig, config_from_dict
from blitzaco.engine import Engine
from blitzaco.movepick import SEE_VALUE, toward_zero
from blitzaco.moves import encode_move
from blitzaco.pheromone import Trails
from blitzaco.search import (
    CORRECTION_GRAIN,
    CORRECTION_SIZE,
    INFINITE,
    MATE,
    MATE_BOUND,
    Bound,
    PvLine,
    Search,
    SearchMemory,
    SearchParams,
    SearchPlan,
    _reduction_table,
    _table_score,
    mate_in,
    root_order,
)
from blitzaco.static_eval import StaticEval
from blitzaco.timeman import Limits, SearchControl, time_budget
from blitzaco.tools.boardcheck import table_check
from blitzaco.tt import (
    ENTRY_BYTES,
    EXACT,
    LOWER,
    NO_EVAL,
    TranspositionTable,
    entry_bound,
    entry_depth,
    entry_eval,
    entry_score,
)
from blitzaco.turn import ThinkResult, Turn

#: A quiet middlegame position many tests search.
ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"


def searching_engine(config: Config | None = None) -> Engine:
    """An engine that searches every position: the bundled book would answer the
    opening positions these tests use without a search."""
    engine = Engine(config)
    engine.set_option("own_book", False)
    return engine


def think(board: chess.Board, engine: Engine | None = None, recorder: Recorder | None = None,
          **limits: Any) -> ThinkResult:
    """The engine's (a fresh one unless given) move for *board* within *limits*."""
    engine = engine if engine is not None else searching_engine()
    return engine.think(board, Limits(**limits), recorder)


def direct_search(board: chess.Board, config: Config | None = None, depth: int = 1,
                  trails: Trails | None = None, static: StaticEval | None = None) -> Search:
    """A search of *board* built as the engine builds one (own table, all legal root
    moves), not yet started."""
    config = config if config is not None else Config()
    static = static if static is not None else StaticEval(config, trails or Trails(config.pheromone))
    plan = SearchPlan(static, TranspositionTable(1), config.search, SearchControl(Limits(depth=depth), None),
                      list(board.legal_moves), trails=trails)
    return Search(board, plan)


def _with(config: Config, pheromone: bool = False, spectral: bool = False) -> Config:
    """*config* with [pheromone] and/or [eval.spectral] switched on."""
    if pheromone:
        config = dataclasses.replace(config, pheromone=dataclasses.replace(config.pheromone, enabled=True))
    if spectral:
        on = dataclasses.replace(config.eval.spectral, enabled=True)
        config = dataclasses.replace(config, eval=dataclasses.replace(config.eval, spectral=on))
    return config


# ------------------------------------------------------------------ mates and draws


@pytest.mark.parametrize(
    ("fen", "mating_moves", "moves_to_mate"),
    [
        ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", {"d1d8"}, 1),
        ("3r2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1", {"d8d1"}, 1),
        ("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", {"g3g6"}, 2),  # WAC.001
        ("r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1", {"h6h7"}, 2),  # WAC.004
        ("5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1", {"c6c4"}, 2),  # WAC.005
    ],
)
def test_finds_mates(fen: str, mating_moves: set[str], moves_to_mate: int) -> None:
    """Mates in one and two (WAC) are found and scored as mates in that many moves.
    A pruning search needs more than the 2N-1 plies of full width (null-move pruning
    hides quiet mating threats near the horizon): 2N + 6 plies."""
    result = think(chess.Board(fen), depth=2 * moves_to_mate + 6)
    assert result.move.uci() in mating_moves
    assert mate_in(result.score) == moves_to_mate


#: Mates in two (WAC) that every pruning switch must still find, with their distance.
SWITCH_MATES = (
    ("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", {"g3g6"}, 2),
    ("5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1", {"c6c4"}, 2),
)


def _finds_the_mates(engine: Engine, extra: tuple = ()) -> None:
    """*engine* finds each of SWITCH_MATES (and *extra*) and scores it as a mate in
    that many moves, 2N + 6 plies deep, from a new game each."""
    for fen, moves, mate in SWITCH_MATES + extra:
        engine.new_game()
        result = engine.think(chess.Board(fen), Limits(depth=2 * mate + 6))
        assert result.move.uci() in moves and mate_in(result.score) == mate, fen


#: The rules that read a quiet move's history against a fixed scale.
HISTORY_READERS = ("lmr_history", "history_pruning")


@pytest.mark.parametrize(
    "switch",
    ["razoring", "improving", "tt_eval", "lazy_eval", "continuation_history", "capture_history", "see_pruning",
     "lmr_history", "probcut", "correction_history", "history_gravity", "qsearch_tt",
     "reduced_futility", "history_pruning", "late_move_pruning", "lmr_captures", "lmr_cut_nodes"],
)
def test_pruning_switches_change_the_tree_and_still_find_mates(switch: str) -> None:
    """Razoring, the improving rule, the table-sharpened evaluation, lazy evaluation,
    continuation and capture history, SEE pruning, history in the reductions, ProbCut,
    correction history, history with gravity, the table in the quiescence search,
    futility at the reduced depth, history pruning:
    switched from their default, they change the tree (a different node count at the
    same depth) and the mates are still found. Lazy evaluation stands in for the
    classical evaluation alone, so it is tried on that. Where the totals at depth 7
    happen to meet (two different trees can count the same nodes), depth 6 tells."""
    board = chess.Board(ITALIAN)
    base: dict = {}
    if switch == "lazy_eval":  # the classical evaluation; under the null move tuned for the net it finds
        # WAC.001's mate only from depth 14 (the reduced search of the threat is a quiescence search to there)
        base = {"eval": {"nn": {"enabled": False}}, "search": {"null_move": False}}
    if switch in HISTORY_READERS:  # on the standard shape's scale, with a divisor a short search's history reaches
        base = {"search": {"history_gravity": True, "continuation_history": True, "lmr_history_divisor": 128,
                           "history_pruning_margin": 64}}
    if switch == "probcut":  # at a margin a capture of this quiet position reaches 7 plies deep
        base = {"search": {"probcut_margin": 0}}
    flipped = config_from_dict({**base, "search": {**base.get("search", {}),
                                                   switch: not getattr(Config().search, switch)}})
    default = config_from_dict(base)

    def nodes(config: Config, depth: int) -> int:
        return searching_engine(config).think(board, Limits(depth=depth)).nodes

    assert any(nodes(flipped, depth) != nodes(default, depth) for depth in (7, 6))
    _finds_the_mates(searching_engine(flipped))



def test_the_quiescence_table_answers_stores_and_keeps_deeper_entries() -> None:
    """[search] qsearch_tt: a non-PV quiescence node returns the table's score where
    its bound settles the window (without the switch it does not look); it stores its
    own result at depth 0 where the table has none, and never over a deeper search
    of the same position."""
    board = chess.Board(ITALIAN)
    on = direct_search(board, config_from_dict({"search": {"qsearch_tt": True}}))
    off = direct_search(board, config_from_dict({"search": {"qsearch_tt": False}}))
    on.table.allocate()
    off.table.allocate()
    key = on.board.key
    on._qsearch(0, -50, 50, False)
    entry = on.table.find(key)
    assert entry != 0 and entry_depth(entry) == 0
    assert off.table.find(key) == 0 and off._qsearch(0, 999, 1000, False) < 999
    for search in (on, off):
        search.table.put(key, 0, 1234, 5, EXACT)
    assert on._qsearch(0, 999, 1000, False) == 1234
    assert off._qsearch(0, 999, 1000, False) < 999
    on.table.put(key, 0, 1500, 5, LOWER)
    assert on._qsearch(0, 1999, 2000, False) < 1999  # a lower bound below the window: searched, not stored
    entry = on.table.find(key)
    assert (entry_depth(entry), entry_score(entry), entry_bound(entry)) == (5, 1500, LOWER)


def test_delta_pruning_keeps_checking_captures_and_returns_the_bound_in_reach() -> None:
    """[search] delta_pruning, Stockfish's form: a capture that cannot lift the score
    to alpha is skipped unless it gives check (the rook's capture on e8 mates, far
    below a window at 0: two queens down), and a node whose captures were all
    skipped fails low with the best bound in reach (stand pat, victim and margin),
    not with its stand pat alone."""
    on = config_from_dict({"search": {"delta_pruning": True, "lazy_eval": False}})
    mate_in_capture = direct_search(chess.Board("4n1k1/5ppp/8/8/8/1q6/q4PPP/4R1K1 w - - 0 1"), on)
    mate_in_capture.table.allocate()
    assert mate_in_capture._qsearch(0, 0, 1, False) >= MATE_BOUND
    pawn_capture = direct_search(chess.Board("n5k1/5ppp/8/8/4p3/1q6/q4PPP/4R1K1 w - - 0 1"), on)
    pawn_capture.table.allocate()
    stand_pat = pawn_capture._qsearch(0, -10000, -9999, False)  # fails high on its stand pat
    reach = stand_pat + SEE_VALUE[chess.PAWN] + on.search.delta_margin
    assert reach <= 0 and pawn_capture._qsearch(0, 0, 1, False) == reach


def test_the_table_score_is_a_plain_function_and_the_reduction_table_is_cached() -> None:
    """The reduction table is built once per setting (every search of a game uses the
    same one); the table's score conversion, called at every store, is a plain
    function: a4f3ba4 had put the cache's decorator on it instead (a cache lookup per
    store, and a new reduction table per search)."""
    assert not hasattr(_table_score, "cache_info")
    assert _table_score(MATE - 3, 5) == MATE + 2 and _table_score(-(MATE - 3), 5) == -(MATE + 2)
    assert _table_score(37, 5) == 37
    assert _reduction_table(0.75, 2.25) is _reduction_table(0.75, 2.25)


def test_late_move_pruning_by_improvement_changes_the_tree_and_still_finds_mates() -> None:
    """[search] late_move_pruning_improving (on by default) halves late-move
    pruning's count where the static evaluation has not risen: with late-move pruning
    on it changes the tree, without it it changes nothing, and the mates are still
    found."""
    board = chess.Board(ITALIAN)

    def nodes(search: dict) -> int:
        return searching_engine(config_from_dict({"search": search})).think(board, Limits(depth=7)).nodes

    lmp = nodes({"late_move_pruning": True, "late_move_pruning_improving": False})
    assert nodes({"late_move_pruning": True, "late_move_pruning_improving": True}) != lmp
    assert nodes({"late_move_pruning": False, "late_move_pruning_improving": True}) == nodes(
        {"late_move_pruning": False, "late_move_pruning_improving": False})
    both = searching_engine(config_from_dict({"search": {"late_move_pruning": True,
                                                         "late_move_pruning_improving": True}}))
    _finds_the_mates(both)


def test_correction_history_learns_within_its_limit() -> None:
    """[search] correction_history: a search fills the table (per side to move and
    pawn key) with corrections inside correction_limit; with the switch off there is
    no table; a correction moves towards the difference it is given, the more so the
    deeper the search that found it, and stops at the limit."""
    board = chess.Board(ITALIAN)
    assert len(direct_search(board, config_from_dict({"search": {"correction_history": False}})).correction) == 0
    assert len(direct_search(board).correction) == 2 * CORRECTION_SIZE  # on by default
    config = config_from_dict({"search": {"correction_history": True, "correction_limit": 40}})
    search = direct_search(board, config, depth=7)
    for _ in search.iterate(7):
        pass
    table = list(search.correction)
    assert len(table) == 2 * CORRECTION_SIZE
    limit = 40 * CORRECTION_GRAIN
    assert sum(1 for value in table if value != 0) > 20
    assert all(-limit <= value <= limit for value in table)
    index = search._correction_index(search.board)
    search.correction[index] = 0
    search._correct(index, 30, 1)  # weight 2/256 of 30 cp
    shallow = search.correction[index]
    search.correction[index] = 0
    search._correct(index, 30, 15)  # weight 16/256
    assert 0 < shallow < search.correction[index] == 30 * CORRECTION_GRAIN * 16 // 256
    for _ in range(400):
        search._correct(index, -500, 20)
    assert search.correction[index] == -limit


#: The rewired search's switches (on by default) all off: the search before them.
REWIRED_OFF = {name: False for name in (
    "history_gravity", "continuation_history", "capture_history", "lmr_history", "keep_memory", "improving",
    "late_move_pruning", "late_move_pruning_improving", "singular_extensions", "lmr_captures", "lmr_cut_nodes")}

#: The game's memory kept across its searches, with correction history to carry.
KEEP = {"search": {"keep_memory": True, "correction_history": True}}


def _two_moves(engine: Engine) -> tuple[int, int]:
    """The nodes of two searches of one game to depth 5: the Italian, then the
    position after the move the first chose."""
    board = chess.Board(ITALIAN)
    first = engine.think(board, Limits(depth=5))
    board.push(first.move)
    return first.nodes, engine.think(board, Limits(depth=5)).nodes


def test_keep_memory_starts_each_search_from_what_the_game_learnt() -> None:
    """[search] keep_memory (on by default): a game's first search is the same with
    it or without it, its second differs (it starts from the first's history and
    corrections, not empty); ucinewgame, Clear Hash and new settings empty the
    memory (the same two trees again); the mates are still found. Without it the
    engine keeps none."""
    kept = searching_engine(config_from_dict(KEEP))
    fresh = searching_engine(config_from_dict({"search": {"keep_memory": False, "correction_history": True}}))
    assert fresh.search_memory() is None
    first, second = _two_moves(kept)
    fresh_first, fresh_second = _two_moves(fresh)
    assert first == fresh_first and second != fresh_second
    memory = kept.search_memory()
    assert memory is not None and any(memory.ordering.history) and any(memory.correction)
    assert kept.search_memory() is memory
    for empty in (kept.new_game, kept.clear_hash, lambda: kept.set_config(config_from_dict(KEEP))):
        empty()
        assert _two_moves(kept) == (first, second)
        assert kept.search_memory() is not memory
        memory = kept.search_memory()
    _finds_the_mates(kept)


def test_a_kept_memory_loses_its_killers_and_fits_its_settings() -> None:
    """A search handed a memory starts without the last search's killers (their plies
    were that tree's) but with its history, aged (halved toward zero); a memory made for other [search]
    settings is refused."""
    board = chess.Board(ITALIAN)
    config = config_from_dict(KEEP)
    memory = SearchMemory(config.search)
    static = StaticEval(config, Trails(config.pheromone))

    def search(settings: SearchConfig) -> Search:
        return Search(board, SearchPlan(static, TranspositionTable(1), settings,
                                        SearchControl(Limits(depth=6), None), list(board.legal_moves), memory=memory))

    for _ in search(config.search).iterate(6):
        pass
    assert any(memory.ordering.killers) and any(memory.ordering.history)
    aged = [int(toward_zero(value, 2)) for value in memory.ordering.history]
    search(config.search)
    assert not any(memory.ordering.killers) and list(memory.ordering.history) == aged
    with pytest.raises(ValueError, match="other"):
        search(dataclasses.replace(config.search, history=False))


#: Singular extensions on, tested from depth 4 so that shallow test searches meet them.
SINGULAR = {"search": {"singular_extensions": True, "singular_depth": 4}}


def test_singular_extensions_change_the_tree_and_keep_the_search_right() -> None:
    """[search] singular_extensions (off by default): on, the tree differs at the same
    depth and the tests happen (a position's moves searched with the table's move
    left out); the mates are still found with their distance, the game's repetition
    is still a draw, MultiPV's lines stay distinct and searchmoves is kept."""
    board = chess.Board(ITALIAN)
    singular = searching_engine(config_from_dict(SINGULAR))
    assert singular.think(board, Limits(depth=7)).nodes != searching_engine().think(board, Limits(depth=7)).nodes
    _finds_the_mates(singular, extra=(("r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1", {"h6h7"}, 2),))
    repeated = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1")
    for uci in "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8".split():
        repeated.push_uci(uci)
    singular.new_game()
    result = singular.think(repeated, Limits(depth=6))
    assert result.move.uci() == "g1f3" and result.score == 0
    singular.new_game()
    singular.set_option("multipv", 3)
    recorder = Recorder()
    singular.think(board, Limits(depth=6), recorder)
    # Failed windows are reported as bounds on the way (a line's, then the others').
    last = [info.line for info in recorder.infos if info.line.depth == 6 and info.line.bound == Bound.EXACT]
    assert [line.multipv for line in last] == [1, 2, 3] and len({line.pv[0] for line in last}) == 3
    singular.set_option("multipv", 1)
    allowed = [chess.Move.from_uci("d2d3"), chess.Move.from_uci("h2h3")]
    assert singular.think(board, Limits(depth=6, searchmoves=allowed)).move in allowed


def _singular_run(settings: dict, depth: int = 8) -> tuple[Search, list[int]]:
    """A direct search of the Italian with *settings* (singular extensions on), run
    to *depth*; with the interpreted board, the plies at which a null move was made
    while that ply's node was a singular test (its table move left out)."""
    config = config_from_dict({"search": {**SINGULAR["search"], **settings}})
    search = direct_search(chess.Board(ITALIAN), config, depth=depth)
    inside: list[int] = []
    board = search.board
    original = board.make_null

    def make_null() -> None:
        ply = board.ply - search.root_ply
        if search.excluded[ply] != 0:
            inside.append(ply)
        original()

    if INTERPRETED:
        board.make_null = make_null  # type: ignore[method-assign]
    for _ in search.iterate(depth):
        pass
    return search, inside


def test_the_singular_test_is_a_clean_search_and_double_extensions_are_capped() -> None:
    """The singular test's own node (the table's move left out) prunes nothing by
    its static evaluation: no null move is made there (nodes below it may). Double
    extensions (far below the test's bound) happen, at most singular_double_max on a
    line; with the maximum 0, none, and the tree differs."""
    search, inside = _singular_run({"singular_double_margin": 0, "singular_double_max": 2})
    assert max(search.doubles) == 2 and inside == []
    none, _ = _singular_run({"singular_double_margin": 0, "singular_double_max": 0})
    assert max(none.doubles) == 0 and none.nodes != search.nodes
    assert search.extension_plies == 16  # extensions stop at twice the iteration's depth


def test_late_move_pruning_skips_quiet_moves_unmade() -> None:
    """[search] late_move_pruning (Stockfish's move-count pruning): past the count
    of moves (captures included), the quiet moves that do not give check are
    skipped; the tree shrinks and the mates are still found."""
    board = chess.Board(ITALIAN)
    on = searching_engine(config_from_dict({"search": {"late_move_pruning": True}}))
    off = searching_engine(config_from_dict({"search": {"late_move_pruning": False}}))
    assert on.think(board, Limits(depth=8)).nodes < off.think(board, Limits(depth=8)).nodes
    _finds_the_mates(on)


def test_cut_nodes_follow_stockfish() -> None:
    """The null-window child of a late move's reduced search is a cut node, its
    re-search at full depth is not where the parent was one, a PV node's children
    are not: with lmr_cut_nodes (alone, the rest of the rewired search off) the tree
    shrinks (more reduction) and mates stay."""
    board = chess.Board(ITALIAN)
    on = searching_engine(config_from_dict({"search": {**REWIRED_OFF, "lmr_cut_nodes": True}}))
    off = searching_engine(config_from_dict({"search": REWIRED_OFF}))
    assert on.think(board, Limits(depth=8)).nodes < off.think(board, Limits(depth=8)).nodes
    _finds_the_mates(on)


@pytest.mark.skipif(not INTERPRETED, reason="counts the interpreted search's evaluations")
@pytest.mark.parametrize("nn", [True, False])
def test_the_table_keeps_the_static_evaluation_and_the_tree_is_the_same(nn: bool) -> None:
    """A node whose position the table holds takes the static evaluation from the
    entry instead of computing it again: the same tree node for node (with the
    network and with the classical evaluation's lazy quiescence), far fewer
    evaluations; the stored number is the evaluation's."""
    config = config_from_dict({"eval": {"nn": {"enabled": nn}}})
    counts = []
    for cache in (False, True):
        search = direct_search(chess.Board(ITALIAN), config, depth=7)
        search.cache_eval = cache
        evaluate = search._evaluate
        calls = [0]

        def counted(board: Board, evaluate=evaluate, calls=calls) -> int:  # type: ignore[no-untyped-def]
            calls[0] += 1
            return evaluate(board)

        search._evaluate = counted  # type: ignore[method-assign]
        for _ in search.iterate(7):
            pass
        counts.append((search.nodes, calls[0]))
        known = 0
        for code in legal_codes(search.board):  # the root's children: each stored number is the evaluation's
            search._make(code, 0)
            entry = search.table.find(search.board.key)
            if entry != 0 and entry_eval(entry) != NO_EVAL:
                known += 1
                assert entry_eval(entry) == evaluate(search.board)
            search._unmake()
        assert known > 10
    (nodes, plain), (cached_nodes, cached) = counts
    assert cached_nodes == nodes and cached < plain * 0.8, counts


def test_prefers_mate_to_stalemate() -> None:
    """Qf7 stalemates, Qf8 mates: the mate is played and scored."""
    board = chess.Board("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")  # Qf7 stalemates, Qf8 mates
    result = think(board, depth=3)
    assert result.move.uci() == "f1f8"
    assert mate_in(result.score) == 1


def test_stalemate_scores_zero_and_has_no_move() -> None:
    """Stalemated: no move, a draw's score, reported as such."""
    recorder = Recorder()
    result = think(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), recorder=recorder, depth=3)
    assert result.move is None and result.score == 0
    assert recorder.infos[-1].line.score == 0


def test_checkmated_side_has_no_move() -> None:
    """Checkmated: no move, mated now."""
    result = think(chess.Board("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1"), depth=3)
    assert result.move is None and result.score == -MATE


def test_threefold_repetition_from_the_game_history_is_a_draw() -> None:
    """The game before the root counts: White has no queen, and every move loses
    except the one that repeats a position of the game for the third time."""
    board = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1")
    for uci in "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8".split():
        board.push_uci(uci)
    result = think(board, depth=3)
    assert result.move.uci() == "g1f3"
    assert result.score == 0


def test_without_history_the_same_position_is_lost() -> None:
    """The same position without the game's moves: no repetition saves White."""
    board = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1")
    assert think(board, depth=3).score < -500


def test_fifty_move_rule_scores_zero() -> None:
    """A rook up, but every move is the hundredth half-move without capture or pawn
    move: a draw."""
    result = think(chess.Board("7k/8/8/8/8/8/8/R3K3 w - - 99 80"), depth=4)
    assert result.score == 0


def test_mate_on_the_hundredth_half_move_still_counts() -> None:
    """A mate given on the hundredth half-move is a mate, not a fifty-move draw."""
    result = think(chess.Board("7k/8/6K1/8/8/8/8/R7 w - - 99 80"), depth=2)
    assert result.move.uci() == "a1a8" and mate_in(result.score) == 1


def test_insufficient_material_scores_zero() -> None:
    """King and knight against king: a draw whatever the search finds."""
    result = think(chess.Board("8/8/4k3/8/8/3NK3/8/8 w - - 0 1"), depth=4)
    assert result.score == 0


def test_same_node_limit_gives_same_move_and_nodes() -> None:
    """Determinism: after ucinewgame the same node limit searches the same tree and
    stops at exactly that many nodes."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    engine = searching_engine()
    runs = []
    for _ in range(2):
        engine.new_game()
        result = think(board, engine, nodes=4000)
        runs.append((result.move, result.nodes))
    assert runs[0] == runs[1]
    assert runs[0][1] == 4000


def test_answers_a_legal_move_when_stopped_before_depth_one() -> None:
    """go, then stop at once (before the search thread has run): the stop reaches the
    search, which answers a legal move through the callback."""
    board = chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    engine = searching_engine()
    results: list = []
    engine.go(board, Limits(infinite=True), Recorder(), results.append)
    engine.stop()
    engine.wait()
    assert len(results) == 1 and results[0].move in board.legal_moves
    assert not engine.searching


def test_node_limit_of_one_still_answers_legally() -> None:
    """One node: still a legal move."""
    board = chess.Board()
    result = think(board, nodes=1)
    assert result.move in board.legal_moves


def test_multipv_lines_are_distinct_and_ordered() -> None:
    """MultiPV 3: three lines at the last depth, numbered, with different first
    moves, best first."""
    engine = searching_engine()
    engine.set_option("multipv", 3)
    recorder = Recorder()
    think(chess.Board(), engine, recorder, depth=3)
    last = [info.line for info in recorder.infos if info.line.depth == 3]
    assert [line.multipv for line in last] == [1, 2, 3]
    assert len({line.pv[0] for line in last}) == 3
    scores = [line.score for line in last]
    assert scores == sorted(scores, reverse=True)


def test_searchmoves_restricts_the_root() -> None:
    """go searchmoves: the move played is one of those given."""
    board = chess.Board()
    allowed = [chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h3")]
    result = think(board, depth=3, searchmoves=allowed)
    assert result.move in allowed


def test_go_mate_stops_when_the_mate_is_found() -> None:
    """go mate 2 stops at the first iteration that proves the mate."""
    recorder = Recorder()
    board = chess.Board("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1")
    result = think(board, recorder=recorder, mate=2)
    assert mate_in(result.score) == 2
    # it stopped at the first iteration that proved the mate
    first_mate = next(info.line.depth for info in recorder.infos if mate_in(info.line.score) == 2)
    assert recorder.infos[-1].line.depth == first_mate


def test_infos_deepen_and_carry_the_pv() -> None:
    """One exact line per depth, 1 to 4, and every reported line is playable."""
    recorder = Recorder()
    board = chess.Board()
    think(board, recorder=recorder, depth=4)
    depths = [info.line.depth for info in recorder.infos if info.line.bound == Bound.EXACT]
    assert depths[:4] == [1, 2, 3, 4]
    for info in recorder.infos:
        replay = board.copy()
        for move in info.line.pv:
            assert move in replay.legal_moves
            replay.push(move)


def test_ponder_move_is_legal_after_the_best_move() -> None:
    """The ponder move is the opponent's legal reply to the best move."""
    board = chess.Board()
    result = think(board, depth=4)
    assert result.ponder is not None
    board.push(result.move)
    assert result.ponder in board.legal_moves


def test_failed_aspiration_window_is_reported_as_a_bound() -> None:
    """A failed aspiration window is reported as a lower or upper bound, on its side
    of the window's centre (the exact score of the depth before: a fail-high lies
    above it, a fail-low below), and that depth still ends with an exact score. (The
    exact score found afterwards may lie on either side: the wider window's search
    can settle below a fail-high, as every search with pruning can.)"""
    recorder = Recorder()
    classical = searching_engine(config_from_dict({"eval": {"nn": {"enabled": False}}}))  # chosen for its scores
    think(chess.Board("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - 0 1"), classical, recorder=recorder, depth=5)  # WAC.006
    lines = [info.line for info in recorder.infos]
    bounds = [line for line in lines if line.bound != Bound.EXACT]
    assert bounds, "the score jumps at depth 4 or 5 here: some window must fail"
    for bound in bounds:
        centre = [line.score for line in lines if line.depth == bound.depth - 1 and line.bound == Bound.EXACT]
        assert centre and [line for line in lines if line.depth == bound.depth and line.bound == Bound.EXACT]
        if bound.bound == Bound.LOWER:
            assert bound.score >= centre[-1]
        else:
            assert bound.bound == Bound.UPPER and bound.score <= centre[-1]


def test_root_filter_domination() -> None:
    """A candidate dominates another when it is at least as good on every measure and
    better on one."""
    from blitzaco.search import RootChoice

    move = chess.Move.from_uci("e2e4")
    strong = RootChoice(move, 30, 10, 20.0)
    assert strong.dominates(RootChoice(move, 30, 5, 20.0))
    assert not strong.dominates(RootChoice(move, 40, 5, 10.0))  # better on one measure
    assert not strong.dominates(strong)


def test_root_filter_plays_a_legal_move_and_reports_its_choice() -> None:
    """With the root filter on, the move played is legal and the one the filter names;
    in BK.04 at depth 4 it overrules the search's choice."""
    # The classical evaluation and the search without the quiescence table and the
    # rewired techniques: the positions were chosen with their trees.
    classical = {"eval": {"nn": {"enabled": False}}}
    plain = {"qsearch_tt": False, **REWIRED_OFF}
    engine = searching_engine(config_from_dict({"search": {"root_filter": True, **plain}, **classical}))
    for fen in (
        chess.STARTING_FEN,
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
    ):
        board = chess.Board(fen)
        limits = Limits(depth=4)
        recorder = Recorder()
        result = engine.think(board, limits, recorder)
        assert result.move in board.legal_moves
        for text in recorder.messages:
            if text.startswith("root filter:"):
                assert board.parse_uci(text.split()[2]) == result.move
    # A position where the filter overrules the search (Bratko-Kopec BK.04 at depth 4):
    # the search plays e5e6, the filter Nf3, says so and plays it.
    board = chess.Board("rnbqkb1r/p3pppp/1p6/2ppP3/3N4/2P5/PPP1QPPP/R1B1KB1R w KQkq - 0 1")
    assert think(board, searching_engine(config_from_dict({"search": plain, **classical})), depth=4).move == (
        chess.Move.from_uci("e5e6")
    )
    recorder = Recorder()
    filtering = searching_engine(config_from_dict({"search": {"root_filter": True, **plain}, **classical}))
    filtered = filtering.think(board, Limits(depth=4), recorder)
    assert filtered.move == chess.Move.from_uci("d4f3")
    assert [text.split()[2] for text in recorder.messages if text.startswith("root filter:")] == ["d4f3"]


def test_strength_levels_search_less_and_pick_among_the_best_lines() -> None:
    """Skill Level below 20: at most its node count a move, several lines searched
    and one of them picked with a random push (so play changes); a mate in one is
    never missed from safe_level up; UCI_Elo with UCI_LimitStrength wins over Skill
    Level."""
    engine = searching_engine()
    levels = engine.config.levels
    engine.set_option("skill_level", 0)
    assert engine.level() == 0
    board = chess.Board(ITALIAN)
    recorder = Recorder()
    picks = set()
    for _ in range(12):
        result = engine.think(board, Limits(wtime=60_000, btime=60_000), recorder)
        assert result.move in board.legal_moves and result.depth <= levels.level_depth[0]
        picks.add(result.move)
    assert len(picks) > 1, "a weak level varies its moves"
    assert any("strength level 0 of 20" in message for message in recorder.messages)
    mate_in_one = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    engine.set_option("skill_level", levels.safe_level)
    for _ in range(5):
        assert engine.think(mate_in_one, Limits(wtime=60_000, btime=60_000)).move == chess.Move.from_uci("d1d8")
    engine.set_option("limit_strength", True)
    engine.set_option("elo", levels.elo_of_level[7] + 1)
    assert engine.level() == 7
    engine.set_option("elo", levels.elo_of_level[20])
    assert engine.level() == 20
    full_recorder = Recorder()
    full = engine.think(board, Limits(depth=3), full_recorder)
    assert full.depth == 3  # full strength: no level's depth cap, no pick, no level message
    assert not any("level" in message for message in full_recorder.messages)


def test_levels_from_single_line_from_up_search_one_line_and_play_its_best_move() -> None:
    """[levels] single_line_from: from that level up a level searches one line within
    its node limit and plays its best move (the same move as a plain search to the
    same node count); below it, a level still searches pick_lines lines."""
    # The classical evaluation, which the levels below 20 play with, for the plain search too.
    config = config_from_dict({"levels": {"single_line_from": 17}, "eval": {"nn": {"enabled": False}}})
    engine = searching_engine(config)
    board = chess.Board(ITALIAN)
    cap = config.levels.level_nodes[18]
    engine.set_option("skill_level", 18)
    recorder = Recorder()
    result = engine.think(board, Limits(wtime=600_000, btime=600_000), recorder)
    assert 0 < result.nodes <= cap
    assert any("strength level 18 of 20" in m and "its best line, no pick" in m for m in recorder.messages)
    plain = searching_engine(config)
    assert plain.think(board, Limits(nodes=result.nodes, depth=config.levels.level_depth[18])).move == result.move
    engine.set_option("skill_level", 16)
    below = Recorder()
    engine.think(board, Limits(wtime=600_000, btime=600_000), below)
    assert any(f"{config.levels.pick_lines} lines" in m for m in below.messages)


def test_levels_below_20_evaluate_classically_unless_levels_network() -> None:
    """With the network on, a level below 20 searches with the classical evaluation
    alone (the one its UCI_Elo was measured with): the same move and node count as
    the engine with the network off (its score too); level 20 keeps the network.
    [levels] network gives the levels the network too."""
    nn = {"enabled": True, "file": "net.bin", "weight": 0.3, "classical": 0.7}
    board = chess.Board(ITALIAN)
    results = []
    for config in (config_from_dict({"eval": {"nn": nn}}), config_from_dict({"eval": {"nn": {"enabled": False}}})):
        engine = searching_engine(config)
        engine.set_option("skill_level", 17)
        result = engine.think(board, Limits(wtime=600_000, btime=600_000))
        results.append((result.move, result.nodes, result.score))
    assert results[0] == results[1]
    engine = searching_engine(config_from_dict({"eval": {"nn": nn}}))
    assert engine.static.net is not None and engine.static_for(20) is engine.static
    assert engine.static_for(17).net is None and engine.static_for(0) is engine.static_for(17)
    networked = searching_engine(config_from_dict({"eval": {"nn": nn}, "levels": {"network": True}}))
    assert networked.static_for(17) is networked.static
    networked.set_option("skill_level", 17)
    with_net = networked.think(board, Limits(wtime=600_000, btime=600_000))
    assert (with_net.move, with_net.nodes, with_net.score) != results[0]


@pytest.mark.parametrize("level", [0, 10, 19])
def test_a_levels_moves_stay_within_its_node_limit_and_the_clock(level: int) -> None:
    """A level never searches more than its level_nodes, whatever the clock allows,
    and on a short clock it stops at the clock's hard limit like full strength (a
    weak level never thinks longer than full strength would)."""
    engine = searching_engine()
    engine.set_option("skill_level", level)
    cap = engine.config.levels.level_nodes[level]
    board = chess.Board(ITALIAN)
    for _ in range(3):
        result = engine.think(board, Limits(wtime=600_000, btime=600_000))
        assert 0 < result.nodes <= cap and result.move in board.legal_moves
    clock = Limits(wtime=200, btime=200)
    hard = time_budget(clock, chess.WHITE, engine.options.move_overhead, engine.config.time)
    assert hard is not None
    started = time.process_time()
    result = engine.think(board, clock)
    used_ms = (time.process_time() - started) * 1000
    assert result.move in board.legal_moves and result.nodes <= cap
    # The point is that the level's search is bound by the clock (level 19's 43,900
    # nodes take over a second of work), not only by its depth and node count. The
    # process's CPU time measures that work: a process that waits for a core on a
    # busy machine does not accrue it, and with the slack it stays within the limit.
    assert used_ms <= hard.hard_ms + 250, (used_ms, hard)


def test_the_weak_pick_spares_a_mate_in_one_and_big_blunders_from_safe_level() -> None:
    """The pick itself, on scripted lines: below safe_level the random push may take
    a slower mate or a line blunder_cp worse than the best; from safe_level up,
    never (Stockfish's pick alone would, sometimes)."""
    engine = searching_engine()
    levels = engine.config.levels
    board = chess.Board()
    moves = list(board.legal_moves)

    def lines(*scores: int) -> tuple[PvLine, ...]:
        return tuple(PvLine(i + 1, 6, 6, score, Bound.EXACT, (moves[i],)) for i, score in enumerate(scores))

    mates = lines(MATE - 1, MATE - 3, MATE - 3, MATE - 5)
    blunder = lines(100, 90, 80, 100 - levels.blunder_cp - 50)

    turn = Turn(engine, board, Limits(depth=1), SearchControl(Limits(depth=1), None), Recorder())

    def picks(candidates: tuple[PvLine, ...], level: int) -> set[chess.Move]:
        top = candidates[0]
        return {turn.weaker_pick(candidates, top.pv, top.score, level)[0][0] for _ in range(300)}

    assert picks(mates, levels.safe_level - 1) != {moves[0]}, "below safe_level a slower mate can be picked"
    assert moves[3] in picks(blunder, 0), "below safe_level the blunder can be picked"
    for level in (levels.safe_level, 10, 19):
        assert picks(mates, level) == {moves[0]}
        assert moves[3] not in picks(blunder, level)
    assert len(picks(blunder, levels.safe_level)) > 1, "still a pick among the others"


def _material(board: chess.Board, color: bool) -> int:
    values = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
    return sum(value * len(board.pieces(piece, color)) for piece, value in values.items())


def _play(white: Engine, black: Engine, fen: str, nodes: int, plies: int = 200) -> tuple[chess.Board, str | None]:
    """A game between two engines at a fixed node count a move (deterministic with
    one thread and the levels' seeded choice): the final board and the result."""
    board = chess.Board(fen)
    for engine in (white, black):
        engine.new_game()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < plies:
        mover = white if board.turn == chess.WHITE else black
        board.push(mover.think(board, Limits(nodes=nodes)).move)
    outcome = board.outcome(claim_draw=True)
    return board, outcome.result() if outcome is not None else None


@pytest.mark.parametrize("down_side_level", [0, 20])
def test_a_low_level_loses_a_material_down_position_that_full_strength_wins(down_side_level: int) -> None:
    """Black is a knight down. Full strength as Black beats level 0 as White anyway;
    level 0 as Black loses it against full strength: the level changes the play, not
    only the clock. Won: mated, or a rook's worth of material behind after 200 plies."""
    fen = "r1bqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    down, up = searching_engine(), searching_engine()
    down.set_option("skill_level", down_side_level)
    up.set_option("skill_level", 20 - down_side_level)
    board, result = _play(up, down, fen, nodes=1500)
    lead = _material(board, chess.BLACK) - _material(board, chess.WHITE)
    if down_side_level == 20:  # full strength, a knight down, wins
        assert result == "0-1" or (result is None and lead >= 5), (result, lead, board.fen())
    else:  # level 0, a knight down, loses
        assert result == "1-0" or (result is None and lead <= -5), (result, lead, board.fen())


# ------------------------------------------------------------------ the root and the nodes


def test_root_order_puts_captures_and_queen_promotions_first_by_mvv_lva() -> None:
    """The first iteration's root order: captures and queen promotions, the most
    valuable victim first (a promotion adds its queen), the cheaper attacker next,
    equal keys in python-chess's generation order (the knight on e7 before the one on
    a5); then every other move in the order given, under-promotions among them."""
    board = chess.Board("r1n1k3/1P2N3/2q5/N2pP3/8/8/8/2R1K3 w - d6 0 1")
    moves = list(board.legal_moves)
    random.Random(1).shuffle(moves)
    ordered = [move.uci() for move in root_order(board, moves)]
    tactical = ["b7a8q", "b7c8q", "b7b8q", "e7c6", "a5c6", "c1c6", "e7c8", "e5d6", "e7d5"]
    assert ordered[: len(tactical)] == tactical
    assert ordered[len(tactical):] == [move.uci() for move in moves if move.uci() not in tactical]
    # Only the moves given are ordered: searchmoves keep their own order after the captures.
    assert [move.uci() for move in root_order(board, [chess.Move.from_uci(u) for u in ("e1d2", "a5c6", "e1f2")])] \
        == ["a5c6", "e1d2", "e1f2"]


def test_the_search_starts_from_the_root_order() -> None:
    """A search's root moves start in root_order's order (what the first iteration
    searches first), with the engine's own board set up at the root."""
    board = chess.Board("r1n1k3/1P2N3/2q5/N2pP3/8/8/8/2R1K3 w - d6 0 1")
    search = direct_search(board)
    assert [rm.move for rm in search.root_moves] == root_order(board, list(board.legal_moves))
    assert search.board.to_chess().fen() == board.fen()
    assert unsigned_key(search.board.key) == compute_key(board)


def test_quiescence_stands_pat_on_the_static_evaluation_and_takes_what_hangs() -> None:
    """The quiescence search at the root, on the evaluator the search keeps up by
    make and unmake: with no capture it is the static score of the position (as
    StaticEval scores it from scratch); with a free queen to take it is the better of
    standing pat and the static score after taking (the opponent then has no capture)."""
    quiet = chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    search = direct_search(quiet)
    assert search._qsearch(0, -INFINITE, INFINITE, False) == search.static.evaluate(quiet)
    hanging = chess.Board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1")
    search = direct_search(hanging)
    after = hanging.copy()
    after.push_uci("d1d5")
    expected = max(search.static.evaluate(hanging), -search.static.evaluate(after))
    assert expected > 500
    assert search._qsearch(0, -INFINITE, INFINITE, False) == expected
    assert search.board.ply == search.root_ply  # the board is back at the root


def test_mate_at_the_horizon_is_seen_by_both_node_functions() -> None:
    """After a mating move, the quiescence search (in check, every evasion tried) and
    the full-width node both score the position as mated at that ply."""
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    search = direct_search(board)
    search._make(encode_move(chess.Move.from_uci("d1d8")), 0)
    assert search.board.in_check()
    assert search._qsearch(1, -INFINITE, INFINITE, True) == -MATE + 1
    assert search._search(3, 1, -INFINITE, INFINITE, True, True) == -MATE + 1
    search._unmake()
    assert unsigned_key(search.board.key) == compute_key(board)


def _declared_fields(name: str) -> list[str]:
    """The annotated fields of class *name* in search.py's source (the compiled
    class keeps no annotations to read)."""
    source = Path(__file__).resolve().parent.parent / "src" / "blitzaco" / "search.py"
    tree = ast.parse(source.read_text())
    found = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)
    return [node.target.id for node in found.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)]


def test_search_params_hold_every_field_of_the_configuration() -> None:
    """SearchParams copies the SearchConfig fields the nodes read, under their names:
    with every one of them set apart from the others (integers all different, the
    switches in several patterns), each is read back as the configuration has it."""
    names = _declared_fields("SearchParams")
    config_fields = {field.name: field for field in dataclasses.fields(SearchConfig)}
    assert names and set(names) <= set(config_fields)
    default = Config().search
    switches = [name for name in names if isinstance(getattr(default, name), bool)]
    numbers = [name for name in names if name not in switches]
    assert len(switches) > 5 and len(numbers) > 10
    for pattern in range(5):
        changes: dict[str, object] = {name: bool(index >> pattern & 1) for index, name in enumerate(switches)}
        changes |= {name: getattr(default, name) + 1 + index + pattern for index, name in enumerate(numbers)}
        config = dataclasses.replace(default, **changes)  # type: ignore[arg-type]
        params = SearchParams(config)
        assert {name: getattr(params, name) for name in names} == {name: getattr(config, name) for name in names}


# ------------------------------------------------------------------ the table as the search uses it


def test_a_mate_found_through_the_table_keeps_its_distance() -> None:
    """Mate scores are stored relative to the node: after the mate in two is found,
    the same engine (its table kept) reaches the position after the first moves and
    reports a mate in one, not the distance the table was written with."""
    engine = searching_engine()
    board = chess.Board("r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1")  # WAC.004
    first = engine.think(board, Limits(depth=8))
    assert first.move == chess.Move.from_uci("h6h7") and mate_in(first.score or 0) == 2
    board.push(first.move)
    reply = engine.think(board, Limits(depth=7))
    assert reply.move is not None and mate_in(reply.score or 0) == -1
    board.push(reply.move)
    final = engine.think(board, Limits(depth=6))
    assert mate_in(final.score or 0) == 1
    board.push(final.move)
    assert board.is_checkmate()


def test_a_cleared_table_forgets_every_entry() -> None:
    """Clearing forgets every entry of a search and keeps finding the new ones
    (compiled by a new salt; test_native.py runs the same check there, the salt
    coming round)."""
    assert table_check(16, 40) > 300


@pytest.mark.parametrize("megabytes", [1, 3])
def test_hash_bounds_the_table(megabytes: int) -> None:
    """Hash is a bound: the largest power of two of 16-byte entries that fits, taken
    on the first search; compiled, a table with every slot filled with realistic
    entries stays within Hash megabytes as tracemalloc counts memory (interpreted,
    the empty table's slots do: a filled slot's Python integers cost more)."""
    import tracemalloc

    table = TranspositionTable(megabytes)
    budget = megabytes * 1024 * 1024
    assert len(table) * ENTRY_BYTES <= budget < 2 * len(table) * ENTRY_BYTES
    assert not table.allocated
    rng = random.Random(megabytes)
    tracemalloc.start()
    try:
        table.new_search()
        assert table.allocated and len(table.keys) == len(table.data) == len(table)
        if not INTERPRETED:
            for index in range(len(table)):
                key = rng.getrandbits(64) & ~table.mask | index
                table.store(key, rng.randrange(1, 1 << 15), rng.randrange(-32000, 32000), rng.randrange(1, 64), EXACT)
        used = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert used <= budget + 4096  # the slots, and the two arrays' headers
    if not INTERPRETED:
        assert table.hashfull() == 1000


def test_the_table_takes_its_memory_on_isready_not_on_the_clock() -> None:
    """The table's memory is taken by prepare (what isready calls), kept by clear
    (ucinewgame) and resize empties it; not at start-up, which stays quick."""
    engine = searching_engine()
    table = engine.tt
    assert isinstance(table, TranspositionTable) and not table.allocated
    engine.prepare()
    assert table.allocated and len(table) == table.mask + 1
    table.store(12345, 77, 10, 3, EXACT)
    assert table.probe(12345) is not None
    engine.new_game()
    assert table.allocated and table.probe(12345) is None
    engine.set_option("hash_mb", 2)
    assert not table.allocated and len(table) == 2 * 1024 * 1024 // ENTRY_BYTES


# ------------------------------------------------------------------ the off-board terms


def test_the_engine_searches_with_every_term(built_searches: list[Search]) -> None:
    """The engine builds one Search per move; the pheromone memory (its bonus and its
    ordering) and the spectral term each change the tree it searches, and the
    spectral features are computed in it. From the start position: the bundled memory's
    trails there change the search with the shipped net (after the Italian opening's
    fourth move they did not, at depths 5 and 6)."""
    board = chess.Board()
    plain = searching_engine().think(board, Limits(depth=5))
    assert len(built_searches) == 1 and isinstance(built_searches[0], Search)
    assert not built_searches[0].extras_on and not built_searches[0].spectral_on
    for terms in ({"pheromone": True}, {"spectral": True}):
        built_searches.clear()
        engine = searching_engine(_with(Config(), **terms))
        result = engine.think(board, Limits(depth=5))
        assert len(built_searches) == 1 and built_searches[0].extras_on, terms
        assert result.move in board.legal_moves
        assert result.nodes != plain.nodes, terms
        if terms.get("spectral"):
            assert built_searches[0].spectral_on
            assert engine.static.spectral is not None and engine.static.spectral.computed > 0


def test_the_off_board_terms_are_the_spectral_advantage_and_the_trail_bonus() -> None:
    """What the search adds to the evaluator's score at a node, on 120 random
    positions (some Chess960, trails laid on half): entered deep enough, the spectral
    advantage of the position's own features (side to move's view) plus eval_weight
    times its strongest trail; at a child entered in the quiescence search, the
    parent's spectral value (inherited) plus the child's own trail bonus."""
    from blitzaco.spectral import SpectralTerm, position_features

    config = _with(Config(), pheromone=True, spectral=True)
    trails = Trails(config.pheromone)
    static = StaticEval(config, trails)
    static.use_trails(True)
    assert static.extra_terms() and static.per_node
    oracle = SpectralTerm(config.eval.spectral)
    weight = config.pheromone.eval_weight
    deep = config.eval.spectral.min_depth
    rng = random.Random(29)
    compared = spectral = bonus = 0
    while compared < 120:
        reference = chess.Board.from_chess960_pos(rng.randrange(960)) if rng.random() < 0.3 else chess.Board()
        for _ in range(rng.randrange(4, 60)):
            moves = list(reference.legal_moves)
            if not moves:
                break
            reference.push(rng.choice(moves))
        moves = list(reference.legal_moves)
        if not moves:
            continue
        if rng.random() < 0.5:
            trails.deposit(compute_key(reference), encode_move(rng.choice(moves)), rng.uniform(0.05, 1.0))
        own = Board.from_chess(reference)
        static.enter(own, 2, deep)
        advantage = oracle.advantage(position_features(reference))
        sign = 1 if reference.turn == chess.WHITE else -1
        expected = sign * advantage + int(weight * trails.strongest(compute_key(reference)))
        assert static.extras(own.side == WHITE, unsigned_key(own.key)) == expected, reference.fen()
        move = rng.choice(moves)
        child = reference.copy()
        child.push(move)
        if rng.random() < 0.5:
            child_moves = list(child.legal_moves)
            if child_moves:
                trails.deposit(compute_key(child), encode_move(rng.choice(child_moves)), rng.uniform(0.05, 1.0))
        own.make(encode_move(move))
        static.enter(own, 3, 0)
        inherited = -sign * advantage + int(weight * trails.strongest(compute_key(child)))
        assert static.extras(own.side == WHITE, unsigned_key(own.key)) == inherited, child.fen()
        compared += 1
        spectral += advantage != 0
        bonus += trails.strongest(compute_key(reference)) > 0
    assert spectral > 100 and 30 < bonus < 100


def test_the_trails_order_the_search_only_with_their_ordering_switch() -> None:
    """The plan's trails reach the move pickers when [pheromone] ordering is on (and
    change the tree: a marked quiet reply to every root move is searched first);
    with it off the pickers get none and the tree is the one without trails (the
    bonus is off: eval_weight 0)."""
    board = chess.Board(ITALIAN)
    config = _with(Config(), pheromone=True)
    config = dataclasses.replace(config, pheromone=dataclasses.replace(config.pheromone, eval_weight=0))

    def laid(ordering: bool) -> Trails:
        """Trails with the ordering switch as given, a marked quiet reply to every root move."""
        trails = Trails(dataclasses.replace(config.pheromone, ordering=ordering))
        rng = random.Random(3)
        for move in board.legal_moves:
            child = board.copy()
            child.push(move)
            quiet = [reply for reply in child.legal_moves if not child.is_capture(reply)]
            trails.deposit(compute_key(child), encode_move(rng.choice(quiet)), 1.0)
        return trails

    def nodes(plan_trails: Trails | None) -> tuple[int, bool]:
        static = StaticEval(config, plan_trails or laid(True))
        search = direct_search(board, config, trails=plan_trails, static=static)
        for _ in search.iterate(4):
            pass
        return search.nodes, search.pickers[1].trails is not None

    without, has = nodes(None)
    assert not has
    ordered, has = nodes(laid(True))
    assert has and ordered != without
    switched_off, has = nodes(laid(False))
    assert not has and switched_off == without
