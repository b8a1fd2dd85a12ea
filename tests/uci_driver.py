"""A raw UCI driver for tests: the engine as a subprocess, read line by line.

python-chess's client (used in most tests) hides protocol details; this driver is
for what it cannot express: isready during a search, garbage input, quit mid-search.
Waits have generous timeouts so that a hang fails the test instead of blocking it;
no test asserts how fast something happened.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ENGINE_COMMAND = [sys.executable, "-m", "blitzaco"]
DATA = Path(__file__).parent / "data"
LEDGER = Path(__file__).resolve().parent.parent / "docs" / "MEASUREMENTS.md"


def bench_signature() -> int:
    """The bench signature the ledger's table gives as current (its bold row)."""
    match = re.search(r"^\| \*\*(\d+)\*\* \|", LEDGER.read_text(), re.MULTILINE)
    assert match, "the ledger's bench table has no current (bold) signature"
    return int(match.group(1))


class UciProcess:
    def __init__(
        self, command: list[str] | None = None, cwd: str | Path | None = None, new_session: bool = False
    ) -> None:
        """*new_session*: the engine leads a process group of its own (POSIX), which a
        test may kill whole, as a GUI kills a hung engine."""
        self.proc = subprocess.Popen(
            command or ENGINE_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            bufsize=0,
            start_new_session=new_session,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr.append(raw)

    def send(self, line: str | bytes) -> None:
        data = line if isinstance(line, bytes) else line.encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float = 30.0) -> str | None:
        """The next line, None at end of output; raises TimeoutError."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no output within {timeout} s; last lines: {self.seen[-5:]}") from None
        if line is not None:
            self.seen.append(line)
        return line

    def read_until(self, match: str | Callable[[str], bool], timeout: float = 30.0) -> list[str]:
        """Lines up to and including the first that starts with *match* (or for
        which *match* is true)."""
        test = match if callable(match) else (lambda line: line.startswith(match))  # type: ignore[misc]
        deadline = time.monotonic() + timeout
        collected = []
        while True:
            line = self.read_line(max(0.01, deadline - time.monotonic()))
            if line is None:
                raise EOFError(f"engine exited while waiting; got {collected[-5:]}")
            collected.append(line)
            if test(line):
                return collected

    def drain(self, wait: float = 0.2) -> list[str]:
        """Whatever arrives within *wait* seconds."""
        out = []
        end = time.monotonic() + wait
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                return out
            if line is None:
                return out
            self.seen.append(line)
            out.append(line)

    def handshake(self) -> list[str]:
        """uci, then isready, as a GUI starts an engine: the lines up to readyok, so
        that what the engine announces after uciok (the network it loaded, files it
        could not read) is behind the test, not in the way of the next read."""
        self.send("uci")
        lines = self.read_until("uciok")
        self.send("isready")
        return lines + self.read_until("readyok")

    def isready(self, timeout: float = 30.0) -> None:
        self.send("isready")
        self.read_until("readyok", timeout)

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.send("quit")
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self) -> UciProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _state(pid: int) -> str | None:
    """The process's state letter from /proc (None: gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[0]


def process_alive(pid: int) -> bool:
    """Whether *pid* runs (Linux, through /proc; a zombie has ended)."""
    state = _state(pid)
    return state is not None and state not in ("Z", "X")


def descendants(pid: int) -> set[int]:
    """The processes *pid* started, and theirs (Linux, through /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found
