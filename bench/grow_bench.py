"""What growing a dataset costs (issue 35, format 1.2): appending 1 % more
records against a full rewrite of the grown dataset (time and bytes
written), and opening a kept version against opening the latest.

    /usr/bin/python3 bench/grow_bench.py --records 1280000 --rounds 3

Records: an int64, a short string and a ~100-byte blob (a small-record
dataset, where per-record costs dominate). A "full rewrite" is what an
append cost before format 1.2 and what any format without segments pays:
writing every record of the grown dataset again. Medians over --rounds;
check the load average first (docs: bench/README.md)."""
import argparse
import json
import os
import shutil
import statistics
import tempfile
import time

import unirecord

SCHEMA = {"x": "int64", "text": "string", "blob": "bytes"}


def records(begin, end):
    for k in range(begin, end):
        yield {"x": k, "text": "r%d" % k, "blob": bytes([k % 251]) * (80 + k % 40)}


def write(out, begin, end, mode="write"):
    start = time.perf_counter()
    with unirecord.Writer(out, SCHEMA, "train", mode=mode, sync=False, target_shard_bytes=256 << 20, threads=2) as w:
        for r in records(begin, end):
            w.write(r)
    return time.perf_counter() - start


def dataset_bytes(out, generation=None):
    total = 0
    for name in os.listdir(out):
        if name.endswith((".urec", ".uidx")) and (generation is None or ".g%06d." % generation in name):
            total += os.path.getsize(os.path.join(out, name))
    return total


def open_seconds(out, version, opens=20):
    times = []
    for _ in range(opens):
        start = time.perf_counter()
        ds = unirecord.Dataset(out, version=version)
        len(ds)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def parse_args(doc, extra=lambda parser: None):
    """--records, --rounds, --json (and what `extra` adds): the growth benchmarks' arguments."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1280000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the results here")
    extra(parser)
    return parser.parse_args()


def save_json(result, path):
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=2)


def main():
    args = parse_args(__doc__, lambda p: p.add_argument("--append-fraction", type=float, default=0.01))
    n = args.records
    extra = max(1, int(n * args.append_fraction))
    load_before = os.getloadavg()[0]
    rows = []
    for _ in range(args.rounds):
        root = tempfile.mkdtemp(prefix="grow_bench_")
        try:
            base = os.path.join(root, "base")
            write(base, 0, n)
            # The peer: every record of the grown dataset written again.
            rewrite_s = write(os.path.join(root, "rewrite"), 0, n + extra)
            rewrite_bytes = dataset_bytes(os.path.join(root, "rewrite"))
            append_s = write(base, n, n + extra, mode="append")
            append_bytes = dataset_bytes(base, generation=2)
            latest = open_seconds(base, 2)
            kept = open_seconds(base, 1)
            rows.append({"rewrite_s": rewrite_s, "append_s": append_s, "rewrite_bytes": rewrite_bytes,
                         "append_bytes": append_bytes, "open_latest_s": latest, "open_version_1_s": kept})
        finally:
            shutil.rmtree(root)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    result = {
        "records": n, "appended": extra, "rounds": rows, "load_before": load_before, "load_after": os.getloadavg()[0],
        "append_time_fraction": med["append_s"] / med["rewrite_s"],
        "append_bytes_fraction": med["append_bytes"] / med["rewrite_bytes"],
        "open_version_over_latest": med["open_version_1_s"] / med["open_latest_s"],
        "open_latest_ms": med["open_latest_s"] * 1e3, "open_version_1_ms": med["open_version_1_s"] * 1e3,
    }
    print(f"{n} records + {extra} appended, {args.rounds} rounds (load {load_before:.2f} -> {result['load_after']:.2f})")
    print(f"append / full rewrite: time {result['append_time_fraction'] * 100:.2f} %, "
          f"bytes {result['append_bytes_fraction'] * 100:.2f} % (goal <= 2 % each)")
    print(f"open version 1 {result['open_version_1_ms']:.2f} ms, latest {result['open_latest_ms']:.2f} ms: "
          f"{result['open_version_over_latest']:.2f}x")
    save_json(result, args.json)


if __name__ == "__main__":
    main()
