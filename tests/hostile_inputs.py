"""Hostile converter inputs of issue 36, written the same way for the CLI
suite (tests/cli/test_hostile_converters.py) and the Python suite
(python/tests/test_hostile_inputs.py): the same files, converted once by
`urec convert` and once by `unirecord.convert_*`."""
import csv
import io
import json
import pathlib

COCO_SEEDS = pathlib.Path(__file__).resolve().parents[1] / "fuzz" / "corpus" / "coco"
SCHEMA = {"fields": [{"name": "image", "type": "image"}, {"name": "score", "type": "float32"}]}


def write_input(kind, root, paths, scores=None):
    """Writes `paths` (image paths relative to root) with a float32 `score`
    each (a COCO box's height) as a `kind` input ("coco", "jsonl", "csv") in
    root, and root/../schema.json; returns the input file."""
    scores = scores or [0.5] * len(paths)
    (root.parent / "schema.json").write_text(json.dumps(SCHEMA))
    if kind == "coco":
        doc = {"images": [{"id": i + 1, "file_name": p} for i, p in enumerate(paths)],
               "annotations": [{"id": i + 1, "image_id": i + 1, "category_id": 1, "bbox": [0, 0, 1, s]}
                               for i, s in enumerate(scores)],
               "categories": [{"id": 1, "name": "c"}]}
        (root / "ann.json").write_text(json.dumps(doc))
        return root / "ann.json"
    if kind == "jsonl":
        (root / "m.jsonl").write_text("".join(json.dumps({"image": p, "score": s}) + "\n" for p, s in zip(paths, scores)))
        return root / "m.jsonl"
    assert kind == "csv"
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([["image", "score"]] + [[p, repr(s)] for p, s in zip(paths, scores)])
    (root / "m.csv").write_text(text.getvalue())
    return root / "m.csv"


def deep_coco(place):
    """fuzz/corpus/coco/deep-PLACE.json (nested 100 levels at PLACE: images,
    annotations, bbox, file_name, segmentation) nested 10^5 levels instead,
    as the issue's attack was."""
    seed = (COCO_SEEDS / f"deep-{place}.json").read_text()
    assert seed.count("[" * 100 + "]" * 100) == 1
    return seed.replace("[" * 100 + "]" * 100, "[" * 100000 + "]" * 100000)
