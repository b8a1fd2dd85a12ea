"""``python -m blitzaco`` is the same program as the ``blitzaco`` command."""

import sys

from blitzaco.cli import main

sys.exit(main())
