"""`urec show`: the contact sheet decoded with PIL, tile by tile, against the
loader's pixels for the same ids, seed and epoch (`urec decode`, which runs
the same per-sample planning, and unirecord.ImageDataset when the binding is
built), and against PIL for --transform none."""
import csv
import math

import numpy as np
import pytest

from conftest import run_urec
from test_decode import read_ppm

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402


@pytest.fixture(scope="module")
def records(urec, mixed_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("show") / "records"
    urec("convert", "imagefolder", mixed_folder, out, "--name", "train")
    return out


def show(records, tmp_path, *args):
    sheet = tmp_path / "sheet.png"
    run_urec("show", records, *args, "-o", sheet)
    with open(tmp_path / "sheet.tsv") as f:
        legend = list(csv.DictReader(f, delimiter="\t"))
    with Image.open(sheet) as im:
        assert im.mode == "RGB"
        return np.asarray(im), legend


def tile(sheet, row, size):
    x, y = int(row["x"]), int(row["y"])
    return sheet[y:y + size, x:x + size]


def record_image(records, record_id, tmp_path):
    path = tmp_path / f"record{record_id}.img"
    path.write_bytes(run_urec("cat", records, record_id, "--field", "image", text=False).stdout)
    return path


def urec_decode(path, *args):
    return read_ppm(run_urec("decode", path, "-o", "-", *args, text=False).stdout)


def test_train_tiles_are_the_loaders_crops_for_the_epoch(records, tmp_path):
    ids = [0, 3, 7, 11, 20]
    png_id = int(run_urec("query", records, "jpeg_layout == 0", "--ids").stdout.split()[0])
    ids.append(png_id)  # the PNG named .JPEG: same planning, same stage
    for epoch in (0, 3):
        sheet, legend = show(records, tmp_path, "--ids", ",".join(map(str, ids)), "--transform", "train",
                             "--epoch", epoch, "--seed", 9, "--size", 64)
        assert [int(r["id"]) for r in legend] == ids
        for row in legend:
            rid = int(row["id"])
            want = urec_decode(record_image(records, rid, tmp_path), "--random-resized-crop", f"9,{epoch},{rid}",
                               "--resize", "64x64")
            assert np.array_equal(tile(sheet, row, 64), want), (epoch, rid)
    # Different epochs give different crops.
    other, _ = show(records, tmp_path, "--ids", "0", "--transform", "train", "--epoch", 1, "--seed", 9)
    first, _ = show(records, tmp_path, "--ids", "0", "--transform", "train", "--epoch", 2, "--seed", 9)
    assert not np.array_equal(other, first)


def test_train_tiles_equal_image_dataset(records, tmp_path):
    unirecord = pytest.importorskip("unirecord")
    torch = pytest.importorskip("torch")
    ds = unirecord.ImageDataset(str(records), unirecord.RandomResizedCrop(48, flip=True), seed=5)
    ds.set_epoch(2)
    sheet, legend = show(records, tmp_path, "--count", 9, "--transform", "train", "--epoch", 2, "--seed", 5,
                         "--size", 48)
    assert len(legend) == 9
    for row in legend:
        image, label = ds[int(row["id"])]
        assert torch.equal(torch.as_tensor(tile(sheet, row, 48).copy()).permute(2, 0, 1), image), row["id"]
        assert int(row["label"]) == label


def test_val_tiles_are_resize_then_center_crop(records, tmp_path):
    sheet, legend = show(records, tmp_path, "--where", "label == 1", "--transform", "val", "--size", 56,
                         "--resize", 64)
    matching = run_urec("query", records, "label == 1", "--ids").stdout.split()
    assert [r["id"] for r in legend] == matching[:16]
    for row in legend:
        want = urec_decode(record_image(records, int(row["id"]), tmp_path), "--center-crop", "56,64")
        assert np.array_equal(tile(sheet, row, 56), want), row["id"]
        assert row["label"] == "1"


def test_the_library_names_of_the_transforms_are_urec_bench_names_too(records, tmp_path):
    """One table of transform names (sample_decoder.h's kTransformNames): what
    `urec bench --transform` and the Python transforms call center_crop and
    random_resized_crop is val and train here."""
    for long_name, short_name, extra in (("center_crop", "val", ["--resize", 64]),
                                         ("random_resized_crop", "train", ["--seed", 4, "--epoch", 1])):
        named, named_legend = show(records, tmp_path, "--count", 6, "--size", 56, "--transform", long_name, *extra)
        short, short_legend = show(records, tmp_path, "--count", 6, "--size", 56, "--transform", short_name, *extra)
        assert named_legend == short_legend and np.array_equal(named, short), long_name


def test_none_tiles_are_the_whole_image_fitted_and_the_legend_names_each(records, mixed_folder, tmp_path):
    sheet, legend = show(records, tmp_path, "--count", 30, "--size", 80, "--columns", 5)
    assert len(legend) == 26  # every record: 24 photos, the CMYK JPEG, the PNG
    classes = sorted(p.name for p in mixed_folder.iterdir() if p.is_dir())
    assert sheet.shape[1] == 4 + 5 * (80 + 4)
    for row in legend:
        record = run_urec("cat", records, row["id"], "--field", "path").stdout.strip()
        assert row["path"] == record and row["class"] == classes[int(row["label"])]
        with Image.open(mixed_folder / record) as im:
            pil = im.convert("RGB")
        scale = min(80 / pil.width, 80 / pil.height)
        # Halves round up (std::lround), not to even as Python's round().
        w, h = (max(1, math.floor(v * scale + 0.5)) for v in (pil.width, pil.height))
        want = np.asarray(pil.resize((w, h), Image.BILINEAR))
        x0, y0 = (80 - w) // 2, (80 - h) // 2
        assert np.array_equal(tile(sheet, row, 80)[y0:y0 + h, x0:x0 + w], want), record


def test_bad_requests_are_clear_errors(records, tmp_path):
    sheet = tmp_path / "s.png"
    for args, code, words in [
        (["--ids", "1", "--where", "label == 0"], 2, "exclude each other"),
        (["--ids", "9999"], 1, "record 9999 does not exist"),
        (["--where", "label == 99"], 2, "no records to show"),
        (["--transform", "sideways"], 2,
         "unknown transform 'sideways' (expected one of none, random_resized_crop, center_crop, train, val)"),
        (["--where", "nope == 1"], 2, "nope"),
    ]:
        result = run_urec("show", records, *args, "-o", sheet, check=False)
        assert result.returncode == code and words in result.stderr, (args, result.stderr)


BOX_COLOR = (255, 214, 0)


def box_corners(boxes, window, out_w, out_h):
    """The top-left and bottom-right pixels of each box's outline: the boxes
    (COCO xywh) mapped onto an out_w x out_h tile through the window as
    docs/loader.md "Boxes" says, in plain Python."""
    x, y, w, h, flip = window
    corners = []
    for a, b, c, d in boxes:
        x0, x1 = (a - x) * out_w / w, (a + c - x) * out_w / w
        y0, y1 = (b - y) * out_h / h, (b + d - y) * out_h / h
        if flip:
            x0, x1 = out_w - x1, out_w - x0
        x0, x1 = min(max(x0, 0), out_w), min(max(x1, 0), out_w)
        y0, y1 = min(max(y0, 0), out_h), min(max(y1, 0), out_h)
        if x1 > x0 and y1 > y0:
            corners.append((math.floor(x0), math.floor(y0), min(math.ceil(x1), out_w) - 1, min(math.ceil(y1), out_h) - 1))
    return corners


def test_boxes_are_drawn_where_the_loader_maps_them(urec, tmp_path):
    unirecord = pytest.importorskip("unirecord")
    import io

    rng = np.random.default_rng(4)
    records = tmp_path / "det"
    sizes = [(90, 60), (50, 120), (200, 150), (64, 64)]
    stored = []
    with unirecord.Writer(records, unirecord.Schema([unirecord.Field("image", "bytes"),
                                                     unirecord.Field("boxes", "float32", shape=(-1, 4))]),
                          "det", sync=False) as w:
        for k, (width, height) in enumerate(sizes):
            buf = io.BytesIO()
            Image.fromarray(np.full((height, width, 3), 30 + 20 * k, np.uint8)).save(buf, "PNG")
            boxes = np.array([[width * 0.1, height * 0.2, width * 0.5, height * 0.3],
                              [width * 0.6, height * 0.5, width * 0.3, height * 0.4]], np.float32)
            w.write({"image": buf.getvalue(), "boxes": boxes})
            stored.append(boxes.tolist())
    size = 64
    sheet, legend = show(records, tmp_path, "--transform", "none", "--size", size)
    images = unirecord.ImageDataset(records, unirecord.RandomResizedCrop(size, flip=True), seed=3, label_field=None)
    for row in legend:
        rid = int(row["id"])
        width, height = sizes[rid]
        scale = min(size / width, size / height)
        fw, fh = (min(max(math.floor(v * scale + 0.5), 1), size) for v in (width, height))
        left, top = int(row["x"]) + (size - fw) // 2, int(row["y"]) + (size - fh) // 2
        for x0, y0, x1, y1 in box_corners(stored[rid], (0, 0, width, height, 0), fw, fh):
            assert tuple(sheet[top + y0, left + x0]) == BOX_COLOR, rid
            assert tuple(sheet[top + y1, left + x1]) == BOX_COLOR, rid
    sheet, legend = show(records, tmp_path, "--transform", "train", "--seed", 3, "--size", size)
    drawn = 0
    for row in legend:
        rid = int(row["id"])
        for x0, y0, x1, y1 in box_corners(stored[rid], images.crop_window(rid), size, size):
            assert tuple(sheet[int(row["y"]) + y0, int(row["x"]) + x0]) == BOX_COLOR, rid
            assert tuple(sheet[int(row["y"]) + y1, int(row["x"]) + x1]) == BOX_COLOR, rid
            drawn += 1
    assert drawn > 0
    # --boxes names a field that must exist and be boxes; without it, no boxes.
    bad = run_urec("show", records, "--boxes", "nope", "-o", tmp_path / "x.png", check=False)
    assert bad.returncode != 0 and "nope" in bad.stderr
    bad = run_urec("show", records, "--boxes", "image", "-o", tmp_path / "x.png", check=False)
    assert bad.returncode != 0 and "not float32 (-1, 4)" in bad.stderr
