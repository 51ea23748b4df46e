#!/usr/bin/env python3
"""The Python paths, in one run on one generated ImageNet-like folder:

  torchvision   ImageFolder + PIL RandomResizedCrop(224) + RandomHorizontalFlip
                + PILToTensor, in DataLoader(num_workers=W)
  imagedataset  unirecord.ImageDataset(RandomResizedCrop(224, flip=True)) in the
                same DataLoader(num_workers=W)
  loader        unirecord.Loader(RandomResizedCrop(224, flip=True), threads=T)

All produce uint8 [B, 3, 224, 224] batches. Each measurement runs in a fresh
process; rounds alternate the three so that they see the same machine load.
images/s is per epoch after the first (warm-up: worker start, page cache);
memory is the peak, over the run, of the sum over the process and all its
children (DataLoader workers) of RSS and of PSS (PSS shares shared pages out
fairly, so it does not count torch's libraries once per worker).

  bench/python_bench.py [--work DIR] [--urec build/tools/urec] [--classes 10 --per-class 100]
                        [--runs 3] [--epochs 3] [--batch 64] [--workers 2] [--threads 2] [--json out.json]

Needs the unirecord package (pip install ./python), torch and torchvision.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

METHODS = ("torchvision", "imagedataset", "loader")


# ------------------------------------------------------------------ child ---

def child(args):
    import torch

    torch.set_num_threads(1)
    rates = []
    if args.child == "loader":
        import unirecord

        loader = unirecord.Loader(args.records, batch_size=args.batch, seed=0, threads=args.threads,
                                  transform=unirecord.RandomResizedCrop(224, flip=True))
        for epoch in range(args.epochs):
            loader.set_epoch(epoch)
            start, n = time.perf_counter(), 0
            for images, _labels in loader:
                n += images.shape[0]
            rates.append(n / (time.perf_counter() - start))
    else:
        from torch.utils.data import DataLoader

        if args.child == "torchvision":
            from torchvision import datasets, transforms

            dataset = datasets.ImageFolder(args.folder, transforms.Compose([
                transforms.RandomResizedCrop(224),
                transforms.RandomHorizontalFlip(),
                transforms.PILToTensor(),
            ]))
        else:
            import unirecord

            dataset = unirecord.ImageDataset(args.records, unirecord.RandomResizedCrop(224, flip=True))
        loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                            persistent_workers=args.workers > 0)
        for epoch in range(args.epochs):
            if hasattr(dataset, "set_epoch"):
                dataset.set_epoch(epoch)
            start, n = time.perf_counter(), 0
            for images, _labels in loader:
                n += images.shape[0]
            rates.append(n / (time.perf_counter() - start))
    print(json.dumps({"rates": rates}))


# ----------------------------------------------------------------- memory ---

def children_of(pid):
    kids = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += kids.get(p, [])
    return tree


def memory_of(pids):
    rss = pss = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
        except OSError:
            pass
    return rss, pss


def measure(method, args):
    cmd = [sys.executable, __file__, "--child", method, "--folder", str(args.folder), "--records", str(args.records),
           "--epochs", str(args.epochs), "--batch", str(args.batch), "--workers", str(args.workers),
           "--threads", str(args.threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0, 0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            rss, pss = memory_of(children_of(proc.pid))
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            done.wait(0.1)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out, err = proc.communicate()
    done.set()
    t.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{method} failed:\n{err}")
    rates = json.loads(out.strip().splitlines()[-1])["rates"]
    steady = rates[1:] if len(rates) > 1 else rates
    return {"images_per_s": statistics.median(steady), "epochs": rates, "peak_rss": peak[0], "peak_pss": peak[1]}


# ------------------------------------------------------------------- data ---

def prepare(args):
    work = Path(args.work)
    folder = work / "train"
    records = work / "records"
    if not folder.exists():
        urec = args.urec or os.environ.get("UREC", "")
        if not urec or not Path(urec).exists():
            sys.exit("python_bench: pass --urec (or set UREC) to generate the image folder")
        subprocess.run([urec, "synth-imagefolder", str(folder), "--classes", str(args.classes),
                        "--per-class", str(args.per_class)], check=True)
    if not records.exists():
        import unirecord

        report = unirecord.convert_imagefolder(folder, records, num_shards=4)
        print(f"converted {report['written']} images ({report['image_bytes'] / 2**20:.0f} MiB) "
              f"in {report['seconds']:.1f} s", file=sys.stderr)
    return folder, records


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="/tmp/unirecord-python-bench", help="folder for the images and records")
    parser.add_argument("--urec", default="", help="urec binary (synth-imagefolder); default $UREC")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--per-class", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader workers")
    parser.add_argument("--threads", type=int, default=2, help="unirecord.Loader threads")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--json", default="")
    parser.add_argument("--child", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--records", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    args.folder, args.records = prepare(args)
    methods = args.methods.split(",")
    results = {m: [] for m in methods}
    for run in range(args.runs):
        for m in methods:
            r = measure(m, args)
            results[m].append(r)
            print(f"run {run + 1} {m:13s} {r['images_per_s']:8.1f} images/s  peak RSS {r['peak_rss'] / 2**20:6.0f} MiB"
                  f"  peak PSS {r['peak_pss'] / 2**20:6.0f} MiB", file=sys.stderr)
    summary = {}
    base = statistics.median(r["images_per_s"] for r in results["torchvision"]) if "torchvision" in results else None
    print(f"\n{'method':13s} {'images/s':>9s} {'x torchvision':>13s} {'peak RSS MiB':>12s} {'peak PSS MiB':>12s}")
    for m in methods:
        ips = statistics.median(r["images_per_s"] for r in results[m])
        rss = statistics.median(r["peak_rss"] for r in results[m]) / 2**20
        pss = statistics.median(r["peak_pss"] for r in results[m]) / 2**20
        ratio = ips / base if base else float("nan")
        summary[m] = {"images_per_s": ips, "vs_torchvision": ratio, "peak_rss_mib": rss, "peak_pss_mib": pss,
                      "runs": results[m]}
        print(f"{m:13s} {ips:9.1f} {ratio:13.2f} {rss:12.0f} {pss:12.0f}")
    if args.json:
        meta = {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "args": {
            k: v for k, v in vars(args).items() if k not in ("child",)}}
        Path(args.json).write_text(json.dumps({"meta": meta, "results": summary}, indent=1, default=str))


if __name__ == "__main__":
    main()
