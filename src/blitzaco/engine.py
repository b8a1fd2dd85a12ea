"""The engine facade: ``think(board, limits, control, report) -> ThinkResult``.

It owns the long-lived state (configuration, evaluator, transposition table, book
and tablebase handles). Before searching it asks the probe layer (a book move, the
tablebase-optimal root moves); then it runs the iterative deepening, decides when to
stop between iterations, and reports what it found through callbacks. It never
prints; :mod:`blitzaco.uci` turns the reports into protocol lines.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import chess

from blitzaco.config import Config
from blitzaco.evaluate import Evaluator
from blitzaco.position import Position, compute_key
from blitzaco.probe import Probe
from blitzaco.search import MATE, MATE_BOUND, MAX_DEPTH, TB_WIN, Bound, PvLine, Search
from blitzaco.timeman import Limits, SearchControl
from blitzaco.tt import MOVE, TranspositionTable, decode_move

__all__ = ["Engine", "ThinkResult", "SearchInfo", "CurrMove", "Reporter", "DEFAULT_HASH_MB"]

DEFAULT_HASH_MB = 64
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


@dataclass(frozen=True)
class ThinkResult:
    move: chess.Move | None
    ponder: chess.Move | None = None
    score: int | None = None
    depth: int = 0
    nodes: int = 0
    source: str = "search"  # "search", "book", "tablebase" or "none" (no legal move)


class Engine:
    """Long-lived engine state and the entry point for a search. One search at a time."""

    def __init__(self, config: Config | None = None, hash_mb: int = DEFAULT_HASH_MB) -> None:
        self.config = config if config is not None else Config()
        self.evaluator = Evaluator(self.config.eval)
        self.tt = TranspositionTable(hash_mb)
        self.probe = Probe(self.config.book)
        self.multipv = 1
        self.move_overhead = 30
        # The bundled book is opened at once; OwnBook is on when it was found.
        self.book_message = self.probe.open_book("")
        self.own_book = self.probe.book is not None

    # ------------------------------------------------------------- housekeeping

    def set_config(self, config: Config) -> None:
        """Use new weights; the table's scores were made with the old ones."""
        self.config = config
        self.evaluator = Evaluator(config.eval)
        reseed = config.book.seed != self.probe.book_config.seed
        self.probe.book_config = config.book
        if reseed:
            self.probe.reseed()
        self.tt.clear()

    def new_game(self) -> None:
        """Forget what belongs to the last game: the table, the book's random state."""
        self.tt.clear()
        self.probe.new_game()

    def resize_hash(self, megabytes: int) -> None:
        self.tt.resize(megabytes)

    def clear_hash(self) -> None:
        self.tt.clear()

    # -------------------------------------------------------------------- think

    def think(
        self, board: chess.Board, limits: Limits, control: SearchControl, report: Reporter | None = None
    ) -> ThinkResult:
        """Choose a move for *board* within *limits*. Always returns a legal move
        when there is one, however early the search is stopped."""
        report = report if report is not None else Reporter()
        legal = list(board.legal_moves)
        if not legal:
            score = -MATE if board.is_check() else 0
            report.info(SearchInfo(PvLine(1, 0, 0, score, Bound.EXACT, ()), 0, 0, 0, 0))
            return ThinkResult(None, score=score, source="none")

        root_moves = legal
        if limits.searchmoves:
            root_moves = [move for move in legal if move in limits.searchmoves] or legal

        analysing = limits.infinite or bool(limits.searchmoves) or self.multipv > 1
        if self.own_book and not analysing:
            book, problem = self.probe.book_move(board)
            if problem is not None:
                report.message(problem)
            if book is not None:
                report.message(f"book move {board.uci(book.move)} (weight {book.weight} of {book.total_weight})")
                return ThinkResult(book.move, source="book")

        tb_root, problem = (None, None) if limits.searchmoves else self.probe.tablebase_root(board)
        if problem is not None:
            report.message(problem)
        tb_score = None
        if tb_root is not None:
            root_moves = list(tb_root.moves)
            tb_score = {2: TB_WIN - tb_root.dtz, -2: -TB_WIN + tb_root.dtz}.get(tb_root.wdl, tb_root.wdl)
            report.message(
                f"tablebase: {_WDL_NAMES[tb_root.wdl]}, {len(root_moves)} of {len(legal)} moves keep it"
                + (f", {tb_root.dtz} plies to zeroing" if tb_root.dtz else "")
            )

        self.tt.new_search()
        pos = Position(board, self.evaluator.psq)
        budget_known = control.budget is not None

        def currmove(depth: int, move: chess.Move, number: int) -> None:
            if control.elapsed_ms() >= CURRMOVE_AFTER_MS:
                report.currmove(CurrMove(depth, move, number))

        def publish(line: PvLine) -> None:
            elapsed = int(control.elapsed_ms())
            if tb_score is not None and abs(line.score) < MATE_BOUND:
                line = replace(line, score=tb_score)  # the tablebase knows better than the search
            tbhits = search.tbhits + (tb_root.probes if tb_root is not None else 0)
            report.info(SearchInfo(line, search.nodes, elapsed, self.tt.hashfull(), tbhits))

        search = Search(
            pos,
            self.evaluator,
            self.tt,
            self.config.search,
            control,
            root_moves,
            multipv=self.multipv,
            node_limit=limits.nodes,
            on_bound=publish,
            on_currmove=currmove,
            tablebase=self.probe if self.probe.tablebase is not None else None,
            on_message=report.message,
        )
        max_depth = limits.depth if limits.depth is not None else MAX_DEPTH
        last_lines: tuple[PvLine, ...] = ()
        for iteration in search.iterate(max_depth):
            last_lines = iteration.lines
            for line in iteration.lines:
                publish(line)
            best = iteration.lines[0].score
            if limits.mate is not None and best >= MATE - 2 * limits.mate + 1:
                break
            if control.soft_expired():
                break
            if budget_known and abs(best) >= MATE_BOUND and iteration.depth >= 2 * (MATE - abs(best)) + 2:
                break  # a forced mate is proven; more depth will not change the move

        pv, score, depth = search.best_line()
        if (
            self.config.search.root_filter
            and not search.stopped
            and not analysing
            and limits.mate is None
        ):
            choice = search.root_filter()
            if choice is not None and choice.move != pv[0]:
                report.message(
                    f"root filter: {board.uci(choice.move)} (minimax {choice.minimax}, maximin {choice.maximin}, "
                    f"mean {choice.mean:.0f}) instead of {board.uci(pv[0])}"
                )
                pv, score = (choice.move,), choice.minimax
        if search.stopped:
            # Report where the interrupted search ended: nodes and time as of now.
            line = PvLine(1, depth, max(search.seldepth, depth), score, Bound.EXACT, pv)
            if last_lines and last_lines[0].pv[:1] == pv[:1]:
                line = last_lines[0]
            publish(line)
        ponder = pv[1] if len(pv) > 1 else self._ponder_from_tt(board, pv[0])
        return ThinkResult(pv[0], ponder, score, depth, search.nodes, "tablebase" if tb_root else "search")

    def _ponder_from_tt(self, board: chess.Board, move: chess.Move) -> chess.Move | None:
        """The expected reply when the PV was cut short: the table's move after *move*."""
        after = board.copy(stack=False)
        after.push(move)
        entry = self.tt.probe(compute_key(after))
        reply = decode_move(entry[MOVE]) if entry is not None else None
        if reply is not None and after.is_legal(reply):
            return reply
        return None


_WDL_NAMES = {
    2: "win",
    1: "win spoiled by the fifty-move rule",
    0: "draw",
    -1: "loss saved by the fifty-move rule",
    -2: "loss",
}
