#!/usr/bin/env python3
"""PNG decode + crop + resize on one core: unirecord against PIL + torchvision,
both measured in this one process, on the same PNG bytes in memory.

  unirecord: ImageDataset over records holding the PNGs (libpng, then the
             crop/resize/flip stage shared with JPEG), one image per call
  peer:      PIL Image.open(BytesIO) + convert("RGB") + the same torchvision
             transform + PILToTensor

Transforms: train = RandomResizedCrop(224) + RandomHorizontalFlip,
val = Resize(256) + CenterCrop(224). Rates are images/s of CPU time
(time.process_time), the median of --runs passes that go round-robin over the
four cases so that a slow spell of a shared machine falls on all of them.
The set: --count photo-like PNGs (smooth gradients + noise, 500x375 and
375x500) in a mix of modes as they occur in the wild: RGB, RGBA, gray,
palette and 16-bit RGB. Prints the load average at the start: below 0.3 the
numbers are a quiet-machine figure, otherwise they are not.

Run with Debian's python and the built binding, e.g.
  PYTHONPATH=... /usr/bin/python3 bench/png_decode_bench.py  (or .venv/bin/python)
"""
import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
import zlib
import struct

import numpy as np
import torch  # noqa: F401 (torchvision needs it first)
from PIL import Image
from torchvision import transforms

import unirecord


def rgb16_png(rgb8, rng):
    """A 16-bit RGB PNG of the picture (PIL cannot write one): samples
    v * 257 plus noise in the low byte, filter 0, zlib level 6."""
    h, w, _ = rgb8.shape
    wide = rgb8.astype(np.uint16) * 257 + rng.integers(0, 256, rgb8.shape, dtype=np.uint16) % 200
    rows = b"".join(b"\0" + wide[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def make_pngs(count, seed=0):
    rng = np.random.default_rng(seed)
    modes = ["RGB", "RGB", "RGBA", "L", "P", "RGB16"]
    pngs = []
    for k in range(count):
        w, h = (500, 375) if k % 3 else (375, 500)
        yy, xx = np.mgrid[0:h, 0:w]
        phase = rng.uniform(0, 6.28, 3)
        base = np.stack([127 + 100 * np.sin(xx / (40 + 7 * c) + yy / (55 + 5 * c) + phase[c]) for c in range(3)], -1)
        rgb = np.clip(base + rng.normal(0, 8, base.shape), 0, 255).astype(np.uint8)
        mode = modes[k % len(modes)]
        if mode == "RGB16":
            pngs.append((mode, rgb16_png(rgb, rng)))
            continue
        image = Image.fromarray(rgb)
        image = image.quantize(256) if mode == "P" else image.convert(mode)
        buf = io.BytesIO()
        image.save(buf, "PNG")
        pngs.append((mode, buf.getvalue()))
    return pngs


def rate(run, n):
    start = time.process_time()
    run()
    return n / (time.process_time() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=120)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    load_at_start = os.getloadavg()[0]
    torch.set_num_threads(1)

    pngs = make_pngs(args.count)
    work = tempfile.mkdtemp(prefix="urec-png-bench-")
    records = os.path.join(work, "records")
    with unirecord.Writer(records, {"image": "bytes", "label": "int64"}, sync=False) as w:
        for i, (_, data) in enumerate(pngs):
            w.write({"image": data, "label": i})
    blobs = [data for _, data in pngs]

    ours = {
        "train": unirecord.ImageDataset(records, unirecord.RandomResizedCrop(224, flip=True), seed=1),
        "val": unirecord.ImageDataset(records, unirecord.CenterCrop(224, resize=256)),
    }
    peer = {
        "train": transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                     transforms.PILToTensor()]),
        "val": transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.PILToTensor()]),
    }

    def ours_pass(name):
        ds = ours[name]
        return lambda: [ds[i] for i in range(len(ds))]

    def peer_pass(name):
        t = peer[name]

        def run():
            for blob in blobs:
                with Image.open(io.BytesIO(blob)) as im:
                    t(im.convert("RGB"))
        return run

    cases = {f"{side} {name}": (ours_pass(name) if side == "unirecord" else peer_pass(name))
             for name in ("train", "val") for side in ("unirecord", "PIL+torchvision")}
    for run in cases.values():  # warm-up, untimed
        run()
    rates = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, run in cases.items():
            rates[name].append(rate(run, len(blobs)))
    medians = {name: statistics.median(r) for name, r in rates.items()}

    mix = {}
    for mode, _ in pngs:
        mix[mode] = mix.get(mode, 0) + 1
    print(f"load average at start: {load_at_start:.2f}"
          + ("" if load_at_start < 0.3 else " (>= 0.3: not a quiet-machine figure)"))
    print(f"{len(pngs)} PNGs, modes {mix}, {sum(map(len, blobs)) / 1e6:.1f} MB; images/s of CPU time, "
          f"median of {args.runs}")
    result = {"load_at_start": load_at_start, "count": len(pngs), "modes": mix, "rates": medians, "ratios": {}}
    for name in ("train", "val"):
        a, b = medians[f"unirecord {name}"], medians[f"PIL+torchvision {name}"]
        result["ratios"][name] = a / b
        print(f"  {name:5s}  unirecord {a:7.1f}/s  PIL+torchvision {b:7.1f}/s  ratio {a / b:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
