"""Move generation against published perft counts."""

from __future__ import annotations

import subprocess

import chess
import pytest
from uci_driver import DATA, ENGINE_COMMAND

from blitzaco import board as core
from blitzaco.perft import divide, perft

#: Leaf counts up to this size run by default; deeper ones are marked slow.
FAST_NODES = 120_000


def _cases() -> list:
    cases = []
    for line in (DATA / "perft.epd").read_text().splitlines():
        fen, *depths = (part.strip() for part in line.split(";"))
        for entry in depths:
            depth, count = entry[1:].split()
            marks = [pytest.mark.slow] if int(count) > FAST_NODES else []
            cases.append(pytest.param(fen, int(depth), int(count), marks=marks, id=f"{fen.split()[0][:12]}-D{depth}"))
    return cases


@pytest.mark.parametrize(("fen", "depth", "expected"), _cases())
def test_standard_positions(fen: str, depth: int, expected: int) -> None:
    assert perft(chess.Board(fen), depth) == expected


# Chess960 positions from the chessprogramming wiki's published Chess960 perft list.
CHESS960 = [
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", [21, 528, 12189]),
    ("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", [21, 807, 18002]),
    ("b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9", [20, 479, 10471]),
]


@pytest.mark.parametrize(("fen", "counts"), CHESS960)
def test_chess960_positions(fen: str, counts: list[int]) -> None:
    board = chess.Board(fen, chess960=True)
    assert [perft(board, depth) for depth in range(1, len(counts) + 1)] == counts


@pytest.mark.parametrize(("fen", "depth", "expected"), _cases())
def test_standard_positions_on_the_engines_board(fen: str, depth: int, expected: int) -> None:
    assert core.perft(core.Board.from_chess(chess.Board(fen)), depth) == expected


@pytest.mark.parametrize(("fen", "counts"), CHESS960)
def test_chess960_positions_on_the_engines_board(fen: str, counts: list[int]) -> None:
    board = core.Board.from_chess(chess.Board(fen, chess960=True))
    assert [core.perft(board, depth) for depth in range(1, len(counts) + 1)] == counts


def test_divide_on_the_engines_board_sums_to_perft() -> None:
    board = core.Board.from_chess(chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"))
    split = core.divide(board, 2)
    assert len(split) == 48
    assert sum(count for _, count in split) == 2039


def test_divide_sums_to_perft_and_leaves_the_board_unchanged() -> None:
    board = chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    fen = board.fen()
    split = divide(board, 2)
    assert len(split) == 48
    assert sum(count for _, count in split) == 2039
    assert board.fen() == fen


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


def test_perft_command_on_the_engines_board_gives_the_same_split() -> None:
    """``--core`` walks blitzaco.board: the same moves (as python-chess writes them,
    castling included) with the same counts as the search's own walk."""
    fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1".split()
    lines = {}
    for flags in ([], ["--core"]):
        out = subprocess.run([*ENGINE_COMMAND, "perft", *flags, "2", *fen], capture_output=True, text=True, check=True)
        lines[tuple(flags)] = sorted(out.stdout.strip().splitlines())
    assert lines[()] == lines[("--core",)]
    assert "e1g1: 43" in lines[()] and "Nodes searched: 2039" in lines[()]
