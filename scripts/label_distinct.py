"""Count the distinct positions of several label files together.

A label run removes its own repeats when it merges (by Zobrist key, see
``tune.py label``); two runs of different seeds still meet the same openings. This
prints each file's positions, the distinct positions of all the files together and
how many of each file's positions an earlier file on the command line already has:

    python scripts/label_distinct.py static_s31.bin static_s37.bin

The keys are read a million records at a time (8 bytes a position are held: 1.6 GB
for 200 million).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from blitzaco.tools.tune.labelfile import MAGIC, RECORD_BYTES
from blitzaco.tools.tune.labelrun import position_keys

CHUNK = 1 << 20


def file_keys(path: Path) -> np.ndarray:
    """The position key of every record of the label file *path*, in file order."""
    parts = []
    with open(path, "rb") as handle:
        if handle.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{path} is not a label file (tune.py label)")
        while data := handle.read(CHUNK * RECORD_BYTES):
            parts.append(position_keys(data))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="label files (tune.py label's merged files)")
    args = parser.parse_args(argv)
    seen = np.zeros(0, dtype=np.uint64)
    total = 0
    for path in args.files:
        keys = np.unique(file_keys(path))
        records = (path.stat().st_size - len(MAGIC)) // RECORD_BYTES
        known = int(np.count_nonzero(np.isin(keys, seen, assume_unique=True)))
        print(f"{path}: {records:,} positions, {len(keys):,} distinct, {known:,} of them in the files before it")
        seen = np.union1d(seen, keys)
        total += records
    print(f"all {len(args.files)} files: {total:,} positions, {len(seen):,} distinct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
