"""The classical evaluation on the engine's own board (blitzaco.classical) held to its
properties: the sums it keeps incrementally equal those computed afresh, the trace
adds up to the score, and a position and its colour mirror score the same for the
side to move (:mod:`blitzaco.tools.boardcheck`). Each check is shown able to fail.
The recorded scores of fixed positions are tests/test_eval_scores.py's.

The compiled build runs the same checks in test_native.py.
"""

from __future__ import annotations

import dataclasses
import random

import chess
import pytest
from uci_driver import DATA

from blitzaco import classical as module
from blitzaco.board import PAWN, Board
from blitzaco.classical import Classical, popcount
from blitzaco.config import Config, EvalConfig
from blitzaco.tools.boardcheck import Mismatch, check_evaluation, eval_check
from blitzaco.tools.tune.labels import read_labels


@pytest.mark.parametrize("seed", range(4))
def test_random_games_hold_the_properties_and_follow_incrementally(seed: int) -> None:
    """About 12,000 positions over the four seeds (half Chess960), with make, null
    moves and unmake followed incrementally: the followed sums and score equal those
    computed afresh, the trace adds up, the colour mirror agrees."""
    assert eval_check(seed, games=30, plies=100, config=Config().eval) > 2500


def _perturbed(value: EvalConfig, rng: random.Random) -> object:
    """Every weight moved a little (tests/data/make_eval_scores.py's perturbation),
    so that a weight used for another's place (equal by chance in the shipped file)
    would break the mirror or the trace."""
    from test_eval_scores import _maker

    return _maker().perturbed_config(value, rng)


@pytest.mark.parametrize("seed", range(2))
def test_other_weights_hold_the_same_properties(seed: int) -> None:
    """Perturbed weights: the properties hold whatever the weights."""
    config = _perturbed(EvalConfig(), random.Random(seed))
    assert isinstance(config, EvalConfig) and config != EvalConfig()
    assert eval_check(100 + seed, games=12, plies=100, config=config) > 1000


def test_material_and_tables_only() -> None:
    """With the classical terms off the score is material and tables: the same
    properties hold."""
    config = dataclasses.replace(EvalConfig(), classical=False)
    assert eval_check(7, games=6, plies=80, config=config) > 300


def test_the_labelled_sample_holds_the_properties() -> None:
    """The quiet positions of Stockfish-labelled games (the tuner's data)."""
    classical = Classical(Config().eval)
    records = list(read_labels(DATA / "labels_sample.bin"))
    assert len(records) > 500
    scores = {check_evaluation(classical, record.board) for record in records}
    assert len(scores) > 100  # real positions, not one score over and over


def test_the_mirror_check_sees_an_asymmetric_evaluation() -> None:
    """The mirror comparison can fail: with White's pawn on e2 worth 5 more in the
    midgame than Black's on e7 (the evaluator's own table changed, both builds), the
    start position and its mirror score differently."""
    check_evaluation(Classical(EvalConfig()), chess.Board())
    asymmetric = Classical(EvalConfig())
    asymmetric.psq_mg[PAWN * 64 + chess.E2] += 5
    with pytest.raises(Mismatch, match="colour mirror"):
        check_evaluation(asymmetric, chess.Board())


def _pure_classical() -> None:
    """Skip the test unless the classical module is interpreted (the compiled class
    cannot be patched)."""
    if not module.INTERPRETED:
        pytest.skip("the compiled class cannot be patched")


def test_the_mirror_check_sees_a_feature_count_for_one_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """The feature comparison can fail: a count left out for White only is found
    (pure build)."""
    _pure_classical()
    real = module.Classical._count

    def dropping(self: Classical, name: str, side: int, count: int) -> None:
        if name != "king.shield" or side != 0:
            real(self, name, side, count)

    monkeypatch.setattr(module.Classical, "_count", dropping)
    with pytest.raises(Mismatch, match="king.shield"):
        check_evaluation(Classical(EvalConfig()), chess.Board())


def test_the_trace_check_sees_terms_that_do_not_add_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The trace comparison can fail: White's pawn-structure term recorded one
    centipawn off (the score itself unchanged) no longer adds up (pure build)."""
    _pure_classical()
    board = chess.Board("4k3/8/8/8/8/8/8/P3K3 w - - 0 1")
    check_evaluation(Classical(EvalConfig()), board)
    real = module.Classical._add

    def off_by_one(self: Classical, term: int, side: int, mg: int, eg: int) -> None:
        real(self, term, side, mg + (1 if term == module.T_PAWNS and side == 0 else 0), eg)

    monkeypatch.setattr(module.Classical, "_add", off_by_one)
    with pytest.raises(Mismatch, match="add up"):
        check_evaluation(Classical(EvalConfig()), board)


def test_the_incremental_check_sees_a_wrong_update(monkeypatch: pytest.MonkeyPatch) -> None:
    """The incremental comparison can fail: sums that go wrong only after a capture
    (the afresh score is still right) are found (pure build)."""
    _pure_classical()
    real = module.Classical.make

    def wrong_after_captures(self: Classical, board: Board) -> None:
        real(self, board)
        if board.dirty_count > 1 and board.dirty[2] < 0:  # a capture or a promotion: a piece removed
            self.mg[self.top] += 1

    monkeypatch.setattr(module.Classical, "make", wrong_after_captures)
    with pytest.raises(Mismatch, match="incremental sums differ"):
        eval_check(3, games=4, plies=100, config=EvalConfig())


def test_popcount_counts_all_64_bits() -> None:
    """h8 is the sign bit of the signed bitboards: it counts like any other square."""
    rng = random.Random(0)
    for _ in range(2000):
        bits = rng.getrandbits(64)
        signed = bits - (1 << 64) if bits >> 63 else bits
        assert popcount(signed) == bits.bit_count()
    assert popcount(-1) == 64
    assert popcount(-(1 << 63)) == 1


def test_signed_bitboard_operations_match_unsigned_ones() -> None:
    """The fills, shifts and the mirror on signed bitboards give python-chess's
    unsigned results, bit 63 included."""
    from blitzaco.classical import flip, north_fill, sideways, south_fill, white_pawn_attacks

    def signed(bits: int) -> int:
        bits &= (1 << 64) - 1
        return bits - (1 << 64) if bits >> 63 else bits

    rng = random.Random(1)
    full = (1 << 64) - 1
    for _ in range(500):
        bits = rng.getrandbits(64) & rng.getrandbits(64)
        value = signed(bits)
        assert flip(value) == signed(chess.flip_vertical(bits))
        north = bits
        for shift in (8, 16, 32):
            north |= (north << shift) & full
        assert north_fill(value) == signed(north)
        south = bits
        for shift in (8, 16, 32):
            south |= south >> shift
        assert south_fill(value) == signed(south)
        not_a, not_h = full & ~chess.BB_FILE_A, full & ~chess.BB_FILE_H
        assert sideways(value) == signed(((bits & not_a) >> 1) | ((bits & not_h) << 1))
        assert white_pawn_attacks(value) == signed(((bits & not_a) << 7) | ((bits & not_h) << 9))
