"""What is already known before searching: a Polyglot opening book and Syzygy
endgame tablebases, both through python-chess, both failing soft.

Every failure (a missing, empty or corrupt file, a missing or broken table) becomes
a message for an ``info string`` and the engine plays on without the resource; a
broken table file is left out alone, the other tables stay in use (as in Stockfish).

Ranking the root moves by tablebase keeps to the clock: the cheap WDL probe of every
move first (never past the hard limit), then DTZ probes, each twenty to forty times
dearer in python-chess, only while the next one fits before the soft limit.
"""

from __future__ import annotations

import os
import random
import re
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import chess

from blitzaco.bundled import bundled_file, open_regular
from blitzaco.config import BookConfig
from blitzaco.system import split_paths

if TYPE_CHECKING:  # imported lazily: neither module is needed to start the engine
    import chess.polyglot
    import chess.syzygy

__all__ = ["Probe", "BookMove", "TablebaseRoot", "bundled_book"]


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
    dtz: int  # plies to the next zeroing move after the best of *moves* (0: draws, or not ranked by DTZ)
    probes: int
    by_dtz: bool = True  # a win or a loss ranked by DTZ (False: by WDL only, DTZ did not fit the clock)
    unprobed: int = 0  # root moves whose WDL did not fit before the hard limit (left out)


#: Before a DTZ probe has been timed, it is guessed to cost this many times the
#: slowest WDL probe (python-chess with 3- and 4-piece tables: about 40 times).
DTZ_COST_GUESS = 20.0
#: A table file's name in python-chess's messages about it.
_TABLE_FILE = re.compile(r"([KQRBNP]+v[KQRBNP]+)\.rtb[wz]")


def bundled_book() -> Path | None:
    """The book shipped with the engine (``assets/book.bin``), if installed."""
    return bundled_file("book.bin")


def _mirror(name: str) -> str:
    white, _, black = name.partition("v")
    return f"{black}v{white}"


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
        """Open every folder of a SyzygyPath value; report how many tables were found,
        and leave out (and name) the files that are not Syzygy tables of their kind
        (a wrong size or magic number: truncated, garbled, a DTZ file named .rtbw)."""
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
        problems += _leave_out_damaged(tablebase)
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

    @property
    def tb_limit(self) -> int:
        """Largest piece count probed: SyzygyProbeLimit, at most the largest table."""
        return min(self.probe_limit, self.tb_pieces) if self.tablebase is not None else 0

    def _broken(self, failure: _TableFailure) -> str:
        """A table failed while probing (a body python-chess cannot decode): leave
        that table out, WDL and DTZ, and keep the others."""
        tablebase = self.tablebase
        assert tablebase is not None
        _leave_out(tablebase, failure.name)
        left = len({min(key, _mirror(key)) for key in tablebase.wdl})
        message = f"error: tablebase {failure.name} left out after a failed probe ({failure.error!r})"
        if not left:
            self.close_tablebases()
            return message + "; no tables left"
        self.tb_pieces = max(len(key) - 1 for key in tablebase.wdl)
        return message + f"; {left} tables left"

    def _probe(self, board: chess.Board, dtz: bool = False) -> int:
        """WDL (DTZ with *dtz*) of *board*. Raises chess.syzygy.MissingTableError, or
        :class:`_TableFailure` naming the table that failed (the one the error names,
        else the one of *board*'s material)."""
        from chess import syzygy

        assert self.tablebase is not None
        try:
            return self.tablebase.probe_dtz(board) if dtz else self.tablebase.probe_wdl(board)
        except syzygy.MissingTableError:
            raise
        except Exception as err:  # a damaged table: anything python-chess may raise decoding it
            named = _TABLE_FILE.search(str(err))
            raise _TableFailure(named.group(1) if named else syzygy.calc_key(board), err) from None

    def _probe_after(self, board: chess.Board, move: chess.Move, dtz: bool = False) -> int:
        board.push(move)
        try:
            return self._probe(board, dtz)
        finally:
            board.pop()

    def probe_wdl(self, board: chess.Board) -> tuple[int | None, str | None]:
        """WDL of *board* for the side to move (2 win ... -2 loss), None when no
        table covers it; a message when a table broke."""
        from chess import syzygy

        if self.tablebase is None:
            return None, None
        try:
            return self._probe(board), None
        except syzygy.MissingTableError:
            return None, None
        except _TableFailure as failure:
            return None, self._broken(failure)

    def tablebase_root(
        self, board: chess.Board, fits: Callable[[float, bool], bool] | None = None
    ) -> tuple[TablebaseRoot | None, str | None]:
        """Rank the root moves by tablebase: the winning moves that reach the next
        zeroing move soonest (counting the fifty-move clock), else the drawing moves,
        else the losing moves that resist longest. A message when a table broke.

        Within the clock: *fits(ms, hard)* says whether *ms* more milliseconds end
        before the soft limit (the hard one with *hard*); None: no clock. The WDL of
        every move comes first (a move whose probe would pass the hard limit is left
        out: the moves kept have proved their result); then, for a win or a loss, the
        DTZ of the moves that keep it, each only while it fits before the soft limit,
        else the moves are ranked by WDL alone (``by_dtz`` False)."""
        if self.tablebase is None or chess.popcount(board.occupied) > self.tb_limit or board.castling_rights:
            return None, None
        from chess import syzygy

        fits = fits if fits is not None else _always
        legal = list(board.legal_moves)
        by_wdl: list[tuple[int, chess.Move]] = []
        slowest = 0.0
        try:
            for move in legal:
                if not fits(slowest, True):
                    break
                started = time.perf_counter()
                by_wdl.append((-self._probe_after(board, move), move))
                slowest = max(slowest, (time.perf_counter() - started) * 1000.0)
            if not by_wdl:
                return None, None
            best = max(wdl for wdl, _ in by_wdl)
            keep = [move for wdl, move in by_wdl if wdl == best]
            probes, unprobed = len(by_wdl), len(legal) - len(by_wdl)
            if best in (-1, 0, 1):
                return TablebaseRoot(tuple(keep), best, 0, probes, unprobed=unprobed), None
            ranked = self._rank_by_dtz(board, keep, fits, DTZ_COST_GUESS * slowest)
        except syzygy.MissingTableError:
            return None, None
        except _TableFailure as failure:
            return None, self._broken(failure)
        if ranked is None:  # DTZ did not fit the clock: every move keeping the result stays
            return TablebaseRoot(tuple(keep), best, 0, probes, by_dtz=False, unprobed=unprobed), None
        probes += len(ranked)
        best = max(wdl for wdl, _, _ in ranked)
        if best == 1:  # every win is spoiled by the fifty-move rule, as are the cursed ones
            spoiled = [move for wdl, _, move in ranked if wdl == 1] + [move for wdl, move in by_wdl if wdl == 1]
            return TablebaseRoot(tuple(spoiled), 1, 0, probes, unprobed=unprobed), None
        candidates = [(plies, move) for wdl, plies, move in ranked if wdl == best]
        if best == -1:
            return TablebaseRoot(tuple(move for _, move in candidates), -1, 0, probes, unprobed=unprobed), None
        target = min(plies for plies, _ in candidates) if best > 0 else max(plies for plies, _ in candidates)
        moves = tuple(move for plies, move in candidates if plies == target)
        return TablebaseRoot(moves, best, target, probes, unprobed=unprobed), None

    def _rank_by_dtz(
        self, board: chess.Board, moves: list[chess.Move], fits: Callable[[float, bool], bool], guess: float
    ) -> list[tuple[int, int, chess.Move]] | None:
        """(wdl, plies to zeroing, move) of each of *moves* from its DTZ, counting the
        fifty-move clock; None when the next probe would not end before the soft
        limit (*guess*: the cost of a probe until one has been timed)."""
        ranked: list[tuple[int, int, chess.Move]] = []
        slowest = 0.0
        for move in moves:
            if not fits(slowest if ranked else guess, False):
                return None
            started = time.perf_counter()
            dtz_after = self._probe_after(board, move, dtz=True)
            slowest = max(slowest, (time.perf_counter() - started) * 1000.0)
            # dtz_after: the opponent's plies to zeroing, negative when they lose.
            zeroing = board.is_zeroing(move)
            plies = 1 if zeroing else abs(dtz_after) + 1
            clock = 0 if zeroing else board.halfmove_clock + 1
            if dtz_after < 0:
                wdl = 2 if clock + abs(dtz_after) <= 100 else 1
            elif dtz_after > 0:
                wdl = -2 if clock + dtz_after <= 100 else -1
            else:
                wdl = 0
            ranked.append((wdl, plies, move))
        return ranked


class _TableFailure(Exception):
    """A table file failed while probed: its material (KQvK) and the error."""

    def __init__(self, name: str, error: Exception) -> None:
        super().__init__(name, error)
        self.name = name
        self.error = error


def _always(ms: float, hard: bool) -> bool:
    return True


def _leave_out(tablebase: chess.syzygy.Tablebase, name: str) -> None:
    """Forget the tables (WDL and DTZ, either colour) of the material *name* (KQvK),
    by the names python-chess registered them under (a damaged table's own idea of its
    name may be garbled by its header)."""
    for tables in (tablebase.wdl, tablebase.dtz):
        for key in (name, _mirror(name)):
            table = tables.pop(key, None)
            if table is not None:
                table.close()


def _leave_out_damaged(tablebase: chess.syzygy.Tablebase) -> list[str]:
    """Check every table file's size and magic number as python-chess checks them
    when it first probes the table (without reading further), leave out the tables
    that fail, and say which files and why."""
    problems = []
    for tables, magic, pawnless in (
        (tablebase.wdl, chess.Board.tbw_magic, chess.Board.pawnless_tbw_magic),
        (tablebase.dtz, chess.Board.tbz_magic, chess.Board.pawnless_tbz_magic),
    ):
        for table in {id(table): table for table in tables.values()}.values():
            try:
                table.init_mmap()
                table.check_magic(magic, pawnless)
            except (OSError, ValueError) as err:
                problems.append(f"{os.path.basename(table.path)} left out ({err})")
                for key in [key for key, other in tables.items() if other is table]:
                    del tables[key]
            finally:
                table.close()  # mapped again when first probed
    return problems
