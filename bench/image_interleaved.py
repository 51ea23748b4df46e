#!/usr/bin/env python3
"""Decode + resize per core against PIL + torchvision, the two sides interleaved (issue 20).

fast_layout_bench.sh runs image_bench and image_peer.py minutes apart, and on a shared VM both
sides swing between runs (a whole process can land in a slow spell), so one run's ratio is not
the figure. Here each round runs one short image_bench process (the fast-layout cases) and one
pass of the peer (image_peer.py's PIL + torchvision pipelines on the same files), in alternating
order, and takes the ratio inside the round; the figure is the median over the rounds, and
every round is kept in the JSON. Ratios are images/s of CPU time, one core, as in image_peer.py:
  train  (d) crop + DCT decode + resize, fast layout  /  (e) PIL RandomResizedCrop(224)+flip
  val    DecodeCenterCrop, fast layout                /  PIL Resize(256)+CenterCrop(224)
  own    the same two cases with our entropy decoder  /  with libjpeg-turbo's (same process)
per subset: all, baseline, progressive (sources; the fast layout is baseline) and 4:4:4.

  /usr/bin/python3 bench/image_interleaved.py --image-bench build/bench/image_bench \\
      --rounds 7 --json out/image_interleaved.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from image_peer import (SUBSETS, minor_faults, one_pass, peer_transforms,  # noqa: E402
                        steady_heap, subset_blobs)

CASES = {"train": "d_crop_dct_decode_resize_fastlayout",
         "val": "val_center_crop_exact_fastlayout"}


def load():
    return os.getloadavg()[0]


def run_ours(image_bench, image_set, directory, min_time):
    """One image_bench process: case name -> {images_per_second, bits_per_pixel}."""
    names = "|".join(CASES.values())
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        done = subprocess.run(
            [image_bench, f"--benchmark_filter=BM_({names})(_libjpeg_entropy)?(/[a-z0-9]+)?$",
             f"--benchmark_min_time={min_time}", f"--benchmark_out={out.name}",
             "--benchmark_out_format=json"],
            env=dict(os.environ, UREC_IMAGE_BENCH_SET=image_set, UREC_IMAGE_BENCH_DIR=directory),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{image_bench} failed ({done.returncode}):\n{done.stderr}")
        data = json.loads(Path(out.name).read_text())
    return {b["name"].replace("BM_", ""): {"images_per_second": b["items_per_second"],
                                          "bits_per_pixel": b.get("bits_per_pixel")}
            for b in data["benchmarks"]}


def run_peer(blobs, transforms):
    """One pass of each peer pipeline over each subset: (kind, subset) -> images/s, and the
    minor page faults per image of those passes (0 in the steady state: see steady_heap)."""
    faults = minor_faults()
    rates = {(kind, subset): one_pass(blobs[subset], transform)
             for kind, transform in transforms.items() for subset, _ in SUBSETS
             if blobs[subset]}
    images = sum(len(blobs[subset]) for kind, subset in rates)
    return rates, (minor_faults() - faults) / images


def one_set(args, image_set):
    directory = f"/tmp/unirecord-imagenet-{image_set}"
    train, val = peer_transforms()
    transforms = {"train": train, "val": val}
    blobs = None
    rounds = []
    for r in range(args.rounds):
        start_load = load()
        ours_first = r % 2 == 0
        if ours_first or blobs is None:  # image_bench writes the files the peer reads
            ours = run_ours(args.image_bench, image_set, directory, args.min_time)
        if blobs is None:
            blobs = subset_blobs(directory, sorted(Path(directory).glob("*.jpg")))
            for transform in transforms.values():
                one_pass(blobs["all"], transform)  # untimed: first calls, the heap grown
        peer, faults = run_peer(blobs, transforms)
        if not ours_first and r > 0:
            ours = run_ours(args.image_bench, image_set, directory, args.min_time)
        row = {"round": r, "order": "ours,peer" if ours_first else "peer,ours",
               "load_start": start_load, "load_end": load(), "peer_faults_per_image": faults,
               "ratios": {}}
        for kind, case in CASES.items():
            for subset, suffix in SUBSETS:
                if (kind, subset) not in peer:
                    continue
                mine = ours[case + suffix]["images_per_second"]
                libjpeg = ours[case + "_libjpeg_entropy" + suffix]["images_per_second"]
                row["ratios"][f"{kind}/{subset}"] = mine / peer[(kind, subset)]
                row["ratios"][f"own_over_libjpeg_time/{kind}/{subset}"] = libjpeg / mine
                row.setdefault("us_per_image", {})[f"{kind}/{subset}"] = {
                    "ours": 1e6 / mine, "ours_libjpeg_entropy": 1e6 / libjpeg,
                    "peer": 1e6 / peer[(kind, subset)]}
        row["bits_per_pixel"] = ours[CASES["train"]]["bits_per_pixel"]
        rounds.append(row)
        print(f"{image_set} round {r} ({row['order']}, load {start_load:.2f} -> "
              f"{row['load_end']:.2f}): train {row['ratios']['train/all']:.2f}x, "
              f"val {row['ratios']['val/all']:.2f}x; peer {faults:.1f} page faults per image",
              flush=True)
    counts = {subset: len(blobs[subset]) for subset, _ in SUBSETS}
    return {"set": image_set, "images": counts, "bits_per_pixel": rounds[0]["bits_per_pixel"],
            "rounds": rounds}


def summary(result):
    keys = result["rounds"][0]["ratios"].keys()
    med = {k: statistics.median(r["ratios"][k] for r in result["rounds"]) for k in keys}
    rng = {k: (min(r["ratios"][k] for r in result["rounds"]),
               max(r["ratios"][k] for r in result["rounds"])) for k in keys}
    print(f"\n{result['set']} set, {result['bits_per_pixel']:.2f} bits per pixel, images "
          + ", ".join(f"{s} {n}" for s, n in result["images"].items())
          + f"; median (min-max) of {len(result['rounds'])} rounds")
    for k in keys:
        label = (f"own / libjpeg-turbo entropy decoder, time, {k.split('/', 1)[1]}"
                 if k.startswith("own") else f"ours / peer, images/s, {k}")
        print(f"  {label:58s} {med[k]:5.2f}  ({rng[k][0]:.2f}-{rng[k][1]:.2f})")
    result["median"] = med


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-bench", default="build/bench/image_bench")
    parser.add_argument("--sets", default="smooth,entropy")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.3,
                        help="image_bench's --benchmark_min_time per case and round")
    parser.add_argument("--json", help="write every round here")
    args = parser.parse_args()
    steady_heap()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    out = {"load_start": load(), "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "sets": []}
    for image_set in args.sets.split(","):
        result = one_set(args, image_set)
        summary(result)
        out["sets"].append(result)
    out["load_end"] = load()
    print(f"\n1-minute load: {out['load_start']:.2f} at the start, {out['load_end']:.2f} at the end")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
