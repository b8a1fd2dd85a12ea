"""The engine driven as a GUI drives it: a subprocess and python-chess's UCI client.

Waits are generous timeouts that catch hangs; no test asserts how fast something
happened (scripts/uci_latency.py measures that).
"""

from __future__ import annotations

import time

import chess
import chess.engine
import pytest
from uci_driver import UciProcess

INFO_KEYS = {"depth", "seldepth", "multipv", "score", "nodes", "nps", "time", "hashfull", "tbhits", "pv"}


def test_handshake_names_the_engine_and_declares_the_options(engine: chess.engine.SimpleEngine) -> None:
    assert engine.id["name"].startswith("BlitzACO")
    assert engine.id["author"]
    opts = engine.options
    expected = {
        "Hash": ("spin", 64),
        "Threads": ("spin", 1),
        "MultiPV": ("spin", 1),
        "Ponder": ("check", False),
        "Move Overhead": ("spin", 30),
        "Clear Hash": ("button", None),
        "UCI_Chess960": ("check", False),
        "OwnBook": ("check", True),  # the bundled book is found
        "BookFile": ("string", ""),
        "SyzygyPath": ("string", ""),
        "SyzygyProbeLimit": ("spin", 7),
        "ConfigFile": ("string", ""),
        "Debug Log File": ("string", ""),
    }
    for name, (kind, default) in expected.items():
        assert name in opts, name
        assert opts[name].type == kind, name
        if kind != "button":
            assert opts[name].default in (default, "<empty>" if default == "" else default), name


def test_configure_and_play(engine: chess.engine.SimpleEngine) -> None:
    engine.configure({"Hash": 16, "Move Overhead": 50, "Threads": 1, "Clear Hash": None})
    board = chess.Board()
    for limit in (chess.engine.Limit(depth=3), chess.engine.Limit(nodes=800), chess.engine.Limit(time=0.2)):
        result = engine.play(board, limit)
        assert result.move in board.legal_moves
        board.push(result.move)


def test_analyse_reports_every_info_field(engine: chess.engine.SimpleEngine) -> None:
    engine.configure({"OwnBook": False})  # the book knows this position
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    info = engine.analyse(board, chess.engine.Limit(depth=4))
    assert INFO_KEYS <= set(info), set(info)
    assert info["depth"] == 4
    assert info["seldepth"] >= 4
    assert info["nodes"] > 0
    replay = board.copy()
    for move in info["pv"]:
        assert move in replay.legal_moves
        replay.push(move)


def test_multipv_analysis(engine: chess.engine.SimpleEngine) -> None:
    infos = engine.analyse(chess.Board(), chess.engine.Limit(depth=3), multipv=3)
    assert [info["multipv"] for info in infos] == [1, 2, 3]
    assert len({info["pv"][0] for info in infos}) == 3
    scores = [info["score"].white().score() for info in infos]
    assert scores == sorted(scores, reverse=True)


def test_searchmoves(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    allowed = [chess.Move.from_uci("b1a3"), chess.Move.from_uci("g2g4")]
    result = engine.play(board, chess.engine.Limit(depth=3), root_moves=allowed)
    assert result.move in allowed


def test_mate_score_and_mate_limit(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1")
    info = engine.analyse(board, chess.engine.Limit(mate=2))
    assert info["score"].relative == chess.engine.Mate(2)
    assert info["pv"][0] == chess.Move.from_uci("g3g6")


def test_stop_during_infinite_analysis(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    with engine.analysis(board) as analysis:
        for info in analysis:
            if info.get("depth", 0) >= 2:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves
    # the engine is still usable afterwards
    assert engine.play(board, chess.engine.Limit(depth=1)).move in board.legal_moves


def test_no_bestmove_before_stop_in_infinite_mode(uci: UciProcess) -> None:
    uci.send("position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    uci.send("go infinite")
    lines = uci.drain(1.5)
    assert not any(line.startswith("bestmove") for line in lines), lines
    uci.send("stop")
    best = uci.read_until("bestmove")[-1]
    assert chess.Move.from_uci(best.split()[1]) in chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1").legal_moves


def test_isready_is_answered_while_searching(uci: UciProcess) -> None:
    uci.send("position startpos")
    uci.send("go infinite")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.send("isready")
    lines = uci.read_until("readyok", timeout=10)
    assert not any(line.startswith("bestmove") for line in lines)
    uci.send("stop")
    uci.read_until("bestmove")


def test_currmove_is_reported_after_the_first_second(uci: UciProcess) -> None:
    uci.send("position startpos")
    uci.send("go infinite")
    time.sleep(2.5)
    uci.send("stop")
    lines = uci.read_until("bestmove")
    currmoves = [line for line in lines if " currmove " in line]
    assert currmoves, lines[-5:]
    parts = currmoves[-1].split()
    assert chess.Move.from_uci(parts[parts.index("currmove") + 1]) in chess.Board().legal_moves
    assert int(parts[parts.index("currmovenumber") + 1]) >= 1


def test_ponder_waits_for_ponderhit(uci: UciProcess) -> None:
    uci.send("position startpos moves e2e4 e7e5")
    uci.send("go ponder wtime 3000 btime 3000 winc 0 binc 0")
    lines = uci.drain(1.0)
    assert not any(line.startswith("bestmove") for line in lines), "bestmove while pondering"
    uci.send("ponderhit")
    best = uci.read_until("bestmove", timeout=10)[-1]
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    assert chess.Move.from_uci(best.split()[1]) in board.legal_moves


def test_ponder_stop_gives_bestmove(uci: UciProcess) -> None:
    uci.send("position startpos moves d2d4")
    uci.send("go ponder wtime 60000 btime 60000")
    uci.drain(0.5)
    uci.send("stop")
    assert uci.read_until("bestmove", timeout=10)[-1].startswith("bestmove ")


def test_play_with_pondering_through_the_client(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    limit = chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.05, black_inc=0.05)
    for _ in range(6):
        result = engine.play(board, limit, ponder=True)
        assert result.move in board.legal_moves
        board.push(result.move)
        if result.ponder is not None:
            assert result.ponder in board.legal_moves


def test_bestmove_carries_a_legal_ponder_move(uci: UciProcess) -> None:
    uci.send("setoption name OwnBook value false")  # a book move has no ponder move
    uci.send("position startpos")
    uci.send("go depth 4")
    parts = uci.read_until("bestmove")[-1].split()
    assert parts[2] == "ponder"
    board = chess.Board()
    board.push_uci(parts[1])
    assert chess.Move.from_uci(parts[3]) in board.legal_moves


@pytest.mark.parametrize(
    ("fen", "score"),
    [("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", "score mate 0"), ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "score cp 0")],
)
def test_no_legal_move_gives_bestmove_0000(uci: UciProcess, fen: str, score: str) -> None:
    uci.send(f"position fen {fen}")
    uci.send("go depth 5")
    lines = uci.read_until("bestmove")
    assert lines[-1] == "bestmove 0000"
    assert any(score in line for line in lines)


def test_quit_during_a_search_exits_cleanly() -> None:
    process = UciProcess()
    process.handshake()
    process.send("position startpos")
    process.send("go infinite")
    process.read_until(lambda line: line.startswith("info depth"))
    process.send("quit")
    assert process.proc.wait(timeout=10) == 0


def test_end_of_input_exits_cleanly() -> None:
    process = UciProcess()
    process.handshake()
    assert process.proc.stdin is not None
    process.proc.stdin.close()
    assert process.proc.wait(timeout=10) == 0


def test_chess960_castling_is_king_takes_rook(engine: chess.engine.SimpleEngine) -> None:
    # python-chess's client sets UCI_Chess960 itself for a 960 board and parses the
    # answer in 960 notation: a castling move restricted by searchmoves must come
    # back as the castling move, and an analysis PV must replay legally.
    board = chess.Board("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2KR2 w BFbg - 0 1", chess960=True)
    castlings = [move for move in board.legal_moves if board.is_castling(move)]
    result = engine.play(board, chess.engine.Limit(depth=2), root_moves=castlings)
    assert board.is_castling(result.move)
    info = engine.analyse(board, chess.engine.Limit(depth=2))
    assert info["pv"][0] in board.legal_moves


def test_chess960_notation_over_the_wire(uci: UciProcess) -> None:
    fen = "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w AEae - 0 1"
    uci.send("setoption name UCI_Chess960 value true")
    uci.send(f"position fen {fen} moves b1a1")  # queenside castling: king b1 takes rook a1
    uci.send("d")
    fen_line = uci.read_until("Fen:")[-1]
    board = chess.Board(fen, chess960=True)
    board.push(chess.Move.from_uci("b1a1"))
    assert fen_line == f"Fen: {board.fen()}"
    assert board.piece_at(chess.C1) == chess.Piece.from_symbol("K")  # it really castled
    uci.send("position fen " + fen)
    uci.send("go depth 2 searchmoves b1a1")
    assert uci.read_until("bestmove")[-1].split()[1] == "b1a1"


def test_960_start_position_given_by_fen_needs_no_option(uci: UciProcess) -> None:
    fen = "rk2r3/pppppppp/8/8/8/8/PPPPPPPP/RK2R3 w AEae - 0 1"
    uci.send(f"position fen {fen}")
    uci.send("go depth 2 searchmoves b1e1")
    assert uci.read_until("bestmove")[-1].split()[1] == "b1e1"


@pytest.mark.parametrize("opening", ["", "e2e4 e7e5 "])
@pytest.mark.parametrize("per_ply", [False, True], ids=["one-command", "command-per-ply"])
def test_repetition_draw_through_the_protocol(uci: UciProcess, opening: str, per_ply: bool) -> None:
    """Queenless White repeats. The history reaches the search whether it came in
    one command or, as from a GUI, a command per ply that extends the last one, and
    whether or not irreversible moves come before the shuffle."""
    fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1"
    moves = (opening + "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8").split()
    for count in range(1 if per_ply else len(moves), len(moves) + 1):
        uci.send(f"position fen {fen} moves {' '.join(moves[:count])}")
    uci.send("go depth 3")
    lines = uci.read_until("bestmove")
    assert lines[-1].split()[1] == "g1f3"
    assert "score cp 0 " in [line for line in lines if " pv " in line][-1]
