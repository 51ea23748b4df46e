#!/usr/bin/env python3
"""Batches of any field (issue 17): unirecord.Loader against a torch
DataLoader with a padding collate, both measured in this one process.

tokens     no image; int32 sequences of 128-2,048 tokens, padded batches.
           unirecord: Loader(image_field=None, fields=["tokens"]), 1 thread
           (and 2); peer: DataLoader(num_workers=0) over unirecord.Dataset
           with a padding collate (torch.nn.utils.rnn.pad_sequence + lengths).
           Also the payload rate (token bytes/s) against a plain memory copy
           of the same bytes (numpy.copyto).
detection  RandomResizedCrop(224) + horizontal flip, boxes mapped onto the
           output and dropped when empty with their category ids, padded.
           unirecord: the JPEG files and their boxes converted by
           convert_coco (as a user makes the dataset: JPEGs in the fast
           layout), Loader(boxes="boxes", box_aligned=["category_id"]); also
           at 1 thread over the original JPEGs written by unirecord.Writer;
           peer: DataLoader over the same JPEG files and a JSON of the
           boxes, PIL + torchvision's RandomResizedCrop.get_params +
           resized_crop + hflip, the boxes mapped with torch ops, a padding
           collate; 1 thread vs num_workers=0 and 2 threads vs 2 workers.

--malloc huge re-executes the script with glibc's huge-page malloc
(peer_malloc.py), for both sides; unlike loader_peer.py's image peer, these
peers' batches (0.5-10 MB) do not fault page by page, and huge pages made
neither faster (bench/README.md), so the default leaves malloc as it is.
Rates are samples/s of wall time over whole epochs (repeated to at least
0.5 s per pass), the median of --runs passes that go round-robin over the
cases (ours and the peer interleaved), so that a slow spell of a shared
machine falls on all of them. Prints the
load average at the start and the end: above ~0.3 the figures are not a
quiet-machine measurement.

  .venv/bin/python bench/fields_bench.py tokens --records 20000 --runs 5 [--verify off]
  .venv/bin/python bench/fields_bench.py detection --images 200 --runs 3

--profile N (tokens): only unirecord's Loader, 1 thread, N epochs, each
printed in us per sample; a target for `perf record -g --delay 5000`.
"""
import argparse
import io
import json
import os
import pathlib
import statistics
import tempfile
import time

import numpy as np
import torch
import torch.utils.data
from PIL import Image
from torchvision.transforms import RandomResizedCrop
from torchvision.transforms import functional as F

import unirecord
from unirecord import Field

import peer_malloc

BATCH = 64


def timed(run, min_seconds=0.5):
    """Samples/s of whole epochs of `run`, repeated until min_seconds have
    passed: an epoch of tokens takes ~30 ms, short enough for one slow
    spell of a shared machine to decide it."""
    start = time.perf_counter()
    count = 0
    while True:
        count += run()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return count / elapsed


def median_rates(cases, runs):
    for run in cases.values():  # warm-up (page cache, allocator), untimed
        run()
    rates = {name: [] for name in cases}
    for _ in range(runs):
        for name, run in cases.items():
            rates[name].append(timed(run))
    return {name: statistics.median(r) for name, r in rates.items()}


def epoch_of(loader, count):
    """A pass over one epoch of `loader`; returns the samples, counted by count(batch)."""
    def run():
        return sum(count(batch) for batch in loader)
    return run


def pad_collate(tensors, pad_value=0):
    """torch's padding of a list of [L, ...] tensors, with the lengths."""
    return (torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True, padding_value=pad_value),
            torch.tensor([len(t) for t in tensors]))


# --- tokens -------------------------------------------------------------------

class TokenRecords(torch.utils.data.Dataset):
    def __init__(self, path, verify):
        self.ds = unirecord.Dataset(path, verify_checksums=verify)

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, i):
        return torch.from_numpy(self.ds[i]["tokens"])


def tokens(args, work):
    rng = np.random.default_rng(0)
    lengths = rng.integers(128, 2049, args.records)
    path = os.path.join(work, "tokens")
    with unirecord.Writer(path, {"tokens": Field("tokens", "int32", shape=(-1,))}, "tokens", sync=False) as w:
        for n in lengths:
            w.write({"tokens": rng.integers(0, 50000, n, dtype=np.int32)})
    payload = int(lengths.sum()) * 4

    def ours(threads):
        return epoch_of(unirecord.Loader(path, batch_size=BATCH, shuffle=True, threads=threads,
                                         sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                                         fields=unirecord.Fields(["tokens"], image_field=None, label_field=None),
                                         decode=unirecord.Decode(verify_checksums=args.verify == "on")),
                        lambda batch: len(batch["tokens"]))

    peer = epoch_of(torch.utils.data.DataLoader(TokenRecords(path, args.verify == "on"), batch_size=BATCH, shuffle=True, num_workers=0,
                                                collate_fn=pad_collate), lambda batch: len(batch[0]))

    if args.profile:
        loader = ours(1)
        for epoch in range(args.profile):
            start = time.perf_counter()
            count = loader()
            print(f"epoch {epoch}: {(time.perf_counter() - start) / count * 1e6:.2f} us per sample")
        return {"records": args.records, "profile_epochs": args.profile}

    src = np.frombuffer(rng.bytes(payload), dtype=np.uint8)
    dst = np.empty_like(src)

    def memcpy():
        np.copyto(dst, src)
        return args.records  # samples' worth of bytes

    rates = median_rates({"unirecord 1 thread": ours(1), "unirecord 2 threads": ours(2),
                          "DataLoader num_workers=0": peer, "memcpy": memcpy}, args.runs)
    bytes_per_sample = payload / args.records
    print(f"{args.records} sequences of 128-2048 int32 tokens ({payload / 1e6:.0f} MB), batch {BATCH}, padded, "
          f"checksums verified: {args.verify}")
    for name, r in rates.items():
        print(f"  {name:26s} {r:10.0f} samples/s  {r * bytes_per_sample / 1e9:6.2f} GB/s of tokens")
    ratios = {"1 thread vs num_workers=0": rates["unirecord 1 thread"] / rates["DataLoader num_workers=0"],
              "2 threads vs num_workers=0": rates["unirecord 2 threads"] / rates["DataLoader num_workers=0"],
              "1 thread vs memcpy": rates["unirecord 1 thread"] / rates["memcpy"]}
    for name, r in ratios.items():
        print(f"  ratio {name}: {r:.2f}x")
    return {"records": args.records, "payload_bytes": payload, "rates": rates, "ratios": ratios}


# --- detection ------------------------------------------------------------------

def photo_jpeg(rng, width, height):
    yy, xx = np.mgrid[0:height, 0:width]
    phase = rng.uniform(0, 6.28, 3)
    base = np.stack([127 + 100 * np.sin(xx / (40 + 7 * c) + yy / (55 + 5 * c) + phase[c]) for c in range(3)], -1)
    img = np.clip(base + rng.normal(0, 10, base.shape), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(img).save(out, "JPEG", quality=90)
    return out.getvalue()


class DetectionFiles(torch.utils.data.Dataset):
    """The peer: JPEG files + a JSON of COCO-style xywh boxes, PIL and
    torchvision, the boxes mapped with torch ops."""

    def __init__(self, folder, annotations, size=224):
        self.folder = folder
        with open(annotations) as f:
            self.items = json.load(f)
        self.crop = RandomResizedCrop(size)
        self.size = size

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        item = self.items[i]
        with Image.open(os.path.join(self.folder, item["file"])) as im:
            img = im.convert("RGB")
        y, x, h, w = self.crop.get_params(img, self.crop.scale, self.crop.ratio)
        out = F.resized_crop(img, y, x, h, w, [self.size, self.size], antialias=True)
        flip = torch.rand(1).item() < 0.5
        if flip:
            out = F.hflip(out)
        image = F.pil_to_tensor(out)
        boxes = torch.tensor(item["boxes"], dtype=torch.float32).reshape(-1, 4)
        x0 = (boxes[:, 0] - x) * self.size / w
        x1 = (boxes[:, 0] + boxes[:, 2] - x) * self.size / w
        y0 = (boxes[:, 1] - y) * self.size / h
        y1 = (boxes[:, 1] + boxes[:, 3] - y) * self.size / h
        if flip:
            x0, x1 = self.size - x1, self.size - x0
        x0, x1, y0, y1 = (v.clamp(0, self.size) for v in (x0, x1, y0, y1))
        keep = (x1 > x0) & (y1 > y0)
        mapped = torch.stack([x0, y0, x1 - x0, y1 - y0], 1)[keep]
        return image, mapped, torch.tensor(item["category_id"], dtype=torch.int64)[keep]


def detection_collate(samples):
    images = torch.stack([s[0] for s in samples])
    boxes, box_lengths = pad_collate([s[1] for s in samples])
    categories, _ = pad_collate([s[2] for s in samples])
    return images, boxes, box_lengths, categories


def detection(args, work):
    rng = np.random.default_rng(0)
    folder = os.path.join(work, "images")
    os.makedirs(folder)
    items = []
    coco = {"images": [], "annotations": [], "categories": [{"id": c, "name": f"c{c}"} for c in range(1, 91)]}
    written = os.path.join(work, "written")
    schema = [Field("image", "bytes"), Field("boxes", "float32", shape=(-1, 4)),
              Field("category_id", "int64", shape=(-1,))]
    with unirecord.Writer(written, unirecord.Schema(schema), "det", sync=False) as w:
        for i in range(args.images):
            width, height = (500, 375) if i % 3 else (375, 500)
            data = photo_jpeg(rng, width, height)
            name = f"{i:06d}.jpg"
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
            n = int(rng.integers(0, 12))
            boxes = np.stack([rng.uniform(0, width - 10, n), rng.uniform(0, height - 10, n),
                              rng.uniform(8, width / 3, n), rng.uniform(8, height / 3, n)], -1).astype(np.float32)
            categories = rng.integers(1, 91, n)
            items.append({"file": name, "boxes": boxes.reshape(n, 4).tolist(), "category_id": categories.tolist()})
            w.write({"image": data, "boxes": boxes.reshape(n, 4), "category_id": categories})
            coco["images"].append({"id": i, "file_name": name, "width": width, "height": height})
            for box, category in zip(boxes.reshape(n, 4).tolist(), categories.tolist()):
                coco["annotations"].append({"id": len(coco["annotations"]), "image_id": i, "bbox": box,
                                            "category_id": category, "iscrowd": 0, "area": box[2] * box[3]})
    annotations = os.path.join(work, "annotations.json")
    with open(annotations, "w") as f:
        json.dump(items, f)
    # What a user runs: the same files and boxes through convert_coco, whose
    # JPEGs are rewritten into the fast layout (docs/convert.md).
    coco_json = os.path.join(work, "coco.json")
    with open(coco_json, "w") as f:
        json.dump(coco, f)
    converted = os.path.join(work, "converted")
    unirecord.convert_coco(coco_json, folder, converted, num_shards=1)

    def ours(threads, path=converted):
        return epoch_of(unirecord.Loader(path, batch_size=BATCH, shuffle=True, threads=threads,
                                         transform=unirecord.RandomResizedCrop(224, flip=True),
                                         sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                                         fields=unirecord.Fields(label_field=None, boxes="boxes",
                                                                 box_aligned=["category_id"])),
                        lambda batch: len(batch["image"]))

    def peer(workers):
        return epoch_of(torch.utils.data.DataLoader(DetectionFiles(folder, annotations), batch_size=BATCH,
                                                    shuffle=True, num_workers=workers, collate_fn=detection_collate,
                                                    persistent_workers=workers > 0),
                        lambda batch: len(batch[0]))

    rates = median_rates({"unirecord 1 thread": ours(1), "unirecord 1 thread, Writer": ours(1, written),
                          "DataLoader num_workers=0": peer(0), "unirecord 2 threads": ours(2),
                          "DataLoader num_workers=2": peer(2)}, args.runs)
    print(f"{args.images} JPEGs (500x375 / 375x500), 0-11 boxes each, RandomResizedCrop(224) + flip, batch {BATCH}; "
          "unirecord's records from convert_coco (\"Writer\": the original JPEGs written as they are)")
    for name, r in rates.items():
        print(f"  {name:28s} {r:8.1f} images/s")
    ratios = {"1 thread vs num_workers=0": rates["unirecord 1 thread"] / rates["DataLoader num_workers=0"],
              "1 thread, Writer vs num_workers=0": rates["unirecord 1 thread, Writer"] / rates["DataLoader num_workers=0"],
              "2 threads vs 2 workers": rates["unirecord 2 threads"] / rates["DataLoader num_workers=2"]}
    for name, r in ratios.items():
        print(f"  ratio {name}: {r:.2f}x")
    return {"images": args.images, "rates": rates, "ratios": ratios}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["tokens", "detection"])
    parser.add_argument("--records", type=int, default=20000, help="tokens: sequences")
    parser.add_argument("--images", type=int, default=200, help="detection: images")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--verify", choices=["on", "off"], default="on",
                        help="tokens: verify_checksums of both sides (off: no checksum, no truncation check per read)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="tokens: only unirecord's Loader (1 thread) for N epochs, for a profiler")
    parser.add_argument("--malloc", choices=peer_malloc.CHOICES, default="default",
                        help="this process's malloc (peer_malloc.py): as is, or with transparent huge pages")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    peer_malloc.reexec_with(args.malloc)
    torch.set_num_threads(1)
    load_at_start = os.getloadavg()
    print("load average at start: %.2f %.2f %.2f" % load_at_start)
    with tempfile.TemporaryDirectory(prefix="urec-fields-bench-") as work:
        result = tokens(args, work) if args.what == "tokens" else detection(args, work)
    load_at_end = os.getloadavg()
    print("load average at end:   %.2f %.2f %.2f" % load_at_end
          + ("" if max(load_at_start[0], load_at_end[0]) < 0.3 else "  (not a quiet-machine figure)"))
    result.update(what=args.what, runs=args.runs, verify=args.verify, malloc=args.malloc, load_at_start=load_at_start,
                  load_at_end=load_at_end)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
