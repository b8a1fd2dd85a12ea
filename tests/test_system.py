"""The differences between operating systems (blitzaco.system), each system's branch
run here: Windows' and macOS's with ``system.PLATFORM`` set (and a stand-in for
``msvcrt``, which only Windows has), Linux's as it is. What cannot run here is the
real Windows lock and a real macOS; the README lists those as untested there."""

from __future__ import annotations

import io
import os
import sys
import types
from pathlib import Path

import pytest

from blitzaco import system

ROOT = Path(__file__).resolve().parent.parent
SYZYGY = ROOT / "tests" / "data" / "syzygy"


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """Windows, as far as this machine can be: the platform's name, and an
    ``msvcrt`` whose ``locking`` records its calls (the lock itself is not taken)."""
    calls: list[tuple[int, int, int]] = []
    fake = types.SimpleNamespace(LK_LOCK=1, locking=lambda handle, mode, size: calls.append((handle, mode, size)))
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(system, "PLATFORM", "win32")
    return calls


def test_syzygy_paths_split_by_each_systems_separator(monkeypatch: pytest.MonkeyPatch) -> None:
    assert system.split_paths("/tb/wdl:/tb/dtz::") == ["/tb/wdl", "/tb/dtz"]
    monkeypatch.setattr(system, "PLATFORM", "win32")
    assert system.path_separator() == ";"
    assert system.split_paths(r"C:\tb\wdl;D:\more;") == [r"C:\tb\wdl", r"D:\more"]
    monkeypatch.setattr(system, "PLATFORM", "darwin")
    assert system.split_paths("/a:/b") == ["/a", "/b"]


def test_syzygy_path_of_two_folders_on_windows_finds_the_tables(
        windows: list[tuple[int, int, int]], tmp_path: Path) -> None:
    from blitzaco.config import BookConfig
    from blitzaco.probe import Probe

    probe = Probe(BookConfig())
    empty = tmp_path / "empty"
    empty.mkdir()
    message = probe.open_tablebases(f"{empty};{SYZYGY}")
    assert probe.tablebase is not None and message.startswith("found "), message
    probe.close_tablebases()


def _learn_once(path: Path) -> tuple[int, int]:
    """A game's trail learnt into a new memory file at *path*: the file's inode
    before and after (the lesson checked in the file)."""
    from blitzaco.config import PheromoneConfig
    from blitzaco.pheromone import Trails, read_memory, write_memory

    write_memory(path, {})
    before = os.stat(path).st_ino
    trails = Trails(PheromoneConfig())
    trails.load(str(path))
    trails.deposit(1234, 12 | 28 << 6, 1.0)
    assert trails.learn_into(path) is None
    assert 1234 in read_memory(path)
    return before, os.stat(path).st_ino


def test_the_memory_file_lock_and_save_on_windows(windows: list[tuple[int, int, int]], tmp_path: Path) -> None:
    """Windows: the lock is msvcrt's, and a save writes the locked file in place (the
    same file, not a new one renamed over it); POSIX renames a new file over it."""
    before, after = _learn_once(tmp_path / "memory.bin")
    assert len(windows) == 1 and windows[0][1:] == (1, 1)  # msvcrt.locking(handle, LK_LOCK, 1)
    assert after == before  # written in place


def test_the_memory_file_is_replaced_by_a_rename_on_posix(tmp_path: Path) -> None:
    assert system.rename_replaces_open_files()
    before, after = _learn_once(tmp_path / "memory.bin")
    assert after != before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="compares with Linux's anonymous blocks")
def test_shared_memory_is_anonymous_on_linux_and_named_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    from blitzaco import shm

    block = shm.create_block(1 << 16)
    assert system.anonymous_shared_memory() and block.name.startswith("memfd:")
    assert shm.shared_room() is not None
    block.close()
    monkeypatch.setattr(system, "PLATFORM", "darwin")
    assert not system.anonymous_shared_memory() and shm.shared_room() is None
    named = shm.create_block(1 << 16)
    try:
        assert not named.name.startswith("memfd:")
        named.buf[:5] = b"hello"
        other = shm.attach_block(named.name)
        assert bytes(other.buf[:5]) == b"hello"
        other.close()
    finally:
        named.close()
        named.unlink()


def test_a_frozen_build_finds_its_files_under_its_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from blitzaco.bundled import bundled_file
    from blitzaco.config import defaults_path

    assert system.frozen_root() is None
    assets = tmp_path / "blitzaco" / "assets"
    assets.mkdir(parents=True)
    (assets / "book.bin").write_bytes(b"")
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert system.frozen_root() == tmp_path
    assert bundled_file("book.bin") == assets / "book.bin"
    assert bundled_file("pheromone.bin") is None  # not in this build: not the checkout's either
    assert defaults_path() == tmp_path / "blitzaco" / "config.toml"


def test_commands_ending_in_crlf_as_windows_pipes_send_them() -> None:
    from blitzaco.uci import UciProtocol

    out = io.StringIO()
    loop = UciProtocol(output=out)
    loop.run(io.BytesIO(b"uci\r\nisready\r\nposition startpos moves e2e4\r\ngo depth 2\r\nisready\r\nquit\r\n"))
    lines = out.getvalue().splitlines()
    assert "uciok" in lines and lines.count("readyok") == 2
    assert any(line.startswith("bestmove ") for line in lines)
    assert not any("\r" in line or "unknown" in line.lower() for line in lines)


def test_a_background_job_yields_to_other_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_in_background: on Linux the idle scheduling class and, where the kernel
    groups processes by session, that session's group at nice 19 (a job in its own
    session, as setsid starts one, otherwise competes with a match's session as an
    equal); elsewhere nothing is changed. Run in a new session, so that this test's
    own session keeps its priority."""
    import subprocess

    before = os.sched_getscheduler(0) if sys.platform == "linux" else None
    monkeypatch.setattr(system, "PLATFORM", "darwin")
    assert system.run_in_background() is False
    if sys.platform != "linux":
        return
    assert os.sched_getscheduler(0) == before  # this process untouched (a test run may itself be idle-class)
    probe = ("import os; from blitzaco import system; changed = system.run_in_background(); "
             "group = '/proc/self/autogroup'; "
             "group = open(group).read().split()[-1] if os.path.exists(group) else '19'; "
             "print(changed, os.sched_getscheduler(0) == os.SCHED_IDLE, group)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         start_new_session=True, timeout=60).stdout.split()
    assert out == ["True", "True", "19"]
