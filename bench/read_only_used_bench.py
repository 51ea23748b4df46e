#!/usr/bin/env python3
"""Reads of only what is used (issue 44): a Loader of labels only over a
JPEG dataset against the same Loader over a dataset holding only those
labels. Before the read plan, a loader read (and checksummed) every field
of a record it batched any field of: the JPEGs too.

    /usr/bin/python3 bench/read_only_used_bench.py --records 20000 --rounds 7 [--threads 1] [--verify on]

Both datasets are written here with unirecord.Writer: "jpeg" as
`urec convert imagefolder` lays one out (image bytes, label int64 indexed,
path string), its images --distinct real JPEGs (PIL, quality 90, about
--image-kb KB each) repeated; "labels" holds the same labels alone (int64
indexed). The loader: unirecord.Loader(image_field=None,
label_field="label", shuffle=True, batch_size=--batch, threads=--threads),
whole epochs until at least 0.5 s, records/s. Rounds alternate the order of
the two (jpeg first on even rounds); the figures are medians over rounds,
and the ratio jpeg/labels is reported as the ratio of the medians and the
median of the per-round ratios. Prints the load average before and after:
on the shared build box, above ~1 the absolute figures are not a quiet
measurement (the ratio, taken in adjacent runs, holds better).
"""
import argparse
import io
import json
import os
import shutil
import statistics
import tempfile
import time

import numpy as np
from PIL import Image

import unirecord


def jpegs(distinct, kb):
    """`distinct` photo-like JPEGs of about `kb` KB."""
    rng = np.random.default_rng(7)
    side = int((kb * 1024 * 3.4) ** 0.5)  # about 3.4 pixels a byte at quality 90 on this smooth noise
    out = []
    for k in range(distinct):
        base = rng.integers(0, 256, size=(side // 8, side // 8, 3), dtype=np.uint8)
        img = Image.fromarray(base).resize((side, side), Image.BILINEAR)
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=90)
        out.append(buf.getvalue())
    return out


def write(root, n, images):
    jpeg_dir, labels_dir = os.path.join(root, "jpeg"), os.path.join(root, "labels")
    jpeg_schema = unirecord.Schema([unirecord.Field("image", "bytes"), unirecord.Field("label", "int64", indexed=True),
                                    unirecord.Field("path", "string")])
    with unirecord.Writer(jpeg_dir, jpeg_schema, "train", sync=False) as w:
        for i in range(n):
            w.write({"image": images[i % len(images)], "label": i % 1000, "path": f"class{i % 1000}/img{i}.jpg"})
    labels_schema = unirecord.Schema([unirecord.Field("label", "int64", indexed=True)])
    with unirecord.Writer(labels_dir, labels_schema, "train", sync=False) as w:
        for i in range(n):
            w.write({"label": i % 1000})
    return jpeg_dir, labels_dir


def records_per_s(path, args):
    dataset = unirecord.Dataset(path, verify_checksums=args.verify == "on")
    loader = unirecord.Loader(dataset, batch_size=args.batch, shuffle=True, image_field=None, label_field="label",
                              threads=args.threads, num_shards=1, shard_id=0)
    seen, epoch = 0, 0
    start = time.perf_counter()
    while True:
        loader.set_epoch(epoch)
        for batch in loader:
            seen += len(batch["label"]) if isinstance(batch, dict) else len(batch[1])
        epoch += 1
        elapsed = time.perf_counter() - start
        if elapsed >= 0.5:
            return seen / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--distinct", type=int, default=16)
    parser.add_argument("--image-kb", type=int, default=100)
    parser.add_argument("--verify", choices=["on", "off"], default="on")
    parser.add_argument("--json", help="write the result here too")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="read_only_used_bench_")
    try:
        images = jpegs(args.distinct, args.image_kb)
        jpeg_dir, labels_dir = write(root, args.records, images)
        load_before = os.getloadavg()
        rows = []
        for r in range(args.rounds):
            order = [("jpeg", jpeg_dir), ("labels", labels_dir)]
            if r % 2:
                order.reverse()
            row = {name: records_per_s(path, args) for name, path in order}
            row["ratio"] = row["jpeg"] / row["labels"]
            rows.append(row)
            print(f"round {r}: jpeg {row['jpeg']:.0f}/s labels {row['labels']:.0f}/s ratio {row['ratio']:.3f}",
                  flush=True)
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    jpeg = statistics.median(r["jpeg"] for r in rows)
    labels = statistics.median(r["labels"] for r in rows)
    result = {
        "module": unirecord.__file__,
        "records": args.records, "threads": args.threads, "batch": args.batch, "verify": args.verify,
        "image_bytes_mean": sum(len(i) for i in images) / len(images),
        "load_before": load_before, "load_after": load_after,
        "jpeg_records_per_s": jpeg, "labels_records_per_s": labels,
        "ratio_of_medians": jpeg / labels, "median_ratio": statistics.median(r["ratio"] for r in rows),
        "rounds": rows,
    }
    print(json.dumps({k: v for k, v in result.items() if k != "rounds"}, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
