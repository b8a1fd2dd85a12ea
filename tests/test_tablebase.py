"""Syzygy tablebases with real table files (tests/data/syzygy): root choice, search
probes, games converted or held, fifty-move cases, and failures that must not crash."""

from __future__ import annotations

import os
import re
import shutil
import time
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


def test_search_probes_after_captures_with_singular_extensions() -> None:
    """[search] singular_extensions on (tested from depth 4): the tables are still
    probed in the tree and the won rook is still seen."""
    from blitzaco.config import config_from_dict

    engine = Engine(config_from_dict({"search": {"singular_extensions": True, "singular_depth": 4}}))
    engine.set_option("own_book", False)
    assert "found 5" in engine.probe.open_tablebases(str(TABLES))
    engine.set_option("syzygy_probe_limit", 3)
    recorder = Recorder()
    result = _think(engine, chess.Board("8/8/8/3k4/8/8/1r6/1K1Q4 w - - 0 1"), recorder, depth=6)
    assert recorder.infos[-1].tbhits > 0 and result.score > 1000


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


def _damage(data: bytes, damage: str, other: bytes) -> bytes:
    if damage == "truncated":
        return data[:40]
    if damage == "garbage":
        return bytes(reversed(data))
    if damage == "wrong kind":  # a DTZ table where the WDL table should be, and the other way round
        return other
    return data[:4] + bytes(len(data) - 4)  # the right magic and size, a body of zeros: fails when probed


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong kind", "zeroed body"])
def test_a_broken_table_is_left_out_and_the_others_kept(tmp_path: Path, damage: str) -> None:
    """A damaged KQvK is reported and left out, when the tables are opened (a wrong
    size or magic) or when it first fails a probe; the search carries on, and KRvK,
    beside it in the same folder, is still used, as Stockfish keeps the good tables."""
    for name, other in (("KQvK.rtbw", "KQvK.rtbz"), ("KQvK.rtbz", "KQvK.rtbw")):
        (tmp_path / name).write_bytes(_damage((TABLES / name).read_bytes(), damage, (TABLES / other).read_bytes()))
    for name in ("KRvK.rtbw", "KRvK.rtbz"):
        shutil.copy(TABLES / name, tmp_path / name)
    engine = Engine()
    engine.set_option("own_book", False)
    opened = engine.probe.open_tablebases(str(tmp_path))
    board = chess.Board("8/8/8/4k3/8/8/8/3QK3 w - - 0 1")
    recorder = Recorder()
    result = _think(engine, board, recorder, depth=3)
    assert result.move in board.legal_moves  # the search carried on
    assert recorder.infos and recorder.infos[-1].line.depth == 3
    reports = [opened] + [text for text in recorder.messages if text.startswith("error")]
    assert any("KQvK" in text and "error" in text for text in reports), reports
    assert not any("disabled" in text for text in reports), reports
    assert engine.probe.tablebase is not None
    rook = chess.Board("8/8/8/8/8/k7/8/2K4R w - - 0 1")
    recorder = Recorder()
    _think(engine, rook, recorder, depth=3)
    assert any(text.startswith("tablebase: win") for text in recorder.messages), recorder.messages
    assert recorder.infos[-1].tbhits > 0
    again = Recorder()
    _think(engine, board, again, depth=3)
    assert not [text for text in again.messages if text.startswith("error")]  # reported once


def test_uci_keeps_the_good_tables_beside_a_corrupt_one(uci: UciProcess, tmp_path: Path) -> None:
    for name in ("KRvK.rtbw", "KRvK.rtbz", "KQvK.rtbz"):
        shutil.copy(TABLES / name, tmp_path / name)
    (tmp_path / "KQvK.rtbw").write_bytes(bytes(reversed((TABLES / "KQvK.rtbw").read_bytes())))
    uci.send("setoption name OwnBook value false")
    uci.send(f"setoption name SyzygyPath value {tmp_path}")
    line = uci.read_until(lambda text: text.startswith("info string"))[-1]
    assert "found 1 Syzygy WDL tables" in line and "KQvK.rtbw" in line and "error" in line, line
    uci.send("position fen 8/8/8/4k3/8/8/8/3QK3 w - - 0 1")
    uci.send("go depth 3")
    assert chess.Move.from_uci(uci.read_until("bestmove")[-1].split()[1]) in chess.Board(
        "8/8/8/4k3/8/8/8/3QK3 w - - 0 1").legal_moves
    uci.send("position fen 8/8/8/8/8/k7/8/2K4R w - - 0 1")
    uci.send("go depth 3")
    lines = uci.read_until("bestmove")
    assert any("tablebase: win" in text for text in lines), lines
    assert not any(text.startswith("info string error") for text in lines)


def test_uci_reports_tables_and_errors(uci: UciProcess, tmp_path: Path) -> None:
    uci.send(f"setoption name SyzygyPath value {TABLES}{os.pathsep}{tmp_path / 'nope'}")
    line = uci.read_until(lambda line: line.startswith("info string"))[-1]
    assert "found 5 Syzygy WDL tables, up to 4 pieces" in line and "nope is not a folder" in line
    uci.send("position fen 8/8/8/4k3/8/8/8/3QK3 w - - 0 1")
    uci.send("go depth 3")
    lines = uci.read_until("bestmove")
    scores = [line for line in lines if " score " in line]
    assert any(" score cp 19" in line or " score mate " in line for line in scores), scores[-1]


# ------------------------------------------------------- root probing on the clock

ROOK_ENDING = "8/8/8/2k5/8/8/R7/1K6 w - - 0 1"  # KRvK, 18 moves, most of them winning


def _winning(fen: str) -> set[chess.Move]:
    board = chess.Board(fen)
    with chess.syzygy.open_tablebase(str(TABLES)) as tablebase:
        return {move for move in board.legal_moves if tablebase.probe_wdl(_after(board, move)) == -2}


def test_a_short_clock_ranks_the_root_by_wdl_only(uci: UciProcess) -> None:
    """The root's DTZ probes cost about 2.5 ms each in python-chess here (18 moves:
    45 ms; 5- to 7-piece tables cost more), its WDL probes about 0.07 ms. go wtime 10
    (a budget of 0.1 ms) answers without ranking the root by DTZ; go wtime 500 (soft
    limit 4 ms, hard 20 ms) keeps every move that keeps the win by WDL, says so, and
    plays one of them; without a clock DTZ ranks the moves."""
    uci.send("setoption name OwnBook value false")
    uci.send("setoption name Move Overhead value 0")
    uci.send(f"setoption name SyzygyPath value {TABLES}")
    uci.send(f"position fen {ROOK_ENDING}")
    uci.send("go wtime 10 btime 10")
    lines = uci.read_until("bestmove")
    assert not any("plies to zeroing" in line for line in lines), lines
    assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board(ROOK_ENDING).legal_moves
    uci.send("go wtime 500 btime 500")
    lines = uci.read_until("bestmove")
    report = next(line for line in lines if line.startswith("info string tablebase: win"))
    assert "by WDL: no time for DTZ" in report, report
    assert chess.Move.from_uci(lines[-1].split()[1]) in _winning(ROOK_ENDING)
    uci.send("go depth 1")
    lines = uci.read_until("bestmove")
    report = next(line for line in lines if line.startswith("info string tablebase: win"))
    assert "plies to zeroing" in report and "WDL" not in report, report


def _slowed(monkeypatch: pytest.MonkeyPatch, engine: Engine, name: str, seconds: float) -> list[chess.Board]:
    """Make the engine's tables' *name* probe take *seconds* (as 7-piece tables on a
    cold disk may); returns the list of the positions it probes."""
    tablebase = engine.probe.tablebase
    assert tablebase is not None
    probe = getattr(tablebase, name)
    calls: list[chess.Board] = []

    def slow(board: chess.Board) -> int:
        calls.append(board.copy())
        time.sleep(seconds)
        return probe(board)

    monkeypatch.setattr(tablebase, name, slow)
    return calls


def test_root_dtz_probes_stop_at_the_soft_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """With DTZ probes of 100 ms and a 2 s clock (soft limit 34 ms, hard 170 ms), the
    root's DTZ ranking stops once the next probe would pass the soft limit (a
    blocking ranking probes every winning move: all 18); the move keeps the win."""
    engine = _engine()
    calls = _slowed(monkeypatch, engine, "probe_dtz", 0.1)
    board = chess.Board(ROOK_ENDING)
    recorder = Recorder()
    result = _think(engine, board, recorder, wtime=2000, btime=2000)
    root_probes = [probed for probed in calls if len(probed.move_stack) == 1]  # python-chess recurses too
    assert len(root_probes) <= 2, root_probes
    assert result.move in _winning(ROOK_ENDING)
    assert any("by WDL: no time for DTZ" in text for text in recorder.messages), recorder.messages


def test_root_wdl_probes_stop_before_the_hard_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """With WDL probes of 30 ms and a 1 s clock (hard limit 70 ms), the root probes
    only the moves whose probe fits before the hard limit (a blocking ranking probes
    all 18), says how many it left out, and plays one that proved to keep the win."""
    engine = _engine()
    _slowed(monkeypatch, engine, "probe_wdl", 0.03)
    board = chess.Board(ROOK_ENDING)
    recorder = Recorder()
    result = _think(engine, board, recorder, wtime=1000, btime=1000)
    report = next(text for text in recorder.messages if text.startswith("tablebase: win"))
    match = re.search(r"\((\d+) moves not probed in time\)", report)
    assert match is not None and 0 < int(match.group(1)) < board.legal_moves.count(), report
    assert result.move in _winning(ROOK_ENDING)
