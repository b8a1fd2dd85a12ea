"""A one-line progress bar on stderr, for the development commands."""

from __future__ import annotations

import sys

__all__ = ["progress_bar"]


def progress_bar(done: int, total: int, text: str = "", width: int = 30) -> None:
    """Redraw the bar at *done* of *total*, followed by *text*; ends the line when
    done reaches total."""
    filled = width * min(done, total) // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {text}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()
