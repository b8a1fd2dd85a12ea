"""Build hook: the search's hot modules compiled with mypyc where that works.

The metadata lives in pyproject.toml; this file only decides what is compiled.

* ``pip install .`` (any wheel build) compiles the modules in :data:`NATIVE` with
  mypyc when mypyc and a C compiler work, and installs the pure-Python package when
  they do not: a warning says so and the engine behaves identically, only slower.
* ``BLITZACO_PURE=1`` skips the compilation on purpose.
* Editable installs (``pip install -e .``) are always pure: a compiled module next
  to its source would hide every later edit of that source.

The same source is the pure module and the compiled one: there is nothing to keep in
step. ``tests/test_native.py`` builds the wheel both ways and checks that ``bench``
searches the same tree.

The defaults, ``config.toml`` at the top of the repository, are copied into the
package by build_py (``blitzaco/config.toml`` in the wheel); an editable install and
a source checkout read the top-level file itself (``blitzaco.config``).
"""

from __future__ import annotations

import glob
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

#: What mypyc compiles: the modules a search node runs through.
NATIVE = [
    "src/blitzaco/board.py",
    "src/blitzaco/classical.py",
    "src/blitzaco/movepick.py",
    "src/blitzaco/moves.py",
    "src/blitzaco/network.py",
    "src/blitzaco/search.py",
    "src/blitzaco/sharedtt.py",
    "src/blitzaco/tt.py",
]
#: Commands that build a wheel or an installation (not metadata, not editable).
_BUILDS = {"bdist_wheel", "build", "build_ext", "install"}


def _warn(message: str) -> None:
    print(f"blitzaco: {message}; installing the pure-Python engine (same play, slower)", file=sys.stderr)


def native_modules() -> list:
    """The mypyc extensions, or [] when this build is to stay pure."""
    if os.environ.get("BLITZACO_PURE") == "1" or not _BUILDS & set(sys.argv[1:]):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _warn("mypyc is not installed")
        return []
    try:
        return mypycify(NATIVE, opt_level="3", debug_level="0")
    except (Exception, SystemExit) as exc:  # mypy's type errors end in SystemExit; Ctrl-C still stops
        _warn(f"mypyc could not compile the engine ({exc!r})")
        return []


#: Flags given to a Unix C compiler that accepts them (each tried on its own first).
#: mypyc puts every compiled module in one C file; with the default semantic
#: interposition a call from one of its functions to another (``popcount``'s halves,
#: a bitboard shift) goes through the PLT and cannot be inlined: without it the
#: compiler calls or inlines them directly, the same code otherwise. bench: 7.6 %
#: less processor time for the whole process, the same tree.
UNIX_FLAGS = ["-fno-semantic-interposition"]


def _accepts(compiler: object, flag: str) -> bool:
    """Whether *compiler* (a distutils compiler) compiles an empty file with *flag*."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "flag.c")
        with open(source, "w") as handle:
            handle.write("int main(void) { return 0; }\n")
        try:
            compiler.compile([source], output_dir=folder, extra_postargs=[flag])  # type: ignore[attr-defined]
        except Exception:  # CompileError: the flag is not known
            return False
    return True


class OptionalBuildExt(build_ext):
    """build_ext that falls back to the pure package when the C compiler fails,
    leaving no half-built extension behind (a compiled module without mypyc's shared
    library would not import); a Unix compiler gets :data:`UNIX_FLAGS` it accepts."""

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "unix":
            flags = [flag for flag in UNIX_FLAGS if _accepts(self.compiler, flag)]
            for extension in self.extensions:
                extension.extra_compile_args = list(extension.extra_compile_args or []) + flags
        super().build_extensions()

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # CompileError, LinkError, a missing compiler
            for path in self.get_outputs():
                if os.path.exists(path):
                    os.remove(path)
            _warn(f"the C compiler failed ({exc})")


#: The one source of the defaults, carried into the package by build_py.
DEFAULTS = "config.toml"


class PureBuildPy(build_py):
    """build_py that copies the top-level config.toml into the package (not in an
    editable install, which reads the top-level file), and, in a pure build, removes
    the compiled modules an earlier compiled build left in build/ (they would be
    packed into the wheel and shadow the sources)."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            here = os.path.dirname(os.path.abspath(__file__))
            self.copy_file(os.path.join(here, DEFAULTS), os.path.join(self.build_lib, "blitzaco", DEFAULTS))
        if not self.distribution.ext_modules:
            names = [os.path.splitext(os.path.basename(path))[0] for path in NATIVE]
            stale = [pattern for name in names for pattern in (f"blitzaco/{name}.*.so", f"blitzaco/{name}.*.pyd")]
            stale += ["*__mypyc.*.so", "*__mypyc.*.pyd"]
            for pattern in stale:
                for path in glob.glob(os.path.join(self.build_lib, pattern)):
                    os.remove(path)


setup(ext_modules=native_modules(), cmdclass={"build_ext": OptionalBuildExt, "build_py": PureBuildPy})
