"""Iterative-deepening negamax with alpha-beta, quiescence and a transposition table.

The search is a generator: :meth:`Search.iterate` yields one :class:`Iteration` per
completed depth and the caller (the engine) decides whether to start another. It
never prints; it reports failed aspiration windows and the root move being searched
through callbacks. It polls :class:`~blitzaco.timeman.SearchControl` every
:data:`POLL_INTERVAL` nodes and unwinds with :class:`SearchStopped` when the hard
limit, a node limit or ``stop`` ends it.

Scores are centipawns for the side to move; a mate in *n* plies scores
``MATE - n`` (mated: ``-MATE + n``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter

import chess

from blitzaco.config import SearchConfig
from blitzaco.evaluate import Evaluator
from blitzaco.position import Position
from blitzaco.timeman import SearchControl
from blitzaco.tt import EXACT, LOWER, UPPER, TranspositionTable, encode_move, score_from_tt, score_to_tt

__all__ = [
    "MATE",
    "MATE_BOUND",
    "MAX_PLY",
    "MAX_DEPTH",
    "INFINITE",
    "Bound",
    "PvLine",
    "Iteration",
    "Search",
    "SearchStopped",
    "mate_in",
]

MATE = 32000
MAX_PLY = 128
MAX_DEPTH = 64
#: Scores at least this large (in absolute value) are mate scores.
MATE_BOUND = MATE - MAX_PLY
INFINITE = MATE + 1
#: Nodes between two looks at the clock and the stop flag (a node costs tens of µs).
POLL_INTERVAL = 64

_BB_SQUARES = chess.BB_SQUARES
_BB_BACKRANKS = chess.BB_RANK_1 | chess.BB_RANK_8
_first = itemgetter(0)


class Bound:
    """How a reported score relates to the true value."""

    EXACT = "exact"
    LOWER = "lowerbound"
    UPPER = "upperbound"


@dataclass(frozen=True)
class PvLine:
    """One principal variation as reported in an ``info`` line."""

    multipv: int
    depth: int
    seldepth: int
    score: int
    bound: str
    pv: tuple[chess.Move, ...]


@dataclass(frozen=True)
class Iteration:
    depth: int
    lines: tuple[PvLine, ...]


class SearchStopped(Exception):
    """Raised inside the search when it must end now."""


def mate_in(score: int) -> int | None:
    """Moves to mate (negative: being mated) for a mate score, else None."""
    if score >= MATE_BOUND:
        return (MATE - score + 1) // 2
    if score <= -MATE_BOUND:
        return -((MATE + score) // 2)
    return None


class _RootMove:
    __slots__ = ("move", "score", "previous_score", "pv", "seldepth")

    def __init__(self, move: chess.Move) -> None:
        self.move = move
        self.score = -INFINITE
        self.previous_score = -INFINITE
        self.pv: tuple[chess.Move, ...] = (move,)
        self.seldepth = 0


class Search:
    """One search of one position. Not reusable and not thread-safe."""

    def __init__(
        self,
        pos: Position,
        evaluator: Evaluator,
        tt: TranspositionTable,
        config: SearchConfig,
        control: SearchControl,
        root_moves: Sequence[chess.Move],
        *,
        multipv: int = 1,
        node_limit: int | None = None,
        on_bound: Callable[[PvLine], None] | None = None,
        on_currmove: Callable[[int, chess.Move, int], None] | None = None,
    ) -> None:
        if not root_moves:
            raise ValueError("no root moves to search")
        self.pos = pos
        self.evaluate = evaluator.evaluate
        self.tt = tt
        self.config = config
        self.control = control
        self.root_moves = [_RootMove(move) for move in self._order(pos.board, list(root_moves), 0)]
        self.multipv = max(1, min(multipv, len(self.root_moves)))
        self.node_limit = node_limit
        self.on_bound = on_bound
        self.on_currmove = on_currmove
        self.nodes = 0
        self.seldepth = 0
        self.completed_depth = 0
        self.stopped = False
        self._next_poll = min(POLL_INTERVAL, node_limit) if node_limit is not None else POLL_INTERVAL
        self._pv: list[tuple[chess.Move, ...]] = [()] * (MAX_PLY + 2)
        self._partial: _RootMove | None = None
        self._depth = 0

    # ------------------------------------------------------------------ results

    def best_line(self) -> tuple[tuple[chess.Move, ...], int, int]:
        """(pv, score, depth) of the move to play: the last completed iteration's
        best, or a move of the interrupted iteration that proved better than it."""
        if self._partial is not None:
            return self._partial.pv, self._partial.score, self._depth
        best = self.root_moves[0]
        if self.completed_depth == 0:
            return (best.move,), 0, 0
        return best.pv, best.score, self.completed_depth

    # -------------------------------------------------------------- driver loop

    def iterate(self, max_depth: int = MAX_DEPTH) -> Iterator[Iteration]:
        """Search depth 1, 2, ... *max_depth*, yielding after each completed depth.
        Ends early (without raising) when the search is stopped."""
        for depth in range(1, max(1, min(max_depth, MAX_DEPTH)) + 1):
            self._depth = depth
            for root_move in self.root_moves:
                root_move.previous_score = root_move.score
            try:
                for pv_index in range(self.multipv):
                    self._aspiration(depth, pv_index)
            except SearchStopped:
                self.stopped = True
                self._unwind()
                return
            self.completed_depth = depth
            self._partial = None
            yield Iteration(depth, tuple(self._line(i, depth) for i in range(self.multipv)))

    def _line(self, index: int, depth: int, bound: str = Bound.EXACT) -> PvLine:
        rm = self.root_moves[index]
        return PvLine(index + 1, depth, max(rm.seldepth, depth), rm.score, bound, rm.pv)

    def _unwind(self) -> None:
        pos = self.pos
        while len(pos.keys) - 1 > pos.root_index:
            pos.pop()

    def _aspiration(self, depth: int, pv_index: int) -> None:
        previous = self.root_moves[pv_index].previous_score
        delta = self.config.aspiration_window
        if depth >= self.config.aspiration_depth and -MATE_BOUND < previous < MATE_BOUND:
            alpha, beta = max(previous - delta, -INFINITE), min(previous + delta, INFINITE)
        else:
            alpha, beta = -INFINITE, INFINITE
        while True:
            score = self._root(depth, pv_index, alpha, beta)
            self._sort_root(pv_index)
            if score <= alpha and alpha > -INFINITE:
                self._report_bound(pv_index, depth, Bound.UPPER)
                beta = (alpha + beta) // 2
                alpha = max(score - delta, -INFINITE)
            elif score >= beta and beta < INFINITE:
                self._report_bound(pv_index, depth, Bound.LOWER)
                beta = min(score + delta, INFINITE)
            else:
                return
            delta *= 2
            if delta > 1000:
                alpha, beta = -INFINITE, INFINITE

    def _report_bound(self, pv_index: int, depth: int, bound: str) -> None:
        if self.on_bound is not None:
            self.on_bound(self._line(pv_index, depth, bound))

    def _sort_root(self, pv_index: int) -> None:
        tail = self.root_moves[pv_index:]
        tail.sort(key=lambda rm: rm.score, reverse=True)
        self.root_moves[pv_index:] = tail

    def _root(self, depth: int, pv_index: int, alpha: int, beta: int) -> int:
        """Search the root moves from *pv_index* on; earlier ones are MultiPV lines
        already placed at this depth. Returns the best score (a bound on failure)."""
        pos = self.pos
        best = -INFINITE
        first = True
        for number, rm in enumerate(self.root_moves[pv_index:], start=pv_index + 1):
            if self.on_currmove is not None:
                self.on_currmove(depth, rm.move, number)
            self.seldepth = 0
            pos.push(rm.move)
            score = -self._negamax(depth - 1, 1, -beta, -alpha)
            pos.pop()
            if first or score > alpha:
                rm.score = score
                rm.pv = (rm.move,) + self._pv[1]
                rm.seldepth = self.seldepth
            else:
                rm.score = -INFINITE
            first = False
            if score > best:
                best = score
            if score > alpha:
                alpha = score
                if pv_index == 0:
                    self._partial = rm
                if score >= beta:
                    break
        return best

    # -------------------------------------------------------------------- nodes

    def _poll(self) -> None:
        limit = self.node_limit
        if limit is not None:
            if self.nodes >= limit:
                raise SearchStopped
            self._next_poll = min(self.nodes + POLL_INTERVAL, limit)
        else:
            self._next_poll = self.nodes + POLL_INTERVAL
        if self.control.hard_expired():
            raise SearchStopped

    # _negamax and _quiesce share their first lines (count the node, poll, seldepth)
    # on purpose: a helper call per node costs more than the repetition.

    def _negamax(self, depth: int, ply: int, alpha: int, beta: int) -> int:
        if depth <= 0:
            return self._quiesce(ply, alpha, beta)
        self.nodes += 1
        if self.nodes >= self._next_poll:
            self._poll()
        pos = self.pos
        board = pos.board
        self._pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        in_check = board.is_check()
        if board.halfmove_clock >= 100 and (not in_check or any(board.generate_legal_moves())):
            return 0
        if pos.is_repetition():
            return 0
        if not (board.pawns | board.rooks | board.queens) and board.is_insufficient_material():
            return 0
        if ply >= MAX_PLY:
            return self.evaluate(pos)

        key = pos.key
        entry = self.tt.probe(key)
        tt_move = 0
        if entry is not None:
            tt_move = entry[1]
            if entry[3] >= depth:
                score = score_from_tt(entry[2], ply, MATE_BOUND)
                bound = entry[4]
                if bound == EXACT or (bound == LOWER and score >= beta) or (bound == UPPER and score <= alpha):
                    return score

        moves = self._order(board, list(board.generate_legal_moves()), tt_move)
        if not moves:
            return -MATE + ply if in_check else 0

        original_alpha = alpha
        best = -INFINITE
        best_move = None
        pv = self._pv
        for move in moves:
            pos.push(move)
            score = -self._negamax(depth - 1, ply + 1, -beta, -alpha)
            pos.pop()
            if score > best:
                best = score
                best_move = move
                if score > alpha:
                    alpha = score
                    pv[ply] = (move,) + pv[ply + 1]
                    if score >= beta:
                        break
        bound = LOWER if best >= beta else EXACT if best > original_alpha else UPPER
        self.tt.store(key, encode_move(best_move), score_to_tt(best, ply, MATE_BOUND), depth, bound)
        return best

    def _quiesce(self, ply: int, alpha: int, beta: int) -> int:
        """Captures and queen promotions until the position is quiet; all evasions
        when in check, so that mates at the horizon are seen."""
        self.nodes += 1
        if self.nodes >= self._next_poll:
            self._poll()
        pos = self.pos
        board = pos.board
        self._pv[ply] = ()
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY:
            return self.evaluate(pos)
        if board.is_check():
            moves = self._order(board, list(board.generate_legal_moves()), 0)
            if not moves:
                return -MATE + ply
            best = -INFINITE
        else:
            best = self.evaluate(pos)
            if best >= beta:
                return best
            if best > alpha:
                alpha = best
            moves = self._order(board, self._tactical_moves(board), 0)
        for move in moves:
            pos.push(move)
            score = -self._quiesce(ply + 1, -beta, -alpha)
            pos.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best

    @staticmethod
    def _tactical_moves(board: chess.Board) -> list[chess.Move]:
        """Legal captures and promotions, queen promotions only."""
        moves = [m for m in board.generate_legal_captures() if m.promotion is None or m.promotion == chess.QUEEN]
        promoting = board.pawns & board.occupied_co[board.turn] & (chess.BB_RANK_7 if board.turn else chess.BB_RANK_2)
        if promoting:
            empty = ~board.occupied & _BB_BACKRANKS
            moves.extend(m for m in board.generate_legal_moves(promoting, empty) if m.promotion == chess.QUEEN)
        return moves

    @staticmethod
    def _order(board: chess.Board, moves: list[chess.Move], tt_move: int) -> list[chess.Move]:
        """The TT move (an encoded move, 0 for none) first, then captures and
        promotions by most valuable victim / least valuable attacker, then quiet
        moves in generation order."""
        first: list[chess.Move] = []
        tactical: list[tuple[int, chess.Move]] = []
        quiet: list[chess.Move] = []
        theirs = board.occupied_co[not board.turn]
        ep_square = board.ep_square
        piece_type_at = board.piece_type_at
        tt_from = tt_to = tt_promotion = None
        if tt_move:
            tt_from, tt_to, tt_promotion = tt_move & 63, (tt_move >> 6) & 63, (tt_move >> 12) or None
        for move in moves:
            to = move.to_square
            if to == tt_to and move.from_square == tt_from and move.promotion == tt_promotion:
                first.append(move)
                continue
            if theirs & _BB_SQUARES[to]:
                victim = piece_type_at(to)
                tactical.append((victim * 8 - piece_type_at(move.from_square) + (move.promotion or 0) * 8, move))  # type: ignore[operator]
            elif move.promotion:
                tactical.append((move.promotion * 8, move))
            elif to == ep_square and piece_type_at(move.from_square) == chess.PAWN:
                tactical.append((chess.PAWN * 8 - chess.PAWN, move))
            else:
                quiet.append(move)
        if tactical:
            tactical.sort(key=_first, reverse=True)
            first.extend(move for _, move in tactical)
        first.extend(quiet)
        return first
