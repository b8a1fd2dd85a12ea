"""The label files: one record a position (what ``tune.py label`` writes), and the
packed form that keeps the expensive labels in the repository (``tune.py pack``).

**Records** (version 1), little-endian: an 8-byte magic ``BACOLBL1``, then records of
:data:`RECORD_BYTES` bytes each:

* 32 bytes: the 64 squares, a1 first, two to a byte (low nibble first), each 0 for
  empty or ``piece_type + 8 * (colour is black)`` (1-6 White, 9-14 Black);
* 1 byte: bit 0 White to move, bits 1-4 castling rights K, Q, k, q;
* 1 byte: the en passant file plus one when a capture is possible there, else 0;
* 2 bytes, signed: the score in centipawns, the side to move's view;
* 1 byte: the game's result for White: 0 loss, 1 draw, 2 win; :data:`NO_RESULT` for
  a position off the game's line (a static label's child), which has none.

**Packed** (version 1): the same records, as the games they came from, as
Stockfish's binpack keeps its data. A label run writes a game's kept positions in
the game's order, a few plies apart; so a *chain* holds one position in full and
then, for each next position of the same game, the moves that lead to it and its
score. A move is one byte, its index among the position's legal moves in the
canonical order (:func:`canonical_moves`: by from-square, to-square, then
promotion piece, python-chess's numbering), so that any implementation of the
rules reads the file. About 4 bytes a position against 37. The packer finds the moves
between two records by a bounded search (:func:`find_path`); where it finds none
(a new game, a position off the game's line, a long forced sequence) a new chain
begins. Little-endian:

* 8 bytes magic ``BACOPAK1``; header ``<HII``: version (1), chains, positions;
* a uint32 length then that much UTF-8 JSON: where the records came from (the label
  run's state: seed, nodes, Stockfish, and the SHA-256 of the records, which equals
  the plain file's :func:`records_sha256`);
* the chains, each: the first position's 34 bytes (a record without score and
  result), its result byte, a uint16 count of entries, then the entries: a byte
  ``g`` (the plies from the chain's last position, 0 for the first), ``g`` move
  bytes, and the new position's score (int16); every entry is a record, with the
  chain's result;
* a uint32 CRC-32 of everything before it.

Reading a packed file gives back the plain file's records byte for byte (the
packer checks it before it writes), so the trainer, check-eval and the Texel set
read either kind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess

__all__ = [
    "MAGIC", "PACKED_MAGIC", "RECORD_BYTES", "NO_RESULT", "Record", "encode", "decode",
    "count_labels", "read_labels", "record_bytes", "run_state", "records_sha256", "is_packed",
    "canonical_moves", "find_path", "pack", "pack_file", "unpack", "packed_info", "PackError",
]

MAGIC = b"BACOLBL1"
PACKED_MAGIC = b"BACOPAK1"
PACKED_VERSION = 1
_RECORD = struct.Struct("<32sBBhB")
RECORD_BYTES = _RECORD.size
#: A record's position: the squares, the flags, the en passant byte.
_POSITION_BYTES = 34
#: The result byte of a position that has no game result of its own.
NO_RESULT = 3
_CASTLING = (chess.BB_H1, chess.BB_A1, chess.BB_H8, chess.BB_A8)
_HEADER = struct.Struct("<HII")
_CHAIN = struct.Struct("<BH")
#: The packer's search for the moves between two records: at most this many plies,
#: and this many moves tried (beyond: a new chain).
PATH_PLIES = 8
PATH_NODES = 2000
#: Entries of one chain (its count is a uint16).
_MAX_ENTRIES = 0xFFFF


class PackError(ValueError):
    """A packed file that cannot be read (truncated, corrupt, another version)."""


@dataclass(frozen=True)
class Record:
    board: chess.Board
    score: int  # centipawns, side to move's view
    result: float | None  # for White: 1, 0.5, 0; None: off the game's line, no result


def encode(board: chess.Board, score: int, result: float | None) -> bytes:
    """One record (see the module's description)."""
    nibbles = bytearray(32)
    for square, piece in board.piece_map().items():
        code = piece.piece_type + (0 if piece.color else 8)
        nibbles[square >> 1] |= code << (4 * (square & 1))
    flags = int(board.turn)
    rights = 0 if board.chess960 else board.clean_castling_rights()  # a Chess960 position's are not stored
    for bit, corner in enumerate(_CASTLING):
        if rights & corner:
            flags |= 2 << bit
    ep = board.ep_square if board.has_legal_en_passant() else None
    score = max(-32000, min(32000, score))
    return _RECORD.pack(bytes(nibbles), flags, 0 if ep is None else (ep & 7) + 1, score,
                        NO_RESULT if result is None else int(result * 2))


def decode(data: bytes) -> Record:
    """The inverse of :func:`encode`."""
    nibbles, flags, ep_file, score, result = _RECORD.unpack(data)
    board = chess.Board(None)
    for square in range(64):
        code = nibbles[square >> 1] >> (4 * (square & 1)) & 15
        if code:
            board.set_piece_at(square, chess.Piece(code & 7, not code & 8))
    board.turn = bool(flags & 1)
    board.castling_rights = 0
    for bit, corner in enumerate(_CASTLING):
        if flags & (2 << bit):
            board.castling_rights |= corner
    if ep_file:
        board.ep_square = (ep_file - 1) + (40 if board.turn else 16)
    return Record(board, score, None if result == NO_RESULT else result / 2)


def is_packed(path: str | Path) -> bool:
    """Whether the file at *path* is a packed label file."""
    with open(path, "rb") as handle:
        return handle.read(len(PACKED_MAGIC)) == PACKED_MAGIC


def record_bytes(path: str | Path) -> bytes:
    """The records of the label file at *path*, either kind, as one string of
    :data:`RECORD_BYTES`-byte records (a plain file's last record cut short by a
    stopped run is left out). Raises ValueError for a file of another kind."""
    if is_packed(path):
        return _unpacked(path)
    data = Path(path).read_bytes()
    if data[: len(MAGIC)] != MAGIC:
        raise ValueError(f"{path} is not a label file")
    body = data[len(MAGIC):]
    return body[: len(body) - len(body) % RECORD_BYTES]


#: The last packed file unpacked, by path, size and modification time: a training
#: run reads a file's records more than once (its hash, its arrays).
_UNPACKED: dict[tuple[str, int, int], bytes] = {}


def _unpacked(path: str | Path) -> bytes:
    stat = Path(path).stat()
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _UNPACKED:
        _UNPACKED.clear()
        _UNPACKED[key] = b"".join(unpack(Path(path).read_bytes())[1])
    return _UNPACKED[key]


def run_state(path: str | Path) -> dict[str, Any]:
    """The state of the label run that made the file at *path*: a packed file's
    header metadata, else the run's state file ``PATH.json``, else empty."""
    if is_packed(path):
        return dict(packed_info(path)["meta"])
    state_path = Path(str(path) + ".json")
    return dict(json.loads(state_path.read_text())) if state_path.is_file() else {}


def count_labels(path: str | Path) -> int:
    """The number of records in a label file (a plain one's from its size, a packed
    one's from its header)."""
    if is_packed(path):
        return packed_info(path)["positions"]
    return (Path(path).stat().st_size - len(MAGIC)) // RECORD_BYTES


def read_labels(path: str | Path, start: int = 0) -> Iterator[Record]:
    """The records of a label file (either kind), from record *start* on (a plain
    file's earlier ones skipped unread). Raises ValueError for a file of another kind."""
    if is_packed(path):
        data = _unpacked(path)
        for at in range(start * RECORD_BYTES, len(data), RECORD_BYTES):
            yield decode(data[at: at + RECORD_BYTES])
        return
    with open(path, "rb") as handle:
        if handle.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{path} is not a label file")
        handle.seek(len(MAGIC) + start * RECORD_BYTES)
        while chunk := handle.read(RECORD_BYTES):
            if len(chunk) != RECORD_BYTES:
                raise ValueError(f"{path} ends in the middle of a record")
            yield decode(chunk)


def records_sha256(records: Iterable[bytes]) -> str:
    """SHA-256 of a plain label file holding *records* (its magic, then the records):
    the same for a file and its packed form."""
    digest = hashlib.sha256(MAGIC)
    for record in records:
        digest.update(record)
    return digest.hexdigest()


# ----------------------------------------------------------------------- packing

def canonical_moves(board: chess.Board) -> list[chess.Move]:
    """*board*'s legal moves in the packed format's order: by from-square, then
    to-square (python-chess's numbers, a1 = 0; castling as the king's two-square
    move), then promotion piece (none first)."""
    return sorted(board.legal_moves, key=lambda move: (move.from_square, move.to_square, move.promotion or 0))


def _position_of(record: bytes) -> chess.Board:
    return decode(record).board


def _masks(board: chess.Board) -> tuple[int, ...]:
    """The twelve piece masks of *board* (White's pawn to king, then Black's)."""
    return tuple(board.pieces_mask(piece_type, color) for color in (chess.WHITE, chess.BLACK)
                 for piece_type in chess.PIECE_TYPES)


def _needs(board: chess.Board, goal: tuple[int, ...]) -> tuple[tuple[int, int], tuple[int, int]]:
    """For White then Black, the moves each needs at least to reach the piece masks
    *goal*: (the pieces it has to put on their squares, the enemy pieces it has to
    take). A move puts at most one of its side's pieces on its square (two by
    castling, once) and takes at most one enemy piece."""
    masks = _masks(board)
    missing = []
    for side, color in ((0, chess.WHITE), (6, chess.BLACK)):
        count = sum(chess.popcount(goal[side + i] & ~masks[side + i]) for i in range(6))
        if count >= 2 and board.castling_rights & chess.BB_BACKRANKS & board.occupied_co[color]:
            count -= 1
        missing.append(count)
    surplus = [sum(chess.popcount(masks[side + i]) - chess.popcount(goal[side + i]) for i in range(6))
               for side in (0, 6)]
    return (missing[0], surplus[1]), (missing[1], surplus[0])


def _plies_needed(needs: tuple[tuple[int, int], tuple[int, int]], turn: bool, goal_turn: bool) -> int:
    """A lower bound on the plies from a position with *turn* to move and *needs*
    (:func:`_needs`) to the goal with *goal_turn* to move, the sides moving in turn."""
    white, black = (max(need) for need in needs)
    own, other = (white, black) if turn == chess.WHITE else (black, white)
    plies = max(2 * own - 1, 2 * other, 0)
    if (plies % 2 == 1) != (turn != goal_turn):
        plies += 1
    return plies


def _reachable(start: chess.Board, goal: chess.Board) -> bool:
    """False where no line of moves leads from *start* to *goal*: a side that has
    more pieces or pawns there, castling rights regained, or a pawn that no pawn of
    *start* can reach (pawns go forward, a file sideways for each rank only when
    they take)."""
    if goal.castling_rights & ~start.castling_rights:
        return False
    for color in chess.COLORS:
        if chess.popcount(goal.occupied_co[color]) > chess.popcount(start.occupied_co[color]):
            return False
        before, after = start.pieces(chess.PAWN, color), goal.pieces(chess.PAWN, color)
        if len(after) > len(before):
            return False
        forward = 1 if color == chess.WHITE else -1
        for square in after - before:
            if not any(0 < (chess.square_rank(square) - chess.square_rank(origin)) * forward
                       >= abs(chess.square_file(square) - chess.square_file(origin)) for origin in before):
                return False
    return True


def find_path(start: chess.Board, goal: bytes, max_plies: int = PATH_PLIES,
              max_nodes: int = PATH_NODES) -> list[int] | None:
    """The shortest line of legal moves (at most *max_plies*, found within
    *max_nodes* positions) from *start* to the position of the record *goal* (its
    first 34 bytes: the squares, the side to move, the castling rights and en passant
    as a record keeps them), as indices into each position's :func:`canonical_moves`;
    None where none is found. Iterative deepening on :func:`_plies_needed`."""
    target = _position_of(goal + bytes(RECORD_BYTES - _POSITION_BYTES))
    goal_masks, goal_turn = _masks(target), target.turn
    goal_key = goal[:_POSITION_BYTES]
    if not _reachable(start, target):
        return None
    board = start.copy(stack=False)
    nodes = 0
    line: list[int] = []

    def matches() -> bool:
        return _masks(board) == goal_masks and board.turn == goal_turn and \
            encode(board, 0, None)[:_POSITION_BYTES] == goal_key

    failed: set[tuple[Any, int]] = set()  # positions already searched in vain at a depth

    def search(depth: int) -> bool:
        """Whether the goal is *depth* plies away (the line so far in ``line``)."""
        nonlocal nodes
        needs = _needs(board, goal_masks)
        if _plies_needed(needs, board.turn, goal_turn) > depth:
            return False
        if depth == 0:
            return matches()
        key = (board._transposition_key(), depth)
        if key in failed:
            return False
        # A side to move without a move to spare must put a piece on its square
        # (or take one) with this move: the others are not tried.
        place, take = needs[0 if board.turn == chess.WHITE else 1]
        spare = (depth + 1) // 2 - max(place, take)
        color = board.turn
        for index, move in enumerate(canonical_moves(board)):
            if spare == 0 and not board.is_castling(move):
                piece = target.piece_at(move.to_square)
                if place >= take and (piece is None or piece.color != color or piece.piece_type != (
                        move.promotion or board.piece_type_at(move.from_square))):
                    continue
                if take >= place and not board.is_capture(move):
                    continue
            nodes += 1
            if nodes > max_nodes:
                return False
            board.push(move)
            line.append(index)
            if search(depth - 1):
                return True
            line.pop()
            board.pop()
        if nodes <= max_nodes:
            failed.add(key)
        return False

    first = _plies_needed(_needs(board, goal_masks), board.turn, goal_turn)
    for depth in range(first, max_plies + 1, 2):
        if search(depth):
            return line
        if nodes > max_nodes:
            return None
    return None


#: Records packed by one process at a time (a chain ends at a block's end).
PACK_BLOCK = 5000


def _chains(records: list[bytes], max_plies: int = PATH_PLIES, max_nodes: int = PATH_NODES) -> list[bytes]:
    """The packed chains of consecutive *records* (see the module's description)."""
    chains: list[bytes] = []
    current: chess.Board | None = None
    result = -1
    entries: list[bytes] = []
    head = b""

    def close() -> None:
        if entries:
            chains.append(head + _CHAIN.pack(result, len(entries)) + b"".join(entries))

    for record in records:
        path = None
        if current is not None and record[-1] == result and len(entries) < _MAX_ENTRIES:
            path = find_path(current, record[:_POSITION_BYTES], max_plies, max_nodes)
        if path is None:
            close()
            head, result, entries = record[:_POSITION_BYTES], record[-1], []
            current = _position_of(record)
            path = []
        else:
            assert current is not None
            for index in path:
                current.push(canonical_moves(current)[index])
            current = current.copy(stack=False)
        entries.append(bytes([len(path), *path]) + record[_POSITION_BYTES:_POSITION_BYTES + 2])
    close()
    return chains


def pack(records: Iterable[bytes], meta: dict[str, Any], *, workers: int = 1, progress: Any = None) -> bytes:
    """The packed file of the plain *records* (each :data:`RECORD_BYTES` bytes, in
    the label run's order) with *meta* (the run's state) and the records' SHA-256 in
    its header, packed by *workers* processes, :data:`PACK_BLOCK` records at a time.
    Checked: unpacking gives back the same records. *progress*, if given, is called
    with the number of records packed so far."""
    records = list(records)
    blocks = [records[at: at + PACK_BLOCK] for at in range(0, len(records), PACK_BLOCK)]
    chains: list[bytes] = []
    with contextlib.ExitStack() as stack:
        mapped: Iterator[list[bytes]] = map(_chains, blocks)
        if workers > 1:
            import multiprocessing

            mapped = stack.enter_context(multiprocessing.get_context("spawn").Pool(workers)).imap(_chains, blocks)
        for done, block in enumerate(mapped):
            chains.extend(block)
            if progress is not None:
                progress(min(len(records), (done + 1) * PACK_BLOCK))
    info = dict(meta, sha256=records_sha256(records))
    text = json.dumps(info, sort_keys=True).encode()
    body = (PACKED_MAGIC + _HEADER.pack(PACKED_VERSION, len(chains), len(records))
            + struct.pack("<I", len(text)) + text + b"".join(chains))
    packed = body + struct.pack("<I", zlib.crc32(body))
    if unpack(packed)[1] != records:
        raise AssertionError("the packed records differ from the records packed")
    return packed


def pack_file(source: str | Path, out: str | Path, *, workers: int = 1, progress: Any = None) -> dict[str, Any]:
    """Pack the plain label file *source* into *out*: its finished records (as many
    as its run's state file ``SOURCE.json`` counts, when there is one) with that
    state as the metadata. Returns the figures: positions, chains, bytes, bytes a
    position."""
    source = Path(source)
    meta = run_state(source)
    data = record_bytes(source)
    count = len(data) // RECORD_BYTES
    if "positions" in meta:
        count = min(count, int(meta["positions"]))
    meta.update(positions=count, source=source.name)
    records = [data[at * RECORD_BYTES: (at + 1) * RECORD_BYTES] for at in range(count)]
    packed = pack(records, meta, workers=workers, progress=progress)
    Path(out).write_bytes(packed)
    chains = _HEADER.unpack_from(packed, len(PACKED_MAGIC))[1]
    return {"positions": count, "chains": chains, "bytes": len(packed), "per_position": len(packed) / max(count, 1)}


def _header(data: bytes) -> tuple[int, int, dict[str, Any], int]:
    """A packed file's chains, positions, metadata and where its chains begin."""
    if data[: len(PACKED_MAGIC)] != PACKED_MAGIC:
        raise PackError("not a packed label file")
    at = len(PACKED_MAGIC)
    try:
        version, chains, positions = _HEADER.unpack_from(data, at)
        at += _HEADER.size
        (length,) = struct.unpack_from("<I", data, at)
        meta = json.loads(data[at + 4: at + 4 + length].decode())
    except (struct.error, UnicodeDecodeError, ValueError) as err:
        raise PackError(f"a packed label file's header is cut short or corrupt ({err})") from None
    if version != PACKED_VERSION:
        raise PackError(f"packed label file version {version}; this reads version {PACKED_VERSION}")
    return chains, positions, meta, at + 4 + length


def packed_info(path: str | Path) -> dict[str, Any]:
    """A packed file's header: ``chains``, ``positions`` and ``meta`` (read without
    the chains)."""
    with open(path, "rb") as handle:
        start = handle.read(len(PACKED_MAGIC) + _HEADER.size + 4)
        length = struct.unpack_from("<I", start, len(start) - 4)[0] if len(start) >= 4 else 0
        chains, positions, meta, _ = _header(start + handle.read(length))
    return {"chains": chains, "positions": positions, "meta": meta}


def unpack(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """The metadata and the plain records of the packed file *data*. Raises
    :class:`PackError` when the file is cut short, corrupt or of another version."""
    chains, positions, meta, at = _header(data)
    if len(data) < at + 4 or zlib.crc32(data[:-4]) != struct.unpack_from("<I", data, len(data) - 4)[0]:
        raise PackError("a packed label file whose checksum does not match (cut short or corrupt)")
    end = len(data) - 4
    records: list[bytes] = []
    try:
        for _ in range(chains):
            head = data[at: at + _POSITION_BYTES]
            result, count = _CHAIN.unpack_from(data, at + _POSITION_BYTES)
            at += _POSITION_BYTES + _CHAIN.size
            board = _position_of(head + bytes(RECORD_BYTES - _POSITION_BYTES))
            key = head
            for _ in range(count):
                plies = data[at]
                for index in data[at + 1: at + 1 + plies]:
                    board.push(canonical_moves(board)[index])
                at += 1 + plies
                if plies:
                    board = board.copy(stack=False)
                    key = encode(board, 0, None)[:_POSITION_BYTES]
                records.append(key + data[at: at + 2] + bytes([result]))
                at += 2
    except (IndexError, struct.error) as err:
        raise PackError(f"a packed label file's chains are cut short or corrupt ({err})") from None
    if at != end or len(records) != positions:
        raise PackError(f"a packed label file holds {len(records)} positions where its header says {positions}")
    return meta, records
