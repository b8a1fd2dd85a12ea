"""The network term: its file format, the evaluator's accumulator (followed along
games and packed three neurons to a word) against one computed from scratch and the
format's definition, symmetry, the one evaluation entry point, the engine's behaviour
with a bad file, and (with torch) the trainer's float output against the engine's
quantised one."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import chess
import chess.engine
import numpy as np
import pytest
from uci_driver import ENGINE_COMMAND

from blitzaco.board import Board
from blitzaco.config import Config, EvalConfig, config_from_dict
from blitzaco.network import NetEvaluator
from blitzaco.nnue import (
    INPUTS,
    LANE_OFFSET,
    QA,
    WEIGHT_LIMIT,
    Network,
    NetworkError,
    NetworkWeights,
    decode_network,
    decode_weights,
    encode_network,
    feature,
    load_network,
)
from blitzaco.pheromone import Trails
from blitzaco.static_eval import StaticEval
from blitzaco.tools.boardcheck import code_of, reference_network_score

CLASSICAL = config_from_dict({"eval": {"nn": {"enabled": False}}})  # the default is the blend
DATA = Path(__file__).parent / "data"
FENS = [
    chess.STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",  # castling both ways
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",  # en passant
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",  # promotions
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",  # promotions with capture
]
CHESS960 = ["bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
            "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9"]


def random_network(hidden: int = 8, seed: int = 1, residual: bool = False) -> bytes:
    """A network file with random weights at the limits the trainer keeps."""
    rng = random.Random(seed)
    limit = int(WEIGHT_LIMIT * QA)
    w1 = [rng.randint(-limit, limit) for _ in range(INPUTS * hidden)]
    b1 = [rng.randint(-QA, 2 * QA) for _ in range(hidden)]
    w2 = [rng.randint(-3000, 3000) for _ in range(2 * hidden)]
    return encode_network(w1, b1, w2, rng.randint(-50000, 50000), hidden=hidden, residual=residual,
                          meta={"positions": 123})


@pytest.fixture(scope="module")
def net() -> Network:
    return decode_network(random_network(), "random.bin")


def _random_games(board: chess.Board, rng: random.Random, plies: int):
    """Yield (move, board after it) along a random game from *board*."""
    board = board.copy()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            return
        # Prefer the special moves, so that every path of push is crossed.
        special = [m for m in moves if m.promotion or board.is_castling(m) or board.is_en_passant(m)]
        move = rng.choice(special) if special and rng.random() < 0.5 else rng.choice(moves)
        board.push(move)
        yield move, board


def _values(evaluator: NetEvaluator, board: Board) -> list[int]:
    """The first-layer values of *evaluator* at its current ply (computed first, as
    for a score): White's perspective's ``hidden`` neurons, then Black's, read back
    from the packed words (three signed 21-bit lanes to a word)."""
    evaluator.network(board)
    words = evaluator.words
    base = evaluator.ply * 2 * words
    values = []
    for perspective in range(2):
        lanes = []
        for j in range(words):
            word = evaluator.acc[base + perspective * words + j]
            for _ in range(3):
                lane = ((word + (1 << 20)) & ((1 << 21) - 1)) - (1 << 20)
                lanes.append(lane)
                word = (word - lane) >> 21
            assert word == 0, "a lane carried beyond the word's three"
        values.extend(lanes[: evaluator.hidden])
    return values


def _plain_values(weights: NetworkWeights, board: chess.Board) -> list[int]:
    """The first-layer values of *board* by the format's definition: the biases plus
    the rows of the pieces' features, White's perspective then Black's."""
    hidden = weights.hidden
    values = []
    for perspective in (chess.WHITE, chess.BLACK):
        sums = list(weights.b1)
        for square, piece in board.piece_map().items():
            row = feature(perspective, piece.color, piece.piece_type, square) * hidden
            for j in range(hidden):
                sums[j] += weights.w1[row + j]
        values.extend(sums)
    return values


def _fresh(weights: NetworkWeights, board: chess.Board) -> tuple[NetEvaluator, Board]:
    """An evaluator of *weights* reset on the engine's board set up from *board*."""
    evaluator = NetEvaluator(EvalConfig(), weights)
    own = Board.from_chess(board.copy(stack=False))
    evaluator.reset(own)
    return evaluator, own


@pytest.mark.parametrize("fen", FENS + CHESS960)
def test_the_incremental_accumulator_equals_the_one_from_scratch(net: Network, fen: str) -> None:
    """Along random games (castling, en passant and promotions favoured, null moves
    and take-backs, scores asked at about half the positions so that the lazy
    accumulator catches up over several plies) the accumulator followed by the
    evaluator equals one reset on the position and the plain sums, and the score the
    format's definition."""
    weights = net.weights
    rng = random.Random(fen)
    start = chess.Board(fen, chess960=fen in CHESS960)
    crossed = {"castling": 0, "en passant": 0, "promotion": 0}
    checked = 0
    for _ in range(6):
        reference = start.copy()
        board = Board.from_chess(reference)
        follower = NetEvaluator(EvalConfig(), weights)
        follower.reset(board)
        for _ in range(60):
            moves = list(reference.legal_moves)
            if not moves:
                break
            special = [m for m in moves if m.promotion or reference.is_castling(m) or reference.is_en_passant(m)]
            move = rng.choice(special) if special and rng.random() < 0.5 else rng.choice(moves)
            crossed["castling"] += reference.is_castling(move)
            crossed["en passant"] += reference.is_en_passant(move)
            crossed["promotion"] += bool(move.promotion)
            reference.push(move)
            board.make(code_of(move))
            follower.make(board)
            if rng.random() < 0.2 and not reference.is_check():  # a null move and back
                board.make_null()
                follower.make(board)
                reference.push(chess.Move.null())
                if rng.random() < 0.5:
                    assert follower.network(board) == reference_network_score(weights, reference)
                reference.pop()
                board.unmake()
                follower.unmake()
            if rng.random() < 0.5:
                fresh, own = _fresh(weights, reference)
                values = _values(follower, board)
                assert values == _values(fresh, own) == _plain_values(weights, reference), reference.fen()
                assert follower.network(board) == fresh.network(own) == reference_network_score(weights, reference)
                checked += 1
        while reference.move_stack:  # unmake restores the line's accumulators
            reference.pop()
            board.unmake()
            follower.unmake()
            if rng.random() < 0.3:
                assert _values(follower, board) == _plain_values(weights, reference), reference.fen()
    assert checked > 20
    if fen != chess.STARTING_FEN and fen not in CHESS960:
        assert any(crossed.values()), crossed


def test_every_lane_holds_its_exact_sum() -> None:
    """With weights at the limits the trainer keeps, the packed lanes of any
    reachable accumulator read back as the exact sums (none carries into the next)."""
    weights = decode_network(random_network(hidden=10, seed=3)).weights
    assert max(map(abs, weights.w1)) > 0.9 * WEIGHT_LIMIT * QA
    rng = random.Random(4)
    board = chess.Board()
    for _ in range(80):
        evaluator, own = _fresh(weights, board)
        values = _values(evaluator, own)
        assert values == _plain_values(weights, board), board.fen()
        assert all(abs(value) < LANE_OFFSET for value in values)
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))


@pytest.mark.parametrize("fen", FENS + CHESS960)
def test_a_position_and_its_colour_mirror_get_opposite_scores(net: Network, fen: str) -> None:
    board = chess.Board(fen, chess960=fen in CHESS960)
    mirror = board.mirror()
    # Side to move's view: the same number; White's view: opposite.
    evaluator, own = _fresh(net.weights, board)
    mirrored, mirror_own = _fresh(net.weights, mirror)
    assert evaluator.network(own) == mirrored.network(mirror_own) == reference_network_score(net.weights, board)
    # The mirror's White values are the position's Black values and the other way round.
    values, mirror_values = _values(evaluator, own), _values(mirrored, mirror_own)
    hidden = net.hidden
    assert (mirror_values[:hidden], mirror_values[hidden:]) == (values[hidden:], values[:hidden])


def test_features_mirror_between_perspectives() -> None:
    own_pawn = feature(chess.WHITE, chess.WHITE, chess.PAWN, chess.E2)
    assert own_pawn == feature(chess.BLACK, chess.BLACK, chess.PAWN, chess.E7)
    assert feature(chess.WHITE, chess.BLACK, chess.KING, chess.E8) == 384 + 5 * 64 + chess.E8
    assert sorted({feature(p, c, t, s) for p in chess.COLORS for c in chess.COLORS for t in chess.PIECE_TYPES
                   for s in chess.SQUARES}) == list(range(INPUTS))


def test_the_evaluation_is_the_dot_product_of_the_clipped_lanes() -> None:
    """The packed arithmetic against a plain computation from the weights."""
    hidden = 4
    rng = random.Random(7)
    w1 = [rng.randint(-800, 800) for _ in range(INPUTS * hidden)]
    b1 = [rng.randint(-300, 600) for _ in range(hidden)]
    w2 = [rng.randint(-2000, 2000) for _ in range(2 * hidden)]
    net = decode_network(encode_network(w1, b1, w2, 12345, hidden=hidden))
    for fen in FENS:
        board = chess.Board(fen)
        sums = {}
        for perspective in chess.COLORS:
            sums[perspective] = [
                b1[j] + sum(w1[feature(perspective, p.color, p.piece_type, sq) * hidden + j]
                            for sq, p in board.piece_map().items())
                for j in range(hidden)
            ]
        active = [min(max(v, 0), QA) for v in sums[board.turn] + sums[not board.turn]]
        expected = (sum(a * w for a, w in zip(active, w2, strict=True)) + 12345) * 100 // (QA * 1024)
        evaluator, own = _fresh(net.weights, board)
        assert evaluator.network(own) == expected
        assert evaluator.evaluate(own) == expected  # weight 1, no classical share
        assert reference_network_score(net.weights, board) == expected  # the other tests' reference


def test_output_buckets_are_version_2_and_one_output_keeps_version_1() -> None:
    """A net with one output is written as version 1 (the bytes of every earlier
    net); several outputs as version 2, read back weight for weight; a bucket count
    outside 1 to 32 and a truncated version 2 are refused."""
    hidden = 4
    rng = random.Random(11)
    w1 = [rng.randint(-300, 300) for _ in range(INPUTS * hidden)]
    b1 = [rng.randint(-300, 300) for _ in range(hidden)]
    one = encode_network(w1, b1, [5] * (2 * hidden), 7, hidden=hidden)
    assert one[8:10] == b"\x01\x00" and encode_network(w1, b1, [5] * (2 * hidden), [7], hidden=hidden) == one
    assert decode_weights(one).b2 == (7,) and decode_weights(one).buckets == 1
    w2 = [rng.randint(-3000, 3000) for _ in range(3 * 2 * hidden)]
    three = encode_network(w1, b1, w2, [1, -2, 3], hidden=hidden, meta={"positions": 9})
    assert three[8:10] == b"\x02\x00"
    weights = decode_weights(three)
    assert (weights.w1, weights.b1, weights.w2, weights.b2, weights.buckets) == (
        tuple(w1), tuple(b1), tuple(w2), (1, -2, 3), 3)
    assert "3 output buckets" in decode_network(three, "x").describe()
    with pytest.raises(ValueError):
        encode_network(w1, b1, w2, [1, 2], hidden=hidden)  # weights for 3, biases for 2
    with pytest.raises(ValueError):
        encode_network(w1, b1, [], [], hidden=hidden)
    with pytest.raises(NetworkError, match="truncated"):  # cut short, its checksum right
        decode_network(three[:200] + zlib.crc32(three[:200]).to_bytes(4, "little"))
    for count in (0, 33):
        body = bytearray(three[:-4])
        body[20:22] = count.to_bytes(2, "little")
        with pytest.raises(NetworkError, match="unsupported shape"):
            decode_network(bytes(body) + zlib.crc32(body).to_bytes(4, "little"))
    body = bytearray(three[:-4])
    body[8:10] = (3).to_bytes(2, "little")
    with pytest.raises(NetworkError, match="version 3"):
        decode_network(bytes(body) + zlib.crc32(body).to_bytes(4, "little"))


def test_the_file_format_round_trips_and_refuses_damage(tmp_path: Path) -> None:
    blob = random_network(hidden=4)
    net = decode_network(blob, "x")
    assert net.hidden == 4 and net.meta == {"positions": 123} and not net.residual
    assert decode_network(random_network(hidden=4, residual=True)).residual
    damaged = bytearray(blob)
    damaged[100] ^= 1
    with pytest.raises(NetworkError, match="checksum"):
        decode_network(bytes(damaged))
    with pytest.raises(NetworkError):
        decode_network(blob[:-40])
    with pytest.raises(NetworkError, match="not a BlitzACO network"):
        decode_network(b"PK\x03\x04" + blob[4:])
    with pytest.raises(NetworkError, match="cannot read"):
        load_network(tmp_path / "missing.bin")
    with pytest.raises(NetworkError, match="cannot read"):
        load_network(tmp_path)  # a directory
    path = tmp_path / "ok.bin"
    path.write_bytes(blob)
    assert load_network(path).name == "ok.bin"


def test_weights_that_could_carry_between_lanes_are_refused() -> None:
    hidden = 2
    w1 = [0] * (INPUTS * hidden)
    w1[0] = LANE_OFFSET // 16  # 32 pieces of this would overflow a lane
    with pytest.raises(NetworkError, match="too large"):
        decode_network(encode_network(w1, [0, 0], [1, 1, 1, 1], 0, hidden=hidden))


def _static(tmp_path: Path, blob: bytes, weight: float = 1.0, share: float = 0.0, fifty_move: int = 0) -> StaticEval:
    path = tmp_path / "net.bin"
    path.write_bytes(blob)
    nn = {"enabled": True, "file": str(path), "weight": weight, "classical": share, "fifty_move": fifty_move}
    config = config_from_dict({"eval": {"nn": nn}})
    return StaticEval(config, Trails(config.pheromone))


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize(("weight", "share"), [(1.0, 0.0), (0.5, 0.0), (0.5, 0.5), (0.7, 0.3)])
def test_search_and_eval_command_agree(tmp_path: Path, residual: bool, weight: float, share: float) -> None:
    static = _static(tmp_path, random_network(residual=residual), weight, share)
    assert static.net is not None and static.network_message and "using network" in static.network_message
    classical = StaticEval(CLASSICAL, Trails(CLASSICAL.pheromone))
    for fen in FENS + CHESS960:
        board = chess.Board(fen, chess960=fen in CHESS960)
        score = static.evaluate(board)
        lines = static.explain(board)
        final = float(lines[-1].split()[2])
        assert round(score / 100 if board.turn else -score / 100, 2) == final
        network = static.network_score(board)
        assert network == reference_network_score(static.net.weights, board)
        net_part = int(weight * network)
        classical_score = classical.evaluate(board)
        base = classical_score if residual else int(share * classical_score)
        assert score == base + net_part
        # The search's evaluator gives the same score.
        evaluator = static.evaluator()
        own = Board.from_chess(board)
        evaluator.reset(own)
        assert evaluator.evaluate(own) == score
        assert any(line.startswith("Network score") for line in lines)
    with pytest.raises(ValueError, match="switched off"):
        classical.network_score(chess.Board())


def test_the_fifty_move_scale_is_the_same_in_every_path(tmp_path: Path) -> None:
    """``[eval.nn] fifty_move``: the blend times (N - halfmove clock) / N, rounded
    toward 0, 0 from N on; StaticEval's score, ``eval``'s final line and the search's
    evaluator agree, a colour mirror scores the same for the side to move, and the
    evaluator's cache (by key, which does not hold the clock) does not mix clocks."""
    blob = random_network(seed=7)
    scaled = _static(tmp_path, blob, 0.3, 0.7, fifty_move=200)
    plain = _static(tmp_path, blob, 0.3, 0.7)
    evaluator = scaled.evaluator()
    for fen in FENS[:4]:
        for clock in (0, 1, 37, 150, 199, 200, 260):
            board = chess.Board(fen)
            board.halfmove_clock = clock
            raw = plain.evaluate(board)
            left = max(0, 200 - clock)
            expected = abs(raw) * left // 200 * (1 if raw >= 0 else -1)
            assert scaled.evaluate(board) == expected
            assert scaled.evaluate(board.mirror()) == expected
            final = float(scaled.explain(board)[-1].split()[2])
            assert round(expected / 100 if board.turn else -expected / 100, 2) == final
            own = Board.from_chess(board)
            evaluator.reset(own)
            assert evaluator.evaluate(own) == expected, (fen, clock)
            if clock == 0:
                assert expected == raw
            if clock >= 200:
                assert expected == 0
    assert any(line.startswith("Fifty-move scale") for line in scaled.explain(chess.Board()))
    assert not any(line.startswith("Fifty-move scale") for line in plain.explain(chess.Board()))


def test_the_residual_sum_is_cached_by_key_and_stays_right_along_games(tmp_path: Path) -> None:
    """A residual net's score is cached by position key: met again (a transposition,
    a position left and re-entered), the cached sum is the one computed afresh."""
    static = _static(tmp_path, random_network(residual=True))
    assert static.net is not None
    weights = static.net.weights
    classical = StaticEval(CLASSICAL, Trails(CLASSICAL.pheromone))
    evaluator = static.evaluator()  # the search's: it follows the game
    reference = chess.Board()
    board = Board.from_chess(reference)
    evaluator.reset(board)
    seen: dict[int, int] = {}
    for move, after in _random_games(chess.Board(), random.Random(5), 80):
        reference.push(move)
        board.make(code_of(move))
        evaluator.make(board)
        expected = classical.evaluate(after) + reference_network_score(weights, after)
        assert evaluator.evaluate(board) == expected == evaluator.evaluate(board), after.fen()
        seen[board.key] = expected
    assert len(seen) > 60
    while reference.move_stack:  # back along the game: every score now comes from the cache
        reference.pop()
        board.unmake()
        evaluator.unmake()
        if board.key in seen:
            assert evaluator.evaluate(board) == seen[board.key]
    # The same position reached by moves and set up directly: one key, one score.
    game = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):  # the start position again, reached by moves
        game.push_uci(uci)
    assert static.evaluate(game) == static.evaluate(chess.Board())


def test_a_missing_or_corrupt_network_is_reported_and_the_engine_plays_on(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(random_network()[:-3] + b"xyz")
    for file in (bad, tmp_path / "missing.bin"):
        config_file = tmp_path / "nn.toml"
        config_file.write_text(f'[eval.nn]\nenabled = true\nfile = "{file}"\n')
        engine = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=120)
        try:
            engine.configure({"ConfigFile": str(config_file), "OwnBook": False})
            result = engine.play(chess.Board(), chess.engine.Limit(depth=3), info=chess.engine.INFO_ALL)
            assert result.move in chess.Board().legal_moves
        finally:
            engine.quit()
    static = _static(tmp_path, random_network()[:-3] + b"xyz")
    assert static.net is None and "network switched off: checksum" in (static.network_message or "")
    lines = static.explain(chess.Board())
    assert any("Network: switched off (network switched off: checksum" in line for line in lines)


def _network_config_file(tmp_path: Path) -> Path:
    """A ConfigFile that switches on a random network."""
    path = tmp_path / "net.bin"
    path.write_bytes(random_network())
    config_file = tmp_path / "nn.toml"
    config_file.write_text(f'[eval.nn]\nenabled = true\nfile = "{path}"\n')
    return config_file


def test_the_engine_searches_with_a_network_through_uci(tmp_path: Path) -> None:
    config_file = _network_config_file(tmp_path)
    engine = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=120)
    try:
        engine.configure({"ConfigFile": str(config_file), "OwnBook": False})
        board = chess.Board(FENS[1])
        first = engine.analyse(board, chess.engine.Limit(nodes=3000))
        engine.protocol.send_line("ucinewgame")
        second = engine.analyse(board, chess.engine.Limit(nodes=3000))
        assert first["pv"][0] in board.legal_moves
        assert first["score"] == second["score"] and first["pv"] == second["pv"]  # deterministic
    finally:
        engine.quit()
    plain = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=120)
    try:
        plain.configure({"OwnBook": False})
        without = plain.analyse(board, chess.engine.Limit(nodes=3000))
    finally:
        plain.quit()
    assert without["score"] != first["score"], "the random network is what scored the search"


def test_label_arrays_are_the_boards_features_in_any_number_of_chunks_and_threads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """load_arrays cuts the file into chunks worked on by threads: every position's
    features are its board's, and the arrays are the same one chunk at a time on one
    thread as in many small chunks on four."""
    from blitzaco.tools.tune import nn
    from blitzaco.tools.tune.labels import read_labels

    sample = DATA / "labels_sample.bin"
    whole = nn.load_arrays(sample, threads=1)
    monkeypatch.setattr(nn, "LOAD_CHUNK", 7)  # 86 chunks, the last one short
    parts = nn.load_arrays(sample, threads=4)
    for field in ("stm", "other", "score", "result", "white"):
        assert np.array_equal(getattr(whole, field), getattr(parts, field), equal_nan=True), field
    for index, record in enumerate(read_labels(sample)):
        own, other = nn.board_features(record.board)
        assert sorted(own) == parts.stm[index].tolist() and sorted(other) == parts.other[index].tolist()


def test_the_trainer_writes_a_net_the_engine_reads_and_agrees_with(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.nn import TrainSettings, board_features, float_score, load_arrays, quantise, train

    sample = DATA / "labels_sample.bin"
    data = load_arrays(sample)
    boards = [record.board for record in read_labels(sample)]
    assert len(data) == len(boards) == 600
    # The arrays are the features of the decoded boards.
    own, other = board_features(boards[5])
    assert sorted(own) == sorted(data.stm[5].tolist()) and sorted(other) == sorted(data.other[5].tolist())
    model, summary = train(data, TrainSettings(hidden=16, epochs=3, batch=64), log=lambda _: None)
    assert summary["positions"] + summary["held_out"] == 600
    net = decode_network(quantise(model, meta={"positions": summary["positions"]}))
    errors = []
    for board in boards[:200]:
        evaluator, own = _fresh(net.weights, board)  # the engine's evaluator of the file
        errors.append(abs(evaluator.network(own) - float_score(model, board)))
    # Rounding the weights to 1/255 and 1/1024 and the integer division: stated tolerance 3 cp.
    assert max(errors) <= 3.0, max(errors)


def test_a_net_with_output_buckets_is_written_read_and_evaluated_as_trained() -> None:
    """Output buckets from the trainer to the engine: the trainer's bucketed net
    written (version 2), the engine's evaluator scores every position as the float
    model does with the position's own bucket (3 cp, as with one output) and as the
    format's definition written out plainly does."""
    torch = pytest.importorskip("torch")
    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.nn import TrainSettings, float_score, load_arrays, quantisation_error, quantise, train

    sample = DATA / "labels_sample.bin"
    data = load_arrays(sample)
    boards = [record.board for record in read_labels(sample)][:200]
    model, _ = train(data, TrainSettings(hidden=16, epochs=2, batch=64, output_buckets=4), log=lambda _: None)
    with torch.no_grad():  # make the buckets differ plainly (50 cp apart), so that a wrong one is seen
        model.out.bias += torch.tensor([0.0, 0.5, 1.0, 1.5])
    blob = quantise(model)
    assert blob[8:10] == b"\x02\x00"  # version 2
    weights = decode_weights(blob)
    assert weights.buckets == 4 and len(weights.w2) == 4 * 32
    counts = {chess.popcount(board.occupied) * 4 // 33 for board in boards}
    assert len(counts) >= 2, "the sample crosses buckets"
    for board in boards:
        evaluator, own = _fresh(weights, board)
        assert abs(evaluator.network(own) - float_score(model, board)) <= 3.0
        assert evaluator.network(own) == reference_network_score(weights, board)
    assert quantisation_error(model, blob, boards)["max_cp"] <= 3.0



def test_king_buckets_split_each_perspective_by_its_own_kings_square() -> None:
    """The king-bucket study's inputs: each perspective's feature moves to the block of
    its own king's bucket (squares mirrored for Black, as the features are); 1 bucket
    leaves the inputs as they are; a net with buckets trains but is never written (the
    engine's file has 768 inputs)."""
    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.nn import PAD, board_features, king_bucket, king_bucketed, load_arrays

    data = load_arrays(DATA / "labels_sample.bin", 300)
    boards = [record.board for record in read_labels(DATA / "labels_sample.bin", 0)][:300]
    assert king_bucketed(data, 1) is data
    squares = np.arange(64)
    assert king_bucket(squares, 2).tolist() == [0, 0, 0, 0, 1, 1, 1, 1] * 8
    assert king_bucket(squares, 4).tolist() == [0, 0, 0, 0, 1, 1, 1, 1] * 2 + [2, 2, 2, 2, 3, 3, 3, 3] * 6
    with pytest.raises(ValueError):
        king_bucket(squares, 3)
    four = king_bucketed(data, 4)
    seen = set()
    for index in range(0, 300, 7):
        board = boards[index]
        for features, perspective, side in ((four.stm, 0, board.turn), (four.other, 1, not board.turn)):
            king = board.king(side)
            assert king is not None
            own = king if side == chess.WHITE else chess.square_mirror(king)
            bucket = (chess.square_file(own) >= 4) + 2 * (chess.square_rank(own) >= 2)
            seen.add(bucket)
            expected = [bucket * 768 + f for f in board_features(board)[perspective] if f != PAD]
            row = features[index].tolist()
            assert sorted(f for f in row if f != 4 * 768) == sorted(expected)
            assert row.count(4 * 768) == 32 - len(expected)
    assert len(seen) >= 2  # the sample crosses buckets
    torch = pytest.importorskip("torch")
    from blitzaco.tools.tune.nn import TrainSettings, quantise, train

    model, summary = train(data, TrainSettings(hidden=8, epochs=1, batch=64, king_buckets=2), log=lambda _: None)
    assert summary["king_buckets"] == 2 and model.ft.weight.shape == torch.Size([2 * 768 + 1, 8])
    with pytest.raises(ValueError, match="768 inputs"):
        quantise(model)

def test_output_buckets_choose_an_output_layer_by_the_piece_count() -> None:
    """Output buckets in the trainer: four piece counts a bucket with 8 (Stockfish's
    layout), the engine's rule and the trainer's the same, one bucket is the plain
    net, each position's output is its bucket's layer."""
    torch = pytest.importorskip("torch")
    from blitzaco.nnue import output_bucket as engine_bucket
    from blitzaco.tools.tune.nn import PAD, TrainSettings, _model, load_arrays, output_bucket, quantise, train

    assert output_bucket(np.arange(1, 33), 8).tolist() == [b for b in range(8) for _ in range(4)]
    assert output_bucket(np.arange(1, 33), 1).tolist() == [0] * 32
    assert output_bucket(32, 4) == 3 and output_bucket(2, 4) == 0
    assert [engine_bucket(pieces, buckets) for buckets in (1, 2, 3, 8, 32) for pieces in range(2, 33)] == [
        int(output_bucket(pieces, buckets)) for buckets in (1, 2, 3, 8, 32) for pieces in range(2, 33)]
    data = load_arrays(DATA / "labels_sample.bin", 300)
    pieces = (data.stm != PAD).sum(axis=1)
    assert len(set(output_bucket(pieces, 8).tolist())) >= 3  # the sample crosses buckets
    model, summary = train(data, TrainSettings(hidden=8, epochs=1, batch=64, output_buckets=8), log=lambda _: None)
    assert summary["output_buckets"] == 8 and model.out.weight.shape == torch.Size([8, 16])
    assert decode_weights(quantise(model)).buckets == 8  # the file's version 2
    # The bucket's own layer: the same first layer with bucket 3 chosen is output 3.
    net = _model(8, buckets=8)
    stm, other = torch.from_numpy(data.stm[:5]).long(), torch.from_numpy(data.other[:5]).long()
    every = net.out(torch.cat([net.ft(stm) + net.b1, net.ft(other) + net.b1], dim=1).clamp(0.0, 1.0))
    chosen = net(stm, other, None, torch.full((5,), 3))
    assert torch.allclose(chosen, every[:, 3])
    assert not torch.allclose(chosen, every[:, 0])



def test_the_feature_sums_and_their_gradient_are_the_bags() -> None:
    """The trainer's feature transformer (one bag for both perspectives, its weight's
    gradient one dense product through a one-hot matrix kept between steps) gives the
    outputs and gradients that ``nn.EmbeddingBag`` itself gives, on real positions with
    padding, step after step of the same shape, the padding row's gradient zero."""
    torch = pytest.importorskip("torch")
    from blitzaco.tools.tune.nn import INPUTS, _model, load_arrays

    data = load_arrays(DATA / "labels_sample.bin", 300)
    torch.manual_seed(3)
    net = _model(16, buckets=1, activation="screlu")
    with torch.no_grad():
        net.b1.normal_(0.3, 0.2)  # lanes on both sides of the clip
    reference = torch.nn.EmbeddingBag(INPUTS + 1, 16, mode="sum", padding_idx=INPUTS)
    out = torch.nn.Linear(32, 1)
    out.load_state_dict(net.out.state_dict())
    for part in (slice(0, 150), slice(150, 300), slice(0, 150)):
        stm, other = torch.from_numpy(data.stm[part]).long(), torch.from_numpy(data.other[part]).long()
        assert (stm == INPUTS).any()  # padded rows are in the sample
        target = torch.linspace(-1.0, 1.0, len(stm))
        net.zero_grad()
        ((net(stm, other) - target) ** 2).mean().backward()
        with torch.no_grad():
            reference.weight.copy_(net.ft.weight)
        reference.zero_grad()
        b1 = net.b1.detach().clone().requires_grad_(True)
        lanes = torch.cat([reference(stm) + b1, reference(other) + b1], dim=1).clamp(0.0, 1.0)
        expected = out(lanes * lanes).squeeze(1)
        ((expected - target) ** 2).mean().backward()
        assert torch.allclose(net(stm, other), expected, atol=1e-6)
        assert torch.allclose(net.ft.weight.grad, reference.weight.grad, atol=1e-6)
        assert float(net.ft.weight.grad.abs().sum()) > 0 and not net.ft.weight.grad[INPUTS].any()
        assert torch.allclose(net.b1.grad, b1.grad, atol=1e-6)


def test_training_names_its_device_and_returns_the_model_on_the_cpu() -> None:
    """``train-net --device``: "auto" is the CPU on a machine without a GPU and
    trains the very model that "cpu" trains (same seed, same batches); the model comes
    back on the CPU, ready to quantise; an unknown device is refused by torch."""
    import torch

    from blitzaco.tools.tune.nn import TrainSettings, load_arrays, torch_device, train

    data = load_arrays(DATA / "labels_sample.bin", 200)
    runs = {}
    for name in ("cpu", "auto"):
        model, summary = train(data, TrainSettings(hidden=8, epochs=2, batch=64, device=name), log=lambda _: None)
        assert summary["device"] == torch_device(name) and next(model.parameters()).device.type == "cpu"
        runs[name] = model.state_dict()
    if not torch.cuda.is_available():
        assert torch_device("auto") == "cpu"
        assert all(torch.equal(runs["cpu"][key], runs["auto"][key]) for key in runs["cpu"])
    with pytest.raises(RuntimeError):
        train(data, TrainSettings(hidden=8, epochs=1, batch=64, device="nonsense"), log=lambda _: None)

def test_helper_processes_search_with_the_network_too(tmp_path: Path) -> None:
    """With Threads 2 the helper's positions carry the accumulator (a helper that
    evaluated without it would fill the shared table with garbage scores)."""
    config_file = _network_config_file(tmp_path)
    engine = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=120)
    try:
        engine.configure({"ConfigFile": str(config_file), "OwnBook": False, "Threads": 2})
        board = chess.Board(FENS[1])
        strings = []
        for depth in (5, 3):  # a helper that died in the first search is found at the second's start
            with engine.analysis(board, chess.engine.Limit(depth=depth)) as analysis:
                for info in analysis:
                    if "string" in info:
                        strings.append(info["string"])
            assert analysis.info["pv"][0] in board.legal_moves
        # A helper that failed (and was restarted or dropped) is reported as an error.
        assert any("1 helper process" in text for text in strings)
        assert not any("error" in text for text in strings), strings
    finally:
        engine.quit()


def test_check_eval_measures_what_the_search_calls(tmp_path: Path) -> None:
    """``tune.py check-eval``: the held-out loss of the constant 0, the classical
    evaluation and each network is the trainer's loss of the engine's own scores on
    the file's last share; a residual net is added to the classical score."""
    import math
    import subprocess
    import sys

    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.nn import check_evaluations

    sample = DATA / "labels_sample.bin"
    (tmp_path / "replace.bin").write_bytes(random_network(seed=3))
    (tmp_path / "residual.bin").write_bytes(random_network(seed=4, residual=True))
    nets = [str(tmp_path / "replace.bin"), str(tmp_path / "residual.bin")]
    checks = check_evaluations(sample, nets, held_out=0.1)
    names = ["constant 0", "classical", "configured", "replace.bin", "residual.bin"]
    assert [check.name for check in checks] == names
    unconfigured = check_evaluations(sample, nets, held_out=0.1, configured=False)  # train-net's and the sweep's call
    assert [check.name for check in unconfigured] == [name for name in names if name != "configured"]
    shipped = StaticEval(Config(), Trails(Config().pheromone))  # the blend: the configured evaluation
    assert shipped.net is not None
    held = list(read_labels(sample))[-60:]
    plain = StaticEval(CLASSICAL, Trails(CLASSICAL.pheromone))  # the classical evaluation alone
    replace = load_network(nets[0])
    residual = load_network(nets[1])

    def loss(scores: list[float]) -> float:
        total = 0.0
        for score, record in zip(scores, held, strict=True):
            result = record.result if record.board.turn else 1 - record.result
            target = 0.75 / (1 + math.exp(-record.score / 361)) + 0.25 * result
            total += (1 / (1 + math.exp(-score / 361)) - target) ** 2
        return total / len(held)

    classical = [plain.evaluate(record.board) for record in held]
    assert checks[0].loss == pytest.approx(loss([0.0] * 60))
    assert checks[1].loss == pytest.approx(loss(classical))
    assert checks[2].loss == pytest.approx(loss([shipped.evaluate(record.board) for record in held]))
    assert checks[3].loss == pytest.approx(
        loss([reference_network_score(replace.weights, record.board) for record in held]))
    assert checks[4].loss == pytest.approx(loss([c + reference_network_score(residual.weights, record.board)
                                                 for c, record in zip(classical, held, strict=True)]))
    assert checks[1].scaled_loss <= checks[1].loss and checks[1].microseconds > 0
    assert {check.positions for check in checks} == {60}
    assert {check.positions for check in check_evaluations(sample, [], held_out=0.1, most=25)} == {25}
    # Several files: each one's last share, pooled (not the last file's alone).
    from blitzaco.tools.tune.labels import MAGIC, RECORD_BYTES
    other = tmp_path / "other.bin"
    other.write_bytes(sample.read_bytes()[:len(MAGIC) + 300 * RECORD_BYTES])
    others = list(read_labels(other))[-30:]
    pooled = check_evaluations([sample, other], [], held_out=0.1)
    alone = check_evaluations(other, [], held_out=0.1)
    assert pooled[0].loss == pytest.approx((60 * checks[0].loss + 30 * alone[0].loss) / 90)
    held += others
    classical += [plain.evaluate(record.board) for record in others]
    assert pooled[1].loss == pytest.approx(loss(classical))
    script = Path(__file__).parent.parent / "scripts" / "tune.py"
    shown = subprocess.run([sys.executable, str(script), "check-eval", "--data", str(sample), "--data", str(other),
                            "--held-out", "0.1", "--lam", "1.0", "--net", nets[1]],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "classical" in shown.stdout and "residual.bin" in shown.stdout
    constant = check_evaluations([sample, other], [], held_out=0.1, lam=1.0)[0].loss
    assert f"{constant:13.6f}" in shown.stdout and constant != pytest.approx(pooled[0].loss)
    assert "on 90 held-out positions, lambda 1.0" in shown.stdout
    fewer = subprocess.run([sys.executable, str(script), "check-eval", "--data", str(sample), "--data", str(other),
                            "--held-out", "0.1", "--lam", "0.0", "--most", "25"],
                           capture_output=True, text=True, timeout=120)
    assert fewer.returncode == 0, fewer.stderr
    assert "on 50 held-out positions, lambda 0.0" in fewer.stdout  # 25 of each file
    results = check_evaluations([sample, other], [], held_out=0.1, lam=0.0, most=25)[1].loss
    assert f"{results:13.6f}" in fewer.stdout
    (tmp_path / "bad.bin").write_bytes(b"not a network")
    bad = subprocess.run([sys.executable, str(script), "check-eval", "--data", str(sample), "--net",
                          str(tmp_path / "bad.bin")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "bad.bin" in bad.stderr


def test_lazy_evaluation_is_only_for_the_classical_evaluation_alone(tmp_path: Path) -> None:
    """The search's lazy evaluation stands in material and tables for the classical
    score; with any other term in the score it must not."""
    plain = StaticEval(CLASSICAL, Trails(CLASSICAL.pheromone))
    assert plain.classical_only()
    plain.use_trails(True)  # the pheromone bonus
    assert not plain.classical_only()
    assert not StaticEval(config_from_dict({"eval": {"classical": False}}), Trails(Config().pheromone)).classical_only()
    for residual in (False, True):
        with_net = _static(tmp_path, random_network(residual=residual))
        assert with_net.net is not None and not with_net.classical_only()


def test_train_net_spectral_measures_the_extra_inputs_and_writes_no_network(tmp_path: Path) -> None:
    """``train-net --spectral`` trains with the spectral features as extra first-layer
    inputs (to compare held-out losses) and writes only its summary: the engine's
    format has no place for dense inputs, so no network file may appear."""
    pytest.importorskip("torch")
    import json

    from blitzaco.spectral import position_features
    from blitzaco.tools.tune.cli import main
    from blitzaco.tools.tune.labels import read_labels
    from blitzaco.tools.tune.nn import spectral_inputs

    sample = DATA / "labels_sample.bin"
    dense = spectral_inputs(sample, limit=40)
    assert dense.shape == (40, 14)
    record = next(iter(read_labels(sample)))
    white, black = position_features(record.board)
    own = white if record.board.turn else black
    assert dense[0, 0] == pytest.approx(own.connectivity) and dense[0, 5] == own.clusters
    out = tmp_path / "spectral.bin"
    code = main(["train-net", "--data", str(sample), "--hidden", "8", "--epochs", "2", "--batch", "64",
                 "--spectral", "--out", str(out)])
    assert code == 0
    assert not out.exists()
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["extra_inputs"] == 14 and summary["hidden"] == 8 and summary["held_out"] > 0


def test_the_shipped_network_is_found_read_and_used_when_switched_on() -> None:
    """``assets/nn.bin`` ships with the engine (not the default net): an empty ``file``
    means it, it reads as a residual net with its training recorded, and switched on
    it scores the search's positions as the classical evaluation plus its output."""
    from blitzaco.bundled import bundled_file

    path = bundled_file("nn.bin")
    assert path is not None, "assets/nn.bin is not installed"
    shipped = load_network(path)
    assert shipped.residual and shipped.hidden == 16
    assert isinstance(shipped.meta.get("positions"), int) and shipped.meta["positions"] > 500_000
    config = config_from_dict({"eval": {"nn": {"enabled": True, "file": "", "weight": 1.0, "classical": 0.0}}})
    static = StaticEval(config, Trails(config.pheromone))
    assert static.net is not None and "network nn.bin" in (static.network_message or "")
    plain = config_from_dict({"eval": {"nn": {"enabled": False}}})
    classical = StaticEval(plain, Trails(plain.pheromone))
    for fen in FENS:
        board = chess.Board(fen)
        expected = classical.evaluate(board) + reference_network_score(shipped.weights, board)
        assert static.evaluate(board) == expected


def test_a_shipped_net_is_named_by_its_file_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``file = "net.bin"``: a bare name that is no file here names the net shipped in
    assets/ (so a frozen binary's user can choose it); a file of that name in the
    working folder wins; a name found nowhere is reported, the term left out."""
    monkeypatch.chdir(tmp_path)
    config = config_from_dict({"eval": {"nn": {"enabled": True, "file": "net.bin"}}})
    static = StaticEval(config, Trails(config.pheromone))
    assert static.net is not None and not static.net.residual and static.net.name == "net.bin"
    (tmp_path / "net.bin").write_bytes(random_network(residual=True))
    static = StaticEval(config, Trails(config.pheromone))
    assert static.net is not None and static.net.residual and static.net.hidden != 128
    config = config_from_dict({"eval": {"nn": {"enabled": True, "file": "nothing.bin"}}})
    static = StaticEval(config, Trails(config.pheromone))
    assert static.net is None and "no file nothing.bin" in (static.network_message or "")
