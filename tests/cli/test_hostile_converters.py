"""Issue 36, the converters under attack from the command line: every input
kind (imagefolder, coco, jsonl, csv) alike. Each case failed before: deep
nesting killed `urec convert coco` with SIGSEGV, a float32 infinity was
stored from a finite number, paths and symbolic links that leave their
folder were read silently, a duplicate key's last value won, a conversion
that wrote nothing exited 0, a CSV byte-order mark was refused, and the JSON
printers wrote a non-finite float as null (cat) or "inf" (query)."""
import json
import math
import os
import pathlib
import sys

import numpy as np
import pytest

from conftest import run_urec
from test_exit_codes import jpeg_bytes

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from hostile_inputs import deep_coco, write_input  # noqa: E402 (tests/hostile_inputs.py, shared with python/tests)

LINK_REASON = "leaves the source folder: resolves to "


@pytest.fixture
def root(tmp_path):
    """root/imgs/ok.jpg; links root/imgs/link.jpg -> outside/secret.jpg and
    root/linked -> outside/folder (holding secret.jpg)."""
    r = tmp_path / "root"
    (r / "imgs").mkdir(parents=True)
    (tmp_path / "outside" / "folder").mkdir(parents=True)
    (r / "imgs" / "ok.jpg").write_bytes(jpeg_bytes(40, 30))
    (tmp_path / "outside" / "secret.jpg").write_bytes(jpeg_bytes(40, 30, seed=1))
    (tmp_path / "outside" / "folder" / "secret.jpg").write_bytes(jpeg_bytes(40, 30, seed=2))
    os.symlink(tmp_path / "outside" / "secret.jpg", r / "imgs" / "link.jpg")
    os.symlink(tmp_path / "outside" / "folder", r / "linked")
    write_input("jsonl", r, [])  # and the schema
    return r


def convert_args(kind, root, paths, scores=None):
    """The urec convert arguments for `paths` (relative to root) as `kind`."""
    out = root.parent / "out"
    if kind == "imagefolder":
        return ["convert", "imagefolder", root, out, "--name", "d"]
    source = write_input(kind, root, paths, scores)
    if kind == "coco":
        return ["convert", "coco", source, root, out, "--name", "d"]
    return ["convert", kind, source, out, "--schema", root.parent / "schema.json", "--name", "d"]


def rejects(root):
    """path -> reason of the committed rejects report."""
    (report,) = (root.parent / "out").glob("d.rejects.g*.tsv")
    lines = report.read_text().splitlines()[1:]
    return dict(line.split("\t", 1) for line in lines)


def no_signal(result):
    assert result.returncode >= 0, f"killed by signal {-result.returncode}: {result.stderr}"


@pytest.mark.parametrize("kind", ["imagefolder", "coco", "jsonl", "csv"])
def test_links_out_of_the_folder_are_rejects_rows_unless_followed(urec, root, kind):
    paths = ["imgs/ok.jpg", "imgs/link.jpg", "linked/secret.jpg"]
    result = urec(*convert_args(kind, root, paths))
    assert "1 written, 2 rejected" in result.stdout, result.stdout
    rows = rejects(root)
    secret = os.path.realpath(root.parent / "outside" / "secret.jpg")
    assert rows["imgs/link.jpg"].startswith(f"{LINK_REASON}{secret}, outside {os.path.realpath(root)}")
    assert "--follow-links-outside" in rows["imgs/link.jpg"]
    assert rows["linked/secret.jpg"].startswith(LINK_REASON)
    followed = urec(*convert_args(kind, root, paths), "--follow-links-outside")
    assert "3 written, 0 rejected" in followed.stdout, followed.stdout


@pytest.mark.parametrize("kind", ["coco", "jsonl", "csv"])
def test_text_paths_that_leave_the_folder_or_hold_control_characters_are_rejected(urec, root, kind):
    paths = ["imgs/ok.jpg", "../outside/secret.jpg", "imgs/../../outside/secret.jpg", "imgs/ok.jpg\x01x",
             "imgs/../imgs/ok.jpg"]
    if kind != "csv":
        paths.append("imgs/ok.jpg\x00.png")  # a NUL: JSON's \u0000 (a CSV file cannot be passed one by Python's csv)
    result = urec(*convert_args(kind, root, paths), "--follow-links-outside")
    assert "2 written" in result.stdout, result.stdout
    reasons = list(rejects(root).values())
    assert sum("('..')" in r for r in reasons) == 2, reasons
    assert sum("control character 0x01" in r for r in reasons) == 1, reasons
    assert sum("control character 0x00" in r for r in reasons) == (kind != "csv"), reasons


@pytest.mark.parametrize("place", ["images", "annotations", "bbox", "file_name", "segmentation"])
def test_deep_nesting_in_coco_is_an_error_naming_the_file_not_a_crash(urec, root, place):
    doc = deep_coco(place)
    (root / "ann.json").write_text(doc)
    result = run_urec("convert", "coco", root / "ann.json", root, root.parent / "out", check=False)
    no_signal(result)
    assert result.returncode == 1
    assert f"{root}/ann.json: arrays and objects nest deeper than 32 levels (at " in result.stderr, result.stderr
    assert place in result.stderr


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_deep_nesting_in_a_manifest_is_a_rejects_row(urec, root, kind):
    deep = "[" * 100000 + "]" * 100000
    args = convert_args(kind, root, ["imgs/ok.jpg", "imgs/ok.jpg"])
    manifest = root / f"m.{kind}"
    text = manifest.read_text().splitlines()
    text[-1] = (json.dumps({"image": "imgs/ok.jpg"})[:-1] + ', "score": ' + deep + "}") if kind == "jsonl" else (
        "imgs/ok.jpg," + deep)
    manifest.write_text("\n".join(text) + "\n")
    result = urec(*args)
    assert "1 written, 1 rejected" in result.stdout
    (reason,) = rejects(root).values()
    assert "arrays and objects nest deeper than 32 levels" in reason


@pytest.mark.parametrize("kind", ["coco", "jsonl", "csv"])
def test_numbers_past_float32_are_rejects_rows_naming_field_and_value(urec, root, kind):
    urec(*convert_args(kind, root, ["imgs/ok.jpg"] * 3, scores=[1e39, 3.4e38, -1e39]))
    reasons = sorted(rejects(root).values())
    field = "'bbox'" if kind == "coco" else "field 'score'"
    assert len(reasons) == 2 and all(field in r and "out of float32's range" in r for r in reasons), reasons
    assert any("-1e+39" in r for r in reasons)
    got = json.loads(run_urec("cat", root.parent / "out", 1 if kind == "coco" else 0, "--json").stdout)
    value = got["boxes"][0][3] if kind == "coco" else got["score"]
    assert value == float(np.float32(3.4e38))


def test_a_duplicate_key_is_a_rejects_row_in_jsonl_and_an_error_in_coco(urec, root):
    (root / "m.jsonl").write_text('{"image": "imgs/ok.jpg", "score": 1}\n'
                                  '{"image": "imgs/ok.jpg", "score": 1, "image": "imgs/link.jpg"}\n')
    urec("convert", "jsonl", root / "m.jsonl", root.parent / "out", "--schema", root.parent / "schema.json",
         "--name", "d", "--follow-links-outside")
    assert rejects(root) == {"line 2": "key 'image' appears twice in one object (at the top level)"}
    (root / "ann.json").write_text('{"images": [{"id": 1, "file_name": "imgs/ok.jpg", "file_name": "imgs/link.jpg"}]}')
    result = run_urec("convert", "coco", root / "ann.json", root, root.parent / "out2", check=False)
    assert result.returncode == 1
    assert f"{root}/ann.json: key 'file_name' appears twice in one object (at images[0])" in result.stderr


@pytest.mark.parametrize("kind", ["imagefolder", "coco", "jsonl", "csv"])
def test_a_conversion_that_writes_nothing_fails_unless_allowed(urec, root, kind):
    (root / "imgs" / "ok.jpg").write_bytes(b"not a jpeg")
    args = convert_args(kind, root, ["imgs/ok.jpg", "imgs/link.jpg"])
    result = run_urec(*args, check=False)
    assert result.returncode == 2, result.stderr
    report = root.parent / "out" / "d.rejected.tsv"
    assert "no record written, every input was rejected" in result.stderr
    assert f"the rejects report is {report}" in result.stderr and "--allow-empty" in result.stderr
    assert "not a JPEG or PNG" in report.read_text()
    assert not (root.parent / "out" / "d.uset").exists()
    assert "0 written" in urec(*args, "--allow-empty").stdout
    assert json.loads(urec("inspect", root.parent / "out", "--json").stdout)["records"] == 0


def test_a_csv_byte_order_mark_is_accepted(urec, root):
    (root / "m.csv").write_bytes(b"\xef\xbb\xbfimage,score\nimgs/ok.jpg,0.5\n")
    result = urec("convert", "csv", root / "m.csv", root.parent / "out", "--schema", root.parent / "schema.json")
    assert "1 written, 0 rejected" in result.stdout


def test_non_finite_floats_print_as_the_same_strings_everywhere(urec, tmp_path):
    unirecord = pytest.importorskip("unirecord")
    schema = unirecord.Schema({"k": "int32", "f": unirecord.Field("f", "float64", indexed=True), "g": "float32",
                               "a": unirecord.Field("a", "float32", shape=[3])})
    values = [math.inf, -math.inf, math.nan]
    with unirecord.Writer(tmp_path / "d", schema, "d", sync=False) as w:
        for v in values:
            w.write({"k": 0, "f": v, "g": v, "a": np.array([v, 1.5, v], np.float32)})
    expect = {math.inf: "inf", -math.inf: "-inf"}
    for i, v in enumerate(values):
        want = expect.get(v, "nan")
        cat = json.loads(urec("cat", tmp_path / "d", i).stdout)
        assert cat["f"] == cat["g"] == want and cat["a"] == [want, 1.5, want], cat
        assert urec("cat", tmp_path / "d", i, "--field", "g").stdout == want + "\n"
        assert json.loads(urec("cat", tmp_path / "d", i, "--field", "a", "--json").stdout)["a"] == [want, 1.5, want]
    queried = [json.loads(line) for line in urec("query", tmp_path / "d", "k == 0", "--json").stdout.splitlines()]
    assert [q["f"] for q in queried] == ["inf", "-inf", "nan"]
    for field in ["f", "g"]:
        groups = [json.loads(line) for line in
                  urec("query", tmp_path / "d", "k == 0", "--group-by", field, "--json").stdout.splitlines()]
        assert sorted(g[field] for g in groups) == ["-inf", "inf", "nan"], groups
    stats = json.loads(urec("inspect", tmp_path / "d", "--json").stdout)["index_stats"]["f"]
    assert stats == {"min": "-inf", "max": "inf", "mean": "nan"}, stats
    # A NaN keeps its sign in JSON, as in the text output and the query order.
    with unirecord.Writer(tmp_path / "n", schema, "n", sync=False) as w:
        w.write({"k": 0, "f": -math.nan, "g": -math.nan, "a": np.array([-math.nan, 0, math.nan], np.float32)})
    cat = json.loads(urec("cat", tmp_path / "n", 0).stdout)
    assert cat["f"] == cat["g"] == "-nan" and cat["a"] == ["-nan", 0, "nan"], cat
    assert math.isnan(float(cat["f"])) and math.copysign(1, float(cat["f"])) == -1
