"""The classical evaluation as the ``eval`` command and the tuner see it
(:mod:`blitzaco.trace`): its properties over the test suites (colour mirror, the trace
adding up to the score the search gets), the features times the weights rebuilding
every term, what each classical term recognises in positions built for it, the
printed table, and ``eval``'s own lines against the score."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import chess
import pytest
from uci_driver import DATA

from blitzaco.board import Board
from blitzaco.classical import FULL_PHASE, SCALE_NORMAL, Classical
from blitzaco.config import Config, EvalConfig, config_from_dict
from blitzaco.pheromone import Trails
from blitzaco.static_eval import StaticEval
from blitzaco.tools.bench import BENCH_FENS
from blitzaco.tools.boardcheck import check_evaluation
from blitzaco.trace import Trace, classical_trace, format_trace

SUITES = ("wac.epd", "bratko-kopec.epd", "openings.epd", "perft.epd", "endgames.epd")


def suite_boards() -> Iterator[chess.Board]:
    """Every position of the test suites and the bench."""
    for name in SUITES:
        for line in (DATA / name).read_text().splitlines():
            if line.strip():
                yield chess.Board(" ".join(line.split()[:4]) + " 0 1")
    for fen in BENCH_FENS:
        yield chess.Board(fen)


def white_score(classical: Classical, board: chess.Board) -> int:
    """The score the search gets for *board* from *classical* (reset on the engine's
    board set up from it), White's view."""
    own = Board.from_chess(board)
    classical.reset(own)
    score = int(classical.evaluate(own))
    return score if board.turn == chess.WHITE else -score


def test_suites_hold_hundreds_of_positions() -> None:
    assert len(list(suite_boards())) > 550


def test_every_suite_position_holds_the_properties() -> None:
    """The colour-flipped position (mirror() flips the board vertically, swaps the
    colours and the side to move) gets the opposite score, term by term, and the
    trace adds up to the score (:func:`blitzaco.tools.boardcheck.check_evaluation`)."""
    classical = Classical(Config().eval)
    scores = {check_evaluation(classical, board) for board in suite_boards()}
    assert len(scores) > 200


def test_symmetry_also_with_odd_weights() -> None:
    """Odd weights make rounding visible: the endgame scale and the phase blend must
    round the same way for both colours."""
    odd = config_from_dict({
        "eval": {
            "tempo": [7, 3],
            "scale": {"opposite_bishops": 33, "no_pawns": 11},
            "king": {"endgame_share": 13},
            "pawns": {"isolated": [-11, -17], "doubled": [-9, -23]},
        }
    })
    classical = Classical(odd.eval)
    for board in suite_boards():
        check_evaluation(classical, board)


def test_trace_terms_add_up_to_the_score_the_search_gets() -> None:
    """The eval command's trace: its rows add up to the sums blended (tempo aside),
    and its score is the search's evaluator's."""
    classical = Classical(Config().eval)
    for board in suite_boards():
        trace = classical_trace(board)
        rows = list(trace.rows())
        assert sum(row[5] for row in rows) == trace.mg + (trace.terms["Tempo"][0] - trace.terms["Tempo"][2])
        assert sum(row[6] for row in rows) == trace.eg + (trace.terms["Tempo"][1] - trace.terms["Tempo"][3])
        assert trace.score == white_score(classical, board), board.fen()


def _weight(config: EvalConfig, feature: str) -> tuple[int, int]:
    """The [mg, eg] weight a trace feature name refers to (a piece-square entry
    counts for its own phase only)."""
    path, _, index = feature.partition("[")
    value: object = config
    for part in path.split("."):
        value = getattr(value, part)
    if index:
        value = value[int(index.rstrip("]"))]  # type: ignore[index]
    if isinstance(value, int):
        return (value, 0) if path.endswith("_mg") else (0, value)
    return value  # type: ignore[return-value]


def _king_penalty(trace: Trace, color: bool) -> tuple[int, int]:
    """The king-attack penalty of *color*'s king from the enemy's attack counts."""
    king = Config().eval.king
    enemy = 1 if color else 0
    counts = [trace.features.get(f"king.attack_weight[{i}]", [0, 0])[enemy] for i in range(4)]
    units = sum(w * n for w, n in zip(king.attack_weight, counts, strict=True))
    attackers = trace.features.get("king.attackers", [0, 0])[enemy]
    penalty = units * king.attacker_scale[min(attackers, 7)] // 100
    return penalty, penalty * king.endgame_share // 100


def test_linear_features_times_weights_rebuild_every_term() -> None:
    """The tuner fits weights to feature counts: counts times weights must give the
    score back (the king-attack penalty, a formula, is computed from its counts)."""
    config = Config().eval
    for board in list(suite_boards())[::7]:
        trace = classical_trace(board)
        mg = eg = 0
        for feature, (white, black) in trace.features.items():
            if feature.startswith("king.attack") or feature == "king.attackers":
                continue
            m, e = _weight(config, feature)
            mg += m * (white - black)
            eg += e * (white - black)
        attack = [_king_penalty(trace, color) for color in (True, False)]
        mg += -attack[0][0] + attack[1][0]
        eg += -attack[0][1] + attack[1][1]
        tempo_mg, tempo_eg = (config.tempo if board.turn else (-config.tempo[0], -config.tempo[1]))
        assert (mg, eg) == (trace.mg + tempo_mg, trace.eg + tempo_eg), board.fen()


def _features(fen: str) -> dict[str, list[int]]:
    """The feature counts of the shipped classical evaluation of *fen*, those not
    met (zero for both colours) left out."""
    return {name: counts for name, counts in classical_trace(chess.Board(fen)).features.items() if any(counts)}


def test_pawn_structure_is_recognised() -> None:
    # White: a6 (isolated, passed), c3 and c4 (doubled; d2 is beside their file, so
    # they are not isolated), d2 defends e3. Black: e6 and f6 side by side.
    features = _features("4k3/8/P3pp2/8/2P5/2P1P3/3P4/4K3 w - - 0 1")
    assert features["pawns.doubled"][0] == 1  # the front one of the pair
    assert features["pawns.isolated"][0] == 1
    assert features["pawns.passed[5]"][0] == 1  # a6: the sixth rank is index 5
    assert features["pawns.phalanx"][1] == 2
    assert features["pawns.supported"][0] == 2  # d2 defends c3 and e3
    # d3 below: its only neighbour c4 is ahead of it and its front square d4 is
    # attacked by the e5 pawn: backward. With c2 instead of c4 (behind d3) it is not.
    assert _features("4k3/8/8/4p3/2P5/3P4/8/4K3 w - - 0 1")["pawns.backward"] == [1, 0]
    assert "pawns.backward" not in _features("4k3/8/8/4p3/8/3P4/2P5/4K3 w - - 0 1")
    # Without the e5 pawn nothing attacks d4: not backward either.
    assert "pawns.backward" not in _features("4k3/8/8/8/2P5/3P4/8/4K3 w - - 0 1")
    # Black's mirror image of the first case.
    assert _features("4k3/8/3p4/2p5/4P3/8/8/4K3 w - - 0 1")["pawns.backward"] == [0, 1]


def test_passed_pawn_needs_free_files_ahead() -> None:
    assert "pawns.passed[4]" in _features("k7/8/8/4P3/8/8/8/4K3 w - - 0 1")
    assert not any(f.startswith("pawns.passed[") for f in _features("k7/5p2/8/4P3/8/8/8/4K3 w - - 0 1"))
    # A black pawn beside it (same rank) does not stop it, nor one behind it.
    assert "pawns.passed[4]" in _features("k7/8/8/3pP3/8/8/8/4K3 w - - 0 1")
    assert "pawns.passed[4]" in _features("k7/8/8/4P3/3p4/8/8/4K3 w - - 0 1")
    # Only the front pawn of two on a file counts.
    doubled = _features("k7/8/8/4P3/4P3/8/8/4K3 w - - 0 1")
    assert "pawns.passed[4]" in doubled and "pawns.passed[3]" not in doubled
    free = _features("k7/8/8/4P3/8/8/8/4K3 w - - 0 1")
    blocked = _features("k7/8/4n3/4P3/8/8/8/4K3 w - - 0 1")
    assert "pawns.passed_free[4]" in free and "pawns.passed_free[4]" not in blocked
    # The kings' distances to the square in front (e6), times rank - 2 = 2.
    assert free["pawns.passed_enemy_king"][0] == 4 * 2  # a8 to e6: 4 squares
    assert free["pawns.passed_own_king"][0] == 5 * 2  # e1 to e6: 5 squares


def test_pieces_terms() -> None:
    features = _features("r3k3/1R6/8/8/8/8/P7/4K2R w K - 0 1")
    assert features["pieces.rook_seventh"][0] == 1  # b7 with the black king on the eighth
    assert features["pieces.rook_open_file"] == [2, 0]  # b7 and h1: no pawns on either file
    assert features["pieces.rook_semi_open_file"][1] == 1  # a8: White's a2 pawn only
    pair = _features("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1")
    assert pair["pieces.bishop_pair"] == [1, 0]
    # e5, defended by d4; c6 can never attack it.
    outpost = _features("4k3/8/2p5/4N3/3P4/8/8/4K3 w - - 0 1")
    assert outpost["pieces.knight_outpost"] == [1, 0]
    for fen in (
        "4k3/8/3p4/4N3/3P4/8/8/4K3 w - - 0 1",  # d6 attacks e5 now
        "4k3/5p2/2p5/4N3/3P4/8/8/4K3 w - - 0 1",  # f7 can reach f6
        "4k3/8/2p5/4N3/8/8/8/4K3 w - - 0 1",  # no pawn defends e5
    ):
        assert "pieces.knight_outpost" not in _features(fen), fen


def test_mobility_counts_safe_squares() -> None:
    # Knight on a1 sees b3 and c2; with a black pawn on c4 b3 is attacked by it.
    features = _features("4k3/8/8/8/2p5/8/8/N3K3 w - - 0 1")
    assert features["pieces.mobility_knight[1]"] == [1, 0]


def test_threats_and_hanging_pieces() -> None:
    features = _features("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1")  # e4 pawn attacks the d5 knight
    assert features["pieces.threat_by_pawn"] == [1, 0]
    assert features["pieces.hanging"] == [1, 0]  # and nothing defends it
    defended = _features("4k3/8/4p3/3n4/4P3/8/8/4K3 w - - 0 1")
    assert defended["pieces.threat_by_pawn"] == [1, 0] and "pieces.hanging" not in defended


def test_king_safety() -> None:
    sheltered = _features("4k3/8/8/8/8/8/5PPP/6K1 w - - 0 1")
    assert sheltered["king.shield"][0] == 3
    assert sheltered["king.open_file"][1] == 2  # Black's king on e8: no pawns on d or e
    assert sheltered["king.semi_open_file"][1] == 1  # only White's f2 on the f-file
    calm = classical_trace(chess.Board("6k1/5ppp/8/8/8/5N2/5PPP/3Q1RK1 b - - 0 1"))
    assert calm.features["king.attackers"] == [0, 0]
    # Queen h6 and knight g5 both reach squares next to the black king: two attackers
    # (counted for White, the attacking side), and Black's king safety pays for it.
    storm = classical_trace(chess.Board("6k1/5pp1/7Q/6N1/8/8/5PPP/6K1 b - - 0 1"))
    assert storm.features["king.attackers"] == [2, 0]
    assert storm.terms["King safety"][2] < calm.terms["King safety"][2]


def test_drawish_endgames_are_scaled() -> None:
    same = classical_trace(chess.Board("4k3/4b3/8/8/3P4/2P1B3/8/4K3 w - - 0 1"))
    assert same.scale == SCALE_NORMAL  # e7 and e3: both dark squares
    opposite = classical_trace(chess.Board("4k3/8/4b3/8/3P4/2P1B3/8/4K3 w - - 0 1"))
    assert opposite.scale == Config().eval.scale.opposite_bishops  # e6 light, e3 dark
    with_rooks = classical_trace(chess.Board("r3k3/8/4b3/8/3P4/2P1B3/8/R3K3 w - - 0 1"))
    assert with_rooks.scale == Config().eval.scale.opposite_bishops_with_pieces
    # A lone knight cannot win: the endgame part is scaled to nothing, and with
    # phase 1 of 24 the score is what is left of the midgame part.
    minor = classical_trace(chess.Board("4k3/8/8/8/8/8/8/3NK3 w - - 0 1"))
    assert minor.scale == 0
    assert minor.score == (minor.mg + Config().eval.tempo[0]) * minor.phase // FULL_PHASE
    rook_vs_bishop = classical_trace(chess.Board("4k3/8/8/3b4/8/8/8/3RK3 w - - 0 1"))
    assert rook_vs_bishop.scale == Config().eval.scale.no_pawns


def test_material_and_tables_only_when_classical_is_off() -> None:
    """``classical = false``: the score is the incremental material and table sums
    blended by the phase, no more, and the trace says so."""
    config = dataclasses.replace(Config().eval, classical=False)
    plain = Classical(config)
    board = chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    own = Board.from_chess(board)
    plain.reset(own)
    mg, eg, phase = plain.mg[plain.top], plain.eg[plain.top], plain.phase[plain.top]
    assert plain.evaluate(own) == (mg * min(phase, 24) + eg * (24 - min(phase, 24))) // 24
    trace = classical_trace(board, config=config)
    assert trace.score == white_score(plain, board)
    assert trace.score != white_score(Classical(Config().eval), board)
    assert trace.terms["Mobility"] == [0, 0, 0, 0] and not any(f.startswith("pieces.") for f in trace.features)


def test_eval_table_format() -> None:
    lines = format_trace(classical_trace(chess.Board()))
    assert lines[0].split() == ["Term", "|", "White", "|", "Black", "|", "Total"]
    material = next(line for line in lines if line.strip().startswith("Material"))
    assert material.split("|")[3].split() == ["0.00", "0.00"]
    total = next(line for line in lines if line.strip().startswith("Total"))
    tempo = Config().eval.tempo  # the rows add up: in the start position only the tempo differs
    assert total.split("|")[3].split() == [f"{tempo[0] / 100:.2f}", f"{tempo[1] / 100:.2f}"]
    assert lines[-1] == f"Phase 24/{FULL_PHASE} (midgame 100%, endgame 0%), endgame scale 64/{SCALE_NORMAL}"


@pytest.mark.parametrize("fen", ["8/8/8/8/8/8/8/K6k w - - 0 1", "4k3/8/8/8/8/8/8/4K3 b - - 0 1"])
def test_bare_kings(fen: str) -> None:
    check_evaluation(Classical(Config().eval), chess.Board(fen))


@pytest.mark.parametrize("classical", [True, False])
def test_the_eval_command_traces_the_search_evaluation(classical: bool) -> None:
    """``blitzaco eval`` (StaticEval.explain) over random games (half Chess960), the
    network off: its table is the trace of the evaluation, the trace's score (White's
    view) is StaticEval's score, which its final line prints; the search's evaluator,
    used on other positions before, traces as one made afresh. With the classical
    terms off too (material and tables only)."""
    config = config_from_dict({"eval": {"nn": {"enabled": False}, "classical": classical}})
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
            score = static.evaluate(board)
            kept, fresh = static.classical_trace(board), classical_trace(board, config=config.eval)
            got = (kept.terms, kept.features, kept.phase, kept.scale, kept.mg, kept.eg, kept.score)
            assert got == (fresh.terms, fresh.features, fresh.phase, fresh.scale, fresh.mg, fresh.eg,
                           fresh.score), board.fen()
            assert kept.score == (score if board.turn else -score), board.fen()
            scales.add(kept.scale)
        lines = static.explain(board)
        table = format_trace(kept)
        assert lines[: len(table)] == table
        assert lines[-1] == f"Final evaluation {kept.score / 100:+.2f} (white side)"
    if classical:
        assert len(scales) > 1, "an endgame scale other than the normal one was met"


def test_wdl_model_adds_up_and_grows_with_the_score() -> None:
    from blitzaco.wdl import material, wdl

    config = Config().wdl
    assert material(chess.Board()) == 78
    previous = -1
    for score in range(-2000, 2001, 50):
        for pieces in (0, 20, 40, 78, 100):
            win, draw, loss = wdl(score, pieces, config)
            assert win + draw + loss == 1000 and min(win, draw, loss) >= 0
        win = wdl(score, 40, config)[0]
        assert win >= previous
        previous = win
    assert wdl(0, 40, config)[0] == wdl(0, 40, config)[2]  # an even score is symmetric
    assert wdl(123, 40, config, mate=3) == (1000, 0, 0) and wdl(-5, 40, config, mate=-2) == (0, 0, 1000)
