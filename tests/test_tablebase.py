"""Syzygy tablebases with real table files (tests/data/syzygy): root choice, search
probes, games converted or held, fifty-move cases, and failures that must not crash."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import chess
import chess.engine
import chess.syzygy
import pytest
from recorder import Recorder
from uci_driver import DATA, ENGINE_COMMAND, UciProcess

from blitzaco.engine import Engine
from blitzaco.probe import Probe
from blitzaco.search import TB_WIN
from blitzaco.timeman import Limits

TABLES = DATA / "syzygy"


def _engine() -> Engine:
    engine = Engine()
    engine.set_option("own_book", False)
    assert "found 5" in engine.probe.open_tablebases(str(TABLES))
    return engine


def _think(engine: Engine, board: chess.Board, recorder: Recorder | None = None, **limits):
    lim = Limits(**limits)
    return engine.think(board, lim, recorder)


def test_root_keeps_only_dtz_optimal_wins() -> None:
    engine = _engine()
    board = chess.Board("8/8/8/8/8/k7/8/2K4R w - - 0 1")
    recorder = Recorder()
    result = _think(engine, board, recorder, depth=3)
    with chess.syzygy.open_tablebase(str(TABLES)) as tablebase:
        board.push(result.move)
        assert tablebase.probe_wdl(board) == -2  # the opponent is lost after our move
        dtz_after = tablebase.probe_dtz(board)
        board.pop()
        winning = [move for move in board.legal_moves if tablebase.probe_wdl(_after(board, move)) == -2]
        best = max(tablebase.probe_dtz(_after(board, move)) for move in winning)
    assert dtz_after == best  # the least negative = the fastest conversion
    assert any(text.startswith("tablebase: win") for text in recorder.messages)
    assert recorder.infos[-1].tbhits > 0
    assert recorder.infos[-1].line.score >= TB_WIN - 100


def _after(board: chess.Board, move: chess.Move) -> chess.Board:
    copy = board.copy()
    copy.push(move)
    return copy


def test_search_probes_after_captures() -> None:
    # White wins a rook by force (skewer), reaching KQvK: the search sees it through probes.
    engine = _engine()
    engine.set_option("syzygy_probe_limit", 3)
    board = chess.Board("8/8/8/3k4/8/8/1r6/1K1Q4 w - - 0 1")
    recorder = Recorder()
    _think(engine, board, recorder, depth=4)
    assert recorder.infos[-1].tbhits > 0


def _play_out(fen: str, plies: int) -> chess.Board:
    """Two engine processes with the tables play from *fen* for up to *plies*."""
    board = chess.Board(fen)
    engines = [chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=30) for _ in range(2)]
    try:
        for engine in engines:
            engine.configure({"SyzygyPath": str(TABLES), "OwnBook": False})
        for ply in range(plies):
            if board.is_game_over(claim_draw=True):
                break
            result = engines[ply % 2].play(board, chess.engine.Limit(nodes=3000))
            board.push(result.move)
    finally:
        for engine in engines:
            engine.quit()
    return board


@pytest.mark.parametrize(
    "fen",
    [
        "8/8/8/4k3/8/8/8/3QK3 w - - 0 1",  # KQvK
        "8/8/8/3k4/8/8/8/R3K3 w - - 0 1",  # KRvK
        "8/8/8/8/4k3/8/2KP4/8 w - - 0 1",  # KPvK, winning for White
    ],
)
def test_wins_are_converted_to_mate(fen: str) -> None:
    board = _play_out(fen, 200)
    assert board.is_checkmate(), board.fen()
    assert board.turn == chess.BLACK  # White delivered it


@pytest.mark.parametrize(
    "fen",
    [
        "8/8/3k4/8/8/2R5/8/r3K3 w - - 0 1",  # KRvKR: drawn
        "8/8/8/4k3/4p3/8/4P3/4K3 w - - 0 1",  # KPvKP: blocked pawns, drawn
    ],
)
def test_drawn_endings_are_held(fen: str) -> None:
    with chess.syzygy.open_tablebase(str(TABLES)) as tablebase:
        assert tablebase.probe_wdl(chess.Board(fen)) == 0
        board = _play_out(fen, 60)
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            assert outcome.winner is None, board.fen()
        else:
            assert tablebase.probe_wdl(board) == 0, board.fen()


def test_fifty_move_counter_forces_the_pawn_forward() -> None:
    # KPvK, White wins with the pawn move and with three king moves, but after 99
    # half-moves without capture or pawn move only the pawn move keeps the win: a king
    # move would let the fifty-move rule draw.
    engine = _engine()
    board = chess.Board("8/8/8/8/3P4/8/8/K2k4 w - - 99 80")
    recorder = Recorder()
    result = _think(engine, board, recorder, depth=3)
    assert result.move == chess.Move.from_uci("d4d5")
    assert any("tablebase: win, 1 of" in text for text in recorder.messages)


def test_win_out_of_reach_of_the_fifty_move_rule_is_reported() -> None:
    engine = _engine()
    board = chess.Board("8/8/8/3k4/8/8/8/R3K3 w - - 90 80")  # KRvK needs more than 10 moves
    recorder = Recorder()
    _think(engine, board, recorder, depth=3)
    assert any("spoiled by the fifty-move rule" in text for text in recorder.messages)
    assert abs(recorder.infos[-1].line.score) < 100


def test_several_folders_and_a_missing_one(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    for name in ("KQvK.rtbw", "KQvK.rtbz"):
        shutil.copy(TABLES / name, one / name)
    for name in ("KRvK.rtbw", "KRvK.rtbz"):
        shutil.copy(TABLES / name, two / name)
    probe = Probe()
    message = probe.open_tablebases(os.pathsep.join([str(one), str(tmp_path / "missing"), str(two)]))
    assert message.startswith("found 2 Syzygy WDL tables, up to 3 pieces")
    assert "missing is not a folder" in message
    assert probe.tb_limit == 3


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong kind"])
def test_broken_tables_disable_probing_without_crashing(tmp_path: Path, damage: str) -> None:
    for name, other in (("KQvK.rtbw", "KQvK.rtbz"), ("KQvK.rtbz", "KQvK.rtbw")):
        data = (TABLES / name).read_bytes()
        if damage == "truncated":
            data = data[:40]
        elif damage == "garbage":
            data = bytes(reversed(data))
        else:  # a DTZ table where the WDL table should be, and the other way round
            data = (TABLES / other).read_bytes()
        (tmp_path / name).write_bytes(data)
    engine = Engine()
    engine.set_option("own_book", False)
    engine.probe.open_tablebases(str(tmp_path))
    board = chess.Board("8/8/8/4k3/8/8/8/3QK3 w - - 0 1")
    recorder = Recorder()
    result = _think(engine, board, recorder, depth=3)
    assert result.move in board.legal_moves  # the search carried on
    assert [text for text in recorder.messages if text.startswith("error: tablebases disabled")], recorder.messages
    assert engine.probe.tablebase is None
    assert recorder.infos and recorder.infos[-1].line.depth == 3


def test_uci_reports_tables_and_errors(uci: UciProcess, tmp_path: Path) -> None:
    uci.send(f"setoption name SyzygyPath value {TABLES}{os.pathsep}{tmp_path / 'nope'}")
    line = uci.read_until(lambda line: line.startswith("info string"))[-1]
    assert "found 5 Syzygy WDL tables, up to 4 pieces" in line and "nope is not a folder" in line
    uci.send("position fen 8/8/8/4k3/8/8/8/3QK3 w - - 0 1")
    uci.send("go depth 3")
    lines = uci.read_until("bestmove")
    scores = [line for line in lines if " score " in line]
    assert any(" score cp 19" in line or " score mate " in line for line in scores), scores[-1]
