"""unirecord.add_fields / drop_fields (format/SPEC.md section 1.4): fields
from sequences, numpy arrays and functions of the record, added as a new
version without rewriting a shard; replaced and dropped; the version before
still opens as it was; bad inputs refused, committing nothing."""
import os

import numpy as np
import pytest

import unirecord

SCHEMA = {"x": "int64", "text": "string"}
N = 40


@pytest.fixture
def dataset(tmp_path):
    with unirecord.Writer(tmp_path, SCHEMA, "train", num_shards=3, expected_records=N, sync=False) as w:
        for k in range(N):
            w.write({"x": k, "text": "t%d" % k})
    return tmp_path / "train"


def inodes(path):
    return [os.stat(s["path"]).st_ino for s in unirecord.Dataset(path).shards]


def test_sequences_arrays_and_functions_become_fields(dataset):
    before = inodes(dataset)
    emb = np.arange(N * 4, dtype=np.float32).reshape(N, 4)
    summary = unirecord.add_fields(dataset, {
        "score": np.linspace(0, 1, N, dtype=np.float32),
        "emb": emb,
        "caption": ["caption %d" % k for k in range(N)],
        "twice": lambda r: r["x"] * 2,
        "blob": lambda r: r["text"].encode() * 3,
    })
    assert summary["generation"] == 2 and summary["records"] == N
    ds = unirecord.Dataset(dataset)
    assert ds.schema.names == ["x", "text", "score", "emb", "caption", "twice", "blob"]
    for k in (0, 17, N - 1):
        r = ds[k]
        assert r["x"] == k and r["text"] == "t%d" % k
        assert r["score"] == pytest.approx(k / (N - 1))
        np.testing.assert_array_equal(r["emb"], emb[k])
        assert r["caption"] == "caption %d" % k and r["twice"] == 2 * k
        assert bytes(r["blob"]) == ("t%d" % k).encode() * 3
    assert inodes(dataset) == before  # no shard rewritten
    old = unirecord.Dataset(dataset, version=1)
    assert old.schema.names == ["x", "text"] and old[5] == {"x": 5, "text": "t5"}


def test_replace_and_drop(dataset):
    unirecord.add_fields(dataset, {"text": [k * 10 for k in range(N)]})
    ds = unirecord.Dataset(dataset)
    assert ds.schema.names == ["x", "text"] and ds[3]["text"] == 30
    unirecord.drop_fields(dataset, ["text"])
    assert unirecord.Dataset(dataset).schema.names == ["x"]
    assert unirecord.Dataset(dataset, version=2)[3]["text"] == 30
    assert unirecord.Dataset(dataset, version=1)[3]["text"] == "t3"
    with pytest.raises(KeyError):
        unirecord.drop_fields(dataset, ["nope"])
    with pytest.raises(ValueError):
        unirecord.drop_fields(dataset, ["x"])


def test_bad_inputs_commit_nothing(dataset):
    with pytest.raises(ValueError, match="3 values, the dataset 40 records"):
        unirecord.add_fields(dataset, {"score": [1.0, 2.0, 3.0]})

    def boom(r):
        if r["x"] == 7:
            raise RuntimeError("no score for 7")
        return 1.0
    with pytest.raises(RuntimeError, match="no score for 7"):
        unirecord.add_fields(dataset, {"score": boom})
    with pytest.raises((ValueError, TypeError), match="record 2"):
        unirecord.add_fields(dataset, {"score": [1.0, 2.0, "x"] + [0.0] * (N - 3)})
    assert [v["version"] for v in unirecord.versions(dataset)] == [1]
    assert not [f for f in os.listdir(dataset.parent) if ".f0" in f]


def test_numpy_arrays_alone_are_read_natively(dataset, monkeypatch):
    calls = []
    monkeypatch.setattr(unirecord._core, "add_fields", lambda *a, **k: calls.append(a))  # the per-record path
    emb = np.arange(N * 3, dtype=np.int16).reshape(N, 3)
    unirecord.add_fields(dataset, {"score": np.arange(N, dtype=np.float64) / 8, "emb": emb})
    assert not calls
    ds = unirecord.Dataset(dataset)
    assert ds.schema["emb"].type == "int16" and ds.schema["emb"].shape == (3,)
    assert ds[9]["score"] == 9 / 8
    np.testing.assert_array_equal(ds[9]["emb"], emb[9])
    # A non-contiguous array too.
    unirecord.add_fields(dataset, {"col": emb[:, 1]})
    assert unirecord.Dataset(dataset)[9]["col"] == emb[9, 1]


def rows(path):
    """Every record of the dataset at path, blobs as bytes."""
    ds = unirecord.Dataset(path)
    return [{k: bytes(v) if isinstance(v, (bytes, memoryview)) else v for k, v in ds[i].items()}
            for i in range(len(ds))]


def test_appends_after_an_add_take_the_default_as_the_documented_order_gives(dataset, tmp_path):
    """Writer(mode="append") and convert_jsonl(append=True) after add_fields
    (the order a dataset lives in) give the new records `default`, the records
    the documented order gives (append, then add_fields with segments= and
    default=); without it ValueError names the fields, committing nothing."""
    added = {"score": np.arange(N, dtype=np.float32) / 4, "blob": [b"b%d" % k for k in range(N)]}
    default = {"score": -1.0, "blob": b"none"}
    more = [{"x": k, "text": "t%d" % k} for k in range(N, N + 5)]
    reference = tmp_path / "reference"
    reference.mkdir()
    for name in os.listdir(tmp_path):
        if os.path.isfile(tmp_path / name):
            (reference / name).write_bytes((tmp_path / name).read_bytes())
    with unirecord.Writer(reference, SCHEMA, "train", mode="append", sync=False) as w:
        for record in more:
            w.write(record)
    unirecord.add_fields(reference / "train", added, segments=[0], default=default, sync=False)

    unirecord.add_fields(dataset, added, sync=False)
    with pytest.raises(ValueError, match=r"the records lack the fields score, blob .*default=\{FIELD: VALUE\}"):
        unirecord.Writer(tmp_path, SCHEMA, "train", mode="append", sync=False)
    with pytest.raises(ValueError, match="record has a value for 'x'"):
        unirecord.Writer(tmp_path, SCHEMA, "train", mode="append", sync=False, default=dict(default, x=1))
    with pytest.raises(ValueError, match="field 'blob' is bytes"):  # JSON gives no bytes
        unirecord.Writer(tmp_path, SCHEMA, "train", mode="append", sync=False, default='{"score": 0, "blob": ""}')
    with pytest.raises(ValueError, match="need append"):
        unirecord.Writer(tmp_path / "other", SCHEMA, "train", sync=False, default=default)
    with unirecord.Writer(tmp_path, SCHEMA, "train", mode="append", sync=False, default=default) as w:
        for record in more[:2]:
            w.write(record)
    manifest, schema = tmp_path / "more.jsonl", tmp_path / "schema.json"
    manifest.write_text("".join('{"x": %d, "text": "t%d"}\n' % (k, k) for k in range(N + 2, N + 5)))
    schema.write_text('{"fields": [{"name": "x", "type": "int64"}, {"name": "text", "type": "string"}]}')
    seen = []
    with pytest.raises(ValueError, match="the new records lack the fields score, blob"):
        unirecord.convert_jsonl(manifest, tmp_path, schema=schema, name="train", append=True, sync=False,
                                progress=seen.append)
    assert seen == []  # refused before a record was converted
    unirecord.convert_jsonl(manifest, tmp_path, schema=schema, name="train", append=True, sync=False, default=default)
    assert rows(dataset) == rows(reference / "train")
    assert rows(dataset)[N + 3] == {"x": N + 3, "text": "t%d" % (N + 3), "score": -1.0, "blob": b"none"}
    assert [s["records"] for s in unirecord.Dataset(dataset).segments] == [N, 2, 3]
