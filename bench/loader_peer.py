#!/usr/bin/env python3
"""The native loader against torchvision's ImageFolder + PIL in a torch
DataLoader, on the same images, in the same run.

  bench/loader_peer.py --folder IMAGEFOLDER --dataset CONVERTED --urec build/tools/urec \
      [--rounds 3] [--epochs 2] [--memory-epochs 20] [--json out.json] [--plot out.png]

Rows (all RandomResizedCrop(224) + horizontal flip, batch 256, uint8 output):
  compare  unirecord with all cores vs DataLoader(num_workers=cores), rounds
           alternate the two so that both see the same machine load;
  scaling  images/s of both with 1..cores threads / workers;
  memory   the loader's RSS and open descriptors after each of N epochs.
Throughput is per epoch, after the first (warm-up: worker start, page cache).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def urec_bench(urec, dataset, threads, epochs, batch):
    out = subprocess.run([urec, "bench", dataset, "--threads", str(threads), "--epochs", str(epochs),
                          "--batch", str(batch), "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def urec_rate(urec, dataset, threads, epochs, batch):
    result = urec_bench(urec, dataset, threads, epochs, batch)
    rates = [e["images_per_s"] for e in result["epochs"]]
    return statistics.median(rates[1:] if len(rates) > 1 else rates), result


def torch_rate(folder, workers, epochs, batch):
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
    rates = []
    for _ in range(epochs):
        start, images = time.perf_counter(), 0
        for images_batch, _labels in loader:
            images += images_batch.shape[0]
        rates.append(images / (time.perf_counter() - start))
    del loader
    return statistics.median(rates[1:] if len(rates) > 1 else rates)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", required=True, help="the ImageFolder")
    parser.add_argument("--dataset", required=True, help="the same folder converted by urec convert")
    parser.add_argument("--urec", required=True)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2, help="per measurement; the first is warm-up")
    parser.add_argument("--memory-epochs", type=int, default=20)
    parser.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--plot", help="write a PNG of images/s vs threads here")
    parser.add_argument("--skip", default="", help="comma-separated rows to skip: compare,scaling,memory")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    results = {"cores": args.cores, "batch": args.batch, "epochs": args.epochs}

    def log(*parts):
        print(*parts, file=sys.stderr, flush=True)

    if "compare" not in skip:
        ours, theirs = [], []
        for r in range(args.rounds):
            ours.append(urec_rate(args.urec, args.dataset, args.cores, args.epochs, args.batch)[0])
            theirs.append(torch_rate(args.folder, args.cores, args.epochs, args.batch))
            log(f"compare round {r}: unirecord {ours[-1]:.1f} img/s, torchvision {theirs[-1]:.1f} img/s")
        results["compare"] = {
            "unirecord_images_per_s": ours, "torchvision_images_per_s": theirs,
            "unirecord_median": statistics.median(ours), "torchvision_median": statistics.median(theirs),
            "speedup": statistics.median(ours) / statistics.median(theirs),
        }

    if "scaling" not in skip:
        scaling = {"threads": [], "unirecord": [], "torchvision": []}
        for t in range(1, args.cores + 1):
            scaling["threads"].append(t)
            scaling["unirecord"].append(urec_rate(args.urec, args.dataset, t, args.epochs, args.batch)[0])
            scaling["torchvision"].append(torch_rate(args.folder, t, args.epochs, args.batch))
            log(f"scaling {t}: unirecord {scaling['unirecord'][-1]:.1f}, torchvision {scaling['torchvision'][-1]:.1f}")
        one = scaling["unirecord"][0]
        scaling["unirecord_efficiency"] = [rate / (t * one) for t, rate in zip(scaling["threads"], scaling["unirecord"])]
        results["scaling"] = scaling

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
    if args.plot and "scaling" in results:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        s = results["scaling"]
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot(s["threads"], s["unirecord"], "o-", label="unirecord Loader (threads)")
        ax.plot(s["threads"], s["torchvision"], "s-", label="torchvision ImageFolder+PIL (workers)")
        ax.plot(s["threads"], [t * s["unirecord"][0] for t in s["threads"]], ":", color="grey",
                label="linear (unirecord, 1 thread x n)")
        ax.set_xlabel("threads / DataLoader workers")
        ax.set_ylabel("images/s (RandomResizedCrop 224, batch 256)")
        ax.set_xticks(s["threads"])
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
