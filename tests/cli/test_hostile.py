"""Issue 22, the command line as a hostile user drives it: every numeric
option of every subcommand (found from `--help`, so a new one is covered
without editing this file) gets values outside its range, wrong types,
missing and unreadable paths; none may end in a signal, and each message
names the input and what was expected. Also: errors about files name the
file and the reason, hashes print as hashes, and names that are not UTF-8
or hold a newline survive every printer."""
import json
import os
import re
import shutil
import stat

import pytest

from conftest import run_urec
from test_exit_codes import jpeg_bytes, one_error_line
from test_transcode import xxh3_64

SUBCOMMANDS = {  # the positional arguments each needs, NAME replaced per test
    "bench": ["DATASET"],
    "cat": ["DATASET", "0"],
    "convert imagefolder": ["SRC", "NEW"],
    "convert coco": ["ANN", "SRC", "NEW"],
    "convert jsonl": ["MANIFEST", "NEW", "--schema", "SCHEMA"],
    "convert csv": ["CSV", "NEW", "--schema", "SCHEMA"],
    "decode": ["JPEG"],
    "inspect": ["DATASET"],
    "merge": ["NEW", "DATASET", "--name", "m"],
    "query": ["DATASET", "label >= 0"],
    "sample": ["--records", "10"],
    "show": ["DATASET", "-o", "SHEET"],
    "serve": ["DATASET"],  # every case here fails before it would serve
    "synth-imagefolder": ["NEW"],
    "versions": ["DATASET"],
    "tag": ["DATASET", "t"],
    "gc": ["DATASET", "--keep", "5"],
    "compact": ["DATASET"],
    "add-field": ["DATASET", "MANIFEST", "--schema", "SCHEMA"],
    "drop-field": ["DATASET", "label"],
}


@pytest.fixture(scope="module")
def inputs(urec, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    src = root / "src"
    for c in range(2):
        (src / f"c{c}").mkdir(parents=True)
        for i in range(2):
            (src / f"c{c}" / f"{i}.jpg").write_bytes(jpeg_bytes(40, 30, seed=c * 2 + i))
    urec("convert", "imagefolder", src, root / "dataset", "--name", "d")
    (root / "a.jpg").write_bytes(jpeg_bytes(40, 30))
    files = [f"c{c}/{i}.jpg" for c in range(2) for i in range(2)]
    (root / "ann.json").write_text(json.dumps({
        "images": [{"id": k, "file_name": f, "width": 40, "height": 30} for k, f in enumerate(files)],
        "annotations": [{"id": 1, "image_id": 0, "category_id": 1, "bbox": [1, 2, 3, 4], "area": 12, "iscrowd": 0}],
        "categories": [{"id": 1, "name": "one"}]}))
    (src / "manifest.jsonl").write_text("".join(json.dumps({"image": f, "label": k}) + "\n" for k, f in enumerate(files)))
    (src / "manifest.csv").write_text("image,label\n" + "".join(f"{f},{k}\n" for k, f in enumerate(files)))
    (root / "schema.json").write_text(json.dumps({"fields": [{"name": "image", "type": "image"},
                                                             {"name": "label", "type": "int64"}]}))
    return {"DATASET": root / "dataset", "SRC": src, "JPEG": root / "a.jpg", "NEW": root / "new", "SHEET": root / "sheet.png",
            "ANN": root / "ann.json", "MANIFEST": src / "manifest.jsonl", "CSV": src / "manifest.csv",
            "SCHEMA": root / "schema.json", "root": root}


def command(name, inputs, replace=None):
    args = name.split() + SUBCOMMANDS[name]
    names = dict(inputs, **(replace or {}))
    return [str(names.get(a, a)) for a in args]


def numeric_options(name):
    """(option, type, min, max) of every numeric option `urec NAME --help` lists."""
    text = run_urec(*name.split(), "--help").stdout
    found = []
    for m in re.finditer(r"^\s+((?:-\w,)?--[\w-]+) (INT|UINT|FLOAT)\b([^\n]*)", text, re.M):
        option = m.group(1).split(",")[-1]
        ranged = re.match(r":(?:INT|NUMBER) in (-?[\d.e+]+)\.\.(-?[\d.e+]+)", m.group(3))
        assert ranged, f"urec {name} {option} ({m.group(2)}) has no range check: {m.group(0).strip()}"
        found.append((option, m.group(2), ranged.group(1), ranged.group(2)))
    return found


def no_signal(result):
    assert result.returncode >= 0, f"killed by signal {-result.returncode}: {result.stderr}"
    return result


def test_every_subcommand_is_covered(urec):
    listed = re.findall(r"^  ([\w-]+)\s", urec("--help").stdout.split("Subcommands:")[1], re.M)
    assert {n.split()[0] for n in SUBCOMMANDS} == set(listed)
    options = [o for name in SUBCOMMANDS for o in numeric_options(name)]
    assert len(options) >= 25, options  # the numeric options there are today
    assert ("--limit", "UINT", "0", "18446744073709551615") in options


def out_of_range(kind, low, high):
    values = []
    if kind == "FLOAT":
        values += [repr(float(low) - 1), repr(float(high) * 2), "nan", "1e999"]
    else:
        values += [str(int(low) - 1), str(int(high) + 1), "1.5", "0x10"]
    return values + ["abc", "", "-"]


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_numeric_options_are_range_checked_with_the_range_in_the_message(urec, inputs, name):
    for option, kind, low, high in numeric_options(name):
        for value in out_of_range(kind, low, high):
            result = no_signal(urec(*command(name, inputs), f"{option}={value}", check=False))
            message = one_error_line(result, 2)
            assert option in message and f"{low}..{high}" in message, (option, value, message)
            assert not value or f"'{value}'" in message, (option, value, message)


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_missing_and_wrong_kind_of_paths_are_named_with_the_reason(urec, inputs, name, tmp_path):
    first_path = next((a for a in SUBCOMMANDS[name] if a in ("DATASET", "SRC", "JPEG", "NEW", "ANN", "MANIFEST", "CSV")),
                      None)
    if first_path is None:
        pytest.skip(f"urec {name} takes no path")
    cases = [(inputs["JPEG"] / "x", r"Not a directory|not a directory")]  # a path through a regular file
    if first_path != "NEW":
        cases.append((tmp_path / "missing" / "x", r"No such file|not found|does not exist"))
        # A regular file where a folder is expected, or a folder where a file is.
        wrong = inputs["JPEG"] if first_path in ("DATASET", "SRC") else inputs["root"]
        cases.append((wrong, r"not a|no .*(shard|class|manifest)|is a directory|not .*folder"))
    for path, reason in cases:
        result = no_signal(urec(*command(name, inputs, {first_path: path}), check=False))
        message = one_error_line(result, result.returncode)
        assert result.returncode in (1, 2) and str(path) in message, message
        assert re.search(reason, message, re.I), (reason, message)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
@pytest.mark.parametrize("name", ["cat", "decode", "inspect", "query", "convert imagefolder"])
def test_unreadable_paths_are_named_with_the_reason(urec, inputs, name, tmp_path):
    copy = tmp_path / "copy"
    original = inputs["JPEG"] if name == "decode" else inputs["SRC" if name.startswith("convert") else "DATASET"]
    (shutil.copytree if original.is_dir() else shutil.copy)(original, copy)
    for path in [copy, *copy.rglob("*")]:
        os.chmod(path, 0)
    try:
        key = "JPEG" if name == "decode" else ("SRC" if name.startswith("convert") else "DATASET")
        message = one_error_line(no_signal(urec(*command(name, inputs, {key: copy}), check=False)), 1)
        assert str(copy) in message and "Permission denied" in message, message
    finally:
        for path in [copy, *copy.rglob("*")]:
            os.chmod(path, stat.S_IRWXU)


@pytest.mark.parametrize("args, words", [
    (["cat", "DATASET", "4"], ["DATASET", "has 4 records"]),
    (["cat", "DATASET", "0", "--field", "nope"],
     ["dataset DATASET", "no field named 'nope'", "(fields: image, label, path, width, height, jpeg_layout"]),
    (["query", "DATASET", "label == 0", "--fields", "path,nope"], ["dataset DATASET", "'nope'", "(fields: image"]),
    (["decode", "JPEG", "-o", "/nonexistent/x.ppm"], ["/nonexistent/x.ppm", "No such file or directory"]),
    (["decode", "JPEG", "--crop", "1,2"], ["--crop", "'1,2'", "want 4 whole numbers"]),
    (["decode", "JPEG", "--resize", "axb", "-o", "-"], ["--resize", "'axb'", "whole numbers"]),
    (["convert", "imagefolder", "SRC", "NEW", "--shard-size", "-5G"], ["--shard-size", "'-5G'", "1 byte to"]),
])
def test_messages_name_the_input_and_what_was_expected(urec, inputs, args, words):
    result = no_signal(urec(*[str(inputs.get(a, a)) for a in args], check=False))
    message = one_error_line(result, result.returncode)
    assert result.returncode in (1, 2)
    for word in words:
        word = word.replace("DATASET", str(inputs["DATASET"]))
        assert word in message, (word, message)


def test_decode_reports_why_stdout_cannot_be_written(urec, inputs):
    with open("/dev/full", "wb") as full:
        result = no_signal(__import__("subprocess").run([os.environ["UREC"], "decode", str(inputs["JPEG"]), "-o", "-"],
                                                        stdout=full, stderr=-1, text=True))
    assert "standard output: write: No space left on device" in one_error_line(result, 1)


def test_a_hash_prints_as_16_hex_digits(urec, inputs):
    """Issue 21: source_xxh3 is the unsigned XXH3-64, in hex, in every printer."""
    dataset = inputs["DATASET"]
    hashes = set()
    for record_id in range(4):
        record = json.loads(urec("cat", dataset, record_id).stdout)
        source = (inputs["SRC"] / record["path"]).read_bytes()
        expected = f"{xxh3_64(source):016x}"
        assert record["source_xxh3"] == expected
        assert urec("cat", dataset, record_id, "--field", "source_xxh3").stdout == expected + "\n"
        hashes.add(expected)
    lines = urec("query", dataset, "label >= 0", "--json", "--fields", "source_xxh3").stdout.splitlines()
    assert {json.loads(line)["source_xxh3"] for line in lines} == hashes
    groups = urec("query", dataset, "label >= 0", "--group-by", "source_xxh3").stdout.splitlines()
    assert {line.split("\t")[0] for line in groups} == hashes
    groups = urec("query", dataset, "label >= 0", "--group-by", "source_xxh3", "--json").stdout.splitlines()
    assert {json.loads(line)["source_xxh3"] for line in groups} == hashes


def test_names_that_are_not_utf8_survive_json_output(urec, tmp_path):
    """Bytes that are not UTF-8 print as \\udcXX escapes (Python's
    surrogateescape): json.loads + os.fsencode gives the bytes back."""
    src = os.fsencode(tmp_path / "src")
    klass, name = b"cl\xe9ss", b"caf\xe9-\xff\xfe.jpg"
    os.makedirs(os.path.join(src, klass))
    with open(os.path.join(src, klass, name), "wb") as f:
        f.write(jpeg_bytes(40, 30))
    with open(os.path.join(src, klass, "ok-\u00e9.jpg".encode()), "wb") as f:  # valid UTF-8 stays as it is
        f.write(jpeg_bytes(40, 30, seed=1))
    out = tmp_path / "out"
    urec("convert", "imagefolder", os.fsdecode(src), out, "--name", "d")
    paths = set()
    for record_id in range(2):
        text = urec("cat", out, record_id, text=False).stdout
        record = json.loads(text)
        paths.add(os.fsencode(record["path"]))
    assert paths == {klass + b"/" + name, klass + b"/ok-\xc3\xa9.jpg"}
    raw = run_urec("cat", out, 0, text=False).stdout + run_urec("cat", out, 1, text=False).stdout
    assert b"\\udce9" in raw and b"\\udcff\\udcfe" in raw and "ok-\u00e9".encode() in raw
    lines = urec("query", out, "label >= 0", "--json", "--fields", "path", text=False).stdout.splitlines()
    assert {os.fsencode(json.loads(line)["path"]) for line in lines} == paths
    inspected = json.loads(urec("inspect", out, "--json", text=False).stdout)
    assert [os.fsencode(c) for c in inspected_classes(inspected)] == [klass]


def inspected_classes(inspected):
    """The class names `urec inspect --json` lists (under metadata)."""
    classes = inspected.get("classes") or inspected["metadata"]["classes"]
    return classes.split("\n") if isinstance(classes, str) else classes


def test_a_class_folder_named_with_a_newline_is_rejected_and_the_rest_converts(urec, tmp_path):
    src = tmp_path / "src"
    for folder, count in (("a", 2), ("b\nc", 2), ("d", 1)):
        (src / folder).mkdir(parents=True)
        for i in range(count):
            (src / folder / f"{i}.jpg").write_bytes(jpeg_bytes(40, 30, seed=i))
    result = urec("convert", "imagefolder", src, tmp_path / "out", "--name", "d")
    assert "3 written, 2 rejected" in result.stdout
    rows = next((tmp_path / "out").glob("d.rejects.g*.tsv")).read_text().split("\n")
    assert rows[0] == "path\treason" and rows[-1] == ""
    assert sorted(rows[1:-1]) == [f"b\\nc/{i}.jpg\tclass folder name holds a newline, which the class list "
                                  f"(one name a line) cannot store" for i in range(2)]
    inspected = json.loads(urec("inspect", tmp_path / "out", "--json").stdout)
    assert inspected_classes(inspected) == ["a", "d"]
    labels = {json.loads(line)["path"]: json.loads(line)["label"]
              for line in urec("query", tmp_path / "out", "label >= 0", "--json").stdout.splitlines()}
    assert labels == {"a/0.jpg": 0, "a/1.jpg": 0, "d/0.jpg": 1}
