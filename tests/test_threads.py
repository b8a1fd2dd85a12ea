"""Threads > 1: helper processes sharing one transposition table in shared memory.

The Threads option, searches with two threads through python-chess's client and a
raw pipe, the nodes of every process counted, helpers that die or hang, no helper
left behind however the engine ends, and the shared table cleared by ucinewgame
(the table itself: tests/test_sharedtt.py). Waits are generous timeouts (a helper
process has to start Python and import the engine first); no test asserts how fast
anything is.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import chess
import chess.engine
import pytest
from uci_driver import UciProcess, descendants, process_alive

from blitzaco.board import compute_key
from blitzaco.config import Config
from blitzaco.engine import MAX_THREADS, Engine
from blitzaco.search import Search, SearchPlan
from blitzaco.sharedtt import SharedTranspositionTable
from blitzaco.shm import shared_room
from blitzaco.smp import MAX_HELPERS
from blitzaco.timeman import Limits
from blitzaco.tt import TranspositionTable

two_cores = pytest.mark.skipif(MAX_THREADS < 2, reason="Threads 2 needs two cores")
has_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists processes through /proc")
posix = pytest.mark.skipif(sys.platform == "win32", reason="stops a process with SIGSTOP")

#: Generous: a helper starts a Python interpreter and imports the engine, on a
#: machine that may be busy with other tests.
STARTUP = 120.0


# ------------------------------------------------------------- the option


def test_threads_is_declared_from_one_to_the_number_of_cores(uci: UciProcess) -> None:
    declaration = next(line for line in uci.seen if line.startswith("option name Threads "))
    assert declaration == f"option name Threads type spin default 1 min 1 max {MAX_THREADS}"
    for value in ("0", str(MAX_THREADS + 1), "-3", "two"):
        uci.send(f"setoption name Threads value {value}")
    uci.isready()
    errors = [line for line in uci.seen if line.startswith("info string error") and "Threads" in line]
    assert len(errors) == 4, uci.seen
    uci.send("setoption name Threads value 1")
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos")
    uci.send("go depth 2")
    assert uci.read_until("bestmove")[-1].startswith("bestmove ")


def test_threads_1_loads_nothing_for_helpers() -> None:
    """Start-up pays nothing for Threads: the helpers' modules (and multiprocessing)
    are loaded when Threads > 1 is first set."""
    code = "import sys, blitzaco.uci\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'multiprocessing'" \
        " or m in ('blitzaco.smp', 'blitzaco.sharedtt')))\n"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    assert MAX_THREADS == max(1, min(os.cpu_count() or 1, MAX_HELPERS + 1))


# ------------------------------------------------- searching with two threads


@pytest.fixture
def two_threads(engine: chess.engine.SimpleEngine) -> chess.engine.SimpleEngine:
    engine.configure({"Threads": 2, "OwnBook": False})
    return engine


@two_cores
def test_go_depth_nodes_and_movetime_with_two_threads(two_threads: chess.engine.SimpleEngine) -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    info = two_threads.analyse(board, chess.engine.Limit(depth=5))
    assert info["depth"] == 5 and info["pv"][0] in board.legal_moves
    result = two_threads.play(board, chess.engine.Limit(nodes=3000), info=chess.engine.INFO_ALL)
    assert result.move in board.legal_moves
    assert result.info["nodes"] >= 3000  # every process's nodes, as Stockfish counts them
    for _ in range(4):
        result = two_threads.play(board, chess.engine.Limit(time=0.2))
        assert result.move in board.legal_moves
        board.push(result.move)


@two_cores
def test_two_threads_with_singular_extensions(engine: chess.engine.SimpleEngine, tmp_path: Path) -> None:
    """[search] singular_extensions on (tested from depth 4) in the main search and
    the helper: a search to depth 6 with Threads 2 reports that depth and a legal
    line, and the game goes on."""
    config = tmp_path / "singular.toml"
    config.write_text("[search]\nsingular_extensions = true\nsingular_depth = 4\n")
    engine.configure({"ConfigFile": str(config), "Threads": 2, "OwnBook": False})
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    info = engine.analyse(board, chess.engine.Limit(depth=6))
    assert info["depth"] == 6 and info["pv"][0] in board.legal_moves
    for _ in range(3):
        result = engine.play(board, chess.engine.Limit(nodes=5000))
        assert result.move in board.legal_moves
        board.push(result.move)


@two_cores
def test_stop_ends_an_infinite_analysis_with_two_threads(two_threads: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    with two_threads.analysis(board) as analysis:
        for info in analysis:
            if info.get("depth", 0) >= 3:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves


@two_cores
def test_play_with_pondering_and_two_threads(two_threads: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    limit = chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.05, black_inc=0.05)
    for _ in range(4):
        result = two_threads.play(board, limit, ponder=True)
        assert result.move in board.legal_moves
        board.push(result.move)


@two_cores
def test_ponderhit_with_two_threads(uci: UciProcess) -> None:
    uci.send("setoption name Threads value 2")
    uci.send("position startpos moves e2e4")
    uci.send("go ponder wtime 3000 btime 3000 winc 0 binc 0")
    lines = uci.drain(1.0)
    assert not any(line.startswith("bestmove") for line in lines), "bestmove while pondering"
    uci.send("ponderhit")
    best = uci.read_until("bestmove", timeout=60)[-1].split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(best) in board.legal_moves


@two_cores
def test_isready_is_answered_while_two_threads_search(uci: UciProcess) -> None:
    uci.send("setoption name Threads value 2")
    uci.send("position startpos")
    uci.send("go infinite")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.isready()
    uci.send("stop")
    assert uci.read_until("bestmove")[-1].startswith("bestmove ")


# ------------------------------------------------------ the engine's own API


def _record_searches(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[Search]:
    """The searches built through *module*'s ``Search`` from now on, in order."""
    built: list[Search] = []
    real_search = module.Search

    def recorded(board: chess.Board, plan: SearchPlan) -> Search:
        search = real_search(board, plan)
        built.append(search)
        return search

    monkeypatch.setattr(module, "Search", recorded)
    return built


def test_a_helper_searches_into_the_shared_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper builds the engine's search (on the engine's own board, from the
    helper settings' configuration) on the position it is sent, and fills the
    shared table with the positions after the root moves."""
    from blitzaco import search as search_module
    from blitzaco.smp import _CONTROL_WORDS, _TOKEN, HelperSettings, _HelperSearcher

    built = _record_searches(monkeypatch, search_module)
    table = SharedTranspositionTable(1)
    words = memoryview(bytearray(8 * _CONTROL_WORDS)).cast("Q")
    try:
        helper = _HelperSearcher(words, 1, table, HelperSettings(Config()))
        board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
        words[_TOKEN] = 7
        helper.search(7, 1, board, list(board.legal_moves), 5)
        assert len(built) == 1 and isinstance(built[0], Search)
        assert built[0].table is table
        assert built[0].completed_depth >= 3 and built[0].nodes > 100
        children = []
        for move in board.legal_moves:
            board.push(move)
            children.append(compute_key(board))
            board.pop()
        assert sum(table.probe(key) is not None for key in children) >= len(children) // 2
    finally:
        words.release()
        table.close()


@two_cores
def test_go_nodes_counts_the_nodes_of_every_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit is reached by the sum: the main search stops short of it on its
    own, and the reported count is the main search's plus the helper's; the shared
    table serves both."""
    from blitzaco import turn

    mains = _record_searches(monkeypatch, turn)
    engine = Engine(Config())
    try:
        engine.set_option("own_book", False)
        engine.set_option("threads", 2)
        assert engine.pool is not None and engine.pool.wait_ready(STARTUP)
        result = engine.think(chess.Board(), Limits(nodes=40000))
        assert len(mains) == 1 and mains[0].table is engine.tt
        assert isinstance(engine.tt, SharedTranspositionTable)
        main_nodes = mains[0].nodes
        assert result.nodes >= 40000
        assert main_nodes < 40000, "the helper's nodes count towards the limit"
        assert result.nodes > main_nodes, "and towards the reported count"
        assert engine.pool.helper_nodes() > 0, "the helper searched too"
    finally:
        engine.close()


@two_cores
def test_helpers_are_sent_only_the_moves_a_repetition_can_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    """Late in a game the helpers get the position with the moves since the last
    capture or pawn move, not the whole game's move stack (pickled at every search)."""
    engine = Engine()
    try:
        engine.set_option("own_book", False)
        engine.set_option("threads", 2)
        assert engine.pool is not None
        sent: list[chess.Board] = []
        start_search = engine.pool.start_search

        def spy(board: chess.Board, *args, **kwargs):  # type: ignore[no-untyped-def]
            sent.append(board)
            return start_search(board, *args, **kwargs)

        monkeypatch.setattr(engine.pool, "start_search", spy)
        board = chess.Board()
        for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"):
            board.push_uci(uci)
        engine.think(board, Limits(depth=2))
        assert len(sent) == 1 and sent[0] == board  # the same position, side and rights
        assert [m.uci() for m in sent[0].move_stack] == ["g1f3", "b8c6", "f1c4", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"]
        assert sent[0].halfmove_clock == board.halfmove_clock == 8
    finally:
        engine.close()


@two_cores
def test_ucinewgame_and_clear_hash_clear_the_shared_table() -> None:
    engine = Engine()
    try:
        engine.set_option("own_book", False)
        engine.set_option("threads", 2)
        table = engine.tt
        assert isinstance(table, SharedTranspositionTable)
        mapped = SharedTranspositionTable(name=table.name)  # as a helper maps it
        try:
            board = chess.Board()
            keys = [compute_key(after) for after in _children(board)]  # the root itself is not stored
            for clear in (engine.new_game, engine.clear_hash):
                engine.think(board, Limits(depth=4))
                assert any(table.probe(key) for key in keys) and any(mapped.probe(key) for key in keys)
                clear()
                assert not any(table.probe(key) for key in keys) and not any(mapped.probe(key) for key in keys)
        finally:
            mapped.close()
    finally:
        engine.close()


def _children(board: chess.Board) -> list[chess.Board]:
    boards = []
    for move in board.legal_moves:
        after = board.copy()
        after.push(move)
        boards.append(after)
    return boards


@two_cores
def test_hash_resizes_the_shared_table_and_threads_1_ends_the_helpers() -> None:
    engine = Engine()
    try:
        engine.set_option("own_book", False)
        engine.set_option("threads", 2)
        assert engine.pool is not None
        helpers = engine.pool.pids
        engine.set_option("hash_mb", 16)
        assert isinstance(engine.tt, SharedTranspositionTable) and engine.tt.megabytes == 16
        assert engine.pool.pids == helpers  # the same processes, switched to the new table
        assert engine.think(chess.Board(), Limits(depth=3)).move is not None
        pool = engine.pool
        engine.set_option("threads", 1)
        # Back to the single-process table.
        assert engine.pool is None and isinstance(engine.tt, TranspositionTable)
        assert not isinstance(engine.tt, SharedTranspositionTable)
        assert pool.helpers == 0
        assert engine.think(chess.Board(), Limits(depth=3)).move is not None
    finally:
        engine.close()


def _shm_free_mb() -> int | None:
    room = shared_room()
    return room >> 20 if room is not None else None


@two_cores
@pytest.mark.skipif((_shm_free_mb() or 1 << 30) >= 32768, reason="needs less shared memory than the largest Hash")
def test_a_hash_larger_than_the_shared_memory_left_is_refused(uci: UciProcess) -> None:
    _start_two_threads(uci)
    uci.send("setoption name Hash value 32768")
    uci.isready()
    assert any(line.startswith("info string error: not enough memory for Hash 32768") for line in uci.seen)
    uci.send("go depth 3")  # the old table is still there
    assert uci.read_until("bestmove")[-1].startswith("bestmove ")


# ------------------------------------------------------------- robustness


def _helper_pid(lines: list[str]) -> int:
    line = next(line for line in lines if "helper process" in line)
    match = re.search(r"pid (\d+)", line)
    assert match is not None, line
    return int(match.group(1))


def _start_two_threads(uci: UciProcess) -> int:
    uci.send("setoption name OwnBook value false")
    uci.send("setoption name Threads value 2")
    lines = uci.read_until(lambda line: "helper process" in line)
    uci.send("position startpos")
    return _helper_pid(lines)


def _wait_until_ready(uci: UciProcess) -> None:
    """Search until the engine says (debug mode) that its helper has started up."""
    uci.send("debug on")
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        uci.send("go depth 1")
        lines = uci.read_until("bestmove")
        if any("helpers: 1 of 1 ready" in line for line in lines):
            uci.send("debug off")
            return
        time.sleep(0.2)
    raise AssertionError("the helper never started up")


def _wait_gone(pids: set[int], timeout: float = 60.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = {pid for pid in pids if process_alive(pid)}
        if not alive:
            return set()
        time.sleep(0.1)
    return {pid for pid in pids if process_alive(pid)}


@two_cores
@has_proc
def test_helpers_are_kept_across_moves_and_games(uci: UciProcess) -> None:
    pid = _start_two_threads(uci)
    for moves in ("", "e2e4", "e2e4 e7e5"):
        uci.send(f"position startpos moves {moves}".strip())
        uci.send("go depth 3")
        uci.read_until("bestmove")
        uci.send("ucinewgame")
    uci.send("setoption name Threads value 2")  # the same value: the same helper
    assert _helper_pid(uci.read_until(lambda line: "helper process" in line)) == pid
    assert process_alive(pid)
    assert not [line for line in uci.seen if line.startswith("info string error")]


@two_cores
@has_proc
def test_a_killed_helper_is_reported_and_replaced(uci: UciProcess) -> None:
    pid = _start_two_threads(uci)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    uci.send("go depth 3")
    lines = uci.read_until("bestmove")
    report = [line for line in lines if line.startswith("info string error: helper 1")]
    assert report and f"pid {pid}" in report[0] and "exited" in report[0] and "restarted" in report[0], lines
    replacement = int(re.findall(r"pid (\d+)", report[0])[-1])
    assert replacement != pid and process_alive(replacement)
    uci.send("go depth 3")
    assert uci.read_until("bestmove")[-1].startswith("bestmove ")
    uci.isready()


@two_cores
@has_proc
@posix
def test_a_hanging_helper_is_killed_and_replaced(uci: UciProcess, tmp_path: Path) -> None:
    config = tmp_path / "threads.toml"
    config.write_text("[threads]\nhang_timeout = 1000\n")
    uci.send(f"setoption name ConfigFile value {config}")
    _start_two_threads(uci)
    _wait_until_ready(uci)
    uci.send("go depth 1")  # taken up at once by the ready helper
    uci.read_until("bestmove")
    time.sleep(0.5)
    # The helper now running: the last one named (a busy machine may have made an
    # earlier one miss the timeout and be replaced already).
    pid = int(re.findall(r"pid (\d+)", " ".join(line for line in uci.seen if "pid " in line))[-1])
    os.kill(pid, signal.SIGSTOP)  # now it hangs
    try:
        uci.send("go depth 1")  # sent to the helper, which does not take it up
        lines = uci.read_until("bestmove")
        time.sleep(1.5)
        uci.send("go depth 2")  # found hanging by now (before this search, or after the last)
        lines += uci.read_until("bestmove")
    finally:
        if process_alive(pid):
            os.kill(pid, signal.SIGKILL)
    report = [line for line in lines if line.startswith(f"info string error: helper 1 (pid {pid})")]
    assert report and "has not taken up a search" in report[0] and "restarted" in report[0], lines
    assert not process_alive(pid)


def _engine_with_a_ready_helper() -> tuple[UciProcess, set[int]]:
    uci = UciProcess()
    uci.handshake()
    helper = _start_two_threads(uci)
    _wait_until_ready(uci)
    processes = descendants(uci.proc.pid)
    assert helper in processes
    return uci, processes


@two_cores
@has_proc
def test_no_helper_outlives_quit() -> None:
    uci, processes = _engine_with_a_ready_helper()
    uci.send("go infinite")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.send("quit")
    assert uci.proc.wait(timeout=60) == 0
    assert _wait_gone(processes) == set()


@two_cores
@has_proc
def test_no_helper_outlives_the_end_of_input() -> None:
    uci, processes = _engine_with_a_ready_helper()
    assert uci.proc.stdin is not None
    uci.proc.stdin.close()
    assert uci.proc.wait(timeout=60) == 0
    assert _wait_gone(processes) == set()


@two_cores
@has_proc
def test_no_helper_outlives_a_killed_engine() -> None:
    uci, processes = _engine_with_a_ready_helper()
    uci.send("go infinite")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.proc.kill()  # SIGKILL: the engine runs no clean-up at all
    uci.proc.wait(timeout=60)
    assert _wait_gone(processes) == set()


@two_cores
@has_proc
def test_no_helper_outlives_an_engine_killed_while_its_helper_starts() -> None:
    uci = UciProcess()
    uci.handshake()
    helper = _start_two_threads(uci)
    processes = descendants(uci.proc.pid) | {helper}
    uci.proc.kill()
    uci.proc.wait(timeout=60)
    assert _wait_gone(processes, timeout=STARTUP) == set()


#: Quits the engine as a child subreaper and reports what the engine left behind.
QUIT_STRESS = Path(__file__).resolve().parent.parent / "scripts" / "quit_stress.py"


@two_cores
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper (prctl) is Linux's")
@pytest.mark.parametrize("moment", ["bestmove", "isready", "infinite", "ucinewgame", "eof", "threads-2-1-2"])
def test_no_process_the_engine_started_outlives_it(moment: str) -> None:
    """After quit (or the end of input), no process the engine started is left: not
    a helper, nor multiprocessing's resource tracker, which spawn starts on POSIX
    and which, left alone, exits only after the engine (in the one-file binary,
    after the bootloader has deleted the folder it runs from: a traceback on the
    GUI's stderr). Quit right after a search, as the helper starts (right after
    readyok), mid-search, after ucinewgame, at the end of input, and after Threads
    2, 1, 2 (where Threads 1 leaves the engine no child process). The script is a
    child subreaper, so what the engine leaves becomes its child as the engine
    exits: exact, no timing."""
    done = subprocess.run([sys.executable, str(QUIT_STRESS), "--json", "--quits", "1", "--moments", moment],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1) and done.stdout, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["orphans"] == [], f"left behind by the engine: {report['orphans']}"
    assert report.get("threads_1_children", []) == [], f"still running at Threads 1: {report['threads_1_children']}"
    assert report.get("error") is None and report["returncode"] == 0, report
    assert report["stderr"] == ""


@two_cores
@pytest.mark.skipif(sys.platform == "win32", reason="no resource tracker on Windows")
def test_the_last_pool_closed_stops_the_tracker_and_the_next_starts_one() -> None:
    """HelperPool.close stops (and collects) the tracker the pools started; a pool
    opened after that starts a new one and its helper works; a tracker that was
    running before any pool opened is not the pools' and is left running."""
    from multiprocessing import resource_tracker

    from blitzaco import smp
    from blitzaco.smp import HelperPool, HelperSettings, stop_resource_tracker

    assert not smp._open_pools, "a pool left open by an earlier test in this process"
    tracker: Any = resource_tracker._resource_tracker  # type: ignore[attr-defined]
    stop_resource_tracker()
    settings = HelperSettings(Config())
    pids = []
    for _ in range(2):
        pool = HelperPool(1, 1, settings)
        try:
            assert tracker._pid is not None and process_alive(tracker._pid)
            pids.append(tracker._pid)
            assert pool.wait_ready(STARTUP)
        finally:
            pool.close()
        assert tracker._pid is None and tracker._fd is None
        with pytest.raises(ChildProcessError):  # collected: not even a zombie
            os.waitpid(pids[-1], os.WNOHANG)
    assert pids[0] != pids[1]

    resource_tracker.ensure_running()  # someone else's, before the pool
    theirs = tracker._pid
    pool = HelperPool(1, 1, settings)
    pool.close()
    assert tracker._pid == theirs and process_alive(theirs)
    stop_resource_tracker()
    assert tracker._pid is None and not process_alive(theirs)
    stop_resource_tracker()  # none running: nothing to do, no error


def _shared_mappings(pid: int) -> list[str]:
    """The shared blocks *pid* maps (Linux, /proc/PID/maps): /dev/shm files and
    anonymous memory files."""
    try:
        lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    except OSError:
        return []
    return sorted({line.split(None, 5)[5] for line in lines if "/dev/shm/" in line or "/memfd:" in line})


@two_cores
@has_proc
@posix
def test_killing_the_whole_process_group_leaves_no_shared_memory() -> None:
    """A GUI that kills a hung engine kills its whole process group with SIGKILL:
    the engine, its helper and multiprocessing's resource tracker, so no process is
    left to free a named block. The table (Hash MB) and the control block must not
    stay in /dev/shm until the next reboot."""
    uci = UciProcess(new_session=True)
    try:
        uci.handshake()
        uci.send("setoption name Hash value 8")
        _start_two_threads(uci)
        _wait_until_ready(uci)
        processes = {uci.proc.pid} | descendants(uci.proc.pid)
        mapped = {pid: _shared_mappings(pid) for pid in processes}
        helpers = [pid for pid in processes if pid != uci.proc.pid and mapped[pid]]
        assert len(mapped[uci.proc.pid]) >= 2 and helpers, mapped  # the table and the control block, shared
        uci.send("go infinite")
        uci.read_until(lambda line: line.startswith("info depth"))
        os.killpg(uci.proc.pid, signal.SIGKILL)
        uci.proc.wait(timeout=60)
        assert _wait_gone(processes) == set()
    finally:
        if uci.proc.poll() is None:
            uci.proc.kill()
    names = {name.split()[0] for blocks in mapped.values() for name in blocks if name.startswith("/dev/shm/")}
    assert [name for name in names if Path(name).exists()] == []
