"""The static evaluation: the one object the search asks for a position's score.

:class:`StaticEval` owns every term of the static score and composes them:

* the classical tapered evaluation (:class:`~blitzaco.evaluate.Evaluator`), unless
  a network replaces it;
* the network term (:mod:`blitzaco.nnue`) when ``[eval.nn]`` switches it on: added
  to the classical score when the net was trained as a residual, else instead of it.
  Its accumulator lives in the :class:`~blitzaco.position.Position`, which
  :meth:`StaticEval.position` makes with the network's rows;
* the spectral term (:mod:`blitzaco.spectral`) when ``[eval.spectral]`` switches it
  on, with its depth rule: the graph features are computed only at nodes with at
  least ``min_depth`` plies left and inherited from the parent below them (and in
  the quiescence search), because they cost far more than a node;
* the pheromone bonus (``[pheromone] eval_weight`` times the strongest trail from
  the position) when the pheromone memory is switched on.

The search calls :meth:`StaticEval.evaluate` for a score and, only when
:attr:`StaticEval.per_node` is true, :meth:`StaticEval.enter` at every node (the
spectral term's inherited value). ``eval`` prints :meth:`StaticEval.explain`. With
the extra terms off, ``evaluate`` *is* the classical evaluator's bound method, so the
entry point costs the search nothing; with only the network, it is one small function.

The search on the engine's own board (:mod:`blitzaco.native_search`) scores the
classical terms and the network with its own evaluator (:meth:`native_evaluator`)
and asks this object only for the two off-board terms, when one is on
(:meth:`extra_terms`): :meth:`enter_board` at every node and :meth:`extras` on top
of its score, the same values as on python-chess's board.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import chess

from blitzaco.board import unsigned_key
from blitzaco.bundled import bundled_file
from blitzaco.config import Config, EvalConfig
from blitzaco.evaluate import EVAL_CACHE_SIZE, FULL_PHASE, Evaluator, PsqTable, Trace, format_trace
from blitzaco.nnue import Network, NetworkError, classical_share, load_network
from blitzaco.pheromone import Trails
from blitzaco.position import Position, compute_key

if TYPE_CHECKING:  # numpy is imported only when the spectral term is on
    from blitzaco.board import Board
    from blitzaco.classical import Classical
    from blitzaco.spectral import SpectralTerm

__all__ = ["StaticEval", "MAX_PLIES", "classical_trace"]

#: Plies of per-node state kept (the search never goes deeper than its MAX_PLY).
MAX_PLIES = 130


class StaticEval:
    """Every term of the static score behind one method. One search at a time uses
    it (the per-ply spectral state belongs to the running search)."""

    def __init__(self, config: Config, trails: Trails) -> None:
        self.config = config
        self.classical = Evaluator(config.eval)
        self.psq: PsqTable = self.classical.psq
        self.trails = trails
        self.spectral, self.spectral_message = _spectral_term(config)
        self.net, self.network_message = _network(config)
        self._min_depth = max(1, config.eval.spectral.min_depth)
        self._spectral_by_ply = [0] * MAX_PLIES
        self._native: Classical | None = None
        self._spectral_here = 0  # the value at the node entered last
        self._trail_weight = 0.0
        #: Whether the search must call :meth:`enter` at every node.
        self.per_node = self.spectral is not None
        #: ``evaluate(pos) -> centipawns`` for the side to move, at the node the
        #: search entered last.
        self.evaluate: Callable[[Position], int] = self.classical.evaluate
        #: The classical and network terms (what :meth:`evaluate` adds the others to).
        self._base: Callable[[Position], int] = self.classical.evaluate
        if self.net is not None:
            nn = config.eval.nn
            self._base = _network_score(self.net, nn.weight, self.classical, nn.classical)
            if nn.fifty_move:
                self._base = _fifty_move_scaled(self._base, nn.fifty_move)
        self.use_trails(False)

    def use_trails(self, on: bool) -> None:
        """Add the pheromone bonus (when its weight is not zero) or not: the engine
        switches it with the memory, per search."""
        self._trail_weight = self.config.pheromone.eval_weight if on else 0.0
        if self.spectral is None and not self._trail_weight:
            self.evaluate = self._base
        else:
            self.evaluate = self._composed

    def classical_only(self) -> bool:
        """Whether the score is the classical evaluation alone (no network, spectral
        or pheromone term): then material and piece-square tables, which the
        position keeps incrementally, are most of it (the search's lazy evaluation)."""
        return self.evaluate == self.classical.evaluate and self.classical.classical

    def extra_terms(self) -> bool:
        """Whether the score has a term beyond the classical ones and the network (the
        spectral term or the pheromone bonus): the search on the engine's own board
        then adds :meth:`extras` to its evaluator's score."""
        return self.evaluate != self._base

    def native_evaluator(self) -> Classical:
        """The evaluation on the engine's own board, for the search on that board:
        the classical one (:class:`blitzaco.classical.Classical`, the same terms and
        numbers), or with the network on :class:`blitzaco.native_net.NetEvaluator`
        (the same network, the same integer arithmetic); made once and kept, with its
        caches, for every search until the configuration changes."""
        if self._native is None:
            if self.net is not None:
                from blitzaco.native_net import NetEvaluator  # the native core, loaded when used

                nn = self.config.eval.nn
                self._native = NetEvaluator(self.config.eval, self.net.weights, nn.weight, nn.classical,
                                            nn.fifty_move)
            else:
                from blitzaco.classical import Classical

                self._native = Classical(self.config.eval)
        return self._native

    def position(self, board: chess.Board) -> Position:
        """The search's :class:`Position` of *board*, with the network's accumulator
        when the network is on."""
        return Position(board, self.psq, self.net)

    # ----------------------------------------------------------------- the search

    def start(self, pos: Position) -> None:
        """A search begins at *pos* (its root is ply 0)."""
        if self.spectral is not None:
            self._spectral_by_ply[0] = self._spectral_here = self.spectral.score(pos.board, pos.key)

    def enter(self, pos: Position, ply: int, depth: int) -> None:
        """The search entered a node *ply* plies from the root with *depth* plies left
        (0 in the quiescence search): the spectral value in force there is computed
        or inherited from the parent."""
        by_ply = self._spectral_by_ply
        if depth >= self._min_depth:
            by_ply[ply] = self.spectral.score(pos.board, pos.key)  # type: ignore[union-attr]
        else:
            by_ply[ply] = by_ply[ply - 1]
        self._spectral_here = by_ply[ply]

    def enter_board(self, board: Board, ply: int, depth: int) -> None:
        """:meth:`enter` for the search on the engine's own board: the same value,
        from a python-chess board built only when the term's cache does not hold the
        position."""
        by_ply = self._spectral_by_ply
        if depth >= self._min_depth:
            spectral = self.spectral
            assert spectral is not None
            key = unsigned_key(board.key)
            value = spectral.cached(key)
            by_ply[ply] = value if value is not None else spectral.score(board.to_chess(), key)
        else:
            by_ply[ply] = by_ply[ply - 1]
        self._spectral_here = by_ply[ply]

    def extras(self, white_to_move: bool, key: int) -> int:
        """The spectral term (at the node entered last) and the pheromone bonus, for
        the side to move of the position whose key is *key*: what :meth:`evaluate`
        adds to the classical terms and the network."""
        score = 0
        if self.spectral is not None:
            advantage = self._spectral_here
            score += advantage if white_to_move else -advantage
        if self._trail_weight:
            row = self.trails.row(key)
            if row is not None:
                score += int(self._trail_weight * max(row.values()))
        return score

    def _composed(self, pos: Position) -> int:
        return self._base(pos) + self.extras(pos.board.turn, pos.key)

    # ------------------------------------------------------------------ the eval command

    def classical_trace(self, board: chess.Board) -> Trace:
        """The classical evaluation of *board* term by term and feature by feature, as
        the evaluator on the engine's own board computes it (:func:`classical_trace`)."""
        from blitzaco.classical import Classical

        native = self.native_evaluator()
        return classical_trace(board, native if type(native) is Classical else None, self.config.eval)

    def explain(self, board: chess.Board) -> list[str]:
        """The static evaluation of *board* term by term, as the ``eval`` command
        prints it: the classical table, the spectral features, the pheromone bonus,
        and the final score the search uses (White's view, pawns)."""
        trace = self.classical_trace(board)
        lines = format_trace(trace)
        net = self.net
        share = 1.0 if net is None else classical_share(net.residual, self.config.eval.nn.classical)
        if share == 0.0:
            state = "replaced by the network: not in the score"
        else:
            state = "in the score" if share == 1.0 else f"in the score times {share:g}"
        lines.append(f"Classical evaluation {trace.score / 100:+.2f} (white side, {state})")
        final = trace.score if share == 1.0 else int(share * trace.score)
        lines.append("")
        if net is None:
            lines.append(f"Network: switched off{f' ({self.network_message})' if self.network_message else ''}")
        else:
            weight = self.config.eval.nn.weight
            value = int(weight * net.evaluate_board(board))
            value = value if board.turn else -value
            lines.append(f"Network: {net.describe()}")
            lines.append(f"Network score {value / 100:+.2f} (white side, weight {weight:g}, in the score)")
            final += value
            plies = self.config.eval.nn.fifty_move
            if plies:
                from blitzaco.classical import fifty_move_scaled

                final = fifty_move_scaled(final, board.halfmove_clock, plies)
                lines.append(f"Fifty-move scale x{max(0, plies - board.halfmove_clock)}/{plies} (halfmove clock "
                             f"{board.halfmove_clock}): {final / 100:+.2f} (white side)")
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


def _network(config: Config) -> tuple[Network | None, str | None]:
    """The network when the configuration switches it on, with a message saying
    which one was loaded or why none could be."""
    settings = config.eval.nn
    if not settings.enabled:
        return None, None
    name = settings.file or "nn.bin"
    path: str | Path | None = name
    if not settings.file or (not Path(name).exists() and Path(name).name == name):
        path = bundled_file(name)  # a net shipped in assets/ (inside the binary too)
    if path is None:
        if settings.file:
            return None, f"network switched off: no file {name}, here or in assets/"
        return None, "network switched off: no network file is installed (assets/nn.bin)"
    try:
        net = load_network(path)
    except NetworkError as err:
        return None, f"network switched off: {err}"
    return net, f"using {net.describe()}"


def _fifty_move_scaled(evaluate: Callable[[Position], int], plies: int) -> Callable[[Position], int]:
    """*evaluate* scaled by the halfmove clock (``[eval.nn] fifty_move``), as the
    native evaluator scales it."""
    from blitzaco.classical import fifty_move_scaled

    return lambda pos: fifty_move_scaled(evaluate(pos), pos.board.halfmove_clock, plies)


def _network_score(net: Network, weight: float, classical: Evaluator, share: float = 0.0) -> Callable[[Position], int]:
    """The classical score plus the network's (a residual net), the network's alone,
    or the network's plus *share* times the classical score, the network's scaled by
    *weight*: one small function for the search to call."""
    evaluate_net = net.evaluate
    share = classical_share(net.residual, share)
    if share:
        # The sum is cached by position key, as the classical evaluator caches its
        # own score: the search meets a position again and again, and the network's
        # output costs as much as a classical evaluation found in its cache.
        evaluate_classical = classical.evaluate
        cache: dict[int, int] = {}

        def with_classical(pos: Position) -> int:
            key = pos.key
            score = cache.get(key)
            if score is None:
                net_score = evaluate_net(pos.acc, pos.board.turn)
                classical_score = evaluate_classical(pos)
                score = (net_score if weight == 1.0 else int(weight * net_score)) + (
                    classical_score if share == 1.0 else int(share * classical_score)
                )
                if len(cache) >= EVAL_CACHE_SIZE:
                    cache.clear()
                cache[key] = score
            return score

        return with_classical
    if weight == 1.0:
        return lambda pos: evaluate_net(pos.acc, pos.board.turn)
    return lambda pos: int(weight * evaluate_net(pos.acc, pos.board.turn))


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


def classical_trace(board: chess.Board, classical: Classical | None = None, config: EvalConfig | None = None) -> Trace:
    """The classical evaluation of *board* term by term and feature by feature, as the
    evaluator on the engine's own board (:class:`blitzaco.classical.Classical`, the one
    the default search runs; given, or made from *config*) traces it: the same
    numbers as :meth:`blitzaco.evaluate.Evaluator.trace`, tested term by term and
    feature by feature. What ``eval`` prints and the tuner fits."""
    from blitzaco.board import Board
    from blitzaco.classical import TERM_NAMES, Classical

    if classical is None:
        classical = Classical(config if config is not None else EvalConfig())
    own = Board.from_chess(board.copy(stack=False))  # the evaluation reads no history
    classical.reset(own)
    classical.tracing = True
    try:
        score = classical.evaluate(own)
    finally:
        classical.tracing = False
    trace = Trace()
    for index, name in enumerate(TERM_NAMES):
        trace.terms[name] = [classical.terms[index * 4 + k] for k in range(4)]
    trace.features = classical.features
    trace.phase = min(classical.phase[classical.top], FULL_PHASE)
    trace.scale = classical.traced_scale
    trace.mg, trace.eg = classical.traced_mg, classical.traced_eg
    trace.score = score if board.turn else -score
    return trace
