"""The engine facade: ``think(board, limits, control, report) -> ThinkResult``.

It owns the long-lived state (configuration, evaluator, transposition table, book
and tablebase handles). Before searching it asks the probe layer (a book move, the
tablebase-optimal root moves); then it runs the iterative deepening, decides when to
stop between iterations, and reports what it found through callbacks. It never
prints; :mod:`blitzaco.uci` turns the reports into protocol lines.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import chess

from blitzaco.config import Config
from blitzaco.evaluate import Evaluator
from blitzaco.pheromone import Trails, bundled_memory
from blitzaco.position import Position, compute_key
from blitzaco.probe import Probe
from blitzaco.search import MATE, MATE_BOUND, MAX_DEPTH, TB_WIN, Bound, PvLine, Search
from blitzaco.timeman import Limits, SearchControl
from blitzaco.tt import MOVE, TranspositionTable, decode_move, encode_move

if TYPE_CHECKING:
    from blitzaco.spectral import SpectralTerm

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
        self.spectral, self.spectral_message = _spectral_term(self.config)
        self.tt = TranspositionTable(hash_mb)
        self.probe = Probe(self.config.book)
        self.multipv = 1
        self.move_overhead = 30
        # The bundled book is opened at once; OwnBook is on when it was found.
        self.book_message = self.probe.open_book("")
        self.own_book = self.probe.book is not None
        # The pheromone memory, with the bundled long-term trails when installed.
        self.trails = Trails(self.config.pheromone)
        self.pheromone_message = self.trails.load(bundled_memory())
        # Learning writes only to a file the user named, never to the bundled one.
        self.pheromone_learning = False
        self.pheromone_file: Path | None = None

    # ------------------------------------------------------------- housekeeping

    def set_config(self, config: Config) -> None:
        """Use new weights; the table's scores were made with the old ones."""
        self.config = config
        self.evaluator = Evaluator(config.eval)
        self.spectral, self.spectral_message = _spectral_term(config)
        self.trails.config = config.pheromone
        reseed = config.book.seed != self.probe.book_config.seed
        self.probe.book_config = config.book
        if reseed:
            self.probe.reseed()
        self.tt.clear()

    def new_game(self) -> str | None:
        """Forget what belongs to the last game: the table, the book's random state,
        the per-game pheromone trails (learnt first when learning is on). Returns a
        message for an ``info string`` when the memory could not be saved."""
        self.tt.clear()
        self.probe.new_game()
        return self.end_game()

    def end_game(self) -> str | None:
        """The game is over: with pheromone learning on (and a PheromoneFile named),
        add its trails to the long-term memory and save it there; then forget them."""
        if self.pheromone_learning and self.pheromone_file is not None:
            if self.trails.learn():
                return self.trails.save(self.pheromone_file)
            return None
        self.trails.new_game()
        return None

    def set_pheromone_file(self, path: str) -> str:
        """Use the long-term memory in *path* (empty: the bundled one). Returns a
        message: what was loaded, or why nothing was (a missing file is created
        when learning saves to it)."""
        self.pheromone_file = Path(path) if path else None
        problem = self.trails.load(self.pheromone_file if path else bundled_memory())
        if problem is not None:
            return problem
        if self.trails.path is None:
            return "pheromone: no long-term memory"
        return f"pheromone: {len(self.trails.long)} positions from {self.trails.path}"

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
        trails = self.trails if self.config.pheromone.enabled else None
        if trails is not None:
            trails.evaporate()
        variety = trails is not None and self.config.pheromone.variety and not analysing and limits.mate is None
        multipv = max(self.multipv, self.config.pheromone.variety_candidates) if variety else self.multipv
        budget_known = control.budget is not None

        def currmove(depth: int, move: chess.Move, number: int) -> None:
            if control.elapsed_ms() >= CURRMOVE_AFTER_MS:
                report.currmove(CurrMove(depth, move, number))

        def publish(line: PvLine) -> None:
            if line.multipv > self.multipv:
                return  # a roulette candidate the GUI did not ask for
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
            multipv=multipv,
            node_limit=limits.nodes,
            on_bound=publish,
            on_currmove=currmove,
            tablebase=self.probe if self.probe.tablebase is not None else None,
            on_message=report.message,
            spectral=self.spectral,
            spectral_min_depth=self.config.eval.spectral.min_depth,
            trails=trails,
        )
        max_depth = limits.depth if limits.depth is not None else MAX_DEPTH
        last_lines: tuple[PvLine, ...] = ()
        for iteration in search.iterate(max_depth):
            last_lines = iteration.lines
            for line in iteration.lines:
                publish(line)
            if trails is not None:
                trails.deposit_line(board, iteration.lines[0].pv)
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
        if variety and trails is not None and not search.stopped and len(last_lines) > 1:
            pv, score = self._roulette(board, last_lines, pv, score, report)
        if search.stopped:
            # Report where the interrupted search ended: nodes and time as of now.
            line = PvLine(1, depth, max(search.seldepth, depth), score, Bound.EXACT, pv)
            if last_lines and last_lines[0].pv[:1] == pv[:1]:
                line = last_lines[0]
            publish(line)
        ponder = pv[1] if len(pv) > 1 else self._ponder_from_tt(board, pv[0])
        return ThinkResult(pv[0], ponder, score, depth, search.nodes, "tablebase" if tb_root else "search")

    def explain(self, board: chess.Board) -> list[str]:
        """The static evaluation of *board* term by term, as the ``eval`` command
        prints it: the classical table, the spectral features, the pheromone bonus,
        and the final score the search would use (White's view, pawns)."""
        from blitzaco.evaluate import format_trace

        trace = self.evaluator.trace(board)
        lines = format_trace(trace)
        lines.append(f"Classical evaluation {trace.score / 100:+.2f} (white side)")
        final = trace.score
        lines.append("")
        spectral_config = self.config.eval.spectral
        try:
            from blitzaco.spectral import FEATURES, SpectralTerm, position_features
        except ImportError as err:
            lines.append(f"Spectral terms: not available ({err})")
        else:
            term = self.spectral if self.spectral is not None else SpectralTerm(spectral_config)
            white, black = position_features(board)
            lines.append("       Spectral |    White |    Black |   Weight | Advantage")
            for name in FEATURES:
                a, b, w = getattr(white, name), getattr(black, name), getattr(spectral_config, name)
                lines.append(f"{name:>15} | {a:8.3f} | {b:8.3f} | {w:8.2f} | {w * (a - b) / 100:+8.2f}")
            advantage = term.advantage((white, black))
            state = "in the score" if self.spectral is not None else "switched off: not in the score"
            lines.append(f"Spectral advantage {advantage / 100:+.2f} (white side, {state})")
            if self.spectral is not None:
                final += advantage
        lines.append("")
        pheromone = self.config.pheromone
        strongest = self.trails.strongest(compute_key(board))
        bonus = int(pheromone.eval_weight * strongest)
        bonus = bonus if board.turn else -bonus
        state = "in the score" if pheromone.enabled else "switched off: not in the score"
        lines.append(
            f"Pheromone: strongest trail {strongest:.3f} for {'white' if board.turn else 'black'} to move, "
            f"bonus {bonus / 100:+.2f} (white side, {state}); long-term memory: {len(self.trails.long)} positions"
        )
        if pheromone.enabled:
            final += bonus
        lines.append("")
        lines.append(f"Final evaluation {final / 100:+.2f} (white side)")
        return lines

    def _roulette(
        self, board: chess.Board, lines: tuple[PvLine, ...], pv: tuple[chess.Move, ...], score: int, report: Reporter
    ) -> tuple[tuple[chess.Move, ...], int]:
        """The root move drawn by roulette wheel over the trails, among the lines within
        variety_margin of the best."""
        best = lines[0].score
        if abs(best) >= MATE_BOUND:
            return pv, score
        margin = self.config.pheromone.variety_margin
        near = [line for line in lines if line.bound == Bound.EXACT and line.pv and line.score >= best - margin]
        if len(near) < 2:
            return pv, score
        code = self.trails.roulette(compute_key(board), [encode_move(line.pv[0]) for line in near])
        chosen = next(line for line in near if encode_move(line.pv[0]) == code)
        if chosen.pv[0] != pv[0]:
            report.message(
                f"roulette: {board.uci(chosen.pv[0])} ({chosen.score} cp) among {len(near)} moves within {margin} cp"
            )
        return chosen.pv, chosen.score

    def _ponder_from_tt(self, board: chess.Board, move: chess.Move) -> chess.Move | None:
        """The expected reply when the PV was cut short: the table's move after *move*."""
        after = board.copy(stack=False)
        after.push(move)
        entry = self.tt.probe(compute_key(after))
        reply = decode_move(entry[MOVE]) if entry is not None else None
        if reply is not None and after.is_legal(reply):
            return reply
        return None


def _spectral_term(config: Config) -> tuple[SpectralTerm | None, str | None]:
    """The spectral term when the configuration switches it on (numpy is imported
    only then), with a message when it cannot be had."""
    if not config.eval.spectral.enabled:
        return None, None
    try:
        from blitzaco.spectral import SpectralTerm
    except ImportError as err:
        return None, f"spectral term switched off: {err} (numpy is not in this build)"
    return SpectralTerm(config.eval.spectral), None


_WDL_NAMES = {
    2: "win",
    1: "win spoiled by the fifty-move rule",
    0: "draw",
    -1: "loss saved by the fifty-move rule",
    -2: "loss",
}
