#!/usr/bin/env python3
"""A soak: many games of one build of the engine in a real runner (fastchess), with
what a user's runner would see and what it would leave behind:

    python scripts/soak.py --engine dist/blitzaco --threads 2 --hash 64 --tc 1+0.01 --games 400 \\
        --fastchess /path/to/fastchess --elo 2200 --out runs/soak/binary_1s

The engine plays Stockfish (``UCI_LimitStrength``, ``--elo``) on the openings file,
each opening with both colours, one game at a time, each engine one process kept
across the games (fastchess's default: no restarts). The engine command runs under a
small wrapper that copies its standard error to ``OUT/engine.stderr`` (and still
passes it on to the runner) and marks its environment. Every ``--sample`` seconds
the resident memory (VmRSS) of every process of the engine (every process whose
environment holds the mark, wherever it hangs in the process tree: the one-file
binary's bootloader, the engine, its helpers, multiprocessing's tracker) is written
to ``OUT/rss.csv``.

Reported (``OUT/summary.json`` and a table row on standard output): games, the
engine's W-L-D, crashes (games abandoned: fastchess saw the engine disconnect or
stall), illegal moves and time forfeits charged to the engine, lines on its standard
error, its resident memory (first sample, last, largest) of the main engine process,
and what was left afterwards: processes of the engine still alive, and new entries in
``/dev/shm``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def marked(marker: str) -> list[int]:
    """Every process whose environment holds *marker* (the engine and whatever it
    started, wherever they now hang in the process tree), but the wrapper's ``tee``."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if needle in Path(f"/proc/{entry}/environ").read_bytes() and \
                    Path(f"/proc/{entry}/comm").read_text().strip() != "tee":
                found.append(int(entry))
        except OSError:
            continue
    return found


def _rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


class Sampler(threading.Thread):
    """Every *every* seconds: the RSS of each process of the engine (its environment
    holds *marker*), written to *path*."""

    def __init__(self, marker: str, path: Path, every: float) -> None:
        super().__init__(daemon=True)
        self.marker, self.path, self.every = marker, path, every
        self.done = threading.Event()
        self.seen: dict[int, str] = {}  # every engine process ever sampled: its command line
        self.samples: dict[int, list[int]] = {}

    def run(self) -> None:
        started = time.monotonic()
        with open(self.path, "w") as out:
            out.write("seconds,pid,rss_kb,command\n")
            while not self.done.wait(self.every):
                for pid in marked(self.marker):
                    rss = _rss_kb(pid)
                    if rss is None:
                        continue
                    command = self.seen.setdefault(pid, _cmdline(pid))
                    self.samples.setdefault(pid, []).append(rss)
                    out.write(f"{time.monotonic() - started:.1f},{pid},{rss},{shlex.quote(command)}\n")
                out.flush()


def _games(pgn: str, name: str) -> dict[str, int]:
    """Counts from fastchess's PGN for the player *name*."""
    counts = {"games": 0, "wins": 0, "losses": 0, "draws": 0, "crashes": 0, "illegal": 0, "forfeits": 0}
    for game in re.split(r"\n(?=\[Event )", pgn.strip()):
        if not game.strip():
            continue
        tags = dict(re.findall(r'\[(\w+) "([^"]*)"\]', game))
        ours = "white" if tags.get("White") == name else "black" if tags.get("Black") == name else None
        if ours is None:
            continue
        counts["games"] += 1
        result = tags.get("Result", "*")
        lost = result == ("0-1" if ours == "white" else "1-0")
        won = result == ("1-0" if ours == "white" else "0-1")
        counts["wins"] += won
        counts["losses"] += lost
        counts["draws"] += result == "1/2-1/2"
        termination = tags.get("Termination", "")
        if termination == "abandoned" and lost:
            counts["crashes"] += 1
        if termination == "illegal move" and lost:
            counts["illegal"] += 1
        if termination == "time forfeit" and lost:
            counts["forfeits"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", required=True, help="the engine's command line (e.g. dist/blitzaco)")
    parser.add_argument("--name", default="BlitzACO")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--hash", type=int, default=64)
    parser.add_argument("--tc", default="1+0.01")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--elo", type=int, default=2200, help="Stockfish's UCI_Elo")
    parser.add_argument("--stockfish", default="stockfish")
    parser.add_argument("--fastchess", default="fastchess")
    parser.add_argument("--openings", default=str(ROOT / "tests" / "data" / "openings.epd"))
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--out", required=True, help="a folder for the PGN, the logs and the summary")
    args = parser.parse_args(argv)

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    stderr_log = out / "engine.stderr"
    stderr_log.write_text("")
    marker = f"soak-{os.getpid()}"
    wrapper = out / f"engine-{marker}.sh"
    # stderr copied to the log and still passed on: fastchess reads the engine's stderr
    # and takes its end for the engine's.
    wrapper.write_text(f"#!/bin/bash\nexport BLITZACO_SOAK={marker}\n"
                       f"exec {args.engine} 2> >(tee -a {shlex.quote(str(stderr_log))} >&2)\n")
    wrapper.chmod(0o755)
    shm_before = set(os.listdir("/dev/shm"))
    pgn = out / "games.pgn"
    if pgn.exists():
        pgn.unlink()
    command = [
        args.fastchess,
        "-engine", f"cmd={wrapper}", f"name={args.name}", f"option.Threads={args.threads}",
        f"option.Hash={args.hash}", "option.OwnBook=false",
        "-engine", f"cmd={args.stockfish}", f"name=sf{args.elo}", "option.UCI_LimitStrength=true",
        f"option.UCI_Elo={args.elo}", "option.Threads=1", "option.Hash=16",
        "-each", "proto=uci", f"tc={args.tc}",
        "-openings", f"file={args.openings}", "format=epd", "order=random", "-srand", str(args.seed),
        "-rounds", str((args.games + 1) // 2), "-games", "2", "-repeat", "-concurrency", "1", "-recover",
        "-pgnout", f"file={pgn}", "-log", f"file={out / 'fastchess.log'}", "level=warn", "append=false",
        "-config", f"outname={out / 'fastchess.json'}",  # its state, else config.json in the working folder
    ]
    started = time.monotonic()
    with open(out / "fastchess.out", "wb") as log:
        runner = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        sampler = Sampler(f"BLITZACO_SOAK={marker}", out / "rss.csv", args.sample)
        sampler.start()
        code = runner.wait()
        sampler.done.set()
        sampler.join()
    seconds = time.monotonic() - started
    time.sleep(2.0)  # what exits after the runner has had its moment
    left = [f"{pid} {_cmdline(pid)}" for pid in marked(f"BLITZACO_SOAK={marker}")]
    shm_left = sorted(set(os.listdir("/dev/shm")) - shm_before)
    stderr_lines = [line for line in stderr_log.read_text(errors="replace").splitlines() if line.strip()]
    counts = _games(pgn.read_text(errors="replace") if pgn.exists() else "", args.name)
    # The engine's own process: the one sampled longest with the largest memory (the
    # binary's bootloader is small; helpers come and go with Threads).
    main_pid = max(sampler.samples, key=lambda pid: (len(sampler.samples[pid]), max(sampler.samples[pid])),
                   default=None)
    rss = sampler.samples.get(main_pid, []) if main_pid is not None else []
    summary = {
        "command": " ".join(["soak.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runner": shlex.join(command), "runner_exit": code, "seconds": round(seconds),
        **counts,
        "stderr_lines": len(stderr_lines), "stderr_first": stderr_lines[:5],
        "rss_kb": {"first": rss[0] if rss else None, "last": rss[-1] if rss else None,
                   "max": max(rss) if rss else None, "samples": len(rss),
                   "process": sampler.seen.get(main_pid, "") if main_pid is not None else ""},
        "engine_processes_seen": len(sampler.seen),
        "left_processes": left, "left_shm": shm_left,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print("| games | W-L-D | crashes | illegal | forfeits | stderr lines | RSS first/last/max (MB) | processes left "
          "| /dev/shm left |")
    print(f"| {counts['games']} | {counts['wins']}-{counts['losses']}-{counts['draws']} | {counts['crashes']} | "
          f"{counts['illegal']} | {counts['forfeits']} | {len(stderr_lines)} | "
          + (f"{rss[0] / 1024:.0f}/{rss[-1] / 1024:.0f}/{max(rss) / 1024:.0f}" if rss else "-")
          + f" | {len(left)} | {len(shm_left)} |")
    clean = not (counts["crashes"] or counts["illegal"] or counts["forfeits"] or stderr_lines or left or shm_left)
    return 0 if clean and code == 0 and counts["games"] == 2 * ((args.games + 1) // 2) else 1


if __name__ == "__main__":
    sys.exit(main())
