"""urec versions / tag / gc on damaged input (format/SPEC.md section 1.3):
a tags file whose line does not read, or names a version that is not kept,
makes every writer refuse the dataset (exit 1 naming the file and the line)
while readers go on and warn; a kept manifest whose uuid is not a UUID is an
error naming it, never a crash; tag --delete --version, --tag '' and a gc
without a rule."""
import json
import os

import pytest

from conftest import run_urec
from test_transcode import xxh3_64


def signed(body):
    """`body` with a valid checksum line: damage that the checksum cannot see."""
    return body + b"checksum %016x\n" % xxh3_64(body)


@pytest.fixture
def dataset(urec, tmp_path):
    """Versions 1..3 of OUT/m (3, 4 and 5 records); `keep3` tags version 1, `best` version 2."""
    (tmp_path / "schema.json").write_text(json.dumps({"fields": [{"name": "text", "type": "string"}]}))
    for n in (3, 4, 5):
        (tmp_path / "m.jsonl").write_text("".join(json.dumps({"text": f"t{i}"}) + "\n" for i in range(n)))
        urec("convert", "jsonl", tmp_path / "m.jsonl", tmp_path / "out", "--schema", tmp_path / "schema.json")
    path = tmp_path / "out" / "m"
    urec("tag", path, "keep3", "--version", 1)
    urec("tag", path, "best", "--version", 2)
    return path


def damage_tags(path, keep3_line):
    tags = path.parent / "m.utag"
    tags.write_bytes(signed(b"unirecord-tags 1\ntag best 2\n" + keep3_line + b"\n"))
    return str(tags)


def expect_every_writer_refuses(path, tmp_path, problem):
    """Exit 1 naming the tags file, its line 3 and `problem`; version 1 stays."""
    (tmp_path / "add.json").write_text(json.dumps({"fields": [{"name": "score", "type": "float32"}]}))
    (tmp_path / "add.jsonl").write_text("".join(json.dumps({"id": i, "score": i}) + "\n" for i in range(5)))
    writers = {
        "gc": ["gc", path, "--keep", 1],
        "tag": ["tag", path, "other"],
        "untag": ["tag", path, "best", "--delete"],
        "compact": ["compact", path],
        "add-field": ["add-field", path, tmp_path / "add.jsonl", "--schema", tmp_path / "add.json"],
        "drop-field": ["drop-field", path, "text"],
        "append": ["convert", "jsonl", tmp_path / "m.jsonl", path.parent, "--schema", tmp_path / "schema.json",
                   "--append"],
    }
    for name, args in writers.items():
        refused = run_urec(*args, check=False)
        assert refused.returncode == 1, (name, refused.stdout, refused.stderr)
        assert f"{path.parent / 'm.utag'}: tags file line 3" in refused.stderr, (name, refused.stderr)
        assert problem in refused.stderr, (name, refused.stderr)
    assert (path.parent / "m.g000001.uver").exists()
    listed = json.loads(run_urec("versions", path, "--json").stdout)
    assert [v["version"] for v in listed] == [1, 2, 3]


def test_a_damaged_tag_key_stops_every_writer_and_readers_warn(dataset, tmp_path):
    damage_tags(dataset, b"ta- keep3 1")
    expect_every_writer_refuses(dataset, tmp_path, "'ta- keep3 1' is not 'tag NAME VERSION'")
    listed = run_urec("versions", dataset)
    assert listed.returncode == 0
    assert "urec versions: warning: " in listed.stderr and "line 3 'ta- keep3 1'" in listed.stderr, listed.stderr
    assert "best" in listed.stdout and "keep3" not in listed.stdout
    as_json = run_urec("versions", dataset, "--json")
    assert [v["tags"] for v in json.loads(as_json.stdout)] == [[], ["best"], []] and "warning" in as_json.stderr
    assert json.loads(run_urec("cat", dataset, 2, "--version", 1, "--json").stdout)["text"] == "t2"
    assert json.loads(run_urec("cat", dataset, 3, "--tag", "best", "--json").stdout)["text"] == "t3"
    by_damaged = run_urec("cat", dataset, 0, "--tag", "keep3", check=False)
    assert by_damaged.returncode == 1 and "no sound tag 'keep3'" in by_damaged.stderr
    assert "line 3 'ta- keep3 1'" in by_damaged.stderr
    # The way out docs/cli.md gives: remove the file and tag again.
    os.remove(dataset.parent / "m.utag")
    run_urec("tag", dataset, "keep3", "--version", 1)
    assert "removed versions: 2" in run_urec("gc", dataset, "--keep", 1).stdout


@pytest.mark.parametrize("line, problem", [
    (b"tag keep3 9", "tag 'keep3' names version 9, which is not kept"),  # a changed number
    (b"tag keep3 01", "'tag keep3 01' names no version"),               # a leading zero
    (b"tag  1", "'tag  1' names no tag"),                                # an empty name
    (b"tag keep3 1 extra", "'tag keep3 1 extra' names no version"),
])
def test_a_tag_line_that_does_not_read_or_verify_stops_every_writer(dataset, tmp_path, line, problem):
    damage_tags(dataset, line)
    expect_every_writer_refuses(dataset, tmp_path, problem)
    listed = run_urec("versions", dataset)
    assert listed.returncode == 0 and problem in listed.stderr, listed.stderr


def test_a_kept_manifest_uuid_that_is_not_utf8_is_an_error_not_a_crash(dataset):
    kept = dataset.parent / "m.g000001.uver"
    lines = kept.read_bytes().split(b"\n")
    uuid_at = next(i for i, line in enumerate(lines) if line.startswith(b"uuid "))
    lines[uuid_at] = b"uuid \xff" + lines[uuid_at][6:]
    kept.write_bytes(signed(b"\n".join(lines[:-2]) + b"\n"))  # the lines before the checksum line
    for args in (["--json"], []):
        listed = run_urec("versions", dataset, *args, text=False, check=False)
        assert listed.returncode == 1, listed  # not SIGABRT
        assert str(kept).encode() + b": manifest bad uuid '\\xFF" in listed.stderr, listed.stderr
        assert b"\xff" not in listed.stderr and listed.stdout == b""


def test_tag_delete_with_a_version_removes_only_a_tag_naming_it(dataset):
    other = run_urec("tag", dataset, "best", "--delete", "--version", 1, check=False)
    assert other.returncode == 2 and "tag 'best' names version 2, not 1 (kept as it is)" in other.stderr
    assert json.loads(run_urec("cat", dataset, 3, "--tag", "best", "--json").stdout)["text"] == "t3"
    assert "removed tag best" in run_urec("tag", dataset, "best", "--delete", "--version", 2).stdout
    assert run_urec("cat", dataset, 0, "--tag", "best", check=False).returncode == 1


def test_an_empty_tag_is_refused_not_the_latest(dataset):
    for args in (["cat", dataset, 0, "--tag", ""], ["inspect", dataset, "--tag", ""], ["tag", dataset, ""],
                 ["tag", dataset, "", "--delete"]):
        refused = run_urec(*args, check=False)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert "empty tag" in refused.stderr or "tag '': a tag is 1 to 64" in refused.stderr, refused.stderr


def test_gc_without_a_rule_names_the_options_it_has(dataset):
    refused = run_urec("gc", dataset, check=False)
    assert refused.returncode == 2
    assert "--keep N" in refused.stderr and "--keep-newer-than-s S" in refused.stderr
    assert "keep_last" not in refused.stderr
