"""scripts/label_study.py: the games of a label file recovered from its records, and
the positions-kept study run end to end on a small file."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType

import chess
import pytest
from script_loader import load_script

from blitzaco.tools.tune import labels


def _script() -> ModuleType:
    return load_script("scripts/label_study.py")


def _write_games(path: Path, games: int, seed: int) -> list[int]:
    """Random games (every position from ply 8 on kept, as the generator keeps quiet
    ones), their results drawn so that neighbours often share one; returns each
    game's first record."""
    rng = random.Random(seed)
    starts = []
    with open(path, "wb") as handle:
        handle.write(labels.MAGIC)
        written = 0
        for _ in range(games):
            board = chess.Board()
            kept = []
            for ply in range(rng.randint(20, 120)):
                moves = list(board.legal_moves)
                if not moves:
                    break
                board.push(rng.choice(moves))
                if ply >= 8:
                    kept.append(board.copy(stack=False))
            result = rng.choice([1.0, 1.0, 0.5])
            starts.append(written)
            for position in kept:
                handle.write(labels.encode(position, rng.randint(-300, 300), result))
            written += len(kept)
    path.with_name(path.name + ".json").write_text(json.dumps({"seed": seed, "games": games, "positions": written}))
    return starts


def test_the_games_of_a_label_file_are_found_from_its_records(tmp_path: Path) -> None:
    path = tmp_path / "labels.bin"
    starts = _write_games(path, 30, 4)
    assert list(_script().game_starts(str(path))) == starts


def test_the_positions_kept_study_trains_one_net_per_setting(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pool, held = tmp_path / "pool.bin", tmp_path / "held.bin"
    _write_games(pool, 40, 5)
    _write_games(held, 5, 6)
    out = tmp_path / "kept.json"
    study = _script()
    assert study.main(["--json", str(out), "kept", "--data", str(pool), "--held-out", str(held), "--held", "100",
                       "--positions", "300", "--every", "1", "4", "--seeds", "1", "--hidden", "8",
                       "--epochs", "1", "--batch", "64"]) == 0
    figures = json.loads(out.read_text())["figures"]
    assert [row["every"] for row in figures] == [1, 4]
    assert figures[1]["games"] > figures[0]["games"]  # one position in four needs more games
    assert all(row["held_out_loss"] > 0 for row in figures)
