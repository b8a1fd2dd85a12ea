#!/usr/bin/env python3
"""Training settings of the network compared on the same data, by held-out loss
beside the classical evaluation's on the same positions (``tune.py train-net`` trains
the chosen one and writes it with its record):

    python scripts/net_sweep.py --data runs/data/labels_s2.bin --data runs/data/labels_s13.bin \\
        --resume assets/net.bin --device auto --json runs/nn/sweep.json

Each label file gives its first records to fit and its last ``--held-out`` share to
hold out, as ``train-net`` splits them. Every setting in :data:`SETTINGS` trains from
the same split (from ``--resume``'s weights, or fresh), and the table gives its best
held-out loss (float model, best epoch) and the classical evaluation's loss under the
same target (lambda), whose ratio is the figure to compare across lambdas. ``--best
FILE`` writes the ``train-net`` arguments of the setting with the lowest ratio.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from blitzaco.nnue import load_weights
from blitzaco.tools.tune.labels import TARGET_LAM
from blitzaco.tools.tune.nn import (
    TrainSettings,
    check_evaluations,
    finished_records,
    fitted_then_held,
    held_out_count,
    load_arrays,
    train,
)

#: name, from the resumed net (else fresh), lambda, learning rate, batch, epochs, hidden, weight decay, king
#: buckets (above 1 a study: the engine reads 768 inputs; see nn.king_bucket), output buckets (see
#: nn.output_bucket; the network file's version 2).
SETTINGS = [
    ("resume", True, TARGET_LAM, 5e-3, 2048, 8, 128, 0.0, 1, 1),
    ("resume-slow", True, TARGET_LAM, 5e-4, 16384, 12, 128, 0.0, 1, 1),
    ("fresh", False, TARGET_LAM, 5e-3, 2048, 20, 128, 0.0, 1, 1),
    ("fresh-decay", False, TARGET_LAM, 5e-3, 2048, 20, 128, 0.05, 1, 1),
    ("fresh-64", False, TARGET_LAM, 5e-3, 2048, 20, 64, 0.0, 1, 1),
    ("resume-score", True, 1.0, 5e-3, 2048, 8, 128, 0.0, 1, 1),
    ("fresh-score", False, 1.0, 5e-3, 2048, 20, 128, 0.0, 1, 1),
    ("score-64", False, 1.0, 5e-3, 2048, 20, 64, 0.0, 1, 1),  # the sixth net's training
    ("score-64-kb2", False, 1.0, 5e-3, 2048, 20, 64, 0.0, 2, 1),
    ("score-64-kb4", False, 1.0, 5e-3, 2048, 20, 64, 0.0, 4, 1),
    ("w128-e10", False, 1.0, 2e-3, 16384, 10, 128, 0.0, 1, 1),  # the trainer's defaults, 10 epochs
    ("w128-e10-ob8", False, 1.0, 2e-3, 16384, 10, 128, 0.0, 1, 8),
    ("w128-e10-kb2", False, 1.0, 2e-3, 16384, 10, 128, 0.0, 2, 1),
]


def _write(args: argparse.Namespace, rows: list[dict[str, object]], fitted: int, held: int,
           argv: list[str] | None) -> None:
    """The figures so far (``--json``) and the best setting's train-net arguments (``--best``)."""
    if args.json:
        Path(args.json).write_text(json.dumps({"command": " ".join(["net_sweep.py", *(argv or sys.argv[1:])]),
                                               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                               "fitted": fitted, "held_out": held, "rows": rows}, indent=2))
    if args.best:
        writable = [row for row in rows if row["king_buckets"] == 1] or rows
        best = min(writable, key=lambda row: float(row["ratio"]))  # type: ignore[arg-type]
        words = ["--lam", str(best["lambda"]), "--lr", str(best["lr"]), "--batch", str(best["batch"]),
                 "--epochs", str(best["epochs"]), "--weight-decay", str(best["weight_decay"])]
        words += (["--resume", args.resume, "--replay"] if best["resume"]
                  else ["--hidden", str(best["hidden"]), "--output-buckets", str(best["output_buckets"])])
        Path(args.best).write_text(" ".join(words))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", action="append", required=True)
    parser.add_argument("--resume", required=True, help="the net the 'resume' settings start from")
    parser.add_argument("--held-out", type=float, default=0.04)
    parser.add_argument("--limit", type=int, help="use only the first N records of each file (as train-net)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--only", nargs="*", help="these settings only (by name)")
    parser.add_argument("--json")
    parser.add_argument("--best", help="write the best setting's train-net arguments here")
    args = parser.parse_args(argv)

    parts, held_counts, counts = [], [], []
    for path in args.data:  # the split train-net makes
        count = finished_records(path)
        if args.limit is not None:
            count = min(count, args.limit)
        held = held_out_count(count, args.held_out)
        parts.append((load_arrays(path, count), count - held))
        held_counts.append(held)
        counts.append(count)
    data = fitted_then_held(parts)
    total_held = sum(held_counts)
    start = load_weights(args.resume)
    classical: dict[float, float] = {}
    rows = []
    for name, resume, lam, lr, batch, epochs, hidden, decay, buckets, outputs in SETTINGS:
        if args.only and name not in args.only:
            continue
        if lam not in classical:
            losses = [check_evaluations(path, [], held_out=args.held_out, lam=lam, limit=count,
                                        configured=False)[1].loss * held
                      for path, count, held in zip(args.data, counts, held_counts, strict=True)]
            classical[lam] = sum(losses) / total_held
        settings = TrainSettings(hidden=start.hidden if resume else hidden, epochs=epochs, batch=batch, lr=lr, lam=lam,
                                 held_out=args.held_out, seed=1, device=args.device, weight_decay=decay,
                                 king_buckets=buckets, output_buckets=outputs)
        began = time.perf_counter()
        _, summary = train(data, settings, held=total_held, start=start if resume else None, log=lambda _: None)
        row = {"name": name, "resume": resume, "lambda": lam, "lr": lr, "batch": batch, "epochs": epochs,
               "hidden": settings.hidden, "weight_decay": decay, "king_buckets": buckets, "output_buckets": outputs,
               "best_epoch": summary["best_epoch"],
               "held_out_loss": summary["held_out_loss"], "classical": classical[lam],
               "ratio": summary["held_out_loss"] / classical[lam], "seconds": round(time.perf_counter() - began, 1),
               "history": summary["history"]}
        rows.append(row)
        _write(args, rows, len(data) - total_held, total_held, argv)  # a sweep cut short keeps what it measured
        print(f"{name:>13} | lambda {lam:.2f} | best epoch {row['best_epoch']:2d} | "
              f"held out {row['held_out_loss']:.6f} | classical {row['classical']:.6f} | "
              f"ratio {row['ratio']:.3f} | {row['seconds']:.0f} s", flush=True)
    best = min(rows, key=lambda row: row["ratio"])
    print(f"best: {best['name']} (ratio {best['ratio']:.3f}); {len(data) - total_held} fitted, {total_held} held out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
