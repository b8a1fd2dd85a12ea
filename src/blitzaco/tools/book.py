"""Opening books: our readable opening database and PGN collections, turned into
Polyglot ``.bin`` books.

A Polyglot book is a list of 16-byte big-endian records ``(key, move, weight,
learn)`` sorted by key, where ``key`` is the Polyglot Zobrist key of the position
(python-chess's ``chess.polyglot.zobrist_hash``) and ``move`` packs ``to | from << 6
| promotion << 12`` with castling written as the king taking its rook.

Two sources:

* the opening database ``assets/openings.txt``: one opening per line, ``NAME |
  MOVES | WEIGHT`` with the moves in SAN or UCI from the start position. Every
  position on a line gets the line's weight for the move played there; lines that
  share a beginning add up. Malformed lines are reported with their line number and
  skipped.
* PGN files, weighted the way PolyGlot's ``make-book`` weights them, so that the
  same PGN gives the same bytes: a move scores 2 for each game the side that played
  it won and 1 for each draw; it is kept when played in at least ``min_games``
  games and scored above 0; counts are halved when a move reaches 16384 games.

Records are sorted by key, then by weight (highest first); ties keep the order in
which the moves were first met. Weights above 65535 in a position (only possible
when several sources are merged) are scaled down to fit.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot

__all__ = [
    "BookEntry",
    "OpeningLine",
    "read_database",
    "database_entries",
    "pgn_entries",
    "merge_entries",
    "book_bytes",
    "polyglot_move",
    "build_book",
]

RECORD = struct.Struct(">QHHI")
MAX_WEIGHT = 0xFFFF
#: PolyGlot halves a position's counts when a move reaches this many games.
COUNT_MAX = 16384


@dataclass(frozen=True)
class BookEntry:
    key: int
    move: int  # Polyglot move encoding
    weight: int
    learn: int = 0


@dataclass(frozen=True)
class OpeningLine:
    name: str
    moves: tuple[chess.Move, ...]
    weight: int
    line_number: int


def polyglot_move(board: chess.Board, move: chess.Move) -> int:
    """The Polyglot encoding of *move* in *board*: castling as king takes rook."""
    to_square = move.to_square
    if board.is_castling(move):
        rook_side = move.to_square > move.from_square
        if board.piece_at(move.to_square) is None or board.piece_type_at(move.to_square) != chess.ROOK:
            # standard notation (e1g1): the rook stands on the corner of that side
            to_square = (move.from_square & 56) | (7 if rook_side else 0)
    promotion = (move.promotion - 1) if move.promotion else 0  # knight 1 ... queen 4
    return to_square | move.from_square << 6 | promotion << 12


def read_database(path: str | Path) -> tuple[list[OpeningLine], list[str]]:
    """Parse the opening database: the good lines, and one message per bad line."""
    lines: list[OpeningLine] = []
    problems: list[str] = []
    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        fields = [field.strip() for field in text.split("|")]
        if len(fields) not in (2, 3) or not fields[0] or not fields[1]:
            problems.append(f"{path}:{number}: expected 'NAME | MOVES | WEIGHT'")
            continue
        weight = 1
        if len(fields) == 3 and fields[2]:
            try:
                weight = int(fields[2])
            except ValueError:
                problems.append(f"{path}:{number}: weight '{fields[2]}' is not an integer")
                continue
            if not 1 <= weight <= MAX_WEIGHT:
                problems.append(f"{path}:{number}: weight {weight} is outside 1..{MAX_WEIGHT}")
                continue
        board = chess.Board()
        moves = []
        try:
            for token in fields[1].split():
                move = _parse_move(board, token)
                moves.append(move)
                board.push(move)
        except ValueError as err:
            problems.append(f"{path}:{number}: move {len(moves) + 1} '{token}': {err}")
            continue
        lines.append(OpeningLine(fields[0], tuple(moves), weight, number))
    return lines, problems


def _parse_move(board: chess.Board, token: str) -> chess.Move:
    try:
        return board.parse_san(token)
    except ValueError:
        try:
            move = board.parse_uci(token)
        except ValueError:
            raise ValueError("not a legal move in SAN or UCI") from None
        if not move:
            raise ValueError("null moves are not book moves") from None
        return move


class _Table:
    """(key, move) -> statistics, remembering first-seen order."""

    def __init__(self) -> None:
        self.stats: dict[tuple[int, int], list[int]] = {}

    def get(self, key: int, move: int) -> list[int]:
        entry = self.stats.get((key, move))
        if entry is None:
            entry = self.stats[(key, move)] = [0, 0]  # games, score (or weight)
        return entry


def database_entries(lines: Iterable[OpeningLine], max_ply: int | None = None) -> list[BookEntry]:
    """Book entries of the opening database lines (weights added up)."""
    table = _Table()
    for line in lines:
        board = chess.Board()
        for ply, move in enumerate(line.moves):
            if max_ply is not None and ply >= max_ply:
                break
            table.get(chess.polyglot.zobrist_hash(board), polyglot_move(board, move))[1] += line.weight
            board.push(move)
    return _sorted(BookEntry(key, move, weight) for (key, move), (_, weight) in table.stats.items())


def pgn_entries(
    paths: Sequence[str | Path],
    *,
    max_ply: int = 1024,
    min_games: int = 3,
    problems: list[str] | None = None,
) -> list[BookEntry]:
    """Book entries of the games in *paths*, weighted as PolyGlot's make-book does.
    Unreadable games are reported in *problems* and skipped."""
    table = _Table()
    by_key: dict[int, list[list[int]]] = {}
    for path in paths:
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            number = 0
            while True:
                game = chess.pgn.read_game(handle)
                if game is None:
                    break
                number += 1
                if game.errors:
                    if problems is not None:
                        problems.append(f"{path}: game {number}: {game.errors[0]}")
                    continue
                result = {"1-0": 1, "0-1": -1}.get(game.headers.get("Result", "*"), 0)
                board = game.board()
                for ply, move in enumerate(game.mainline_moves()):
                    if ply >= max_ply:
                        break
                    key = chess.polyglot.zobrist_hash(board)
                    entry = table.get(key, polyglot_move(board, move))
                    if entry[0] == 0:
                        by_key.setdefault(key, []).append(entry)
                    entry[0] += 1
                    entry[1] += result + 1  # 2 for a win of the side to move, 1 for a draw
                    if entry[0] >= COUNT_MAX:
                        for other in by_key[key]:
                            other[0] = (other[0] + 1) // 2
                            other[1] = (other[1] + 1) // 2
                    board.push(move)
                    result = -result
    kept = (
        BookEntry(key, move, score)
        for (key, move), (games, score) in table.stats.items()
        if games >= min_games and score > 0
    )
    return _sorted(kept)


def merge_entries(*books: Iterable[BookEntry]) -> list[BookEntry]:
    """One list from several: weights of the same position and move are added."""
    table = _Table()
    for entries in books:
        for entry in entries:
            table.get(entry.key, entry.move)[1] += entry.weight
    return _sorted(BookEntry(key, move, weight) for (key, move), (_, weight) in table.stats.items())


def _sorted(entries: Iterable[BookEntry]) -> list[BookEntry]:
    """By key, then heaviest first; Python's sort is stable, so ties keep the order
    in which the moves were first met."""
    return sorted(entries, key=lambda entry: (entry.key, -entry.weight))


def book_bytes(entries: Sequence[BookEntry]) -> bytes:
    """The Polyglot file for *entries* (which must be sorted by key). A position
    whose weights pass 65535 has them scaled down proportionally (at least 1)."""
    out = bytearray()
    index = 0
    while index < len(entries):
        end = index
        while end < len(entries) and entries[end].key == entries[index].key:
            end += 1
        group = entries[index:end]
        top = max(entry.weight for entry in group)
        for entry in group:
            weight = entry.weight if top <= MAX_WEIGHT else max(1, entry.weight * MAX_WEIGHT // top)
            out += RECORD.pack(entry.key, entry.move, weight, entry.learn)
        index = end
    return bytes(out)


def build_book(
    database: str | Path | None = None,
    pgns: Sequence[str | Path] = (),
    *,
    max_ply: int | None = None,
    min_games: int = 3,
) -> tuple[bytes, list[str], int]:
    """The Polyglot bytes of a database and/or PGN files, the problems met (one line
    each, with its line or game number), and the number of entries."""
    problems: list[str] = []
    books = []
    if database is not None:
        lines, bad = read_database(database)
        problems += bad
        books.append(database_entries(lines, max_ply))
    if pgns:
        books.append(pgn_entries(pgns, max_ply=max_ply if max_ply is not None else 1024, min_games=min_games,
                                 problems=problems))
    entries = books[0] if len(books) == 1 else merge_entries(*books)
    return book_bytes(entries), problems, len(entries)
