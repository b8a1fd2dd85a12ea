"""The search's own move generation against python-chess's: the evasions out of
check (the same legal moves in the same order, which keeps the searched tree the
one it was when python-chess generated them)."""

from __future__ import annotations

import random

import chess
import pytest

from blitzaco.movepick import evasion_codes, evasions
from blitzaco.moves import decode_move, encode_move

# Checks of every kind, and two positions out of check (no evasions there): (FEN, in check).
SPECIAL = [
    ("8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1", True),  # d2-d4+: exd3 en passant takes the checker
    ("8/8/8/1k6/2Pp4/8/8/4K3 b - c3 0 1", True),  # c2-c4+: dxc3 en passant takes it too
    ("4k3/8/8/8/8/5n2/8/r3K3 w - - 0 1", True),  # double check: king moves only
    ("1r2k3/P7/8/8/8/8/8/1K6 w - - 0 1", True),  # axb8 takes the checker, every promotion
    ("r6K/1P6/8/8/8/8/8/4k3 w - - 0 1", True),  # b8 blocks, every promotion
    ("4k3/8/8/8/1b6/8/3N4/4K2r w - - 0 1", True),  # Nf1 would block, but the knight is pinned
    ("4k3/8/8/8/8/8/4q3/R3K2R w KQ - 0 1", True),  # no castling out of check
    ("1r2k3/8/8/1Pp5/1K6/8/8/8 w - c6 0 1", True),  # c7-c5+: bxc6 e.p. would take it, but b5 is pinned
    ("bqnb1rkr/pp3ppp/3pp3/2p5/5P2/P2P3n/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", True),  # Chess960, rights kept, Nh3+
    ("4k3/8/8/K2pP2r/8/8/8/8 w - d6 0 1", False),  # exd6 e.p. would expose the king
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", False),  # Chess960
]


def _legal_evasions(board: chess.Board) -> list[int]:
    return [code for code in evasion_codes(board) if board.is_legal(decode_move(code))]  # type: ignore[arg-type]


def _check_position(board: chess.Board) -> None:
    expected = [encode_move(move) for move in board.generate_legal_moves()]
    assert _legal_evasions(board) == expected, board.fen()
    ordered = [code for code, _ in evasions(board, 0) if board.is_legal(decode_move(code))]  # type: ignore[arg-type]
    assert sorted(ordered) == sorted(expected)


@pytest.mark.parametrize(("fen", "in_check"), SPECIAL)
def test_special_checks(fen: str, in_check: bool) -> None:
    board = chess.Board(fen, chess960="HFhf" in fen)
    assert board.is_check() == in_check
    if in_check:
        _check_position(board)
    else:
        assert evasion_codes(board) == []


@pytest.mark.parametrize("seed", range(4))
def test_evasions_match_python_chess_over_random_games(seed: int) -> None:
    """Every position in check met in random games: the same legal moves, in the
    same order; outside check, no evasions."""
    rng = random.Random(seed)
    checked = 0
    for _ in range(60):
        board = chess.Board()
        for _ in range(200):
            moves = list(board.legal_moves)
            if not moves:
                break
            if board.is_check():
                _check_position(board)
                checked += 1
            elif rng.random() < 0.1:
                assert evasion_codes(board) == []
            # Prefer checks and captures so that odd checks come up often.
            forcing = [m for m in moves if board.gives_check(m) or board.is_capture(m)]
            board.push(rng.choice(forcing if forcing and rng.random() < 0.5 else moves))
    assert checked > 500


def test_the_table_move_comes_first_then_captures() -> None:
    board = chess.Board("4k3/8/8/8/8/5n2/8/3QK1N1 w - - 0 1")  # Nf3+: take with a knight or the queen, or step
    assert board.is_check()
    codes = [code for code, _ in evasions(board, 0)]
    by_knight, by_queen = (encode_move(chess.Move.from_uci(uci)) for uci in ("g1f3", "d1f3"))
    assert codes[:2] == [by_knight, by_queen]  # the cheaper attacker first
    step = encode_move(chess.Move.from_uci("e1f2"))
    assert [code for code, _ in evasions(board, step)][:3] == [step, by_knight, by_queen]
    assert dict(evasions(board, 0))[by_queen] is True and dict(evasions(board, 0))[step] is False
