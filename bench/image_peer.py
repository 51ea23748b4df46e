#!/usr/bin/env python3
"""The PIL + torchvision side of the image decode benchmark (one core).

Reads the ImageNet-like set that image_bench writes (default
/tmp/unirecord-imagenet-like) and times, per image, from the JPEG bytes in
memory (as the record loader has them):
  (e)  train: PIL open + convert("RGB") + RandomResizedCrop(224)
       + RandomHorizontalFlip + PILToTensor
  val: PIL open + convert("RGB") + Resize(256) + CenterCrop(224) + PILToTensor
Prints images/s of CPU time (median of --runs passes), like image_bench. With --cpp-json (image_bench's
--benchmark_out JSON) it also prints the ratios of the issue's goals.

Run with Debian's python (torch/torchvision/PIL): /usr/bin/python3.
"""
import argparse
import io
import json
import os
import statistics
import time
from pathlib import Path

import torch
from PIL import Image
from torchvision import transforms


def images_per_second(blobs, transform, runs):
    rates = []
    for _ in range(runs):
        start = time.process_time()  # CPU time, as image_bench's rates
        for blob in blobs:
            with Image.open(io.BytesIO(blob)) as im:
                transform(im.convert("RGB"))
        rates.append(len(blobs) / (time.process_time() - start))
    return statistics.median(rates)


def cpp_rates(path):
    """images/s per benchmark name (median aggregate when repetitions ran)."""
    data = json.loads(Path(path).read_text())
    rates = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name", "median") != "median" or "items_per_second" not in b:
            continue
        name = b.get("run_name", b["name"]).replace("BM_", "")
        rates[name] = b
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=os.environ.get("UREC_IMAGE_BENCH_DIR",
                                                        "/tmp/unirecord-imagenet-like"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cpp-json", help="image_bench --benchmark_out=... JSON file")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(0)
    blobs = [p.read_bytes() for p in sorted(Path(args.dir).glob("*.jpg"))]
    if not blobs:
        raise SystemExit(f"no *.jpg in {args.dir}: run image_bench first")
    train = transforms.Compose([transforms.RandomResizedCrop(224),
                                transforms.RandomHorizontalFlip(), transforms.PILToTensor()])
    val = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                              transforms.PILToTensor()])
    e = images_per_second(blobs, train, args.runs)
    v = images_per_second(blobs, val, args.runs)
    print(f"images: {len(blobs)} from {args.dir}")
    print(f"(e) PIL+torchvision RandomResizedCrop(224)+flip+PILToTensor: {e:8.1f} images/s")
    print(f"    PIL+torchvision Resize(256)+CenterCrop(224)+PILToTensor: {v:8.1f} images/s")
    if not args.cpp_json:
        return
    c = cpp_rates(args.cpp_json)
    rate = lambda name: c[name]["items_per_second"]  # noqa: E731
    print("ratios (images/s over images/s, one core):")
    print(f"  (c) crop decode + resize        / (e): {rate('c_crop_decode_resize') / e:5.2f}")
    print(f"  (d) crop + DCT decode + resize  / (e): {rate('d_crop_dct_decode_resize') / e:5.2f}"
          "   goal >= 3")
    print(f"  (d) / (b) full decode + crop + resize: "
          f"{rate('d_crop_dct_decode_resize') / rate('b_full_decode_crop_resize'):5.2f}"
          "   goal >= 1.4")
    print(f"  validation DecodeCenterCrop / PIL:      {rate('val_center_crop_exact') / v:5.2f}"
          "   goal >= 3")
    print(f"  validation window decode / PIL:        {rate('val_center_window_decode') / v:5.2f}")
    print(f"  validation DecodeCenterCrop / full decode+resize+crop (C++): "
          f"{rate('val_center_crop_exact') / rate('val_full_decode_resize_crop'):5.2f}")
    d = c["d_crop_dct_decode_resize"]
    print(f"  (d) vs floor: {d.get('vs_floor', float('nan')):5.2f} "
          f"(floor {d.get('floor_us', float('nan')):.0f} us/image)   goal <= 1.2")


if __name__ == "__main__":
    main()
