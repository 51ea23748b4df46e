"""Datasets that grow (format 1.2): appends and merges that copy no shard,
every commit kept as a version that opens byte for byte (in DataLoader
workers too, while newer versions commit), tags, and collection; through the
binding and the urec CLI."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import unirecord
from urec_fixtures import signed, urec_binary

torch = pytest.importorskip("torch")

SCHEMA = {"x": "int64", "text": "string", "blob": "bytes"}


def record(k):
    return {"x": k, "text": "record %d" % k, "blob": bytes([k % 251]) * (20 + k % 50)}


def write(out, begin, end, mode="write", shards=1):
    with unirecord.Writer(out, SCHEMA, "train", mode=mode, sync=False,
                          **({} if mode == "append" else {"num_shards": shards, "expected_records": end - begin})) as w:
        for k in range(begin, end):
            w.write(record(k))
        return w


def xs(dataset):
    return [dataset[i]["x"] for i in range(len(dataset))]


def shard_inodes(dataset):
    return [os.stat(s["path"]).st_ino for s in dataset.shards]


class XDataset(torch.utils.data.Dataset):
    def __init__(self, ds):
        self.ds = ds

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, i):
        return self.ds[i]["x"]


def test_append_adds_a_segment_and_every_version_opens(tmp_path):
    out = tmp_path / "out"
    write(out, 0, 30, shards=2)
    v1 = unirecord.Dataset(out)
    old_inodes = shard_inodes(v1)
    write(out, 30, 40, mode="append")
    latest = unirecord.Dataset(out)
    assert latest.version == 2 and xs(latest) == list(range(40))
    assert [s["records"] for s in latest.segments] == [30, 10]
    assert shard_inodes(latest)[:2] == old_inodes  # the old shards, not copies
    assert xs(unirecord.Dataset(out, version=1)) == list(range(30))
    listed = unirecord.versions(out)
    assert [v["version"] for v in listed] == [1, 2]
    assert listed[1]["latest"] and listed[1]["segments"] == 2 and listed[1]["uuid"] == latest.uuid
    assert listed[0]["uuid"] == v1.uuid


def test_dataloader_workers_read_the_version_the_dataset_opened(tmp_path):
    out = tmp_path / "out"
    write(out, 0, 24)
    ds = unirecord.Dataset(out)
    write(out, 100, 130)  # a new version replaces the records
    assert xs(unirecord.Dataset(out)) == list(range(100, 130))
    loader = torch.utils.data.DataLoader(XDataset(ds), batch_size=8, num_workers=2)
    assert sorted(torch.cat(list(loader)).tolist()) == list(range(24))


def test_tags_and_gc(tmp_path):
    out = tmp_path / "out"
    for n in (5, 6, 7):
        write(out, 0, n)
    unirecord.tag(out, "baseline", 1)
    assert xs(unirecord.Dataset(out, tag="baseline")) == list(range(5))
    would = unirecord.gc(out, keep=1, dry_run=True)
    assert would["removed"] == [2] and would["kept"] == [1, 3]
    assert len(unirecord.versions(out)) == 3
    done = unirecord.gc(out, keep=1)
    assert done["removed"] == [2] and done["files_removed"] == 3 and done["bytes_freed"] > 0
    with pytest.raises(FileNotFoundError, match="version 2 is not kept"):
        unirecord.Dataset(out, version=2)
    with pytest.raises(FileNotFoundError, match="no tag 'nope'"):
        unirecord.Dataset(out, tag="nope")
    with pytest.raises(ValueError, match="starting with a letter"):
        unirecord.tag(out, "1x")
    with pytest.raises(ValueError, match="keep=N .the newest N. and/or keep_newer_than_s=S"):
        unirecord.gc(out)
    unirecord.untag(out, "baseline")
    unirecord.gc(out, keep=1)
    assert [v["version"] for v in unirecord.versions(out)] == [3]
    assert sorted(os.listdir(out)) == ["train-00000-of-00001.g000003.uidx", "train-00000-of-00001.g000003.urec",
                                       "train.g000003.uver", "train.uset", "train.utag"]


def test_a_damaged_tags_file_warns_readers_and_stops_every_writer(tmp_path):
    out = tmp_path / "out"
    for n in (5, 6, 7):
        write(out, 0, n)
    unirecord.tag(out, "best", 2)
    (out / "train.utag").write_bytes(signed(b"unirecord-tags 1\ntag best 2\nta- keep3 1\n"))
    line = r"train.utag: tags file line 3 'ta- keep3 1' is not 'tag NAME VERSION'"
    with pytest.warns(UserWarning, match=line):
        listed = unirecord.versions(out)
    assert [v["tags"] for v in listed] == [[], ["best"], []]
    assert xs(unirecord.Dataset(out, version=1)) == list(range(5))
    assert xs(unirecord.Dataset(out, tag="best")) == list(range(6))
    with pytest.raises(unirecord.CorruptRecordError, match="no sound tag 'keep3': .*" + line):
        unirecord.Dataset(out, tag="keep3")
    for writer in (lambda: unirecord.gc(out, keep=1), lambda: unirecord.tag(out, "other"),
                   lambda: unirecord.untag(out, "best"), lambda: write(out, 7, 9, mode="append"),
                   lambda: unirecord.add_fields(out, {"score": np.zeros(7, dtype=np.float32)}),
                   lambda: unirecord.drop_fields(out, ["text"]), lambda: unirecord.compact(out)):
        with pytest.raises(unirecord.CorruptRecordError, match=line):
            writer()
    with pytest.warns(UserWarning, match=line):
        assert [v["version"] for v in unirecord.versions(out)] == [1, 2, 3]


def test_a_kept_manifest_whose_uuid_is_not_utf8_is_named(tmp_path):
    out = tmp_path / "out"
    write(out, 0, 5)
    write(out, 0, 6)
    kept = out / "train.g000001.uver"
    lines = kept.read_bytes().split(b"\n")
    uuid_at = next(i for i, line in enumerate(lines) if line.startswith(b"uuid "))
    lines[uuid_at] = b"uuid \xc3" + lines[uuid_at][6:]
    kept.write_bytes(signed(b"\n".join(lines[:-2]) + b"\n"))
    with pytest.raises(unirecord.CorruptRecordError, match=r"train.g000001.uver: manifest bad uuid '\\xC3"):
        unirecord.versions(out)


def test_untag_a_version_and_an_empty_tag(tmp_path):
    out = tmp_path / "out"
    write(out, 0, 5)
    write(out, 0, 6)
    unirecord.tag(out, "best", 1)
    with pytest.raises(ValueError, match="tag '': an empty tag names no version"):
        unirecord.Dataset(out, tag="")
    with pytest.raises(ValueError, match=r"tag 'best' names version 1, not 2 \(kept as it is\)"):
        unirecord.untag(out, "best", version=2)
    assert xs(unirecord.Dataset(out, tag="best")) == list(range(5))
    unirecord.untag(out, "best", version=1)
    with pytest.raises(FileNotFoundError, match="no tag 'best'"):
        unirecord.Dataset(out, tag="best")


def test_a_loader_reads_a_kept_version(tmp_path):
    out = tmp_path / "out"
    write(out, 0, 20)
    write(out, 20, 50, mode="append")
    loader = unirecord.Loader(unirecord.Dataset(out, version=1), batch_size=4, shuffle=False, threads=1,
                              fields=unirecord.Fields(["x"], image_field=None, label_field=None))
    seen = [int(v) for batch in loader for v in batch["x"]]
    assert sorted(seen) == list(range(20))


def run_urec(*args):
    return subprocess.run([urec_binary(), *map(str, args)], capture_output=True, text=True)


def test_urec_versions_tag_gc_and_merge_without_copies(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, 0, 10)
    write(a, 10, 15, mode="append")
    write(b, 15, 25)
    listed = run_urec("versions", a, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [v["version"] for v in json.loads(listed.stdout)] == [1, 2]
    tagged = run_urec("tag", a, "first", "--version", "1")
    assert tagged.returncode == 0 and "first -> version 1" in tagged.stdout
    shown = run_urec("cat", a, "3", "--tag", "first")
    assert shown.returncode == 0 and json.loads(shown.stdout)["x"] == 3
    missing = run_urec("cat", a, "12", "--tag", "first")
    assert missing.returncode != 0 and "does not exist" in missing.stderr
    inspected = json.loads(run_urec("inspect", a, "--json").stdout)
    assert inspected["version"] == 2 and [s["records"] for s in inspected["segments"]] == [10, 5]

    merged = run_urec("merge", tmp_path / "m", a, b, "--name", "all")
    assert merged.returncode == 0, merged.stderr
    m = unirecord.Dataset(tmp_path / "m")
    assert xs(m) == list(range(25))
    assert len(m.segments) == 3
    assert shard_inodes(m) == shard_inodes(unirecord.Dataset(a)) + shard_inodes(unirecord.Dataset(b))

    checked = run_urec("versions", a, "--verify", "--json")
    assert checked.returncode == 0 and [v["verified"] for v in json.loads(checked.stdout)] == ["ok", "ok"]
    first_shard = json.loads(run_urec("inspect", a, "--json", "--version", 1).stdout)["shard_files"][0]["path"]
    pristine = open(first_shard, "rb").read()
    open(first_shard, "wb").write(pristine[:-100])  # truncated: its trailer is gone
    failed = run_urec("versions", a, "--verify")
    assert failed.returncode == 1 and "version 1: " in failed.stderr and "FAILED" in failed.stdout, failed
    open(first_shard, "wb").write(pristine)
    bad = run_urec("tag", a, "Bad")
    assert bad.returncode == 2 and "starting with a letter" in bad.stderr
    dry = run_urec("gc", a, "--keep", "1", "--dry-run")
    assert dry.returncode == 0 and "would remove versions: none" in dry.stdout  # 1 is tagged
    assert run_urec("tag", a, "first", "--delete").returncode == 0
    collected = run_urec("gc", a, "--keep", "1")
    assert collected.returncode == 0 and "removed versions: 1" in collected.stdout
    old = run_urec("inspect", a, "--version", "1")
    assert old.returncode != 0 and "version 1 is not kept" in old.stderr
    # The merged dataset's links keep its records whatever a collects.
    assert xs(unirecord.Dataset(tmp_path / "m")) == list(range(25))


def test_an_append_of_other_fields_is_refused_naming_both(tmp_path):
    out = tmp_path / "out"
    write(out, 0, 5)
    # The append's defaults (main's append work) name the fields the new records lack.
    with pytest.raises(ValueError, match="the records lack the fields text, blob .*give them a default"):
        with unirecord.Writer(out, {"x": "int64"}, "train", mode="append", sync=False) as w:
            w.write({"x": 1})
    assert xs(unirecord.Dataset(out)) == list(range(5))


def test_remote_segments_and_versions_equal_local(tmp_path):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
    from remote_servers import Nginx

    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        os.environ.pop(name, None)
    www = tmp_path / "www"
    write(www / "ds", 0, 12, shards=2)
    write(www / "ds", 12, 20, mode="append")
    unirecord.tag(www / "ds", "first", 1)
    nginx = Nginx(www)
    try:
        url = nginx.url + "/ds/"
        latest = unirecord.Dataset(url, cache_dir=tmp_path / "cache")
        assert latest.version == 2 and len(latest.segments) == 2 and xs(latest) == list(range(20))
        assert latest.uuid == unirecord.Dataset(www / "ds").uuid
        for kwargs in ({"version": 1}, {"tag": "first"}):
            first = unirecord.Dataset(url, cache_dir=tmp_path / "cache", **kwargs)
            assert first.version == 1 and xs(first) == list(range(12))
            first.verify()
        with pytest.raises(FileNotFoundError, match="version 5 is not kept"):
            unirecord.Dataset(url, cache_dir=tmp_path / "cache", version=5)
        # The cache is keyed by segment: version 1's two shards are the
        # latest's first segment; after them only the appended one is downloaded.
        first = unirecord.Dataset(url, cache_dir=tmp_path / "cache2", version=1)
        assert xs(first) == list(range(12)) and first.remote_stats()["shard_downloads"] == 2
        latest = unirecord.Dataset(url, cache_dir=tmp_path / "cache2")
        assert xs(latest) == list(range(20))
        stats = latest.remote_stats()
        assert stats["shard_downloads"] == 1 and stats["cache_hits"] == 2, stats
    finally:
        nginx.stop()


def test_remote_field_groups_equal_local(tmp_path):
    """Column files (format/SPEC.md 1.4) are downloaded, verified and cached as
    shards are: records, queries over an added field, the loader and verify
    give the local answers; after another add only its column files download."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
    from remote_servers import Nginx

    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        os.environ.pop(name, None)
    www = tmp_path / "www"
    local = www / "ds"
    write(local, 0, 12, shards=2)
    write(local, 12, 20, mode="append")
    unirecord.add_fields(local, {"score": np.arange(20, dtype=np.float32) / 4,
                                 "emb": np.arange(40, dtype=np.float32).reshape(20, 2),
                                 "note": lambda r: b"n" * (r["x"] % 5)})
    unirecord.drop_fields(local, ["text"])
    nginx = Nginx(www)
    try:
        url = nginx.url + "/ds/"
        mine = unirecord.Dataset(local)
        theirs = unirecord.Dataset(url, cache_dir=tmp_path / "cache")
        assert theirs.schema.names == mine.schema.names == ["x", "blob", "score", "emb", "note"]
        assert theirs.uuid == mine.uuid
        for k in range(20):
            a, b = mine[k], theirs[k]
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(np.asarray(b[key]), np.asarray(a[key]), err_msg="%d %s" % (k, key))
        assert theirs.query("score >= 2.5").tolist() == mine.query("score >= 2.5").tolist() == list(range(10, 20))
        theirs.verify()
        stats = theirs.remote_stats()
        assert stats["shard_downloads"] == 3 + 3, stats  # three shards, three column files
        loader = unirecord.Loader(unirecord.Dataset(url, cache_dir=tmp_path / "cache2"), batch_size=4, shuffle=True,
                                  seed=3, sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                                  fields=unirecord.Fields(["x", "score"], image_field=None, label_field=None))
        seen = {}
        for batch in loader:
            for x, score in zip(batch["x"].tolist(), batch["score"].tolist()):
                seen[x] = score
        assert seen == {k: k / 4 for k in range(20)}
        # Another field: the shards and the earlier column files come from the cache.
        unirecord.add_fields(local, {"twice": lambda r: 2 * r["x"]})
        again = unirecord.Dataset(url, cache_dir=tmp_path / "cache")
        assert [again[k]["twice"] for k in range(20)] == [2 * k for k in range(20)]
        assert again[7]["score"] == 7 / 4
        stats = again.remote_stats()
        assert stats["shard_downloads"] == 3 and stats["cache_hits"] == 6, stats
        # A damaged column file on the server is refused, named, never read.
        column = sorted(p for p in os.listdir(local) if ".f%06d." % again.version in p and p.endswith(".urec"))[0]
        data = bytearray((local / column).read_bytes())
        data[len(data) // 2] ^= 0xFF
        (local / column).write_bytes(bytes(data))
        damaged = unirecord.Dataset(url, cache_dir=tmp_path / "cache3")
        with pytest.raises(Exception, match=column):
            damaged.verify()
    finally:
        nginx.stop()


def test_compact_rewrites_many_segments_as_one_and_keeps_the_old_version(tmp_path):
    out = tmp_path / "out"
    write(out, 0, 10, shards=2)
    for begin in range(10, 40, 10):
        write(out, begin, begin + 10, mode="append")
    before = unirecord.Dataset(out)
    assert len(before.segments) == 4
    records = [before[i] for i in range(len(before))]
    summary = unirecord.compact(out, num_shards=3, sync=False)
    assert summary["records"] == 40 and summary["shards"] == 3
    after = unirecord.Dataset(out)
    assert len(after.segments) == 1 and after.version == 5 and len(after.shards) == 3
    assert [after[i] for i in range(len(after))] == records
    assert xs(unirecord.Dataset(out, version=4)) == list(range(40))  # kept until gc
    assert unirecord.gc(out, keep=1)["removed"] == [1, 2, 3, 4]
    assert xs(unirecord.Dataset(out)) == list(range(40))
    with pytest.raises(ValueError, match="not both"):
        unirecord.compact(out, num_shards=2, target_shard_bytes=1 << 20)
    with pytest.raises(FileNotFoundError, match="compact: "):
        unirecord.compact(tmp_path / "missing")
