"""The static evaluation: the one object the search asks for a position's score.

:class:`StaticEval` owns every term of the static score and composes them:

* the evaluator on the engine's own board (:meth:`StaticEval.evaluator`): the
  classical tapered evaluation (:class:`~blitzaco.classical.Classical`), or with
  ``[eval.nn]`` on the network (:class:`~blitzaco.network.NetEvaluator`: the
  network's score, with the configured share of the classical one or, for a
  residual net, the classical score plus the network's). It keeps its own sums and
  accumulator from what each move changed;
* the spectral term (:mod:`blitzaco.spectral`) when ``[eval.spectral]`` switches it
  on, with its depth rule: the graph features are computed only at nodes with at
  least ``min_depth`` plies left and inherited from the parent below them (and in
  the quiescence search), because they cost far more than a node;
* the pheromone bonus (``[pheromone] eval_weight`` times the strongest trail from
  the position) when the pheromone memory is switched on.

The search calls the evaluator for its score and, only when one of the last two is
on (:meth:`StaticEval.extra_terms`), adds :meth:`StaticEval.extras`; with the
spectral term on it calls :meth:`StaticEval.enter` at every node. Everything else
(``eval``, the tools, the tests) asks :meth:`StaticEval.evaluate` for the score of a
python-chess board: the same evaluator, the same terms, the same number.
``eval`` prints :meth:`StaticEval.explain`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import chess

from blitzaco.board import STACK_PLIES, Board, compute_key, unsigned_key
from blitzaco.bundled import bundled_file
from blitzaco.classical import Classical, fifty_move_scaled
from blitzaco.config import Config
from blitzaco.nnue import Network, NetworkError, classical_share, load_network
from blitzaco.pheromone import Trails
from blitzaco.trace import Trace, classical_trace, format_trace

if TYPE_CHECKING:  # numpy is imported only when the spectral term is on
    from blitzaco.spectral import SpectralTerm

__all__ = ["StaticEval"]


class StaticEval:
    """Every term of the static score behind one object. One search at a time uses
    it (the evaluator's stacks and the per-ply spectral state belong to the running
    search)."""

    def __init__(self, config: Config, trails: Trails) -> None:
        self.config = config
        self.trails = trails
        self.spectral, self.spectral_message = _spectral_term(config)
        self.net, self.network_message = _network(config)
        self._min_depth = max(1, config.eval.spectral.min_depth)
        self._spectral_by_ply = [0] * STACK_PLIES
        self._evaluator: Classical | None = None
        self._spectral_here = 0  # the value at the node entered last
        self._trail_weight = 0.0
        #: Whether the search must call :meth:`enter` at every node.
        self.per_node = self.spectral is not None

    def use_trails(self, on: bool) -> None:
        """Add the pheromone bonus (when its weight is not zero) or not: the engine
        switches it with the memory, per search."""
        self._trail_weight = self.config.pheromone.eval_weight if on else 0.0

    def classical_only(self) -> bool:
        """Whether the score is the classical evaluation alone (no network, spectral
        or pheromone term): then material and piece-square tables, which the
        evaluator keeps incrementally, are most of it (the search's lazy evaluation)."""
        return self.net is None and not self.extra_terms() and self.config.eval.classical

    def extra_terms(self) -> bool:
        """Whether the score has a term beyond the evaluator's (the spectral term or
        the pheromone bonus): the search then adds :meth:`extras` to its score."""
        return self.spectral is not None or bool(self._trail_weight)

    def evaluator(self) -> Classical:
        """The evaluation on the engine's own board: the classical one
        (:class:`blitzaco.classical.Classical`), or with the network on
        :class:`blitzaco.network.NetEvaluator`; made once and kept, with its caches,
        for every search until the configuration changes."""
        if self._evaluator is None:
            if self.net is not None:
                from blitzaco.network import NetEvaluator  # the network's code, loaded when used

                nn = self.config.eval.nn
                self._evaluator = NetEvaluator(self.config.eval, self.net.weights, nn.weight, nn.classical,
                                               nn.fifty_move)
            else:
                self._evaluator = Classical(self.config.eval)
        return self._evaluator

    # ----------------------------------------------------------------- the search

    def start(self, board: Board) -> None:
        """A search begins at *board* (its root is ply 0)."""
        if self.spectral is not None:
            self._spectral_by_ply[0] = self._spectral_here = self._spectral_score(board)

    def enter(self, board: Board, ply: int, depth: int) -> None:
        """The search entered a node *ply* plies from the root with *depth* plies left
        (0 in the quiescence search): the spectral value in force there is computed
        or inherited from the parent."""
        by_ply = self._spectral_by_ply
        if depth >= self._min_depth:
            by_ply[ply] = self._spectral_score(board)
        else:
            by_ply[ply] = by_ply[ply - 1]
        self._spectral_here = by_ply[ply]

    def _spectral_score(self, board: Board) -> int:
        """The spectral advantage of *board* (White's view), from a python-chess board
        built only when the term's cache does not hold the position."""
        spectral = self.spectral
        assert spectral is not None
        key = unsigned_key(board.key)
        value = spectral.cached(key)
        return value if value is not None else spectral.score(board.to_chess(), key)

    def extras(self, white_to_move: bool, key: int) -> int:
        """The spectral term (at the node entered last) and the pheromone bonus, for
        the side to move of the position whose key (unsigned) is *key*: what the
        search adds to the evaluator's score."""
        score = 0
        if self.spectral is not None:
            advantage = self._spectral_here
            score += advantage if white_to_move else -advantage
        if self._trail_weight:
            row = self.trails.row(key)
            if row is not None:
                score += int(self._trail_weight * max(row.values()))
        return score

    # ----------------------------------------------------------------- one position

    def evaluate(self, board: chess.Board) -> int:
        """The static score of *board* for its side to move, every term in force
        included: what the search's evaluation of that position is (not during a
        search: it uses the search's evaluator)."""
        own = Board.from_chess(board.copy(stack=False))  # the evaluation reads no history
        evaluator = self.evaluator()
        evaluator.reset(own)
        score = int(evaluator.evaluate(own))
        if self.extra_terms():
            self.start(own)
            score += self.extras(board.turn, unsigned_key(own.key))
        return score

    def network_score(self, board: chess.Board) -> int:
        """The network's own score of *board* for its side to move (no weight, no
        classical share). Raises ValueError when the network is off."""
        from blitzaco.network import NetEvaluator

        evaluator = self.evaluator()
        if not isinstance(evaluator, NetEvaluator):
            raise ValueError("the network is switched off")
        own = Board.from_chess(board.copy(stack=False))
        evaluator.reset(own)
        return int(evaluator.network(own))

    # ------------------------------------------------------------------ the eval command

    def classical_trace(self, board: chess.Board) -> Trace:
        """The classical evaluation of *board* term by term and feature by feature
        (:func:`blitzaco.trace.classical_trace`), by the search's evaluator when that
        is the classical one."""
        evaluator = self.evaluator()
        return classical_trace(board, evaluator if type(evaluator) is Classical else None, self.config.eval)

    def explain(self, board: chess.Board) -> list[str]:
        """The static evaluation of *board* term by term, as the ``eval`` command
        prints it: the classical table, the network, the spectral features, the
        pheromone bonus, and the final score the search uses (White's view, pawns)."""
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
            value = int(weight * self.network_score(board))
            value = value if board.turn else -value
            lines.append(f"Network: {net.describe()}")
            lines.append(f"Network score {value / 100:+.2f} (white side, weight {weight:g}, in the score)")
            final += value
            plies = self.config.eval.nn.fifty_move
            if plies:
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
