"""COCO instances files into datasets: unirecord.convert_coco and
`urec convert coco` against the JSON they were given and PIL's decode of the
source images; every unusable entry reported with its reason."""
import io
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import unirecord

PIL = pytest.importorskip("PIL.Image")
torch = pytest.importorskip("torch")

UREC = os.environ.get("UREC", "urec")
CATEGORIES = [{"id": 7, "name": "dog", "supercategory": "animal"}, {"id": 1, "name": "person"},
              {"id": 3, "name": "car", "supercategory": "vehicle"}]


def write_image(path, width, height, seed, fmt="JPEG"):
    rng = np.random.default_rng(seed)
    base = np.linspace(0, 255, width * height * 3).reshape(height, width, 3)
    pixels = np.clip(base + rng.integers(-20, 20, base.shape), 0, 255).astype(np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    PIL.fromarray(pixels).save(path, fmt, **({"quality": 90} if fmt == "JPEG" else {}))


def make_coco(root, count=12):
    """A COCO-format folder: images (one PNG, one in a sub-folder), listed out
    of id order, with 0 to 3 annotations each (ids out of order too)."""
    images, annotations = [], []
    next_annotation = 1000
    for k in range(count):
        image_id = 100 - 7 * k  # descending in the file
        width, height = 40 + 9 * k, 30 + 5 * (k % 4)
        name = f"img{k}.png" if k == 5 else (f"sub/img{k}.jpg" if k == 3 else f"img{k}.jpg")
        write_image(root / "images" / name, width, height, k, "PNG" if k == 5 else "JPEG")
        images.append({"id": image_id, "file_name": name, "width": width, "height": height})
        for j in range(k % 4):
            next_annotation -= 3
            box = [1.5 * j, 2.0 + j, 10.25 + k, 5.5 + j]
            ann = {"id": next_annotation, "image_id": image_id, "category_id": CATEGORIES[j % 3]["id"],
                   "bbox": box, "iscrowd": int(j == 2), "segmentation": [[0, 0, 5, 0, 5, 5]]}
            if j != 1:
                ann["area"] = 17.0 + j
            annotations.append(ann)
    doc = {"images": images, "annotations": annotations, "categories": CATEGORIES}
    (root / "instances.json").write_text(json.dumps(doc))
    return doc


@pytest.fixture(scope="module")
def coco(tmp_path_factory):
    root = tmp_path_factory.mktemp("coco")
    doc = make_coco(root)
    report = unirecord.convert_coco(root / "instances.json", root / "images", root / "out", num_shards=3, sync=False,
                                    threads=2)
    return root, doc, report


def test_records_equal_the_json_and_the_images_decode_as_their_sources(coco):
    root, doc, report = coco
    assert report["name"] == "instances" and report["written"] == 12 and report["rejected"] == 0
    assert report["annotations"] == len(doc["annotations"]) and report["annotations_rejected"] == 0
    assert report["png"] == 1 and report["shards"] == 3 and report["not_written"] == []
    ds = unirecord.Dataset(root / "out" / "instances")
    assert json.loads(ds.metadata["categories"]) == sorted(CATEGORIES, key=lambda c: c["id"])
    images = sorted(doc["images"], key=lambda m: m["id"])
    assert len(ds) == len(images)
    for rid, image in enumerate(images):
        rec = ds[rid]
        anns = sorted((a for a in doc["annotations"] if a["image_id"] == image["id"]), key=lambda a: a["id"])
        assert (rec["image_id"], rec["path"], rec["width"], rec["height"]) == (
            image["id"], image["file_name"], image["width"], image["height"])
        assert rec["boxes"].dtype == np.float32 and rec["boxes"].shape == (len(anns), 4)
        np.testing.assert_array_equal(rec["boxes"], np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4))
        assert rec["category_id"].tolist() == [a["category_id"] for a in anns]
        assert rec["annotation_id"].tolist() == [a["id"] for a in anns]
        assert rec["iscrowd"].dtype == np.uint8 and rec["iscrowd"].tolist() == [a["iscrowd"] for a in anns]
        want_area = [a.get("area", np.float32(a["bbox"][2]) * np.float32(a["bbox"][3])) for a in anns]
        np.testing.assert_array_equal(rec["area"], np.array(want_area, np.float32))
        assert json.loads(rec["segmentation"]) == [a["segmentation"] for a in anns]
        # Stored losslessly: PIL decodes the record's image to the source's pixels.
        stored = np.asarray(PIL.open(io.BytesIO(rec["image"])).convert("RGB"))
        source = np.asarray(PIL.open(root / "images" / image["file_name"]).convert("RGB"))
        np.testing.assert_array_equal(stored, source)


def test_the_loader_maps_the_boxes_of_every_image(coco):
    root, doc, _ = coco
    loader = unirecord.Loader(root / "out" / "instances", batch_size=5, shuffle=True, seed=1,
                              transform=unirecord.CenterCrop(24, resize=24),
                              sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                              fields=unirecord.Fields(label_field=None, boxes="boxes",
                                                      box_aligned=["category_id", "iscrowd"]))
    seen = []
    for batch in loader:
        assert batch["image"].shape[1:] == (3, 24, 24)
        assert batch["boxes"].shape[0] == len(batch["id"]) and batch["boxes"].shape[2] == 4
        lengths = batch["boxes_lengths"].tolist()
        assert batch["category_id_lengths"].tolist() == lengths == batch["iscrowd_lengths"].tolist()
        for i, n in enumerate(lengths):
            assert set(batch["category_id"][i, :n].tolist()) <= {c["id"] for c in CATEGORIES}
            assert ((batch["boxes"][i, :n, 2:] > 0).all())  # empty boxes were dropped
        seen += batch["id"].tolist()
    assert sorted(seen) == list(range(len(doc["images"])))


def test_the_cli_writes_the_same_bytes_as_python_whatever_the_threads(coco, tmp_path):
    root, _, _ = coco
    result = subprocess.run([UREC, "convert", "coco", str(root / "instances.json"), str(root / "images"),
                             str(tmp_path), "--shards", "3", "--threads", "1"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "12 written, 0 rejected" in result.stdout
    assert f"annotations: {sum(k % 4 for k in range(12))} written, 0 rejected" in result.stdout
    ours = sorted(p.name for p in tmp_path.iterdir())
    assert ours == sorted(p.name for p in (root / "out").iterdir())
    for name in ours:
        assert (tmp_path / name).read_bytes() == (root / "out" / name).read_bytes(), name


def test_every_unusable_entry_is_reported_with_its_reason(tmp_path):
    doc = make_coco(tmp_path, count=6)
    images = doc["images"]
    keep_id = images[1]["id"]
    write_image(tmp_path / "images" / "wrong_size.jpg", 20, 10, 99)
    (tmp_path / "images" / "not_an_image.jpg").write_bytes(b"GIF89a not a jpeg")
    images += [
        {"id": images[0]["id"], "file_name": "dup.jpg"},                       # duplicate image id
        {"id": 500, "file_name": "missing.jpg"},                               # no such file
        {"id": 501, "file_name": "../escape.jpg"},                             # outside the folder
        {"id": 502, "file_name": "wrong_size.jpg", "width": 21, "height": 10},  # size differs
        {"id": 503, "file_name": "not_an_image.jpg"},                          # not decodable
        {"file_name": "no_id.jpg"},                                            # missing key
    ]
    doc["annotations"] += [
        {"id": 1, "image_id": 9999, "category_id": 1, "bbox": [0, 0, 1, 1]},
        {"id": 2, "image_id": keep_id, "category_id": 1, "bbox": [0, 0, float("nan"), 1]},
        {"id": 3, "image_id": keep_id, "category_id": 1, "bbox": [0, 0, 4, -2]},
        {"id": 4, "image_id": keep_id, "category_id": 1},
        {"id": 4, "image_id": keep_id, "category_id": 1, "bbox": [0, 0, 1, 1]},
        {"id": 5, "image_id": keep_id, "category_id": 8, "bbox": [0, 0, 1, 1]},
    ]
    (tmp_path / "instances.json").write_text(json.dumps(doc))  # NaN as Python writes it
    report = unirecord.convert_coco(tmp_path / "instances.json", tmp_path / "images", tmp_path / "out", sync=False)
    reasons = {}
    for where, reason in report["not_written"]:
        reasons[where] = reasons.get(where, "") + reason + "; "
    expected = {
        "dup.jpg": "duplicate image id",
        "missing.jpg": "No such file",
        "../escape.jpg": "leaves the images folder",
        "wrong_size.jpg": "the annotations say 21x10, the file is 20x10",
        "not_an_image.jpg": "not a JPEG or PNG",
        "no_id.jpg": "missing key 'id'",
        "annotation 1": "image_id 9999 is not among the usable images",
        "annotation 2": "'bbox' holds null",
        "annotation 3": "negative width or height",
        "annotation 4": "missing key 'bbox'",
        "annotation 5": "category_id 8 is not among the categories",
    }
    for where, reason in expected.items():
        assert reason in reasons.get(where, ""), (where, reasons)
    assert "duplicate annotation id 4" in reasons["annotation 4"]
    assert report["written"] == 6 and report["rejected"] == 6 and report["annotations_rejected"] == 6
    # The rejects report committed with the shards holds the same rows.
    rows = pathlib.Path(report["rejects_path"]).read_text().splitlines()[1:]
    assert sorted(r.split("\t")[0] for r in rows) == sorted(where for where, _ in report["not_written"])
    # The duplicate annotation id 4 kept its first, which had no box: neither is written.
    ds = unirecord.Dataset(tmp_path / "out" / "instances")
    assert all(4 not in ds[i]["annotation_id"].tolist() for i in range(len(ds)))


@pytest.mark.parametrize("text, message", [("{\"images\": [", "not valid JSON"),
                                           ("{\"annotations\": []}", "not a COCO annotations file: no \"images\" array")])
def test_a_file_that_is_not_coco_is_an_error_naming_it(tmp_path, text, message):
    (tmp_path / "images").mkdir()
    (tmp_path / "a.json").write_text(text)
    with pytest.raises(unirecord.CorruptRecordError, match=f"a.json: {message}"):
        unirecord.convert_coco(tmp_path / "a.json", tmp_path / "images", tmp_path / "out", sync=False)
    result = subprocess.run([UREC, "convert", "coco", str(tmp_path / "a.json"), str(tmp_path / "images"),
                             str(tmp_path / "out")], capture_output=True, text=True)
    assert result.returncode == 1 and "a.json" in result.stderr and message in result.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.uset"))
