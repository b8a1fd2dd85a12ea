"""A whole game of the engine against itself, two processes, 2 s + 0.02 s per move,
through python-chess: no flag fall, every move legal, the result adjudicated."""

from __future__ import annotations

import time

import chess
import chess.engine
from uci_driver import ENGINE_COMMAND

BASE, INCREMENT = 2.0, 0.02


def play_game(board: chess.Board, engines: dict[chess.Color, chess.engine.SimpleEngine]) -> tuple[str, str, dict]:
    """Play to the end under the clock, as a GUI would; returns (result, reason, clocks)."""
    clock = {chess.WHITE: BASE, chess.BLACK: BASE}
    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            return outcome.result(), outcome.termination.name, clock
        side = board.turn
        limit = chess.engine.Limit(
            white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK], white_inc=INCREMENT, black_inc=INCREMENT
        )
        started = time.monotonic()
        result = engines[side].play(board, limit)
        clock[side] -= time.monotonic() - started
        if clock[side] <= 0:
            return ("0-1" if side == chess.WHITE else "1-0"), "TIME_FORFEIT", clock
        clock[side] += INCREMENT
        assert result.move in board.legal_moves, f"illegal move {result.move} in {board.fen()}"
        board.push(result.move)


def test_selfplay_game_under_the_clock() -> None:
    white = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=30)
    black = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=30)
    try:
        board = chess.Board("rnbqkb1r/pp3ppp/4pn2/2pp4/3P4/2P1PN2/PP3PPP/RNBQKB1R w KQkq - 0 5")
        result, reason, clock = play_game(board, {chess.WHITE: white, chess.BLACK: black})
    finally:
        white.quit()
        black.quit()
    assert reason != "TIME_FORFEIT", f"flag fell; clocks {clock}"
    assert min(clock.values()) > 0
    # the adjudication agrees with the final position
    if reason == "CHECKMATE":
        assert board.is_checkmate()
        assert result == ("0-1" if board.turn == chess.WHITE else "1-0")
    else:
        assert result == "1/2-1/2"
        assert (
            board.is_stalemate()
            or board.is_insufficient_material()
            or board.can_claim_draw()
            or board.is_seventyfive_moves()
            or board.is_fivefold_repetition()
        )
    assert len(board.move_stack) >= 10
