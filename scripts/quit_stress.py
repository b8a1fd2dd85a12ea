#!/usr/bin/env python3
"""Quit the engine at Threads 2, again and again, and check that it leaves nothing
behind: no process, no shared memory, no word on standard error.

    python scripts/quit_stress.py [--quits N] [--moments M ...] [--busy K] [-- ENGINE COMMAND ...]

The engine command defaults to this Python running ``-m blitzaco``; give the
binary (``dist/blitzaco``) to check the frozen build, where a process left running
after the engine has exited finds the folder it runs from deleted by the
bootloader. Each run starts the engine, sets ``Threads 2`` (and ``OwnBook false``)
and ends it at one of these moments, taken in turn:

* ``infinite``: ``quit`` during ``go infinite`` (after its first ``info depth``);
* ``bestmove``: ``quit`` right after the ``bestmove`` of ``go depth 3``;
* ``isready``: ``quit`` right after ``readyok``, the helper still starting;
* ``ucinewgame``: ``quit`` right after ``ucinewgame``, following a search;
* ``eof``: standard input closed after a search;
* ``threads-2-1-2``: a search at ``Threads 2``, then ``Threads 1`` (after which
  the engine must have no child process left) and a search, then ``Threads 2``
  and a search, then ``quit``.

A run passes when the engine exits with status 0, has written nothing on standard
error, left no process behind and left nothing new in ``/dev/shm`` (of what
:mod:`multiprocessing` names there: ``psm_*``, ``sem.mp-*``). This script
makes itself a child subreaper (Linux): every process the engine started and left
(running, or ended and not collected) becomes its child as the engine exits, so
once the engine's exit status is in, what it left is known exactly, with no
waiting. What it left is then collected (killed after 30 s).

``--busy K`` runs K busy loops at normal priority meanwhile, as on a machine busy
with a match. A line is printed per failed run and a summary per moment at the
end; ``--json`` prints one JSON object per run instead. Exit status 1 when a run
failed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

MOMENTS = ("infinite", "bestmove", "isready", "ucinewgame", "eof", "threads-2-1-2")
PR_SET_CHILD_SUBREAPER = 36
#: Generous: on a busy machine a helper's start-up and a search take their time.
WAIT = 120.0
SHM = Path("/dev/shm")
#: What Python's multiprocessing names in /dev/shm: shared memory blocks and
#: semaphores (other programs' files there are none of this engine's business).
SHM_PREFIXES = ("psm_", "sem.mp-", "blitzaco")


def _shm() -> set[str]:
    return {name for name in os.listdir(SHM) if name.startswith(SHM_PREFIXES)} if SHM.is_dir() else set()


def become_subreaper() -> None:
    """Orphans of this process's descendants become its children (Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(errno)}")


def _processes() -> dict[int, tuple[int, str]]:
    """Every process: its parent and state letter (/proc)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                found[int(entry)] = (int(fields[1]), fields[0])
            except (OSError, IndexError, ValueError):
                continue
    return found


def children_of(pid: int) -> dict[int, str]:
    """The children of *pid*, with their state letter."""
    return {child: state for child, (parent, state) in _processes().items() if parent == pid}


def descendants(pid: int) -> set[int]:
    tree: dict[int, list[int]] = {}
    for child, (parent, _) in _processes().items():
        tree.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()


def collect(pid: int, timeout: float = 30.0) -> None:
    """Wait for the child *pid*, killing it after *timeout* seconds."""
    deadline = time.monotonic() + timeout
    try:
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.01)
    except ChildProcessError:
        pass


class Engine:
    """The engine as a subprocess, its output read line by line."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.stderr_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr.append(raw)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, test: Callable[[str], bool]) -> None:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no answer within {WAIT:g} s") from None
            if line is None:
                raise EOFError("the engine ended its output")
            if test(line):
                return

    def search(self, threads: int) -> None:
        self.send(f"setoption name Threads value {threads}")
        self.send("isready")
        self.until(lambda line: line == "readyok")
        self.send("go depth 3")
        self.until(lambda line: line.startswith("bestmove"))


def run(command: list[str], moment: str, others: frozenset[int] = frozenset()) -> dict[str, object]:
    """Drive the engine *command* to *moment* and end it; what it left behind.
    *others*: this process's children that are not the engine's (the busy loops)."""
    shm_before = _shm()
    report: dict[str, object] = {"moment": moment}
    engine = Engine(command)
    known: dict[int, str] = {}
    try:
        engine.send("uci")
        engine.until(lambda line: line == "uciok")
        engine.send("setoption name OwnBook value false")
        engine.send("position startpos moves e2e4")
        if moment in ("bestmove", "ucinewgame", "eof"):
            engine.search(2)
            if moment == "ucinewgame":
                engine.send("ucinewgame")
        elif moment == "isready":
            engine.send("setoption name Threads value 2")
            engine.send("isready")
            engine.until(lambda line: line == "readyok")
        elif moment == "infinite":
            engine.send("setoption name Threads value 2")
            engine.send("go infinite")
            engine.until(lambda line: line.startswith("info depth"))
        elif moment == "threads-2-1-2":
            engine.search(2)
            known.update({pid: cmdline(pid) for pid in descendants(engine.proc.pid)})
            engine.search(1)  # Threads 1 has ended the helper, and the tracker, before readyok
            report["threads_1_children"] = [
                {"pid": pid, "state": state, "cmdline": known.get(pid) or cmdline(pid)}
                for pid, state in children_of(engine.proc.pid).items()
            ]
            engine.search(2)
        else:
            raise ValueError(f"unknown moment {moment!r}; one of {', '.join(MOMENTS)}")
        known.update({pid: cmdline(pid) for pid in descendants(engine.proc.pid)})
        if moment == "eof":
            assert engine.proc.stdin is not None
            engine.proc.stdin.close()
        else:
            engine.send("quit")
        quit_at = time.monotonic()
        report["returncode"] = engine.proc.wait(timeout=WAIT)
        report["quit_ms"] = round((time.monotonic() - quit_at) * 1000, 1)
    except (TimeoutError, EOFError, subprocess.TimeoutExpired) as err:
        report["error"] = f"{type(err).__name__}: {err}"
    finally:
        if engine.proc.poll() is None:
            engine.proc.kill()
            engine.proc.wait()
            report.setdefault("returncode", None)
        # Every other child of this process now is one the engine left.
        orphans = {pid: state for pid, state in children_of(os.getpid()).items() if pid not in others}
        report["orphans"] = [{"pid": pid, "state": state, "cmdline": known.get(pid) or cmdline(pid)}
                             for pid, state in orphans.items()]
        while orphans:  # collected, and any they left in turn
            for pid in orphans:
                collect(pid)
            orphans = {pid: state for pid, state in children_of(os.getpid()).items() if pid not in others}
        engine.stderr_reader.join(30)  # complete once whatever held the pipe is gone
        report["stderr"] = b"".join(engine.stderr).decode("utf-8", "replace")
    report["new_shm"] = sorted(_shm() - shm_before)
    return report


#: The kinds of failure, as the summary counts them.
KINDS = ("error", "exit status", "stderr", "left behind", "children at Threads 1", "new in /dev/shm")


def failures(report: dict[str, object]) -> dict[str, str]:
    """What went wrong in a run, by kind (nothing: it passed)."""
    found = {}
    if report.get("error"):
        found["error"] = str(report["error"])
    if report.get("returncode") != 0:
        found["exit status"] = str(report.get("returncode"))
    if report.get("stderr"):
        found["stderr"] = repr(str(report["stderr"]).strip()[-300:])
    if report.get("orphans"):
        found["left behind"] = str(report["orphans"])
    if report.get("threads_1_children"):
        found["children at Threads 1"] = str(report["threads_1_children"])
    if report.get("new_shm"):
        found["new in /dev/shm"] = str(report["new_shm"])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quits", type=int, default=40, help="runs in all, the moments in turn (default: 40)")
    parser.add_argument("--moments", nargs="+", choices=MOMENTS, default=list(MOMENTS[:4]),
                        help="the moments to quit at (default: infinite bestmove isready ucinewgame)")
    parser.add_argument("--busy", type=int, default=0, help="busy loops at normal priority meanwhile (default: 0)")
    parser.add_argument("--json", action="store_true", help="one JSON object per run, nothing else")
    parser.add_argument("engine", nargs="*", help="the engine command (default: this Python -m blitzaco)")
    args = parser.parse_args(argv)
    if not sys.platform.startswith("linux"):
        parser.error("needs Linux (a child subreaper, /proc)")
    command = args.engine or [sys.executable, "-m", "blitzaco"]
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # ignored, the orphans would be collected unseen
    become_subreaper()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    tally = {moment: dict.fromkeys(("runs", "failed", *KINDS), 0) for moment in args.moments}
    started = time.monotonic()
    try:
        for index in range(args.quits):
            moment = args.moments[index % len(args.moments)]
            report = run(command, moment, frozenset(process.pid for process in busy))
            found = failures(report)
            counts = tally[moment]
            counts["runs"] += 1
            counts["failed"] += bool(found)
            for kind in found:
                counts[kind] += 1
            if args.json:
                print(json.dumps(report), flush=True)
            elif found:
                print(f"run {index + 1} ({moment}): " + "; ".join(f"{kind}: {text}" for kind, text in found.items()),
                      flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    failed = sum(counts["failed"] for counts in tally.values())
    if not args.json:
        for moment, counts in tally.items():
            kinds = ", ".join(f"{kind} {counts[kind]}" for kind in KINDS if counts[kind])
            print(f"{moment}: {counts['failed']} of {counts['runs']} runs failed" + (f" ({kinds})" if kinds else ""))
        print(f"quit_stress: {failed} of {args.quits} runs failed, {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
