#!/usr/bin/env python3
"""Build the engine as one executable with PyInstaller, from a checkout:

    python scripts/build_binary.py            # dist/blitzaco (one file)
    python scripts/build_binary.py --onedir   # dist/blitzaco-dir/blitzaco (a folder; starts faster)

Installs PyInstaller if it is missing, builds from uci/blitzaco.spec, and prints
the size of what it built. On Windows the file is dist/blitzaco.exe.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYINSTALLER = "pyinstaller>=6.0,<7"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--onedir", action="store_true", help="a folder instead of a single file")
    parser.add_argument("--dist", default=str(ROOT / "dist"), help="where the result goes")
    args = parser.parse_args(argv)

    if importlib.util.find_spec("PyInstaller") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", PYINSTALLER], check=True)
    env = {**os.environ, "BLITZACO_ONEDIR": "1" if args.onedir else "0"}
    command = [
        sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
        "--distpath", args.dist, "--workpath", str(ROOT / "build" / "pyinstaller"),
        str(ROOT / "uci" / "blitzaco.spec"),
    ]
    subprocess.run(command, check=True, env=env, cwd=ROOT)
    suffix = ".exe" if os.name == "nt" else ""
    built = Path(args.dist) / ("blitzaco-dir" if args.onedir else "") / f"blitzaco{suffix}"
    files = [f for f in built.parent.rglob("*") if f.is_file()] if args.onedir else [built]
    size = sum(f.stat().st_size for f in files)
    print(f"built {built} ({size / 1e6:.1f} MB{' in the folder' if args.onedir else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
