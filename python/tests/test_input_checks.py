"""Arguments are checked at the Python boundary: errors name the argument and
the allowed range; file-system names round-trip as os.listdir gives them."""
import os
import pathlib
import sys

import numpy as np
import pytest

import unirecord
from urec_fixtures import loader_records, write_jpeg  # noqa: F401 (pytest fixtures)


def test_negative_index_past_the_start_reports_the_index_given(loader_records):
    ds = unirecord.Dataset(loader_records)
    n = len(ds)
    assert ds[-n]["path"] == ds[0]["path"]
    with pytest.raises(IndexError, match=rf"record index {-n - 1} out of range .* \(-{n}\.\.{n - 1}\)"):
        ds[-n - 1]
    with pytest.raises(IndexError, match=rf"record index {n} out of range"):
        ds.get_blob(n, "image")
    images = unirecord.ImageDataset(loader_records, unirecord.CenterCrop(32, resize=36))
    with pytest.raises(IndexError, match=rf"record index {-n - 1} out of range"):
        images[-n - 1]


def test_get_blob_of_a_non_bytes_field_is_a_type_error(loader_records):
    ds = unirecord.Dataset(loader_records)
    assert bytes(ds.get_blob(0, "image"))[:2] == b"\xff\xd8"
    for field, kind in [("path", "string"), ("label", "int64"), ("width", "int32")]:
        with pytest.raises(TypeError, match=f"field '{field}' is {kind}, not bytes"):
            ds.get_blob(0, field)
    with pytest.raises(KeyError, match="no field named 'nope'"):
        ds.get_blob(0, "nope")


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(batch_size="8"), TypeError, "batch_size must be an int, not str"),
        (dict(batch_size=8.0), TypeError, "batch_size must be an int, not float"),
        (dict(batch_size=-1), ValueError, r"batch_size=-1 is out of range \(1\.\.18446744073709551615\)"),
        (dict(batch_size=0), ValueError, r"batch_size=0 is out of range \(1\.\."),
        (dict(batch_size=4, sampler=dict(num_shards=-2, shard_id=0)), ValueError, r"num_shards=-2 is out of range \(1\.\."),
        (dict(batch_size=4, sampler=dict(num_shards=2, shard_id=-1)), ValueError, r"shard_id=-1 is out of range \(0\.\.1\)"),
        (dict(batch_size=4, sampler=dict(num_shards=2, shard_id=2)), ValueError, r"shard_id=2 is out of range \(0\.\.1\)"),
        (dict(batch_size=4, seed=-5), ValueError, r"seed=-5 is out of range"),
        (dict(batch_size=4, sampler=dict(subset=[1, -3, 2])), IndexError, r"subset id -3 is out of range for a dataset of 90 records"),
        (dict(batch_size=4, sampler=dict(subset=[0.5])), TypeError, "subset must be a sequence of ints"),
        (dict(batch_size=4, sampler=dict(subset=[10**6])), IndexError, r"subset id 1000000 is out of range .* \(0\.\.89\)"),
        (dict(batch_size=4, threads=-1), ValueError, r"threads=-1 is out of range"),
        (dict(batch_size=4, threads=100000), ValueError, r"threads 100000 is out of range: 0 \(all \d+ usable cores\) to 1024"),
        (dict(batch_size=4, std=[0, 0, 0]), ValueError, "std must be 3 finite values > 0"),
        (dict(batch_size=4, std=[0.2, float("nan"), 0.2]), ValueError, "std must be 3 finite values > 0"),
        (dict(batch_size=4, transform=unirecord.RandomResizedCrop(70000)), ValueError,
         "image_size: output size 70000x70000 is over the limit of 65500 pixels a side"),
    ],
)
def test_loader_arguments_name_themselves_and_their_range(loader_records, kwargs, error, words):
    with pytest.raises(error, match=words):
        if "sampler" in kwargs:  # the Sampler's own check, or the Loader's against the dataset
            kwargs["sampler"] = unirecord.Sampler(**kwargs["sampler"])
        unirecord.Loader(loader_records, shuffle=False, threads=kwargs.pop("threads", 1), **kwargs)


def test_numpy_integers_are_ints(loader_records):
    loader = unirecord.Loader(loader_records, batch_size=np.int64(8), threads=1,
                              transform=unirecord.CenterCrop(32, resize=36), shuffle=False,
                              sampler=unirecord.Sampler(num_shards=np.uint32(1), shard_id=np.int32(0),
                                                        subset=np.arange(5, dtype=np.uint64)))
    assert loader.batch_size == 8 and len(loader) == 1


def test_an_empty_subset_is_an_empty_epoch(loader_records):
    for subset in ([], np.array([], dtype=np.int64)):
        loader = unirecord.Loader(loader_records, batch_size=4, shuffle=True, threads=1,
                                  sampler=unirecord.Sampler(subset=subset))
        assert len(loader) == 0
        for epoch in range(2):
            loader.set_epoch(epoch)
            assert list(loader) == []
    # None (the default) is every record.
    assert len(unirecord.Loader(loader_records, batch_size=10, shuffle=False, threads=1)) == 9


@pytest.mark.skipif(sys.getfilesystemencoding() != "utf-8", reason="needs a UTF-8 file system encoding")
def test_non_utf8_class_names_round_trip_as_os_listdir_gives_them(tmp_path):
    torchvision = pytest.importorskip("torchvision")
    src = tmp_path / "src"
    raw_names = [b"caf\xe9", b"plain", "na\u00efve".encode()]  # Latin-1 bytes, ASCII, UTF-8
    for k, raw in enumerate(raw_names):
        folder = os.path.join(os.fsencode(src), raw)
        os.makedirs(folder)
        write_jpeg(pathlib.Path(os.fsdecode(folder)) / "a.jpg", 40, 30, k)
    report = unirecord.convert_imagefolder(src, tmp_path / "out", sync=False, threads=1)
    expected = sorted(os.listdir(src))  # str, undecodable bytes as surrogate escapes
    assert expected == torchvision.datasets.ImageFolder(str(src)).classes
    assert report["classes"] == expected
    ds = unirecord.Dataset(tmp_path / "out")
    assert ds.classes == expected
    assert [os.fsencode(c) for c in ds.classes] == sorted(raw_names)
    images = unirecord.ImageDataset(tmp_path / "out", unirecord.CenterCrop(16, resize=20))
    assert images.classes == expected
    assert images.class_to_idx == torchvision.datasets.ImageFolder(str(src)).class_to_idx
    # A rejected file's path comes back the same way.
    (pathlib.Path(os.fsdecode(os.path.join(os.fsencode(src), b"plain", b"caf\xe9.jpg")))).write_bytes(b"GIF89a")
    report = unirecord.convert_imagefolder(src, tmp_path / "out", sync=False, threads=1)
    assert report["not_written"] == [(os.fsdecode(b"plain/caf\xe9.jpg"), "not a JPEG or PNG: GIF image")]
    # And back: a Writer given these names stores the original bytes.
    with unirecord.Writer(tmp_path / "w", {"label": "int64"}, classes=expected, sync=False) as w:
        w.write({"label": 0})
    assert unirecord.Dataset(tmp_path / "w").classes == expected


def small_folder(root, per_class, seed=0):
    for c in range(2):
        for i in range(per_class):
            write_jpeg(pathlib.Path(root) / f"c{c}" / f"{i:02d}.jpg", 48, 40, seed + c * 100 + i)
    return root


def test_a_convert_rerun_replaces_files_by_rename_and_the_open_dataset_keeps_reading(tmp_path):
    src, out = small_folder(tmp_path / "src", 4), tmp_path / "out"
    unirecord.convert_imagefolder(src, out, num_shards=2, sync=False, threads=1)
    ds = unirecord.Dataset(out)
    before = [(bytes(ds.get_blob(i, "image")), ds[i]["path"]) for i in range(len(ds))]
    small_folder(src, 6, seed=7)  # other pixels, more files
    unirecord.convert_imagefolder(src, out, num_shards=3, sync=False, threads=1)
    assert [(bytes(ds.get_blob(i, "image")), ds[i]["path"]) for i in range(len(ds))] == before
    assert len(unirecord.Dataset(out)) == 12


def test_a_shard_truncated_in_place_while_open_is_an_error_not_sigbus(tmp_path):
    import subprocess

    src, out = small_folder(tmp_path / "src", 4), tmp_path / "out"
    unirecord.convert_imagefolder(src, out, sync=False, threads=1)
    script = f"""
import os, unirecord
ds = unirecord.Dataset({str(out)!r})
shard = [f for f in os.listdir({str(out)!r}) if f.endswith(".urec")][0]
os.truncate(os.path.join({str(out)!r}, shard), 4096)  # same inode: the mapped pages past 4 KiB are gone
errors = []
for i in range(len(ds)):
    try:
        bytes(ds.get_blob(i, "image"))
    except unirecord.CorruptRecordError as e:
        errors.append(str(e))
print(len(errors), len(ds), errors[0] if errors else "")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, (result.returncode, result.stderr)  # -7 would be SIGBUS
    count, records, message = result.stdout.split(" ", 2)
    # 8 small JPEGs share the one blob page, which runs past the first 4 KiB: every read fails.
    assert int(count) == int(records) == 8
    assert "truncated in place from " in message and "reopen the dataset" in message


def test_convert_rejects_jpegs_over_max_pixels_with_the_reason(tmp_path):
    src = small_folder(tmp_path / "src", 2)  # 48x40 = 1920 pixels each
    # Every file rejected: a ValueError unless allow_empty (issue 36).
    with pytest.raises(ValueError, match="no record written"):
        unirecord.convert_imagefolder(src, tmp_path / "out", sync=False, threads=1, max_pixels=1919)
    report = unirecord.convert_imagefolder(src, tmp_path / "out", sync=False, threads=1, max_pixels=1919,
                                           allow_empty=True)
    assert report["written"] == 0 and report["rejected"] == 4
    assert {r for _, r in report["not_written"]} == {"unsupported: JPEG is 48x40, over the limit of 1919 pixels"}
    report = unirecord.convert_imagefolder(src, tmp_path / "out", sync=False, threads=1, max_pixels=1920)
    assert report["written"] == 4
