"""Where the data files shipped with the engine are: ``assets/`` installed as the
package ``blitzaco.assets``, or unpacked beside a frozen build's files."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

__all__ = ["bundled_file"]


def bundled_file(name: str) -> Path | None:
    """The shipped data file *name* (``book.bin``, ``pheromone.bin``), if installed."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root is not None:
        path = Path(frozen_root) / "blitzaco" / "assets" / name
        return path if path.is_file() else None
    try:
        found = resources.files("blitzaco.assets").joinpath(name)
    except (ModuleNotFoundError, TypeError):
        return None
    return Path(str(found)) if found.is_file() else None
