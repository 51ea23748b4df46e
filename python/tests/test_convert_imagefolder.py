"""unirecord.convert_imagefolder: the fast-layout rewrite against PIL's
decode of the source files, and keep_original."""
import io
import shutil

import pytest

import unirecord
from urec_fixtures import image_folder  # noqa: F401 (pytest fixture)

Image = pytest.importorskip("PIL.Image")


def records(out):
    ds = unirecord.Dataset(out)
    return [ds[i] for i in range(len(ds))]


def test_records_decode_as_their_sources(image_folder, tmp_path):  # noqa: F811
    report = unirecord.convert_imagefolder(image_folder, tmp_path, sync=False, threads=2)
    assert report["written"] == report["transcoded"] == 18
    assert report["kept_original"] == 0 and report["kept_original_reasons"] == {}
    sources = {p.relative_to(image_folder).as_posix(): p.read_bytes() for p in image_folder.rglob("*.jpg")}
    assert report["source_bytes"] == sum(map(len, sources.values()))
    assert report["image_bytes"] == sum(len(r["image"]) for r in records(tmp_path))
    for r in records(tmp_path):
        source = sources[r["path"]]
        assert r["jpeg_layout"] == 1 and r["source_size"] == len(source)
        with Image.open(io.BytesIO(source)) as a, Image.open(io.BytesIO(bytes(r["image"]))) as b:
            assert b.convert("RGB").tobytes() == a.convert("RGB").tobytes(), r["path"]


def test_keep_original_stores_the_source_bytes(image_folder, tmp_path):  # noqa: F811
    report = unirecord.convert_imagefolder(image_folder, tmp_path, keep_original=True, sync=False)
    assert report["kept_original"] == 18 and report["transcoded"] == 0
    assert report["image_bytes"] == report["source_bytes"]
    for r in records(tmp_path):
        assert bytes(r["image"]) == (image_folder / r["path"]).read_bytes()
        assert r["jpeg_layout"] == 0


def test_a_file_the_transcode_refuses_is_kept_and_counted(image_folder, tmp_path):  # noqa: F811
    src = tmp_path / "src"
    shutil.copytree(image_folder, src)
    jpeg = (src / "cat" / "img_000.jpg").read_bytes()
    (src / "cat" / "img_000.jpg").write_bytes(jpeg[: len(jpeg) // 2] + b"\xff\xd9")  # cut, EOI kept
    report = unirecord.convert_imagefolder(src, tmp_path / "out", sync=False)
    assert report["written"] == 18 and report["transcoded"] == 17 and report["kept_original"] == 1
    assert report["kept_original_reasons"] == {"libjpeg warning": 1}
    kept = [r for r in records(tmp_path / "out") if r["jpeg_layout"] == 0]
    assert [r["path"] for r in kept] == ["cat/img_000.jpg"]
    assert bytes(kept[0]["image"]) == (src / "cat" / "img_000.jpg").read_bytes()
