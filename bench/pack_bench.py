#!/usr/bin/env python3
"""Sequence packing (issue 34): unirecord.Loader(pack=Pack(...)) against
plain Python packers, all measured in this one process at one thread.

The corpus: --docs documents (default 100,000) of int32 tokens with
log-normal lengths (median ~600 tokens, sigma 1.0, a tail past
seq_len=4096, capped at 8 * 4096), written once under --work.

  unirecord   Loader(image_field=None, fields=["tokens"], pack=Pack(4096,
              strategy=S, window=1024), threads=1, batch_size=8): rows of
              4096 with segment_ids, positions, cu_seqlens and ids.
  first-fit   torch DataLoader(num_workers=0) over unirecord.Dataset, batches
              of 1024 documents, a collate that packs them first-fit into rows
              of 4096 (overlong documents split) and builds the same tensors.
  flattening  the algorithm of transformers' DataCollatorWithFlattening,
              re-implemented (it is not installed here): each batch of
              documents concatenated into one row, position ids restarting
              per document, cu_seqlens; over the same DataLoader.

Rates: rows/s (tokens / 4096 for flattening, whose rows have no fixed
length) and tokens/s of wall time over one epoch, medians of --runs passes
that go round-robin over the cases. Padding fraction per strategy over the
epoch. Resident memory at the end of each case's epoch, anonymous (what the
loader or the collate holds) and file-backed (the mapped dataset's pages,
which the kernel may drop), the largest over the runs. The load average at the start and the end
says whether the machine was quiet (above ~0.3 the figures are not a
quiet-machine measurement).

  .venv/bin/python bench/pack_bench.py --docs 100000 --runs 3 [--json OUT]
"""
import argparse
import json
import os
import pathlib
import statistics
import tempfile
import time

import numpy as np
import torch
import torch.utils.data

import unirecord

SEQ_LEN = 4096
WINDOW = 1024


def write_corpus(path, docs, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.maximum(rng.lognormal(np.log(600), 1.0, docs).astype(np.int64), 1), 8 * SEQ_LEN)
    schema = unirecord.Schema({"tokens": unirecord.Field("tokens", "int32", shape=(-1,))})
    vocab = rng.integers(0, 50000, int(lengths.max()) + 1, dtype=np.int32)
    with unirecord.Writer(path, schema, "corpus", sync=False) as w:
        for i, n in enumerate(lengths):
            w.write({"tokens": np.roll(vocab[:n], i)})
    return lengths


def resident_mib():
    """(anonymous, file-backed) resident MiB of this process now: the mapped
    dataset's pages are file-backed and the kernel may drop them; what a
    loader holds itself is anonymous."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) / 1024
    return fields["RssAnon"], fields["RssFile"]


def run_unirecord(path, strategy):
    loader = unirecord.Loader(path, 8, True, threads=1, pack=unirecord.Pack(SEQ_LEN, strategy=strategy, window=WINDOW),
                              fields=unirecord.Fields(["tokens"], image_field=None, label_field=None))
    rows = tokens = 0
    for batch in loader:
        rows += batch["tokens"].shape[0]
    stats = loader.stats()
    tokens = stats["tokens"]
    return rows, tokens, stats["padding"] / (stats["padding"] + stats["tokens"]), resident_mib()


def first_fit_collate(samples):
    """First-fit within the batch; overlong documents split; the tensors the native loader gives."""
    items = []
    for i, s in enumerate(samples):
        t = s["tokens"]
        for start in range(0, len(t), SEQ_LEN):
            items.append((i, t[start:start + SEQ_LEN]))
    rows, room = [], []
    for i, piece in items:
        for r in range(len(rows)):
            if room[r] >= len(piece):
                break
        else:
            rows.append([])
            room.append(SEQ_LEN)
            r = len(rows) - 1
        rows[r].append((i, piece))
        room[r] -= len(piece)
    tokens = torch.zeros((len(rows), SEQ_LEN), dtype=torch.int32)
    segment_ids = torch.zeros((len(rows), SEQ_LEN), dtype=torch.int32)
    positions = torch.zeros((len(rows), SEQ_LEN), dtype=torch.int32)
    cu, ids = [0], []
    for r, row in enumerate(rows):
        at = 0
        for s, (i, piece) in enumerate(row):
            n = len(piece)
            tokens[r, at:at + n] = torch.from_numpy(np.asarray(piece))
            segment_ids[r, at:at + n] = s + 1
            positions[r, at:at + n] = torch.arange(n, dtype=torch.int32)
            cu.append(cu[-1] + n)
            ids.append(i)
            at += n
    return dict(tokens=tokens, segment_ids=segment_ids, positions=positions,
                cu_seqlens=torch.tensor(cu, dtype=torch.int32), id=torch.tensor(ids), used=SEQ_LEN * len(rows) - sum(room))


def flattening_collate(samples):
    """DataCollatorWithFlattening's algorithm: one row, position ids restarting per document."""
    input_ids, position_ids, cu = [], [], [0]
    for s in samples:
        ids = s["tokens"].tolist()
        input_ids += ids
        position_ids += list(range(len(ids)))
        cu.append(cu[-1] + len(ids))
    return dict(input_ids=torch.tensor([input_ids]), position_ids=torch.tensor([position_ids]),
                cu_seqlens=torch.tensor(cu, dtype=torch.int32), used=len(input_ids))


def run_python(path, collate):
    dataset = unirecord.Dataset(path, fields=["tokens"])
    loader = torch.utils.data.DataLoader(dataset, batch_size=WINDOW, shuffle=True, num_workers=0,
                                         collate_fn=collate, generator=torch.Generator().manual_seed(0))
    rows = tokens = 0
    for batch in loader:
        tokens += batch["used"]
        rows += batch["tokens"].shape[0] if "tokens" in batch else 0
    return rows or tokens / SEQ_LEN, tokens, None, resident_mib()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=100000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=pathlib.Path)
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="pack_bench"))
    path = work / f"corpus{args.docs}"
    if not (path / "corpus.uset").exists():
        t0 = time.monotonic()
        lengths = write_corpus(path, args.docs)
        print(f"corpus: {args.docs} documents, {int(lengths.sum())} tokens, median {int(np.median(lengths))}, "
              f"{int((lengths > SEQ_LEN).sum())} longer than {SEQ_LEN}; written in {time.monotonic() - t0:.1f} s")
    load_before = os.getloadavg()[0]
    cases = {"unirecord best_fit": lambda: run_unirecord(path, "best_fit"),
             "unirecord first_fit": lambda: run_unirecord(path, "first_fit"),
             "unirecord concat": lambda: run_unirecord(path, "concat"),
             "python first-fit collate": lambda: run_python(path, first_fit_collate),
             "python flattening collate": lambda: run_python(path, flattening_collate)}
    results = {name: {"rows_per_s": [], "tokens_per_s": []} for name in cases}
    for run in range(args.runs):
        for name, case in cases.items():
            t0 = time.monotonic()
            rows, tokens, padding, (anon, file) = case()
            wall = time.monotonic() - t0
            r = results[name]
            r["rows_per_s"].append(rows / wall)
            r["tokens_per_s"].append(tokens / wall)
            if padding is not None:
                r["padding"] = padding
            r["rss_anon_mib"] = max(r.get("rss_anon_mib", 0), anon)
            r["rss_file_mib"] = max(r.get("rss_file_mib", 0), file)
            print(f"run {run + 1} {name:28s} {rows / wall:10.1f} rows/s {tokens / wall / 1e6:8.2f} M tokens/s"
                  + (f"  padding {padding:.4f}" if padding is not None else ""), flush=True)
    load_after = os.getloadavg()[0]
    print(f"\nmedians of {args.runs} runs, 1 thread, seq_len {SEQ_LEN}, window {WINDOW}; "
          f"load average {load_before:.2f} before, {load_after:.2f} after")
    peer = statistics.median(results["python first-fit collate"]["rows_per_s"])
    flat = statistics.median(results["python flattening collate"]["rows_per_s"])
    summary = {"docs": args.docs, "load_before": load_before, "load_after": load_after, "cases": {}}
    for name, r in results.items():
        rows = statistics.median(r["rows_per_s"])
        tokens = statistics.median(r["tokens_per_s"])
        line = f"{name:28s} {rows:10.1f} rows/s {tokens / 1e6:8.2f} M tokens/s"
        if name.startswith("unirecord"):
            line += f"  {rows / peer:6.1f}x first-fit collate  {rows / flat:6.1f}x flattening  padding {r['padding']:.4f}"
        line += f"  RSS anon {r['rss_anon_mib']:.0f} MiB, file {r['rss_file_mib']:.0f} MiB"
        print(line)
        summary["cases"][name] = dict(rows_per_s=rows, tokens_per_s=tokens, padding=r.get("padding"),
                                      rss_anon_mib=r["rss_anon_mib"], rss_file_mib=r["rss_file_mib"],
                                      runs=r["rows_per_s"])
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
