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
