"""Thousands of random and malformed lines into one engine process: it stays
alive, keeps its last good position, keeps answering isready, and answers every go
for that position or, after a refused position, with no move; go perft counts only
that position. Among the lines: pipes named as files, movestogo beyond 50, go perft,
tablebases with a corrupt table, pheromone files that cannot be learnt into, FENs
with an impossible en passant square or castling right."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import chess
from test_perft import reference_perft
from uci_driver import DATA, UciProcess

from blitzaco.pheromone import write_memory

GOOD_POSITION = "position startpos moves e2e4 c7c5 g1f3 d7d6"
VOCABULARY = [
    "uci", "isready", "ucinewgame", "position", "startpos", "fen", "moves", "go", "stop",
    "ponderhit", "debug", "on", "off", "register", "later", "name", "code", "setoption",
    "value", "Hash", "MultiPV", "Move", "Overhead", "Threads", "UCI_Chess960", "true", "false",
    "depth", "nodes", "mate", "movetime", "wtime", "btime", "winc", "binc", "movestogo",
    "infinite", "ponder", "searchmoves", "d", "eval", "e2e4", "e7e5", "a1a8", "0000", "e1g1",
    "-1", "0", "1", "2", "7", "50", "999999999999999999999", "nan", "1e9", "0x10", "",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "w", "b", "KQkq", "-", "\t", "ß", "♞", "\x00",
    "perft", "BookFile", "PheromoneFile", "SyzygyPath", "e6", "book.fifo",
]
SAFE_GO = [
    "depth 1", "depth 2", "nodes 50", "nodes 300", "movetime 20", "wtime 200 btime 200", "mate 1",
    # a clock for the side not to move only (White is to move in the kept position),
    # or a bad number for the side to move's: the engine must still answer by itself
    "btime 1000 binc 0", "wtime abc btime 100",
    # movestogo beyond 50 reads as 50; go perft counts instead of searching
    "wtime 100000 btime 100000 movestogo 10000", "perft 1", "perft 2", "perft 3 wtime 100",
]
#: Files the fuzzed options name, made in the engine's working folder by the test.
FILE_OPTIONS = [
    "setoption name BookFile value book.fifo", "setoption name Debug Log File value book.fifo",
    "setoption name ConfigFile value book.fifo", "setoption name PheromoneFile value book.fifo",
    "setoption name BookFile value <empty>", "setoption name Debug Log File value fuzz.log",
    "setoption name Debug Log File value <empty>", "setoption name OwnBook value true",
    "setoption name PheromoneFile value read-only.bin", "setoption name PheromoneFile value notes.txt",
    "setoption name PheromoneLearning value true", "setoption name PheromoneLearning value false",
    "setoption name SyzygyPath value tables", "setoption name SyzygyPath value <empty>",
    "setoption name Threads value 1",
]
#: Positions the engine accepts with their impossible part dropped (each is sent with
#: the good position right after it, so that no go sees it).
DROPPED_PARTS = [
    "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1",
    "position fen r3k3/8/8/8/8/8/8/4K2R w KQkq - 0 1",
    "position fen 4k3/8/8/8/8/8/8/4K3 w KQkq c6 0 1",
]


#: What makes a position unplayable, so that the engine refuses it (python-chess's
#: status as oracle); an impossible en passant square or castling right is dropped
#: instead, as Stockfish drops it.
UNPLAYABLE = (
    chess.STATUS_EMPTY | chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING | chess.STATUS_TOO_MANY_KINGS
    | chess.STATUS_PAWNS_ON_BACKRANK | chess.STATUS_OPPOSITE_CHECK
)


def _is_valid_position(line: str) -> bool:
    """Whether *line* is a position command that sets up a position (python-chess as
    oracle): a playable start, whatever its moves, since the legal part of a move list
    stands even when a later move is refused (as in Stockfish)."""
    tokens = line.split()
    if not tokens or tokens[0] != "position" or len(tokens) < 2:
        return False
    args = tokens[1:]
    setup, moves = (args[: args.index("moves")], args[args.index("moves") + 1 :]) if "moves" in args else (args, [])
    try:
        if setup == ["startpos"]:
            board = chess.Board()
        elif setup and setup[0] == "fen" and len(setup) > 1:
            board = chess.Board(" ".join(setup[1:]), chess960=True)
            if board.status() & UNPLAYABLE:
                return False
        else:
            return False
    except ValueError:
        return False
    return True


def _mutate(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        action = rng.random()
        pos = rng.randrange(len(chars) + 1)
        if action < 0.4 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif action < 0.8:
            chars.insert(pos, rng.choice("pnbrqkPNBRQK12345678/ -wbKQkq9x"))
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice("/ 9x-")
    return "".join(chars)


def _fuzz_lines(rng: random.Random, count: int) -> list[bytes]:
    fens = [chess.STARTING_FEN, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"]
    lines: list[bytes] = []
    while len(lines) < count:
        kind = rng.random()
        if kind < 0.2:
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120)))
            line = raw.replace(b"\n", b"").replace(b"\r", b"")
        elif kind < 0.45:
            words = [rng.choice(VOCABULARY) for _ in range(rng.randint(1, 9))]
            line = " ".join(words).encode("utf-8")
        elif kind < 0.7:
            choice = rng.random()
            if choice < 0.4:
                text = "position fen " + _mutate(rng.choice(fens), rng)
            elif choice < 0.7:
                bad_move = rng.choice(["e2e4", "e7e6x", "a1a1", "e1g1", "h7h8q", "zz", "0000"])
                text = "position startpos moves e2e4 " + bad_move
            else:
                text = "position " + rng.choice(["", "fen", "startpos junk", "fen 8/8/8/8/8/8/8/8 w - - 0 1",
                                                 "fen 4k3/8/8/8/8/8/8/4K2k w - - 0 1",
                                                 "fen 4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
                                                 "fen 4k3/8/8/8/8/8/8/P3K3 w KQkq e6 0 1",  # refused all the same
                                                 "fen 4k2R/8/8/8/8/8/8/4K3 w Kk e3 0 1", "moves e2e4"])
            line = text.encode("utf-8")
        elif kind < 0.8:
            line = rng.choice([
                "go " + rng.choice(SAFE_GO),
                "go depth", "go depth x", "go depth -3", "go nodes 0", "go movetime -5", "go wtime", "go mate 0",
                "go searchmoves a1a1 zz", "go " + rng.choice(SAFE_GO) + " searchmoves e7e5",
                "go perft", "go perft 0", "go perft -1", "go perft x", "go perft 101", "go perft 9",
                "go infinite", "go ponder wtime 500 btime 500",  # answered at the next stop, ponderhit or go
                "ponderhit",
            ]).encode("utf-8")
        elif kind < 0.9:
            line = rng.choice([
                "setoption", "setoption name", "setoption name Hash value -4", "setoption name Hash value 999999",
                "setoption name Hash value abc", "setoption name MultiPV value 0", "setoption name Threads value 0",
                "setoption name Nonexistent value 3", "setoption name Ponder value maybe", "setoption name Hash",
                "setoption name ConfigFile value /nonexistent/config.toml",
                "setoption name BookFile value /nonexistent.bin",
                "setoption name SyzygyPath value /nonexistent", "debug", "debug maybe", "register later",
                *FILE_OPTIONS,
            ]).encode("utf-8")
            if rng.random() < 0.1:
                lines += [rng.choice(DROPPED_PARTS).encode("utf-8"), GOOD_POSITION.encode("utf-8")]
        elif kind < 0.95:
            line = rng.choice([b"", b"   ", b"\t\t", b"\x00\x00", b"\xff\xfe\xfd", b"go \xc3\x28", ("♜" * 50).encode()])
        else:
            line = (b"position startpos moves " + b"e2e4 " * rng.randint(1000, 30000))[: rng.choice([5000, 200_000])]
        text = line.decode("utf-8", "replace")
        words = text.split()
        if "quit" in words or _is_valid_position(text):
            continue
        if "position" in words and _is_valid_position(" ".join(words[words.index("position") :])):
            continue
        lines.append(line)
    return lines


def _files_the_options_name(folder: Path) -> dict[str, bytes]:
    """The files FILE_OPTIONS name, in the engine's working *folder*: a FIFO (no
    writer, no reader), a read-only memory file, a text file, and tables with a
    corrupt one beside good ones. Returns the contents that must not change."""
    os.mkfifo(folder / "book.fifo")
    write_memory(folder / "read-only.bin", {})
    (folder / "read-only.bin").chmod(0o444)
    (folder / "notes.txt").write_text("my notes\n")
    tables = folder / "tables"
    tables.mkdir()
    for name in ("KRvK.rtbw", "KRvK.rtbz", "KQvK.rtbz"):
        shutil.copy(DATA / "syzygy" / name, tables / name)
    (tables / "KQvK.rtbw").write_bytes(bytes(reversed((DATA / "syzygy" / "KQvK.rtbw").read_bytes())))
    return {name: (folder / name).read_bytes() for name in ("read-only.bin", "notes.txt")}


def test_fuzzed_input_does_not_kill_or_corrupt_the_engine(tmp_path: Path) -> None:
    """The module's claims, on 3,000 fuzzed lines (and one line longer than the
    engine accepts) with a stop and isready every 150 and a go perft probe every
    1,000."""
    rng = random.Random(20261122)
    expected = chess.Board()
    for uci in GOOD_POSITION.split()[3:]:
        expected.push_uci(uci)
    kept = _files_the_options_name(tmp_path)
    with UciProcess(cwd=tmp_path) as uci:
        uci.handshake()
        uci.send(GOOD_POSITION)
        lines = _fuzz_lines(rng, 3000)
        lines.append(b"x" * (2 << 20))  # longer than the engine accepts
        for number, line in enumerate(lines, start=1):
            uci.send(line)
            if number % 150 == 0:
                uci.send("stop")
                uci.isready(timeout=60)
            if number % 1000 == 0:
                _perft_probe(uci, number, reference_perft(expected, 2))
        uci.send("stop")
        # The fuzzed lines hold isready and d of their own: wait for a line only this
        # test sends (an unknown command, echoed in its error), so that what follows
        # is read after everything before it was handled.
        uci.send("end-of-fuzz")
        uci.read_until(lambda text: "'end-of-fuzz'" in text, timeout=60)
        assert uci.proc.poll() is None, "engine died"
        uci.send("d")
        fen_line = uci.read_until("Fen:")[-1]
        assert fen_line == f"Fen: {expected.fen()}"
        errors = [line for line in uci.seen if line.startswith("info string error")]
        assert len(errors) > 1000
        # Every answer was for the GUI's position, or none after a refused one: never
        # a move of another position.
        answers = [line.split()[1] for line in uci.seen if line.startswith("bestmove")]
        assert "0000" in answers and len(set(answers)) > 1
        assert all(move == "0000" or chess.Move.from_uci(move) in expected.legal_moves for move in answers)
        # go perft counted the kept position, to some depth, and nothing else.
        counts = {int(line.split()[-1]) for line in uci.seen if line.startswith("Nodes searched: ")}
        perft = {depth: reference_perft(expected, depth) for depth in (1, 2, 3)}
        assert counts and counts <= set(perft.values()), (counts, perft)
        # still fully working: a real search once the position is given again
        uci.send(GOOD_POSITION)
        uci.send("go depth 2")
        best = uci.read_until("bestmove")[-1].split()[1]
        assert chess.Move.from_uci(best) in expected.legal_moves
        assert not any(b"Traceback" in chunk for chunk in uci.stderr), b"".join(uci.stderr)[-2000:]
    assert {name: (tmp_path / name).read_bytes() for name in kept} == kept
    assert (tmp_path / "read-only.bin").stat().st_mode & 0o777 == 0o444
    assert not [path.name for path in tmp_path.rglob("*") if path.name.endswith((".lock", ".tmp"))]


def _perft_probe(uci: UciProcess, number: int, expected: int) -> None:
    """go perft 2 in the middle of the fuzz, once every line before it is handled (a
    go stops the one before, so a fuzzed go perft finishes only when no go follows
    soon): it counts the kept position, or after a refused position says there is
    none and counts nothing until the kept position is given again. A wrong count
    does not end the wait here: the test's check of every count reports it."""
    uci.send(f"probe-{number}")  # an unknown command, echoed in its error
    uci.read_until(lambda text: f"'probe-{number}'" in text, timeout=60)
    uci.send("go perft 2")
    # A fuzzed go perft may still finish first: its count is checked with the others.
    count = f"Nodes searched: {expected}"
    answer = uci.read_until(lambda text: text == count or "no position to search" in text, timeout=120)[-1]
    if answer != count:
        uci.send(GOOD_POSITION)
        uci.send("go perft 2")
        uci.read_until(count, timeout=120)


