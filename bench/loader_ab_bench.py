#!/usr/bin/env python3
"""Two builds of the Python module against each other: unirecord.Loader of
build A and of build B on one dataset, alternating (which goes first
alternates by round), so a change that should not move the Python Loader's
speed can be shown not to (the Python counterpart of urec_ab_bench.py; the
method of bench/results/no_speed_lost_33.md).

  bench/loader_ab_bench.py --a OLD_PYTHONPATH --b NEW_PYTHONPATH DATASET [--rounds 7] [--epochs 3] [--threads 1]

--a and --b are folders holding a `unirecord` package (e.g. build/python).
Each run is a fresh process of this Python with that folder first on its
path: Loader(DATASET, batch_size=--batch, shuffle=True, threads=--threads),
--epochs epochs with set_epoch; epochs after the first count. Reported:
medians over rounds of images/s and process CPU us per image, B / A of the
medians and the median of the per-round B / A. The load average is printed
before and after: quote it.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(args):
    import unirecord
    loader = unirecord.Loader(args.dataset, batch_size=args.batch, shuffle=True, threads=args.threads)
    epochs = []
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        images = 0
        t0, c0 = time.perf_counter(), cpu_s()
        for batch, _labels in loader:
            images += batch.shape[0]
        epochs.append({"images": images, "wall_s": time.perf_counter() - t0, "cpu_s": cpu_s() - c0})
    print(json.dumps({"module": unirecord.__file__, "epochs": epochs}))


def run(path, args):
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run([sys.executable, __file__, "--child", args.dataset, "--epochs", str(args.epochs),
                          "--threads", str(args.threads), "--batch", str(args.batch)],
                         env=env, check=True, capture_output=True, text=True).stdout
    timed = json.loads(out)["epochs"][1:]
    images = sum(e["images"] for e in timed)
    return images / sum(e["wall_s"] for e in timed), 1e6 * sum(e["cpu_s"] for e in timed) / images


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--a", help="PYTHONPATH of build A (e.g. the base commit's build/python)")
    parser.add_argument("--b", help="PYTHONPATH of build B")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if not args.a or not args.b:
        parser.error("--a and --b are required")
    if args.epochs < 2:
        parser.error("--epochs must be at least 2 (the first is warm-up)")
    print("load average before", os.getloadavg())
    rows = {"A": [], "B": []}
    for round_ in range(args.rounds):
        sides = [("A", args.a), ("B", args.b)]
        for side, path in sides if round_ % 2 == 0 else reversed(sides):
            rows[side].append(run(path, args))
    print("load average after ", os.getloadavg())
    med = {side: [statistics.median(r[i] for r in rows[side]) for i in (0, 1)] for side in rows}
    per_round = statistics.median(b[0] / a[0] for a, b in zip(rows["A"], rows["B"]))
    print(f"A {med['A'][0]:.1f} img/s {med['A'][1]:.0f} CPU us/img | B {med['B'][0]:.1f} img/s "
          f"{med['B'][1]:.0f} CPU us/img | B/A speed {med['B'][0] / med['A'][0]:.3f} (median of rounds "
          f"{per_round:.3f}), CPU {med['B'][1] / med['A'][1]:.3f}")


if __name__ == "__main__":
    main()
