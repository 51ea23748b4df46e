"""`urec convert imagefolder`, `urec inspect` and `urec cat` end to end,
with torchvision's ImageFolder and PIL as the references."""
import filecmp
import io
import json
import os
import shutil

import pytest

from conftest import run_urec


@pytest.fixture(scope="session")
def converted(urec, mixed_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("records")
    result = urec("convert", "imagefolder", mixed_folder, out, "--name", "train", "--threads", 3)
    return out, result.stdout


def inspect_json(path):
    return json.loads(run_urec("inspect", path, "--json").stdout)


def cat_json(path, record_id):
    return json.loads(run_urec("cat", path, record_id, "--json").stdout)


def rejects(out, name="train"):
    (report,) = out.glob(name + ".rejects.g*.tsv")  # the committed generation's
    lines = report.read_text().splitlines()
    assert lines[0] == "path\treason"
    return dict(line.split("\t") for line in lines[1:])


def test_summary_counts_every_file(converted):
    out, summary = converted
    # 24 + the CMYK JPEG + the PNG named .JPEG written; truncated, empty rejected; README skipped.
    assert "26 written, 2 rejected, 1 skipped" in summary
    assert "train.rejects.g000001.tsv" in summary
    assert "JPEG layout: 25 transcoded to the fast layout, 0 kept as their source bytes; 1 PNG stored as they are;" in summary
    not_written = rejects(out)
    assert not_written.pop("README.txt") == "skipped: not inside a class folder"
    reasons = sorted(not_written.values())
    assert reasons == ["empty file", "truncated: the file ends without an EOI marker"]


def test_labels_and_order_match_torchvision_imagefolder(converted, mixed_folder):
    datasets = pytest.importorskip("torchvision.datasets")
    out, _ = converted
    reference = datasets.ImageFolder(str(mixed_folder))  # lists files; decodes nothing
    info = inspect_json(out)
    assert info["classes"] == reference.classes
    not_written = rejects(out)
    expected = [(os.path.relpath(path, mixed_folder), label) for path, label in reference.samples
                if os.path.relpath(path, mixed_folder) not in not_written]
    got = []
    for record_id in range(info["records"]):
        record = cat_json(out, record_id)
        got.append((record["path"], record["label"]))
    assert got == expected


def test_every_record_decodes_as_its_source_and_is_sized_as_pil_sees_it(converted, mixed_folder):
    Image = pytest.importorskip("PIL.Image")
    out, _ = converted
    for record_id in range(inspect_json(out)["records"]):
        record = cat_json(out, record_id)
        image = run_urec("cat", out, record_id, "--field", "image", text=False).stdout
        source = mixed_folder / record["path"]
        png = image[:8] == b"\x89PNG\r\n\x1a\n"  # the PNG named .JPEG, stored as it is
        assert record["jpeg_layout"] == (0 if png else 1), record["path"]
        assert (image == source.read_bytes()) == png, record["path"]
        assert record["image"] == {"size": len(image)}
        with Image.open(source) as pil, Image.open(io.BytesIO(image)) as stored:
            assert pil.size == (record["width"], record["height"]), record["path"]
            assert stored.convert("RGB").tobytes() == pil.convert("RGB").tobytes(), record["path"]


def test_keep_original_stores_every_source_byte_for_byte(urec, mixed_folder, tmp_path):
    out = tmp_path / "kept"
    summary = urec("convert", "imagefolder", mixed_folder, out, "--name", "train", "--keep-original").stdout
    assert "0 transcoded to the fast layout, 25 kept as their source bytes (--keep-original); 1 PNG" in summary
    assert "(+0.0%)" in summary
    for record_id in range(26):
        record = cat_json(out, record_id)
        image = run_urec("cat", out, record_id, "--field", "image", text=False).stdout
        assert image == (mixed_folder / record["path"]).read_bytes(), record["path"]
        assert record["jpeg_layout"] == 0


def test_inspect_json_describes_the_dataset(converted, mixed_folder):
    out, _ = converted
    info = inspect_json(out)
    assert info["records"] == 26
    assert info["shards"] == 1
    assert [(f["name"], f["type"]) for f in info["schema"]] == [
        ("image", "bytes"), ("label", "int64"), ("path", "string"), ("width", "int32"), ("height", "int32"),
        ("jpeg_layout", "int32"), ("source_size", "int64"), ("source_xxh3", "int64")]
    assert info["index_fields"] == ["label", "width", "height"]
    assert info["metadata"]["classes"].split("\n") == sorted(p.name for p in mixed_folder.iterdir() if p.is_dir())
    assert sum(info["label_counts"]) == 26
    assert info["sizes"]["blob_bytes"] >= sum(
        (mixed_folder / cat_json(out, i)["path"]).stat().st_size for i in range(3))
    text = run_urec("inspect", out).stdout
    assert "26 in 1 shard" in text and "label: int64 (indexed)" in text


def test_cat_field_as_text(converted):
    out, _ = converted
    record = cat_json(out, 0)
    assert run_urec("cat", out, 0, "--field", "path").stdout == record["path"] + "\n"
    assert run_urec("cat", out, 0, "--field", "label").stdout == f"{record['label']}\n"
    assert json.loads(run_urec("cat", out, 0, "--field", "width", "--json").stdout) == {"width": record["width"]}


def test_output_is_identical_across_thread_counts(urec, mixed_folder, tmp_path):
    for threads in (1, 4):
        urec("convert", "imagefolder", mixed_folder, tmp_path / str(threads), "--threads", threads,
             "--shards", 2)
    one, four = tmp_path / "1", tmp_path / "4"
    names = sorted(os.listdir(one))
    assert names == sorted(os.listdir(four)) and len(names) == 7  # 2 shards, 2 indexes, rejects, manifest, its kept copy
    match, mismatch, errors = filecmp.cmpfiles(one, four, names, shallow=False)
    assert mismatch == [] and errors == []


def test_strict_fails_on_the_first_reject(urec, mixed_folder, tmp_path):
    result = urec("convert", "imagefolder", mixed_folder, tmp_path / "out", "--strict", check=False)
    assert result.returncode == 1
    assert result.stderr.startswith("urec convert: error: ")
    assert ".JPEG: " in result.stderr and "strict" in result.stderr
    assert not any(name.endswith(".urec") for name in os.listdir(tmp_path / "out"))


@pytest.mark.parametrize("args, code, message", [
    (["convert", "imagefolder", "/nonexistent/src", "OUT"], 1, "/nonexistent/src does not exist"),
    (["convert", "imagefolder", "SRC", "OUT", "--shard-size", "lots"], 2, "is not a size"),
    (["inspect", "/nonexistent/records"], 1, "/nonexistent/records"),
    (["cat", "/nonexistent/records", "0"], 1, "/nonexistent/records"),
])
def test_bad_arguments_give_clear_errors(urec, mixed_folder, tmp_path, args, code, message):
    args = [str(mixed_folder) if a == "SRC" else str(tmp_path / "out") if a == "OUT" else a for a in args]
    result = urec(*args, check=False)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert result.stderr.count("\n") == 1  # one line, no stack trace


def test_cat_rejects_unknown_ids_and_fields(converted):
    out, _ = converted
    result = run_urec("cat", out, 26, check=False)
    assert result.returncode == 1 and "record 26 does not exist" in result.stderr
    result = run_urec("cat", out, 0, "--field", "nope", check=False)
    assert result.returncode == 2 and "no field named 'nope'" in result.stderr


@pytest.mark.parametrize("damage", ["truncate", "flip", "drop_index"])
def test_damaged_dataset_is_refused_not_crashed(converted, tmp_path, damage):
    out, _ = converted
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    shard = next(copy.glob("*.urec"))
    data = bytearray(shard.read_bytes())
    if damage == "truncate":
        shard.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        data[len(data) // 3] ^= 0xFF  # inside the blob pages
        shard.write_bytes(data)
    else:
        shard.with_suffix(".uidx").unlink()
    results = [run_urec("inspect", copy, "--verify", check=False)]
    results += [run_urec("cat", copy, i, "--field", "image", check=False, text=False) for i in range(26)]
    failures = [r for r in results if r.returncode != 0]
    assert failures, "the damage went unnoticed"
    for r in failures:
        assert r.returncode == 1  # an error, not a signal
        stderr = r.stderr.decode() if isinstance(r.stderr, bytes) else r.stderr
        assert stderr.startswith("urec ") and ": error: " in stderr


def test_unusual_names_survive_json_and_tsv(urec, mixed_folder, tmp_path):
    src = tmp_path / "src"
    jpeg = next(mixed_folder.glob("*/*_*.JPEG")).read_bytes()
    (src / "ünï cøde").mkdir(parents=True)
    (src / "ünï cøde" / 'quote " and \\ back.jpg').write_bytes(jpeg)
    (src / "ünï cøde" / "tab\there.jpg").write_bytes(b"not an image")
    urec("convert", "imagefolder", src, tmp_path / "out", "--name", "odd")
    record = cat_json(tmp_path / "out", 0)
    assert record["path"] == 'ünï cøde/quote " and \\ back.jpg'
    assert inspect_json(tmp_path / "out")["classes"] == ["ünï cøde"]
    path, reason = next(iter(rejects(tmp_path / "out", "odd").items()))
    assert (path + "\t" + reason).startswith("ünï cøde/tab\\there.jpg\tnot a JPEG or PNG: ")  # the tab escaped


# --- urec convert jsonl / csv -------------------------------------------------

def test_convert_jsonl_and_csv_token_manifests(urec, tmp_path):
    (tmp_path / "schema.json").write_text(json.dumps({"fields": [
        {"name": "tokens", "type": "int32", "shape": [-1]}, {"name": "text", "type": "string"}]}))
    (tmp_path / "m.jsonl").write_text('{"tokens": [1, 2, 3], "text": "a"}\n{"tokens": [], "text": "b"}\n'
                                      '{"tokens": [1], "text": 2}\n')
    result = urec("convert", "jsonl", tmp_path / "m.jsonl", tmp_path / "out", "--schema", tmp_path / "schema.json")
    assert "2 written, 1 rejected, 0 skipped" in result.stdout
    assert cat_json(tmp_path / "out" / "m", 0)["tokens"] == [1, 2, 3]
    assert cat_json(tmp_path / "out" / "m", 1)["tokens"] == []
    assert rejects(tmp_path / "out", "m") == {"line 3": "field 'text': 2 is not a string"}
    assert "JPEG layout" not in result.stdout  # no images, no image summary
    strict = urec("convert", "jsonl", tmp_path / "m.jsonl", tmp_path / "strict", "--schema", tmp_path / "schema.json",
                  "--strict", check=False)
    assert strict.returncode == 1
    assert f"{tmp_path / 'm.jsonl'} line 3: field 'text': 2 is not a string (strict mode stops" in strict.stderr
    (tmp_path / "m.csv").write_text('text,tokens\n"x, y","[4, 5]"\n')
    result = urec("convert", "csv", tmp_path / "m.csv", tmp_path / "out", "--schema", tmp_path / "schema.json",
                  "--name", "c")
    assert "1 written, 0 rejected" in result.stdout
    record = cat_json(tmp_path / "out" / "c", 0)
    assert record["tokens"] == [4, 5] and record["text"] == "x, y"
    bad = urec("convert", "jsonl", tmp_path / "m.jsonl", tmp_path / "out", "--schema", tmp_path / "m.csv",
               check=False)
    assert bad.returncode == 2 and "schema file" in bad.stderr and "not valid JSON" in bad.stderr
