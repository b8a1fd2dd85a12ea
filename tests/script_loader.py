"""A file of the repository that is a script, not a module of the package
(``scripts/*.py``, ``tests/data/make_eval_scores.py``), loaded as a module for the
tests that call its functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_script(path: Path | str) -> ModuleType:
    """The script at *path* (relative to the repository's root, or absolute), run as
    a module named after its file and registered under that name (a dataclass looks
    its module up)."""
    path = ROOT / path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
