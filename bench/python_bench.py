#!/usr/bin/env python3
"""The Python paths, in one run on one generated ImageNet-like folder:

  torchvision   ImageFolder + PIL RandomResizedCrop(224) + RandomHorizontalFlip
                + PILToTensor, in DataLoader(num_workers=W)
  imagedataset  unirecord.ImageDataset(RandomResizedCrop(224, flip=True)) in the
                same DataLoader(num_workers=W)
  loader        unirecord.Loader(RandomResizedCrop(224, flip=True), threads=T)

All produce uint8 [B, 3, 224, 224] batches. Each measurement runs in a fresh
process, with glibc's huge-page malloc unless --malloc default (peer_malloc.py:
the DataLoader's batches fault in page by page otherwise); rounds alternate the
three so that they see the same machine load.
images/s is per epoch after the first (warm-up: worker start, page cache);
memory is the peak, over the run, of the sum over the process and all its
children (DataLoader workers) of RSS and of PSS (PSS shares shared pages out
fairly, so it does not count torch's libraries once per worker).

  bench/python_bench.py [--work DIR] [--urec build/tools/urec] [--classes 10 --per-class 100]
                        [--runs 3] [--epochs 3] [--batch 64] [--workers 2] [--threads 2] [--malloc huge]
                        [--json out.json]

Method "imagedataset-peritem" is imagedataset with __getitems__ hidden, so that
the DataLoader fetches item by item (what it did before __getitems__ existed).

--inprocess attributes the time per image instead: for torchvision and
imagedataset, each in a fresh process, the same shuffled order is fetched
  direct     dataset[i] in a loop, one process, no DataLoader
  getitems   dataset.__getitems__(batch) + default_collate, one process (imagedataset)
  forkW      dataset[i] in W forked processes, each over 1/W of the order, no
             DataLoader (what W decoders running at once cost, without the DataLoader)
  dl0        DataLoader(num_workers=0): fetch + collate in the main process
  dl1, dlW   DataLoader(num_workers=1 and W, persistent_workers=True)
and reported as wall and CPU microseconds per image (CPU = user + system time
of the main process and its workers, from /proc or wait4; unlike wall time it
does not count waiting for a core on a busy machine, though it still counts
the slowdown of sharing caches). "DataLoader adds" = dlW CPU - direct CPU.

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

import peer_malloc

METHODS = ("torchvision", "imagedataset", "loader")
EXTRA_METHODS = ("imagedataset-peritem",)
INPROCESS_METHODS = ("torchvision", "imagedataset")


# ------------------------------------------------------------------ child ---

def child(args):
    import torch

    torch.set_num_threads(1)
    rates = []
    if args.child == "loader":
        import unirecord

        loader = unirecord.Loader(args.records, batch_size=args.batch, shuffle=True, seed=0, threads=args.threads,
                                  transform=unirecord.RandomResizedCrop(224, flip=True))
        for epoch in range(args.epochs):
            loader.set_epoch(epoch)
            start, n = time.perf_counter(), 0
            for images, _labels in loader:
                n += images.shape[0]
            rates.append(n / (time.perf_counter() - start))
    else:
        from torch.utils.data import DataLoader

        dataset = make_dataset(args.child, args)
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


def make_dataset(method, args):
    if method == "torchvision":
        from torchvision import datasets, transforms

        return datasets.ImageFolder(args.folder, transforms.Compose([
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.PILToTensor(),
        ]))
    import unirecord

    dataset = unirecord.ImageDataset(args.records, unirecord.RandomResizedCrop(224, flip=True))
    if method == "imagedataset-peritem":
        dataset.__getitems__ = None  # torch's fetcher then indexes item by item
    return dataset


def cpu_seconds(pids):
    """(user, system) seconds of the processes (all their threads) so far."""
    user = system = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            user += int(fields[11])  # utime, stime: fields 14 and 15 of /proc/PID/stat
            system += int(fields[12])
        except (OSError, ValueError, IndexError):
            pass
    tick = os.sysconf("SC_CLK_TCK")
    return user / tick, system / tick


def child_inprocess(args):
    """One method's stages (see --inprocess), each over `epochs` passes of the same
    shuffled order; the first pass is warm-up. Prints microseconds per image."""
    import torch
    from torch.utils.data import DataLoader
    from torch.utils.data._utils.collate import default_collate

    torch.set_num_threads(1)
    dataset = make_dataset(args.child, args)
    n = len(dataset)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(0)).tolist()
    batches = [order[i:i + args.batch] for i in range(0, n, args.batch)]
    me = os.getpid()

    def timed(run_epoch, pids=lambda: [me]):
        rows = []  # per epoch: wall, CPU, of which system, of which the main process; us per image
        for epoch in range(args.epochs):
            if hasattr(dataset, "set_epoch"):
                dataset.set_epoch(epoch)
            procs = pids()
            (u0, s0), (mu0, ms0), t0 = cpu_seconds(procs), cpu_seconds([me]), time.perf_counter()
            run_epoch()
            wall = time.perf_counter() - t0
            (u1, s1), (mu1, ms1) = cpu_seconds(procs), cpu_seconds([me])
            rows.append([x / n * 1e6 for x in (wall, u1 - u0 + s1 - s0, s1 - s0, mu1 - mu0 + ms1 - ms0)])
        steady = rows[1:] if len(rows) > 1 else rows
        keys = ("wall_us", "cpu_us", "sys_us", "main_cpu_us")
        return {k: statistics.median(r[j] for r in steady) for j, k in enumerate(keys)}

    def direct():
        for i in order:
            dataset[i]

    def forked(workers):
        """dataset[i] over the order in `workers` forked processes (no DataLoader);
        returns a stage result like timed()'s, CPU from wait4's rusage."""
        rows = []
        for epoch in range(args.epochs):
            if hasattr(dataset, "set_epoch"):
                dataset.set_epoch(epoch)
            t0, pids = time.perf_counter(), []
            for w in range(workers):
                pid = os.fork()
                if pid == 0:
                    for i in order[w::workers]:
                        dataset[i]
                    os._exit(0)
                pids.append(pid)
            user = system = 0.0
            for pid in pids:
                _, status, ru = os.wait4(pid, 0)
                if status != 0:
                    sys.exit(f"forked worker failed with status {status}")
                user, system = user + ru.ru_utime, system + ru.ru_stime
            wall = time.perf_counter() - t0
            rows.append([x / n * 1e6 for x in (wall, user + system, system, 0.0)])
        steady = rows[1:] if len(rows) > 1 else rows
        keys = ("wall_us", "cpu_us", "sys_us", "main_cpu_us")
        return {k: statistics.median(r[j] for r in steady) for j, k in enumerate(keys)}

    def getitems():
        for b in batches:
            default_collate(dataset.__getitems__(b))

    def loader_epoch(loader):
        def run():
            for _ in loader:
                pass
        return run

    stages = {"direct": timed(direct)}
    if getattr(dataset, "__getitems__", None):
        stages["getitems"] = timed(getitems)
    stages[f"fork{args.workers}"] = forked(args.workers)
    order_sampler = torch.utils.data.BatchSampler(order, args.batch, drop_last=False)
    stages["dl0"] = timed(loader_epoch(DataLoader(dataset, batch_sampler=order_sampler, num_workers=0)))
    for workers in sorted({1, args.workers}):
        loader = DataLoader(dataset, batch_sampler=order_sampler, num_workers=workers, persistent_workers=True)
        iter(loader)  # start the workers before the pids are read
        stages[f"dl{workers}"] = timed(loader_epoch(loader), lambda: children_of(me))
        del loader
    print(json.dumps({"stages": stages}))


def inprocess(args):
    methods = [m for m in args.methods.split(",") if m in INPROCESS_METHODS] or list(INPROCESS_METHODS)
    results = {m: [] for m in methods}
    for run in range(args.runs):
        for m in methods:
            cmd = [sys.executable, __file__, "--child", m, "--inprocess", "--folder", str(args.folder), "--records",
                   str(args.records), "--epochs", str(args.epochs), "--batch", str(args.batch), "--workers",
                   str(args.workers)]
            out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True,
                                 env=peer_malloc.environment(args.malloc)).stdout
            stages = json.loads(out.strip().splitlines()[-1])["stages"]
            results[m].append(stages)
            print(f"run {run + 1} {m:13s} " + "  ".join(
                f"{k} {v['wall_us']:.0f}/{v['cpu_us']:.0f}" for k, v in stages.items()) + "  (wall/CPU us per image)",
                file=sys.stderr)
    summary = {}
    dlw = f"dl{args.workers}"
    keys = ("wall_us", "cpu_us", "sys_us", "main_cpu_us")
    print(f"\n{'method':13s} {'stage':9s} {'wall us/img':>11s} {'CPU us/img':>10s} {'of it sys':>9s} {'main proc':>9s}")
    for m in methods:
        summary[m] = {}
        for stage in results[m][0]:
            summary[m][stage] = {k: statistics.median(r[stage][k] for r in results[m]) for k in keys}
            print(f"{m:13s} {stage:9s} " + " ".join(f"{summary[m][stage][k]:{w}.0f}" for k, w in zip(keys, (11, 10, 9, 9))))
        added = summary[m][dlw]["cpu_us"] - summary[m]["direct"]["cpu_us"]
        parallel = summary[m][f"fork{args.workers}"]["cpu_us"] - summary[m]["direct"]["cpu_us"]
        summary[m]["dataloader_adds_cpu_us"] = added
        summary[m]["parallel_adds_cpu_us"] = parallel
        print(f"{m:13s} DataLoader({args.workers} workers) adds {added:.0f} CPU us per image "
              f"({100 * added / summary[m]['direct']['cpu_us']:.0f}% of direct); {args.workers} forked processes "
              f"without DataLoader add {parallel:.0f}")
    if len(methods) == 2:
        a, b = (summary[m] for m in methods)
        for stage in ("direct", f"fork{args.workers}", "dl0", dlw):
            print(f"ratio {methods[1]}/{methods[0]} {stage}: wall {a[stage]['wall_us'] / b[stage]['wall_us']:.2f}x, "
                  f"CPU {a[stage]['cpu_us'] / b[stage]['cpu_us']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": {"cpus": os.cpu_count(), "args": {
            k: v for k, v in vars(args).items() if k != "child"}}, "inprocess": summary, "runs": results},
            indent=1, default=str))


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
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=peer_malloc.environment(args.malloc))
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
    parser.add_argument("--malloc", choices=peer_malloc.CHOICES, default="huge",
                        help="every child's malloc (peer_malloc.py): with transparent huge pages or as is")
    parser.add_argument("--json", default="")
    parser.add_argument("--inprocess", action="store_true",
                        help="attribute the time per image (direct / DataLoader), see above")
    parser.add_argument("--child", choices=METHODS + EXTRA_METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--records", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child_inprocess(args) if args.inprocess else child(args)
    args.folder, args.records = prepare(args)
    if args.inprocess:
        return inprocess(args)
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
