"""Protocol edges the GUI client hides: errors, options, state across commands."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import chess
import chess.polyglot
import pytest
from uci_driver import DATA, UciProcess

from blitzaco.config import Config


def _errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info string error")]


def _fen(uci: UciProcess) -> str:
    uci.send("d")
    return uci.read_until("Fen:")[-1][len("Fen: ") :]


def test_unknown_command_and_leading_junk(uci: UciProcess) -> None:
    uci.send("xyzzy")
    uci.send("joho debug on")  # the UCI spec: skip unknown tokens, run the command
    uci.send("register later")
    uci.isready()
    lines = uci.drain(0.2) + uci.seen
    assert any("unknown command 'xyzzy'" in line for line in lines)
    assert any("'joho' ignored" in line for line in lines)
    assert any(line == "info string BlitzACO needs no registration" for line in lines), "debug was not switched on"


def test_bad_option_values_change_nothing(uci: UciProcess) -> None:
    bad = [
        "setoption name Hash value 0",
        "setoption name Hash value 99999999",
        "setoption name Hash value lots",
        "setoption name MultiPV value 0",
        "setoption name Threads value 0",
        "setoption name Threads value 100000",
        "setoption name UCI_Chess960 value yes",
        "setoption name No Such Option value 1",
        "setoption name Move Overhead",
        "setoption",
    ]
    for line in bad:
        uci.send(line)
    uci.isready()
    assert len(_errors(uci.seen)) == len(bad), uci.seen
    # MultiPV is still 1: one line per depth
    uci.send("position startpos")
    uci.send("go depth 2")
    lines = uci.read_until("bestmove")
    assert not any("multipv 2" in line for line in lines)


def test_option_names_are_case_insensitive(uci: UciProcess) -> None:
    uci.send("setoption name multipv value 2")
    uci.send("setoption name MOVE OVERHEAD value 100")
    uci.send("position startpos")
    uci.send("go depth 2")
    lines = uci.read_until("bestmove")
    assert not _errors(lines)
    assert any(" multipv 2 " in line for line in lines)


def test_bad_positions_keep_the_last_good_one(uci: UciProcess) -> None:
    """A position that cannot be set up at all leaves the last good one in place (what
    d shows; a go answers no move for it: see test_after_a_refused_position_go_answers_no_move;
    a bad move list keeps its legal part instead: see the next test)."""
    uci.send("position startpos moves e2e4 e7e5")
    good = _fen(uci)
    bad = [
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position fen 4k3/8/8/8/8/8/8/4K2k w - - 0 1",
        "position fen 4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
        "position fen 4k2R/8/8/8/8/8/8/4K3 w - - 0 1",
        "position fen",
        "position sideways",
    ]
    for line in bad:
        uci.send(line)
    uci.isready()
    assert _fen(uci) == good
    assert len(_errors(uci.seen)) == len(bad)


def test_go_before_position_searches_the_start_position(uci: UciProcess) -> None:
    uci.send("go depth 2")
    lines = uci.read_until("bestmove")
    assert any("go before position" in line for line in lines)
    assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board().legal_moves


def test_position_during_search_does_not_disturb_it(uci: UciProcess) -> None:
    uci.send("position startpos")
    uci.send("go infinite")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.send("position startpos moves e2e4")
    uci.send("stop")
    best = uci.read_until("bestmove")[-1].split()[1]
    assert chess.Move.from_uci(best) in chess.Board().legal_moves  # answered for the searched position
    board = chess.Board()
    board.push_uci("e2e4")
    assert _fen(uci) == board.fen()


def test_ucinewgame_during_search_stops_it_first(uci: UciProcess) -> None:
    """A timed search is stopped by ucinewgame (its bestmove printed); go infinite
    and go ponder are not (see the deferred commands below)."""
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos")
    # 100 minutes each: the budget is minutes, so a bestmove within 10 s is the stop's.
    uci.send("go wtime 6000000 btime 6000000")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.send("ucinewgame")
    uci.read_until("bestmove", timeout=10)
    uci.isready()


def test_a_clock_for_the_other_side_only_still_ends(uci: UciProcess) -> None:
    """A go with a clock for the side not to move (or whose clock was a bad number)
    answers by itself, as Stockfish does, instead of searching without end."""
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos moves e2e4")
    uci.send("go wtime 1000 winc 0")
    lines = uci.read_until("bestmove", timeout=60)
    assert any("no clock for black" in line for line in lines)
    uci.send("position startpos")
    uci.send("go wtime abc btime 100")
    lines = uci.read_until("bestmove", timeout=60)
    assert any("go wtime takes an integer" in line for line in lines)
    assert any("no clock for white" in line for line in lines)
    assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board().legal_moves


def test_a_second_go_while_searching_ends_the_first_one(uci: UciProcess) -> None:
    """Every go ends in exactly one bestmove (Stockfish): a go during a search stops
    it (its bestmove printed), then searches."""
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos")
    uci.send("go infinite")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.send("go depth 1")
    uci.read_until("bestmove")
    uci.read_until("bestmove")
    uci.send("isready")
    lines = uci.read_until("readyok")
    assert not any(line.startswith("bestmove") for line in lines)
    assert sum(line.startswith("bestmove") for line in uci.seen) == 2


def test_setoption_and_ucinewgame_while_pondering_wait_for_the_answer(uci: UciProcess) -> None:
    """A GUI may send setoption at any time: during go ponder / go infinite it never
    makes the engine answer unasked; it takes effect once the search has answered."""
    uci.send("setoption name OwnBook value false")
    for release in ("ponderhit", "stop"):
        uci.send("position startpos moves e2e4")
        uci.send("go ponder wtime 2000 btime 2000" if release == "ponderhit" else "go infinite")
        uci.read_until(lambda line: line.startswith("info depth"))
        uci.send("setoption name MultiPV value 2")
        uci.send("ucinewgame")
        uci.send("isready")
        lines = uci.read_until("readyok")
        lines += uci.drain(0.5)
        assert not any(line.startswith("bestmove") for line in lines), release
        uci.send(release)
        uci.read_until("bestmove")
        uci.send("position startpos")
        uci.send("go depth 2")
        lines = uci.read_until("bestmove")
        assert any(" multipv 2 " in line for line in lines), "the deferred option applies to the next search"
        uci.send("setoption name MultiPV value 1")


def test_an_illegal_move_keeps_the_position_up_to_the_move_before(uci: UciProcess) -> None:
    """Stockfish's reading of a move list with an illegal move: the moves before it
    stand; the previous, unrelated position is gone."""
    uci.send("position startpos moves e2e4 e7e5")
    uci.send("position fen 8/4P3/8/8/8/8/k7/7K w - - 0 1 moves e7e8")
    lines = uci.read_until(lambda line: "refused" in line)
    assert "'e7e8' (move 1) refused" in lines[-1]
    assert _fen(uci) == "8/4P3/8/8/8/8/k7/7K w - - 0 1"
    for line, legal in (
        ("position startpos moves e2e4 e7e5 g1f3 b8c6 f1b5 e8e6", 5),
        ("position startpos moves e2e4 e2e4", 1),
        ("position startpos moves e2e5", 0),
        ("position startpos moves e2e4 e7e5 0000", 2),
        ("position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 e5e4 c4f7", 5),
    ):
        uci.send(line)
        uci.read_until(lambda text, n=legal + 1: f"(move {n}) refused" in text)
        board = chess.Board()
        for uci_move in line.split()[3 : 3 + legal]:
            board.push_uci(uci_move)
        assert _fen(uci) == board.fen(), line


def test_control_characters_are_escaped_in_what_is_echoed(uci: UciProcess) -> None:
    uci.send(b"frob\x00nicate\x1b[2J")
    line = uci.read_until(lambda text: "unknown command" in text)[-1]
    assert "\\x00" in line and "\\x1b" in line and line.isprintable()


def test_eval_waits_for_the_search_to_end(uci: UciProcess) -> None:
    uci.send("position startpos")
    uci.send("go infinite")
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.send("eval")
    uci.read_until(lambda line: "eval while searching" in line)
    uci.send("stop")
    uci.read_until("bestmove")
    uci.send("eval")
    assert uci.read_until(lambda line: line.startswith("Final evaluation"))[-1].endswith("(white side)")


def _write_book(path: Path, entries: list[tuple[chess.Board, str, int]]) -> None:
    """A Polyglot book: (key, move, weight, learn) big-endian records sorted by key."""
    records = []
    for board, uci, weight in entries:
        move = chess.Move.from_uci(uci)
        raw = move.to_square | move.from_square << 6
        records.append((chess.polyglot.zobrist_hash(board), raw, weight, 0))
    path.write_bytes(b"".join(struct.pack(">QHHI", *record) for record in sorted(records)))


def test_book_move_is_played_and_reported(uci: UciProcess, tmp_path: Path) -> None:
    book = tmp_path / "tiny.bin"
    _write_book(book, [(chess.Board(), "d2d4", 7)])
    uci.send(f"setoption name BookFile value {book}")
    uci.send("setoption name OwnBook value true")
    uci.read_until(lambda line: "loaded with 1 entries" in line)
    uci.send("position startpos")
    uci.send("go wtime 1000 btime 1000")
    lines = uci.read_until("bestmove")
    assert lines[-1] == "bestmove d2d4"
    assert any("book move d2d4 (weight 7 of 7)" in line for line in lines)
    uci.send("position startpos moves e2e4")  # not in the book: search
    uci.send("go depth 2")
    assert not any("book move" in line for line in uci.read_until("bestmove"))


def test_missing_or_corrupt_book_is_reported(uci: UciProcess, tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.bin"
    corrupt.write_bytes(b"\x01" * 17)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    for path in (tmp_path / "missing.bin", corrupt, empty):
        uci.send(f"setoption name BookFile value {path}")
        line = uci.read_until(lambda line: line.startswith("info string"))[-1]
        assert "error" in line and str(path) in line
    uci.send("setoption name OwnBook value true")
    uci.send("position startpos")
    uci.send("go depth 1")
    assert chess.Move.from_uci(uci.read_until("bestmove")[-1].split()[1]) in chess.Board().legal_moves


def test_syzygy_path_reports_tables_and_is_used(uci: UciProcess, tmp_path: Path) -> None:
    uci.send(f"setoption name SyzygyPath value {tmp_path / 'nowhere'}")
    assert "error" in uci.read_until(lambda line: line.startswith("info string"))[-1]
    uci.send(f"setoption name SyzygyPath value {DATA / 'syzygy'}")
    line = uci.read_until(lambda line: line.startswith("info string"))[-1]
    assert "found 5 Syzygy WDL tables, up to 4 pieces" in line
    uci.send("position fen 8/8/8/8/8/k7/8/2K4R w - - 0 1")
    uci.send("go depth 3")
    lines = uci.read_until("bestmove")
    assert any("tablebase: win" in line for line in lines)
    assert any(" tbhits " in line and " tbhits 0 " not in line for line in lines)


def test_config_file_option(uci: UciProcess, tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text("[eval.material]\nqueen = [100, 100]\n[eval.nn]\nenabled = false\n")  # the classical score
    bad = tmp_path / "bad.toml"
    bad.write_text("[eval.material]\nqeen = [100, 100]\n")
    uci.send("position fen 4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
    uci.send("eval")
    before = uci.read_until(lambda line: "Final evaluation" in line)[-1]
    uci.send(f"setoption name ConfigFile value {bad}")
    assert "eval.material.qeen" in uci.read_until(lambda line: line.startswith("info string"))[-1]
    uci.send("eval")
    assert uci.read_until(lambda line: "Final evaluation" in line)[-1] == before
    uci.send(f"setoption name ConfigFile value {good}")
    assert "loaded" in uci.read_until(lambda line: line.startswith("info string"))[-1]
    uci.send("eval")
    after = uci.read_until(lambda line: "Final evaluation" in line)[-1]
    assert after != before


def test_debug_log_file_records_both_directions(uci: UciProcess, tmp_path: Path) -> None:
    log = tmp_path / "uci.log"
    uci.send(f"setoption name Debug Log File value {log}")
    uci.isready()
    uci.send("setoption name Debug Log File value <empty>")
    uci.isready()
    text = log.read_text()
    assert "<< isready" in text and ">> readyok" in text


def test_hash_option_resizes_the_table(uci: UciProcess) -> None:
    uci.send("setoption name OwnBook value false")  # search the start position
    uci.send("setoption name Hash value 1")
    uci.send("position startpos")
    uci.send("go depth 4")
    small = [line for line in uci.read_until("bestmove") if " hashfull " in line][-1]
    uci.send("setoption name Hash value 256")
    uci.send("ucinewgame")
    uci.send("go depth 4")
    large = [line for line in uci.read_until("bestmove") if " hashfull " in line][-1]

    def hashfull(line: str) -> int:
        parts = line.split()
        return int(parts[parts.index("hashfull") + 1])

    assert hashfull(small) > hashfull(large)


def test_bound_lines_on_the_wire(uci: UciProcess, tmp_path: Path) -> None:
    classical = tmp_path / "classical.toml"  # the position was chosen with the classical scores
    classical.write_text("[eval.nn]\nenabled = false\n")
    uci.send(f"setoption name ConfigFile value {classical}")
    uci.send("isready")
    uci.read_until("readyok")
    uci.send("position fen 7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - 0 1")
    uci.send("go depth 5")
    lines = uci.read_until("bestmove")
    bound = [line for line in lines if " lowerbound " in line]
    assert bound and " score cp " in bound[0] and bound[0].index("score") < bound[0].index("lowerbound")


def test_config_and_pheromone_files_must_be_regular_and_bounded(uci: UciProcess, tmp_path: Path) -> None:
    """A device, a pipe or a huge file named as ConfigFile or PheromoneFile is refused
    at once: it neither fills the memory (/dev/zero) nor blocks the engine (a FIFO
    with no writer)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.bin"
    with open(huge, "wb") as handle:
        handle.truncate(200 << 20)  # sparse: above both limits, no disk used
    for option in ("ConfigFile", "PheromoneFile"):
        for path, reason in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"), (huge, "more than")):
            uci.send(f"setoption name {option} value {path}")
            line = uci.read_until(lambda text, name=str(path): name in text, timeout=30)[-1]
            assert reason in line, line
    uci.isready()
    assert uci.proc.poll() is None


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident size from /proc")
def test_resident_memory_stays_within_hash_and_the_stated_caches(uci: UciProcess) -> None:
    """With a small table filled by a search, the process stays within Hash plus the
    stated fixed part (README: caches at most 27 + 33 MiB, an idle engine about
    24 MiB; 100 MiB allowed in all)."""
    uci.send("setoption name Hash value 2")
    uci.send("setoption name OwnBook value false")
    uci.send("position fen r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8")
    uci.send("go nodes 250000")
    lines = uci.read_until("bestmove", timeout=300)
    hashfull = max(int(line.split(" hashfull ")[1].split()[0]) for line in lines if " hashfull " in line)
    # The table takes all its memory at its first search (compiled, 16 bytes a slot);
    # a good part of it was written (interpreted, a written slot's integers cost more).
    assert hashfull > 150, "the search wrote into the table"
    status = Path(f"/proc/{uci.proc.pid}/status").read_text()
    resident_mib = int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]) / 1024
    assert resident_mib <= 2 + 100, resident_mib


def test_wdl_is_shown_exactly_when_asked_and_adds_up(uci: UciProcess) -> None:
    """UCI_ShowWDL: every info line with a score carries wdl W D L (per mille, adding
    up to 1000) when on, and none when off, as Stockfish prints them."""
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos moves e2e4")
    uci.send("go depth 3")
    lines = [line for line in uci.read_until("bestmove") if " score " in line]
    assert lines and not any(" wdl " in line for line in lines)
    uci.send("setoption name UCI_ShowWDL value true")
    uci.send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")  # mate in one
    uci.send("go depth 3")
    lines = [line for line in uci.read_until("bestmove") if " score " in line]
    assert lines and all(" wdl " in line for line in lines)
    for line in lines:
        words = line.split()
        w, d, loss = (int(v) for v in words[words.index("wdl") + 1 : words.index("wdl") + 4])
        assert w + d + loss == 1000 and min(w, d, loss) >= 0
        assert words.index("wdl") == words.index("score") + 3  # right after the score
    assert lines[-1].split()[lines[-1].split().index("wdl") + 1] == "1000"  # a found mate is a sure win


def test_strength_options_are_declared_and_checked(uci: UciProcess) -> None:
    declared = [line for line in uci.handshake() if line.startswith("option name")]
    assert "option name Skill Level type spin default 20 min 0 max 20" in declared
    assert "option name UCI_LimitStrength type check default false" in declared
    # UCI_Elo spans at least 800 up to full strength: its top is level 20's entry. Its
    # bottom may lie below level 0's measured Elo (882 +- 163 on the native core): a
    # value there plays level 0, the weakest there is.
    table = Config().levels.elo_of_level
    elo = next(line.split() for line in declared if line.startswith("option name UCI_Elo "))
    low, high = int(elo[elo.index("min") + 1]), int(elo[elo.index("max") + 1])
    assert elo[elo.index("default") + 1] == str(high) == str(table[20])
    assert low <= 800 and low <= table[0]
    uci.send("setoption name Skill Level value 21")
    uci.send("setoption name UCI_Elo value 700")
    uci.send("isready")
    lines = uci.read_until("readyok")
    assert sum("outside" in line for line in lines) == 2


def _budget(uci: UciProcess, go: str) -> str:
    """The time budget the engine states (debug mode) for *go*, searched to depth 1."""
    uci.send(f"{go} depth 1")
    lines = uci.read_until("bestmove")
    return next(line for line in lines if line.startswith("info string time budget"))


def test_movestogo_above_50_is_read_as_50(uci: UciProcess) -> None:
    """Stockfish reads a movestogo above 50 as 50: a huge one (a GUI's "moves left in
    the whole game") does not shrink the move to a sliver of the clock."""
    uci.send("setoption name OwnBook value false")
    uci.send("debug on")
    uci.send("position startpos")
    capped = _budget(uci, "go wtime 100000 btime 100000 movestogo 50")
    assert _budget(uci, "go wtime 100000 btime 100000 movestogo 10000") == capped
    assert _budget(uci, "go wtime 100000 btime 100000 movestogo 51") == capped
    assert _budget(uci, "go wtime 100000 btime 100000 movestogo 49") != capped


def test_book_and_debug_log_files_must_be_regular(uci: UciProcess, tmp_path: Path) -> None:
    """BookFile and Debug Log File refuse a pipe or a device as ConfigFile and
    PheromoneFile do: a FIFO with no writer (or no reader) never blocks the engine,
    readyok still comes, and the message names the file."""
    fifo = tmp_path / "book.fifo"
    os.mkfifo(fifo)
    for option in ("BookFile", "Debug Log File"):
        for path in (fifo, "/dev/zero"):
            uci.send(f"setoption name {option} value {path}")
            uci.isready(timeout=30)
            line = next(line for line in reversed(uci.seen) if str(path) in line)
            assert line.startswith("info string error") and "not a regular file" in line, line
    uci.send("position startpos")
    uci.send("go depth 1")  # the bundled book was closed, a search answers
    assert chess.Move.from_uci(uci.read_until("bestmove")[-1].split()[1]) in chess.Board().legal_moves


def test_a_book_move_comes_with_a_scored_info_line(uci: UciProcess, tmp_path: Path) -> None:
    """A match runner takes the score of a move from its last info line: a book move
    has one too (a one-ply search of that move alone), its pv the book move, and the
    book's own words in an info string."""
    book = tmp_path / "tiny.bin"
    _write_book(book, [(chess.Board(), "d2d4", 7)])
    uci.send(f"setoption name BookFile value {book}")
    uci.send("setoption name OwnBook value true")
    uci.send("setoption name UCI_ShowWDL value true")
    uci.send("position startpos")
    uci.send("go wtime 1000 btime 1000")
    lines = uci.read_until("bestmove")
    assert lines[-1] == "bestmove d2d4"
    assert any(line.startswith("info string book move d2d4") for line in lines)
    scored = [line for line in lines if line.startswith("info depth") and " score " in line]
    assert scored and scored[-1].endswith(" pv d2d4"), lines
    assert " wdl " in scored[-1]


def test_go_perft_answers_as_stockfish(uci: UciProcess) -> None:
    """go perft N (Stockfish's command): each root move with its leaf count, a blank
    line, Nodes searched: N, a blank line, and no bestmove; isready is answered
    meanwhile, and stop ends a long count without a total."""
    uci.send("position startpos moves e2e4")
    uci.send("go perft 2")
    lines = uci.read_until(lambda line: line.startswith("Nodes searched"))
    lines.append(uci.read_line())
    board = chess.Board()
    board.push_uci("e2e4")
    counts = dict(line.split(": ") for line in lines[:-3])
    assert set(counts) == {move.uci() for move in board.legal_moves}
    for move in board.legal_moves:
        board.push(move)
        assert int(counts[move.uci()]) == board.legal_moves.count(), move
        board.pop()
    assert lines[-3:] == ["", "Nodes searched: 600", ""]
    uci.send("go perft 0")  # outside the range: refused, and then a search as Stockfish does
    assert "go perft 0 is outside" in uci.read_until(lambda line: "perft" in line)[-1]
    assert uci.read_until("bestmove")[-1].startswith("bestmove ")
    uci.send("go perft 9")  # hours in Python
    uci.isready()
    uci.send("stop")
    uci.isready()
    uci.send("go perft 1 wtime 100")  # perft wins over the clock, as in Stockfish
    lines = uci.read_until(lambda line: line.startswith("Nodes searched"))
    assert lines[-1] == "Nodes searched: 20"
    uci.isready()
    assert not any(line.startswith("bestmove") for line in uci.drain(0.5))
    assert sum(line.startswith("Nodes searched") for line in uci.seen) == 2


def test_a_fen_stockfish_plays_from_is_accepted_with_its_impossible_part_dropped(uci: UciProcess) -> None:
    """An en passant square or a castling right the position cannot have is dropped,
    with an info string, as Stockfish drops it; the go that follows answers for the
    position the GUI sent, never for the one before."""
    uci.send("setoption name OwnBook value false")
    uci.send("position startpos moves e2e4")
    uci.send(f"position fen {chess.STARTING_BOARD_FEN} w KQkq e6 0 1")
    uci.send("go depth 3")
    lines = uci.read_until("bestmove")
    assert any(line.startswith("info string") and "en passant square e6" in line for line in lines), lines
    assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board().legal_moves  # a White move
    assert _fen(uci) == chess.STARTING_FEN
    uci.send("position fen r3k3/8/8/8/8/8/8/4K2R w KQkq - 0 1")  # Stockfish keeps Kq
    lines = uci.read_until(lambda line: "castling" in line)
    assert "KQkq" in lines[-1] and "Kq" in lines[-1] and not _errors(lines), lines
    assert _fen(uci) == "r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1"


def test_after_a_refused_position_go_answers_no_move(uci: UciProcess) -> None:
    """A position that cannot be played is refused; a go after it answers bestmove
    0000 with an error instead of a move of the last good position (which the GUI
    no longer has on its board), until a position is accepted again."""
    uci.send("setoption name OwnBook value false")
    for bad in ("fen 4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "fen 8/8/8/8/8/8/8/8 w - - 0 1", "sideways"):
        uci.send("position startpos moves e2e4")
        uci.send(f"position {bad}")
        uci.send("go depth 3")
        lines = uci.read_until("bestmove")
        assert lines[-1] == "bestmove 0000", (bad, lines)
        assert any(line.startswith("info string error") and "refused" in line for line in lines[-3:-1]), lines
        uci.send("go perft 1")  # not counted either
        assert uci.read_until(lambda line: line.startswith("info string error"))[-1]
    uci.send("position startpos moves e2e4 e7e5")
    uci.send("go depth 2")
    best = uci.read_until("bestmove")[-1].split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    assert chess.Move.from_uci(best) in board.legal_moves
