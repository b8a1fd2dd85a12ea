#!/usr/bin/env python3
"""Build the engine as it was at a commit, to play or time it beside this checkout:

    python scripts/build_at.py 8b0074c --out build/8b0074c          # compiled: build/8b0074c/site
    python scripts/build_at.py 7a2ed74 --out build/7a2ed74 --pure   # pure: build/7a2ed74/source/src

It exports the commit's files (``git archive``) into OUT/source. Pure, the engine
runs from that tree's ``src``, as a source checkout with ``PYTHONPATH=src`` does.
Otherwise the wheel is built there as ``pip install .`` builds it (mypyc compiles the
hot modules of a commit that has setup.py; without mypy or a C compiler, or before
setup.py existed, the wheel is pure) and unpacked into OUT/site. The last line
printed is the folder to put on ``PYTHONPATH``, for example in a match:

    python scripts/match.py --engine 'name=old cmd="python -m blitzaco" env.PYTHONPATH=build/8b0074c/site' ...

Needs git, and for the wheel setuptools and mypy in this interpreter (no build
isolation: nothing is downloaded). OUT is replaced.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export(commit: str, source: Path) -> None:
    """The commit's files, as committed, into *source*."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit], capture_output=True)
    if archive.returncode != 0:
        raise RuntimeError(f"git archive {commit}: {archive.stderr.decode(errors='replace').strip()}")
    source.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(source, filter="data")
        else:
            tar.extractall(source)


def build(commit: str, out: Path, pure: bool) -> Path:
    """Export *commit* into *out*/source and return the folder to put on PYTHONPATH."""
    shutil.rmtree(out, ignore_errors=True)
    source = out / "source"
    export(commit, source)
    if pure:
        return source / "src"
    wheels = out / "wheel"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-w", str(wheels)],
        capture_output=True, text=True,
    )
    sys.stderr.write(built.stderr[-3000:])
    if built.returncode != 0:
        raise RuntimeError(f"building the wheel of {commit} failed")
    (wheel,) = wheels.glob("blitzaco-*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit", help="any git revision (a hash, a tag, HEAD)")
    parser.add_argument("--out", required=True, type=Path, help="folder to build in (replaced)")
    parser.add_argument("--pure", action="store_true", help="the source tree only, no wheel")
    args = parser.parse_args(argv)
    try:
        path = build(args.commit, args.out, args.pure)
    except RuntimeError as err:
        print(f"build_at: {err}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
