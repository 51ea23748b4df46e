#!/usr/bin/env python3
"""The native loader against torchvision's ImageFolder + PIL in a torch
DataLoader, on the same images, in the same run.

  bench/loader_peer.py --folder IMAGEFOLDER --dataset CONVERTED --urec build/tools/urec \
      [--rounds 3] [--epochs 2] [--memory-epochs 20] [--threads-list 1,2,4] [--json out.json]

Rows (all RandomResizedCrop(224) + horizontal flip, batch 256, uint8 output):
  compare  unirecord with all cores vs DataLoader(num_workers=cores), rounds
           alternate the two so that both see the same machine load;
  scaling  images/s of both with 1..cores threads / workers (median of rounds);
  memory   the loader's RSS and open descriptors after each of N epochs;
  pairs    (--pairs T:W,...) unirecord with T threads against DataLoader(num_workers=W),
           interleaved rounds, medians: e.g. 1:0,2:2 is issue 9's goal (one thread against
           the main process, two against two workers).
Throughput is per epoch, after the first (warm-up: worker start, page cache). The
torchvision side runs with glibc's malloc asking for huge pages (--peer-malloc huge, the
default; see peer_malloc.py), its fastest steady state here.
bench/loader_plot.py draws the scaling rows of one or more result files.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import peer_malloc


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def urec_bench(urec, dataset, threads, epochs, batch):
    cpu = children_cpu_seconds()
    out = subprocess.run([urec, "bench", dataset, "--threads", str(threads), "--epochs", str(epochs),
                          "--batch", str(batch), "--json"], check=True, capture_output=True, text=True)
    result = json.loads(out.stdout)
    result["cpu_ms_per_image"] = 1e3 * (children_cpu_seconds() - cpu) / result["samples"]
    return result


def urec_rate(urec, dataset, threads, epochs, batch):
    """Median images/s over the epochs after the first, and CPU ms per image."""
    result = urec_bench(urec, dataset, threads, epochs, batch)
    rates = [e["images_per_s"] for e in result["epochs"]]
    return statistics.median(rates[1:] if len(rates) > 1 else rates), result["cpu_ms_per_image"]


def torch_rate(folder, workers, epochs, batch, malloc):
    """The same for torchvision, in a child process so that the CPU time of
    its DataLoader workers is counted (interpreter start-up included)."""
    cpu = children_cpu_seconds()
    out = subprocess.run([sys.executable, __file__, "--torch-run", folder, str(workers), str(epochs), str(batch)],
                         check=True, capture_output=True, text=True, env=peer_malloc.environment(malloc))
    result = json.loads(out.stdout)
    rates = result["rates"]
    cpu_ms = 1e3 * (children_cpu_seconds() - cpu) / result["images"]
    return statistics.median(rates[1:] if len(rates) > 1 else rates), cpu_ms


def torch_run(folder, workers, epochs, batch):
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms

    transform = transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.PILToTensor(),  # uint8 CHW, like the loader's uint8 output
    ])
    dataset = datasets.ImageFolder(folder, transform=transform)
    loader = DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=workers,
                        persistent_workers=workers > 0)
    rates, total = [], 0
    for _ in range(epochs):
        start, images = time.perf_counter(), 0
        for images_batch, _labels in loader:
            images += images_batch.shape[0]
        rates.append(images / (time.perf_counter() - start))
        total += images
    print(json.dumps({"rates": rates, "images": total}))


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--torch-run":
        folder, workers, epochs, batch = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        return torch_run(folder, workers, epochs, batch)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", required=True, help="the ImageFolder")
    parser.add_argument("--dataset", required=True, help="the same folder converted by urec convert")
    parser.add_argument("--urec", required=True)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2, help="per measurement; the first is warm-up")
    parser.add_argument("--memory-epochs", type=int, default=20)
    parser.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--threads-list", help="scaling: comma-separated thread counts (default 1..cores)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--skip", default="", help="comma-separated rows to skip: compare,scaling,memory")
    parser.add_argument("--pairs", help="T:W,... unirecord threads against DataLoader workers")
    parser.add_argument("--peer-malloc", choices=peer_malloc.CHOICES, default="huge",
                        help="torchvision's malloc: with transparent huge pages (see peer_malloc.py) or as is")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    results = {"cores": args.cores, "batch": args.batch, "epochs": args.epochs,
               "peer_malloc": args.peer_malloc}

    def log(*parts):
        print(*parts, file=sys.stderr, flush=True)

    if "compare" not in skip:
        ours, theirs, our_cpu, their_cpu = [], [], [], []
        for r in range(args.rounds):
            rate, cpu = urec_rate(args.urec, args.dataset, args.cores, args.epochs, args.batch)
            ours.append(rate)
            our_cpu.append(cpu)
            rate, cpu = torch_rate(args.folder, args.cores, args.epochs, args.batch, args.peer_malloc)
            theirs.append(rate)
            their_cpu.append(cpu)
            log(f"compare round {r}: unirecord {ours[-1]:.1f} img/s ({our_cpu[-1]:.2f} CPU ms/img), "
                f"torchvision {theirs[-1]:.1f} img/s ({their_cpu[-1]:.2f} CPU ms/img)")
        results["compare"] = {
            "unirecord_images_per_s": ours, "torchvision_images_per_s": theirs,
            "unirecord_cpu_ms_per_image": our_cpu, "torchvision_cpu_ms_per_image": their_cpu,
            "unirecord_median": statistics.median(ours), "torchvision_median": statistics.median(theirs),
            "speedup": statistics.median(ours) / statistics.median(theirs),
            "cpu_ratio": statistics.median(their_cpu) / statistics.median(our_cpu),
        }

    if "scaling" not in skip:
        scaling = {"threads": [], "unirecord": [], "torchvision": []}
        counts = [int(t) for t in args.threads_list.split(",")] if args.threads_list else range(1, args.cores + 1)
        for t in counts:
            ours, theirs = [], []
            for _ in range(args.rounds):  # interleaved, the median kept: the machine's load varies
                ours.append(urec_rate(args.urec, args.dataset, t, args.epochs, args.batch)[0])
                theirs.append(torch_rate(args.folder, t, args.epochs, args.batch, args.peer_malloc)[0])
            scaling["threads"].append(t)
            scaling["unirecord"].append(statistics.median(ours))
            scaling["torchvision"].append(statistics.median(theirs))
            log(f"scaling {t}: unirecord {ours}, torchvision {theirs}")
        one = scaling["unirecord"][0]
        scaling["unirecord_efficiency"] = [rate / (t * one) for t, rate in zip(scaling["threads"], scaling["unirecord"])]
        results["scaling"] = scaling

    if args.pairs:
        pairs = []
        for pair in args.pairs.split(","):
            threads, workers = (int(v) for v in pair.split(":"))
            ours, theirs, our_cpu, their_cpu = [], [], [], []
            for _ in range(args.rounds):
                rate, cpu = urec_rate(args.urec, args.dataset, threads, args.epochs, args.batch)
                ours.append(rate)
                our_cpu.append(cpu)
                rate, cpu = torch_rate(args.folder, workers, args.epochs, args.batch, args.peer_malloc)
                theirs.append(rate)
                their_cpu.append(cpu)
            row = {"threads": threads, "workers": workers, "unirecord_images_per_s": ours,
                   "torchvision_images_per_s": theirs, "unirecord_cpu_ms_per_image": our_cpu,
                   "torchvision_cpu_ms_per_image": their_cpu,
                   "speedup": statistics.median(ours) / statistics.median(theirs),
                   "cpu_ratio": statistics.median(their_cpu) / statistics.median(our_cpu)}
            pairs.append(row)
            log(f"pair {threads} threads : {workers} workers: unirecord {statistics.median(ours):.1f} img/s, "
                f"torchvision {statistics.median(theirs):.1f} img/s, {row['speedup']:.2f}x "
                f"(CPU time per image {row['cpu_ratio']:.2f}x)")
        results["pairs"] = pairs

    if "memory" not in skip:
        run = urec_bench(args.urec, args.dataset, args.cores, args.memory_epochs, args.batch)
        rss = [e["rss_mib"] for e in run["epochs"]]
        fds = [e["open_fds"] for e in run["epochs"]]
        results["memory"] = {"rss_mib": rss, "open_fds": fds,
                             "rss_growth_after_first_epoch": (max(rss[1:] or rss) - rss[0]) / rss[0],
                             "fds_growth": max(fds) - fds[0]}
        log(f"memory: RSS {rss[0]:.1f} -> {rss[-1]:.1f} MiB, fds {fds[0]} -> {fds[-1]}")

    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
