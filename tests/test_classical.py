"""The classical evaluation on the engine's own board (blitzaco.classical) gives
blitzaco.evaluate's score, term by term, and keeps its sums as Position does.

The compiled build runs the same check in test_native.py.
"""

from __future__ import annotations

import dataclasses
import random

import chess
import pytest
from uci_driver import DATA

from blitzaco.classical import Classical, popcount
from blitzaco.config import Config, EvalConfig
from blitzaco.evaluate import Evaluator
from blitzaco.tools.boardcheck import Mismatch, check_evaluation, eval_check
from blitzaco.tools.tune.labels import read_labels


@pytest.mark.parametrize("seed", range(4))
def test_random_games_score_the_same_term_by_term(seed: int) -> None:
    """About 12,000 positions over the four seeds (half Chess960), with make, null
    moves and unmake followed incrementally."""
    assert eval_check(seed, games=30, plies=100, config=Config().eval) > 2500


def _perturbed(value: object, rng: random.Random) -> object:
    """Every weight moved a little, so that two weights swapped in the port (equal by
    chance in the shipped file) would show."""
    if dataclasses.is_dataclass(value):
        fields = dataclasses.fields(value)
        return dataclasses.replace(value, **{f.name: _perturbed(getattr(value, f.name), rng) for f in fields})
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value + (rng.randint(-7, 7) if value > 10 else rng.randint(0, 3))
    if isinstance(value, tuple):
        return tuple(_perturbed(item, rng) for item in value)
    return value


@pytest.mark.parametrize("seed", range(2))
def test_other_weights_score_the_same(seed: int) -> None:
    config = _perturbed(EvalConfig(), random.Random(seed))
    assert isinstance(config, EvalConfig) and config != EvalConfig()
    assert eval_check(100 + seed, games=12, plies=100, config=config) > 1000


def test_material_and_tables_only() -> None:
    """With the classical terms off, the score is material and tables, as evaluate's."""
    config = dataclasses.replace(EvalConfig(), classical=False)
    assert eval_check(7, games=6, plies=80, config=config) > 300


def test_the_labelled_sample_scores_the_same() -> None:
    """The quiet positions of Stockfish-labelled games (the tuner's data)."""
    config = Config().eval
    classical, evaluator = Classical(config), Evaluator(config)
    records = list(read_labels(DATA / "labels_sample.bin"))
    assert len(records) > 500
    for record in records:
        check_evaluation(classical, evaluator, record.board)


def test_the_check_sees_a_different_weight() -> None:
    """The comparison can fail: evaluations with different weights disagree."""
    config = EvalConfig()
    other = dataclasses.replace(config, tempo=(config.tempo[0] + 1, config.tempo[1]))
    with pytest.raises(Mismatch):
        check_evaluation(Classical(other), Evaluator(config), chess.Board())


def test_the_check_sees_a_different_feature_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The feature comparison can fail: a count left out is found (pure build: the
    compiled class cannot be patched)."""
    from blitzaco import classical as module

    if not module.INTERPRETED:
        pytest.skip("the compiled class cannot be patched")
    real = module.Classical._count

    def dropping(self: Classical, name: str, side: int, count: int) -> None:
        if name != "king.shield":
            real(self, name, side, count)

    monkeypatch.setattr(module.Classical, "_count", dropping)
    with pytest.raises(Mismatch, match="king.shield"):
        check_evaluation(Classical(EvalConfig()), Evaluator(EvalConfig()), chess.Board())


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


@pytest.mark.parametrize("classical", [True, False])
def test_the_eval_command_reads_the_native_evaluator(classical: bool) -> None:
    """``blitzaco eval`` (StaticEval.explain) traces the evaluator on the engine's
    own board: every term, the phase, the scale, the blended sums and the score equal
    evaluate.py's trace, and so does the printed table; with the classical terms off
    too (material and tables only)."""
    from blitzaco.evaluate import format_trace
    from blitzaco.pheromone import Trails
    from blitzaco.static_eval import StaticEval

    config = Config()
    config = dataclasses.replace(config, eval=dataclasses.replace(config.eval, classical=classical))
    static = StaticEval(config, Trails(config.pheromone))
    rng = random.Random(11)
    scales = set()
    for game in range(12):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        for _ in range(90):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            native, reference = static.classical_trace(board), static.classical.trace(board)
            got = (native.terms, native.phase, native.scale, native.mg, native.eg, native.score)
            assert got == (reference.terms, reference.phase, reference.scale, reference.mg, reference.eg,
                           reference.score), board.fen()
            scales.add(native.scale)
    assert format_trace(native) == format_trace(reference)
    assert static.explain(board)[: len(format_trace(reference))] == format_trace(reference)
    if classical:
        assert len(scales) > 1, "an endgame scale other than the normal one was met"
