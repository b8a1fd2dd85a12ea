"""The board a label game is played on (``tune.py label``), behind one interface:
:class:`ChessGame` on python-chess's board (generator 1, the files made until
2026-11-27), :class:`NativeGame` on the engine's own board (generator 2).

A label position costs the worker its legal moves, the quiet test, a FEN for
Stockfish and a record; on python-chess's board that was about 0.4 ms of Python
beside Stockfish's 0.25 ms for the evaluation (docs/MEASUREMENTS.md). The engine's
board, compiled, does the same work without building a python-chess object per
move. Its legal moves come in its own generation order, so a seed's games differ
from generator 1's: a run records its generator and continues only with it.

Both give the same answers for the same position (``tests/test_labelgame.py``
holds them together along random games): the quiet test
(:func:`~blitzaco.tools.tune.sources.is_quiet`), the record
(:func:`~blitzaco.tools.tune.labelfile.encode`) and the position Stockfish is sent.
They differ in when a game ends: generator 1 asks python-chess for the outcome with
draw claims (a claim by the move about to be made included); generator 2 ends a game
at checkmate, stalemate, insufficient material, the fifty-move rule (100 plies
without a capture or pawn move) and the third occurrence of a position.
"""

from __future__ import annotations

import struct
from typing import Any

import chess

from blitzaco.board import BLACK, EMPTY, NO_SQUARE, WHITE, Board, legal_codes
from blitzaco.movepick import is_tactical, see_ge, see_scratch
from blitzaco.tools.tune.labelfile import NO_RESULT, encode
from blitzaco.tools.tune.sources import is_quiet

__all__ = ["ChessGame", "NativeGame", "Game", "game_of", "GENERATORS", "LATEST_GENERATOR"]

#: The generators a label run may name (its state's ``generator``; a run without one
#: was made by 1).
GENERATORS = (1, 2)
LATEST_GENERATOR = 2

_RECORD = struct.Struct("<32sBBhB")
_SYMBOLS = ".PNBRQK..pnbrqk"
_PROMOTION = ("", "", "n", "b", "r", "q")
_NAMES = chess.SQUARE_NAMES


def _outcome_result(outcome: chess.Outcome) -> float:
    return 0.5 if outcome.winner is None else float(outcome.winner)


class ChessGame:
    """Generator 1: a label game on a python-chess board, as the label runs played
    it until 2026-11-27 (their seeds regenerate the same files)."""

    def __init__(self, board: chess.Board) -> None:
        self.board = board

    def ply(self) -> int:
        return self.board.ply()

    def white(self) -> bool:
        return self.board.turn == chess.WHITE

    def legal(self) -> list[Any]:
        return list(self.board.legal_moves)

    def push(self, move: Any, on_line: bool = True) -> None:
        self.board.push(move)

    def pop(self) -> None:
        self.board.pop()

    def quiet(self) -> bool:
        return is_quiet(self.board)

    def quiet_move(self, move: Any) -> bool:
        return not (self.board.is_capture(move) or move.promotion)

    def result(self) -> float | None:
        """The game's result for White once it is over, else None: python-chess's
        outcome, with draw claims once a claim can be made (a threefold claim needs
        a position met twice among the positions since the last irreversible move,
        at least 7 reversible plies; a fifty-move claim at least 99), since the claim
        test is costly (every legal move made and the game replayed)."""
        board = self.board
        outcome = board.outcome() if board.halfmove_clock < 7 else board.outcome(claim_draw=True)
        return None if outcome is None else _outcome_result(outcome)

    def child_over(self) -> bool:
        """Whether the game would be over here (a position off the line)."""
        return self.board.outcome() is not None

    def fen(self) -> str:
        return self.board.fen(en_passant="fen")

    def line(self) -> tuple[str, list[str]]:
        """The game as Stockfish is sent it: the start position and the moves since."""
        board = self.board
        return board.root().fen(en_passant="fen"), [move.uci() for move in board.move_stack]

    def parse(self, uci: str) -> Any:
        return self.board.parse_uci(uci)

    def snapshot(self) -> Any:
        """What :meth:`record` needs of the position, to be written once the game's
        result is known."""
        return self.board.copy(stack=False)

    @staticmethod
    def record(snapshot: Any, score: int, result: float | None) -> bytes:
        return encode(snapshot, score, result)


class NativeGame:
    """Generator 2: a label game on the engine's own board (compiled where the
    package is). python-chess only sets up the start position."""

    def __init__(self, board: chess.Board, capacity: int = 400) -> None:
        if board.move_stack:
            raise ValueError("a label game starts from a position without moves")
        self.board = Board.from_chess(board, capacity)
        self.chess960 = board.chess960
        self._scratch = see_scratch()
        self._legal: list[int] | None = None
        self._moves: list[str] = []
        #: The positions Stockfish's move list starts from: after the last move that
        #: resets the fifty-move count (no repetition reaches back past it), as
        #: (FEN, moves before it).
        self._anchors: list[tuple[str, int]] = [(board.fen(en_passant="fen"), 0)]
        # The castling field's letter of each right (White's king side, queen side,
        # Black's): KQkq, or in Chess960 the rook's file (Shredder-FEN).
        letters = []
        for right in range(4):
            rook = int(self.board.castle_rook[right])
            if not self.chess960:
                letters.append("KQkq"[right])
            elif rook == NO_SQUARE:
                letters.append("")
            else:
                letter = chess.FILE_NAMES[rook & 7]
                letters.append(letter.upper() if right < 2 else letter)
        self._castle_letters = letters

    def ply(self) -> int:
        return int(self.board.ply)

    def white(self) -> bool:
        return self.board.side == WHITE

    def legal(self) -> list[int]:
        if self._legal is None:
            self._legal = legal_codes(self.board)
        return self._legal

    def push(self, move: int, on_line: bool = True) -> None:
        """Play *move*; *on_line* False for a move that is taken back before the
        game goes on (a child's): Stockfish is never sent a line through it, so no
        FEN is made for it."""
        self._moves.append(self.uci(move))
        self.board.make(move)
        self._legal = None
        if on_line and self.board.halfmove == 0:
            self._anchors.append((self.fen(), len(self._moves)))

    def pop(self) -> None:
        if self._anchors[-1][1] == len(self._moves):
            self._anchors.pop()
        self._moves.pop()
        self.board.unmake()
        self._legal = None

    def quiet(self) -> bool:
        """:func:`~blitzaco.tools.tune.sources.is_quiet` on this board: not in check,
        no legal promotion, no legal capture winning material by static exchange."""
        board = self.board
        if board.in_check():
            return False
        for move in self.legal():
            if move >> 12:
                return False
            if is_tactical(board, move) and see_ge(board, move, 1, self._scratch):  # a capture, here
                return False
        return True

    def quiet_move(self, move: int) -> bool:
        return not is_tactical(self.board, move)  # neither a capture (en passant too) nor a promotion

    def _repeated_thrice(self) -> bool:
        board = self.board
        keys = board.keys
        last = int(board.ply)
        stop = max(last - int(board.halfmove), 0)
        seen = 0
        for index in range(last, stop - 1, -2):
            if keys[index] == keys[last]:
                seen += 1
        return seen >= 3

    def result(self) -> float | None:
        """The game's result for White once it is over (checkmate, stalemate,
        insufficient material, the fifty-move rule, the third occurrence of the
        position), else None."""
        board = self.board
        if not self.legal():
            if board.in_check():
                return 0.0 if board.side == WHITE else 1.0
            return 0.5
        if board.halfmove >= 100 or board.is_insufficient_material() or self._repeated_thrice():
            return 0.5
        return None

    def child_over(self) -> bool:
        return self.result() is not None

    def uci(self, move: int) -> str:
        """The move in UCI (king takes rook for castling in Chess960, as Stockfish
        reads it with ``UCI_Chess960``)."""
        return _NAMES[move & 63] + _NAMES[move >> 6 & 63] + _PROMOTION[move >> 12]

    def parse(self, uci: str) -> int:
        for move in self.legal():
            if self.uci(move) == uci:
                return move
        raise ValueError(f"illegal move {uci} in {self.fen()}")

    def fen(self) -> str:
        board = self.board
        rows = []
        for rank in range(7, -1, -1):
            row = ""
            empty = 0
            for file in range(8):
                piece = board.piece_at(rank * 8 + file)
                if piece == EMPTY:
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                row += _SYMBOLS[piece]
            rows.append(row + (str(empty) if empty else ""))
        castling = "".join(self._castle_letters[right] for right in range(4) if board.castling >> right & 1)
        ep = _NAMES[board.ep] if board.ep != NO_SQUARE else "-"
        side = "w" if board.side == WHITE else "b"
        return f"{'/'.join(rows)} {side} {castling or '-'} {ep} {board.halfmove} {board.fullmove}"

    def line(self) -> tuple[str, list[str]]:
        """The game as Stockfish is sent it: the position after the last move that
        reset the fifty-move count and the moves since (all the repetitions it can
        see are in them)."""
        fen, start = self._anchors[-1]
        return fen, self._moves[start:]

    def _legal_en_passant(self) -> bool:
        board = self.board
        if board.ep == NO_SQUARE:
            return False
        return any((move >> 6 & 63) == board.ep and move & 7 != board.ep & 7
                   and board.piece_at(move & 63) & 7 == chess.PAWN for move in self.legal())

    def snapshot(self) -> tuple[bytes, int, int]:
        """The record's first 34 bytes as (squares, flags, en passant byte)."""
        board = self.board
        nibbles = bytearray(32)
        for square in range(64):
            piece = board.piece_at(square)
            if piece != EMPTY:
                nibbles[square >> 1] |= piece << (4 * (square & 1))
        flags = 1 if board.side == WHITE else 0
        if not self.chess960:  # a Chess960 position's rights are not stored
            flags |= (board.castling & 15) << 1
        ep = (board.ep & 7) + 1 if self._legal_en_passant() else 0
        return bytes(nibbles), flags, ep

    @staticmethod
    def record(snapshot: tuple[bytes, int, int], score: int, result: float | None) -> bytes:
        nibbles, flags, ep = snapshot
        score = max(-32000, min(32000, score))
        return _RECORD.pack(nibbles, flags, ep, score, NO_RESULT if result is None else int(result * 2))



#: A label game's board, either generator's.
Game = ChessGame | NativeGame


def game_of(board: chess.Board | Game) -> Game:
    """*board* as a label game: a python-chess board wrapped as generator 1's."""
    return ChessGame(board) if isinstance(board, chess.Board) else board


assert BLACK == 1 and WHITE == 0  # the piece codes are the records' nibbles: type + 8 for Black
