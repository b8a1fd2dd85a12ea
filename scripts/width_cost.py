#!/usr/bin/env python3
"""What a wider net costs per node, on the same search tree:

    PYTHONPATH=build/HEAD/site python scripts/width_cost.py --widths 128 256 384 512 --rounds 3

The shipped net (or ``--net``) is padded with neurons whose weights are all zero up
to each width: they add nothing to the score, so every width searches the same tree
(``blitzaco bench`` prints the same node count, checked) and the node rate measures
the cost of the wider accumulator and output alone. The widths are benched in turn,
``--rounds`` times (each a fresh process, so that a busy moment of the machine falls
on all of them), and the best and median nodes/s printed with each width's share of
the first's.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from blitzaco.bundled import bundled_file
from blitzaco.nnue import (
    ACTIVATIONS,
    FLAG_MIRRORED,
    FLAG_RESIDUAL,
    FLAG_SQUARED,
    NetworkWeights,
    encode_network,
    load_weights,
)


def padded(weights: NetworkWeights, hidden: int) -> bytes:
    """The network file of *weights* with zero neurons added up to *hidden*."""
    old = weights.hidden
    if hidden < old:
        raise ValueError(f"the net has {old} neurons: it cannot be padded to {hidden}")
    extra = hidden - old
    w1: list[int] = []
    for feature in range(len(weights.w1) // old):
        w1 += list(weights.w1[feature * old:(feature + 1) * old]) + [0] * extra
    w2: list[int] = []
    for at in range(0, len(weights.w2), old):  # per bucket: own half, other half
        w2 += list(weights.w2[at:at + old]) + [0] * extra
    activation = next(name for name, flag in ACTIVATIONS.items() if flag == weights.flags & FLAG_SQUARED)
    return encode_network(w1, list(weights.b1) + [0] * extra, w2, list(weights.b2), hidden=hidden,
                          residual=bool(weights.flags & FLAG_RESIDUAL), qa=weights.qa, qb=weights.qb,
                          activation=activation, mirrored=bool(weights.flags & FLAG_MIRRORED), meta=weights.meta)


def bench(config: Path) -> tuple[int, int]:
    """``blitzaco bench``'s nodes and nodes/s with *config*."""
    done = subprocess.run([sys.executable, "-m", "blitzaco", "--config", str(config), "bench"],
                          capture_output=True, text=True, check=True)
    nodes = re.search(r"Nodes searched: (\d+)", done.stdout + done.stderr)
    rate = re.search(r"Nodes/second: (\d+)", done.stdout + done.stderr)
    if nodes is None or rate is None:
        raise RuntimeError(f"no bench figures in: {done.stdout[-500:]}")
    return int(nodes.group(1)), int(rate.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", help="the net to pad (default: the shipped assets/net.bin)")
    parser.add_argument("--widths", type=int, nargs="+", default=[128, 256, 384, 512])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    weights = load_weights(args.net or bundled_file("net.bin"))
    rates: dict[int, list[int]] = {width: [] for width in args.widths}
    with tempfile.TemporaryDirectory() as folder:
        configs = {}
        for width in args.widths:
            net = Path(folder, f"w{width}.bin")
            net.write_bytes(padded(weights, width))
            configs[width] = Path(folder, f"w{width}.toml")
            configs[width].write_text(f'[eval.nn]\nfile = "{net}"\n')
        trees = set()
        for _ in range(args.rounds):
            for width in args.widths:
                nodes, rate = bench(configs[width])
                trees.add(nodes)
                rates[width].append(rate)
    if len(trees) != 1:
        print(f"width_cost: the widths searched different trees ({sorted(trees)}): not a cost comparison",
              file=sys.stderr)
        return 1
    first = statistics.median(rates[args.widths[0]])
    print(f"bench nodes {trees.pop()} at every width; {args.rounds} rounds")
    print("| width | nodes/s best | nodes/s median | median vs first |")
    print("| --- | --- | --- | --- |")
    for width in args.widths:
        median = statistics.median(rates[width])
        print(f"| {width} | {max(rates[width]):,} | {median:,.0f} | {100 * median / first:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
