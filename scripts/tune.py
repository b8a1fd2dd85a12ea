#!/usr/bin/env python3
"""Tune BlitzACO's weights: self-play data, genetic algorithm, simulated annealing,
on one machine or a Ray cluster. A thin front end over blitzaco.tools.tune.cli (see its
documentation, or run with --help); needs the tune extra: pip install ".[tune]".
"""

import sys

from blitzaco.tools.tune.cli import main

if __name__ == "__main__":
    sys.exit(main())
