#!/usr/bin/env python3
"""Two builds of `urec` against each other: `urec bench` of build A and build B
on one dataset, alternating (which goes first alternates by round), so a change
that should not move the loader's speed can be shown not to.

  bench/urec_ab_bench.py --a OLD/urec --b NEW/urec DATASET [--rounds 7] [--epochs 3] [--threads 1]

Each run is a fresh process; epochs after the first count (the first maps the
files and first-touches the batch buffers). Reported per transform (train:
RandomResizedCrop + flip, val: Resize + CenterCrop): medians over rounds of
images/s and process CPU us per image (`urec bench --json`'s per-epoch cpu_s),
and B / A. The load average is printed before and after: quote it.
"""
import argparse
import json
import os
import statistics
import subprocess


def run(urec, dataset, transform, threads, epochs):
    out = subprocess.run([urec, "bench", dataset, "--threads", str(threads), "--epochs", str(epochs),
                          "--transform", transform, "--json"], capture_output=True, text=True, check=True).stdout
    timed = json.loads(out)["epochs"][1:]
    images = sum(e["images"] for e in timed)
    return (statistics.median(e["images_per_s"] for e in timed),
            sum(e["cpu_s"] for e in timed) / images * 1e6)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--a", required=True, help="urec of build A (e.g. the base commit)")
    parser.add_argument("--b", required=True, help="urec of build B")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.epochs < 2:
        parser.error("--epochs must be at least 2 (the first is warm-up)")
    print("load average before", os.getloadavg())
    results = {}
    for round_ in range(args.rounds):
        for transform in ("train", "val"):
            sides = [("A", args.a), ("B", args.b)]
            for side, urec in sides if round_ % 2 == 0 else reversed(sides):
                results.setdefault((transform, side), []).append(
                    run(urec, args.dataset, transform, args.threads, args.epochs))
    print("load average after ", os.getloadavg())
    for transform in ("train", "val"):
        med = {side: [statistics.median(r[i] for r in results[(transform, side)]) for i in (0, 1)]
               for side in ("A", "B")}
        print(f"{transform}: A {med['A'][0]:.1f} img/s {med['A'][1]:.0f} CPU us/img | "
              f"B {med['B'][0]:.1f} img/s {med['B'][1]:.0f} CPU us/img | "
              f"B/A speed {med['B'][0] / med['A'][0]:.3f}, CPU {med['B'][1] / med['A'][1]:.3f}")


if __name__ == "__main__":
    main()
