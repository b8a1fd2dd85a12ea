"""The engine's own board (blitzaco.board) against python-chess: moves, legality,
keys (Polyglot's, and compute_key's in Chess960), state restored by unmake, and
repetition detection against its rule written plainly over python-chess's keys.

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

from blitzaco.board import Board, compute_key, repetition_window
from blitzaco.board import legal_codes as board_legal_codes
from blitzaco.tools.boardcheck import Mismatch, check_position, code_of, cross_check, legal_codes, snapshot


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
    """The keys of the game before the root are the Polyglot keys of the positions
    since the last capture or pawn move (python-chess's), the root is the last of
    them, and the board's state is the game's; a twofold repetition before the root
    is not yet a draw (python-chess: not a threefold one)."""
    game = chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f3g1", "c6b8", "g1f3", "b8c6"):
        game.push_uci(uci)
    board = Board.from_chess(game)
    assert repetition_window(game) == 6
    assert board.root == board.ply == 6
    replay = chess.Board()
    expected = []
    for index, move in enumerate(game.move_stack):
        replay.push(move)
        if index >= 1:  # from the position after e7e5, the last pawn move
            expected.append(_signed(chess.polyglot.zobrist_hash(replay)))
    assert [board.keys[i] for i in range(board.ply + 1)] == expected
    assert board.to_chess().fen() == game.fen()
    assert game.is_repetition(2) and not game.is_repetition(3)
    assert not board.is_repetition()
    for uci in ("f3g1", "c6b8", "g1f3", "b8c6"):  # a third time, after the root
        game.push_uci(uci)
        board.make(code_of(chess.Move.from_uci(uci)))
    assert game.is_repetition(3) and board.is_repetition()


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _repeats(keys: list[int], root: int, barriers: list[int]) -> bool:
    """The board's repetition rule written plainly over a list of position keys
    (python-chess's): the last position repeats one after the root (index > *root*),
    or occurs for the third time counting the positions up to the root; positions
    before the last null move (``barriers[-1]``, the index of the position after it)
    never count."""
    last = len(keys) - 1
    stop = barriers[-1] if barriers else 0
    earlier = [index for index in range(stop, last) if keys[index] == keys[last]]
    return any(index > root for index in earlier) or len(earlier) >= 2


@pytest.mark.parametrize("seed", range(4))
def test_repetition_and_null_moves_follow_the_rule_over_python_chess(seed: int) -> None:
    """Shuffling knights (with history before the root, null moves in between and
    taken back): the board's key is python-chess's Polyglot key at every step, and its
    repetition answer is the rule's (:func:`_repeats`) over python-chess's keys; at
    the root, with no null move, it is python-chess's threefold repetition."""
    rng = random.Random(seed)
    reference = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "b1c3")[: rng.randrange(10)]:
        reference.push_uci(uci)
    board = Board.from_chess(reference)
    keys = [_signed(chess.polyglot.zobrist_hash(reference.copy().root()))]
    replay = reference.copy().root()
    for move in reference.move_stack:
        replay.push(move)
        keys.append(_signed(chess.polyglot.zobrist_hash(replay)))
    root = len(keys) - 1
    assert board.is_repetition() == reference.is_repetition(3) == _repeats(keys, root, [])
    shufflers = [chess.Move.from_uci(u) for u in ("g1f3", "f3g1", "g8f6", "f6g8", "b1c3", "c3b1", "b8c6", "c6b8")]
    barriers: list[int] = []
    made: list[chess.Move | None] = []
    repeated = 0
    for _ in range(200):
        roll = rng.random()
        if roll < 0.2 and made:
            if made.pop() is None:
                barriers.pop()
            board.unmake()
            reference.pop()
            keys.pop()
        elif roll < 0.3 and not reference.is_check():
            made.append(None)
            board.make_null()
            reference.push(chess.Move.null())
            keys.append(_signed(chess.polyglot.zobrist_hash(reference)))
            barriers.append(len(keys) - 1)
        else:
            moves = [m for m in shufflers if m in reference.legal_moves] or list(reference.legal_moves)
            move = rng.choice(moves)
            made.append(move)
            board.make(code_of(move))
            reference.push(move)
            keys.append(_signed(chess.polyglot.zobrist_hash(reference)))
        assert board.key == keys[-1] == _signed(compute_key(reference))
        expected = _repeats(keys, root, barriers)
        assert board.is_repetition() == expected, made
        repeated += expected
    assert repeated > 10


def test_the_repetition_rule_can_fail() -> None:
    """The rule tells the cases apart: a twofold repetition before the root is not
    one, after it is; a null move in between hides the earlier position."""
    keys = [7, 1, 2, 3, 1]
    assert not _repeats(keys, root=4, barriers=[])
    assert _repeats(keys, root=0, barriers=[])
    assert not _repeats(keys, root=0, barriers=[2])
    assert _repeats([1, 2, 1, 2, 1], root=4, barriers=[])


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


def test_legal_codes_are_python_chess_legal_moves() -> None:
    """board.legal_codes (what perft and the root use) gives python-chess's legal
    moves, once each, in positions with castling, en passant, promotions and checks."""
    for fen in (
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",
    ):
        reference = chess.Board(fen)
        codes = board_legal_codes(Board.from_chess(reference))
        assert len(codes) == len(set(codes))
        assert sorted(codes) == sorted(code_of(move) for move in reference.legal_moves), fen


def test_copy_is_independent() -> None:
    """A copy's moves leave the original as it was."""
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
