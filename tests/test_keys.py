"""Position keys and repetition detection on the engine's own board
(:mod:`blitzaco.board`): :func:`~blitzaco.board.compute_key` of a python-chess board
is Polyglot's key in standard chess and the key the board keeps incrementally (null
moves and take-backs included, Chess960 too); keys tell the positions of a perft tree
apart; the game's moves since the last capture or pawn move are replayed onto the
board, and a repetition inside the search is a draw at once while one of the game
before it needs a third occurrence."""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pytest

from blitzaco.board import Board, compute_key, legal_codes, repetition_window, unsigned_key
from blitzaco.tools.boardcheck import code_of


def _play(board: chess.Board, moves: str) -> chess.Board:
    for uci in moves.split():
        board.push_uci(uci)
    return board


def _make(board: Board, moves: str) -> None:
    """Make *moves* (UCI, no castling) on the engine's *board*."""
    for uci in moves.split():
        board.make(code_of(chess.Move.from_uci(uci)))


@pytest.mark.parametrize("seed", range(4))
def test_the_kept_key_is_the_computed_one_and_polyglots(seed: int) -> None:
    """Random games (odd ones Chess960; castling, en passant and promotions favoured)
    with null moves and take-backs: after every make and unmake the board's key is
    :func:`compute_key` of the python-chess board (Polyglot's in standard chess) and
    the one the board computes from scratch; its pawn key is the one computed from
    scratch and a fresh board's."""
    rng = random.Random(seed)
    checked = 0
    for game in range(16):
        reference = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        board = Board.from_chess(reference, 400)
        for _ in range(160):
            moves = list(reference.legal_moves)
            if not moves:
                break
            if rng.random() < 0.05 and not reference.is_check():
                board.make_null()
                reference.push(chess.Move.null())
            else:
                special = [m for m in moves if reference.is_castling(m) or reference.is_en_passant(m) or m.promotion]
                move = rng.choice(special) if special and rng.random() < 0.6 else rng.choice(moves)
                board.make(code_of(move))
                reference.push(move)
            if rng.random() < 0.2:
                board.unmake()
                reference.pop()
            key = unsigned_key(board.key)
            assert key == compute_key(reference) == unsigned_key(board.compute_key()), reference.fen()
            assert board.pawn_key == board.compute_pawn_key() == Board.from_chess(reference).pawn_key, reference.fen()
            if not reference.chess960:
                assert key == chess.polyglot.zobrist_hash(reference), reference.fen()
            checked += 1
    assert checked > 1500


def test_the_pawn_key_names_the_pawns_alone() -> None:
    """The pawn key (the correction history's index) is the same for positions with
    the same pawns whatever the pieces, the side to move and the rights, and changes
    with a pawn move, a pawn capture, en passant and a promotion."""
    start = Board.from_chess(chess.Board())
    other = Board.from_chess(chess.Board("1n2k1r1/pppppppp/8/8/8/8/PPPPPPPP/R3K3 b Q - 3 20"))
    assert start.pawn_key == other.pawn_key != 0
    assert start.pawn_key != start.key
    keys = {start.pawn_key}
    for fen, uci in (("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "e2e4"),
                     ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5"),
                     ("4k3/8/8/3Pp3/8/8/8/4K3 w - e6 0 1", "d5e6"),
                     ("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q"),
                     ("4k3/8/8/3p4/2N5/8/8/4K3 w - - 0 1", "c4d6")):
        reference = chess.Board(fen)
        board = Board.from_chess(reference)
        before = board.pawn_key
        board.make(code_of(chess.Move.from_uci(uci)))
        reference.push_uci(uci)
        assert board.pawn_key == Board.from_chess(reference).pawn_key
        assert (board.pawn_key == before) == (uci == "c4d6"), uci
        board.unmake()
        assert board.pawn_key == before
        keys.add(before)
    assert len(keys) == 6


def test_an_en_passant_square_counts_only_with_a_pawn_ready_to_take() -> None:
    """As Polyglot keys it: after a double step with no enemy pawn beside it the key
    is that of the position without the en passant square."""
    lone = _play(chess.Board(), "e2e4")
    assert compute_key(lone) == compute_key(chess.Board(lone.fen().replace(" e3 ", " - ")))
    ready = _play(chess.Board(), "e2e4 a7a6 e4e5 d7d5")  # e5 can take on d6
    assert compute_key(ready) != compute_key(chess.Board(ready.fen().replace(" d6 ", " - ")))
    assert compute_key(ready) == chess.polyglot.zobrist_hash(ready)


def test_chess960_rights_are_keyed_by_their_rooks() -> None:
    """Chess960 castling rights are keyed by their rooks' squares (here b1, g1, b8,
    g8, off Polyglot's corners): each set of rights gets a key of its own, the one a
    board set up from the position keeps."""
    keys = set()
    for rights in ("GBgb", "Bgb", "Ggb", "GBb", "GBg", "-"):
        board = chess.Board(f"1r2k1r1/8/8/8/8/8/8/1R2K1R1 w {rights} - 0 1", chess960=True)
        assert board.status() == chess.STATUS_VALID
        keys.add(compute_key(board))
        assert compute_key(board) == unsigned_key(Board.from_chess(board).key)
    assert len(keys) == 6


def test_keys_differ_for_every_distinct_position_of_a_perft_tree() -> None:
    """Two plies from a position with castling both ways, en passant and promotions
    near: no two different positions share a key."""
    board = Board.from_chess(chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"))
    seen: dict[int, str] = {}

    def walk(depth: int) -> None:
        epd = board.to_chess().epd()
        assert seen.setdefault(board.key, epd) == epd
        if depth:
            for code in legal_codes(board):
                board.make(code)
                walk(depth - 1)
                board.unmake()

    walk(2)
    assert len(seen) > 2000


def test_the_game_since_the_last_irreversible_move_is_replayed() -> None:
    """Board.from_chess makes the game's moves since the last capture or pawn move
    (:func:`repetition_window`), so that their keys are there to repeat; the search's
    root is the last of them, and unmake restores it."""
    board = _play(chess.Board(), "e2e4 g8f6 e4e5 f6g8 b1c3 f7f5")  # f7f5 leaves an en passant capture on f6
    assert repetition_window(board) == 0
    own = Board.from_chess(board)
    assert unsigned_key(own.key) == chess.polyglot.zobrist_hash(board)
    assert own.ply == own.root == 0  # nothing since f7f5 can recur
    later = _play(board.copy(), "c3b1 b8c6")
    assert repetition_window(later) == 2
    own = Board.from_chess(later)
    assert own.ply == own.root == 2 and unsigned_key(own.keys[0]) == chess.polyglot.zobrist_hash(board)
    own = Board.from_chess(board)
    key = own.key
    own.make(code_of(chess.Move.from_uci("e5f6")))
    assert own.ply == 1
    own.unmake()
    assert own.key == key and own.to_chess().fen() == board.fen()


def test_repetition_inside_the_search_is_a_draw_at_once() -> None:
    board = Board.from_chess(chess.Board())
    for uci in "g1f3 g8f6 f3g1".split():
        _make(board, uci)
        assert not board.is_repetition()
    _make(board, "f6g8")  # the root position again, 4 plies later
    assert not board.is_repetition(), "a return to the root itself is only the second occurrence"
    _make(board, "g1f3")  # repeats the position after the first move
    assert board.is_repetition()


def test_repetition_of_game_history_needs_a_third_occurrence() -> None:
    shuffle = "g1f3 g8f6 f3g1 f6g8 "
    once = Board.from_chess(_play(chess.Board(), shuffle))
    _make(once, "g1f3")  # second time this position occurs
    assert not once.is_repetition()
    twice = Board.from_chess(_play(chess.Board(), shuffle * 2))
    _make(twice, "g1f3")  # third time
    assert twice.is_repetition()


def test_irreversible_moves_cut_the_repetition_window() -> None:
    board = Board.from_chess(_play(chess.Board(), "g1f3 g8f6 f3g1 f6g8 e2e4 e7e5"))
    _make(board, "g1f3 g8f6 f3g1 f6g8 g1f3")
    assert board.is_repetition()  # after e4 e5 the shuffle repeats inside the search
    # A game ending in a pawn move: nothing before it can recur, so nothing before it is kept.
    early = Board.from_chess(_play(chess.Board(), "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 e2e4"))
    assert early.ply == early.root == 0 and not early.is_repetition()


def test_history_before_the_last_irreversible_move_is_not_replayed() -> None:
    """Only positions since the last capture or pawn move can recur: those are the
    keys kept, however long the game before them, and they still count towards a
    threefold repetition."""
    game = _play(chess.Board(), "g1f3 g8f6 f3g1 f6g8 " * 10 + "e2e4 g8f6 g1f3 f6g8 f3g1")
    assert repetition_window(game) == 4
    board = Board.from_chess(game)
    assert board.ply == board.root == 4
    assert board.keys[0] == board.keys[4] and unsigned_key(board.keys[4]) == chess.polyglot.zobrist_hash(game)
    assert board.to_chess().fen() == game.fen()
    for uci in "g8f6 g1f3 f6g8".split():
        _make(board, uci)
        assert not board.is_repetition()
    _make(board, "f3g1")  # the third occurrence
    assert board.is_repetition()
