"""Entry point for frozen builds (PyInstaller): the same program as ``blitzaco``."""

import sys

from blitzaco.cli import main

if __name__ == "__main__":
    sys.exit(main())
