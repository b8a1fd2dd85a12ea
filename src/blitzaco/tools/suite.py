"""Test suites: EPD positions with best moves (``bm``) or moves to avoid (``am``),
searched by any UCI engine for a fixed time each, through python-chess.

A position is solved when the move the engine plays after the given time is one of
the ``bm`` moves (and none of the ``am`` moves). The engine is not a dependency of
this module: it compares BlitzACO with other engines (Sunfish, Stockfish) under the
same conditions.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine

__all__ = ["SuitePosition", "SuiteResult", "load_suite", "run_suite"]


@dataclass(frozen=True)
class SuitePosition:
    id: str
    board: chess.Board
    best: tuple[chess.Move, ...]
    avoid: tuple[chess.Move, ...]

    def solved_by(self, move: chess.Move | None) -> bool:
        if move is None:
            return False
        if self.best and move not in self.best:
            return False
        return move not in self.avoid


@dataclass(frozen=True)
class SuiteResult:
    position: SuitePosition
    move: chess.Move | None
    depth: int | None
    solved: bool


def load_suite(path: str | Path) -> list[SuitePosition]:
    """Read an EPD suite; lines without bm or am are skipped."""
    positions = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        board, ops = chess.Board.from_epd(line)
        best = tuple(move for move in ops.get("bm", ()) if isinstance(move, chess.Move))  # type: ignore[union-attr]
        avoid = tuple(move for move in ops.get("am", ()) if isinstance(move, chess.Move))  # type: ignore[union-attr]
        if best or avoid:
            positions.append(SuitePosition(str(ops.get("id", f"line {number}")), board, best, avoid))
    return positions


def run_suite(
    command: Sequence[str],
    positions: Sequence[SuitePosition],
    seconds: float,
    *,
    options: dict[str, object] | None = None,
    concurrency: int = 1,
    progress: Callable[[SuiteResult], None] | None = None,
) -> list[SuiteResult]:
    """Let the engine play each position for *seconds*; one engine process per worker,
    with a new game (and cleared table) for every position."""
    engines: list[chess.engine.SimpleEngine] = []

    def worker(chunk: Sequence[SuitePosition]) -> list[SuiteResult]:
        engine = chess.engine.SimpleEngine.popen_uci(list(command), timeout=60)
        engines.append(engine)
        if options:
            engine.configure(options)  # type: ignore[arg-type]
        results = []
        for position in chunk:
            played = engine.play(
                position.board, chess.engine.Limit(time=seconds), info=chess.engine.INFO_BASIC, game=object()
            )
            result = SuiteResult(position, played.move, played.info.get("depth"), position.solved_by(played.move))
            if progress is not None:
                progress(result)
            results.append(result)
        return results

    chunks = [positions[i::concurrency] for i in range(max(1, concurrency))]
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(chunks)) as pool:
            by_chunk = list(pool.map(worker, chunks))
    finally:
        for engine in engines:
            engine.quit()
    order = {position.id: index for index, position in enumerate(positions)}
    return sorted((result for chunk in by_chunk for result in chunk), key=lambda r: order[r.position.id])
