"""Spectral terms: the position read as a graph.

For each colour we build its *attack and defence graph*: the squares are the nodes,
and there is an edge between the square of each of its pieces and every square that
piece attacks (empty, holding an enemy piece: an attack, or holding one of its own:
a defence). The graph is made undirected and reduced to its *active* nodes (those
with at least one edge). From it:

* ``clusters``: the number of connected components, the groups of pieces that do not
  touch one another;
* on the largest component, the Laplacian ``L = D - A`` (``D`` the degrees, ``A`` the
  adjacency), and

  * ``connectivity``: its second-smallest eigenvalue, the algebraic connectivity
    (how hard the network is to cut in two);
  * ``entropy``: the Shannon entropy (nats) of its eigenvalues normalised to sum to
    one (how evenly the structure spreads over scales);
  * ``cohesion``: the share of the side's pieces on the larger side of the cut that
    the Fiedler vector (the eigenvector of the connectivity) proposes; pieces outside
    the largest component count against it;

* and its adjacency matrix, with

  * ``radius``: the spectral radius (largest eigenvalue), the density of the network;
  * ``gap``: the largest eigenvalue minus the second, how well the network expands;
  * ``king_centrality``: the eigenvector centrality (the Perron vector, unit length)
    summed over the enemy king's square and its neighbours: how central the enemy
    king's surroundings are to the side's network.

The *spectral advantage* is ``sum(weight[f] * (white[f] - black[f]))`` in
centipawns, with the weights of ``config.toml``'s ``[eval.spectral]``.

An eigen-decomposition costs far more than the rest of a node (hundreds of µs
against tens), so the search does not pay it everywhere: :class:`SpectralTerm`
caches the advantage by position key, and the search computes it only at nodes with
at least ``min_depth`` plies left, passing the value down to the nodes below (see
:mod:`blitzaco.search`). The module needs numpy; the engine imports it only when the
term is switched on.

Black's features are computed as White's in the colour-mirrored position, so a
position and its mirror give bit-for-bit identical matrices, hence exactly swapped
features.
"""

from __future__ import annotations

import math
import os
from dataclasses import astuple, dataclass

# One BLAS thread: the matrices are small, and threads only add latency (and
# compete with the other engine in a match). Effective when this module is the first
# to import numpy, as in the engine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import chess  # noqa: E402
import numpy as np  # noqa: E402

from blitzaco.config import SpectralConfig  # noqa: E402

__all__ = ["SpectralFeatures", "SpectralTerm", "FEATURES", "side_graph", "graph_features", "position_features"]

#: The features, in the order of :class:`SpectralFeatures`'s fields.
FEATURES = ("connectivity", "gap", "radius", "entropy", "cohesion", "clusters", "king_centrality")
#: Eigenvalues below this count as zero.
EPSILON = 1e-9
#: Advantage cache entries before the cache is emptied.
CACHE_SIZE = 1 << 16


@dataclass(frozen=True)
class SpectralFeatures:
    """The spectral features of one colour's attack and defence graph."""

    connectivity: float = 0.0
    gap: float = 0.0
    radius: float = 0.0
    entropy: float = 0.0
    cohesion: float = 0.0
    clusters: int = 0
    king_centrality: float = 0.0


def side_graph(board: chess.Board, color: chess.Color) -> tuple[list[int], int, int]:
    """*color*'s attack and defence graph as bitboards: (the neighbours of each
    square, the squares of its pieces, the enemy king's square and neighbours)."""
    neighbours = [0] * 64
    ours = board.occupied_co[color]
    for square in chess.scan_forward(ours):
        attacks = board.attacks_mask(square)
        neighbours[square] |= attacks
        bit = chess.BB_SQUARES[square]
        for target in chess.scan_forward(attacks):
            neighbours[target] |= bit
    king = board.king(not color)
    zone = chess.BB_KING_ATTACKS[king] | chess.BB_SQUARES[king] if king is not None else 0
    return neighbours, ours, zone


def _components(neighbours: list[int]) -> list[int]:
    """Connected components of the active squares (bitboards), largest first, ties
    broken by the lowest square."""
    remaining = 0
    for square, bits in enumerate(neighbours):
        if bits:
            remaining |= chess.BB_SQUARES[square]
    components = []
    while remaining:
        component = frontier = remaining & -remaining
        while frontier:
            reached = 0
            for square in chess.scan_forward(frontier):
                reached |= neighbours[square]
            frontier = reached & ~component
            component |= frontier
        components.append(component)
        remaining &= ~component
    components.sort(key=lambda c: (-c.bit_count(), c & -c))
    return components


def _spectrum(
    adjacency: np.ndarray, pieces: list[int], zone: list[int], clusters: int, piece_count: int
) -> SpectralFeatures:
    """Features of a connected graph (*adjacency*, 0/1, symmetric) that is the largest
    component of one with *clusters* components; *pieces* and *zone* are node indices
    in it, *piece_count* the side's pieces in the whole graph."""
    n = len(adjacency)
    if n < 2:
        return SpectralFeatures(clusters=clusters)
    laplacian = np.diag(adjacency.sum(axis=1)) - adjacency
    values, vectors = np.linalg.eigh(laplacian)
    adj_values, adj_vectors = np.linalg.eigh(adjacency)

    total = float(values.sum())
    entropy = 0.0
    for value in values:
        if value > EPSILON:
            p = float(value) / total
            entropy -= p * math.log(p)

    cohesion = 0.0
    if piece_count:
        fiedler = vectors[:, 1]
        plus = int((fiedler[pieces] > 1e-7).sum())
        minus = int((fiedler[pieces] < -1e-7).sum())
        cohesion = (len(pieces) - min(plus, minus)) / piece_count

    perron = np.abs(adj_vectors[:, -1])
    return SpectralFeatures(
        connectivity=float(values[1]),
        gap=float(adj_values[-1] - adj_values[-2]),
        radius=float(adj_values[-1]),
        entropy=entropy,
        cohesion=cohesion,
        clusters=clusters,
        king_centrality=float(perron[zone].sum()) if zone else 0.0,
    )


def graph_features(
    adjacency: np.ndarray, pieces: list[int] | None = None, zone: list[int] | None = None
) -> SpectralFeatures:
    """The features of an undirected graph given by its 0/1 *adjacency* matrix (at
    most 64 nodes; nodes without edges are left out). *pieces*: the nodes holding the
    side's pieces (for cohesion; default all nodes); *zone*: the nodes around the
    enemy king (for king centrality; default none)."""
    n = len(adjacency)
    if n > 64:
        raise ValueError("at most 64 nodes")
    neighbours = [sum(1 << int(j) for j in np.flatnonzero(adjacency[i])) for i in range(n)] + [0] * (64 - n)
    pieces_bb = sum(1 << i for i in (range(n) if pieces is None else pieces))
    zone_bb = sum(1 << i for i in (zone or []))
    return _features(neighbours, pieces_bb, zone_bb)


def _features(neighbours: list[int], pieces: int, zone: int) -> SpectralFeatures:
    components = _components(neighbours)
    if not components:
        return SpectralFeatures()
    main = components[0]
    nodes = list(chess.scan_forward(main))
    index = {node: i for i, node in enumerate(nodes)}
    adjacency = np.zeros((len(nodes), len(nodes)))
    rows, cols = [], []
    for i, node in enumerate(nodes):
        for other in chess.scan_forward(neighbours[node]):
            rows.append(i)
            cols.append(index[other])
    adjacency[rows, cols] = 1.0
    return _spectrum(
        adjacency,
        [index[sq] for sq in chess.scan_forward(pieces & main)],
        [index[sq] for sq in chess.scan_forward(zone & main)],
        len(components),
        pieces.bit_count(),
    )


def position_features(board: chess.Board) -> tuple[SpectralFeatures, SpectralFeatures]:
    """(White's, Black's) features of *board*. Black's are White's of the colour
    mirror, so that mirrored positions give bit-for-bit swapped features."""
    mirrored = board.mirror()
    return _features(*side_graph(board, chess.WHITE)), _features(*side_graph(mirrored, chess.WHITE))


class SpectralTerm:
    """The spectral advantage with the weights of a :class:`SpectralConfig`, cached by
    position key. Not thread-safe (one search at a time uses it)."""

    def __init__(self, config: SpectralConfig) -> None:
        self.config = config
        self.weights = tuple(getattr(config, name) for name in FEATURES)
        self._cache: dict[int, int] = {}
        self.computed = 0  # decompositions done (for measurements)

    def advantage(self, features: tuple[SpectralFeatures, SpectralFeatures]) -> int:
        """White's advantage in centipawns from both colours' features."""
        white, black = astuple(features[0]), astuple(features[1])
        total = sum(w * (a - b) for w, a, b in zip(self.weights, white, black, strict=True))
        return int(round(total))

    def cached(self, key: int) -> int | None:
        """White's spectral advantage of the position whose key is *key*, when the
        cache holds it."""
        return self._cache.get(key)

    def score(self, board: chess.Board, key: int) -> int:
        """White's spectral advantage of *board*, whose position key is *key*."""
        value = self._cache.get(key)
        if value is None:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self.computed += 1
            value = self._cache[key] = self.advantage(position_features(board))
        return value

    def clear(self) -> None:
        self._cache.clear()
