"""``python -m blitzaco`` is the same program as the ``blitzaco`` command."""

import sys

from blitzaco.cli import main

# Guarded: a helper process (Threads > 1, start method spawn) imports this module
# again under another name, and must not start a second engine.
if __name__ == "__main__":
    sys.exit(main())
