"""The pheromone memory: deposit, evaporation and bounds, the file format and its
failures, what ucinewgame keeps, learning across games, the ordering prior, the
roulette wheel, and colony training."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import chess
import pytest
from librt.vecs import vec
from mypy_extensions import i64
from uci_driver import ENGINE_COMMAND, UciProcess

from blitzaco.board import MAX_MOVES, Board, compute_key
from blitzaco.config import PheromoneConfig, config_from_dict
from blitzaco.engine import Bound, Engine, Reporter
from blitzaco.movepick import MovePicker, OrderingMemory, see_scratch
from blitzaco.moves import encode_move
from blitzaco.pheromone import MAGIC, PheromoneFileError, Trails, read_memory, write_memory
from blitzaco.timeman import Limits
from blitzaco.tools.colony import train

START = compute_key(chess.Board())
E4 = encode_move(chess.Move.from_uci("e2e4"))
D4 = encode_move(chess.Move.from_uci("d2d4"))


def test_deposit_evaporation_and_bounds() -> None:
    trails = Trails(PheromoneConfig(evaporation=0.5, max_level=1.0, min_level=0.1))
    trails.deposit(START, E4, 0.4)
    assert trails.level(START, E4) == pytest.approx(0.4)
    trails.evaporate()
    assert trails.level(START, E4) == pytest.approx(0.2)
    trails.deposit(START, E4, 5.0)
    assert trails.level(START, E4) == pytest.approx(1.0)  # bounded above
    trails.deposit(START, E4, -9.0)
    assert trails.level(START, E4) == 0.0  # and below
    trails.deposit(START, D4, 0.3)
    trails.evaporate()
    trails.evaporate()
    assert trails.level(START, D4) == 0.0  # 0.075 < min_level: forgotten
    assert trails.row(START) is None


def test_evaporation_is_folded_without_changing_levels() -> None:
    trails = Trails(PheromoneConfig(evaporation=0.95, min_level=0.0))
    trails.deposit(START, E4, 1.0)
    for _ in range(8000):  # 0.95 ** 8000 underflows any float: the factor must be folded
        trails.evaporate()
        if trails.level(START, E4) < 1e-200:
            trails.deposit(START, E4, 0.5)
    assert 0.0 < trails.level(START, E4) <= 0.5


def test_best_line_deposit_decays_along_the_line() -> None:
    trails = Trails(PheromoneConfig(deposit=0.2, deposit_decay=0.5, min_level=0.0))
    board = chess.Board()
    line = [chess.Move.from_uci(m) for m in ("e2e4", "e7e5", "g1f3")]
    trails.deposit_line(board, line)
    assert trails.level(START, E4) == pytest.approx(0.2)
    board.push(line[0])
    assert trails.level(compute_key(board), encode_move(line[1])) == pytest.approx(0.1)
    board.push(line[1])
    assert trails.level(compute_key(board), encode_move(line[2])) == pytest.approx(0.05)


def test_file_round_trip(tmp_path: Path) -> None:
    memory = {START: {E4: 0.75, D4: 0.25}, 12345: {encode_move(chess.Move.from_uci("a7a8q")): 1.0}}
    path = tmp_path / "p.bin"
    assert write_memory(path, memory) == 3
    assert path.stat().st_size == 16 + 3 * 16
    assert path.read_bytes()[:8] == MAGIC
    assert read_memory(path) == memory


def _corrupt_files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.bin"
    write_memory(good, {START: {E4: 0.5, D4: 0.25}})
    data = good.read_bytes()
    cases = {
        "magic": b"NOTPHERO" + data[8:],
        "version": data[:8] + struct.pack("<I", 9) + data[12:],
        "truncated": data[:-3],
        "count": data[:12] + struct.pack("<I", 7) + data[16:],
        "unsorted": data[:16] + data[32:48] + data[16:32],
        "level": data[:16 + 12] + struct.pack("<f", float("nan")) + data[32:],
        "move": data[:16 + 8] + struct.pack("<H", 0) + data[26:],  # from == to
        "empty": b"",
    }
    paths = {}
    for name, content in cases.items():
        paths[name] = tmp_path / f"{name}.bin"
        paths[name].write_bytes(content)
    return paths


def test_corrupt_files_are_refused(tmp_path: Path) -> None:
    for name, path in _corrupt_files(tmp_path).items():
        with pytest.raises(PheromoneFileError):
            read_memory(path)
        trails = Trails(PheromoneConfig())
        trails.long = {1: {E4: 0.5}}
        message = trails.load(path)
        assert message is not None and "corrupt" in message, name
        assert trails.long == {} and trails.path is None
    assert "No such file" in (Trails(PheromoneConfig()).load(tmp_path / "missing.bin") or "")


def test_uci_reports_a_corrupt_or_missing_file_and_plays_on(uci: UciProcess, tmp_path: Path) -> None:
    paths = _corrupt_files(tmp_path)
    uci.send(f"setoption name PheromoneFile value {paths['truncated']}")
    assert "corrupt" in uci.read_until(lambda line: line.startswith("info string"))[-1]
    uci.send(f"setoption name PheromoneFile value {tmp_path / 'missing.bin'}")
    assert "playing without it" in uci.read_until(lambda line: line.startswith("info string"))[-1]
    uci.send("position startpos")
    uci.send("go depth 3")
    assert uci.read_until(lambda line: line.startswith("bestmove"))[-1].startswith("bestmove ")
    good = tmp_path / "good.bin"
    write_memory(good, {START: {E4: 0.5}})
    uci.send(f"setoption name PheromoneFile value {good}")
    assert "1 positions" in uci.read_until(lambda line: line.startswith("info string"))[-1]


def _engine(**pheromone: object) -> Engine:
    """An engine with the pheromone memory on (it is off by default), book off."""
    engine = Engine(config_from_dict({"pheromone": {"enabled": True, **pheromone}}))
    engine.set_option("own_book", False)
    return engine


def _think(engine: Engine, board: chess.Board, depth: int = 4):
    limits = Limits(depth=depth)
    return engine.think(board, limits)


def test_searches_lay_trails_and_ucinewgame_keeps_only_the_long_term_memory() -> None:
    engine = _engine()
    engine.trails.long = {12345: {E4: 0.5}}
    board = chess.Board()
    result = _think(engine, board)
    assert engine.trails.level(START, encode_move(result.move)) > 0
    engine.new_game()
    assert engine.trails.row(START) is None
    assert engine.trails.long == {12345: {E4: 0.5}}


def test_disabled_memory_lays_nothing() -> None:
    engine = _engine(enabled=False)
    before = engine.trails.row(START)  # the bundled long-term trails
    _think(engine, chess.Board())
    assert engine.trails.row(START) == before


def test_learning_carries_trails_into_the_file(tmp_path: Path) -> None:
    path = tmp_path / "learnt.bin"
    write_memory(path, {})
    engine = _engine()
    assert engine.set_option("pheromone_file", str(path)).startswith("pheromone: 0 positions")
    engine.set_option("pheromone_learning", True)
    result = _think(engine, chess.Board())
    assert engine.new_game() is None
    learnt = read_memory(path)
    assert learnt[START][encode_move(result.move)] > 0
    # A new engine loading the file starts with what the last one learnt.
    fresh = _engine()
    fresh.set_option("pheromone_file", str(path))
    assert fresh.trails.level(START, encode_move(result.move)) == pytest.approx(learnt[START][encode_move(result.move)])


def test_learning_never_overwrites_a_file_it_could_not_read(tmp_path: Path) -> None:
    """A PheromoneFile that exists but is not a memory file (or a corrupt one) is
    reported, and learning leaves it as it is instead of replacing it."""
    for content in (b"my notes, not a memory file\n", MAGIC + b"\x01\x00\x00\x00\xff"):
        path = tmp_path / "notes.txt"
        path.write_bytes(content)
        engine = _engine()
        assert "playing without it" in engine.set_option("pheromone_file", str(path))
        engine.set_option("pheromone_learning", True)
        _think(engine, chess.Board())
        message = engine.new_game()
        assert message is not None and "left as it is" in message
        assert path.read_bytes() == content


_LEARNER = """
import sys
from blitzaco.config import PheromoneConfig
from blitzaco.pheromone import Trails
path, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
trails = Trails(PheromoneConfig())
trails.load(path)
for key in range(first, first + count):
    trails.deposit(key, 12 | 28 << 6, 1.0)
    message = trails.learn_into(path)
    assert message is None, message
"""


def test_two_processes_sharing_one_file_keep_each_others_learning(tmp_path: Path) -> None:
    """Two engines on one memory file (a match at concurrency 2): each loaded it
    once, each saves many times, at the same time; every lesson of both is in the
    file at the end (merged on save, under the file lock)."""
    path = tmp_path / "shared.bin"
    write_memory(path, {})
    count = 40
    learners = [
        subprocess.Popen([sys.executable, "-c", _LEARNER, str(path), str(first), str(count)])
        for first in (1, 1_000_001)
    ]
    assert [learner.wait(timeout=300) for learner in learners] == [0, 0]
    memory = read_memory(path)
    assert set(memory) == set(range(1, 1 + count)) | set(range(1_000_001, 1_000_001 + count))


def test_learning_needs_a_named_file_and_creates_it(tmp_path: Path) -> None:
    engine = _engine()
    engine.set_option("pheromone_learning", True)
    bundled = dict(engine.trails.long)
    _think(engine, chess.Board())
    engine.new_game()  # no PheromoneFile named: nothing is written, the bundled memory stays
    assert engine.trails.long == bundled
    new = tmp_path / "new.bin"
    assert "playing without it" in engine.set_option("pheromone_file", str(new))
    result = _think(engine, chess.Board())
    engine.new_game()
    assert read_memory(new)[START][encode_move(result.move)] > 0


def test_learning_on_quit_through_uci(tmp_path: Path) -> None:
    path = tmp_path / "learnt.bin"
    write_memory(path, {})
    config = tmp_path / "on.toml"
    config.write_text("[pheromone]\nenabled = true\n")
    uci = UciProcess()
    uci.handshake()
    uci.send(f"setoption name ConfigFile value {config}")
    uci.send(f"setoption name PheromoneFile value {path}")
    uci.send("setoption name PheromoneLearning value true")
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos")
    uci.send("go depth 3")
    uci.read_until(lambda line: line.startswith("bestmove"))
    uci.send("quit")
    uci.proc.wait(timeout=30)
    assert START in read_memory(path)


def _picked(board: chess.Board, memory: OrderingMemory, trails: Trails | None, previous: int = 0) -> list[str]:
    """Every move a ply-1 move picker yields at *board*, in order (no table move)."""
    own = Board.from_chess(board)
    picker = MovePicker(own, memory, vec[i64]([0] * (2 * MAX_MOVES)), see_scratch(), trails, True, 1)
    picker.start(0, previous)
    order = []
    while code := picker.next():
        order.append(chess.Move(code & 63, code >> 6 & 63, code >> 12 or None).uci())
    return order


def test_marked_quiet_moves_come_after_killers_and_before_history() -> None:
    """Given the trails (the search gives them with [pheromone] ordering on:
    test_search.py), the quiet moves the position's trails mark come after the
    captures that do not lose, the killer and the counter-move, strongest trail
    first, before the rest by history; without trails history alone orders them."""
    # Nxd4 (an even trade) and Nxe5 (a free pawn): captures that do not lose come first.
    board = chess.Board("r1bqkbnr/pppp1ppp/8/4p3/3nP3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    memory = OrderingMemory(True, True, True)
    memory.killers[2] = encode_move(chess.Move.from_uci("f1c4"))  # ply 1's first killer
    previous = encode_move(chess.Move.from_uci("c6d4"))
    memory.counters[previous & 4095] = encode_move(chess.Move.from_uci("b1c3"))
    memory.history[encode_move(chess.Move.from_uci("h2h3"))] = 1000  # White's history
    memory.history[encode_move(chess.Move.from_uci("g2g3"))] = 500
    trails = Trails(PheromoneConfig(min_level=0.0))
    key = compute_key(board)
    for uci, level in (("a2a3", 0.3), ("d2d3", 0.2), ("e1e2", 0.9), ("f3e5", 1.0)):  # f3e5 is no quiet move
        trails.deposit(key, encode_move(chess.Move.from_uci(uci)), level)
    order = _picked(board, memory, trails, previous)
    assert sorted(order[:2]) == ["f3d4", "f3e5"]
    assert order[2:9] == ["f1c4", "b1c3", "e1e2", "a2a3", "d2d3", "h2h3", "g2g3"]
    assert len(order) == len(set(order)) == len(list(board.pseudo_legal_moves))
    plain = _picked(board, memory, None, previous)
    assert plain[2:6] == ["f1c4", "b1c3", "h2h3", "g2g3"]
    assert sorted(plain) == sorted(order)


def test_roulette_follows_the_trails() -> None:
    trails = Trails(PheromoneConfig(variety_floor=0.1, seed=7))
    trails.long = {START: {E4: 0.9}}
    draws = [trails.roulette(START, [E4, D4]) for _ in range(2000)]
    assert Counter(draws)[E4] / 2000 == pytest.approx(1.0 / 1.1, abs=0.03)  # (0.9 + 0.1) / (0.9 + 0.1 + 0.1)
    again = Trails(PheromoneConfig(variety_floor=0.1, seed=7))
    again.long = {START: {E4: 0.9}}
    assert [again.roulette(START, [E4, D4]) for _ in range(2000)] == draws  # seeded


class _Lines(Reporter):
    def __init__(self) -> None:
        self.multipv: set[int] = set()
        self.messages: list[str] = []

    def info(self, info) -> None:  # noqa: ANN001
        self.multipv.add(info.line.multipv)

    def currmove(self, currmove) -> None:  # noqa: ANN001
        pass

    def message(self, text: str) -> None:
        self.messages.append(text)


def test_variety_draws_among_near_equal_moves_and_shows_one_line() -> None:
    board = chess.Board()
    engine = _engine(variety=True, variety_margin=60, variety_candidates=4, seed=3)
    limits = Limits(depth=3)
    moves = set()
    for _ in range(8):
        engine.new_game()
        report = _Lines()
        moves.add(engine.think(board, limits, report).move)
        assert report.multipv == {1}  # the candidates' lines are not shown to the GUI
    assert len(moves) > 1
    # Every move drawn is one of the four lines within the margin of the best.
    plain = _engine()
    plain.set_option("multipv", 4)
    lines = []

    class Keep(_Lines):
        def info(self, info) -> None:  # noqa: ANN001
            if info.line.depth == 3 and info.line.bound == Bound.EXACT:
                lines.append(info.line)

    plain.think(board, limits, Keep())
    best = max(line.score for line in lines)
    allowed = {line.pv[0] for line in lines if line.score >= best - 60}
    assert moves <= allowed
    # Without variety the engine plays one move every time.
    fixed = _engine()
    assert len({_think(fixed, board, depth=3).move for _ in range(3)}) == 1


def test_colony_training_is_seeded_and_reinforces_by_outcome(tmp_path: Path) -> None:
    config = config_from_dict({"pheromone": {"colony": {"max_plies": 6, "result_depth": 2, "ants_per_generation": 2}}})
    runs = []
    for _ in range(2):
        trails = Trails(config.pheromone)
        stats = train(config, trails, chess.Board(), 4, seed=5)
        runs.append(trails.long)
        assert stats.ants == 4 and stats.plies == 24 and stats.generations == 2
    assert runs[0] == runs[1] and runs[0]
    greedy = Trails(config.pheromone)
    train(config, greedy, chess.Board(), 3, mode="greedy", seed=5)
    assert greedy.long
    # A mate found by the ants: the winner's moves are marked, the loser's are not.
    mate = config_from_dict({"pheromone": {"colony": {"max_plies": 1, "temperature": 1.0, "beta": 10.0}}})
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    trails = Trails(mate.pheromone)
    train(mate, trails, board, 1, mode="greedy")
    assert trails.level(compute_key(board), encode_move(chess.Move.from_uci("a1a8"))) > 0


def test_colony_command_writes_a_memory_the_engine_loads(tmp_path: Path) -> None:
    out = tmp_path / "assets" / "pheromone.bin"
    result = subprocess.run(
        [*ENGINE_COMMAND, "colony", "--ants", "2", "--moves", "e2e4 e7e5", "--out", str(out), "--quiet"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "written to" in result.stdout
    memory = read_memory(out)
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    # The ants start after the given moves: the side that scored lays a trail from
    # the start (White, the side to move there) or from the position after White's
    # first move (Black); a losing side's trails stay at zero and are not stored.
    children = []
    for move in board.legal_moves:
        board.push(move)
        children.append(compute_key(board))
        board.pop()
    assert compute_key(board) in memory or any(key in memory for key in children)
    engine = _engine()
    assert "positions from" in engine.set_option("pheromone_file", str(out))
    bad = subprocess.run([*ENGINE_COMMAND, "colony", "--moves", "e2e5"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "bad move" in bad.stderr


def _learn_one_game(path: Path, tmp_path: Path) -> list[str]:
    """An engine process learning one game into *path* (ucinewgame ends the game):
    what it said."""
    config = tmp_path / "on.toml"
    config.write_text("[pheromone]\nenabled = true\n")
    with UciProcess(cwd=tmp_path) as uci:
        uci.handshake()
        uci.send(f"setoption name ConfigFile value {config}")
        uci.send("setoption name OwnBook value false")
        uci.send(f"setoption name PheromoneFile value {path}")
        uci.send("setoption name PheromoneLearning value true")
        uci.send("position startpos")
        uci.send("go depth 3")
        uci.read_until("bestmove")
        uci.send("ucinewgame")
        uci.isready()
        assert not any(b"Traceback" in chunk for chunk in uci.stderr)
        return list(uci.seen)


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX links and modes")
def test_learning_leaves_links_read_only_files_and_folders_as_the_user_made_them(tmp_path: Path) -> None:
    """A PheromoneFile that is a symbolic link has its target learnt into (the link
    stays a link); one the user made read-only (no write bit: checked on the mode
    itself, so that it holds for root too, as these tests run) is refused with a
    message and left as it is; no lock file is left beside any file, learnt into or
    refused."""
    target = tmp_path / "memory" / "target.bin"
    target.parent.mkdir()
    write_memory(target, {})
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    _learn_one_game(link, tmp_path)
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert START in read_memory(target)

    read_only = tmp_path / "read-only.bin"
    write_memory(read_only, {})
    read_only.chmod(0o444)
    before = read_only.read_bytes()
    said = _learn_one_game(read_only, tmp_path)
    assert any("read-only" in line and str(read_only) in line for line in said), said
    assert read_only.read_bytes() == before and read_only.stat().st_mode & 0o777 == 0o444

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    _learn_one_game(notes, tmp_path)
    assert notes.read_text() == "my notes\n"

    left = sorted(path.name for path in tmp_path.rglob("*") if path.name.endswith((".lock", ".tmp")))
    assert left == []
