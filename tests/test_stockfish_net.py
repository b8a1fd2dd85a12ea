"""Stockfish 15.1's network evaluated here (the static labels' fast path) gives
Stockfish's own numbers; a file of another shape is refused; a label run with it
writes the file the pipe writes."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

from blitzaco.tools.tune.labels import find_stockfish, stockfish_name

pytestmark = pytest.mark.skipif(stockfish_name() != "Stockfish 15.1",
                                reason="the network read here is Stockfish 15.1's")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from blitzaco.tools.tune.stockfish_net import export

    binary = find_stockfish()
    assert binary is not None
    return export(binary, tmp_path_factory.mktemp("net") / "sf.nnue")


def test_the_network_evaluates_every_position_as_stockfish_does(exported: Path) -> None:
    """Against Stockfish's ``eval`` (through the pipe, one position at a time):
    positions of random games at every piece count (all eight layer stacks), and
    hand-picked ones: bare kings, kings on every file (each mirror), Chess960
    starts, a promotion race, both sides to move."""
    import numpy as np

    from blitzaco.tools.tune.labels import Stockfish
    from blitzaco.tools.tune.stockfish_net import StockfishNet, board_codes, check, sample_positions

    binary = find_stockfish()
    assert binary is not None
    net = StockfishNet(exported)
    assert check(net, binary, count=400, seed=11) == 400
    fens = ["8/8/8/4k3/8/8/8/4K3 w - - 0 1", "8/8/8/4k3/8/8/8/4K3 b - - 0 1",
            "7k/P7/8/8/8/8/p7/K7 w - - 0 1", "k7/8/8/8/8/8/8/7K b - - 0 1",
            "3k4/8/8/8/8/8/8/3K4 w - - 0 1", "4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 b - - 0 1"]
    boards = [chess.Board(fen) for fen in fens]
    boards += [chess.Board.from_chess960_pos(index) for index in (0, 123, 518, 959)]
    for file in range(8):
        board = chess.Board(None)
        board.set_piece_at(chess.square(file, 0), chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(chess.square(7 - file, 7), chess.Piece(chess.KING, chess.BLACK))
        board.set_piece_at(chess.D4, chess.Piece(chess.QUEEN, chess.WHITE))
        board.set_piece_at(chess.E5, chess.Piece(chess.ROOK, chess.BLACK))
        board.turn = bool(file % 2)
        if not board.is_check():
            boards.append(board)
    stacks = {(len(board.piece_map()) - 1) // 4 for board in boards + sample_positions(400, 11)}
    assert stacks == set(range(8))
    engine = Stockfish(binary)
    try:
        theirs = [engine.static_eval(board) for board in boards]
    finally:
        engine.quit()
    codes, white = board_codes(boards)
    assert net.labels(codes, white) == theirs
    # One position alone gives what it gives in a batch.
    assert [net.labels(codes[i:i + 1], white[i:i + 1])[0] for i in range(len(boards))] == theirs
    assert isinstance(net.internal(codes, white), np.ndarray)


def test_a_file_of_another_shape_is_refused(exported: Path, tmp_path: Path) -> None:
    """Another version or architecture (its header), a file cut short and one with
    bytes after the network are refused with :class:`NetMismatch`, which the label
    run's ``auto`` takes as the sign to use the pipe."""
    from blitzaco.tools.tune.stockfish_net import NetMismatch, StockfishNet

    data = exported.read_bytes()
    cases = {"version": b"\0\0\0\0" + data[4:], "hash": data[:4] + b"\0\0\0\0" + data[8:],
             "short": data[: len(data) // 2], "long": data + b"\0"}
    for name, content in cases.items():
        path = tmp_path / f"{name}.nnue"
        path.write_bytes(content)
        with pytest.raises(NetMismatch):
            StockfishNet(path)


def test_the_pipe_keeps_its_answers_across_a_search() -> None:
    """More evaluations asked for than the pipe reads ahead, then a move searched
    before they are read: the answers are the ones asked for, in order (the search
    does not swallow them, nor wait on them)."""
    from blitzaco.tools.tune.labels import Stockfish
    from blitzaco.tools.tune.stockfish_net import sample_positions

    binary = find_stockfish()
    assert binary is not None
    boards = sample_positions(20, 5)
    engine = Stockfish(binary)
    try:
        one_by_one = [engine.static_eval(board) for board in boards]
        for board in boards:
            engine.ask_eval(board)
        move, _, _ = engine.play(chess.Board(), nodes=200)
        assert move in chess.Board().legal_moves
        assert engine.evals() == one_by_one
    finally:
        engine.quit()


def test_a_label_run_writes_the_same_file_through_the_network_and_the_pipe(tmp_path: Path) -> None:
    """Static labels, seed 21: the file made with the exported network is the
    pipe's byte for byte; an unknown evaluator is refused."""
    from blitzaco.tools.tune.labels import generate

    settings = dict(seed=21, nodes=100, workers=1, progress=False, label="static", random_moves=0.1,
                    chess960=0.3, children=3)
    piped = generate(tmp_path / "pipe.bin", 300, evaluator="pipe", **settings)  # type: ignore[arg-type]
    netted = generate(tmp_path / "net.bin", 300, evaluator="net", **settings)  # type: ignore[arg-type]
    assert (piped["net"], netted["net"]) == (0.0, 1.0)
    assert (tmp_path / "net.bin").read_bytes() == (tmp_path / "pipe.bin").read_bytes()
    assert piped["total"] >= 300
    with pytest.raises(ValueError, match="evaluator"):
        generate(tmp_path / "x.bin", 10, evaluator="fast", **settings)  # type: ignore[arg-type]
