#!/usr/bin/env python3
"""Build the engine as one executable with PyInstaller, from a checkout:

    python scripts/build_binary.py            # dist/blitzaco (one file)
    python scripts/build_binary.py --onedir   # dist/blitzaco-dir/blitzaco (a folder; starts faster)

Installs what the build needs and this interpreter lacks (PyInstaller; for the
compiled build also mypy, and setuptools with its ``bdist_wheel`` command: a
virtual environment made by ``pip install .`` has none of them), or, where pip cannot
install them, says in one line what to install; builds from uci/blitzaco.spec, and
prints the size of what it built. On Windows the file is dist/blitzaco.exe.

The binary carries the compiled modules: the engine's wheel is built first, as
``pip install .`` builds it (setup.py compiles the search's hot modules with mypyc),
and PyInstaller takes the engine from it. Without mypyc or a C compiler that wheel
is pure Python and so is the binary (a warning says so); ``--pure`` asks for that.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYINSTALLER = "pyinstaller>=6.0,<7"
#: What a compiled module's file name ends with here (".cpython-311-x86_64-linux-gnu.so").
EXTENSION = sysconfig.get_config_var("EXT_SUFFIX")


#: What a build needs of the checkout: these files and folders.
BUILD_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "config.toml")
BUILD_FOLDERS = ("src", "assets")


def native_sources(root: Path = ROOT) -> list[str]:
    """The modules setup.py compiles (its NATIVE list, read from the file itself)."""
    tree = ast.parse((root / "setup.py").read_text())
    return next([element.value for element in node.value.elts]  # type: ignore[attr-defined]
                for node in tree.body
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "NATIVE")


def copy_checkout(dest: Path, root: Path = ROOT) -> Path:
    """Copy what a build needs of the checkout *root* into *dest* (a build writes
    build/ and *.egg-info beside the sources; two builds must not share them)."""
    dest.mkdir(parents=True)
    for name in BUILD_FILES:
        shutil.copy2(root / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", f"*{EXTENSION}")
    for name in BUILD_FOLDERS:
        shutil.copytree(root / name, dest / name, ignore=ignore)
    return dest


def build_wheel(dest: Path, env: dict[str, str] | None = None, root: Path = ROOT) -> tuple[Path, str]:
    """Build the engine's wheel as ``pip install .`` does, from a copy of the
    checkout *root*, and unpack it into *dest*/site. Returns that folder and what the
    build printed. Needs setuptools and mypy in this interpreter (no build
    isolation: nothing is downloaded)."""
    shutil.rmtree(dest, ignore_errors=True)
    source = copy_checkout(dest / "source", root)
    out = dest / "wheel"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", str(source), "--no-deps", "--no-build-isolation", "-w", str(out)],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=dest,
    )
    if built.returncode != 0:
        raise RuntimeError(f"building the wheel failed:\n{built.stderr[-3000:]}")
    (wheel,) = out.glob("blitzaco-*.whl")
    site = dest / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site, built.stdout + built.stderr


def _version(distribution: str) -> tuple[int, ...] | None:
    """The installed version of *distribution* as numbers (70.1.0 -> (70, 1, 0)), or
    None when it is not installed."""
    try:
        text = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    return tuple(int(number) for number in re.findall(r"\d+", text.split("+")[0])[:3])


def missing_tools(pure: bool, root: Path = ROOT) -> list[str]:
    """What this interpreter lacks to build the binary, as pip requirements:
    PyInstaller; for the compiled build (not *pure*, which takes the installed
    package) also pyproject.toml's build requirements, setuptools and mypy (whose
    mypyc compiles), the wheel being built without isolation, and setuptools'
    ``bdist_wheel`` command, built in from setuptools 70.1 and before that the
    ``wheel`` package's."""
    missing = []
    if importlib.util.find_spec("PyInstaller") is None:
        missing.append(PYINSTALLER)
    if not pure:
        requires = tomllib.loads((root / "pyproject.toml").read_text())["build-system"]["requires"]
        setuptools = _version("setuptools")
        for requirement in requires:
            name = re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0]
            if name == "setuptools":
                floor = re.findall(r">=\s*(\d+)", requirement)  # "setuptools>=64": 64
                if setuptools is None or setuptools < (int(floor[0]) if floor else 0,):
                    missing.append(requirement)
                elif setuptools < (70, 1) and _version("wheel") is None:
                    missing.append("wheel")
            elif name == "mypy" and importlib.util.find_spec("mypyc") is None:
                missing.append(requirement)
    return missing


def install_tools(missing: list[str]) -> bool:
    """Install *missing* (pip requirements) into this interpreter; False, with a line
    saying what to install, when pip cannot."""
    if not missing:
        return True
    quoted = " ".join(f'"{requirement}"' for requirement in missing)
    print(f"build_binary: installing what the build needs: {quoted}", file=sys.stderr)
    if subprocess.run([sys.executable, "-m", "pip", "install", *missing]).returncode == 0:
        importlib.invalidate_caches()
        return True
    print(f"build_binary: the build needs {quoted}; install them with: python -m pip install {quoted}",
          file=sys.stderr)
    return False


def compiled_modules(site: Path) -> list[str]:
    """The compiled modules in an unpacked wheel, by import name (mypyc's shared
    library, a top-level module, among them)."""
    names = []
    for path in sorted(site.rglob(f"*{EXTENSION}")):
        parts = path.relative_to(site).parts
        names.append(".".join((*parts[:-1], parts[-1][: -len(EXTENSION)])))
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--onedir", action="store_true", help="a folder instead of a single file")
    parser.add_argument("--dist", default=str(ROOT / "dist"), help="where the result goes")
    parser.add_argument("--pure", action="store_true", help="the pure-Python modules, not the compiled ones")
    args = parser.parse_args(argv)

    if not install_tools(missing_tools(args.pure)):
        return 2
    env = {**os.environ, "BLITZACO_ONEDIR": "1" if args.onedir else "0"}
    if not args.pure:
        site, _ = build_wheel(ROOT / "build" / "native")
        compiled = compiled_modules(site)
        if not compiled:
            print("blitzaco: the wheel was built pure (no mypyc or no C compiler): a pure-Python binary",
                  file=sys.stderr)
        env["BLITZACO_SITE"] = str(site)
        env["BLITZACO_COMPILED"] = ",".join(compiled)
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
