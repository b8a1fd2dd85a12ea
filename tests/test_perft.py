"""Move generation against published perft counts (tests/data/perft.epd, the same
file as ../shared/suites/perft.epd, and Chess960 positions), counted through
:mod:`blitzaco.perft`, through the ``perft`` command and through UCI ``go perft N``
as a GUI sends it; the split by root move against python-chess's own move
generation. Counts above a few seconds' work are marked slow."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import chess
import pytest
from uci_driver import DATA, ENGINE_COMMAND, UciProcess

from blitzaco import board as core
from blitzaco.moves import decode_move
from blitzaco.perft import PerftStopped, divide, perft

#: Leaf counts up to this size run by default through blitzaco.perft; deeper ones are marked slow.
FAST_NODES = 120_000
#: The same through UCI go perft (each through the engine process).
FAST_UCI_NODES = 10_000
#: Deeper than this, go perft is not asked even in the slow run (minutes in Python).
MAX_UCI_NODES = 5_000_000

# Chess960 positions from the chessprogramming wiki's published Chess960 perft list.
CHESS960 = [
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", [21, 528, 12189]),
    ("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", [21, 807, 18002]),
    ("b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9", [20, 479, 10471]),
]

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def _suite() -> list[tuple[str, int, int, bool]]:
    """(FEN, depth, published count, Chess960) of every entry of the published suites."""
    entries = []
    for line in (DATA / "perft.epd").read_text().splitlines():
        fen, *depths = (part.strip() for part in line.split(";"))
        for entry in depths:
            depth, count = entry[1:].split()
            entries.append((fen, int(depth), int(count), False))
    for fen, counts in CHESS960:
        entries.extend((fen, depth, count, True) for depth, count in enumerate(counts, start=1))
    return entries


def _cases(fast: int, most: int | None = None) -> list:
    """The suite as test cases: above *fast* leaves marked slow, above *most* left out."""
    cases = []
    for fen, depth, count, chess960 in _suite():
        if most is not None and count > most:
            continue
        marks = [pytest.mark.slow] if count > fast else []
        cases.append(pytest.param(fen, depth, count, chess960, marks=marks, id=f"{fen.split()[0][:12]}-D{depth}"))
    return cases


def reference_perft(board: chess.Board, depth: int) -> int:
    """Perft by python-chess's own legal move generation."""
    if depth <= 1:
        return board.legal_moves.count() if depth == 1 else 1
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += reference_perft(board, depth - 1)
        board.pop()
    return total


@pytest.mark.parametrize(("fen", "depth", "expected", "chess960"), _cases(FAST_NODES))
def test_published_counts(fen: str, depth: int, expected: int, chess960: bool) -> None:
    """blitzaco.perft (the engine's board, its generator, legality test and
    make/unmake) gives the published leaf count."""
    assert perft(chess.Board(fen, chess960=chess960), depth) == expected


@pytest.mark.parametrize(("fen", "chess960"), [(KIWIPETE, False), (CHESS960[0][0], True),
                                                ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                                                 False)])
def test_divide_is_python_chess_split_and_leaves_the_board_unchanged(fen: str, chess960: bool) -> None:
    """The split by root move: python-chess's legal moves, each with python-chess's
    own count of its subtree, in the board's generation order; the board given is
    left as it was."""
    board = chess.Board(fen, chess960=chess960)
    before = board.fen()
    split = divide(board, 3)
    assert board.fen() == before
    generated = [decode_move(code) for code in core.legal_codes(core.Board.from_chess(board))]
    assert [move for move, _ in split] == generated
    assert sorted(move.uci() for move, _ in split) == sorted(move.uci() for move in board.legal_moves)
    for move, count in split:
        board.push(move)
        assert count == reference_perft(board, 2), move
        board.pop()


def test_divide_stops_when_asked() -> None:
    """The stopped callback ends a deep count with PerftStopped (what UCI stop does
    to go perft): asked at the root move and again inside its subtree, more than
    three plies above the leaves; never saying stop, the count ends."""
    asked = []

    def stopped() -> bool:
        asked.append(True)
        return len(asked) > 1

    with pytest.raises(PerftStopped):
        divide(chess.Board(), 5, stopped)
    assert len(asked) == 2
    assert sum(count for _, count in divide(chess.Board(), 2)) == 400


def test_depth_zero_counts_the_position() -> None:
    """Perft 0 is the position itself; divide of depth 1 counts each move once."""
    assert perft(chess.Board(), 0) == 1
    assert [count for _, count in divide(chess.Board(), 1)] == [1] * 20


# ------------------------------------------------------------------ as a GUI asks


@pytest.fixture(scope="module")
def gui() -> Iterator[UciProcess]:
    """One engine process for the go perft cases of this module (after the handshake)."""
    with UciProcess() as process:
        process.handshake()
        yield process
        stderr = b"".join(process.stderr)
        assert b"Traceback" not in stderr, stderr.decode("utf-8", "replace")[-3000:]


@pytest.mark.parametrize(("fen", "depth", "expected", "chess960"), _cases(FAST_UCI_NODES, MAX_UCI_NODES))
def test_go_perft_gives_the_published_counts(gui: UciProcess, fen: str, depth: int, expected: int,
                                             chess960: bool) -> None:
    """``position fen`` and ``go perft N`` (UCI_Chess960 set as a GUI sets it): one
    line per legal move, and the published total."""
    gui.send(f"setoption name UCI_Chess960 value {'true' if chess960 else 'false'}")
    gui.send(f"position fen {fen}")
    gui.send(f"go perft {depth}")
    lines = gui.read_until(lambda line: line.startswith("Nodes searched"), timeout=600)
    assert lines[-1] == f"Nodes searched: {expected}"
    split = [line for line in lines if ": " in line and not line.startswith(("info", "Nodes"))]
    board = chess.Board(fen, chess960=chess960)
    assert sorted(line.split(": ")[0] for line in split) == sorted(board.uci(move) for move in board.legal_moves)
    assert sum(int(line.split(": ")[1]) for line in split) == expected
    assert gui.read_line() == ""


# ------------------------------------------------------------------ the perft command


def test_perft_command_prints_split_and_total() -> None:
    out = subprocess.run([*ENGINE_COMMAND, "perft", "3"], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[-1] == "Nodes searched: 8902"
    moves = [line for line in lines if ": " in line and not line.startswith("Nodes")]
    assert len(moves) == 20
    assert sum(int(line.split(": ")[1]) for line in moves) == 8902


def test_perft_command_with_fen() -> None:
    fen = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
    command = [*ENGINE_COMMAND, "perft", "4", *fen.split()]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "Nodes searched: 43238"


def test_perft_command_rejects_a_bad_fen() -> None:
    run = subprocess.run([*ENGINE_COMMAND, "perft", "2", "not", "a", "fen"], capture_output=True, text=True)
    assert run.returncode == 2
    assert "bad FEN" in run.stderr


def test_perft_command_splits_as_python_chess_counts() -> None:
    """The command's split: each move as python-chess writes it (castling
    included), with python-chess's own count of its subtree."""
    board = chess.Board(KIWIPETE)
    out = subprocess.run([*ENGINE_COMMAND, "perft", "2", *KIWIPETE.split()], capture_output=True, text=True,
                         check=True).stdout
    lines = out.strip().splitlines()
    split = dict(line.split(": ") for line in lines if ": " in line and not line.startswith("Nodes"))
    expected = {}
    for move in board.legal_moves:
        board.push(move)
        expected[board.peek().uci()] = str(board.legal_moves.count())
        board.pop()
    assert split == expected
    assert split["e1g1"] == "43" and lines[-1] == "Nodes searched: 2039"
