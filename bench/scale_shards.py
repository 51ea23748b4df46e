"""Measures what docs/scale.md needs at a large shard count: a dataset of
N one-record shards written as staged parts (PartWriter, next_shard per
record), the commit's time (verify + stamp every shard + manifest), the
manifest's size, Dataset open time and the process's RSS after the open.

    .venv/bin/python bench/scale_shards.py --shards 99999 --parts 16 --out /tmp/scale
"""
import argparse
import json
import os
import resource
import shutil
import sys
import time

import unirecord

SCHEMA = {"image": "bytes", "label": ("int64", True), "path": "string", "width": ("int32", True),
          "height": ("int32", True), "jpeg_layout": "int32", "source_size": "int64", "source_xxh3": "int64"}


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shards", type=int, default=99999)
    p.add_argument("--parts", type=int, default=16)
    p.add_argument("--out", default="/tmp/unirecord-scale")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    schema = unirecord.Schema([unirecord.Field(n, t[0], indexed=True) if isinstance(t, tuple) else unirecord.Field(n, t)
                               for n, t in SCHEMA.items()])
    result = {"shards": args.shards, "parts": args.parts}
    start = time.monotonic()
    staged = unirecord.StagedWrite(args.out, "big", args.parts, threads=args.threads, sync=False)
    per_part = [args.shards // args.parts + (1 if k < args.shards % args.parts else 0) for k in range(args.parts)]
    k = 0
    for part, n in enumerate(per_part):
        with unirecord.PartWriter(args.out, schema, "big", token=staged.token, part=part, num_parts=args.parts,
                                  classes=["c%d" % i for i in range(1000)], sync=False) as w:
            for i in range(n):
                if i:
                    w.next_shard()
                w.write({"image": b"x" * 1000, "label": k % 1000, "path": "c/%08d.JPEG" % k, "width": 500,
                         "height": 375, "jpeg_layout": 1, "source_size": 1000, "source_xxh3": k})
                k += 1
    result["write_parts_s"] = time.monotonic() - start
    t = time.monotonic()
    summary = staged.commit()
    result["commit_s"] = time.monotonic() - t
    result["manifest_bytes"] = os.path.getsize(summary["manifest_path"])
    result["index_bytes_per_shard"] = os.path.getsize(summary["index_paths"][0])
    result["shard_bytes"] = os.path.getsize(summary["shard_paths"][0])
    print(json.dumps(result), file=sys.stderr, flush=True)
    before = rss_mb()
    t = time.monotonic()
    try:
        ds = unirecord.Dataset(args.out)
    except OSError as e:  # e.g. vm.max_map_count: two mappings per shard
        result["open_error"] = str(e)
        ds = None
    result["open_s"] = time.monotonic() - t
    result["rss_open_mb"] = rss_mb() - before
    if ds is not None:
        result["records"] = len(ds)
        t = time.monotonic()
        for i in range(0, len(ds), max(1, len(ds) // 1000)):
            ds[i]["label"]
        result["1000_reads_s"] = time.monotonic() - t
    with open("/proc/sys/vm/max_map_count") as f:
        result["vm_max_map_count"] = int(f.read())
    result["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["load_average"] = os.getloadavg()
    json.dump(result, sys.stdout, indent=1)
    print()
    shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
