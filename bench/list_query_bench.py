#!/usr/bin/env python3
"""Queries on a list field (issue 35, docs/query.md "lists of values"):
unirecord's list index (format/SPEC.md section 8.4) against SQLite on the
same synthetic COCO-like data, both in this one process.

Data: --records records (default 1,281,167), each with a `category_id` list
of 0-20 int64 values (mean about 7, like COCO's annotations per image) drawn
from 80 categories, skewed (category 1 in about half the lists, as COCO's
"person"), repeats within a list allowed.

unirecord: Dataset.query(EXPR) -> numpy uint64 ids, ascending, over the
dataset written with `category_id` indexed (a list index).
SQLite (Python's sqlite3 module), two layouts of the same data:
  child    a child table ann(record_id, value), one row per element, with an
           index on (value, record_id), and rec(id, n) with an index on n
           (the list's length): the indexed way to do it in SQL.
  json     rec_json(id, cats) with the list as JSON text, queried with
           json_each / json_array_length: what a schemaless store does.
Every query's answer (ascending ids) is checked equal across all engines
before timing. Times are medians of --runs runs per query (after one
warm-up), interleaved (unirecord, child, json, next query ...) so that a slow
spell falls on all. Prints the load average before and after: above ~0.3
the figures are not a quiet-machine measurement.

  .venv/bin/python bench/list_query_bench.py --records 1281167 --runs 7 --json bench/results/list_query.json
"""
import argparse
import json
import os
import pathlib
import sqlite3
import statistics
import tempfile
import time

import numpy as np

import unirecord
from unirecord import Field

QUERIES = [
    # (name, unirecord expression, SQL over the child table, SQL over the JSON table)
    ("contains, selective (category 42)", "category_id contains 42",
     "SELECT DISTINCT record_id FROM ann WHERE value = 42 ORDER BY record_id",
     "SELECT id FROM rec_json WHERE EXISTS (SELECT 1 FROM json_each(rec_json.cats) WHERE value = 42) ORDER BY id"),
    ("contains, broad (category 1)", "category_id contains 1",
     "SELECT DISTINCT record_id FROM ann WHERE value = 1 ORDER BY record_id",
     "SELECT id FROM rec_json WHERE EXISTS (SELECT 1 FROM json_each(rec_json.cats) WHERE value = 1) ORDER BY id"),
    ("any of 3 categories", "any(category_id in [17, 42, 63])",
     "SELECT DISTINCT record_id FROM ann WHERE value IN (17, 42, 63) ORDER BY record_id",
     "SELECT id FROM rec_json WHERE EXISTS (SELECT 1 FROM json_each(rec_json.cats) WHERE value IN (17, 42, 63)) "
     "ORDER BY id"),
    ("len >= 15", "len(category_id) >= 15",
     "SELECT id FROM rec WHERE n >= 15 ORDER BY id",
     "SELECT id FROM rec_json WHERE json_array_length(cats) >= 15 ORDER BY id"),
    ("contains and len", "category_id contains 42 and len(category_id) <= 3",
     "SELECT DISTINCT a.record_id FROM ann a JOIN rec r ON r.id = a.record_id WHERE a.value = 42 AND r.n <= 3 "
     "ORDER BY a.record_id",
     "SELECT id FROM rec_json WHERE json_array_length(cats) <= 3 AND EXISTS (SELECT 1 FROM json_each(rec_json.cats) "
     "WHERE value = 42) ORDER BY id"),
]


def make_lists(n, seed):
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.poisson(7.0, n), 20)
    lengths[rng.random(n) < 0.01] = 0  # some images without annotations
    total = int(lengths.sum())
    # Skewed categories: 1 often, the others Zipf-like over 2..80.
    values = np.where(rng.random(total) < 0.11, 1, 2 + np.minimum(rng.zipf(1.3, total) - 1, 78)).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return lengths, values, offsets


def write_unirecord(out, lengths, values, offsets, shards):
    field = Field("category_id", "int64", shape=(-1,), indexed=True)
    with unirecord.Writer(out, {"category_id": field}, name="lists", num_shards=shards,
                          expected_records=len(lengths), sync=False) as w:
        for i in range(len(lengths)):
            w.write({"category_id": values[offsets[i]:offsets[i + 1]]})
    return pathlib.Path(out) / "lists"


def write_sqlite(path, lengths, values, offsets):
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE TABLE rec(id INTEGER PRIMARY KEY, n INTEGER)")
    db.execute("CREATE TABLE ann(record_id INTEGER, value INTEGER)")
    db.execute("CREATE TABLE rec_json(id INTEGER PRIMARY KEY, cats TEXT)")
    ids = np.repeat(np.arange(len(lengths)), lengths)
    db.executemany("INSERT INTO rec VALUES (?, ?)", zip(range(len(lengths)), lengths.tolist()))
    db.executemany("INSERT INTO ann VALUES (?, ?)", zip(ids.tolist(), values.tolist()))
    db.executemany("INSERT INTO rec_json VALUES (?, ?)",
                   ((i, json.dumps(values[offsets[i]:offsets[i + 1]].tolist())) for i in range(len(lengths))))
    db.execute("CREATE INDEX ann_value ON ann(value, record_id)")
    db.execute("CREATE INDEX rec_n ON rec(n)")
    db.commit()
    db.execute("ANALYZE")
    db.close()


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1281167)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir", default=os.environ.get("UREC_BENCH_DIR", tempfile.gettempdir() + "/urec_list_query_bench"))
    ap.add_argument("--json")
    args = ap.parse_args()
    load_before = os.getloadavg()
    root = pathlib.Path(args.dir) / str(args.records)
    root.mkdir(parents=True, exist_ok=True)
    lengths, values, offsets = make_lists(args.records, seed=35)
    path = root / "lists"
    if not (path / "lists.uset").exists():
        t, _ = timed(lambda: write_unirecord(path, lengths, values, offsets, args.shards))
        print(f"wrote unirecord dataset in {t:.1f} s")
    db_path = root / "lists.sqlite"
    if not db_path.exists():
        t, _ = timed(lambda: write_sqlite(str(db_path) + ".tmp", lengths, values, offsets))
        os.rename(str(db_path) + ".tmp", db_path)
        print(f"wrote SQLite database in {t:.1f} s")
    ds = unirecord.Dataset(path / "lists")
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA cache_size=-1000000")  # 1 GB: everything stays in SQLite's cache
    engines = {
        "unirecord": lambda q: ds.query(q[1]),
        "sqlite_child": lambda q: np.array([r[0] for r in db.execute(q[2]).fetchall()], np.uint64),
        "sqlite_json": lambda q: np.array([r[0] for r in db.execute(q[3]).fetchall()], np.uint64),
    }
    results = []
    for q in QUERIES:
        answers = {name: fn(q) for name, fn in engines.items()}  # warm-up and check
        for name, a in answers.items():
            assert np.array_equal(a, answers["unirecord"]), (q[0], name, len(a), len(answers["unirecord"]))
        times = {name: [] for name in engines}
        for _ in range(args.runs):
            for name, fn in engines.items():
                times[name].append(timed(lambda: fn(q))[0])
        med = {name: statistics.median(t) for name, t in times.items()}
        row = {"query": q[0], "expression": q[1], "matches": int(len(answers["unirecord"])),
               "median_s": med, "runs_s": times,
               "ratio_child": med["sqlite_child"] / med["unirecord"], "ratio_json": med["sqlite_json"] / med["unirecord"]}
        results.append(row)
        print(f"{q[0]:40s} {row['matches']:>8d} matches  unirecord {med['unirecord'] * 1e3:8.3f} ms  "
              f"child {med['sqlite_child'] * 1e3:8.2f} ms ({row['ratio_child']:6.1f}x)  "
              f"json {med['sqlite_json'] * 1e3:9.1f} ms ({row['ratio_json']:7.1f}x)", flush=True)
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({
            "records": args.records, "shards": args.shards, "runs": args.runs, "load_before": load_before,
            "load_after": load_after, "elements": int(len(values)), "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
