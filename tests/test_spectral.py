"""Spectral terms: known graphs give known spectra, colour mirrors give swapped
features, and the search uses the term when it is switched on."""

from __future__ import annotations

import math

import chess
import numpy as np
import pytest
from test_evaluate import suite_boards

from blitzaco.config import Config, config_from_dict
from blitzaco.engine import Engine
from blitzaco.spectral import FEATURES, SpectralTerm, graph_features, position_features, side_graph
from blitzaco.timeman import Limits


def _graph(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    adjacency = np.zeros((n, n))
    for a, b in edges:
        adjacency[a, b] = adjacency[b, a] = 1.0
    return adjacency


def path(n: int) -> np.ndarray:
    return _graph(n, [(i, i + 1) for i in range(n - 1)])


def cycle(n: int) -> np.ndarray:
    return _graph(n, [(i, (i + 1) % n) for i in range(n)])


def complete(n: int) -> np.ndarray:
    return _graph(n, [(i, j) for i in range(n) for j in range(i + 1, n)])


def star(n: int) -> np.ndarray:
    return _graph(n, [(0, i) for i in range(1, n)])


def _entropy(values: list[float]) -> float:
    total = sum(values)
    return -sum(v / total * math.log(v / total) for v in values if v > 1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13])
def test_path_graph(n: int) -> None:
    f = graph_features(path(n))
    assert f.connectivity == pytest.approx(2 - 2 * math.cos(math.pi / n))
    assert f.radius == pytest.approx(2 * math.cos(math.pi / (n + 1)))
    assert f.gap == pytest.approx(2 * math.cos(math.pi / (n + 1)) - 2 * math.cos(2 * math.pi / (n + 1)))
    assert f.entropy == pytest.approx(_entropy([2 - 2 * math.cos(math.pi * k / n) for k in range(n)]))
    assert f.clusters == 1


@pytest.mark.parametrize("n", [3, 4, 7, 10])
def test_cycle_graph(n: int) -> None:
    f = graph_features(cycle(n))
    assert f.connectivity == pytest.approx(2 - 2 * math.cos(2 * math.pi / n))
    assert f.radius == pytest.approx(2.0)
    assert f.entropy == pytest.approx(_entropy([2 - 2 * math.cos(2 * math.pi * k / n) for k in range(n)]))


@pytest.mark.parametrize("n", [3, 5, 9])
def test_complete_graph(n: int) -> None:
    f = graph_features(complete(n))
    assert f.connectivity == pytest.approx(n)  # Laplacian: 0 once, n (n - 1) times
    assert f.radius == pytest.approx(n - 1)  # adjacency: n - 1 once, -1 (n - 1) times
    assert f.gap == pytest.approx(n)
    assert f.entropy == pytest.approx(math.log(n - 1))


@pytest.mark.parametrize("n", [4, 6, 9])
def test_star_graph(n: int) -> None:
    f = graph_features(star(n), zone=[0])
    assert f.connectivity == pytest.approx(1.0)  # Laplacian: 0, 1 (n - 2 times), n
    assert f.radius == pytest.approx(math.sqrt(n - 1))
    assert f.entropy == pytest.approx(_entropy([0.0] + [1.0] * (n - 2) + [float(n)]))
    # The Perron vector of a star gives its centre 1/sqrt(2) of unit length.
    assert f.king_centrality == pytest.approx(1 / math.sqrt(2))


def test_components_and_cohesion() -> None:
    # Two triangles and a separate edge: three clusters; the features are the first
    # triangle's (largest, lowest node first).
    f = graph_features(_graph(8, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (6, 7)]))
    assert f.clusters == 3
    assert f.connectivity == pytest.approx(3.0)
    # A path of four: the Fiedler vector separates its two halves.
    assert graph_features(path(4), pieces=[0, 3]).cohesion == pytest.approx(0.5)
    assert graph_features(path(4), pieces=[0, 1]).cohesion == pytest.approx(1.0)
    # Pieces outside the largest component count against cohesion.
    two = _graph(7, [(0, 1), (1, 2), (2, 3), (4, 5), (5, 6)])
    assert graph_features(two, pieces=[0, 1, 4]).cohesion == pytest.approx(2 / 3)


def test_board_graph_edges() -> None:
    # A rook on a1 and the king on h1: the rook attacks the a-file and the first rank
    # up to h1, where it defends the king; the king attacks g1, g2, h2.
    board = chess.Board("4k3/8/8/8/8/8/8/R6K w - - 0 1")
    neighbours, pieces, zone = side_graph(board, chess.WHITE)
    assert neighbours[chess.A1] == (chess.BB_RANK_1 | chess.BB_FILE_A) & ~chess.BB_A1
    assert neighbours[chess.H1] == chess.BB_KING_ATTACKS[chess.H1] | chess.BB_A1
    assert neighbours[chess.G1] == chess.BB_A1 | chess.BB_H1
    assert pieces == chess.BB_A1 | chess.BB_H1
    assert zone == chess.BB_KING_ATTACKS[chess.E8] | chess.BB_E8
    features = position_features(board)[0]
    assert features.clusters == 1
    assert features.king_centrality == 0.0  # nothing of White's reaches around e8
    near = position_features(chess.Board("4k3/8/8/8/8/8/8/3R3K w - - 0 1"))[0]
    assert near.king_centrality > 0  # the rook on d1 reaches d7 and d8


def test_colour_mirror_gives_swapped_features() -> None:
    term = SpectralTerm(_weighted().eval.spectral)
    for number, board in enumerate(suite_boards()):
        if number % 3:
            continue
        white, black = position_features(board)
        mirrored = position_features(board.mirror())
        assert mirrored == (black, white), board.fen()
        assert term.advantage((white, black)) == -term.advantage(mirrored), board.fen()


def _weighted() -> Config:
    return config_from_dict({"eval": {"spectral": {
        "enabled": True, "min_depth": 2, "connectivity": 17.3, "gap": -6.1, "radius": 4.4, "entropy": 9.7,
        "cohesion": 21.5, "clusters": -7.9, "king_centrality": 33.3,
    }}})


def test_cache_computes_each_position_once() -> None:
    term = SpectralTerm(_weighted().eval.spectral)
    board = chess.Board()
    first = term.score(board, 1)
    assert term.score(board, 1) == first and term.computed == 1
    term.score(board, 2)
    assert term.computed == 2


def test_search_uses_the_term_and_stays_deterministic() -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")

    def think(config: Config) -> tuple[int, chess.Move | None, int]:
        engine = Engine(config)
        engine.set_option("own_book", False)
        engine.trails.clear()
        result = engine.think(board, Limits(depth=5))
        computed = engine.static.spectral.computed if engine.static.spectral is not None else 0
        return result.nodes, result.move, computed

    nodes, move, computed = think(_weighted())
    assert computed > 0
    assert think(_weighted()) == (nodes, move, computed)
    assert think(Config())[0] != nodes


def test_explain_adds_the_advantage_when_on() -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    lines = Engine(_weighted()).explain(board)
    assert any("in the score" in line and line.startswith("Spectral advantage") for line in lines)
    names = [line.split("|")[0].strip() for line in lines if "|" in line]
    assert all(name in names for name in FEATURES)
