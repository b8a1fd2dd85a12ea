"""The search through the engine facade: mates, draws, limits, determinism."""

from __future__ import annotations

import time

import chess
import pytest
from recorder import Recorder

from blitzaco.engine import Engine
from blitzaco.search import MATE, Bound, PvLine, mate_in
from blitzaco.timeman import Limits, SearchControl, time_budget
from blitzaco.turn import Turn


def searching_engine(config=None) -> Engine:
    """An engine that searches every position: the bundled book would answer the
    opening positions these tests use without a search."""
    engine = Engine(config)
    engine.set_option("own_book", False)
    return engine


def think(board: chess.Board, engine: Engine | None = None, recorder: Recorder | None = None, **limits):
    engine = engine if engine is not None else searching_engine()
    lim = Limits(**limits)
    return engine.think(board, lim, recorder)


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
    # A pruning search needs more than the 2N-1 plies of full width (null-move
    # pruning hides quiet mating threats near the horizon): 2N + 6 plies.
    result = think(chess.Board(fen), depth=2 * moves_to_mate + 6)
    assert result.move.uci() in mating_moves
    assert mate_in(result.score) == moves_to_mate


@pytest.mark.parametrize("switch", ["razoring", "improving", "tt_eval", "lazy_eval"])
def test_pruning_switches_change_the_tree_and_still_find_mates(switch: str) -> None:
    """Razoring, the improving rule, the table-sharpened evaluation, lazy evaluation:
    switched from their default, they change the tree (a different node count at the
    same depth) and the mates are still found. Lazy evaluation stands in for the
    classical evaluation alone, so it is tried on that."""
    from blitzaco.config import Config, config_from_dict

    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    base: dict = {"eval": {"nn": {"enabled": False}}} if switch == "lazy_eval" else {}
    switched = searching_engine(config_from_dict({**base, "search": {switch: not getattr(Config().search, switch)}}))
    default = searching_engine(config_from_dict(base))
    assert switched.think(board, Limits(depth=7)).nodes != default.think(board, Limits(depth=7)).nodes
    for fen, moves, mate in (
        ("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", {"g3g6"}, 2),
        ("5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1", {"c6c4"}, 2),
    ):
        switched.new_game()
        result = switched.think(chess.Board(fen), Limits(depth=2 * mate + 6))
        assert result.move.uci() in moves and mate_in(result.score) == mate


def test_prefers_mate_to_stalemate() -> None:
    board = chess.Board("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")  # Qf7 stalemates, Qf8 mates
    result = think(board, depth=3)
    assert result.move.uci() == "f1f8"
    assert mate_in(result.score) == 1


def test_stalemate_scores_zero_and_has_no_move() -> None:
    recorder = Recorder()
    result = think(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), recorder=recorder, depth=3)
    assert result.move is None and result.score == 0
    assert recorder.infos[-1].line.score == 0


def test_checkmated_side_has_no_move() -> None:
    result = think(chess.Board("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1"), depth=3)
    assert result.move is None and result.score == -MATE


def test_threefold_repetition_from_the_game_history_is_a_draw() -> None:
    # White has no queen: every move loses except the one that repeats a position
    # for the third time.
    board = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1")
    for uci in "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8".split():
        board.push_uci(uci)
    result = think(board, depth=3)
    assert result.move.uci() == "g1f3"
    assert result.score == 0


def test_without_history_the_same_position_is_lost() -> None:
    board = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1")
    assert think(board, depth=3).score < -500


def test_fifty_move_rule_scores_zero() -> None:
    # A rook up, but every move is the hundredth half-move without capture or pawn move.
    result = think(chess.Board("7k/8/8/8/8/8/8/R3K3 w - - 99 80"), depth=4)
    assert result.score == 0


def test_mate_on_the_hundredth_half_move_still_counts() -> None:
    result = think(chess.Board("7k/8/6K1/8/8/8/8/R7 w - - 99 80"), depth=2)
    assert result.move.uci() == "a1a8" and mate_in(result.score) == 1


def test_insufficient_material_scores_zero() -> None:
    result = think(chess.Board("8/8/4k3/8/8/3NK3/8/8 w - - 0 1"), depth=4)
    assert result.score == 0


def test_same_node_limit_gives_same_move_and_nodes() -> None:
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
    board = chess.Board()
    result = think(board, nodes=1)
    assert result.move in board.legal_moves


def test_multipv_lines_are_distinct_and_ordered() -> None:
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
    board = chess.Board()
    allowed = [chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h3")]
    result = think(board, depth=3, searchmoves=allowed)
    assert result.move in allowed


def test_go_mate_stops_when_the_mate_is_found() -> None:
    recorder = Recorder()
    board = chess.Board("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1")
    result = think(board, recorder=recorder, mate=2)
    assert mate_in(result.score) == 2
    # it stopped at the first iteration that proved the mate
    first_mate = next(info.line.depth for info in recorder.infos if mate_in(info.line.score) == 2)
    assert recorder.infos[-1].line.depth == first_mate


def test_infos_deepen_and_carry_the_pv() -> None:
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
    board = chess.Board()
    result = think(board, depth=4)
    assert result.ponder is not None
    board.push(result.move)
    assert result.ponder in board.legal_moves


def test_failed_aspiration_window_is_reported_as_a_bound() -> None:
    recorder = Recorder()
    think(chess.Board("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - 0 1"), recorder=recorder, depth=5)  # WAC.006
    bounds = [info.line for info in recorder.infos if info.line.bound != Bound.EXACT]
    assert bounds, "the score jumps at depth 4 or 5 here: some window must fail"
    for bound in bounds:
        # The exact score found at that depth afterwards lies on the reported side.
        final = [
            info.line for info in recorder.infos if info.line.depth == bound.depth and info.line.bound == Bound.EXACT
        ]
        assert final
        if bound.bound == Bound.LOWER:
            assert final[-1].score >= bound.score
        else:
            assert bound.bound == Bound.UPPER and final[-1].score <= bound.score


def test_root_filter_domination() -> None:
    from blitzaco.search import RootChoice

    move = chess.Move.from_uci("e2e4")
    strong = RootChoice(move, 30, 10, 20.0)
    assert strong.dominates(RootChoice(move, 30, 5, 20.0))
    assert not strong.dominates(RootChoice(move, 40, 5, 10.0))  # better on one measure
    assert not strong.dominates(strong)


def test_root_filter_plays_a_legal_move_and_reports_its_choice() -> None:
    from blitzaco.config import config_from_dict

    engine = searching_engine(config_from_dict({"search": {"root_filter": True}}))
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
    assert think(board, depth=4).move == chess.Move.from_uci("e5e6")
    recorder = Recorder()
    filtering = searching_engine(config_from_dict({"search": {"root_filter": True}}))
    filtered = filtering.think(board, Limits(depth=4), recorder)
    assert filtered.move == chess.Move.from_uci("d4f3")
    assert [text.split()[2] for text in recorder.messages if text.startswith("root filter:")] == ["d4f3"]


@pytest.mark.parametrize("megabytes", [1, 16, 24])
def test_hash_bounds_the_table_when_it_is_full(megabytes: int) -> None:
    """Hash is a bound: a table with every slot filled with realistic entries (a
    64-bit key, move, score, depth, bound, a generation past the cached small
    integers) stays within Hash megabytes, as tracemalloc counts CPython's memory."""
    import random
    import tracemalloc

    from blitzaco.tt import TranspositionTable

    rng = random.Random(megabytes)
    tracemalloc.start()
    try:
        table = TranspositionTable(megabytes)
        for index in range(len(table)):
            key = rng.getrandbits(64) & ~table.mask | index
            table.store(key, rng.randrange(1, 1 << 15), rng.randrange(-32000, 32000), rng.randrange(1, 64), 0)
            table.table[index] = table.table[index][:5] + (rng.randrange(300, 400),)  # generation > 256
        used = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(table) >= megabytes * 1024 * 1024 // 2 // 208  # at least half the budget is used
    assert used <= megabytes * 1024 * 1024


def test_strength_levels_search_less_and_pick_among_the_best_lines() -> None:
    """Skill Level below 20: at most its node count a move, several lines searched
    and one of them picked with a random push (so play changes); a mate in one is
    never missed from safe_level up; UCI_Elo with UCI_LimitStrength wins over Skill
    Level."""
    engine = searching_engine()
    levels = engine.config.levels
    engine.set_option("skill_level", 0)
    assert engine.level() == 0
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
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
    from blitzaco.config import config_from_dict

    config = config_from_dict({"levels": {"single_line_from": 17}})
    engine = searching_engine(config)
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
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
    from blitzaco.config import config_from_dict

    nn = {"enabled": True, "file": "net.bin", "weight": 0.3, "classical": 0.7}
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
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
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    for _ in range(3):
        result = engine.think(board, Limits(wtime=600_000, btime=600_000))
        assert 0 < result.nodes <= cap and result.move in board.legal_moves
    clock = Limits(wtime=200, btime=200)
    hard = time_budget(clock, chess.WHITE, engine.options.move_overhead, engine.config.time)
    assert hard is not None
    started = time.perf_counter()
    result = engine.think(board, clock)
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert result.move in board.legal_moves and result.nodes <= cap
    # Generous slack for a loaded machine: the point is that the level's search is
    # bound by the clock (level 19's 43,900 nodes take over a second), not only by
    # its depth and node count.
    assert elapsed_ms <= hard.hard_ms + 250, (elapsed_ms, hard)


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
