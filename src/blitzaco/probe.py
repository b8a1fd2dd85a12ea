"""What is already known before searching: a Polyglot opening book and Syzygy
endgame tablebases, both through python-chess, both failing soft.

Every failure (a missing, empty or corrupt file, a missing table) becomes a message
for an ``info string`` and the engine plays on without the resource.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess

if TYPE_CHECKING:  # imported lazily: neither module is needed to start the engine
    import chess.polyglot
    import chess.syzygy

__all__ = ["Probe", "BookMove", "TablebaseRoot", "split_paths"]

#: Seed of the book's weighted choice; a fixed seed replays the same games.
BOOK_SEED = 0x0B00C


@dataclass(frozen=True)
class BookMove:
    move: chess.Move
    weight: int
    total_weight: int


@dataclass(frozen=True)
class TablebaseRoot:
    """The root moves that keep the best tablebase result, and that result."""

    moves: tuple[chess.Move, ...]
    wdl: int  # 2 win, 1 win spoiled by the fifty-move rule, 0 draw, -1, -2 (mover's view)
    dtz: int  # plies to the next zeroing move after the best of *moves* (0 when unknown)
    probes: int


def _mirror(name: str) -> str:
    white, _, black = name.partition("v")
    return f"{black}v{white}"


def split_paths(value: str) -> list[str]:
    """Split a SyzygyPath value: ';' separates folders on Windows, ':' elsewhere."""
    return [part for part in value.split(os.pathsep) if part.strip()]


class Probe:
    """Owns the book reader and the tablebase handle. Methods return a message for
    the user (or None) instead of raising; not thread-safe."""

    def __init__(self) -> None:
        self.book: chess.polyglot.MemoryMappedReader | None = None
        self.book_path = ""
        self.tablebase: chess.syzygy.Tablebase | None = None
        self.tb_pieces = 0
        self.probe_limit = 7
        self._rng = random.Random(BOOK_SEED)

    # ---------------------------------------------------------------- book

    def open_book(self, path: str) -> str:
        """Open the Polyglot book at *path* (an empty path closes it)."""
        from chess import polyglot

        self.close_book()
        if not path:
            return "no book file"
        try:
            reader = polyglot.open_reader(path)
        except (OSError, ValueError) as err:
            return f"error: book {path} not usable: {err}"
        if len(reader) == 0:
            reader.close()
            return f"error: book {path} is empty"
        self.book, self.book_path = reader, path
        return f"book {path} loaded with {len(reader)} entries"

    def close_book(self) -> None:
        if self.book is not None:
            self.book.close()
        self.book, self.book_path = None, ""

    def new_game(self) -> None:
        self._rng = random.Random(BOOK_SEED)

    def book_move(self, board: chess.Board) -> BookMove | None:
        """A legal book move chosen at random in proportion to its weight."""
        if self.book is None:
            return None
        try:
            entries = [e for e in self.book.find_all(board) if board.is_legal(e.move)]
        except (OSError, ValueError, IndexError):
            return None
        total = sum(entry.weight for entry in entries)
        if total <= 0:
            return None
        pick = self._rng.randrange(total)
        for entry in entries:
            pick -= entry.weight
            if pick < 0:
                return BookMove(entry.move, entry.weight, total)
        return None  # pragma: no cover

    # ---------------------------------------------------------- tablebases

    def open_tablebases(self, value: str) -> str:
        """Open every folder of a SyzygyPath value; report how many tables were found."""
        from chess import syzygy

        self.close_tablebases()
        folders = split_paths(value)
        if not folders:
            return "no tablebases"
        tablebase = syzygy.Tablebase()
        problems = []
        for folder in folders:
            if not os.path.isdir(folder):
                problems.append(f"{folder} is not a folder")
                continue
            try:
                tablebase.add_directory(folder)
            except (OSError, ValueError) as err:
                problems.append(f"{folder}: {err}")
        # python-chess registers each table under its mirrored name too (KQvK, KvKQ).
        count = len({min(name, _mirror(name)) for name in tablebase.wdl})
        if count == 0:
            tablebase.close()
            return "error: no Syzygy tables found" + (f" ({'; '.join(problems)})" if problems else "")
        self.tablebase = tablebase
        self.tb_pieces = max(len(name) - 1 for name in tablebase.wdl)
        message = f"found {count} Syzygy WDL tables, up to {self.tb_pieces} pieces"
        return message + (f"; error: {'; '.join(problems)}" if problems else "")

    def close_tablebases(self) -> None:
        if self.tablebase is not None:
            self.tablebase.close()
        self.tablebase, self.tb_pieces = None, 0

    def tablebase_root(self, board: chess.Board) -> TablebaseRoot | None:
        """Rank the root moves by tablebase: keep the winning moves that reach the
        next zeroing move soonest (respecting the fifty-move counter), else the
        drawing moves, else the losing moves that resist longest."""
        tablebase = self.tablebase
        limit = min(self.probe_limit, self.tb_pieces)
        if tablebase is None or chess.popcount(board.occupied) > limit or board.castling_rights:
            return None
        from chess import syzygy

        ranked: list[tuple[int, int, chess.Move]] = []
        probes = 0
        try:
            for move in board.legal_moves:
                zeroing = board.is_zeroing(move)
                board.push(move)
                try:
                    dtz_after = tablebase.probe_dtz(board)
                    probes += 1
                finally:
                    board.pop()
                # dtz_after is the opponent's distance to zeroing (negative: they lose).
                plies = 1 if zeroing else abs(dtz_after) + 1
                clock = 0 if zeroing else board.halfmove_clock + 1
                if dtz_after < 0:
                    wdl = 2 if clock + abs(dtz_after) <= 100 else 1
                elif dtz_after > 0:
                    wdl = -2 if clock + dtz_after <= 100 else -1
                else:
                    wdl = 0
                ranked.append((wdl, plies, move))
        except (syzygy.MissingTableError, KeyError, OSError, ValueError):
            return None
        if not ranked:
            return None
        best_wdl = max(wdl for wdl, _, _ in ranked)
        candidates = [(plies, move) for wdl, plies, move in ranked if wdl == best_wdl]
        if best_wdl > 0:
            target = min(plies for plies, _ in candidates)
        elif best_wdl < 0:
            target = max(plies for plies, _ in candidates)
        else:
            return TablebaseRoot(tuple(move for _, move in candidates), 0, 0, probes)
        moves = tuple(move for plies, move in candidates if plies == target)
        return TablebaseRoot(moves, best_wdl, target, probes)
