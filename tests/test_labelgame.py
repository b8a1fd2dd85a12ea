"""The label games' two boards (blitzaco.tools.tune.labelgame) held together: along
random games, standard and Chess960, from the perft suite's positions (castling, en
passant, promotions), the engine's board gives python-chess's legal moves, quiet
test, record and FEN; the moves Stockfish is sent lead to the position played; the
game ends where the rules say."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from blitzaco.tools.tune.labelgame import ChessGame, NativeGame

PERFT = Path(__file__).parent / "data" / "perft.epd"


def _starts() -> list[chess.Board]:
    boards = [chess.Board(line.split(";")[0].strip()) for line in PERFT.read_text().splitlines() if line.strip()]
    boards += [chess.Board.from_chess960_pos(index) for index in (0, 17, 518, 959, 301)]
    boards.append(chess.Board("4k3/1P4p1/8/3pP3/8/8/6p1/4K2R w K d6 0 40"))  # en passant, promotions
    return boards


def _same_position(native: NativeGame, reference: ChessGame) -> None:
    board = reference.board
    assert sorted(native.uci(move) for move in native.legal()) == sorted(move.uci() for move in reference.legal())
    assert native.quiet() == reference.quiet()
    assert native.white() == reference.white()
    assert native.record(native.snapshot(), 17, 0.5) == reference.record(reference.snapshot(), 17, 0.5)
    assert native.record(native.snapshot(), -40000, None) == reference.record(reference.snapshot(), -40000, None)
    written = chess.Board(native.fen(), chess960=board.chess960)
    assert written.board_fen() == board.board_fen() and written.turn == board.turn
    assert written.clean_castling_rights() == board.clean_castling_rights()
    assert written.ep_square == (board.ep_square if board.has_pseudo_legal_en_passant() else None)
    assert (written.halfmove_clock, written.fullmove_number) == (board.halfmove_clock, board.fullmove_number)
    root, moves = native.line()
    replayed = chess.Board(root, chess960=board.chess960)
    for move in moves:
        replayed.push_uci(move)
    assert replayed.fen() == board.fen()
    assert len(moves) <= board.halfmove_clock  # from the last move that reset the count


def test_the_engine_board_agrees_with_python_chess_along_random_games() -> None:
    rng = random.Random(5)
    quiet = noisy = en_passant = promotions = castles = 0
    for start in _starts():
        for _ in range(3):
            native, reference = NativeGame(start.copy()), ChessGame(start.copy())
            for _ in range(rng.randint(20, 140)):
                _same_position(native, reference)
                quiet += native.quiet()
                noisy += not native.quiet()
                en_passant += native.snapshot()[2] != 0
                legal = native.legal()
                if not legal:
                    break
                move = rng.choice(legal)
                chosen = reference.parse(native.uci(move))
                promotions += move >> 12 != 0
                castles += reference.board.is_castling(chosen)
                assert native.quiet_move(move) == reference.quiet_move(chosen)
                native.push(move)
                reference.push(chosen)
                if rng.random() < 0.2:  # a child: made and taken back
                    native.pop()
                    reference.pop()
                    _same_position(native, reference)
                    native.push(move)
                    reference.push(chosen)
    assert min(quiet, noisy, en_passant, promotions, castles) > 0


@pytest.mark.parametrize(("fen", "result"), [
    ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", 1.0),  # checkmate
    ("7k/8/6QK/8/8/8/8/8 b - - 0 1", 0.5),  # stalemate
    ("8/8/4k3/8/8/3BK3/8/8 w - - 0 1", 0.5),  # insufficient material
    ("8/8/4k3/8/8/3RK3/8/8 w - - 100 80", 0.5),  # fifty moves
    ("8/8/4k3/8/8/3RK3/8/8 w - - 99 80", None),
])
def test_a_native_game_ends_by_the_rules(fen: str, result: float | None) -> None:
    assert NativeGame(chess.Board(fen)).result() == result


def test_a_native_game_is_drawn_at_the_third_occurrence() -> None:
    game = NativeGame(chess.Board("8/8/4k3/8/8/3RK3/8/8 w - - 0 1"))
    shuffle = ["d3d1", "e6e7", "d1d3", "e7e6"]
    for lap in range(2):
        for uci in shuffle:
            assert game.result() is None, (lap, uci)
            game.push(game.parse(uci))
    assert game.result() == 0.5  # the start, a third time
    game.pop()
    assert game.result() is None
    with pytest.raises(ValueError):
        game.parse("d3d8")
    played = chess.Board()
    played.push_uci("e2e4")
    with pytest.raises(ValueError):
        NativeGame(played)  # a label game starts from a position without moves
