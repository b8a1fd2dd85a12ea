"""Entry point for frozen builds (PyInstaller): the same program as ``blitzaco``."""

import multiprocessing
import sys

from blitzaco.cli import main

if __name__ == "__main__":
    # A helper process of Threads > 1 is this executable started again by
    # multiprocessing (spawn): freeze_support runs the helper instead of the engine.
    multiprocessing.freeze_support()
    sys.exit(main())
