"""The native Loader and ImageDataset share one per-sample decoder
(include/unirecord/sample_decoder.h): the same (seed, epoch, record id) gives
the same pixels from both, with and without apply_exif, on the JPEG
conformance corpus's EXIF orientation files; and those pixels are PIL's
(ImageOps.exif_transpose with apply_exif) through torchvision's transforms."""
import pathlib

import numpy as np
import pytest

import unirecord
from test_image_dataset import MEAN_TOL, P99_TOL, pil_to_tensor

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
F = pytest.importorskip("torchvision.transforms.functional")
from PIL import Image, ImageOps  # noqa: E402 (after the skips)

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "jpeg-conformance"
SEED = 3

TRANSFORMS = {
    "random_resized_crop": lambda: unirecord.RandomResizedCrop(24, flip=True),
    "center_crop": lambda: unirecord.CenterCrop(24, resize=28),
}


def orientation_jpegs(tmp_path):
    """(name, bytes): the corpus's orientation files (square hopper images
    and a 2x1 image shown 1x2) and, so that every orientation also swaps a
    non-square size, a 72x40 PIL-written JPEG tagged with each orientation."""
    files = sorted(p for p in CORPUS.iterdir() if "orientation" in p.name)
    assert len(files) == 8
    jpegs = [(p.name, p.read_bytes()) for p in files]
    yy, xx = np.mgrid[0:40, 0:72]
    pixels = np.stack([xx * 255 // 71, yy * 255 // 39, (3 * xx + 5 * yy) % 256], -1).astype(np.uint8)
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        path = tmp_path / f"wide_orientation_{orientation}.jpg"
        Image.fromarray(pixels).save(path, quality=92, exif=exif.tobytes())
        jpegs.append((path.name, path.read_bytes()))
    return jpegs


@pytest.fixture(scope="module")
def orientation_records(tmp_path_factory):
    root = tmp_path_factory.mktemp("orientation")
    jpegs = orientation_jpegs(root)
    out = root / "records"
    with unirecord.Writer(out, {"image": "bytes", "label": "int64", "path": "string"}, sync=False) as w:
        for i, (name, data) in enumerate(jpegs):
            w.write({"image": data, "label": i, "path": name})
    return out, jpegs


def pil_image(data, apply_exif):
    import io

    image = Image.open(io.BytesIO(data))
    if apply_exif:
        image = ImageOps.exif_transpose(image)
    return image.convert("RGB")


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("apply_exif", [False, True], ids=["stored", "apply_exif"])
def test_loader_and_image_dataset_give_the_same_pixels(orientation_records, transform, apply_exif):
    path, jpegs = orientation_records
    ds = unirecord.Dataset(path)
    reference = unirecord.ImageDataset(ds, TRANSFORMS[transform](), seed=SEED, apply_exif=apply_exif)
    loader = unirecord.Loader(ds, batch_size=5, shuffle=True, seed=SEED, threads=2, transform=TRANSFORMS[transform](),
                              fields=unirecord.Fields(return_ids=True), decode=unirecord.Decode(apply_exif=apply_exif))
    for epoch in (0, 2):
        loader.set_epoch(epoch)
        reference.set_epoch(epoch)
        seen = []
        for images, labels, ids in loader:
            for k, record in enumerate(ids.tolist()):
                image, label = reference[record]
                assert torch.equal(images[k], image), (jpegs[record][0], epoch)
                assert labels[k].item() == label == record
                seen.append(record)
        assert sorted(seen) == list(range(len(jpegs)))


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_apply_exif_changes_the_rotated_files_only(orientation_records, transform):
    path, jpegs = orientation_records
    stored = unirecord.ImageDataset(path, TRANSFORMS[transform](), seed=SEED)
    shown = unirecord.ImageDataset(path, TRANSFORMS[transform](), seed=SEED, apply_exif=True)
    for record, (name, data) in enumerate(jpegs):
        same = torch.equal(stored[record][0], shown[record][0])
        rotated = pil_image(data, False).tobytes() != pil_image(data, True).tobytes()
        assert same != rotated, name


@pytest.mark.parametrize("apply_exif", [False, True], ids=["stored", "apply_exif"])
def test_center_crop_is_torchvisions_on_pils_image(orientation_records, apply_exif):
    """Resize + CenterCrop equal torchvision's byte for byte without DCT
    scaling (ImageDecoder::DecodeCenterCrop), on the image PIL shows
    (exif_transpose'd with apply_exif)."""
    path, jpegs = orientation_records
    ours = unirecord.ImageDataset(path, unirecord.CenterCrop(24, resize=28), apply_exif=apply_exif, dct_scaling=False)
    theirs = T.Compose([T.Resize(28), T.CenterCrop(24), pil_to_tensor()])
    for record, (name, data) in enumerate(jpegs):
        assert torch.equal(ours[record][0], theirs(pil_image(data, apply_exif))), name


@pytest.mark.parametrize("apply_exif", [False, True], ids=["stored", "apply_exif"])
def test_random_resized_crop_is_the_planned_window_of_pils_image(orientation_records, apply_exif):
    path, jpegs = orientation_records
    ds = unirecord.ImageDataset(path, unirecord.RandomResizedCrop(24, flip=True), seed=SEED, apply_exif=apply_exif)
    for epoch in (0, 1):
        for record, (name, data) in enumerate(jpegs):
            image = pil_image(data, apply_exif)
            x, y, w, h, flip = ds.crop_window(record, epoch)
            assert 0 <= x and x + w <= image.width and 0 <= y and y + h <= image.height, name
            want = F.resized_crop(image, y, x, h, w, [24, 24])
            if flip:
                want = F.hflip(want)
            want = torch.as_tensor(np.array(want)).permute(2, 0, 1)
            ds.set_epoch(epoch)
            diff = (ds[record][0].int() - want.int()).abs().numpy()
            assert diff.mean() <= MEAN_TOL and np.percentile(diff, 99) <= P99_TOL, (name, epoch, diff.mean())
