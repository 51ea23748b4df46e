"""unirecord.StagedWrite + PartWriter from plain processes (the engine-neutral
API that Spark's mapPartitions or Ray tasks would call): the committed files
equal a Writer's with the same records and shard cuts."""
import multiprocessing
import os

import pytest

import unirecord

SCHEMA = {"image": "bytes", "label": "int64", "path": "string"}


def record(k):
    return {"image": bytes([k % 251]) * (50 + k * 7 % 300), "label": k % 3, "path": "r%04d" % k}


def write_part(out, token, part, num_parts, begin, end, cut):
    with unirecord.PartWriter(out, SCHEMA, "train", token=token, part=part, num_parts=num_parts, classes=["a", "b", "c"],
                              sync=False) as w:
        for k in range(begin, end):
            if k == cut:
                w.next_shard()
            w.write(record(k))


def files(folder):
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


def test_parts_from_processes_commit_the_bytes_of_a_writer(tmp_path):
    with unirecord.Writer(tmp_path / "ref", SCHEMA, "train", num_shards=4, expected_records=40, classes=["a", "b", "c"],
                          sync=False) as w:
        for k in range(40):
            w.write(record(k))
    out = str(tmp_path / "out")
    staged = unirecord.StagedWrite(out, "train", 3, sync=False)
    # Parts: records 0-9 | 10-29 cut at 20 | 30-39, run in three processes.
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=write_part, args=(out, staged.token, k, 3, b, e, c))
             for k, (b, e, c) in enumerate([(0, 10, -1), (10, 30, 20), (30, 40, -1)])]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    summary = staged.commit()
    assert summary["records"] == 40 and summary["shards"] == 4 and summary["generation"] == 1
    assert files(out) == files(tmp_path / "ref")
    ds = unirecord.Dataset(out)
    assert [ds[k]["path"] for k in range(40)] == ["r%04d" % k for k in range(40)]


def test_a_missing_part_commits_nothing_and_a_second_run_is_refused(tmp_path):
    out = tmp_path / "out"
    with unirecord.StagedWrite(out, "train", 2, sync=False) as staged:
        with pytest.raises(RuntimeError, match="being written by another writer"):
            unirecord.StagedWrite(out, "train", 1)
        write_part(str(out), staged.token, 0, 2, 0, 5, -1)
        with pytest.raises(RuntimeError, match="part 1 of 2 is not complete"):
            staged.commit()
    assert os.listdir(out) == []  # the staged part and the lock file are gone
    with pytest.raises(ValueError, match="token"):
        unirecord.PartWriter(out, SCHEMA, "train", token="x1", part=0, num_parts=1)


def test_writer_append_mode_adds_a_generation_whose_ids_continue(tmp_path):
    with unirecord.Writer(tmp_path, SCHEMA, "train", classes=["a", "b", "c"], sync=False) as w:
        for k in range(10):
            w.write(record(k))
    old = unirecord.Dataset(str(tmp_path))
    with unirecord.Writer(tmp_path, SCHEMA, "train", classes=["a", "b", "c"], sync=False, mode="append") as w:
        with pytest.raises(RuntimeError, match="being written by another writer"):
            unirecord.Writer(tmp_path, SCHEMA, "train", mode="append")
        for k in range(10, 25):
            w.write(record(k))
    assert w.summary["records"] == 25 and w.summary["generation"] == 2 and w.summary["shards"] == 2
    now = unirecord.Dataset(str(tmp_path))
    assert [now[k]["path"] for k in range(25)] == ["r%04d" % k for k in range(25)]
    assert [old[k]["path"] for k in range(10)] == ["r%04d" % k for k in range(10)]  # opened before: still reads
    with pytest.raises(ValueError, match="metadata 'classes'"):
        with unirecord.Writer(tmp_path, SCHEMA, "train", classes=["x"], sync=False, mode="append") as w:
            w.write(record(0))
    assert len(unirecord.Dataset(str(tmp_path))) == 25
    with pytest.raises(ValueError, match="mode must be"):
        unirecord.Writer(tmp_path, SCHEMA, "train", mode="rewrite")
