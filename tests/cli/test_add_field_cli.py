"""urec add-field / drop-field (format/SPEC.md section 1.4): fields added,
replaced and dropped as new versions without rewriting a shard (the same
inodes); urec cat / query / inspect / verify read them with the shards'
fields; a missing, repeated or unknown id or a bad value is refused naming
the line; a segment without lines gets --default or is refused; an append after
add-field and urec merge give records without the added fields their
--default values, or are refused naming the fields and --default."""
import json
import os

from conftest import run_urec


def write_dataset(urec, tmp_path, n=7):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "schema.json").write_text(json.dumps({"fields": [
        {"name": "text", "type": "string"}, {"name": "label", "type": "int64", "indexed": True}]}))
    (tmp_path / "m.jsonl").write_text("".join(json.dumps({"text": f"t{i}", "label": i % 3}) + "\n" for i in range(n)))
    urec("convert", "jsonl", tmp_path / "m.jsonl", tmp_path / "out", "--schema", tmp_path / "schema.json",
         "--shards", 2)
    return tmp_path / "out" / "m"


def add_schema(tmp_path, fields):
    (tmp_path / "add.json").write_text(json.dumps({"fields": fields}))
    return tmp_path / "add.json"


def cat(path, i, *extra):
    return json.loads(run_urec("cat", path, i, "--json", *extra).stdout)


def test_add_replace_and_drop_fields_as_new_versions(urec, tmp_path):
    path = write_dataset(urec, tmp_path)
    shards = [s["path"] for s in json.loads(run_urec("inspect", path, "--json").stdout)["shard_files"]]
    inodes = [os.stat(s).st_ino for s in shards]
    schema = add_schema(tmp_path, [{"name": "score", "type": "float32", "indexed": True},
                                   {"name": "tokens", "type": "int32", "shape": [-1]}])
    # Ids in any order.
    (tmp_path / "v.jsonl").write_text("".join(
        json.dumps({"id": i, "score": i / 2, "tokens": list(range(i))}) + "\n" for i in reversed(range(7))))
    done = urec("add-field", path, tmp_path / "v.jsonl", "--schema", schema)
    assert "added fields: 7 records" in done.stdout and "(version 2)" in done.stdout
    assert cat(path, 5) == {"id": 5, "text": "t5", "label": 2, "score": 2.5, "tokens": [0, 1, 2, 3, 4]}
    assert run_urec("query", path, "score >= 2 and label == 0", "--ids").stdout.split() == ["6"]
    inspected = json.loads(run_urec("inspect", path, "--json", "--verify").stdout)
    group = inspected["segments"][0]["field_groups"][0]
    assert group["fields"] == ["score", "tokens"] and group["generation"] == 2 and len(group["files"]) == 2
    assert [os.stat(s).st_ino for s in shards] == inodes  # no shard rewritten
    assert "fields    segment 0, added in version 2: score, tokens" in run_urec("inspect", path).stdout
    # Replace label by a string, drop text.
    replace = add_schema(tmp_path, [{"name": "label", "type": "string"}])
    (tmp_path / "l.jsonl").write_text("".join(json.dumps({"id": i, "label": f"L{i}"}) + "\n" for i in range(7)))
    urec("add-field", path, tmp_path / "l.jsonl", "--schema", replace)
    urec("drop-field", path, "text")
    assert cat(path, 4) == {"id": 4, "label": "L4", "score": 2.0, "tokens": [0, 1, 2, 3]}
    assert "dropped   segment 0: text" in run_urec("inspect", path).stdout
    # Every version still opens as it was.
    assert cat(path, 4, "--version", 1) == {"id": 4, "text": "t4", "label": 1}
    assert cat(path, 4, "--version", 2)["score"] == 2.0
    run_urec("versions", path, "--verify")


def test_bad_lines_are_refused_naming_the_line(urec, tmp_path):
    path = write_dataset(urec, tmp_path, n=3)
    schema = add_schema(tmp_path, [{"name": "score", "type": "float32"}])
    cases = {
        '{"id": 0, "score": 1}\n{"id": 1, "score": 2}\n{"id": 0, "score": 3}\n': "line 3: id 0 repeats line 1",
        '{"id": 0, "score": 1}\n{"id": 1, "score": "x"}\n{"id": 2, "score": 3}\n': "line 2: field 'score'",
        '{"id": 0, "score": 1}\n{"id": 7, "score": 2}\n': "line 2: id 7 is not a record",
        '{"id": 0, "score": 1}\n{"score": 2}\n': "line 2: missing field 'id'",
        '{"id": 0, "score": 1}\n{"id": 2, "score": 1}\n': "no line for id 1",
        '{"id": 0, "score": 1, "x": 2}\n': "line 1: key 'x' is not a field",
    }
    for text, problem in cases.items():
        (tmp_path / "v.jsonl").write_text(text)
        refused = urec("add-field", path, tmp_path / "v.jsonl", "--schema", schema, check=False)
        assert refused.returncode == 2, refused.stderr
        assert problem in refused.stderr and str(tmp_path / "v.jsonl") in refused.stderr, (problem, refused.stderr)
    assert json.loads(run_urec("inspect", path, "--json").stdout)["version"] == 1  # nothing committed
    unknown = urec("drop-field", path, "nope", check=False)
    assert unknown.returncode == 2 and "no field named 'nope'" in unknown.stderr, unknown.stderr


def test_lines_for_new_data_only_need_a_default_for_the_other_segments(urec, tmp_path):
    path = write_dataset(urec, tmp_path, n=4)
    (tmp_path / "more.jsonl").write_text("".join(json.dumps({"text": f"t{i}", "label": 1}) + "\n" for i in range(4, 7)))
    urec("convert", "jsonl", tmp_path / "more.jsonl", tmp_path / "out", "--name", "m", "--schema",
         tmp_path / "schema.json", "--append")
    assert len(json.loads(run_urec("inspect", path, "--json").stdout)["segments"]) == 2
    schema = add_schema(tmp_path, [{"name": "score", "type": "float32"}, {"name": "tag", "type": "string"}])
    (tmp_path / "v.jsonl").write_text("".join(json.dumps({"id": i, "score": i / 2, "tag": f"new{i}"}) + "\n"
                                              for i in range(4, 7)))
    refused = urec("add-field", path, tmp_path / "v.jsonl", "--schema", schema, check=False)
    assert refused.returncode == 2 and "segments 0 get no values" in refused.stderr, refused.stderr
    bad = urec("add-field", path, tmp_path / "v.jsonl", "--schema", schema, "--default", "score=0", check=False)
    assert bad.returncode == 2 and "missing field 'tag'" in bad.stderr, bad.stderr
    (tmp_path / "none.jsonl").write_text("")
    empty = urec("add-field", path, tmp_path / "none.jsonl", "--schema", schema, "--default", "score=0",
                 "--default", 'tag=""', check=False)
    assert empty.returncode == 2 and "no line for any record" in empty.stderr, empty.stderr
    assert json.loads(run_urec("inspect", path, "--json").stdout)["version"] == 2  # nothing committed
    urec("add-field", path, tmp_path / "v.jsonl", "--schema", schema, "--default", "score=-1",
         "--default", 'tag="old"')
    assert cat(path, 1) == {"id": 1, "text": "t1", "label": 1, "score": -1.0, "tag": "old"}
    assert cat(path, 5) == {"id": 5, "text": "t5", "label": 1, "score": 2.5, "tag": "new5"}


def test_merge_gives_an_input_without_added_fields_the_defaults(urec, tmp_path):
    a = write_dataset(urec, tmp_path / "a")
    b = write_dataset(urec, tmp_path / "b")
    schema = add_schema(tmp_path, [{"name": "score", "type": "float32"}])
    (tmp_path / "v.jsonl").write_text("".join(json.dumps({"id": i, "score": i}) + "\n" for i in range(7)))
    urec("add-field", a, tmp_path / "v.jsonl", "--schema", schema)
    refused = urec("merge", tmp_path / "m", b, a, "--name", "all", check=False)
    assert refused.returncode == 2
    assert f"the records of input 0 ({b}) lack the fields score (score: float32)" in refused.stderr, refused.stderr
    assert "--default FIELD=VALUE" in refused.stderr, refused.stderr
    assert not (tmp_path / "m" / "all.uset").exists()
    urec("merge", tmp_path / "m", b, a, "--name", "all", "--default", "score=-1")
    assert cat(tmp_path / "m" / "all", 1) == {"id": 1, "text": "t1", "label": 1, "score": -1.0}
    assert cat(tmp_path / "m" / "all", 8) == {"id": 8, "text": "t1", "label": 1, "score": 1.0}
    assert run_urec("query", tmp_path / "m" / "all", "score < 0", "--ids").stdout.split() == list(map(str, range(7)))
    run_urec("inspect", tmp_path / "m" / "all", "--verify")
    # Inputs with the same fields in other groups merge as they are.
    urec("add-field", b, tmp_path / "v.jsonl", "--schema", schema)
    urec("merge", tmp_path / "m", a, b, "--name", "all")
    assert cat(tmp_path / "m" / "all", 8)["score"] == 1.0


def test_an_append_after_add_field_takes_defaults_as_the_documented_order_gives(urec, tmp_path):
    """The order a dataset lives in (fields computed, then more records
    arrive) ends where the documented one does (append, then add-field with
    --default for the new segment): the same records."""
    path = write_dataset(urec, tmp_path / "lived", n=4)
    reference = write_dataset(urec, tmp_path / "documented", n=4)
    (tmp_path / "more.jsonl").write_text("".join(json.dumps({"text": f"t{i}", "label": 1}) + "\n"
                                                 for i in range(4, 7)))
    schema = add_schema(tmp_path, [{"name": "score", "type": "float32", "indexed": True},
                                   {"name": "tag", "type": "string"}])
    (tmp_path / "v.jsonl").write_text("".join(json.dumps({"id": i, "score": i / 2, "tag": f"t{i}"}) + "\n"
                                              for i in range(4)))
    defaults = ["--default", "score=-1", "--default", 'tag="new"']

    def append(out, *extra, check=True):
        return urec("convert", "jsonl", tmp_path / "more.jsonl", out, "--name", "m", "--schema",
                    tmp_path / "lived" / "schema.json", "--append", *extra, check=check)

    append(reference.parent)
    urec("add-field", reference, tmp_path / "v.jsonl", "--schema", schema, *defaults)
    urec("add-field", path, tmp_path / "v.jsonl", "--schema", schema)
    refused = append(path.parent, check=False)
    assert refused.returncode == 2
    assert "the new records lack the fields score, tag (score: float32 (indexed), tag: string)" in refused.stderr, \
        refused.stderr
    assert "--default FIELD=VALUE" in refused.stderr, refused.stderr
    for bad, why in ((["--default", "score=1e39", "--default", 'tag="x"'], "out of float32's range"),
                     (["--default", "score=0"], "missing field 'tag'"),
                     (defaults + ["--default", "label=3"], "key 'label' is not a field")):
        refused = append(path.parent, *bad, check=False)
        assert refused.returncode == 2 and why in refused.stderr, refused.stderr
    assert json.loads(run_urec("inspect", path, "--json").stdout)["version"] == 2  # nothing committed
    append(path.parent, *defaults)
    assert [cat(path, i) for i in range(7)] == [cat(reference, i) for i in range(7)]
    assert cat(path, 5) == {"id": 5, "text": "t5", "label": 1, "score": -1.0, "tag": "new"}
    assert cat(path, 2) == {"id": 2, "text": "t2", "label": 2, "score": 1.0, "tag": "t2"}
    assert run_urec("query", path, "score < 0", "--ids").stdout.split() == ["4", "5", "6"]
    inspected = json.loads(run_urec("inspect", path, "--json", "--verify").stdout)
    assert [s["field_groups"][0]["fields"] for s in inspected["segments"]] == [["score", "tag"]] * 2
    # --default is an append's: refused without --append.
    alone = urec("convert", "jsonl", tmp_path / "more.jsonl", tmp_path / "x", "--schema",
                 tmp_path / "lived" / "schema.json", "--default", "score=0", check=False)
    assert alone.returncode == 2 and "--append" in alone.stderr, alone.stderr
