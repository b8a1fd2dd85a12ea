"""Where the data files shipped with the engine are: ``assets/`` installed as the
package ``blitzaco.assets``, unpacked beside a frozen build's files, or, when the
engine runs from a source checkout (``PYTHONPATH=src``), the checkout's ``assets/``."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

__all__ = ["bundled_file"]

# src/blitzaco/bundled.py -> the checkout's top folder
_CHECKOUT_ASSETS = Path(__file__).resolve().parents[2] / "assets"


def bundled_file(name: str) -> Path | None:
    """The shipped data file *name* (``book.bin``, ``pheromone.bin``), if installed."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root is not None:
        path = Path(frozen_root) / "blitzaco" / "assets" / name
        return path if path.is_file() else None
    try:
        found = resources.files("blitzaco.assets").joinpath(name)
    except (ModuleNotFoundError, TypeError):
        # Not installed: a source checkout run with PYTHONPATH=src (a worktree of an
        # older commit in a match, say) still finds its own book and memory.
        path = _CHECKOUT_ASSETS / name
        return path if path.is_file() else None
    return Path(str(found)) if found.is_file() else None
