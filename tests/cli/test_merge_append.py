"""urec merge and urec convert --append: ids concatenated (merge, in
argument order) or continued (append), each record equal to the input
record it came from, no input shard rewritten (the same inodes); a class
list that differs is refused saying so; an append after add-field gives the
new records --default, or is refused naming the field."""
import json
import os

from conftest import run_urec


def records(path):
    n = json.loads(run_urec("inspect", path, "--json").stdout)["records"]
    out = [json.loads(run_urec("cat", path, i, "--json").stdout) for i in range(n)]
    assert [r.pop("id") for r in out] == list(range(n))
    return out


def test_merge_concatenates_ids_in_argument_order(urec, mixed_folder, tmp_path):
    urec("convert", "imagefolder", mixed_folder, tmp_path / "a", "--name", "train", "--shards", 2)
    urec("convert", "imagefolder", mixed_folder, tmp_path / "b", "--name", "train", "--shards", 3, "--keep-original")
    done = urec("merge", tmp_path / "m", tmp_path / "b", tmp_path / "a", "--name", "all")
    a, b, m = records(tmp_path / "a"), records(tmp_path / "b"), records(tmp_path / "m" / "all")
    assert f"{len(a) + len(b)} records, 5 shards" in done.stdout
    assert m == b + a
    merged = json.loads(run_urec("inspect", tmp_path / "m" / "all", "--json", "--verify").stdout)
    assert merged["records"] == len(m) and len(merged["segments"]) == 2
    inputs = [json.loads(run_urec("inspect", tmp_path / d, "--json").stdout)["shard_files"] for d in ("b", "a")]
    assert [os.stat(s["path"]).st_ino for s in merged["shard_files"]] == \
        [os.stat(s["path"]).st_ino for shards in inputs for s in shards]


def test_merge_refuses_another_class_list_naming_it(urec, mixed_folder, tmp_path):
    urec("convert", "imagefolder", mixed_folder, tmp_path / "a", "--name", "train")
    urec("convert", "imagefolder", mixed_folder / "..", tmp_path / "odd", "--name", "train")  # one class: "train"
    refused = urec("merge", tmp_path / "m", tmp_path / "a", tmp_path / "odd", "--name", "all", check=False)
    assert refused.returncode == 2  # InvalidArgument: bad usage (the exit code table in docs/cli.md)
    assert f"input 1 ({tmp_path / 'odd'})" in refused.stderr and "metadata 'classes'" in refused.stderr, refused.stderr
    assert not (tmp_path / "m" / "all.uset").exists()


def test_append_continues_the_ids_and_keeps_the_old_records(urec, mixed_folder, tmp_path):
    urec("convert", "imagefolder", mixed_folder, tmp_path / "out", "--name", "train", "--shards", 2)
    before = records(tmp_path / "out")
    urec("convert", "imagefolder", mixed_folder, tmp_path / "out", "--name", "train", "--shards", 1, "--append",
         "--keep-original")
    after = records(tmp_path / "out")
    assert after[: len(before)] == before
    assert [r["path"] for r in after[len(before):]] == [r["path"] for r in before]
    inspected = json.loads(run_urec("inspect", tmp_path / "out", "--json").stdout)
    assert inspected["shards"] == 3 and [s["records"] for s in inspected["segments"]] == [len(before), len(before)]
    # The version before the append still opens, as it was.
    kept = json.loads(run_urec("inspect", tmp_path / "out", "--json", "--version", 1).stdout)
    assert kept["records"] == len(before) and kept["version"] == 1


def test_append_extends_the_class_list_only_when_asked(urec, mixed_folder, tmp_path):
    urec("convert", "imagefolder", mixed_folder, tmp_path / "out", "--name", "train")
    before = json.loads(run_urec("inspect", tmp_path / "out", "--json").stdout)
    old_classes = before["classes"]
    more = tmp_path / "more"
    (more / "zebra").mkdir(parents=True)
    first = [r["path"] for r in records(tmp_path / "out") if r["label"] == 0][:2]  # images the converter took
    for i, p in enumerate(first):
        (more / "zebra" / f"{i}.jpg").write_bytes((mixed_folder / p).read_bytes())
    refused = urec("convert", "imagefolder", more, tmp_path / "out", "--name", "train", "--append", check=False)
    assert refused.returncode == 2 and "class 'zebra'" in refused.stderr and "--extend-classes" in refused.stderr, \
        refused.stderr
    urec("convert", "imagefolder", more, tmp_path / "out", "--name", "train", "--append", "--extend-classes")
    after = json.loads(run_urec("inspect", tmp_path / "out", "--json", "--verify").stdout)
    assert after["classes"] == old_classes + ["zebra"]
    new = records(tmp_path / "out")[before["records"]:]
    assert [r["label"] for r in new] == [len(old_classes)] * len(first)
    found = run_urec("query", tmp_path / "out", "label == 'zebra'", "--ids").stdout.split()
    assert [int(i) for i in found] == list(range(before["records"], after["records"]))
    kept = json.loads(run_urec("inspect", tmp_path / "out", "--json", "--version", 1).stdout)
    assert kept["classes"] == old_classes


def test_an_image_folder_appended_after_add_field_gets_the_default(urec, mixed_folder, tmp_path):
    """Scores computed, then more images arrive: the append takes --default
    for the field the new records lack, or is refused naming it."""
    out = tmp_path / "out"
    urec("convert", "imagefolder", mixed_folder, out, "--name", "train", "--shards", 2)
    before = records(out)
    (tmp_path / "score.json").write_text(json.dumps({"fields": [{"name": "score", "type": "float32"}]}))
    (tmp_path / "score.jsonl").write_text("".join(json.dumps({"id": i, "score": i / 2}) + "\n"
                                                  for i in range(len(before))))
    urec("add-field", out / "train", tmp_path / "score.jsonl", "--schema", tmp_path / "score.json")
    refused = urec("convert", "imagefolder", mixed_folder, out, "--name", "train", "--append", check=False)
    assert refused.returncode == 2, refused.stderr
    assert "the new records lack the fields score (score: float32)" in refused.stderr, refused.stderr
    assert "--default FIELD=VALUE" in refused.stderr, refused.stderr
    urec("convert", "imagefolder", mixed_folder, out, "--name", "train", "--append", "--default", "score=-1")
    after = records(out)
    assert after[: len(before)] == [dict(r, score=i / 2) for i, r in enumerate(before)]
    assert after[len(before):] == [dict(r, score=-1.0) for r in before]
    inspected = json.loads(run_urec("inspect", out, "--json", "--verify").stdout)
    assert [g["fields"] for s in inspected["segments"] for g in s["field_groups"]] == [["score"], ["score"]]
