"""What adding a field costs (issue 35, format 1.2 field groups, format/SPEC.md
section 1.4): adding a 4-byte scalar against a full rewrite of the dataset with
that field (time and bytes written), adding a 1 KB embedding against the
embedding's own bytes, and the loader reading fields across a shard and its
column file against the same fields stored in one shard.

    /usr/bin/python3 bench/add_field_bench.py --records 1280000 --rounds 3

The dataset is grow_bench.py's (an int64, a short string and a ~100-byte blob
per record: small records, where per-record costs dominate). A "full rewrite"
is what adding a field cost before field groups and what any format without
them pays: writing every record again with the new field (through
unirecord.Writer, as grow_bench.py rewrites). The scalar and the embedding
are numpy arrays (add_fields reads them natively). Loader throughput: one
shuffled epochs (LOADER_EPOCHS) of batches of x and score (no image) with 2
threads, records per second. Medians over --rounds; check the load average first (docs:
bench/README.md)."""
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unirecord  # noqa: E402
from grow_bench import SCHEMA, dataset_bytes, parse_args, records, save_json, write  # noqa: E402

EMBEDDING = 256  # float32: 1 KiB a record
# Epochs a loader round reads: with inflated pages kept (DatasetOptions::page_cache_bytes) an
# epoch of 1.28 M records takes about a second, so one alone is mostly noise and the first pages.
LOADER_EPOCHS = 3


def scores(n):
    return (np.arange(n, dtype=np.float32) * 0.37) % 1.0


def rewrite_with_score(out, n, score):
    """Every record written again, with the new field in the shard."""
    start = time.perf_counter()
    with unirecord.Writer(out, dict(SCHEMA, score="float32"), "train", sync=False, target_shard_bytes=256 << 20,
                          threads=2) as w:
        for k, r in enumerate(records(0, n)):
            r["score"] = float(score[k])
            w.write(r)
    return time.perf_counter() - start


def column_bytes(out, group):
    """Bytes of the column files (and indexes) of field group `group`."""
    return sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out) if ".f%06d." % group in f)


def loader_records_per_s(path, epochs=1):
    loader = unirecord.Loader(unirecord.Dataset(path), batch_size=1024, shuffle=True, threads=2,
                              sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                              fields=unirecord.Fields(["x", "score"], image_field=None, label_field=None))
    seen = 0
    start = time.perf_counter()
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for batch in loader:
            seen += len(batch["x"])
    return seen / (time.perf_counter() - start)


def main():
    args = parse_args(__doc__)
    n = args.records
    rows = []
    for r in range(args.rounds):
        root = tempfile.mkdtemp(prefix="add_field_bench_")
        try:
            load = os.getloadavg()[0]
            base = os.path.join(root, "base")
            write(base, 0, n)
            # The values exist before either is timed: computing them is the user's cost in both.
            score = scores(n)
            rewrite_s = rewrite_with_score(os.path.join(root, "rewrite"), n, score)
            rewrite_bytes = dataset_bytes(os.path.join(root, "rewrite"))
            start = time.perf_counter()
            added = unirecord.add_fields(base, {"score": score}, sync=False)  # as the rewrite
            add_s = time.perf_counter() - start
            add_bytes = column_bytes(base, added["generation"])
            # Loader: x from the shard and score from its column file, against both in one shard.
            split_rps = loader_records_per_s(base, LOADER_EPOCHS)
            one_rps = loader_records_per_s(os.path.join(root, "rewrite"), LOADER_EPOCHS)
            emb = np.random.default_rng(r).standard_normal((n, EMBEDDING), dtype=np.float32)
            start = time.perf_counter()
            embedded = unirecord.add_fields(base, {"emb": emb}, sync=False)
            emb_s = time.perf_counter() - start
            emb_bytes = column_bytes(base, embedded["generation"])
            rows.append({"load_before": load, "rewrite_s": rewrite_s, "rewrite_bytes": rewrite_bytes,
                         "add_scalar_s": add_s, "add_scalar_bytes": add_bytes, "add_embedding_s": emb_s,
                         "add_embedding_bytes": emb_bytes, "embedding_raw_bytes": emb.nbytes,
                         "loader_split_records_per_s": split_rps, "loader_one_shard_records_per_s": one_rps})
            print(json.dumps(rows[-1]), flush=True)
        finally:
            shutil.rmtree(root)
    med = {k: statistics.median(row[k] for row in rows) for k in rows[0]}
    result = {
        "records": n, "rounds": rows, "load_after": os.getloadavg()[0],
        "scalar_time_fraction": med["add_scalar_s"] / med["rewrite_s"],
        "scalar_bytes_fraction": med["add_scalar_bytes"] / med["rewrite_bytes"],
        "embedding_bytes_overhead": med["add_embedding_bytes"] / med["embedding_raw_bytes"] - 1,
        "embedding_s": med["add_embedding_s"],
        "loader_split_over_one_shard": med["loader_split_records_per_s"] / med["loader_one_shard_records_per_s"],
    }
    print(f"{n} records, {args.rounds} rounds (load before each: "
          f"{', '.join('%.2f' % row['load_before'] for row in rows)}; after {result['load_after']:.2f})")
    print(f"add a float32 / full rewrite: time {result['scalar_time_fraction'] * 100:.2f} %, "
          f"bytes {result['scalar_bytes_fraction'] * 100:.2f} % (goal <= 5 % each)")
    print(f"add a 1 KiB embedding: {result['embedding_bytes_overhead'] * 100:.2f} % over its bytes "
          f"(goal <= 2 %), {result['embedding_s']:.1f} s")
    print(f"loader, x + score across shard and column file / in one shard: "
          f"{result['loader_split_over_one_shard']:.3f}x (goal >= 0.9x; "
          f"{med['loader_split_records_per_s']:.0f} vs {med['loader_one_shard_records_per_s']:.0f} records/s)")
    # Each round's own ratios (paired: measured under the same conditions), against the noise across rounds.
    print("per round: add time %s; loader %s" % (
        ", ".join("%.2f %%" % (100 * row["add_scalar_s"] / row["rewrite_s"]) for row in rows),
        ", ".join("%.3fx" % (row["loader_split_records_per_s"] / row["loader_one_shard_records_per_s"]) for row in rows)))
    save_json(result, args.json)


if __name__ == "__main__":
    main()
