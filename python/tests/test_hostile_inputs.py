"""Every public Python entry point, called as a hostile or careless user would:
wrong types, negative and huge numbers, bad values. Each call raises the
exception a Python sequence or function would (TypeError for a wrong type,
IndexError for an index out of range, ValueError for a bad value) with one
line naming the argument or the input and what was expected - never
pybind11's "incompatible function arguments" dump, a cast error, a value
silently truncated or ignored, or a signal.

Each case here misbehaved before issue 22 (a dump, a RuntimeError from a
failed cast, an error naming nothing, or no error at all)."""
import json
import os
import pathlib
import sys

import numpy as np
import pytest

import unirecord
from urec_fixtures import loader_records, write_jpeg  # noqa: F401 (pytest fixtures)

DUMPS = ("incompatible function arguments", "Unable to cast", "Invoked with", "argument types are supported")
SCHEMA = {"image": "bytes", "label": "int64"}


class Ctx:
    def __init__(self, records, tmp):
        self.records = records
        self.tmp = tmp
        self.ds = unirecord.Dataset(records)
        self.images = unirecord.ImageDataset(records, unirecord.CenterCrop(16, resize=16))
        self.some = unirecord.ImageDataset(records, unirecord.CenterCrop(16, resize=16), subset=[3, 1, 2])

    def writer(self, **kwargs):
        self.writers = getattr(self, "writers", 0) + 1  # a name each: a live Writer holds its name's lock
        return unirecord.Writer(self.tmp / "w", SCHEMA, f"w{self.writers}", sync=False, **kwargs)

    def loader(self, **kwargs):
        kwargs = dict(dict(batch_size=4, shuffle=False, threads=1, transform=unirecord.CenterCrop(16, resize=16)),
                      **kwargs)
        return unirecord.Loader(self.records, **kwargs)

    def convert(self, **kwargs):
        src = self.tmp / "src"
        write_jpeg(src / "a" / "0.jpg", 32, 24, 0)
        return unirecord.convert_imagefolder(src, self.tmp / "out", sync=False, **kwargs)

    def restore(self, **changes):
        loader = self.loader()
        loader.load_state_dict(dict(loader.state_dict(), **changes))


CASES = [
    # Dataset indexing, as a list's: TypeError for a non-integer, IndexError out of range.
    ("ds['x']", lambda c: c.ds["x"], TypeError, r"dataset indices must be integers, not str \('x'\)"),
    ("ds[1.5]", lambda c: c.ds[1.5], TypeError, r"dataset indices must be integers, not float \(1\.5\)"),
    ("ds[None]", lambda c: c.ds[None], TypeError, r"dataset indices must be integers, not NoneType"),
    ("ds[2**64]", lambda c: c.ds[2**64], IndexError, r"record index 18446744073709551616 out of range .* \(-90\.\.89\)"),
    ("ds[-2**63-1]", lambda c: c.ds[-(2**63) - 1], IndexError, r"record index -9223372036854775809 out of range"),
    ("ds.get_blob('0', f)", lambda c: c.ds.get_blob("0", "image"), TypeError, "dataset indices must be integers"),
    ("ds.get_blob(0, 5)", lambda c: c.ds.get_blob(0, 5), TypeError, r"field must be a str, not int \(5\)"),
    ("ds.column(None)", lambda c: c.ds.column(None), TypeError, "field must be a str, not NoneType"),
    ("ds.query(5)", lambda c: c.ds.query(5), TypeError, r"expression must be a str, not int \(5\)"),
    # Opening a dataset.
    ("Dataset(5)", lambda c: unirecord.Dataset(5), TypeError, r"path must be a path \(str, bytes or os.PathLike\), not int"),
    ("Dataset(NUL)", lambda c: unirecord.Dataset(str(c.records) + "\0x"), ValueError, "holds a NUL character"),
    ("Dataset(missing, not UTF-8)", lambda c: unirecord.Dataset(os.fsencode(str(c.tmp)) + b"/caf\xe9"), FileNotFoundError,
     r"hostile\d*/caf\\xe9"),
    ("Dataset([5])", lambda c: unirecord.Dataset([5]), TypeError, "path must be a path"),
    ("Dataset(fields=5)", lambda c: unirecord.Dataset(c.records, fields=5), TypeError, "fields must be a field name or a list"),
    ("Dataset(fields=[1])", lambda c: unirecord.Dataset(c.records, fields=[1]), TypeError, "fields must be a str, not int"),
    ("Dataset(verify_checksums='no')", lambda c: unirecord.Dataset(c.records, verify_checksums="no"), TypeError,
     r"verify_checksums must be True or False, not str \('no'\)"),
    ("Dataset(allow_partial=2)", lambda c: unirecord.Dataset(c.records, allow_partial=2), TypeError,
     "allow_partial must be True or False, not int"),
    ("Dataset(bytes_as=1)", lambda c: unirecord.Dataset(c.records, bytes_as=1), TypeError, "bytes_as must be a str"),
    # Schema and Field.
    ("Schema(5)", lambda c: unirecord.Schema(5), TypeError, "schema must be a Schema, a list of Field or a dict"),
    ("Schema(['x'])", lambda c: unirecord.Schema(["x"]), TypeError, r"a schema's list holds unirecord.Field values, not 'x'"),
    ("Schema({5: t})", lambda c: unirecord.Schema({5: "int64"}), TypeError, "field name must be a str, not int"),
    ("schema[1.5]", lambda c: c.ds.schema[1.5], TypeError, "schema keys are field names .* or positions .*, not 1.5"),
    ("Field(5, t)", lambda c: unirecord.Field(5, "int64"), TypeError, r"name must be a str, not int \(5\)"),
    ("Field(n, 5)", lambda c: unirecord.Field("x", 5), TypeError, "field type must be one of 'int32', .* not 5"),
    ("Field(shape='3')", lambda c: unirecord.Field("x", "int64", shape="3"), TypeError, "shape must be an int, not str"),
    ("Field(shape=[2, -2])", lambda c: unirecord.Field("x", "int64", shape=[2, -2]), ValueError,
     r"shape=-2 is out of range \(-1\.\."),
    ("Field(indexed='yes')", lambda c: unirecord.Field("x", "int64", indexed="yes"), TypeError,
     "indexed must be True or False, not str"),
    ("Field(compression=None)", lambda c: unirecord.Field("x", "bytes", compression=None), TypeError,
     "compression must be a str, not NoneType"),
    # Writer.
    ("Writer(num_shards=-1)", lambda c: c.writer(num_shards=-1), ValueError, r"num_shards=-1 is out of range \(0\.\.4294967295\)"),
    ("Writer(num_shards=2**32)", lambda c: c.writer(num_shards=2**32), ValueError, "num_shards=4294967296 is out of range"),
    ("Writer(expected_records=-5)", lambda c: c.writer(expected_records=-5), ValueError, "expected_records=-5 is out of range"),
    ("Writer(zstd_level=1.5)", lambda c: c.writer(zstd_level=1.5), TypeError, "zstd_level must be an int, not float"),
    ("Writer(name=5)", lambda c: unirecord.Writer(c.tmp, SCHEMA, 5), TypeError, "name must be a str, not int"),
    ("Writer(sync='no')", lambda c: unirecord.Writer(c.tmp, SCHEMA, sync="no"), TypeError, "sync must be True or False"),
    ("Writer(5, ...)", lambda c: unirecord.Writer(5, SCHEMA), TypeError, r"out must be a path .*, not int \(5\)"),
    ("Writer(metadata=[1])", lambda c: c.writer(metadata=[1]), TypeError, r"metadata must be a dict \{str: str or bytes\}"),
    ("Writer(blob_compression=0)", lambda c: c.writer(blob_compression=0), TypeError, "blob_compression must be a str"),
    ("writer.write([...])", lambda c: c.writer().write([b"x", 1]), TypeError, r"record must be a dict \{field name: value\}, not list"),
    ("writer.set_metadata(5, v)", lambda c: c.writer().set_metadata(5, "v"), TypeError, "key must be a str, not int"),
    # convert_imagefolder.
    ("convert(num_shards=-1)", lambda c: c.convert(num_shards=-1), ValueError, r"num_shards=-1 is out of range \(0\.\."),
    ("convert(threads='2')", lambda c: c.convert(threads="2"), TypeError, r"threads must be an int, not str \('2'\)"),
    ("convert(max_pixels=0)", lambda c: c.convert(max_pixels=0), ValueError, r"max_pixels=0 is out of range \(1\.\."),
    ("convert(target_shard_bytes=-1)", lambda c: c.convert(target_shard_bytes=-1), ValueError, "target_shard_bytes=-1"),
    ("convert(strict='yes')", lambda c: c.convert(strict="yes"), TypeError, "strict must be True or False"),
    ("convert(progress=5)", lambda c: c.convert(progress=5), TypeError, "progress must be a callable or None, not 5"),
    ("convert(name=5)", lambda c: c.convert(name=5), TypeError, "name must be a str, not int"),
    ("convert(5, out)", lambda c: unirecord.convert_imagefolder(5, c.tmp), TypeError, "src must be a path"),
    # ImageDataset.
    ("images['x']", lambda c: c.images["x"], TypeError, r"dataset indices must be integers, not str"),
    ("images[1.5]", lambda c: c.images[1.5], TypeError, r"dataset indices must be integers, not float"),
    ("images[2**64]", lambda c: c.images[2**64], IndexError, "record index 18446744073709551616 out of range"),
    ("subset images[1.5]", lambda c: c.some[1.5], TypeError, r"dataset indices must be integers, not float \(1\.5\)"),
    ("images.__getitems__(['a'])", lambda c: c.images.__getitems__(["a"]), TypeError, "dataset indices must be integers"),
    ("images.crop_window('x')", lambda c: c.images.crop_window("x"), TypeError, "dataset indices must be integers"),
    ("images.crop_window(0, -1)", lambda c: c.images.crop_window(0, -1), ValueError, r"epoch=-1 is out of range"),
    ("ImageDataset(subset=[0.5])", lambda c: unirecord.ImageDataset(c.records, subset=[0.5]), TypeError,
     "subset must be a sequence of ints"),
    ("ImageDataset(subset=[10**6])", lambda c: unirecord.ImageDataset(c.records, subset=[10**6]), IndexError,
     r"subset id 1000000 is out of range for a dataset of 90 records \(0\.\.89\)"),
    ("ImageDataset(subset=[2**64])", lambda c: unirecord.ImageDataset(c.records, subset=[2**64]), IndexError,
     "subset id 18446744073709551616 is out of range"),
    ("ImageDataset(strict='yes')", lambda c: unirecord.ImageDataset(c.records, strict="yes"), TypeError,
     "strict must be True or False"),
    ("ImageDataset(image_field=5)", lambda c: unirecord.ImageDataset(c.records, image_field=5), TypeError,
     "image_field must be a str"),
    ("ImageDataset(path=5)", lambda c: unirecord.ImageDataset(5), TypeError, "path must be a path"),
    # Loader.
    ("Loader(mean=[.5, .5])", lambda c: c.loader(mean=[0.5, 0.5]), ValueError,
     r"mean must be 3 finite values \(one per channel\), got \[0\.5, 0\.5\]"),
    ("Loader(mean=5)", lambda c: c.loader(mean=5), TypeError, "mean must be a sequence of 3 numbers"),
    ("Loader(dtype='float32')", lambda c: c.loader(dtype="float32"), TypeError, "dtype must be a torch.dtype, not 'float32'"),
    ("Loader(drop_last='no')", lambda c: c.loader(drop_last="no"), TypeError, "drop_last must be True or False, not str"),
    ("Fields(return_ids=1)", lambda c: c.loader(fields=unirecord.Fields(return_ids=1)), TypeError, "return_ids must be True or False, not int"),
    ("Decode(on_bad_record=5)", lambda c: c.loader(decode=unirecord.Decode(on_bad_record=5)), TypeError, "on_bad_record must be a str, not int"),
    ("Fields(layout=5)", lambda c: c.loader(fields=unirecord.Fields(layout=5)), TypeError, "layout must be a str, not int"),
    ("Fields(image_field=5)", lambda c: c.loader(fields=unirecord.Fields(image_field=5)), TypeError, "image_field must be a str, not int"),
    ("Sampler(subset=[-3])", lambda c: c.loader(sampler=unirecord.Sampler(subset=[1, -3])), IndexError, "subset id -3 is out of range for a dataset of 90"),
    ("Sampler(order=5)", lambda c: c.loader(shuffle=True, sampler=unirecord.Sampler(order=5)), TypeError, "order must be a str, not int"),
    ("Sampler(weights=[nan])", lambda c: c.loader(sampler=unirecord.Sampler(weights=[float("nan")])), ValueError,
     r"weight 0 \(nan\) must be a finite number >= 0"),
    ("Sampler(weights=[True])", lambda c: c.loader(sampler=unirecord.Sampler(weights=[True])), TypeError, "weights must be a number"),
    ("Sampler(weights=0.5)", lambda c: c.loader(sampler=unirecord.Sampler(weights=0.5)), TypeError, "weights must be a sequence of numbers"),
    ("Sampler(epoch_size=-1)", lambda c: c.loader(sampler=unirecord.Sampler(epoch_size=-1)), ValueError, r"epoch_size=-1 is out of range"),
    ("Sampler(epoch_size=2**62)", lambda c: c.loader(sampler=unirecord.Sampler(epoch_size=2**62)), ValueError, "epoch_size 4611686018427387904 is too large"),
    ("Loader([])", lambda c: unirecord.Loader([], 4, shuffle=True), ValueError, "at least one dataset"),
    ("load_state_dict(position past the epoch)", lambda c: c.loader().load_state_dict(
        {"sampler_state": c.loader().state_dict()["sampler_state"][:24] + (91).to_bytes(8, "little")
         + c.loader().state_dict()["sampler_state"][32:]}), IndexError, "position 91 is past the epoch's 90 positions"),
    ("Loader(seed, positional)", lambda c: unirecord.Loader(c.records, 4, False, 7), TypeError, "positional argument"),
    ("load_state_dict(epoch=5)", lambda c: c.restore(epoch=5), ValueError,
     r"state\['epoch'\] is 5 but its sampler_state holds epoch 0"),
    ("load_state_dict(position=-1)", lambda c: c.restore(position=-1), ValueError,
     r"state\['position'\]=-1 is out of range"),
    ("load_state_dict(extra key)", lambda c: c.restore(step=3), ValueError, "the state has an unknown key 'step'"),
    ("load_state_dict(str state)", lambda c: c.restore(sampler_state="x"), TypeError,
     r"state\['sampler_state'\] must be bytes"),
    # A list is every rank's state_dict (their coverage merged; docs/loader.md, "Coverage").
    ("load_state_dict([])", lambda c: c.loader().load_state_dict([]), ValueError, "an empty list of state_dicts"),
    ("load_state_dict([str])", lambda c: c.loader().load_state_dict(["x"]), TypeError,
     "load_state_dict takes the dicts state_dict\\(\\) returned, not str"),
]


@pytest.fixture(scope="module")
def ctx(loader_records, tmp_path_factory):
    return Ctx(loader_records, tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("name, call, error, words", CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_raises_as_python_does_and_names_itself(ctx, name, call, error, words):
    with pytest.raises(Exception) as info:
        call(ctx)
    message = str(info.value)
    assert not any(d in message for d in DUMPS), message
    assert info.type is error or (error is ValueError and info.type is unirecord.NotSupportedError), (info.type, message)
    assert "\n" not in message.strip(), message  # one line
    import re

    assert re.search(words, message), message


def test_image_dataset_takes_max_pixels_as_the_loader(ctx):
    # The smallest JPEG of loader_records is 96x80 = 7680 pixels.
    for make in (lambda limit: unirecord.ImageDataset(ctx.records, unirecord.CenterCrop(16, resize=16),
                                                      max_pixels=limit)[0],
                 lambda limit: next(iter(ctx.loader(decode=unirecord.Decode(max_pixels=limit))))):
        make(10**6)
        # 300 allows the 16x16 output, not the source JPEG.
        with pytest.raises(ValueError, match=r"record 0 .*JPEG is \d+x\d+, over the limit of 300 pixels"):
            make(300)


def test_non_utf8_strings_come_back_as_os_fsdecode_gives_them(tmp_path):
    raw = [b"caf\xe9.jpg", b"plain.jpg", "na\u00efve.jpg".encode()]
    with unirecord.Writer(tmp_path / "a", {"path": "string"}, sync=False) as w:
        for name in raw:
            w.write({"path": name})  # bytes: stored as given
    ds = unirecord.Dataset(tmp_path / "a")
    paths = [ds[i]["path"] for i in range(len(ds))]
    assert all(type(p) is str for p in paths)
    assert paths == [os.fsdecode(name) for name in raw]
    # And back: a str holding surrogate escapes is stored as its original bytes.
    with unirecord.Writer(tmp_path / "b", {"path": "string"}, sync=False) as w:
        for p in paths:
            w.write({"path": p})
    again = unirecord.Dataset(tmp_path / "b")
    assert [os.fsencode(again[i]["path"]) for i in range(len(again))] == raw


def test_image_dataset_samples_are_str_for_non_utf8_file_names(tmp_path):
    src = tmp_path / "src"
    for k, raw in enumerate([b"caf\xe9.jpg", b"plain.jpg"]):
        folder = os.path.join(os.fsencode(src), b"c")
        os.makedirs(folder, exist_ok=True)
        write_jpeg(pathlib.Path(os.fsdecode(os.path.join(folder, raw))), 32, 24, k)
    unirecord.convert_imagefolder(src, tmp_path / "out", sync=False, threads=1)
    images = unirecord.ImageDataset(tmp_path / "out", unirecord.CenterCrop(16, resize=16), root=src)
    paths = [p for p, _ in images.samples]
    assert all(type(p) is str for p in paths)
    assert sorted(paths) == sorted(os.path.join(str(src), "c", os.fsdecode(n)) for n in [b"caf\xe9.jpg", b"plain.jpg"])
    assert all(os.path.exists(p) for p in paths)  # usable as paths, as ImageFolder's
    np.testing.assert_array_equal(images[0][0].numpy().shape, (3, 16, 16))


def test_a_dataset_in_a_folder_whose_name_is_not_utf8_gives_its_paths_as_str(tmp_path, loader_records):
    import pickle

    folder = os.path.join(os.fsencode(str(tmp_path)), b"caf\xe9")
    with unirecord.Writer(folder, {"label": "int64"}, sync=False) as w:
        w.write({"label": 1})
    assert w.summary["manifest_path"] == os.path.join(os.fsdecode(folder), "data.uset")
    assert all(os.path.exists(p) for p in w.summary["shard_paths"] + w.summary["index_paths"])
    ds = unirecord.Dataset(folder)
    assert ds.path == os.fsdecode(folder)
    assert all(type(s["path"]) is str and os.path.exists(s["path"]) for s in ds.shards)
    assert "caf\\udce9" in repr(ds)
    again = pickle.loads(pickle.dumps(ds))
    assert again.path == ds.path and again[0] == {"label": 1}
    by_list = unirecord.Dataset([s["path"] for s in ds.shards])
    assert pickle.loads(pickle.dumps(by_list)).path == by_list.path == [s["path"] for s in ds.shards]


# ---------------------------------------------------------------------------
# Issue 36: the converters' inputs as an attacker writes them. Each case below
# misbehaved before: a crash of the interpreter on deep nesting (COCO), a
# float32 infinity stored from a finite number, paths and symbolic links that
# leave their folder read silently, a duplicate key whose last value won, an
# empty dataset reported as success, a CSV byte-order mark refused.

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
from hostile_inputs import deep_coco, write_input  # noqa: E402 (tests/hostile_inputs.py, shared with tests/cli)


@pytest.fixture
def hostile_root(tmp_path):
    """root/imgs/ok.jpg; outside/secret.jpg and outside/folder/secret.jpg;
    root/imgs/link.jpg -> outside/secret.jpg; root/linked -> outside/folder."""
    root = tmp_path / "root"
    write_jpeg(root / "imgs" / "ok.jpg", 32, 24, 0)
    write_jpeg(tmp_path / "outside" / "secret.jpg", 32, 24, 1)
    write_jpeg(tmp_path / "outside" / "folder" / "secret.jpg", 32, 24, 2)
    os.symlink(tmp_path / "outside" / "secret.jpg", root / "imgs" / "link.jpg")
    os.symlink(tmp_path / "outside" / "folder", root / "linked")
    write_input("jsonl", root, [])  # and the schema
    return root


def convert_paths(kind, root, paths, scores=None, **kwargs):
    """Converts `paths` (relative to root) with `kind`; returns the report."""
    source, out = write_input(kind, root, paths, scores), root.parent / f"out-{kind}"
    if kind == "coco":
        return unirecord.convert_coco(source, root, out, sync=False, threads=1, **kwargs)
    convert = unirecord.convert_jsonl if kind == "jsonl" else unirecord.convert_csv
    return convert(source, out, schema=root.parent / "schema.json", sync=False, threads=1, **kwargs)


def rows(report):
    return dict(report["not_written"])


@pytest.mark.parametrize("kind", ["coco", "jsonl", "csv"])
def test_paths_that_leave_their_folder_are_rejects_rows_in_every_converter(kind, hostile_root):
    paths = ["imgs/ok.jpg", "../outside/secret.jpg", "imgs/../../outside/secret.jpg", "imgs/link.jpg",
             "linked/secret.jpg", "imgs/ok.jpg\x00.png", "imgs/../imgs/ok.jpg"]
    report = convert_paths(kind, hostile_root, paths)
    assert report["written"] == 2  # imgs/ok.jpg and imgs/../imgs/ok.jpg
    got = rows(report)
    named = (lambda i, p: p) if kind == "coco" else (lambda i, p: f"line {i + (2 if kind == 'csv' else 1)}")
    folder = "images folder" if kind == "coco" else "manifest's folder"
    assert f"leaves the {folder} ('..')" in got[named(1, paths[1])]
    assert f"leaves the {folder} ('..')" in got[named(2, paths[2])]
    secret = os.path.realpath(hostile_root.parent / "outside" / "secret.jpg")
    assert got["imgs/link.jpg"].startswith(f"leaves the source folder: resolves to {secret}, outside ")
    assert "follow_links_outside" in got["imgs/link.jpg"]
    assert got["linked/secret.jpg"].startswith("leaves the source folder: resolves to ")
    nul = [reason for reason in got.values() if "control character 0x00" in reason]
    assert len(nul) == 1, got
    assert "imgs/ok.jpg\x00.png" not in got  # a NUL never names a row
    followed = convert_paths(kind, hostile_root, paths, follow_links_outside=True)
    assert followed["written"] == 4  # the links read; '..' and NUL refused either way


def test_image_folder_links_out_of_the_folder_are_rejected_unless_followed(hostile_root, tmp_path):
    report = unirecord.convert_imagefolder(hostile_root, tmp_path / "out", sync=False, threads=1)
    got = rows(report)
    assert report["written"] == 1
    assert got["imgs/link.jpg"].startswith("leaves the source folder: resolves to ")
    assert got["linked/secret.jpg"].startswith("leaves the source folder: resolves to ")
    followed = unirecord.convert_imagefolder(hostile_root, tmp_path / "out", sync=False, threads=1,
                                             follow_links_outside=True)
    assert followed["written"] == 3 and followed["rejected"] == 0


@pytest.mark.parametrize("kind", ["coco", "jsonl", "csv"])
def test_numbers_past_float32_are_rejects_rows_naming_field_and_value(kind, hostile_root):
    report = convert_paths(kind, hostile_root, ["imgs/ok.jpg"] * 3, scores=[1e39, 3.4e38, -1e39])
    # COCO leaves out the annotations (its images are kept), a manifest the lines.
    assert report["written"] == (3 if kind == "coco" else 1)
    assert report["annotations_rejected"] == (2 if kind == "coco" else 0)
    reasons = sorted(rows(report).values())
    field = "'bbox'" if kind == "coco" else "field 'score'"
    assert len(reasons) == 2 and all(field in r and "out of float32's range" in r for r in reasons), reasons
    assert any("1e+39" in r for r in reasons) and any("-1e+39" in r for r in reasons)
    records = unirecord.Dataset(hostile_root.parent / f"out-{kind}")
    value = records[1]["boxes"][0][3] if kind == "coco" else records[0]["score"]
    assert np.isfinite(value) and value == np.float32(3.4e38)


@pytest.mark.parametrize("kind", ["imagefolder", "coco", "jsonl", "csv"])
def test_a_conversion_that_writes_nothing_raises_naming_the_rejects_report(kind, hostile_root, tmp_path):
    (hostile_root / "imgs" / "ok.jpg").write_bytes(b"not a jpeg")
    if kind == "imagefolder":
        def convert(**kw):
            return unirecord.convert_imagefolder(hostile_root, tmp_path / "out-imagefolder", sync=False, threads=1, **kw)
    else:
        def convert(**kw):
            return convert_paths(kind, hostile_root, ["imgs/ok.jpg", "imgs/link.jpg"], **kw)
    report_path = tmp_path / f"out-{kind}" / f"{'root' if kind == 'imagefolder' else ('ann' if kind == 'coco' else 'm')}.rejected.tsv"
    with pytest.raises(ValueError, match="no record written, every input was rejected") as error:
        convert()
    assert str(report_path) in str(error.value) and "allow_empty" in str(error.value)
    text = report_path.read_text()
    assert text.startswith("path\treason\n") and "not a JPEG or PNG" in text
    assert not list((tmp_path / f"out-{kind}").glob("*.uset"))  # nothing committed
    report = convert(allow_empty=True)
    assert report["written"] == 0
    assert len(unirecord.Dataset(tmp_path / f"out-{kind}")) == 0


def test_duplicate_keys_are_refused_naming_the_key(hostile_root, tmp_path):
    (hostile_root / "m.jsonl").write_text('{"image": "imgs/ok.jpg", "score": 1}\n'
                                          '{"image": "imgs/ok.jpg", "score": 1, "image": "imgs/link.jpg"}\n')
    report = unirecord.convert_jsonl(hostile_root / "m.jsonl", tmp_path / "o", schema=tmp_path / "schema.json",
                                     sync=False, follow_links_outside=True)
    assert report["written"] == 1
    assert rows(report) == {"line 2": "key 'image' appears twice in one object (at the top level)"}
    (hostile_root / "ann.json").write_text('{"images": [{"id": 1, "file_name": "imgs/ok.jpg", "id": 2}]}')
    with pytest.raises(unirecord.CorruptRecordError,
                       match=r"ann\.json: key 'id' appears twice in one object \(at images\[0\]\)"):
        unirecord.convert_coco(hostile_root / "ann.json", hostile_root, tmp_path / "o", sync=False)


def test_a_csv_byte_order_mark_is_accepted_as_in_json_lines(hostile_root, tmp_path):
    (hostile_root / "bom.csv").write_bytes(b"\xef\xbb\xbfimage,score\nimgs/ok.jpg,0.5\n")
    report = unirecord.convert_csv(hostile_root / "bom.csv", tmp_path / "o", schema=tmp_path / "schema.json",
                                   sync=False)
    assert report["written"] == 1


DEEP_NESTING = r"""
import sys, unirecord
try:
    unirecord.convert_coco(sys.argv[1] + "/ann.json", sys.argv[1], sys.argv[1] + "/../out", sync=False)
except unirecord.CorruptRecordError as e:
    print("ERROR", e)
"""


@pytest.mark.parametrize("place", ["images", "annotations", "bbox", "file_name", "segmentation"])
def test_deep_nesting_in_coco_is_an_error_not_a_crash_of_the_interpreter(place, hostile_root):
    import subprocess
    import sys

    (hostile_root / "ann.json").write_text(deep_coco(place))
    # In a child: before, the interpreter died with SIGSEGV.
    child = subprocess.run([sys.executable, "-c", DEEP_NESTING, str(hostile_root)], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == 0, f"exit {child.returncode}: {child.stderr[-2000:]}"
    assert child.stdout.startswith(f"ERROR {hostile_root}/ann.json: arrays and objects nest deeper than 32 levels (at ")


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_deep_nesting_in_a_manifest_is_a_rejects_row(kind, hostile_root, tmp_path):
    deep = "[" * 100000 + "]" * 100000
    if kind == "jsonl":
        (hostile_root / "m.jsonl").write_text('{"image": "imgs/ok.jpg", "score": 1}\n'
                                              '{"image": "imgs/ok.jpg", "score": ' + deep + '}\n')
    else:
        (hostile_root / "m.csv").write_text("image,score\nimgs/ok.jpg,1\nimgs/ok.jpg," + deep + "\n")
    convert = unirecord.convert_jsonl if kind == "jsonl" else unirecord.convert_csv
    report = convert(hostile_root / f"m.{kind}", tmp_path / "o", schema=tmp_path / "schema.json", sync=False)
    assert report["written"] == 1
    (reason,) = rows(report).values()
    assert "arrays and objects nest deeper than 32 levels" in reason
