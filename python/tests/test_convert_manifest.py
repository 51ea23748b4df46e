"""unirecord.convert_jsonl / convert_csv (issue 17): manifests of token
sequences, image-text pairs, multi-label and regression targets round-trip
(read back with unirecord.Dataset equal to the lines written, images
decoding to PIL's pixels of their files); CSV and JSON Lines of the same
samples give the same records; every bad line is a rejects row with its
line number and reason; a bad schema is a ValueError."""
import csv
import io
import json

import numpy as np
import pytest

import unirecord
from urec_fixtures import write_jpeg

Image = pytest.importorskip("PIL.Image")


def write_schema(path, fields):
    path.write_text(json.dumps({"fields": fields}))
    return path


def write_jsonl(path, samples):
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return path


def records(out):
    ds = unirecord.Dataset(out)
    return [ds[i] for i in range(len(ds))]


TOKEN_FIELDS = [{"name": "tokens", "type": "int32", "shape": [-1]}, {"name": "text", "type": "string"},
                {"name": "label", "type": "int64", "indexed": True}]


def token_samples(n=25, seed=0):
    rng = np.random.default_rng(seed)
    return [{"tokens": rng.integers(-2**31, 2**31, size=int(rng.integers(0, 300))).tolist(),
             "text": "sample %d, \"quoted\"\nnext line" % i, "label": int(rng.integers(0, 10))} for i in range(n)]


def test_token_sequences_round_trip(tmp_path):
    samples = token_samples()
    schema = write_schema(tmp_path / "schema.json", TOKEN_FIELDS)
    report = unirecord.convert_jsonl(write_jsonl(tmp_path / "tokens.jsonl", samples), tmp_path / "out",
                                     schema=schema, sync=False, num_shards=3)
    assert report["name"] == "tokens" and report["written"] == len(samples) and report["rejected"] == 0
    assert report["shards"] == 3
    got = records(tmp_path / "out" / "tokens")
    assert len(got) == len(samples)
    for rec, s in zip(got, samples):
        assert rec["tokens"].dtype == np.int32 and rec["tokens"].tolist() == s["tokens"]
        assert rec["text"] == s["text"] and rec["label"] == s["label"]


def test_csv_gives_the_records_of_the_same_jsonl(tmp_path):
    samples = token_samples(12, seed=1)
    schema = write_schema(tmp_path / "schema.json", TOKEN_FIELDS)
    unirecord.convert_jsonl(write_jsonl(tmp_path / "m.jsonl", samples), tmp_path / "a", schema=schema, sync=False)
    with open(tmp_path / "m.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label", "tokens"])  # any column order
        for s in samples:
            w.writerow([s["text"], s["label"], json.dumps(s["tokens"])])
    report = unirecord.convert_csv(tmp_path / "m.csv", tmp_path / "b", schema=schema, sync=False)
    assert report["written"] == len(samples)
    a, b = records(tmp_path / "a" / "m"), records(tmp_path / "b" / "m")
    for x, y in zip(a, b):
        assert x["text"] == y["text"] and x["label"] == y["label"] and np.array_equal(x["tokens"], y["tokens"])


def image_text_dataset(root, n=8):
    samples = []
    for i in range(n):
        name = "img/%02d.jpg" % i
        write_jpeg(root / name, 40 + i, 30, seed=i)
        samples.append({"image": name, "caption": "a picture number %d" % i,
                        "labels": [int(v) for v in np.eye(5, dtype=np.uint8)[i % 5] | np.eye(5, dtype=np.uint8)[2]],
                        "target": i * 0.25, "boxes": [[1.5, 2, 3, 4]] * (i % 3)})
    fields = [{"name": "image", "type": "image"}, {"name": "caption", "type": "string"},
              {"name": "labels", "type": "uint8", "shape": [5]}, {"name": "target", "type": "float32"},
              {"name": "boxes", "type": "float32", "shape": [-1, 4]}]
    return samples, write_schema(root / "schema.json", fields)


def test_image_text_pairs_multi_label_and_regression(tmp_path):
    samples, schema = image_text_dataset(tmp_path)
    report = unirecord.convert_jsonl(write_jsonl(tmp_path / "pairs.jsonl", samples), tmp_path / "out",
                                     schema=schema, sync=False, threads=2)
    assert report["written"] == len(samples) and report["transcoded"] == len(samples)
    for rec, s in zip(records(tmp_path / "out" / "pairs"), samples):
        assert rec["path"] == s["image"] and rec["caption"] == s["caption"]
        assert rec["labels"].dtype == np.uint8 and rec["labels"].tolist() == s["labels"]
        assert rec["target"] == pytest.approx(s["target"])
        assert rec["boxes"].shape == (len(s["boxes"]), 4) and rec["boxes"].tolist() == s["boxes"]
        source = (tmp_path / s["image"]).read_bytes()
        with Image.open(io.BytesIO(source)) as a, Image.open(io.BytesIO(bytes(rec["image"]))) as b:
            assert b.convert("RGB").tobytes() == a.convert("RGB").tobytes()
            assert (rec["width"], rec["height"]) == a.size


def test_same_bytes_for_any_thread_count(tmp_path):
    samples, schema = image_text_dataset(tmp_path)
    manifest = write_jsonl(tmp_path / "pairs.jsonl", samples)
    outputs = []
    for threads in (1, 3):
        out = tmp_path / ("out%d" % threads)
        unirecord.convert_jsonl(manifest, out, schema=schema, sync=False, threads=threads, num_shards=2)
        outputs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outputs[0] == outputs[1]


def test_every_bad_line_is_reported_with_its_number(tmp_path):
    samples, schema = image_text_dataset(tmp_path, n=3)
    good = json.dumps(samples[0])
    bad = [
        (json.dumps(dict(samples[0], labels=[1, 0, 0])), "field 'labels': dimension 0 has 3 values where 5 are expected"),
        (json.dumps(dict(samples[0], target="high")), "field 'target': \"high\" is not a number"),
        (json.dumps({k: v for k, v in samples[0].items() if k != "caption"}), "missing field 'caption'"),
        (json.dumps(dict(samples[0], extra=1)), "key 'extra' is not a field of the schema"),
        (json.dumps(dict(samples[0], labels=[1, 0, 0, 0, 300])), "field 'labels': 300 is out of uint8's range"),
        ('{"image": "img/00.jpg", ', "not valid JSON"),
    ]
    lines = [good] + [b for b, _ in bad] + [json.dumps(dict(samples[1], image="img/missing.jpg")), good]
    (tmp_path / "m.jsonl").write_text("\n".join(lines) + "\n")
    report = unirecord.convert_jsonl(tmp_path / "m.jsonl", tmp_path / "out", schema=schema, sync=False)
    assert report["written"] == 2 and report["rejected"] == len(bad) + 1
    with open(report["rejects_path"]) as f:
        rows = [line.rstrip("\n").split("\t", 1) for line in f][1:]
    assert [tuple(r) for r in rows] == report["not_written"]
    for k, (_, reason) in enumerate(bad):
        path, why = rows[k]
        assert path == "line %d" % (k + 2) and reason in why, (path, why)
    assert rows[-1][0] == "img/missing.jpg" and rows[-1][1].startswith("unreadable")
    with pytest.raises(unirecord.CorruptRecordError, match=r"m\.jsonl line 2: field 'labels'.*strict"):
        unirecord.convert_jsonl(tmp_path / "m.jsonl", tmp_path / "out2", schema=schema, sync=False, strict=True)
    # An unreadable image is named by its path and its line.
    (tmp_path / "m2.jsonl").write_text("\n".join([good, lines[-2]]) + "\n")
    with pytest.raises(unirecord.CorruptRecordError, match=r"img/missing\.jpg \(.*m2\.jsonl line 2\): unreadable"):
        unirecord.convert_jsonl(tmp_path / "m2.jsonl", tmp_path / "out3", schema=schema, sync=False, strict=True)


def test_bad_csv_rows_and_headers(tmp_path):
    schema = write_schema(tmp_path / "schema.json", TOKEN_FIELDS)
    (tmp_path / "m.csv").write_text('tokens,text,label\n"[1, 2]",ok,3\n[1],short\n"[1.5]",x,1\n[],"unclosed\n')
    with pytest.raises(ValueError, match=r"m\.csv: line 5: a quoted cell is not closed"):
        unirecord.convert_csv(tmp_path / "m.csv", tmp_path / "out", schema=schema, sync=False)
    (tmp_path / "m.csv").write_text('tokens,text,label\n"[1, 2]",ok,3\n[1],short\n"[1.5]",x,1\n')
    report = unirecord.convert_csv(tmp_path / "m.csv", tmp_path / "out", schema=schema, sync=False)
    assert report["written"] == 1
    assert report["not_written"] == [("line 3", "2 cells where the header has 3"),
                                     ("line 4", "field 'tokens': 1.5 is not an integer")]
    (tmp_path / "h.csv").write_text("tokens,text\n[1],a\n")
    with pytest.raises(ValueError, match="h.csv: the header has no column 'label'"):
        unirecord.convert_csv(tmp_path / "h.csv", tmp_path / "out", schema=schema, sync=False)


@pytest.mark.parametrize("fields, message", [
    ([{"name": "a", "type": "complex64"}], "type 'complex64'"),
    ([{"name": "a", "type": "image"}, {"name": "width", "type": "int32"}], "field 'width' is one the image field adds"),
    # An int32 [-1] list may be indexed (a list index, format 1.2); a float list may not.
    ([{"name": "a", "type": "float32", "shape": [-1], "indexed": True}], "schema.json"),
])
def test_bad_schema_is_a_value_error(tmp_path, fields, message):
    schema = write_schema(tmp_path / "schema.json", fields)
    write_jsonl(tmp_path / "m.jsonl", [{"a": 1}])
    with pytest.raises(ValueError, match=message):
        unirecord.convert_jsonl(tmp_path / "m.jsonl", tmp_path / "out", schema=schema, sync=False)
