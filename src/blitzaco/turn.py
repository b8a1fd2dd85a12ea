"""One move's thinking: what :meth:`blitzaco.engine.Engine.think` does between a
position with its limits and the move it answers, and what it reports on the way.

The engine keeps the long-lived state (options, table, helpers, evaluation, book and
tablebases, pheromone memory); a :class:`Turn` holds what belongs to one move (the
board, the limits, the clock, the reporter; the legal and root moves, the lines the
GUI asked for) and goes through the steps the engine calls in order:

1. :meth:`Turn.no_move`: no legal move, a score and nothing to play;
2. :meth:`Turn.book_move`: a book move, reported with a one-ply score;
3. :meth:`Turn.consult_tablebases`: the tablebase-optimal root moves;
4. :meth:`Turn.search`: the search built from one :class:`~blitzaco.search.SearchPlan`,
   the strength level's limits, the helpers searching beside it, the iterations
   and when to stop them;
5. :meth:`Turn.choose`: the move to play from the search's result (the root
   filter, a weaker level's pick, the pheromone roulette) and the ponder move.

It never prints: the :class:`Reporter` gets everything, :mod:`blitzaco.uci` turns
it into protocol lines.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import chess

from blitzaco.board import compute_key, repetition_window
from blitzaco.moves import decode_move, encode_move
from blitzaco.search import (
    MATE,
    MATE_BOUND,
    MAX_DEPTH,
    Bound,
    PvLine,
    Search,
    SearchMemory,
    SearchPlan,
    Trim,
    mate_in,
    tablebase_score,
)
from blitzaco.timeman import IterationReport, Limits, Poll, SearchControl, Stability
from blitzaco.tt import MOVE
from blitzaco.wdl import material, wdl

if TYPE_CHECKING:
    import random

    from blitzaco.config import Config
    from blitzaco.options import Options
    from blitzaco.pheromone import Trails
    from blitzaco.probe import Probe, TablebaseRoot
    from blitzaco.smp import HelperPool, HelperSettings
    from blitzaco.static_eval import StaticEval
    from blitzaco.tt import TranspositionTable

__all__ = [
    "Turn", "EngineState", "ThinkResult", "SearchInfo", "CurrMove", "Reporter", "CURRMOVE_AFTER_MS", "print_traceback",
]

def print_traceback() -> None:
    """Print the exception being handled to stderr (a bug: the GUI gets an ``info
    string``, the log the traceback). ``traceback`` is imported here, not at start-up,
    where it cost about 4 ms (it brings ``linecache``, ``tokenize`` and ``textwrap``)."""
    import traceback

    traceback.print_exc(file=sys.stderr)


#: The root move being searched is reported only once the search is this old (ms).
CURRMOVE_AFTER_MS = 1000.0


@dataclass(frozen=True)
class SearchInfo:
    """Everything one ``info ... pv ...`` line carries."""

    line: PvLine
    nodes: int
    time_ms: int
    hashfull: int
    tbhits: int
    wdl: tuple[int, int, int] | None = None  # per mille, when UCI_ShowWDL asks for it

    @property
    def nps(self) -> int:
        return self.nodes * 1000 // self.time_ms if self.time_ms > 0 else 0


@dataclass(frozen=True)
class CurrMove:
    depth: int
    move: chess.Move
    number: int


class Reporter:
    """Receives the engine's reports; the default ignores them."""

    def info(self, info: SearchInfo) -> None:
        """A principal variation (complete, or a failed aspiration bound)."""

    def currmove(self, currmove: CurrMove) -> None:
        """The root move now being searched."""

    def message(self, text: str) -> None:
        """Something worth an ``info string``."""

    def debug(self, text: str) -> None:
        """A detail for debug mode (the time budget)."""


@dataclass(frozen=True)
class ThinkResult:
    move: chess.Move | None
    ponder: chess.Move | None = None
    score: int | None = None
    depth: int = 0
    nodes: int = 0
    source: str = "search"  # "search", "book", "tablebase" or "none" (no legal move)


_WDL_NAMES = {
    2: "win",
    1: "win spoiled by the fifty-move rule",
    0: "draw",
    -1: "loss saved by the fifty-move rule",
    -2: "loss",
}


class EngineState(Protocol):
    """What a turn reads of the engine's long-lived state
    (:class:`blitzaco.engine.Engine` is one)."""

    config: Config
    options: Options
    tt: TranspositionTable
    static: StaticEval
    probe: Probe
    trails: Trails
    pool: HelperPool | None
    #: The strength levels' draws.
    level_rng: random.Random

    def level(self) -> int:
        """The strength level in force (20: full strength)."""

    def search_memory(self) -> SearchMemory | None:
        """The memory the game's searches learn into (None: each search its own)."""

    def static_for(self, level: int) -> StaticEval:
        """The evaluation a search at strength *level* uses."""

    def helper_settings(self) -> HelperSettings:
        """What the helper processes need besides the position."""


class Turn:
    """One move's thinking (see the module's documentation). Used once, in the
    engine's search thread."""

    def __init__(
        self, engine: EngineState, board: chess.Board, limits: Limits, control: SearchControl, report: Reporter
    ) -> None:
        self.engine = engine
        self.board = board
        self.limits = limits
        self.control = control
        self.report = report
        self.legal = list(board.legal_moves)
        root_moves = self.legal
        if limits.searchmoves:
            root_moves = [move for move in self.legal if move in limits.searchmoves] or self.legal
        self.root_moves = root_moves
        self.shown = engine.options.multipv  # the lines the GUI asked for
        self.analysing = limits.infinite or bool(limits.searchmoves) or self.shown > 1
        self.pieces = material(board) if engine.options.show_wdl else 0
        self.tb_root: TablebaseRoot | None = None
        self.tb_score: int | None = None
        # Set by search(), read by choose().
        self._search: Search | None = None
        self._last_lines: tuple[PvLine, ...] = ()
        self._level = 20
        self._pool: HelperPool | None = None  # the helpers searching beside this turn's search
        self._variety = False

    # ------------------------------------------------------------ before searching

    def no_move(self) -> ThinkResult:
        """Mate or stalemate on the board: its score, reported, and no move."""
        score = -MATE if self.board.is_check() else 0
        chances = ((0, 0, 1000) if score else (0, 1000, 0)) if self.engine.options.show_wdl else None
        self.report.info(SearchInfo(PvLine(1, 0, 0, score, Bound.EXACT, ()), 0, 0, 0, 0, chances))
        return ThinkResult(None, score=score, source="none")

    def book_move(self) -> ThinkResult | None:
        """The book's move, when OwnBook is on, the book has one and this is a game
        move (not analysis)."""
        engine = self.engine
        if not engine.options.own_book or self.analysing:
            return None
        book, problem = engine.probe.book_move(self.board)
        if problem is not None:
            self.report.message(problem)
        if book is None:
            return None
        self.report.message(f"book move {self.board.uci(book.move)} (weight {book.weight} of {book.total_weight})")
        line = self._score_book_move(book.move)
        return ThinkResult(book.move, score=line.score, depth=line.depth, source="book")

    def _score_book_move(self, move: chess.Move) -> PvLine:
        """Report a book move as a search would, so that a match runner or a GUI has a
        score to log and adjudicate with: a one-ply search of that move alone (its
        quiescence search included; a few nodes), within the clock. Returns the line
        reported."""
        engine = self.engine
        engine.tt.new_search()
        engine.static.use_trails(engine.config.pheromone.enabled)
        plan = SearchPlan(engine.static, engine.tt, engine.config.search, self.control, [move])
        search = Search(self.board, plan)
        for _ in search.iterate(1):
            pass
        pv, score, depth = search.best_line()
        line = PvLine(1, depth, max(search.seldepth, depth), score, Bound.EXACT, pv)
        elapsed = int(self.control.elapsed_ms())
        self.report.info(SearchInfo(line, search.nodes, elapsed, engine.tt.hashfull(), 0, self._chances(line)))
        return line

    def consult_tablebases(self) -> None:
        """Keep only the root moves that hold the tablebase result, when the position
        is in the tables (not with ``searchmoves``: the GUI chose those)."""
        if self.limits.searchmoves:
            return
        tb_root, problem = self.engine.probe.tablebase_root(self.board, self.control.fits)
        if problem is not None:
            self.report.message(problem)
        if tb_root is None:
            return
        self.tb_root = tb_root
        self.root_moves = list(tb_root.moves)
        self.tb_score = tablebase_score(tb_root.wdl, tb_root.dtz)
        self.report.message(
            f"tablebase: {_WDL_NAMES[tb_root.wdl]}, {len(self.root_moves)} of {len(self.legal)} moves keep it"
            + (f", {tb_root.dtz} plies to zeroing" if tb_root.dtz else "")
            + ("" if tb_root.by_dtz else " (by WDL: no time for DTZ)")
            + (f" ({tb_root.unprobed} moves not probed in time)" if tb_root.unprobed else "")
        )

    # -------------------------------------------------------------------- search

    def search(self) -> None:
        """The iterative deepening of the root moves, the helpers (Threads > 1)
        searching beside it, until the limits, the clock or a proven mate end it."""
        engine, board, limits, control, report = self.engine, self.board, self.limits, self.control, self.report
        config = engine.config
        engine.tt.new_search()
        level = engine.level() if not self.analysing and limits.mate is None else 20
        self._level = level
        static = engine.static_for(level)
        trails = engine.trails if config.pheromone.enabled else None
        static.use_trails(trails is not None)
        if trails is not None:
            trails.evaporate()
        self._variety = (
            trails is not None and config.pheromone.variety and not self.analysing and limits.mate is None
        )
        multipv = max(self.shown, config.pheromone.variety_candidates) if self._variety else self.shown
        node_limit = limits.nodes
        max_depth = limits.depth if limits.depth is not None else MAX_DEPTH
        if level < 20:
            levels = config.levels
            lines = levels.pick_lines if level < levels.single_line_from else 1
            multipv = max(multipv, lines)
            node_limit = min(node_limit or levels.level_nodes[level], levels.level_nodes[level])
            max_depth = min(max_depth, levels.level_depth[level])
            what = f"{lines} lines" if lines > 1 else "its best line, no pick"
            report.message(f"strength level {level} of 20 (UCI_Elo {levels.elo_of_level[level]}): "
                           f"{what} to depth {levels.level_depth[level]}")
        budget_known = control.budget is not None
        # A game move on the clock: what the time manager's refinements ([time] adaptive,
        # trim) are for; never analysis, mate searches or fixed limits.
        on_clock = budget_known and not self.analysing and limits.mate is None
        # With helpers, the node limit counts every process's nodes: the pool's poll
        # checks it, and the info lines report the sum.
        # A level is one search within its node limit: the helpers search at full strength only.
        pool = self._pool = engine.pool if level == 20 else None
        poll: Poll = control
        pooled = None
        if pool is not None:
            pooled = pool.poll(control, node_limit)
            poll, node_limit = pooled, None
        search = Search(board, SearchPlan(
            static,
            engine.tt,
            config.search,
            poll,
            self.root_moves,
            multipv=multipv,
            node_limit=node_limit,
            on_bound=self._publish,
            on_currmove=self._currmove,
            tablebase=engine.probe if engine.probe.tablebase is not None else None,
            on_message=report.message,
            trails=trails,
            trim=self._trim() if on_clock else None,
            memory=engine.search_memory(),
        ))
        self._search = search
        stability = Stability(config.time) if config.time.adaptive and on_clock else None
        if config.time.single_move and on_clock and len(self.root_moves) == 1:
            # One legal move: a shallow search for a score and a ponder move, no more.
            max_depth = min(max_depth, config.time.single_move_depth)
        if pool is not None and pooled is not None:
            pooled.search = search
            report.debug(f"helpers: {pool.ready()} of {pool.helpers} ready")
            try:
                # Only the moves a repetition can reach back to: the whole game's move
                # stack would be pickled for every search (0.4 ms at 130 plies).
                recent = board.copy(stack=repetition_window(board))
                for message in pool.start_search(recent, self.root_moves, max_depth, engine.tt.generation,
                                                 engine.helper_settings()):
                    report.message(message)
            except Exception as err:  # the main search goes on without helpers
                print_traceback()
                report.message(f"error: helpers not started: {err!r}")
        try:
            for iteration in search.iterate(max_depth):
                self._last_lines = iteration.lines
                for line in iteration.lines:
                    self._publish(line)
                if trails is not None:
                    trails.deposit_line(board, iteration.lines[0].pv)
                best = iteration.lines[0].score
                if limits.mate is not None and best >= MATE - 2 * limits.mate + 1:
                    break
                if stability is not None and iteration.lines[0].pv:
                    done = IterationReport(iteration.depth, iteration.lines[0].pv[0], best, iteration.best_share)
                    control.scale_soft(stability.update(done))
                if control.soft_expired():
                    break
                if budget_known and abs(best) >= MATE_BOUND and iteration.depth >= 2 * (MATE - abs(best)) + 2:
                    break  # a forced mate is proven; more depth will not change the move
        finally:
            if pool is not None:
                # Only the main search watches the clock and chooses: its end ends theirs.
                try:
                    for message in pool.stop_search():
                        report.message(message)
                except Exception as err:
                    print_traceback()
                    report.message(f"error: helpers: {err!r}")

    def _trim(self) -> Trim | None:
        """The iteration trim of ``[time]`` for a search on the clock, or None."""
        cfg = self.engine.config.time
        return Trim(self.control.soft_expired, cfg.trim_depth, cfg.trim_fall) if cfg.trim else None

    def _nodes(self) -> int:
        """The nodes searched so far, the helpers' included."""
        assert self._search is not None
        pool = self._pool
        return self._search.nodes + pool.helper_nodes() if pool is not None else self._search.nodes

    def _currmove(self, depth: int, move: chess.Move, number: int) -> None:
        if self.control.elapsed_ms() >= CURRMOVE_AFTER_MS:
            self.report.currmove(CurrMove(depth, move, number))

    def _publish(self, line: PvLine) -> None:
        """Report *line* (not a roulette candidate beyond the lines the GUI asked for)."""
        if line.multipv > self.shown:
            return
        assert self._search is not None
        elapsed = int(self.control.elapsed_ms())
        if self.tb_score is not None and abs(line.score) < MATE_BOUND:
            line = replace(line, score=self.tb_score)  # the tablebase knows better than the search
        tbhits = self._search.tbhits + (self.tb_root.probes if self.tb_root is not None else 0)
        info = SearchInfo(line, self._nodes(), elapsed, self.engine.tt.hashfull(), tbhits, self._chances(line))
        self.report.info(info)

    def _chances(self, line: PvLine) -> tuple[int, int, int] | None:
        """The win/draw/loss chances of *line*'s score, when UCI_ShowWDL asks for them."""
        if not self.engine.options.show_wdl:
            return None
        return wdl(line.score, self.pieces, self.engine.config.wdl, mate_in(line.score))

    # -------------------------------------------------------------------- choose

    def choose(self) -> ThinkResult:
        """The move to play: the search's best, unless the root filter, a weaker
        strength level or the pheromone roulette picks another; and the move
        expected in reply."""
        search, board, report = self._search, self.board, self.report
        assert search is not None
        engine = self.engine
        limits = self.limits
        pv, score, depth = search.best_line()
        if engine.config.search.root_filter and not search.stopped and not self.analysing and limits.mate is None:
            choice = search.root_filter()
            if choice is not None and choice.move != pv[0]:
                report.message(
                    f"root filter: {board.uci(choice.move)} (minimax {choice.minimax}, maximin {choice.maximin}, "
                    f"mean {choice.mean:.0f}) instead of {board.uci(pv[0])}"
                )
                pv, score = (choice.move,), choice.minimax
        last_lines = self._last_lines
        if self._level < self.engine.config.levels.single_line_from and len(last_lines) > 1:
            pv, score = self.weaker_pick(last_lines, pv, score, self._level)
        elif self._variety and not search.stopped and len(last_lines) > 1:
            pv, score = self._roulette(last_lines, pv, score)
        if search.stopped:
            # Report where the interrupted search ended: nodes and time as of now.
            line = PvLine(1, depth, max(search.seldepth, depth), score, Bound.EXACT, pv)
            if last_lines and last_lines[0].pv[:1] == pv[:1]:
                line = last_lines[0]
            self._publish(line)
        ponder = pv[1] if len(pv) > 1 else self._ponder_from_tt(pv[0])
        return ThinkResult(pv[0], ponder, score, depth, self._nodes(), "tablebase" if self.tb_root else "search")

    def weaker_pick(
        self, lines: tuple[PvLine, ...], pv: tuple[chess.Move, ...], score: int, level: int
    ) -> tuple[tuple[chess.Move, ...], int]:
        """Stockfish's Skill pick among the searched lines: each score plus a random
        push that grows with the weakness and the spread of the scores; the largest
        wins. From ``safe_level`` up, a mate in one is always played and nothing
        ``blunder_cp`` worse than the best is chosen. The draws are the engine's
        (seeded: the same game replays the same way)."""
        levels = self.engine.config.levels
        candidates = [line for line in lines if line.pv and line.bound == Bound.EXACT] or list(lines[:1])
        top = candidates[0].score
        if level >= levels.safe_level:
            if top >= MATE - 2:  # a mate in one
                return pv, score
            candidates = [line for line in candidates if line.score >= top - levels.blunder_cp]
        weakness = 120 - 2 * level
        delta = min(top - candidates[-1].score, 100)
        rng = self.engine.level_rng
        best_value, chosen = -(1 << 60), candidates[0]
        for line in candidates:
            push = (weakness * (top - line.score) + delta * rng.randrange(weakness)) // 128
            if line.score + push >= best_value:
                best_value, chosen = line.score + push, line
        if chosen.pv[0] != pv[0]:
            move = self.board.uci(chosen.pv[0])
            self.report.message(f"level {level}: {move} ({chosen.score} cp) instead of the best")
        return chosen.pv, chosen.score

    def _roulette(
        self, lines: tuple[PvLine, ...], pv: tuple[chess.Move, ...], score: int
    ) -> tuple[tuple[chess.Move, ...], int]:
        """The root move drawn by roulette wheel over the trails, among the lines within
        variety_margin of the best."""
        best = lines[0].score
        if abs(best) >= MATE_BOUND:
            return pv, score
        margin = self.engine.config.pheromone.variety_margin
        near = [line for line in lines if line.bound == Bound.EXACT and line.pv and line.score >= best - margin]
        if len(near) < 2:
            return pv, score
        code = self.engine.trails.roulette(compute_key(self.board), [encode_move(line.pv[0]) for line in near])
        chosen = next(line for line in near if encode_move(line.pv[0]) == code)
        if chosen.pv[0] != pv[0]:
            self.report.message(
                f"roulette: {self.board.uci(chosen.pv[0])} ({chosen.score} cp) among {len(near)} moves "
                f"within {margin} cp"
            )
        return chosen.pv, chosen.score

    def _ponder_from_tt(self, move: chess.Move) -> chess.Move | None:
        """The expected reply when the PV was cut short: the table's move after *move*."""
        after = self.board.copy(stack=False)
        after.push(move)
        entry = self.engine.tt.probe(compute_key(after))
        reply = decode_move(entry[MOVE]) if entry is not None else None
        if reply is not None and after.is_legal(reply):
            return reply
        return None
