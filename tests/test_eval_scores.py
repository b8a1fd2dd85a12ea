"""The evaluation's recorded scores (tests/data/eval_scores.csv, written by
tests/data/make_eval_scores.py): 200 fixed positions, standard and Chess960, scored
for the side to move by the shipped classical evaluation, by the same with every
weight perturbed, by material and tables alone, by the shipped network alone and by
the shipped blend. The engine must give every recorded number; a weight changed by
one is seen.

The numbers were checked, when recorded, against the python-chess evaluator that the
engine's own had been held to term by term; the properties the evaluation must keep
whatever its weights are tested in tests/test_classical.py and tests/test_network.py.
"""

from __future__ import annotations

import csv
import dataclasses
import random
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import chess
import pytest
from script_loader import load_script
from uci_driver import DATA

from blitzaco.board import Board
from blitzaco.bundled import bundled_file
from blitzaco.classical import Classical
from blitzaco.config import Config, EvalConfig
from blitzaco.network import NetEvaluator
from blitzaco.nnue import NetworkWeights, load_weights
from blitzaco.pheromone import Trails
from blitzaco.static_eval import StaticEval
from blitzaco.tools.boardcheck import reference_network_score

SCORES = DATA / "eval_scores.csv"
COLUMNS = ("classical", "perturbed", "tables", "network", "blend")


@dataclass(frozen=True)
class Row:
    """One recorded position and its five scores (side to move, centipawns)."""

    board: chess.Board
    scores: dict[str, int]


def _maker() -> ModuleType:
    """tests/data/make_eval_scores.py, the script that wrote the file (its seeded
    perturbation is the ``perturbed`` column's)."""
    return load_script(DATA / "make_eval_scores.py")


def _rows() -> list[Row]:
    with SCORES.open(newline="") as handle:
        reader = csv.DictReader(handle, delimiter=";")
        assert reader.fieldnames is not None and list(reader.fieldnames) == ["fen", "chess960", *COLUMNS]
        return [Row(chess.Board(row["fen"], chess960=row["chess960"] == "1"),
                    {name: int(row[name]) for name in COLUMNS}) for row in reader]


ROWS = _rows()


def _classical_config() -> EvalConfig:
    """The shipped evaluation weights with the network switched off."""
    shipped = Config().eval
    return dataclasses.replace(shipped, nn=dataclasses.replace(shipped.nn, enabled=False))


def _shipped_weights() -> NetworkWeights:
    path = bundled_file(Config().eval.nn.file)
    assert path is not None, "the shipped network is not installed"
    return load_weights(path)


def _scorer(evaluator: Classical) -> Callable[[chess.Board], int]:
    """The score of a python-chess board by *evaluator* (the search's evaluator,
    reset on the engine's board set up from it)."""

    def score(board: chess.Board) -> int:
        own = Board.from_chess(board)
        evaluator.reset(own)
        return int(evaluator.evaluate(own))

    return score


def _differing(column: str, score: Callable[[chess.Board], int]) -> list[str]:
    """The rows whose recorded *column* differs from *score*'s, as ``fen: got,
    recorded``."""
    return [f"{row.board.fen()}: {got}, recorded {row.scores[column]}" for row in ROWS
            if (got := score(row.board)) != row.scores[column]]


def test_the_file_holds_the_positions_it_says() -> None:
    """200 distinct legal positions, some of them Chess960, none over."""
    assert len(ROWS) == 200
    assert len({row.board.fen() for row in ROWS}) == 200
    assert sum(row.board.chess960 for row in ROWS) >= 30
    assert all(row.board.is_valid() and not row.board.is_game_over() for row in ROWS)
    assert len({row.scores["classical"] for row in ROWS}) > 150  # real positions, not one score repeated


def test_the_classical_evaluation_gives_the_recorded_scores() -> None:
    assert _differing("classical", _scorer(Classical(_classical_config()))) == []


def test_perturbed_weights_give_the_recorded_scores() -> None:
    """Every weight moved a little (the script's seeded perturbation): a weight read in
    another's place shows here even where the shipped weights are equal by chance."""
    base = _classical_config()
    perturbed = _maker().perturbed_config(base, random.Random(0))
    assert isinstance(perturbed, EvalConfig) and perturbed != base
    assert _differing("perturbed", _scorer(Classical(perturbed))) == []


def test_material_and_tables_alone_give_the_recorded_scores() -> None:
    config = dataclasses.replace(_classical_config(), classical=False)
    assert _differing("tables", _scorer(Classical(config))) == []


def test_the_network_alone_gives_the_recorded_scores() -> None:
    """The shipped network alone (weight 1, no classical share): the search's
    evaluator, the eval command's network score and the file format's definition
    written out plainly all give the recorded numbers."""
    weights = _shipped_weights()
    assert _differing("network", _scorer(NetEvaluator(_classical_config(), weights, 1.0, 0.0))) == []
    assert _differing("network", lambda board: reference_network_score(weights, board)) == []
    static = StaticEval(Config(), Trails(Config().pheromone))
    assert _differing("network", static.network_score) == []


def test_the_shipped_blend_gives_the_recorded_scores() -> None:
    """The shipped configuration, as the search and the tools evaluate a position."""
    config = Config()
    static = StaticEval(config, Trails(config.pheromone))
    assert static.net is not None, static.network_message
    assert _differing("blend", static.evaluate) == []
    nn = config.eval.nn
    evaluator = NetEvaluator(config.eval, _shipped_weights(), nn.weight, nn.classical, nn.fifty_move)
    assert _differing("blend", _scorer(evaluator)) == []


def _changed(config: EvalConfig, path: str, index: int | None = None) -> EvalConfig:
    """*config* with the weight at *path* (dotted; *index* into a tuple, and into
    the pair it holds, first element) one higher."""
    *parents, name = path.split(".")
    holders = [config]
    for part in parents:
        holders.append(getattr(holders[-1], part))
    value = getattr(holders[-1], name)
    if index is None:
        value = (value[0] + 1, *value[1:]) if isinstance(value, tuple) else value + 1
    else:
        item = value[index]
        item = (item[0] + 1, *item[1:]) if isinstance(item, tuple) else item + 1
        value = (*value[:index], item, *value[index + 1:])
    for holder, part in zip(reversed(holders), reversed([*parents, name]), strict=True):
        value = dataclasses.replace(holder, **{part: value})
    assert isinstance(value, EvalConfig) and value != config
    return value


@pytest.mark.parametrize(("path", "index"), [
    ("tempo", None),
    ("pawns.isolated", None),
    ("pieces.rook_open_file", None),
    ("pieces.mobility_knight", 4),
    ("pst.knight_mg", 27),
    ("king.shield", None),
])
def test_the_table_check_sees_a_weight_changed_by_one(path: str, index: int | None) -> None:
    """The comparison can fail: the classical evaluation with one weight one higher
    differs from the recorded column somewhere."""
    config = _changed(_classical_config(), path, index)
    assert _differing("classical", _scorer(Classical(config))) != []


def test_the_table_check_sees_a_different_network() -> None:
    """The network's comparison can fail: the output bias one centipawn higher
    (QA * QB in the file's units) is seen."""
    weights = _shipped_weights()
    other = dataclasses.replace(weights, b2=(weights.b2[0] + weights.qa * weights.qb,))
    assert _differing("network", _scorer(NetEvaluator(_classical_config(), other, 1.0, 0.0))) != []
