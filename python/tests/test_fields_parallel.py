"""unirecord.add_fields computed in local processes (processes=) and on a
real Dask cluster (client=): each task stages the column files of a run of
shards of one segment, the driver commits them; every file (column files,
their indexes, the manifests) is byte-identical to a local add_fields of the
same values, on a dataset of two segments (written, then appended to)."""
import os
import shutil

import numpy as np
import pytest

import unirecord

N, APPENDED = 40, 13
TOTAL = N + APPENDED


def twice(record):
    return record["x"] * 2


def described(record):
    return "record %s" % record["text"]


def fails_at_33(record):
    if record["x"] == 33:
        raise LookupError("no score for 33")
    return 1.0


@pytest.fixture
def pristine(tmp_path):
    """Dataset 'train' in tmp_path/pristine: 3 shards, then an appended segment of several."""
    folder = tmp_path / "pristine"
    with unirecord.Writer(folder, {"x": "int64", "text": "string"}, "train", num_shards=3, expected_records=N,
                          sync=False) as w:
        for k in range(N):
            w.write({"x": k, "text": "t%d" % k})
    with unirecord.Writer(folder, {"x": "int64", "text": "string"}, "train", mode="append", target_shard_bytes=64,
                          sync=False) as w:
        for k in range(N, TOTAL):
            w.write({"x": k, "text": "t%d" % k})
    assert len(unirecord.Dataset(folder / "train").segments) == 2
    return folder


def copy(pristine, to):
    shutil.copytree(pristine, to)
    return to / "train"


def files(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder)) if not name.endswith(".lock")}


def visible(files):
    return {name: data for name, data in files.items() if not name.startswith(".")}


def values():
    return {
        "score": np.linspace(0, 1, TOTAL, dtype=np.float32),
        "emb": np.arange(TOTAL * 4, dtype=np.int16).reshape(TOTAL, 4),
    }, {
        "twice": twice,
        "caption": ["caption %d" % k for k in range(TOTAL)],
        "blob": [b"b" * (k % 7) for k in range(TOTAL)],
        "described": described,
    }


def add_both(path, **kwargs):
    """An array-valued add (read natively), a function-valued one, and two to
    the appended segment alone, the first segment getting defaults."""
    arrays, functions = values()
    return (unirecord.add_fields(path, arrays, sync=False, **kwargs),
            unirecord.add_fields(path, functions, sync=False, **kwargs),
            unirecord.add_fields(path, {"fresh": np.arange(APPENDED, dtype=np.float32)}, segments=[1],
                                 default={"fresh": -1.0}, sync=False, **kwargs),
            unirecord.add_fields(path, {"new_text": described, "rank": list(range(APPENDED))}, segments=[1],
                                 default={"new_text": "", "rank": -7}, sync=False, **kwargs))


@pytest.fixture
def reference(pristine, tmp_path):
    path = copy(pristine, tmp_path / "local")
    summaries = add_both(path)
    ds = unirecord.Dataset(path)
    assert ds.schema.names == ["x", "text", "score", "emb", "twice", "caption", "blob", "described", "fresh",
                               "new_text", "rank"]
    assert ds[45]["twice"] == 90 and ds[45]["described"] == "record t45" and ds[45]["emb"][3] == 183
    assert [ds[k]["fresh"] for k in (0, N - 1, N, TOTAL - 1)] == [-1.0, -1.0, 0.0, APPENDED - 1]
    assert [(ds[k]["new_text"], ds[k]["rank"]) for k in (7, N + 2)] == [("", -7), ("record t%d" % (N + 2), 2)]
    return path.parent, summaries


def assert_same(folder, reference, summaries):
    want_folder, want = reference
    assert files(folder) == files(want_folder)
    for got, expected in zip(summaries, want):
        assert got["uuid"] == expected["uuid"] and got["generation"] == expected["generation"]
        assert got["records"] == expected["records"] == TOTAL


@pytest.mark.parametrize("shards_per_task", [1, 2])
def test_byte_identical_in_local_processes(pristine, reference, tmp_path, shards_per_task):
    path = copy(pristine, tmp_path / "processes")
    seen = []
    summaries = add_both(path, processes=2, shards_per_task=shards_per_task, progress=seen.append)
    assert_same(path.parent, reference, summaries)
    # Tasks never span the segments' boundary.
    segments = unirecord.Dataset(pristine / "train").segments
    assert len(segments) == 2 and all(segment["shards"] > shards_per_task for segment in segments)
    expected_tasks = sum(-(-segment["shards"] // shards_per_task) for segment in segments)
    assert summaries[0]["tasks"] == expected_tasks
    assert seen[-1]["files_done"] == seen[-1]["files_total"] == TOTAL


def test_processes_need_picklable_functions(pristine, tmp_path):
    path = copy(pristine, tmp_path / "processes")
    with pytest.raises(TypeError, match="picklable"):
        unirecord.add_fields(path, {"y": lambda r: 1}, processes=2)
    with pytest.raises(ValueError, match="exclude each other"):
        unirecord.add_fields(path, {"y": twice}, processes=2, client=object())
    assert unirecord.Dataset(path).version == 2


def test_byte_identical_on_dask(pristine, reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    # Worker processes on 127.0.0.1: functions, values and errors travel pickled, as on a real cluster.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       host="127.0.0.1")
    with cluster, distributed.Client(cluster) as client:
        for shards_per_task in (1, 3):
            path = copy(pristine, tmp_path / ("dask%d" % shards_per_task))
            with distributed.get_task_stream(client) as stream:
                summaries = add_both(path, client=client, shards_per_task=shards_per_task)
            assert_same(path.parent, reference, summaries)
            keys = [str(task["key"]) for task in stream.data]
            assert keys and all(k.startswith("unirecord-add-fields-") for k in keys), keys  # as the dashboard shows
        # A function failing on a worker: its error comes back naming the field and record; nothing committed.
        path = copy(pristine, tmp_path / "failing")
        with pytest.raises(LookupError, match="no score for 33") as raised:
            unirecord.add_fields(path, {"score": fails_at_33}, schema={"score": "float64"}, client=client,
                                 retries=0)
        assert "unirecord.add_fields: raised by the function of field 'score' for record 33" in raised.value.__notes__
        # Tasks the failure cancelled may still be running, writing hidden files (removed when they find
        # the run over, or by the next writer): the dataset's own files are as they were.
        assert visible(files(path.parent)) == visible(files(pristine))
        assert unirecord.Dataset(path).version == 2


def test_a_commit_between_reading_and_locking_is_refused(pristine, tmp_path, monkeypatch):
    path = copy(pristine, tmp_path / "raced")
    begin = unirecord._core._begin_add_fields

    def after_another_commit(*args):
        unirecord.drop_fields(path, ["text"])
        return begin(*args)
    monkeypatch.setattr(unirecord._core, "_begin_add_fields", after_another_commit)
    with pytest.raises(RuntimeError, match="another writer committed since version 2 was read"):
        unirecord.add_fields(path, {"y": twice}, processes=2)
    assert unirecord.Dataset(path).version == 3 and unirecord.Dataset(path).schema.names == ["x"]


def test_a_segment_left_without_values_or_default_is_refused(pristine, tmp_path):
    path = copy(pristine, tmp_path / "local")
    with pytest.raises(ValueError, match="segments 0 get no values"):
        unirecord.add_fields(path, {"fresh": np.zeros(APPENDED, np.float32)}, segments=[1])
    with pytest.raises(ValueError, match="segments 0 get no values"):
        unirecord.add_fields(path, {"fresh": np.zeros(APPENDED, np.float32)}, segments=[1], processes=2)
    with pytest.raises(ValueError, match="has 3 values, segments \\[1\\] %d records" % APPENDED):
        unirecord.add_fields(path, {"fresh": [1, 2, 3]}, segments=[1], default={"fresh": 0})
    with pytest.raises(ValueError, match="names no segment"):
        unirecord.add_fields(path, {"fresh": []}, segments=[], default={"fresh": 0})
    with pytest.raises(ValueError, match="segment 2 does not exist"):
        unirecord.add_fields(path, {"fresh": []}, segments=[2], default={"fresh": 0})
    with pytest.raises(ValueError, match="record 0"):
        unirecord.add_fields(path, {"fresh": np.zeros(APPENDED, np.float32)}, segments=[1], default={"fresh": "x"})
    assert files(path.parent) == files(pristine)


def test_a_failing_function_names_the_record_locally(pristine, tmp_path):
    path = copy(pristine, tmp_path / "local")
    with pytest.raises(LookupError) as raised:
        unirecord.add_fields(path, {"score": fails_at_33}, schema={"score": "float64"})
    assert "unirecord.add_fields: raised by the function of field 'score' for record 33" in raised.value.__notes__
    assert files(path.parent) == files(pristine)
