"""unirecord.Writer -> unirecord.Dataset round trips, errors, pickling,
zero-copy views and DataLoader workers."""
import copyreg
import gc
import os
import pickle

import numpy as np
import pytest

import unirecord
from unirecord import Field

SCHEMA = unirecord.Schema(
    [
        Field("image", "bytes"),
        Field("packed", "bytes", compression="zstd"),
        Field("label", "int64", indexed=True),
        Field("small", "int32", indexed=True),
        Field("count", "int64"),
        Field("delta", "int32"),
        Field("score", "float32", indexed=True),
        Field("weight", "float64"),
        Field("ratio", "float32"),
        Field("name", "string"),
        Field("mean", "float32", shape=(3,)),
        Field("grid", "int64", shape=(2, 3)),
        Field("coords", "int32", shape=(4,)),
        Field("matrix", "float64", shape=(2, 2)),
    ]
)


def make_record(i):
    rng = np.random.default_rng(i)
    return {
        "image": rng.integers(0, 256, size=i * 7 % 50, dtype=np.uint8).tobytes(),
        "packed": (b"abc" * i)[: i * 2],
        "label": i % 5,
        "small": -(2**31) + i if i % 2 else 2**31 - 1 - i,
        "count": 2**40 + i,
        "delta": -i,
        "score": i / 4,
        "weight": i * 1.5e100,
        "ratio": 1.0 / (i + 1),
        "name": f"record-{i}-\u00e9\u4e16",
        "mean": np.array([i, i + 0.5, -i], dtype=np.float32),
        "grid": np.arange(6).reshape(2, 3) * i,
        "coords": [i, -i, 2 * i, 0],
        "matrix": np.eye(2) * i,
    }


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("rt")
    with unirecord.Writer(out, SCHEMA, "rt", num_shards=3, metadata={"note": "hello", "blob": b"\xff\x00"},
                          classes=["a", "b", "c", "d", "e"], sync=False) as w:
        for i in range(40):
            w.write(make_record(i))
    assert w.summary["records"] == 40 and w.summary["shards"] == 3
    return out


def check_equal(got, want):
    assert set(got) == set(want)
    for k, v in want.items():
        g = got[k]
        if isinstance(v, bytes):
            assert isinstance(g, memoryview) and g.readonly
            assert bytes(g) == v, k
        elif isinstance(v, (np.ndarray, list)):
            np.testing.assert_array_equal(g, np.asarray(v), err_msg=k)
            assert g.dtype == np.dtype(SCHEMA[k].type)
            assert g.shape == SCHEMA[k].shape
        elif SCHEMA[k].type == "float32":
            assert g == pytest.approx(np.float32(v), rel=0, abs=0), k
        else:
            assert g == v and type(g) is type(v), k


def test_round_trip_every_field_type(written):
    ds = unirecord.Dataset(written)
    assert len(ds) == 40
    assert ds.schema == SCHEMA
    assert ds.num_files == 3
    with pytest.warns(DeprecationWarning, match="use Dataset.num_files"):
        assert ds.num_shards == 3
    # num_shards=3 without expected_records: round robin, ids shard-major.
    ids = {}
    for k in range(40):
        shard = k % 3
        first = sum(len(range(s, 40, 3)) for s in range(shard))
        ids[first + k // 3] = k
    for rid, k in ids.items():
        check_equal(ds[rid], make_record(k))
    check_equal(ds[-1], make_record(ids[39]))
    assert ds.metadata["note"] == "hello"
    assert ds.metadata["blob"] == b"\xff\x00"
    assert ds.classes == ["a", "b", "c", "d", "e"]
    np.testing.assert_array_equal(ds.column("label"), [make_record(ids[i])["label"] for i in range(40)])


def test_field_selection_and_numpy_bytes(written):
    ds = unirecord.Dataset(written, fields=["image", "label"], bytes_as="numpy")
    assert ds.fields == ["image", "label"]
    r = ds[5]
    assert set(r) == {"image", "label"}
    assert isinstance(r["image"], np.ndarray) and r["image"].dtype == np.uint8
    assert not r["image"].flags.writeable
    full = unirecord.Dataset(written)
    assert r["image"].tobytes() == bytes(full[5]["image"])
    with pytest.raises(KeyError, match="no field named 'nope'"):
        unirecord.Dataset(written, fields=["nope"])


def test_blob_views_are_zero_copy_and_keep_the_dataset_alive(written):
    ds = unirecord.Dataset(written, fields=["image"])
    i = next(i for i in range(len(ds)) if len(ds[i]["image"]) > 10)
    v1 = ds[i]["image"]
    v2 = ds.get_blob(i, "image")
    # Same address: both views point into the mapped shard.
    a1 = np.frombuffer(v1, np.uint8).__array_interface__["data"][0]
    a2 = np.frombuffer(v2, np.uint8).__array_interface__["data"][0]
    assert a1 == a2
    want = bytes(v1)
    del ds
    gc.collect()
    assert bytes(v1) == want  # still mapped


def test_pickle_reopens(written):
    ds = unirecord.Dataset(written, fields=["name", "label"])
    blob = pickle.dumps(ds)
    assert len(blob) < 1000  # path and options only
    ds2 = pickle.loads(blob)
    assert len(ds2) == len(ds) and ds2.fields == ["name", "label"]
    assert [ds2[i] for i in range(len(ds))] == [ds[i] for i in range(len(ds))]
    assert pickle.loads(pickle.dumps(SCHEMA)) == SCHEMA


def test_pickle_is_keyed_by_the_datasets_keywords(written, tmp_path):
    """A Dataset pickles {keyword: value} (python/src/dataset_options_py.cc's one table
    of its options): the names and order of Dataset(...)'s parameters, values
    that reopen the same version."""
    ds = unirecord.Dataset(written, fields=["name"], verify_checksums=False, bytes_as="numpy",
                           cache_dir=tmp_path / "cache", cache_limit=5, remote_options={"attempts": 2},
                           page_cache_bytes=7)
    state = ds.__getstate__()
    signature = unirecord.Dataset.__init__.__doc__.splitlines()[0]
    parameters = [p.split(":")[0].strip() for p in signature[signature.index("(") + 1:signature.rindex(")")].split(",")]
    assert list(state) == [p for p in parameters if p not in ("self", "*")]
    assert state["path"] == str(written) and state["fields"] == ["name"] and state["bytes_as"] == "numpy"
    assert (state["verify_checksums"], state["cache_limit"], state["page_cache_bytes"]) == (False, 5, 7)
    assert state["cache_dir"] == str(tmp_path / "cache") and state["remote_options"]["attempts"] == 2
    assert state["version"] == ds.version and state["tag"] is None  # the version opened stands for its tag
    again = pickle.loads(pickle.dumps(ds))
    assert again.__getstate__() == state and again[3] == ds[3]
    with pytest.raises(ValueError, match="unknown Dataset option 'colour'"):
        unirecord.Dataset.__new__(unirecord.Dataset).__setstate__(dict(state, colour=1))
    with pytest.raises(TypeError, match="a Dataset pickle holds a dict"):
        unirecord.Dataset.__new__(unirecord.Dataset).__setstate__([str(written)])


def old_pickle(state):
    """A Dataset's pickle as the builds before the dict wrote it: a positional tuple."""

    class Old:
        def __reduce__(self):
            return (copyreg.__newobj__, (unirecord.Dataset,), state)

    return pickle.dumps(Old(), protocol=1)  # protocol 1: __newobj__ is a plain call, of another class


def test_a_positional_pickle_of_earlier_builds_still_loads(written, tmp_path):
    ds = unirecord.Dataset(written)
    remote = unirecord.Dataset(written).__getstate__()["remote_options"]
    # (paths, path_is_list, field names, verify_checksums, allow_partial, bytes_as_numpy,
    #  cache_dir, cache_limit, remote_options, version, page_cache_bytes), as they wrote it.
    old = ([str(written)], False, ["name", "label"], False, False, True, "", 0, dict(remote, attempts=3),
           ds.version, 1 << 20)
    loaded = pickle.loads(old_pickle(old))
    state = loaded.__getstate__()
    assert state["path"] == str(written) and state["fields"] == ["name", "label"] and state["bytes_as"] == "numpy"
    assert (state["verify_checksums"], state["cache_dir"], state["page_cache_bytes"]) == (False, None, 1 << 20)
    assert state["remote_options"]["attempts"] == 3 and state["version"] == ds.version
    assert loaded[5] == unirecord.Dataset(written, fields=["name", "label"])[5]
    # The shortest of them (6 values), and one of a list of shards without a manifest (version 0).
    assert len(pickle.loads(old_pickle(old[:6]))) == len(ds)
    shards = sorted(str(p) for p in written.glob("*.urec"))
    listed = pickle.loads(old_pickle((shards, True, [], True, False, False, "", 0, remote, 0)))
    assert listed.path == shards and listed.__getstate__()["version"] is None and len(listed) == len(ds)


def test_kept_pages_read_what_inflating_each_time_reads(written):
    """page_cache_bytes: inflated scalar pages kept for all threads (default)
    or none (0) give the same records, read at random and through a shuffled
    Loader; the setting travels through pickling; a bad value is refused."""
    kept = unirecord.Dataset(written)
    none = unirecord.Dataset(written, page_cache_bytes=0)
    order = np.random.default_rng(3).permutation(len(kept)).tolist() * 2
    assert [kept[i]["weight"] for i in order] == [none[i]["weight"] for i in order]
    assert sorted(none[i]["name"] for i in range(len(none))) == sorted(make_record(i)["name"] for i in range(40))

    def batches(ds):
        loader = unirecord.Loader(ds, batch_size=8, shuffle=True, seed=5, threads=2,
                                  fields=unirecord.Fields(["weight", "mean"], image_field=None, label_field=None))
        return [(b["weight"].tolist(), b["mean"].tolist()) for b in loader]

    assert batches(kept) == batches(none)
    assert pickle.loads(pickle.dumps(none)).__getstate__()["page_cache_bytes"] == 0
    assert kept.__getstate__()["page_cache_bytes"] == 256 << 20
    with pytest.raises((ValueError, TypeError), match="page_cache_bytes"):
        unirecord.Dataset(written, page_cache_bytes=-1)


def test_open_builds_no_per_record_python_objects(tmp_path):
    n = 20000
    with unirecord.Writer(tmp_path, {"label": Field("label", "int64", indexed=True), "x": "float32"},
                          sync=False) as w:
        for i in range(n):
            w.write({"label": i, "x": i})
    gc.collect()
    before = len(gc.get_objects())
    ds = unirecord.Dataset(tmp_path)
    ds2 = pickle.loads(pickle.dumps(ds))
    gc.collect()
    assert len(ds) == len(ds2) == n
    assert len(gc.get_objects()) - before < 100


def test_errors_map_to_python_exceptions(tmp_path, written):
    with pytest.raises(FileNotFoundError):
        unirecord.Dataset(tmp_path / "missing")
    with pytest.raises(IndexError):
        unirecord.Dataset(written)[40]
    with pytest.raises(ValueError):
        unirecord.Schema([Field("a", "int64"), Field("a", "int64")])
    with pytest.raises(ValueError):
        Field("s", "string", indexed=True) and unirecord.Schema([Field("s", "string", indexed=True)])
    with pytest.raises(ValueError, match="unknown field type"):
        Field("x", "complex")
    # One mapping for every status code.
    codes = {1: ValueError, 2: FileNotFoundError, 3: OSError, 4: unirecord.CorruptRecordError,
             5: unirecord.NotSupportedError, 6: RuntimeError, 7: IndexError, 8: RuntimeError, 9: KeyError}
    for code, exc in codes.items():
        with pytest.raises(exc, match="boom") as info:
            unirecord._core._raise_status(code, "boom")
        assert type(info.value) is exc, code
    # An unknown field name is a KeyError wherever it is named.
    with pytest.raises(KeyError, match="no field named 'nope'"):
        unirecord.Dataset(written).column("nope")
    with pytest.raises(KeyError, match="no field named 'nope'"):
        unirecord.Dataset(written).get_blob(0, "nope")
    assert issubclass(unirecord.CorruptRecordError, OSError)
    assert issubclass(unirecord.NotSupportedError, ValueError)


def test_corruption_names_file_and_record(tmp_path):
    with unirecord.Writer(tmp_path, {"image": "bytes", "label": "int64"}, "c", sync=False) as w:
        for i in range(8):
            w.write({"image": bytes([i % 256]) * 4000, "label": i})
    shard = next(tmp_path.glob("c-*.urec"))
    ds = unirecord.Dataset(tmp_path)
    offset = bytes(open(shard, "rb").read()).find(bytes([5]) * 4000)
    assert offset > 0
    data = bytearray(shard.read_bytes())
    data[offset + 100] ^= 0xFF
    del ds
    gc.collect()
    shard.write_bytes(bytes(data))
    ds = unirecord.Dataset(tmp_path)
    with pytest.raises(unirecord.CorruptRecordError) as info:
        ds[5]
    msg = str(info.value)
    assert shard.name in msg and "5" in msg, msg
    ds[4]  # other records still read
    with pytest.raises(unirecord.CorruptRecordError):
        ds.verify()


def test_writer_rejects_bad_records_and_stays_usable(tmp_path):
    schema = {"image": "bytes", "label": "int32", "mean": Field("mean", "float32", shape=(3,))}
    with unirecord.Writer(tmp_path, schema, "w", sync=False) as w:
        with pytest.raises(ValueError, match="no value for field 'label'"):
            w.write({"image": b"x", "mean": [1, 2, 3]})
        with pytest.raises(ValueError, match="not a field"):
            w.write({"image": b"x", "label": 1, "mean": [1, 2, 3], "extra": 1})
        with pytest.raises(ValueError, match="does not fit int32"):
            w.write({"image": b"x", "label": 2**31, "mean": [1, 2, 3]})
        with pytest.raises(ValueError):
            w.write({"image": b"x", "label": 1, "mean": [1, 2]})
        with pytest.raises(ValueError, match="needs bytes"):
            w.write({"image": "text", "label": 1, "mean": [1, 2, 3]})
        w.write({"image": memoryview(b"ok"), "label": 7, "mean": np.ones(3)})
        with pytest.raises(RuntimeError):
            w.set_metadata("late", "x")
    ds = unirecord.Dataset(tmp_path)
    assert len(ds) == 1 and ds[0]["label"] == 7 and bytes(ds[0]["image"]) == b"ok"


def test_writer_exception_leaves_nothing_that_opens(tmp_path):
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with unirecord.Writer(tmp_path, {"x": "int64"}, "crash", sync=False) as w:
            for i in range(100):
                w.write({"x": i})
            raise Boom()
    assert w.closed
    assert os.listdir(tmp_path) == []  # temporary files deleted
    with pytest.raises(FileNotFoundError, match="no .urec shards in this directory"):
        unirecord.Dataset(tmp_path)
    # A writer dropped without finish() also leaves nothing.
    w = unirecord.Writer(tmp_path, {"x": "int64"}, "dropped", sync=False)
    w.write({"x": 1})
    del w
    gc.collect()
    assert os.listdir(tmp_path) == []
    with pytest.raises(RuntimeError):
        w2 = unirecord.Writer(tmp_path, {"x": "int64"}, "twice", sync=False)
        w2.finish()
        w2.write({"x": 1})


def test_dataloader_workers_match_direct_indexing(written):
    torch = pytest.importorskip("torch")
    ds = unirecord.Dataset(written, fields=["image", "label", "name", "mean"], bytes_as="numpy")
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=list)
    got = [r for batch in loader for r in batch]
    assert len(got) == len(ds)
    for i, r in enumerate(got):
        want = ds[i]
        assert r["image"].tobytes() == want["image"].tobytes()
        assert r["label"] == want["label"] and r["name"] == want["name"]
        np.testing.assert_array_equal(r["mean"], want["mean"])


def test_killed_writer_leaves_nothing_that_opens(tmp_path):
    import signal
    import subprocess
    import sys

    script = (
        "import sys, time, unirecord\n"
        "w = unirecord.Writer(sys.argv[1], {'x': 'bytes', 'y': 'int64'}, 'killed', num_shards=2, sync=False)\n"
        "for i in range(2000):\n"
        "    w.write({'x': b'a' * 1000, 'y': i})\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = os.listdir(tmp_path)
    assert left and all(name.endswith(".partial") or name == ".killed.lock" for name in left), left
    assert all(name.startswith(".") for name in left), left
    with pytest.raises(FileNotFoundError, match="no .urec shards in this directory"):
        unirecord.Dataset(tmp_path)


def test_one_writer_per_dataset_and_each_write_replaces_the_last_whole(tmp_path):
    schema = {"x": "bytes", "y": "int64"}
    with unirecord.Writer(tmp_path, schema, "d", num_shards=3, sync=False) as first:
        with pytest.raises(RuntimeError, match=f"pid {os.getpid()} host "):
            unirecord.Writer(tmp_path, schema, "d")
        for i in range(6):
            first.write({"x": b"old", "y": i})
    assert first.summary["generation"] == 1
    with unirecord.Writer(tmp_path, schema, "d", num_shards=2, sync=False) as second:
        second.write({"x": b"new", "y": 7})
    assert second.summary["generation"] == 2
    # Version 1 is kept until unirecord.gc drops it, and then its files go.
    assert len(unirecord.Dataset(tmp_path, version=1)) == 6
    unirecord.gc(tmp_path, keep=1)
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["d.uset", "d.g000002.uver"] +
        [os.path.basename(p) for p in second.summary["shard_paths"] + second.summary["index_paths"]])
    ds = unirecord.Dataset(tmp_path)
    assert len(ds) == 1 and bytes(ds[0]["x"]) == b"new"
