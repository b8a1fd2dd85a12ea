"""The ant-colony memory of moves: pheromone trails.

A trail is a level in ``[0, max_level]`` on a move from a position (the position's
Zobrist key and the move). After each iteration of a search, the best line lays
pheromone on its moves (``deposit`` on the first, ``deposit_decay`` times less on each
next one); every search evaporates every trail by the factor ``evaporation``; trails
that fall below ``min_level`` count as forgotten. The search reads them:

* move ordering: marked quiet moves come after the killers and the counter-move,
  strongest first (:mod:`blitzaco.movepick`);
* evaluation: a bonus of ``eval_weight`` per unit of the strongest trail leaving a
  position, for the side to move (its moves there sit on a marked trail);
* the root may draw its move by roulette wheel over the trails among near-equal
  moves, when ``variety`` asks for it (:mod:`blitzaco.engine`).

The memory has two parts. The *long-term* part is loaded from a file (by default the
bundled ``assets/pheromone.bin``, trained by ``blitzaco colony``) and survives
``ucinewgame``; the *per-game* part holds what this game's searches laid and is
cleared by ``ucinewgame``. With learning on, the per-game part is added to the
long-term part at the end of a game and the file is saved, so that learning carries
across games.

Evaporation is lazy: per-game levels are stored divided by a global factor that each
search multiplies by ``evaporation``, so a search pays O(1) for it, not a pass over
every trail.

File format (little-endian), ``.bin`` by convention::

    header  8 bytes  magic b"BACOPHER"
            4 bytes  uint32 format version (1)
            4 bytes  uint32 number of records N
    N records of 16 bytes, sorted by key then move:
            8 bytes  uint64 position key (Polyglot Zobrist hash; see blitzaco.board.compute_key)
            2 bytes  uint16 move: from | to << 6 | promotion << 12 (squares a1=0..h8=63,
                     promotion piece type 2-5, or 0)
            2 bytes  zero
            4 bytes  float32 level, finite, in [0, 1000]

A file that is not exactly this (wrong magic or version, a size that does not match
N, an unsorted or duplicate record, a bad move or level) is refused whole.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import random
import stat
import struct
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import chess

from blitzaco.board import compute_key
from blitzaco.bundled import bundled_file, open_regular, read_user_file
from blitzaco.config import PheromoneConfig
from blitzaco.moves import encode_move
from blitzaco.system import lock_exclusive, rename_replaces_open_files

__all__ = [
    "Trails", "PheromoneFileError", "bundled_memory", "read_memory", "parse_memory", "write_memory", "check_writable",
    "MAGIC", "VERSION",
]

MAGIC = b"BACOPHER"
VERSION = 1
_HEADER = struct.Struct("<8sII")
_RECORD = struct.Struct("<QHHf")
#: Largest memory file read: 4 million records (the bundled one has about 5,000).
MAX_MEMORY_BYTES = _HEADER.size + 4_000_000 * _RECORD.size
#: Largest level a file may hold.
FILE_MAX_LEVEL = 1000.0
#: The global evaporation factor is folded into the stored levels below this.
_RENORMALISE_BELOW = 1e-150

Memory = dict[int, dict[int, float]]


class PheromoneFileError(ValueError):
    """A pheromone file that cannot be used; the message says why."""


def bundled_memory() -> Path | None:
    """The memory shipped with the engine (``assets/pheromone.bin``), if installed."""
    return bundled_file("pheromone.bin")


def _valid_move(code: int) -> bool:
    frm, to, promotion = code & 63, code >> 6 & 63, code >> 12
    return frm != to and promotion in (0, 2, 3, 4, 5) and code < 1 << 15


def read_memory(path: str | Path) -> Memory:
    """Read a pheromone file. Raises :class:`PheromoneFileError` (or OSError) for a
    file that is not exactly in the documented format."""
    return parse_memory(read_user_file(path, MAX_MEMORY_BYTES))


def parse_memory(data: bytes) -> Memory:
    """The memory in the bytes of a pheromone file; raises :class:`PheromoneFileError`
    when they are not exactly in the documented format."""
    if len(data) < _HEADER.size:
        raise PheromoneFileError("too short for the header")
    magic, version, count = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise PheromoneFileError("not a pheromone file (bad magic)")
    if version != VERSION:
        raise PheromoneFileError(f"format version {version}, expected {VERSION}")
    if len(data) != _HEADER.size + count * _RECORD.size:
        raise PheromoneFileError(f"size {len(data)} does not match {count} records")
    memory: Memory = {}
    previous = (-1, -1)
    for key, code, reserved, level in _RECORD.iter_unpack(data[_HEADER.size :]):
        if (key, code) <= previous:
            raise PheromoneFileError("records not sorted, or duplicated")
        previous = (key, code)
        if reserved or not _valid_move(code):
            raise PheromoneFileError(f"bad move field {code:#06x}")
        if not (math.isfinite(level) and 0.0 <= level <= FILE_MAX_LEVEL):
            raise PheromoneFileError(f"bad level {level!r}")
        memory.setdefault(key, {})[code] = level
    return memory


def check_writable(path: str | Path) -> None:
    """Raise OSError when the file at *path* (if it exists) is one the user made
    read-only: no write permission bit at all (so that it holds when the engine runs
    as root, who may write anyway), or none this process has."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK):
        raise OSError(errno.EACCES, "read-only", str(path))


def _encode(memory: Memory) -> tuple[bytes, int]:
    records = sorted(
        (key, code, min(level, FILE_MAX_LEVEL))
        for key, row in memory.items()
        for code, level in row.items()
        if level > 0.0
    )
    body = b"".join(_RECORD.pack(key, code, 0, level) for key, code, level in records)
    return _HEADER.pack(MAGIC, VERSION, len(records)) + body, len(records)


def write_memory(path: str | Path, memory: Memory) -> int:
    """Write *memory* (levels above zero only) atomically; returns the record count.
    A symbolic link has its target written (the link stays); the file keeps its
    permissions; a read-only file is refused (:func:`check_writable`)."""
    path = Path(os.path.realpath(path))
    check_writable(path)
    data, count = _encode(memory)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o644  # data to share (mkstemp makes its file private)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        os.chmod(temporary, mode)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())  # on disk before it takes the old file's name
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[int]:
    """Hold an exclusive lock on the memory file *path* itself (created empty when
    missing, and removed again if it is still empty when the lock is let go): one
    process at a time reads, merges and writes it, and nothing is left beside it.
    Yields the locked file's descriptor. POSIX: ``flock``, and the lock is taken
    again when another process replaced the file meanwhile (a save renames a new
    file over it); Windows: ``msvcrt`` (the file is then written in place). The lock
    goes with the process if it dies."""
    while True:
        created = False
        try:
            handle = open_regular(path, os.O_RDWR)
        except FileNotFoundError:
            try:
                handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
            except FileExistsError:
                continue  # another process made it first: lock that one
            created = True
        try:
            lock_exclusive(handle)
            if not rename_replaces_open_files() or _names(path, handle):
                break  # (Windows: a save writes in place, so the file is never replaced)
        except BaseException:
            os.close(handle)
            raise
        os.close(handle)  # replaced while waiting: lock the file that has the name now
    try:
        yield handle
    finally:
        if created and _names(path, handle) and os.fstat(handle).st_size == 0:
            Path(path).unlink()  # made here and never written: leave nothing behind
        os.close(handle)  # closing releases the lock


def _names(path: Path, handle: int) -> bool:
    """Whether *path* still names the file open as *handle* (not replaced by a save)."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _save_locked(path: Path, handle: int, memory: Memory) -> None:
    """Write *memory* to the file *path* whose lock *handle* holds: atomically by a
    rename on POSIX; in place through the handle on Windows, where a file open
    elsewhere cannot be replaced."""
    if rename_replaces_open_files():
        write_memory(path, memory)
        return
    data, _ = _encode(memory)
    os.lseek(handle, 0, os.SEEK_SET)
    os.ftruncate(handle, 0)
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view) :]
    os.fsync(handle)


class Trails:
    """The pheromone memory (long-term and per-game parts). Not thread-safe: the
    engine's one search at a time uses it."""

    def __init__(self, config: PheromoneConfig) -> None:
        self.config = config
        self._long: Memory = {}
        self._pending: Path | None = None  # a file to read when the memory is first used
        self.message: str | None = None  # why the last file could not be used
        self._game: Memory = {}  # levels divided by self._factor
        self._factor = 1.0
        self.path: Path | None = None  # the file the long-term part came from
        self.rng = random.Random(config.seed or None)

    # ------------------------------------------------------------------- reading

    def row(self, key: int) -> dict[int, float] | None:
        """The living trails leaving the position *key*: move code -> level."""
        game = self._game.get(key)
        long = self.long.get(key)
        if game is None and long is None:
            return None
        floor = self.config.min_level
        factor = self._factor
        merged: dict[int, float] = {}
        if long is not None:
            merged.update(long)
        if game is not None:
            cap = self.config.max_level
            for code, stored in game.items():
                level = merged.get(code, 0.0) + stored * factor
                merged[code] = level if level < cap else cap
        living = {code: level for code, level in merged.items() if level >= floor}
        return living or None

    def level(self, key: int, code: int) -> float:
        """The trail on move *code* from the position *key* (0 when there is none)."""
        row = self.row(key)
        return row.get(code, 0.0) if row is not None else 0.0

    def strongest(self, key: int) -> float:
        """The strongest trail leaving the position *key* (0 when there is none)."""
        row = self.row(key)
        return max(row.values()) if row else 0.0

    def __len__(self) -> int:
        """Trails held in both parts (forgotten ones included until cleared)."""
        return sum(len(row) for row in self.long.values()) + sum(len(row) for row in self._game.values())

    # ------------------------------------------------------------------- writing

    def evaporate(self) -> None:
        """One search's evaporation of the per-game trails (O(1))."""
        self._factor *= self.config.evaporation
        if self._factor < _RENORMALISE_BELOW:
            self._fold()

    def deposit(self, key: int, code: int, amount: float) -> None:
        """Add *amount* (may be negative) to the per-game trail, kept in [0, max_level]."""
        if self._factor == 0.0:  # evaporation 0: nothing is remembered past a search
            self._factor = 1.0
            self._game.clear()
        row = self._game.setdefault(key, {})
        level = row.get(code, 0.0) * self._factor + amount
        level = min(max(level, 0.0), self.config.max_level)
        row[code] = level / self._factor

    def deposit_line(self, board: chess.Board, line: Sequence[chess.Move]) -> None:
        """Lay pheromone along *line* played from *board*: ``deposit`` on the first
        move, times ``deposit_decay`` on each next one."""
        amount = self.config.deposit
        if not line or amount <= 0.0:
            return
        position = board.copy(stack=False)
        for move in line:
            self.deposit(compute_key(position), encode_move(move), amount)
            position.push(move)
            amount *= self.config.deposit_decay
            if amount < self.config.min_level * 0.01:
                break

    def deposit_long(self, key: int, code: int, amount: float, cap: float | None = None) -> None:
        """Add *amount* to the long-term trail, kept in [0, *cap* or max_level]."""
        cap = self.config.max_level if cap is None else cap
        row = self.long.setdefault(key, {})
        level = min(max(row.get(code, 0.0) + amount, 0.0), cap)
        if level > 0.0:
            row[code] = level
        else:
            row.pop(code, None)
            if not row:
                del self.long[key]

    def evaporate_long(self) -> None:
        """Evaporate the long-term trails once (colony training), forgetting the weak."""
        rho, floor = self.config.evaporation, self.config.min_level
        for key in list(self.long):
            row = {code: level * rho for code, level in self.long[key].items() if level * rho >= floor}
            if row:
                self.long[key] = row
            else:
                del self.long[key]

    def _fold(self) -> None:
        factor, floor = self._factor, self.config.min_level
        game: Memory = {}
        for key, row in self._game.items():
            kept = {code: stored * factor for code, stored in row.items() if stored * factor >= floor}
            if kept:
                game[key] = kept
        self._game = game
        self._factor = 1.0

    # ---------------------------------------------------------------- lifecycle

    def new_game(self) -> None:
        """Forget the per-game trails; the long-term memory stays."""
        self._game.clear()
        self._factor = 1.0

    def clear(self) -> None:
        """Forget everything, long-term memory included (bench)."""
        self.new_game()
        self.long = {}

    def _lessons(self) -> list[tuple[int, int, float]]:
        """What this game teaches the long-term memory: (key, code, amount)."""
        rate, floor = self.config.learning_rate, self.config.min_level
        factor = self._factor
        return [
            (key, code, rate * stored * factor)
            for key, row in self._game.items()
            for code, stored in row.items()
            if stored * factor >= floor
        ]

    def learn_into(self, path: str | Path) -> str | None:
        """Add this game's trails to the memory file at *path* and forget them. The
        file is read again and written under a lock on the file itself, so that
        engines sharing one file (a match at concurrency 2) keep each other's
        learning: the lessons go onto what is on disk now, not onto what was loaded
        when the game began. A symbolic link has its target learnt into. A file that
        exists and cannot be read, and one the user made read-only, are never
        replaced (they are not this engine's to change): nothing is learnt and the
        message says why. Nothing is left beside the file. Returns a message for an
        ``info string`` when something went wrong."""
        path = Path(path)
        lessons = self._lessons()
        self.new_game()
        if not lessons:
            return None
        target = Path(os.path.realpath(path))
        try:
            check_writable(target)
        except OSError:
            return f"pheromone learning: {path} is read-only; left as it is, nothing learnt"
        try:
            with _locked(target) as handle:
                try:
                    disk = read_memory(target) if os.fstat(handle).st_size else {}  # empty: made by the lock
                except (OSError, PheromoneFileError) as err:
                    return f"pheromone learning: {path} cannot be read ({err}); left as it is, nothing learnt"
                self.long = disk
                for key, code, amount in lessons:
                    self.deposit_long(key, code, amount)
                _save_locked(target, handle, self.long)
        except OSError as err:
            return f"pheromone file {path}: cannot save ({err.strerror or err})"
        self.path = path
        return None

    @property
    def long(self) -> Memory:
        """The long-term memory: key -> move code -> level."""
        if self._pending is not None:
            path, self._pending = self._pending, None
            self.load(path)
        return self._long

    @long.setter
    def long(self, memory: Memory) -> None:
        self._pending = None
        self._long = memory

    def load_later(self, path: str | Path | None) -> None:
        """Read *path* when the memory is first used (the bundled memory at start-up:
        ``uciok`` need not wait for it)."""
        self.long = {}
        self.path = None
        self.message = None
        self._pending = Path(path) if path is not None else None

    def load(self, path: str | Path | None) -> str | None:
        """Replace the long-term memory by the file at *path* (None: none). Returns a
        message for an ``info string`` when the file cannot be used (also kept in
        :attr:`message`); the memory is then empty."""
        self.long = {}
        self.path = None
        self.message = None
        if path is None:
            return None
        try:
            self.long = read_memory(path)
        except OSError as err:
            self.message = f"pheromone file {path}: {err.strerror or err}; playing without it"
        except PheromoneFileError as err:
            self.message = f"pheromone file {path} is corrupt ({err}); playing without it"
        else:
            self.path = Path(path)
        return self.message

    def save(self, path: str | Path | None = None) -> str | None:
        """Write the long-term memory to *path* (default: the file it came from).
        Returns a message on failure."""
        target = Path(path) if path is not None else self.path
        if target is None:
            return "pheromone memory: no file to save to"
        try:
            write_memory(target, self.long)
        except OSError as err:
            return f"pheromone file {target}: cannot save ({err.strerror or err})"
        self.path = target
        return None

    # ------------------------------------------------------------------ roulette

    def roulette(self, key: int, codes: Iterable[int]) -> int:
        """Draw one of the move *codes* from the position *key* with probability
        proportional to its trail plus ``variety_floor``."""
        codes = list(codes)
        row = self.row(key) or {}
        floor = self.config.variety_floor
        weights = [row.get(code, 0.0) + floor for code in codes]
        return self.rng.choices(codes, weights=weights)[0]
