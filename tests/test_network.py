"""The network on the engine's own board (blitzaco.network): the accumulator kept
lazily from what each move changed gives the score of one reset on the position and
the file format's definition written out plainly
(:func:`blitzaco.tools.boardcheck.reference_network_score`), over random games with
every kind of move, Chess960 included, and the check is shown able to fail; a
position and its colour mirror score the same for the side to move; the engine
searches with the network on.

The compiled build runs the same check in test_native.py.
"""

from __future__ import annotations

import dataclasses
import random

import chess
import pytest

from blitzaco.board import Board
from blitzaco.bundled import bundled_file
from blitzaco.config import Config, EvalConfig
from blitzaco.network import NetEvaluator
from blitzaco.nnue import NetworkWeights, load_weights
from blitzaco.timeman import Limits
from blitzaco.tools import boardcheck
from blitzaco.tools.boardcheck import Mismatch, net_check, random_net, reference_network_score


@pytest.mark.parametrize("residual", [False, True])
def test_the_incremental_accumulator_scores_as_the_reference(residual: bool) -> None:
    assert net_check(random_net(16, 3, residual), seed=1, games=16, plies=90) > 800


@pytest.mark.parametrize("qa", [1, 4000, 32767])
def test_the_clipped_relu_holds_for_any_qa_the_format_allows(qa: int) -> None:
    """The output clips three neurons of a word at once (0 below, qa above): it
    equals the reference's one-at-a-time clip at either end of the file's range."""
    weights = dataclasses.replace(random_net(16, 5), qa=qa)
    assert net_check(weights, seed=3, games=6, plies=60) > 200


@pytest.mark.parametrize("buckets", [2, 8])
def test_output_buckets_score_as_the_reference(buckets: int) -> None:
    """Each position's output is its piece count's bucket, in the incremental
    evaluator as in the format's definition, along games that lose pieces."""
    assert net_check(random_net(16, 6, buckets=buckets), seed=4, games=8, plies=120) > 400


@pytest.mark.parametrize("qa", [255, 32767])
def test_the_squared_clipped_relu_scores_as_the_reference(qa: int) -> None:
    """A net with the squared flag (SCReLU): each clipped value squared, the bias and
    divisor scaled by QA, as the format defines it, with output buckets, at the
    smallest usual QA and the largest the format allows; its score differs from the
    same weights unsquared."""
    weights = dataclasses.replace(random_net(16, 7, buckets=8, squared=True), qa=qa)
    assert net_check(weights, seed=5, games=8, plies=100) > 400
    # Small first-layer weights, so that values fall between 0 and QA (where the two
    # activations differ: at 0 and QA they agree).
    small = dataclasses.replace(weights, w1=tuple(v // 16 for v in weights.w1), b1=tuple(v // 16 for v in weights.b1))
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    assert reference_network_score(small, board) != reference_network_score(dataclasses.replace(small, flags=0), board)


@pytest.mark.parametrize("squared", [False, True])
def test_a_mirrored_net_scores_as_the_reference(squared: bool) -> None:
    """A net with the mirrored flag: along games whose king moves cross the d/e
    boundary (castling long, kings walking), the incremental evaluator (a crossing
    perspective computed afresh, the other incremental) scores as the format defines."""
    assert net_check(random_net(16, 8, buckets=8, squared=squared, mirrored=True), seed=6, games=10, plies=120) > 500


def test_a_mirrored_net_scores_a_position_as_its_horizontal_mirror() -> None:
    """Mirrored by the king's file, each perspective of a position without castling
    rights reads the same inputs as in the position's mirror across the d/e line:
    the two score the same, in the engine and by definition (the same weights
    unmirrored do not: the test can fail)."""
    mirrored = random_net(16, 9, buckets=8, mirrored=True)
    plain = dataclasses.replace(mirrored, flags=0)
    evaluator = NetEvaluator(EvalConfig(), mirrored)
    differ = 0
    for fen in ("8/5pk1/4p1p1/3rP3/2R5/5PK1/6P1/8 w - - 3 40", "r4rk1/pp3ppp/2n5/8/8/2N5/PP3PPP/2KR3R b - - 0 15",
                "2k5/8/8/3q4/8/8/5Q2/4K3 w - - 0 1", "8/8/3k4/8/8/4K3/8/8 b - - 0 1"):
        board = chess.Board(fen)
        board.castling_rights = 0
        mirror = board.transform(chess.flip_horizontal)
        scores = []
        for position in (board, mirror):
            own = Board.from_chess(position)
            evaluator.reset(own)
            scores.append(int(evaluator.network(own)))
            assert scores[-1] == reference_network_score(mirrored, position)
        assert scores[0] == scores[1], fen
        differ += reference_network_score(plain, board) != reference_network_score(plain, mirror)
    assert differ == 4


def test_the_output_bucket_follows_the_piece_count() -> None:
    """A net whose buckets differ only in the output bias scores a position with
    the bias of its own piece count's bucket (a bucket chosen otherwise is seen)."""
    base = dataclasses.replace(random_net(8, 9), b2=(0,))
    buckets = 8
    step = 10 * base.qa * base.qb  # 1,000 centipawns
    weights = dataclasses.replace(base, w2=base.w2 * buckets, b2=tuple(step * b for b in range(buckets)))
    for fen in ("8/8/4k3/8/8/3K4/8/8 w - - 0 1", "4k3/8/8/8/8/8/PPPP4/4K3 w - - 0 1",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"):
        board = chess.Board(fen)
        evaluator = NetEvaluator(EvalConfig(), weights)
        own = Board.from_chess(board)
        evaluator.reset(own)
        plain = NetEvaluator(EvalConfig(), base)
        plain.reset(own)
        bucket = (len(board.piece_map()) - 1) * buckets // 32
        assert evaluator.network(own) - plain.network(own) == 1000 * bucket


def test_the_weight_scales_the_networks_score() -> None:
    assert net_check(random_net(8, 4, False), seed=2, games=4, plies=60, weight=0.75) > 100


def test_a_share_of_the_classical_score_blends_with_a_replacing_net() -> None:
    assert net_check(random_net(8, 4, False), seed=3, games=4, plies=60, weight=0.5, share=0.5) > 100
    # A residual net keeps the classical score whole, whatever the share.
    assert net_check(random_net(8, 4, True), seed=4, games=2, plies=40, share=0.3) > 40


def test_the_shipped_networks_score_as_the_reference() -> None:
    for name in ("net.bin", "nn.bin"):
        path = bundled_file(name)
        assert path is not None, name
        assert net_check(load_weights(path), seed=5, games=2, plies=60) > 60


def test_the_net_check_sees_an_evaluator_of_other_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: when the evaluators the check builds run weights
    with one first-layer weight changed (the reference keeping the given ones), the
    check finds a position where the scores differ."""
    weights = random_net(8, 7, False)
    assert net_check(weights, seed=6, games=2, plies=40) > 20
    w1 = list(weights.w1)
    for index in range(0, len(w1), 8):  # one neuron's rows: the pieces on the board move its value
        w1[index] += 400
    other = dataclasses.replace(weights, w1=tuple(w1))

    def with_other_weights(config: EvalConfig, given: NetworkWeights, *args: float) -> NetEvaluator:
        assert given is weights
        return NetEvaluator(config, other, *args)

    monkeypatch.setattr(boardcheck, "NetEvaluator", with_other_weights)
    with pytest.raises(Mismatch, match="by definition"):
        net_check(weights, seed=6, games=2, plies=40)


def test_the_net_check_sees_a_lazy_update_gone_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    """The incremental comparison can fail: an evaluator that forgets, in a capture,
    the row of the square the capturing piece left (right when reset on the
    position) is found (pure build: the compiled class cannot be patched)."""
    from blitzaco import network

    if not network.INTERPRETED:
        pytest.skip("the compiled class cannot be patched")
    real = network.NetEvaluator.make

    def forgetting_captures(self: NetEvaluator, board: Board) -> None:
        real(self, board)
        if board.dirty_count > 1 and board.dirty[2] < 0:  # first change: the captured piece removed
            for perspective in range(2):  # the second square left: the capturing piece's
                self.rows[self.ply * 8 + 4 * perspective + 3] = self.zero_row

    monkeypatch.setattr(network.NetEvaluator, "make", forgetting_captures)
    with pytest.raises(Mismatch, match="followed"):
        net_check(random_net(8, 7, False), seed=6, games=4, plies=80)


def test_a_position_and_its_colour_mirror_score_the_same_for_the_side_to_move() -> None:
    weights = random_net(16, 6, False)
    evaluator = NetEvaluator(Config().eval, weights)
    rng = random.Random(9)
    board = chess.Board()
    for _ in range(60):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
        scores = []
        for position in (board, board.mirror()):
            own = Board.from_chess(position.copy(stack=False))
            evaluator.reset(own)
            scores.append(evaluator.evaluate(own))
        assert scores[0] == scores[1] == reference_network_score(weights, board), board.fen()


def test_the_engine_searches_with_the_network_on(built_searches: list[object]) -> None:
    """[eval.nn] on with a replacing net: the search's evaluator is the network's
    (the engine's static evaluation's one), and the root's static score is the
    network's by the file format's definition."""
    from blitzaco.engine import Engine

    path = bundled_file("net.bin")
    assert path is not None
    config = Config()
    nn = dataclasses.replace(config.eval.nn, enabled=True, file=str(path), weight=1.0, classical=0.0)
    config = dataclasses.replace(config, eval=dataclasses.replace(config.eval, nn=nn))
    engine = Engine(config)
    engine.set_option("own_book", False)
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    result = engine.think(board, Limits(depth=4))
    assert result.move in board.legal_moves
    evaluator = engine.static.evaluator()
    assert isinstance(evaluator, NetEvaluator)
    assert len(built_searches) == 1 and built_searches[0].eval is evaluator  # type: ignore[attr-defined]
    own = Board.from_chess(board)
    evaluator.reset(own)
    net = engine.static.net
    assert net is not None and evaluator.evaluate(own) == reference_network_score(net.weights, board)


def test_a_net_padded_with_zero_neurons_scores_as_the_net() -> None:
    """scripts/width_cost.py pads a net with neurons of zero weights so that every
    width searches the same tree: the padded net scores every position as the net
    (by definition and in the engine), for each flag; a neuron padded with a weight
    that is not zero would change the scores (the check can fail)."""
    from script_loader import load_script

    width_cost = load_script("scripts/width_cost.py")
    boards = [chess.Board(), chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
              chess.Board("8/5pk1/4p1p1/3rP3/2R5/5PK1/6P1/8 b - - 3 40")]
    for flags in ({}, {"squared": True}, {"mirrored": True}):
        weights = random_net(8, 11, buckets=8, **flags)
        wide = load_weights_of(width_cost.padded(weights, 20))
        assert wide.hidden == 20 and wide.flags == weights.flags
        evaluator = NetEvaluator(EvalConfig(), wide)
        for board in boards:
            own = Board.from_chess(board)
            evaluator.reset(own)
            assert int(evaluator.network(own)) == reference_network_score(weights, board) \
                == reference_network_score(wide, board)
    last = wide.hidden - 1  # a padded neuron made active, with output weights
    spoiled = dataclasses.replace(wide, b1=wide.b1[:last] + (200,),
                                  w2=tuple(5000 if at % wide.hidden == last else v for at, v in enumerate(wide.w2)))
    assert any(reference_network_score(spoiled, board) != reference_network_score(wide, board) for board in boards)


def load_weights_of(blob: bytes) -> NetworkWeights:
    from blitzaco.nnue import decode_weights

    return decode_weights(blob)
