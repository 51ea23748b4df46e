"""PNG records through convert_imagefolder, ImageDataset and the Loader,
against torchvision's ImageFolder (PIL + transforms) over the same files.
PNG has no DCT scaling, so crops are compared byte for byte."""
import io

import numpy as np
import pytest

import unirecord

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
F = pytest.importorskip("torchvision.transforms.functional")
datasets = pytest.importorskip("torchvision.datasets")
from PIL import Image  # noqa: E402 (after the skips)


def chw(image):
    return torch.as_tensor(np.array(image.convert("RGB"))).permute(2, 0, 1)


@pytest.fixture(scope="module")
def png_folder(tmp_path_factory):
    """Two classes of PNGs in several modes and sizes (one PNG named .JPEG, as
    in ImageNet), plus one JPEG: a mixed folder."""
    root = tmp_path_factory.mktemp("pngs") / "src"
    rng = np.random.default_rng(5)
    modes = ["RGB", "RGBA", "L", "P", "LA", "I;16", "1"]
    for k in range(14):
        cls = root / ("cat" if k % 2 else "dog")
        cls.mkdir(parents=True, exist_ok=True)
        w, h = 90 + 13 * k, 140 - 5 * k
        yy, xx = np.mgrid[0:h, 0:w]
        rgb = np.stack([xx * 255 // w, yy * 255 // h, (xx * yy) % 256], -1)
        rgb = np.clip(rgb + rng.normal(0, 10, rgb.shape), 0, 255).astype(np.uint8)
        image = Image.fromarray(rgb)
        mode = modes[k % len(modes)]
        if mode == "P":
            image = image.quantize(64)
        elif mode == "I;16":
            image = Image.fromarray((rgb[..., 0].astype(np.uint16) * 3))  # some over 255: clipped by PIL
        elif mode != "RGB":
            image = image.convert(mode)
        name = f"img_{k:02d}.JPEG" if k == 3 else f"img_{k:02d}.png"
        image.save(cls / name, format="PNG", interlace=False)
    Image.fromarray(rgb).save(root / "cat" / "photo.jpg", quality=95)
    return root


@pytest.fixture(scope="module")
def png_records(png_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("png_records")
    report = unirecord.convert_imagefolder(png_folder, out, sync=False, threads=2)
    assert report["written"] == 15 and report["png"] == 14 and report["transcoded"] == 1
    assert report["rejected"] == 0
    ds = unirecord.Dataset(out)
    for i in range(len(ds)):
        record = ds[i]
        source = (png_folder / record["path"]).read_bytes()
        if source.startswith(b"\x89PNG"):
            assert bytes(record["image"]) == source and record["jpeg_layout"] == 0, record["path"]
        with Image.open(io.BytesIO(source)) as im:
            assert (record["width"], record["height"]) == im.size
    return out


def test_center_crop_equals_torchvision(png_folder, png_records):
    ours = unirecord.ImageDataset(png_records, unirecord.CenterCrop(64, resize=72), dct_scaling=False)
    theirs = datasets.ImageFolder(str(png_folder), T.Compose([T.Resize(72), T.CenterCrop(64), T.Lambda(chw)]))
    assert len(ours) == len(theirs)
    for i in range(len(ours)):
        assert ours[i][1] == theirs[i][1]
        assert torch.equal(ours[i][0], theirs[i][0]), theirs.samples[i][0]


def test_random_resized_crop_is_torchvision_on_the_planned_window(png_folder, png_records):
    ds = unirecord.ImageDataset(png_records, unirecord.RandomResizedCrop(48, flip=True), seed=11, dct_scaling=False)
    ref = datasets.ImageFolder(str(png_folder))
    for epoch in (0, 3):
        ds.set_epoch(epoch)
        for i in range(len(ds)):
            path = ref.samples[i][0]
            if path.endswith(".jpg"):
                continue  # the JPEG is held to tolerances elsewhere (test_image_dataset.py)
            x, y, w, h, flip = ds.crop_window(i)
            want = F.resized_crop(ref[i][0].convert("RGB"), y, x, h, w, [48, 48])
            if flip:
                want = F.hflip(want)
            got, label = ds[i]
            assert label == ref[i][1]
            assert torch.equal(got, chw(want)), (path, epoch)


def test_loader_batches_equal_image_dataset(png_records):
    transform = unirecord.RandomResizedCrop(40, flip=True)
    reference = unirecord.ImageDataset(png_records, transform, seed=4)
    loader = unirecord.Loader(png_records, batch_size=4, shuffle=True, seed=4, threads=2,
                              transform=unirecord.RandomResizedCrop(40, flip=True),
                              fields=unirecord.Fields(return_ids=True))
    for epoch in (0, 1):
        loader.set_epoch(epoch)
        reference.set_epoch(epoch)
        seen = []
        for images, labels, ids in loader:
            for k, record in enumerate(ids.tolist()):
                image, label = reference[record]
                assert torch.equal(images[k], image) and labels[k].item() == label, (epoch, record)
                seen.append(record)
        assert sorted(seen) == list(range(15))


def test_a_corrupt_png_record_names_the_record(tmp_path):
    good = io.BytesIO()
    Image.new("RGB", (20, 20), (1, 2, 3)).save(good, "PNG")
    data = good.getvalue()
    idat = data.index(b"IDAT")
    bad = data[:idat + 10] + bytes([data[idat + 10] ^ 0xFF]) + data[idat + 11:]
    with unirecord.Writer(tmp_path / "r", {"image": "bytes", "label": "int64", "path": "string"}, sync=False) as w:
        w.write({"image": data, "label": 0, "path": "good.png"})
        w.write({"image": bad, "label": 1, "path": "bad.png"})
        w.write({"image": data[: len(data) // 2], "label": 2, "path": "cut.png"})
    ds = unirecord.ImageDataset(tmp_path / "r", unirecord.CenterCrop(16))
    assert ds[0][0].shape == (3, 16, 16)
    with pytest.raises(unirecord.CorruptRecordError, match=r"record 1 \(bad.png\).*PNG decode"):
        ds[1]
    with pytest.raises(unirecord.CorruptRecordError, match=r"record 2 \(cut.png\).*PNG"):
        ds[2]
