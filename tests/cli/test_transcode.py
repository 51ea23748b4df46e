"""`urec convert` rewrites JPEGs into the fast layout: checked against PIL's
decode of the source files, libxxhash's XXH3 and a marker walker written
here, on the conformance corpus and on PIL-written images."""
import ctypes
import ctypes.util
import io
import json
import shutil
from pathlib import Path

import pytest

from conftest import run_urec

CORPUS = Path(__file__).resolve().parents[1] / "data" / "jpeg-conformance"


def xxh3_64(data):
    """XXH3-64 (seed 0) from the system's libxxhash (unsigned; urec prints it as 16 hex digits)."""
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.XXH3_64bits(data, len(data))


def walk(jpeg):
    """The marker structure: APPn/COM segments, SOF markers, DQT precisions,
    DRI, scans and the RST numbers in the entropy-coded data."""
    facts = {"app_com": [], "sofs": [], "dqt_precisions": [], "dri": 0, "scans": [], "rst": []}
    assert jpeg[:2] == b"\xff\xd8"
    i = 2
    while True:
        assert jpeg[i] == 0xFF, f"no marker at {i}"
        marker = jpeg[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker == 0xD9:
            assert i + 2 == len(jpeg), "bytes after EOI"
            return facts
        length = int.from_bytes(jpeg[i + 2:i + 4], "big")
        payload = jpeg[i + 4:i + 2 + length]
        if 0xE0 <= marker <= 0xEF or marker == 0xFE:
            facts["app_com"].append((marker, payload))
        elif 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            n = payload[5]
            factors = [payload[7 + 3 * c] for c in range(n)]
            facts["sofs"].append(marker)
            facts["frame"] = dict(height=int.from_bytes(payload[1:3], "big"), width=int.from_bytes(payload[3:5], "big"),
                                  components=n, max_h=max(f >> 4 for f in factors), max_v=max(f & 15 for f in factors))
        elif marker == 0xDB:
            t = 0
            while t < len(payload):
                precision = payload[t] >> 4
                facts["dqt_precisions"].append(precision)
                t += 1 + (128 if precision else 64)
        elif marker == 0xDD:
            facts["dri"] = int.from_bytes(payload[:2], "big")
        i += 2 + length
        if marker != 0xDA:
            continue
        facts["scans"].append(payload[0])
        while True:  # entropy-coded data up to the next real marker
            if jpeg[i] != 0xFF:
                i += 1
            elif jpeg[i + 1] in (0x00, 0xFF):
                i += 2 if jpeg[i + 1] == 0 else 1
            elif 0xD0 <= jpeg[i + 1] <= 0xD7:
                facts["rst"].append(jpeg[i + 1] - 0xD0)
                i += 2
            else:
                break


def nearest_divisor_to_4(m):
    divisors = [d for d in range(1, m + 1) if m % d == 0]
    return min(divisors, key=lambda d: (abs(d - 4), d))


def check_fast_layout(stored, source, what):
    facts, src = walk(stored), walk(source)
    wide = any(facts["dqt_precisions"])
    assert facts["sofs"] == [0xC1 if wide else 0xC0], what
    frame = facts["frame"]
    assert facts["scans"] == [frame["components"]], what  # one scan of every component
    if frame["components"] == 1:
        per_row, rows = -(-frame["width"] // 8), -(-frame["height"] // 8)
    else:
        per_row = -(-frame["width"] // (8 * frame["max_h"]))
        rows = -(-frame["height"] // (8 * frame["max_v"]))
    k = nearest_divisor_to_4(per_row)
    assert facts["dri"] == k, what
    segments = per_row // k * rows
    assert facts["rst"] == [r % 8 for r in range(segments - 1)], what
    assert facts["app_com"] == src["app_com"], what


def convert(urec, src, out, *args):
    summary = urec("convert", "imagefolder", src, out, "--name", "train", *args).stdout
    return summary, json.loads(run_urec("inspect", out, "--json").stdout)["records"]


def check_records(out, src, records):
    """Every JPEG record against its source; returns (transcoded, kept) paths.
    PNGs (the corpus's PNG named .jpg) are stored as they are and left out."""
    Image = pytest.importorskip("PIL.Image")
    transcoded, kept = [], []
    for record_id in range(records):
        record = json.loads(run_urec("cat", out, record_id, "--json").stdout)
        stored = run_urec("cat", out, record_id, "--field", "image", text=False).stdout
        source = (src / record["path"]).read_bytes()
        assert record["source_size"] == len(source)
        assert record["source_xxh3"] == f"{xxh3_64(source):016x}"
        if record["jpeg_layout"] == 0:
            assert stored == source, record["path"]
            if not source.startswith(b"\x89PNG"):
                kept.append(record["path"])
            continue
        assert record["jpeg_layout"] == 1
        check_fast_layout(stored, source, record["path"])
        with Image.open(io.BytesIO(source)) as a, Image.open(io.BytesIO(stored)) as b:
            assert b.convert("RGB").tobytes() == a.convert("RGB").tobytes(), record["path"]
            assert b.getexif().get(0x0112) == a.getexif().get(0x0112), record["path"]
            assert b.info.get("icc_profile") == a.info.get("icc_profile"), record["path"]
        transcoded.append(record["path"])
    return transcoded, kept


@pytest.fixture(scope="module")
def corpus_conversion(urec, tmp_path_factory):
    src = tmp_path_factory.mktemp("corpus") / "src"
    (src / "corpus").mkdir(parents=True)
    for path in CORPUS.iterdir():
        if path.suffix in (".jpg", ".jpeg"):
            shutil.copy(path, src / "corpus" / path.name)
    out = src.parent / "out"
    summary, records = convert(urec, src, out, "--threads", 2)
    return src, out, summary, records


def test_conformance_corpus_round_trips_exactly(corpus_conversion):
    src, out, summary, records = corpus_conversion
    transcoded, kept = check_records(out, src, records)
    assert len(transcoded) >= 40
    assert f"JPEG layout: {len(transcoded)} transcoded to the fast layout, {len(kept)} kept" in summary
    rejects = dict(line.split("\t") for line in next(out.glob("train.rejects.g*.tsv")).read_text().splitlines()[1:])
    assert rejects["corpus/libjpeg-turbo__testorig12.jpg"].startswith("unsupported: 12-bit")
    assert "corpus/pillow__sugarshack_bad_mpo_header.jpg" in kept  # its second image follows the EOI


def test_output_is_identical_for_one_and_two_threads(urec, corpus_conversion, tmp_path):
    src, out, _, _ = corpus_conversion
    convert(urec, src, tmp_path / "one", "--threads", 1)
    for name in (p.name for p in out.iterdir()):
        assert (tmp_path / "one" / name).read_bytes() == (out / name).read_bytes(), name


def test_pil_written_images_of_every_sampling(urec, tmp_path):
    Image = pytest.importorskip("PIL.Image")
    import numpy as np

    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[0:157, 0:203]
    rgb = np.stack([xx, yy, (xx + yy) % 256], -1) + rng.normal(0, 12, (157, 203, 3))
    image = Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8))
    exif = Image.Exif()
    exif[0x0112] = 6
    (tmp_path / "src" / "a").mkdir(parents=True)
    for subsampling in ("4:4:4", "4:2:2", "4:2:0"):
        for progressive in (False, True):
            name = f"{subsampling.replace(':', '')}{'-progressive' if progressive else ''}.jpg"
            image.save(tmp_path / "src" / "a" / name, quality=90, subsampling=subsampling, progressive=progressive,
                       exif=exif)
    image.convert("L").save(tmp_path / "src" / "a" / "gray.jpg", quality=85)
    image.convert("CMYK").save(tmp_path / "src" / "a" / "cmyk.jpg", quality=85)
    summary, records = convert(urec, tmp_path / "src", tmp_path / "out")
    transcoded, kept = check_records(tmp_path / "out", tmp_path / "src", records)
    assert len(transcoded) == 8 and kept == [], summary


def test_refused_files_are_stored_as_they_were_and_counted(urec, mixed_folder, tmp_path):
    src = tmp_path / "src" / "a"
    src.mkdir(parents=True)
    jpeg = next(mixed_folder.glob("*/n*_*.JPEG")).read_bytes()
    (src / "photo.jpg").write_bytes(jpeg)
    (src / "cut.jpg").write_bytes(jpeg[: len(jpeg) * 3 // 4] + b"\xff\xd9")  # premature end, EOI kept
    (src / "trailer.jpg").write_bytes(jpeg + b"\0trailer" * 8)               # data after EOI
    shutil.copy(CORPUS / "libjpeg-turbo__testorig12.jpg", src / "twelve.jpg")
    summary, records = convert(urec, tmp_path / "src", tmp_path / "out")
    assert "3 written, 1 rejected" in summary
    assert ("1 transcoded to the fast layout, 2 kept as their source bytes "
            "(data after EOI: 1, libjpeg warning: 1);") in summary
    transcoded, kept = check_records(tmp_path / "out", tmp_path / "src", records)
    assert transcoded == ["a/photo.jpg"] and sorted(kept) == ["a/cut.jpg", "a/trailer.jpg"]
