"""The engine's own board (blitzaco.board) against python-chess and the engine's
python-chess-based Position: moves, keys, state restored by unmake, repetition.

Perft on this board is in test_perft.py beside the other perft tests; the compiled
build runs the same cross-check in test_native.py.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import chess
import chess.polyglot
import pytest

from blitzaco.board import Board
from blitzaco.config import Config
from blitzaco.evaluate import Evaluator
from blitzaco.position import Position
from blitzaco.tools.boardcheck import Mismatch, check_position, code_of, cross_check, legal_codes, snapshot

PSQ = Evaluator(Config().eval).psq


@pytest.mark.parametrize("seed", range(4))
def test_random_games_agree_with_python_chess(seed: int) -> None:
    """Thousands of positions (half Chess960, castling, en passant and promotions
    favoured): legal moves, stages, check, key, material, FEN, the table-move test,
    and every make and unmake."""
    assert cross_check(seed, games=30, plies=120) > 2500


def test_the_cross_check_sees_a_wrong_board() -> None:
    """The comparison can fail: a board whose castling rights were changed behind
    the key's back, or whose side to move was flipped, is reported."""
    reference = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    rng = random.Random(0)
    check_position(Board.from_chess(reference), reference, [], rng)
    board = Board.from_chess(reference)
    board.castling = 0
    with pytest.raises(Mismatch):
        check_position(board, reference, [], rng)
    board = Board.from_chess(reference)
    board.side ^= 1
    with pytest.raises(Mismatch):
        check_position(board, reference, [], rng)


def test_the_key_is_polyglots() -> None:
    """Polyglot's published keys for the start position and after 1. e4 (its
    specification's examples), and for a position with en passant."""
    board = Board.from_chess(chess.Board())
    assert board.key & 0xFFFFFFFFFFFFFFFF == 0x463B96181691FC9C
    board.make(code_of(chess.Move.from_uci("e2e4")))
    assert board.key & 0xFFFFFFFFFFFFFFFF == 0x823C9B50FD114196
    game = chess.Board()
    for uci in ("e2e4", "d7d5", "e4e5", "f7f5"):
        game.push_uci(uci)
    assert Board.from_chess(game).key & 0xFFFFFFFFFFFFFFFF == 0x22A48B5A8E47FF78


def test_from_chess_replays_the_game_since_the_last_irreversible_move() -> None:
    """The keys of the game before the root are the ones Position keeps, and the
    board's state is the game's."""
    game = chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f3g1", "c6b8", "g1f3", "b8c6"):
        game.push_uci(uci)
    board = Board.from_chess(game)
    position = Position(game, PSQ)
    assert board.root == board.ply == 6
    assert [board.keys[i] for i in range(board.ply + 1)] == [_signed(k) for k in position.keys]
    assert board.to_chess().fen() == game.fen()
    assert board.is_repetition() == position.is_repetition()


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@pytest.mark.parametrize("seed", range(3))
def test_repetition_and_null_moves_agree_with_position(seed: int) -> None:
    """Shuffling knights (with history before the root, null moves in between and
    taken back) gives the same repetition answers as the engine's Position."""
    rng = random.Random(seed)
    game = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "b1c3")[: rng.randrange(6)]:
        game.push_uci(uci)
    board = Board.from_chess(game)
    position = Position(game, PSQ)
    shufflers = [chess.Move.from_uci(u) for u in ("g1f3", "f3g1", "g8f6", "f6g8", "b1c3", "c3b1", "b8c6", "c6b8")]
    made = []
    for _ in range(200):
        reference = position.board
        roll = rng.random()
        if roll < 0.2 and made:
            made.pop()
            board.unmake()
            position.pop()
        elif roll < 0.3 and not reference.is_check():
            made.append(None)
            board.make_null()
            position.push_null()
        else:
            moves = [m for m in shufflers if m in reference.legal_moves] or list(reference.legal_moves)
            move = rng.choice(moves)
            made.append(move)
            board.make(code_of(move))
            position.push_move(move)
        assert board.key == _signed(position.key)
        assert board.is_repetition() == position.is_repetition(), made


def test_unmake_restores_after_a_deep_line() -> None:
    """Making the first legal move thirty times and taking all back leaves the board
    as it was, key history included."""
    board = Board.from_chess(chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"))
    before = snapshot(board)
    depth = 0
    for _ in range(30):
        moves = legal_codes(board)
        if not moves:
            break
        board.make(moves[0])
        depth += 1
    assert depth == 30
    for _ in range(depth):
        board.unmake()
    assert snapshot(board) == before


def test_copy_is_independent() -> None:
    board = Board.from_chess(chess.Board())
    other = board.copy()
    other.make(code_of(chess.Move.from_uci("e2e4")))
    assert board.to_chess().fen() == chess.STARTING_FEN
    assert other.to_chess().fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def test_the_board_imports_nothing_of_ours() -> None:
    """The ground floor: python-chess (to set up and write back), librt and the
    standard library, nothing of the engine's (no evaluation, no search)."""
    source = Path(__file__).resolve().parent.parent / "src" / "blitzaco" / "board.py"
    tree = ast.parse(source.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "random", "typing", "chess", "librt", "mypy_extensions"}, imported
