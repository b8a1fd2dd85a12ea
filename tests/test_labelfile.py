"""The label files: the packed form gives back the plain records byte for byte, is
compact, is checked (corruption, truncation, another version), and every reader
(the trainer's arrays, the records, the training record's hash and run) reads it
as it reads the plain file."""

from __future__ import annotations

import json
import random
import shutil
import struct
from pathlib import Path

import chess
import numpy as np
import pytest

from blitzaco.tools.tune import labelfile
from blitzaco.tools.tune.labelfile import (
    MAGIC,
    RECORD_BYTES,
    PackError,
    canonical_moves,
    count_labels,
    encode,
    find_path,
    pack,
    pack_file,
    packed_info,
    read_labels,
    record_bytes,
    unpack,
)

ROOT = Path(__file__).resolve().parent.parent
GAMES = ROOT / "tests" / "data" / "labels_s3_n300.bin"  # 148 search labels of 3 games, in order


def _records(path: Path) -> list[bytes]:
    data = record_bytes(path)
    return [data[at: at + RECORD_BYTES] for at in range(0, len(data), RECORD_BYTES)]


@pytest.fixture(scope="module")
def packed_games() -> bytes:
    """The recorded games packed once (with their run's state)."""
    meta = json.loads((GAMES.parent / (GAMES.name + ".json")).read_text())
    return pack(_records(GAMES), meta)


def _random_game_records(seed: int, keep: float) -> list[bytes]:
    """Records of a random game's positions, each kept with probability *keep*
    (gaps of several plies, castling, en passant and promotions included)."""
    rng = random.Random(seed)
    board = chess.Board()
    records = []
    while not board.is_game_over() and board.ply() < 300:
        if rng.random() < keep:
            records.append(encode(board, rng.randint(-3000, 3000), 0.5))
        moves = list(board.legal_moves)
        # Prefer pawn pushes and castling now and then, so that promotions and
        # en passant squares occur.
        special = [m for m in moves if board.is_castling(m) or board.piece_type_at(m.from_square) == chess.PAWN]
        board.push(rng.choice(special if special and rng.random() < 0.4 else moves))
    return records


def test_canonical_order_is_from_to_promotion() -> None:
    board = chess.Board("8/1P4k1/8/8/8/8/8/R3K2R w KQ - 0 1")
    moves = canonical_moves(board)
    assert sorted(moves, key=lambda m: (m.from_square, m.to_square, m.promotion or 0)) == moves
    assert set(moves) == set(board.legal_moves)
    promotions = [m.promotion for m in moves if m.from_square == chess.B7]
    assert promotions == [chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN]


def test_find_path_finds_the_moves_and_refuses_the_unreachable() -> None:
    board = chess.Board()
    line = [chess.Move.from_uci(m) for m in ("e2e4", "c7c5", "g1f3", "d7d6", "d2d4")]
    goal = board.copy()
    for move in line:
        goal.push(move)
    path = find_path(board, encode(goal, 0, None)[:34])
    assert path is not None and len(path) == 5
    replay = board.copy()
    for index in path:
        replay.push(canonical_moves(replay)[index])
    assert encode(replay, 0, None) == encode(goal, 0, None)
    # Backwards: pawns do not go back, pieces do not come back.
    assert find_path(goal, encode(board, 0, None)[:34]) is None
    taken = chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    assert find_path(taken, encode(chess.Board(), 0, None)[:34]) is None
    # Castling rights lost are not regained.
    no_rights = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1")
    assert find_path(no_rights, encode(chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"), 0, None)[:34]) is None


def test_the_recorded_games_pack_small_and_back(packed_games: bytes) -> None:
    records = _records(GAMES)
    assert len(records) == 148
    packed = packed_games
    info_meta, again = unpack(packed)
    assert again == records
    assert info_meta["seed"] == 3 and info_meta["sha256"] == labelfile.records_sha256(records)
    header = len(MAGIC) + 10 + 4 + struct.unpack_from("<I", packed, len(MAGIC) + 10)[0]
    chains_bytes = len(packed) - header - 4
    # 7.0 bytes a position here: 3 games of 49 positions each, each game's first
    # position whole (37 bytes); the 575,852 labels of seed 23 pack to about 5.5.
    assert chains_bytes / len(records) <= 7.5
    chains = struct.unpack_from("<HII", packed, len(MAGIC))[1]
    assert 3 <= chains <= 12  # a chain a game, and a few long forced sequences


@pytest.mark.parametrize("seed", range(6))
def test_random_games_round_trip(seed: int) -> None:
    """Castling, en passant, promotions, underpromotions, gaps of up to several plies."""
    records = _random_game_records(seed, keep=0.5)
    assert len(records) > 20
    _, again = unpack(pack(records, {}))
    assert again == records


def test_blocks_and_workers_give_the_same_file(monkeypatch: pytest.MonkeyPatch) -> None:
    records = _random_game_records(11, keep=0.7)
    monkeypatch.setattr(labelfile, "PACK_BLOCK", 25)
    one = pack(records, {})
    assert unpack(one)[1] == records
    assert struct.unpack_from("<HII", one, len(MAGIC))[1] >= len(records) // 25  # a chain ends at a block's end


def test_packing_in_two_processes_gives_the_same_bytes(packed_games: bytes) -> None:
    meta = json.loads((GAMES.parent / (GAMES.name + ".json")).read_text())
    assert pack(_records(GAMES), meta, workers=2) == packed_games


def test_corrupt_truncated_or_newer_files_are_refused(packed_games: bytes) -> None:
    packed = bytearray(packed_games)
    for at in (len(packed) // 2, len(packed) - 10):
        damaged = bytearray(packed)
        damaged[at] ^= 0x40
        with pytest.raises(PackError):
            unpack(bytes(damaged))
    with pytest.raises(PackError):
        unpack(bytes(packed[:-7]))
    with pytest.raises(PackError):
        unpack(bytes(packed[:20]))
    newer = bytearray(packed)
    struct.pack_into("<H", newer, len(MAGIC), 2)
    with pytest.raises(PackError, match="version 2"):
        unpack(bytes(newer))


def test_every_reader_reads_a_packed_file_as_the_plain_one(tmp_path: Path) -> None:
    from blitzaco.tools.tune import record as rec
    from blitzaco.tools.tune.nn import load_arrays, read_records

    plain = tmp_path / "games.bin"
    shutil.copy(GAMES, plain)
    shutil.copy(GAMES.parent / (GAMES.name + ".json"), tmp_path / "games.bin.json")
    packed = tmp_path / "games.pak"
    figures = pack_file(plain, packed)
    assert figures["positions"] == 148 and figures["per_position"] < RECORD_BYTES / 4
    assert packed_info(packed)["positions"] == count_labels(packed) == count_labels(plain) == 148
    assert packed_info(packed)["meta"]["seed"] == 3
    assert [(r.board.fen(), r.score, r.result) for r in read_labels(packed, 5)] == \
        [(r.board.fen(), r.score, r.result) for r in read_labels(plain, 5)]
    assert read_records(packed, 40, 7).tobytes() == read_records(plain, 40, 7).tobytes()
    a, b = load_arrays(packed), load_arrays(plain)
    for field in ("stm", "other", "score", "result", "white"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert rec.file_sha256(packed, 100) == rec.file_sha256(plain, 100)
    assert rec.file_sha256(packed) == rec.file_sha256(plain)
    run_plain, run_packed = rec.label_run(plain, 148), rec.label_run(packed, 148)
    assert run_packed == run_plain


def test_the_pack_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from blitzaco.tools.tune.cli import main

    plain = tmp_path / "games.bin"
    shutil.copy(GAMES, plain)
    out = tmp_path / "games.pak"
    assert main(["pack", str(plain), str(out), "--workers", "1"]) == 0
    assert "148 positions in" in capsys.readouterr().out
    assert unpack(out.read_bytes())[1] == _records(GAMES)
    other = tmp_path / "other.bin"
    other.write_bytes(b"not a label file")
    with pytest.raises(ValueError):
        record_bytes(other)
