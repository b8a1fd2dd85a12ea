"""Make tuned weights the shipped defaults.

The defaults live in one data file, ``config.toml`` at the top of the repository
(copied into the package by a build, read at start-up, checked as strictly as a
user's file), so adopting a tuned config writes that file: the tuned values with every key's documentation, as
``blitzaco config`` prints it. Nothing happens unless asked (``scripts/tune.py
adopt``).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from typing import Any

from blitzaco import config as config_module
from blitzaco.config import Config, dump_toml

__all__ = ["adopt", "changed_fields", "shipped_config_path"]


def shipped_config_path() -> Path:
    """The ``config.toml`` the defaults are read from: the checkout's top-level file
    (an installed engine's copy in its package otherwise)."""
    path = config_module.defaults_path()
    if path is None:
        raise FileNotFoundError("the defaults are read from a zip file: no config.toml to write")
    return path


def changed_fields(new: Config, old: Config | None = None) -> dict[tuple[str, str], Any]:
    """{(dataclass name, field name): new value} for every leaf that differs."""
    old = old if old is not None else Config()
    changes: dict[tuple[str, str], Any] = {}

    def walk(a: Any, b: Any) -> None:
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if dataclasses.is_dataclass(x):
                walk(x, y)
            elif x != y:
                changes[(type(a).__name__, f.name)] = x

    walk(new, old)
    return changes


def adopt(new: Config, path: Path | None = None) -> int:
    """Write *new* as the defaults file (:func:`shipped_config_path` by default);
    returns the number of fields that changed. A temporary file beside it, then a
    rename: an interrupted adopt leaves the old file whole."""
    path = path if path is not None else shipped_config_path()
    count = len(changed_fields(new))
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(dump_toml(new))
        os.chmod(name, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return count
