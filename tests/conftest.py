from __future__ import annotations

import os
import tempfile

# numpy's BLAS on one thread, as in the engine (see blitzaco.spectral); set before any
# test module imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import chess
import chess.engine
import pytest
from uci_driver import ENGINE_COMMAND, UciProcess


@pytest.fixture
def uci() -> UciProcess:
    """A raw engine process after the handshake. Fails the test if the engine wrote
    a traceback: the engine survives internal errors, tests must not let them pass."""
    process = UciProcess()
    process.handshake()
    yield process
    process.close()
    stderr = b"".join(process.stderr)
    assert b"Traceback" not in stderr, stderr.decode("utf-8", "replace")[-3000:]


@pytest.fixture
def engine() -> chess.engine.SimpleEngine:
    """The engine as a GUI sees it, through python-chess's UCI client."""
    with tempfile.TemporaryFile() as stderr:
        client = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=30, stderr=stderr)
        yield client
        client.quit()
        stderr.seek(0)
        text = stderr.read()
    assert b"Traceback" not in text, text.decode("utf-8", "replace")[-3000:]


@pytest.fixture
def built_searches(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The searches the engine builds during the test, in order (its one place of
    building them, turn.Search, recorded)."""
    from blitzaco import turn

    built: list[object] = []
    real = turn.Search

    def recorded(board: chess.Board, plan: object) -> object:
        search = real(board, plan)  # type: ignore[arg-type]
        built.append(search)
        return search

    monkeypatch.setattr(turn, "Search", recorded)
    return built
