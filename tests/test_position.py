"""The engine's own incremental key, evaluation sums and repetition detection."""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pytest

from blitzaco.config import Config
from blitzaco.evaluate import Evaluator
from blitzaco.position import Position, compute_key

EVALUATOR = Evaluator(Config().eval)


def _random_walk(board: chess.Board, rng: random.Random, plies: int):
    """Yield a Position after each move of a random game that favours castling,
    en passant and promotions, popping now and then."""
    pos = Position(board, EVALUATOR.psq)
    for _ in range(plies):
        moves = list(pos.board.legal_moves)
        if not moves:
            return
        special = [m for m in moves if pos.board.is_castling(m) or pos.board.is_en_passant(m) or m.promotion]
        pos.push_move(rng.choice(special) if special and rng.random() < 0.5 else rng.choice(moves))
        yield pos
        if rng.random() < 0.15:
            pos.pop()
            yield pos


@pytest.mark.parametrize("seed", range(6))
def test_incremental_state_matches_a_fresh_computation(seed: int) -> None:
    rng = random.Random(seed)
    for game in range(25):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        for pos in _random_walk(board, rng, 160):
            assert pos.key == compute_key(pos.board), pos.board.fen()
            fresh = Position(pos.board.copy(stack=False), EVALUATOR.psq)
            assert (pos.mg, pos.eg, pos.phase) == (fresh.mg, fresh.eg, fresh.phase), pos.board.fen()
            trace = EVALUATOR.trace(pos.board)
            assert EVALUATOR.evaluate(pos) == (trace.score if pos.board.turn else -trace.score), pos.board.fen()
            if not pos.board.chess960:
                assert pos.key == chess.polyglot.zobrist_hash(pos.board), pos.board.fen()


def _state(board: chess.Board) -> tuple[object, ...]:
    return (
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
        tuple(board.occupied_co), board.occupied, board.turn, board.clean_castling_rights(), board.ep_square,
        board.halfmove_clock, board.fullmove_number,
    )


@pytest.mark.parametrize("seed", range(4))
def test_make_unmake_leaves_the_board_as_python_chess_does(seed: int) -> None:
    """The search's own make/unmake against python-chess's push/pop, as the reference,
    over random games of standard chess and Chess960 (castling both ways, en passant,
    every promotion) with null moves and take-backs: every field the search or
    python-chess's queries read must agree after every push and every pop."""
    rng = random.Random(seed)
    for game in range(20):
        start = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        pos = Position(start, EVALUATOR.psq)
        reference = start.copy()
        for _ in range(200):
            moves = list(reference.legal_moves)
            if not moves:
                break
            if rng.random() < 0.05 and not reference.is_check():
                pos.push_null()
                reference.push(chess.Move.null())
            else:
                special = [m for m in moves if reference.is_castling(m) or reference.is_en_passant(m) or m.promotion]
                move = rng.choice(special) if special and rng.random() < 0.6 else rng.choice(moves)
                pos.push_move(move)
                reference.push(move)
            assert _state(pos.board) == _state(reference), reference.fen()
            assert pos.key == compute_key(reference), reference.fen()
            if rng.random() < 0.2:
                pos.pop()
                reference.pop()
                assert _state(pos.board) == _state(reference), reference.fen()
                assert pos.key == compute_key(reference), reference.fen()


def test_history_is_replayed_and_pop_restores() -> None:
    board = chess.Board()
    for uci in ["e2e4", "g8f6", "e4e5", "f6g8", "b1c3", "f7f5"]:  # f7f5 leaves an en passant capture on f6
        board.push_uci(uci)
    pos = Position(board, EVALUATOR.psq)
    assert pos.key == chess.polyglot.zobrist_hash(board)
    assert len(pos.keys) == 1 and pos.root_index == 0 and pos.ply == 0  # nothing since f7f5 can recur
    pos = Position(_play(board.copy(), "c3b1 b8c6"), EVALUATOR.psq)
    assert len(pos.keys) == 3 and pos.root_index == 2
    pos = Position(board, EVALUATOR.psq)
    key = pos.key
    pos.push_move(chess.Move.from_uci("e5f6"))
    assert pos.ply == 1
    pos.pop()
    assert pos.key == key and pos.board.fen() == board.fen()


def test_keys_differ_for_every_distinct_position_of_a_perft_tree() -> None:
    seen: dict[int, str] = {}
    pos = Position(chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"), EVALUATOR.psq)

    def walk(depth: int) -> None:
        epd = pos.board.epd()
        assert seen.setdefault(pos.key, epd) == epd
        if depth:
            for move in list(pos.board.legal_moves):
                pos.push_move(move)
                walk(depth - 1)
                pos.pop()

    walk(2)
    assert len(seen) > 2000


def _play(board: chess.Board, moves: str) -> chess.Board:
    for uci in moves.split():
        board.push_uci(uci)
    return board


def test_repetition_inside_the_search_is_a_draw_at_once() -> None:
    pos = Position(chess.Board(), EVALUATOR.psq)
    for uci in "g1f3 g8f6 f3g1".split():
        pos.push_move(chess.Move.from_uci(uci))
        assert not pos.is_repetition()
    pos.push_move(chess.Move.from_uci("f6g8"))  # the root position again, 4 plies later
    assert not pos.is_repetition(), "a return to the root itself is only the second occurrence"
    pos.push_move(chess.Move.from_uci("g1f3"))  # repeats the position after the first move
    assert pos.is_repetition()


def test_repetition_of_game_history_needs_a_third_occurrence() -> None:
    shuffle = "g1f3 g8f6 f3g1 f6g8 "
    once = Position(_play(chess.Board(), shuffle), EVALUATOR.psq)
    once.push_move(chess.Move.from_uci("g1f3"))  # second time this position occurs
    assert not once.is_repetition()
    twice = Position(_play(chess.Board(), shuffle * 2), EVALUATOR.psq)
    twice.push_move(chess.Move.from_uci("g1f3"))  # third time
    assert twice.is_repetition()


def test_irreversible_moves_cut_the_repetition_window() -> None:
    board = _play(chess.Board(), "g1f3 g8f6 f3g1 f6g8 e2e4 e7e5")
    pos = Position(board, EVALUATOR.psq)
    for uci in "g1f3 g8f6 f3g1 f6g8 g1f3".split():
        pos.push_move(chess.Move.from_uci(uci))
    assert pos.is_repetition()  # after e4 e5 the shuffle repeats inside the search
    # A game ending in a pawn move: nothing before it can recur, so nothing before it is kept.
    early = Position(_play(chess.Board(), "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 e2e4"), EVALUATOR.psq)
    assert len(early.keys) == 1 and early.root_index == 0 and not early.is_repetition()


def test_history_before_the_last_irreversible_move_is_not_replayed() -> None:
    """Only positions since the last capture or pawn move can recur: those are the
    keys kept, however long the game before them, and they still count towards a
    threefold repetition."""
    board = _play(chess.Board(), "g1f3 g8f6 f3g1 f6g8 " * 10 + "e2e4 g8f6 g1f3 f6g8 f3g1")
    pos = Position(board, EVALUATOR.psq)
    assert len(pos.keys) == 5 and pos.root_index == 4
    assert pos.keys[0] == pos.keys[4] == chess.polyglot.zobrist_hash(board)  # after e2e4, twice
    fresh = Position(board.copy(stack=False), EVALUATOR.psq)
    assert (pos.mg, pos.eg, pos.phase) == (fresh.mg, fresh.eg, fresh.phase) and pos.board.fen() == board.fen()
    for uci in "g8f6 g1f3 f6g8".split():
        pos.push_move(chess.Move.from_uci(uci))
        assert not pos.is_repetition()
    pos.push_move(chess.Move.from_uci("f3g1"))  # the third occurrence
    assert pos.is_repetition()
