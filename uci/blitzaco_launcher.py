"""Entry point for frozen builds (PyInstaller): the same program as ``blitzaco``."""

import multiprocessing
import sys

if __name__ == "__main__":
    # A helper process of Threads > 1 is this executable started again by
    # multiprocessing (spawn), and so is multiprocessing's resource tracker:
    # freeze_support runs the helper or the tracker instead of the engine. First,
    # before the engine's imports, which neither needs (the helper imports what it
    # needs itself) and which would only lengthen their start-up.
    multiprocessing.freeze_support()

    from blitzaco.cli import main

    sys.exit(main())
