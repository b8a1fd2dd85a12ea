"""What is already known before searching: a Polyglot opening book and Syzygy
endgame tablebases, both through python-chess, both failing soft.

Every failure (a missing, empty or corrupt file, a missing or broken table) becomes
a message for an ``info string`` and the engine plays on without the resource.
"""

from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import chess

from blitzaco.bundled import bundled_file, open_regular
from blitzaco.config import BookConfig

if TYPE_CHECKING:  # imported lazily: neither module is needed to start the engine
    import chess.polyglot
    import chess.syzygy

__all__ = ["Probe", "BookMove", "TablebaseRoot", "split_paths", "bundled_book"]


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
    dtz: int  # plies to the next zeroing move after the best of *moves* (0 for draws)
    probes: int


def bundled_book() -> Path | None:
    """The book shipped with the engine (``assets/book.bin``), if installed."""
    return bundled_file("book.bin")


def _mirror(name: str) -> str:
    white, _, black = name.partition("v")
    return f"{black}v{white}"


def split_paths(value: str) -> list[str]:
    """Split a SyzygyPath value: ';' separates folders on Windows, ':' elsewhere."""
    return [part for part in value.split(os.pathsep) if part.strip()]


class Probe:
    """Owns the book reader and the tablebase handle. Methods return messages for
    the user instead of raising; not thread-safe."""

    def __init__(self, book_config: BookConfig | None = None) -> None:
        self.book: chess.polyglot.MemoryMappedReader | None = None
        self.book_path = ""
        self.book_config = book_config if book_config is not None else BookConfig()
        self.tablebase: chess.syzygy.Tablebase | None = None
        self.tb_pieces = 0
        self.probe_limit = 7
        self.tb_failed = False
        self._rng = random.Random()
        self.reseed()

    # ---------------------------------------------------------------- book

    def open_book(self, path: str) -> str:
        """Open the Polyglot book at *path*; the empty path opens the bundled book."""
        from chess import polyglot

        self.close_book()
        if not path:
            bundled = bundled_book()
            if bundled is None:
                return "no book file (none is bundled)"
            path = str(bundled)
        try:
            os.close(open_regular(path))  # a pipe or a device named by mistake must not block
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

    def reseed(self) -> None:
        """Start the weighted choice afresh from the configured seed (0: from the
        operating system's entropy, different at every start)."""
        self._rng = random.Random(self.book_config.seed or None)

    def new_game(self) -> None:
        """Nothing to forget: the choice goes on from where the last game left it, so
        that the games of one run differ, and a run started with the same seed
        replays the same sequence of games."""

    def book_move(self, board: chess.Board) -> tuple[BookMove | None, str | None]:
        """A legal book move chosen by the configured rule, and a message if the book
        failed (it is then closed, so the message comes once)."""
        config = self.book_config
        if self.book is None or board.ply() >= config.max_ply:
            return None, None
        try:
            entries = [
                entry
                for entry in self.book.find_all(board, minimum_weight=config.min_weight)
                if board.is_legal(entry.move)
            ]
        except (OSError, ValueError, IndexError, struct.error) as err:
            path = self.book_path
            self.close_book()
            return None, f"error: book {path} failed and was closed: {err}"
        total = sum(entry.weight for entry in entries)
        if not entries or total <= 0:
            return None, None
        if config.selection == "best":
            entry = max(entries, key=lambda entry: entry.weight)
            return BookMove(entry.move, entry.weight, total), None
        pick = self._rng.randrange(total)
        for entry in entries:
            pick -= entry.weight
            if pick < 0:
                return BookMove(entry.move, entry.weight, total), None
        return None, None  # pragma: no cover

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
        self.tablebase, self.tb_failed = tablebase, False
        self.tb_pieces = max(len(name) - 1 for name in tablebase.wdl)
        message = f"found {count} Syzygy WDL tables, up to {self.tb_pieces} pieces"
        return message + (f"; error: {'; '.join(problems)}" if problems else "")

    def close_tablebases(self) -> None:
        if self.tablebase is not None:
            self.tablebase.close()
        self.tablebase, self.tb_pieces = None, 0

    @property
    def tb_limit(self) -> int:
        """Largest piece count probed: SyzygyProbeLimit, at most the largest table."""
        return min(self.probe_limit, self.tb_pieces) if self.tablebase is not None else 0

    def _broken(self, err: Exception) -> str:
        """A table failed while probing (truncated, wrong kind...): stop using them."""
        self.tb_failed = True
        self.close_tablebases()
        return f"error: tablebases disabled after a failed probe: {err}"

    def probe_wdl(self, board: chess.Board) -> tuple[int | None, str | None]:
        """WDL of *board* for the side to move (2 win ... -2 loss), None when no
        table covers it; a message when the tables broke."""
        tablebase = self.tablebase
        if tablebase is None:
            return None, None
        try:
            return tablebase.get_wdl(board), None
        except (OSError, ValueError, struct.error) as err:
            return None, self._broken(err)

    def tablebase_root(self, board: chess.Board) -> tuple[TablebaseRoot | None, str | None]:
        """Rank the root moves by tablebase: the winning moves that reach the next
        zeroing move soonest (counting the fifty-move clock), else the drawing moves,
        else the losing moves that resist longest. A message when the tables broke."""
        tablebase = self.tablebase
        if tablebase is None or chess.popcount(board.occupied) > self.tb_limit or board.castling_rights:
            return None, None
        from chess import syzygy

        ranked: list[tuple[int, int, chess.Move]] = []
        probes = 0
        try:
            for move in list(board.legal_moves):
                zeroing = board.is_zeroing(move)
                board.push(move)
                try:
                    dtz_after = tablebase.probe_dtz(board)
                    probes += 1
                finally:
                    board.pop()
                # dtz_after: the opponent's plies to zeroing, negative when they lose.
                plies = 1 if zeroing else abs(dtz_after) + 1
                clock = 0 if zeroing else board.halfmove_clock + 1
                if dtz_after < 0:
                    wdl = 2 if clock + abs(dtz_after) <= 100 else 1
                elif dtz_after > 0:
                    wdl = -2 if clock + dtz_after <= 100 else -1
                else:
                    wdl = 0
                ranked.append((wdl, plies, move))
        except (syzygy.MissingTableError, KeyError):
            return None, None
        except (OSError, ValueError, struct.error) as err:
            return None, self._broken(err)
        if not ranked:
            return None, None
        best_wdl = max(wdl for wdl, _, _ in ranked)
        candidates = [(plies, move) for wdl, plies, move in ranked if wdl == best_wdl]
        if best_wdl in (-1, 0, 1):
            return TablebaseRoot(tuple(move for _, move in candidates), best_wdl, 0, probes), None
        target = min(plies for plies, _ in candidates) if best_wdl > 0 else max(plies for plies, _ in candidates)
        moves = tuple(move for plies, move in candidates if plies == target)
        return TablebaseRoot(moves, best_wdl, target, probes), None
