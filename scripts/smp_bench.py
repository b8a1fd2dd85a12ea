#!/usr/bin/env python3
"""What Threads buys and what the shared table costs: time to depth and node rate
with Threads 1 and 2 on the bench positions, and the microseconds of a shared-table
probe and store against the list table. A thin front end over
blitzaco.tools.smpbench (see its documentation, or run with --help). Run it on an
idle machine; it prints figures for a report, not pass/fail.

    python scripts/smp_bench.py --depth 8              # both measurements
    python scripts/smp_bench.py --no-search            # the table costs only
"""

import sys

from blitzaco.tools.smpbench import main

# Guarded: the helper processes (start method spawn) import this script again.
if __name__ == "__main__":
    sys.exit(main())
