"""Time budgets: a pure function of the limits, checked without a clock."""

from __future__ import annotations

import dataclasses
import time

import chess
import pytest

from blitzaco.config import Config, TimeConfig
from blitzaco.engine import Engine
from blitzaco.search import MATE_BOUND, SearchPlan
from blitzaco.timeman import IterationReport, Limits, SearchControl, time_budget

CONFIG = TimeConfig()


def test_no_time_limits_means_no_budget() -> None:
    for limits in (Limits(), Limits(depth=5), Limits(nodes=1000), Limits(mate=3), Limits(infinite=True)):
        assert time_budget(limits, chess.WHITE, 30, CONFIG) is None


def test_movetime_is_both_limits() -> None:
    budget = time_budget(Limits(movetime=500), chess.WHITE, 30, CONFIG)
    assert budget is not None and budget.soft_ms == budget.hard_ms == 500


def test_uses_the_clock_of_the_side_to_move() -> None:
    limits = Limits(wtime=60_000, btime=6_000)
    no_reserve = dataclasses.replace(CONFIG, move_latency=0.0)
    white = time_budget(limits, chess.WHITE, 0, no_reserve)
    black = time_budget(limits, chess.BLACK, 0, no_reserve)
    assert white is not None and black is not None
    assert white.hard_ms == pytest.approx(10 * black.hard_ms)


def test_sudden_death_divides_by_moves_to_go_and_adds_increment() -> None:
    budget = time_budget(Limits(wtime=30_030, winc=1000), chess.WHITE, 30, CONFIG)
    assert budget is not None
    optimum = 30_000 / CONFIG.moves_to_go + CONFIG.increment_use * 1000
    assert budget.soft_ms == pytest.approx(CONFIG.soft_factor * optimum)
    assert budget.hard_ms == pytest.approx(CONFIG.hard_factor * optimum)
    assert budget.soft_ms < budget.hard_ms


def test_sudden_death_keeps_the_latency_of_the_moves_to_come_in_reserve() -> None:
    budget = time_budget(Limits(wtime=10_030), chess.WHITE, 30, CONFIG)
    assert budget is not None
    optimum = (10_000 - CONFIG.moves_to_go * CONFIG.move_latency) / CONFIG.moves_to_go
    assert budget.hard_ms == pytest.approx(CONFIG.hard_factor * optimum)
    paid = time_budget(Limits(wtime=10_030, winc=int(CONFIG.move_latency)), chess.WHITE, 30, CONFIG)
    assert paid is not None  # an increment as large as the latency pays for it: no reserve
    optimum = 10_000 / CONFIG.moves_to_go + CONFIG.increment_use * CONFIG.move_latency
    assert paid.hard_ms == pytest.approx(CONFIG.hard_factor * optimum)


def test_movestogo_replaces_the_default_horizon() -> None:
    few = time_budget(Limits(btime=10_000, movestogo=2), chess.BLACK, 0, CONFIG)
    many = time_budget(Limits(btime=10_000, movestogo=40), chess.BLACK, 0, CONFIG)
    assert few is not None and many is not None
    assert few.soft_ms > many.soft_ms


@pytest.mark.parametrize("overhead", [0, 30, 500])
@pytest.mark.parametrize(
    "limits",
    [
        Limits(wtime=1000, winc=5000),  # increment larger than the clock
        Limits(wtime=100, winc=20),
        Limits(wtime=10),  # less than the overhead
        Limits(wtime=-50),  # some GUIs send negative times after a lag
        Limits(wtime=60_000, movestogo=1),
        Limits(wtime=5_000, movetime=10_000),
    ],
)
def test_a_move_never_takes_more_than_its_share_of_the_clock(limits: Limits, overhead: int) -> None:
    budget = time_budget(limits, chess.WHITE, overhead, CONFIG)
    assert budget is not None
    remaining = max((limits.wtime or 0) - overhead, 1)
    assert 0 < budget.hard_ms <= CONFIG.max_share * remaining + 1e-9
    assert budget.soft_ms <= budget.hard_ms


@pytest.mark.parametrize(
    ("base", "increment", "overhead", "latency", "moves"),
    [
        (1000, 10, 10, 9, 1000),  # bullet: the increment barely pays for a move's latency
        (1000, 10, 30, 9, 1000),
        (10_000, 100, 30, 30, 1000),
        (200, 100, 100, 60, 1000),  # a clock below the overhead from the start
        (60_000, 0, 15, 5, 100),  # sudden death: only the reserve pays for the latency
        (10_000, 0, 30, 5, 100),
        (180_000, 0, 30, 5, 100),
    ],
)
def test_a_long_game_at_full_hard_limit_never_loses_on_time(
    base: int, increment: int, overhead: int, latency: int, moves: int
) -> None:
    """The worst case of a game: every move runs to its hard limit and costs a fixed
    latency (reading the command, answering) on top. With an increment that pays
    for the latency the clock never runs out; in sudden death, with the latency half
    of move_latency, it lasts a 100-move game (each side)."""
    assert latency <= overhead and (increment >= latency or 2 * latency <= CONFIG.move_latency)
    clock = float(base)
    for _ in range(moves):
        budget = time_budget(Limits(wtime=int(clock), winc=increment), chess.WHITE, overhead, CONFIG)
        assert budget is not None
        clock -= budget.hard_ms + latency
        assert clock > 0
        clock += increment


def test_the_clock_can_start_before_the_control_is_made() -> None:
    """The UCI loop starts the clock when the go line arrives."""
    limits = Limits(movetime=100)
    start = time.perf_counter() - 1.0
    control = SearchControl(limits, time_budget(limits, chess.WHITE, 0, CONFIG), start=start)
    assert control.hard_deadline == pytest.approx(start + 0.1)
    assert control.hard_expired() and control.elapsed_ms() >= 1000


def test_movetime_and_clock_together_take_the_tighter() -> None:
    clock_tighter = time_budget(Limits(wtime=1000, movetime=10_000), chess.WHITE, 0, CONFIG)
    assert clock_tighter is not None and clock_tighter.hard_ms <= 500
    movetime_tighter = time_budget(Limits(wtime=60_000, movetime=100), chess.WHITE, 0, CONFIG)
    clock_alone = time_budget(Limits(wtime=60_000), chess.WHITE, 0, CONFIG)
    assert movetime_tighter is not None and clock_alone is not None and clock_alone.hard_ms > 100
    assert movetime_tighter.soft_ms == movetime_tighter.hard_ms == 100


def test_ponder_has_no_deadline_until_ponderhit() -> None:
    limits = Limits(wtime=10_000, ponder=True)
    control = SearchControl(limits, time_budget(limits, chess.WHITE, 0, CONFIG))
    assert control.hard_deadline is None and control.soft_deadline is None
    assert not control.hard_expired()
    control.ponderhit()
    assert control.hard_deadline is not None and not control.pondering
    control.wait_until_released()  # released by the ponderhit: returns at once


def test_stop_expires_both_limits_and_releases() -> None:
    control = SearchControl(Limits(infinite=True), None)
    assert not control.soft_expired() and not control.hard_expired()
    control.stop()
    assert control.stopped and control.soft_expired() and control.hard_expired()
    control.wait_until_released()


def test_a_clock_for_the_other_side_only_means_moving_at_once() -> None:
    """Stockfish counts a missing clock as empty: the side to move gets the least
    budget there is instead of none (which would search until stop)."""
    budget = time_budget(Limits(wtime=60_000, winc=1000), chess.BLACK, 30, CONFIG)
    assert budget is not None and budget.hard_ms <= CONFIG.max_share
    assert budget.soft_ms <= budget.hard_ms
    assert time_budget(Limits(btime=100), chess.WHITE, 0, CONFIG) is not None


def _reports(moves: list[str], scores: list[int], shares: list[float]) -> list:
    return [
        IterationReport(depth, chess.Move.from_uci(move), score, share)
        for depth, (move, score, share) in enumerate(zip(moves, scores, shares, strict=True), start=1)
    ]


def test_an_unsure_search_gets_more_time_than_a_sure_one_within_the_hard_limit() -> None:
    """Scripted iteration reports: a best move that keeps changing and a falling score
    stretch the soft limit; one move that stays best with nearly all the nodes shrinks
    it; the soft limit never passes the hard one."""
    from blitzaco.timeman import Stability

    config = dataclasses.replace(CONFIG, adaptive=True)
    unsure = _reports(["e2e4", "d2d4", "e2e4", "g1f3", "c2c4", "d2d4"], [30, 10, -20, -45, -60, -80], [0.4] * 6)
    sure = _reports(["e2e4"] * 6, [30, 32, 31, 33, 32, 34], [0.95] * 6)
    factors = {}
    for name, reports in (("unsure", unsure), ("sure", sure)):
        stability = Stability(config)
        factors[name] = [stability.update(report) for report in reports][-1]
    assert factors["unsure"] > 1.0 > factors["sure"]
    assert config.scale_min <= factors["sure"] and factors["unsure"] <= config.scale_max
    limits = Limits(wtime=10_000)
    budget = time_budget(limits, chess.WHITE, 0, config)
    assert budget is not None
    control = SearchControl(limits, budget, start=1000.0)
    control.scale_soft(factors["unsure"])
    assert control.soft_deadline is not None and control.hard_deadline is not None
    assert control.soft_deadline > 1000.0 + budget.soft_ms / 1000.0
    control.scale_soft(100.0)
    assert control.soft_deadline == control.hard_deadline
    control.scale_soft(factors["sure"])
    assert control.soft_deadline < 1000.0 + budget.soft_ms / 1000.0


def test_a_single_legal_move_gets_only_a_shallow_search() -> None:
    """By default one legal move under a clock is answered after a shallow search
    (single_move_depth plies), with a score and a ponder move, however long the clock;
    a fixed depth without a clock is searched as asked; with [time] single_move off
    the move gets the clock's budget."""
    board = chess.Board("k7/8/8/8/8/8/1r6/K6r w - - 0 1")  # Ka1 in check: Kxb2 only
    assert board.legal_moves.count() == 1
    config = Config()
    assert config.time.single_move
    engine = Engine(config)
    engine.set_option("own_book", False)
    result = engine.think(board, Limits(wtime=600_000, btime=600_000))
    assert result.move == chess.Move.from_uci("a1b2") and result.score is not None
    assert result.depth == config.time.single_move_depth and result.ponder is not None
    # A fixed depth beyond it is what was asked for: no clock, no shortcut.
    deep = config.time.single_move_depth + 2
    assert engine.think(board, Limits(depth=deep)).depth == deep
    # Switched off, the clock's budget (1.2 s here) runs the search past the shallow
    # depth. A first search sets the engine up (its table, its net), so that a busy
    # machine's slow start does not eat the budget being tested.
    off = Engine(dataclasses.replace(config, time=dataclasses.replace(config.time, single_move=False)))
    off.set_option("own_book", False)
    off.think(board, Limits(depth=1))
    assert off.think(board, Limits(wtime=60_000, btime=60_000)).depth > config.time.single_move_depth


def test_with_count_ponder_the_pondering_counts_against_the_budget() -> None:
    """After a long ponder on the right move, the limits run from the go (Stockfish's
    reading), so the rest of the search is shorter; without it they start afresh."""
    limits = Limits(wtime=10_000, ponder=True)
    budget = time_budget(limits, chess.WHITE, 0, CONFIG)
    assert budget is not None
    start = time.perf_counter() - 60.0  # pondered for a minute
    counted = SearchControl(limits, budget, start=start, count_ponder=True)
    afresh = SearchControl(limits, budget, start=start)
    counted.ponderhit()
    before = time.perf_counter()
    afresh.ponderhit()
    after = time.perf_counter()
    assert counted.hard_expired() and counted.soft_expired()  # a minute is past every limit
    # Afresh: the hard limit runs from the ponderhit, not from the go a minute ago.
    assert afresh.hard_deadline is not None
    assert before + budget.hard_ms / 1000 <= afresh.hard_deadline <= after + budget.hard_ms / 1000
    assert counted.hard_deadline == pytest.approx(start + budget.hard_ms / 1000)


# ------------------------------------------------------------------ iteration trim

TRIM_FEN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"


def _trim_search(due: object, depth: int = 4, fall: int = 10_000, max_depth: int = 5):
    """A search of TRIM_FEN to *max_depth* with the trim's signal *due* (None: no
    trim); returns (search, depths of the completed iterations)."""
    from blitzaco.pheromone import Trails
    from blitzaco.search import Search, Trim
    from blitzaco.static_eval import StaticEval
    from blitzaco.tt import TranspositionTable

    config = Config()
    static = StaticEval(config, Trails(config.pheromone))
    board = chess.Board(TRIM_FEN)
    trim = Trim(due, depth, fall) if due is not None else None  # type: ignore[arg-type]
    plan = SearchPlan(static, TranspositionTable(1), config.search, SearchControl(Limits(depth=max_depth), None),
                      list(board.legal_moves), trim=trim)
    search = Search(board, plan)
    return search, [iteration.depth for iteration in search.iterate(max_depth)]


def test_a_trim_never_due_leaves_the_search_alone() -> None:
    """The trim only ends iterations: never due, the tree is the untrimmed one."""
    plain, plain_depths = _trim_search(None)
    trimmed, depths = _trim_search(lambda: False)
    assert depths == plain_depths == [1, 2, 3, 4, 5]
    assert trimmed.nodes == plain.nodes and not trimmed.stopped
    assert trimmed.best_line() == plain.best_line()


def test_a_due_trim_ends_the_iteration_once_the_best_move_is_confirmed() -> None:
    """Due from the start, the first iteration at the trim's depth ends as soon as the
    previous best move is searched at that depth (and not beaten): the result is that
    move with the new depth's score, at a fraction of the iteration's nodes. The trim's
    depth is the first from 4 where the untrimmed search keeps the previous depth's
    best move (which depth that is follows the evaluation: 5 with the shipped net)."""
    before, _ = _trim_search(None, max_depth=3)
    for at in range(4, 8):  # each depth's untrimmed search only until one keeps the move
        plain, _ = _trim_search(None, max_depth=at)
        if plain.best_line()[0][0] == before.best_line()[0][0]:
            break
        before = plain
    else:
        pytest.fail("the best move changed at every depth from 3 to 7")
    trimmed, depths = _trim_search(lambda: True, depth=at, max_depth=at)
    assert depths == list(range(1, at))
    assert trimmed.stopped
    pv, score, depth = trimmed.best_line()
    assert depth == at
    assert pv[0] == before.best_line()[0][0]
    assert trimmed.nodes < plain.nodes
    assert -MATE_BOUND < score < MATE_BOUND


def test_a_trim_spares_a_changed_or_falling_best_move() -> None:
    """The trim's predicate: not while another move is best at the new depth, nor
    when the previous best fell by more than the margin, nor before its depth, nor
    before it is due."""
    due = [True]
    search, _ = _trim_search(lambda: due[0], depth=3, fall=20, max_depth=2)
    anchor, other = search.root_moves[0], search.root_moves[1]
    search._anchor = anchor
    anchor.previous_score, anchor.score = 50, 40
    search._partial = anchor
    assert search._trimmed(3)
    assert not search._trimmed(2)  # below the trim's depth
    due[0] = False
    assert not search._trimmed(3)  # not due yet
    due[0] = True
    search._partial = other
    assert not search._trimmed(3)  # the best move changed
    search._partial = anchor
    anchor.score = 25
    assert not search._trimmed(3)  # fell by 25 > 20
    search._anchor = None
    assert not search._trimmed(3)  # the first iteration


def _engine_on_the_clock(**time: bool) -> tuple[Config, Engine, chess.Board]:
    """The default configuration with the [time] fields *time* changed, an engine of
    it (book off) and TRIM_FEN's board, after the engine played a legal move there on
    a 2-second clock."""
    config = Config()
    config = dataclasses.replace(config, time=dataclasses.replace(config.time, **time))
    engine = Engine(config)
    engine.set_option("own_book", False)
    board = chess.Board(TRIM_FEN)
    assert board.is_legal(engine.think(board, Limits(wtime=2_000, btime=2_000)).move)
    return config, engine, board


@pytest.mark.parametrize("trim", [True, False])
def test_the_engine_trims_only_searches_on_the_clock(monkeypatch: pytest.MonkeyPatch, trim: bool) -> None:
    """With [time] trim on, a search on the clock gets the trim (tied to its soft
    limit), a fixed-depth search does not; with it off, none does."""
    from blitzaco import turn

    trims: list[object] = []
    real = turn.Search

    def recorded(board: chess.Board, plan: SearchPlan) -> object:  # every search the engine builds
        trims.append(plan.trim)
        return real(board, plan)

    monkeypatch.setattr(turn, "Search", recorded)
    config, engine, board = _engine_on_the_clock(trim=trim)
    engine.think(board, Limits(depth=3))
    clock_trim, depth_trim = trims
    assert depth_trim is None
    if trim:
        assert clock_trim is not None
        assert (clock_trim.depth, clock_trim.fall) == (config.time.trim_depth, config.time.trim_fall)
    else:
        assert clock_trim is None


@pytest.mark.parametrize("adaptive", [True, False])
def test_the_engine_scales_the_soft_limit_only_on_the_clock(monkeypatch: pytest.MonkeyPatch, adaptive: bool) -> None:
    """With [time] adaptive on, a search on the clock gives each iteration's report to
    the time manager's Stability, and its factor moves the soft limit; a fixed-depth
    search asks nothing; with it off, no search does."""
    from blitzaco import turn
    from blitzaco.timeman import Stability

    reports: list[IterationReport] = []
    scaled: list[float] = []

    class Recorded(Stability):
        def update(self, report: IterationReport) -> float:
            reports.append(report)
            return super().update(report)

    real_scale = SearchControl.scale_soft

    def scale_soft(control: SearchControl, factor: float) -> None:
        scaled.append(factor)
        real_scale(control, factor)

    monkeypatch.setattr(turn, "Stability", Recorded)
    monkeypatch.setattr(SearchControl, "scale_soft", scale_soft)
    config, engine, board = _engine_on_the_clock(adaptive=adaptive)
    on_clock = len(reports)
    assert on_clock == len(scaled)
    engine.think(board, Limits(depth=3))
    assert len(reports) == on_clock  # a fixed depth: no report
    if adaptive:
        # Every completed iteration, from the first (a busy machine may finish only that one).
        assert on_clock >= 1 and [report.depth for report in reports] == list(range(1, on_clock + 1))
        assert all(config.time.scale_min <= factor <= config.time.scale_max for factor in scaled)
    else:
        assert on_clock == 0
