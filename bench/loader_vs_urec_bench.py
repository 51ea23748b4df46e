#!/usr/bin/env python3
"""The Python `unirecord.Loader` against `urec bench`: the same C++ Loader, the
same dataset and options (RandomResizedCrop 224 + flip, batch 256, uint8,
layout, prefetch 2, seed 0, shuffle), at each thread count.

  bench/loader_vs_urec_bench.py --urec build/tools/urec [--work DIR] [--classes 10 --per-class 100]
                                [--rounds 5] [--epochs 3] [--threads 1,2] [--layout NCHW] [--json out.json]
                                [--device cpu|cuda|emulated [--cpu-baseline]]

--device puts both sides' batches on a device (cuda: float32 NCHW normalised;
each side waits for every batch on the host: urec bench with
Batch::Synchronize, the Python side with the current stream's synchronize;
emulated: the host device, the same path in ordinary memory, for machines
without a GPU). --cpu-baseline adds a third side, `urec bench --device cpu`,
and the ratio of the device run to it (the GPU issue's goals: cuda >= 0.95x
cpu on a GPU host; emulated >= 0.95x cpu at 2 threads).

The dataset is made once under --work with `urec synth-imagefolder` and
`urec convert imagefolder` (the fast JPEG layout, convert's default). Every
measurement is a fresh process (`urec bench --json`, or this script's child
running `for images, labels in loader`); the two sides alternate, and which
goes first alternates by round, so they see the same machine load. Each
process times every epoch itself, after set_epoch: wall time, and CPU time
(user + system of the whole process, every thread: getrusage(RUSAGE_SELF)).
Epochs after the first count (the first maps the files and warms the page
cache). Reported: medians over rounds of images/s and CPU us per image, the
ratio Python / urec bench, and the loader's own stage times per image
(thread-seconds over all epochs: read, decode+resize; the resizer writes the
layout itself). On a busy
machine wall time includes waiting for a core and CPU time does not, so
compare the CPU column there; the load average is printed before and after.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(args):
    """One Python Loader run; prints urec bench's JSON shape (the keys used here)."""
    import unirecord

    loader = unirecord.Loader(args.records, batch_size=args.batch, shuffle=True, seed=0, threads=args.threads,
                              prefetch=args.prefetch, device=args.device,
                              transform=unirecord.RandomResizedCrop(224, flip=True),
                              fields=unirecord.Fields(layout=args.layout), **device_dtype(args))
    synchronize = None
    if args.device == "cuda":
        import torch

        synchronize = torch.cuda.current_stream().synchronize
    epochs = []
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        cpu0, t0, images = cpu_seconds(), time.perf_counter(), 0
        for batch, _labels in loader:
            if synchronize is not None:
                synchronize()
            images += batch.shape[0]
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        epochs.append({"epoch": epoch, "images": images, "images_per_s": images / wall, "cpu_s": cpu})
    stats = loader.stats()
    stages = {k: stats[k] for k in ("read_s", "decode_s", "wait_s")}
    print(json.dumps({"threads": loader.threads, "samples": stats["samples"], "stages": stages, "epochs": epochs}))


def device_dtype(args):
    """Loader's dtype= for --dtype on a device (urec bench's --dtype names)."""
    if args.device == "cpu":
        return {}
    import torch

    return {"dtype": getattr(torch, args.dtype)}


SIDE_NAMES = {"urec": "urec bench", "python": "Loader (py)", "urec-cpu": "urec on cpu"}


def run_side(side, args, threads):
    if side in ("urec", "urec-cpu"):
        cmd = [args.urec, "bench", str(args.records), "--threads", str(threads), "--batch", str(args.batch),
               "--epochs", str(args.epochs), "--prefetch", str(args.prefetch), "--seed", "0",
               "--layout", args.layout, "--device", "cpu" if side == "urec-cpu" else args.device,
               "--dtype", args.dtype, "--json"]
    else:
        cmd = [sys.executable, __file__, "--child", "--records", str(args.records), "--threads", str(threads),
               "--batch", str(args.batch), "--epochs", str(args.epochs), "--prefetch", str(args.prefetch),
               "--layout", args.layout, "--device", args.device, "--dtype", args.dtype]
    out = json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout)
    if out["threads"] != threads:
        sys.exit(f"{side}: asked for {threads} threads, ran {out['threads']}")
    steady = out["epochs"][1:] or out["epochs"]
    images = sum(e["images"] for e in steady)
    wall = sum(e["images"] / e["images_per_s"] for e in steady)
    cpu = sum(e["cpu_s"] for e in steady)
    per_image = {k: 1e6 * out["stages"][k] / out["samples"] for k in ("read_s", "decode_s")}
    return {"images_per_s": images / wall, "cpu_us": 1e6 * cpu / images,
            **{k.replace("_s", "_us"): v for k, v in per_image.items()}}


def prepare(args):
    work = Path(args.work)
    folder, records = work / "train", work / "records"
    if not folder.exists():
        subprocess.run([args.urec, "synth-imagefolder", str(folder), "--classes", str(args.classes),
                        "--per-class", str(args.per_class)], check=True, stdout=subprocess.DEVNULL)
    if not records.exists():
        subprocess.run([args.urec, "convert", "imagefolder", str(folder), str(records), "--name", "train"],
                       check=True, stdout=subprocess.DEVNULL)
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urec", default=os.environ.get("UREC", "build/tools/urec"))
    parser.add_argument("--work", default="/tmp/unirecord-loader-vs-urec")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--per-class", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=3, help="per process; the first is warm-up")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--prefetch", type=int, default=2)
    parser.add_argument("--layout", default="NCHW", choices=("NCHW", "NHWC"))
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda", "emulated"))
    parser.add_argument("--dtype", default="float32", choices=("float32", "float16", "uint8"),
                        help="on a device: the converted images' type (uint8 with NHWC: the copy alone)")
    parser.add_argument("--cpu-baseline", action="store_true", help="also urec bench --device cpu, and the ratio to it")
    parser.add_argument("--json", default="")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--records", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.threads = int(args.threads)
        return child(args)
    args.records = prepare(args)
    thread_counts = [int(t) for t in args.threads.split(",")]
    load_before = os.getloadavg()
    sides = ["urec", "python"] + (["urec-cpu"] if args.cpu_baseline and args.device != "cpu" else [])
    results = {t: {side: [] for side in sides} for t in thread_counts}
    for r in range(args.rounds):
        for t in thread_counts:
            # Which side goes first rotates by round: all see the same load.
            for side in sides[r % len(sides):] + sides[:r % len(sides)]:
                res = run_side(side, args, t)
                results[t][side].append(res)
                print(f"round {r + 1} threads {t} {side:8s} {res['images_per_s']:8.1f} images/s "
                      f"{res['cpu_us']:7.0f} CPU us/image (decode {res['decode_us']:.0f}, "
                      f"read {res['read_us']:.0f})", file=sys.stderr)
    load_after = os.getloadavg()
    keys = ("images_per_s", "cpu_us", "read_us", "decode_us")
    summary = {}
    print(f"\ndevice {args.device} ({args.dtype}), batch {args.batch}, {args.layout}, prefetch {args.prefetch}, {args.rounds} rounds x "
          f"{args.epochs - 1} timed epochs, medians; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after ({os.cpu_count()} cores)")
    print(f"{'threads':>7s} {'side':11s} {'images/s':>9s} {'CPU us/img':>10s} {'read':>6s} {'decode':>7s}")
    for t in thread_counts:
        summary[t] = {}
        for side in sides:
            summary[t][side] = {k: statistics.median(x[k] for x in results[t][side]) for k in keys}
            m = summary[t][side]
            print(f"{t:7d} {SIDE_NAMES[side]:11s} {m['images_per_s']:9.1f} "
                  f"{m['cpu_us']:10.0f} {m['read_us']:6.0f} {m['decode_us']:7.0f}")
        u, p = summary[t]["urec"], summary[t]["python"]
        summary[t]["ratio_images_per_s"] = p["images_per_s"] / u["images_per_s"]
        summary[t]["ratio_cpu_us"] = p["cpu_us"] / u["cpu_us"]
        print(f"{t:7d} {'py / urec':11s} {summary[t]['ratio_images_per_s']:9.3f} {summary[t]['ratio_cpu_us']:10.3f}")
        if "urec-cpu" in sides:
            # Medians of per-round ratios: each round's sides ran back to back.
            per_round = [d["images_per_s"] / c["images_per_s"] for d, c in zip(results[t]["urec"], results[t]["urec-cpu"])]
            summary[t]["device_over_cpu"] = statistics.median(per_round)
            print(f"{t:7d} {args.device + ' / cpu':11s} {summary[t]['device_over_cpu']:9.3f}   (urec bench; per round: "
                  f"{', '.join(f'{x:.3f}' for x in per_round)})")
    if args.json:
        meta = {"cpus": os.cpu_count(), "load_before": load_before, "load_after": load_after,
                "args": {k: str(v) for k, v in vars(args).items() if k != "child"}}
        Path(args.json).write_text(json.dumps({"meta": meta, "summary": summary, "runs": results}, indent=1))


if __name__ == "__main__":
    main()
