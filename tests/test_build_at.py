"""scripts/build_at.py: an older commit built beside the checkout, as the measurement
ledger's commands use it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_build_at_exports_a_commit_that_runs(tmp_path: Path) -> None:
    """scripts/build_at.py --pure: the commit's sources, the path to put on PYTHONPATH
    printed last, and the engine there runs; an unknown commit is refused."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = tmp_path / "head"
    built = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_at.py"), "HEAD", "--out", str(out), "--pure"],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    site = Path(built.stdout.strip().splitlines()[-1])
    assert site == out / "source" / "src" and (site / "blitzaco" / "__init__.py").is_file()
    version = subprocess.run([sys.executable, "-c", "import blitzaco, sys; print(blitzaco.__file__)"],
                             capture_output=True, text=True, env={"PYTHONPATH": str(site)}, timeout=60)
    assert version.returncode == 0 and Path(version.stdout.strip()).is_relative_to(site)
    refused = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_at.py"), "no-such-commit", "--out",
                              str(tmp_path / "none"), "--pure"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "no-such-commit" in refused.stderr
