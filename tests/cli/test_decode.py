"""`urec decode` against PIL and torchvision, the references training code uses.

The urec binary comes from the UREC environment variable (scripts/test-python.sh
sets it). Needs numpy, PIL, torch and torchvision (Debian's python3-* packages).
"""
import io
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image, ImageFile  # noqa: E402

torch = pytest.importorskip("torch")
transforms = pytest.importorskip("torchvision.transforms")
F = pytest.importorskip("torchvision.transforms.functional")

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "jpeg-conformance"
UREC = os.environ.get("UREC", "")


def manifest():
    lines = (CORPUS / "MANIFEST.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:]]


def urec_decode(path, *args):
    """Runs urec decode and returns the PPM as an HxWx3 uint8 array."""
    out = subprocess.run([UREC, "decode", str(path), "-o", "-", *args], capture_output=True)
    assert out.returncode == 0, out.stderr.decode()
    return read_ppm(out.stdout)


def read_ppm(data):
    assert data[:2] == b"P6"
    fields, pos = [], 2
    while len(fields) < 3:
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(int(data[pos:end]))
        pos = end
    width, height, _ = fields
    pixels = np.frombuffer(data[pos + 1:], dtype=np.uint8)
    return pixels.reshape(height, width, 3)


def pil_rgb(path):
    with Image.open(path) as im:
        return im.convert("RGB")


DECODES = [e["file"] for e in manifest() if e["expected_behaviour"] == "decodes"]


@pytest.mark.parametrize("name", DECODES)
def test_full_decode_equals_pil(name):
    ours = urec_decode(CORPUS / name)
    theirs = np.asarray(pil_rgb(CORPUS / name))
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs), f"max diff {np.abs(ours.astype(int) - theirs).max()}"


def test_damaged_files_decode_like_pil_with_truncated_images_allowed(monkeypatch):
    # Lenient mode recovers like PIL with LOAD_TRUNCATED_IMAGES: same pixels
    # for every damaged file but one progressive file with a bad Huffman code,
    # where PIL gives up and returns a black image while libjpeg (and djpeg,
    # and we) keep the recovered scans.
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    pil_gives_up = {"jpeg-decoder__imagetestsuite__c3018ebe53d0046eecb58858ca869a99.jpg"}
    compared = 0
    for e in manifest():
        if not e["expected_behaviour"].startswith("decodes with warning"):
            continue
        if e["file"] in pil_gives_up:
            continue
        try:
            theirs = np.asarray(pil_rgb(CORPUS / e["file"]))
        except OSError:
            continue
        ours = urec_decode(CORPUS / e["file"])
        assert ours.shape == theirs.shape, e["file"]
        assert np.array_equal(ours, theirs), e["file"]
        compared += 1
    assert compared >= 5


PNG_NAMED_JPG = "jpeg-decoder__mozilla__jpg-size-6x6.jpg"  # the manifest: "a 6x6 RGBA PNG named .jpg"


def test_failures_exit_nonzero_with_message():
    for e in manifest():
        if e["expected_behaviour"] != "must fail with clear error" or e["file"] == PNG_NAMED_JPG:
            continue
        out = subprocess.run([UREC, "decode", str(CORPUS / e["file"]), "-o", "-"],
                             capture_output=True)
        assert out.returncode != 0, e["file"]
        assert b"error:" in out.stderr and len(out.stderr) > 20, e["file"]


def test_a_png_named_jpg_is_decoded_as_the_png_it_is():
    """The format comes from the magic bytes, never the name: the corpus's
    PNG named .jpg (which a JPEG-only decoder must reject) decodes as PIL
    decodes it."""
    assert (CORPUS / PNG_NAMED_JPG).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(urec_decode(CORPUS / PNG_NAMED_JPG), np.asarray(pil_rgb(CORPUS / PNG_NAMED_JPG)))


@pytest.mark.parametrize("name,box", [
    ("libjpeg-turbo__testorig.jpg", (0, 0, 227, 149)),
    ("libjpeg-turbo__testorig.jpg", (226, 148, 1, 1)),
    ("libjpeg-turbo__testimgp.jpg", (17, 33, 100, 50)),
    ("pillow__flower.jpg", (123, 45, 300, 200)),
    ("pillow__iptc.jpg", (0, 100, 640, 1)),
    ("pillow__pil_sample_cmyk.jpg", (10, 20, 30, 40)),
])
def test_crop_equals_pil_crop(name, box):
    x, y, w, h = box
    ours = urec_decode(CORPUS / name, "--crop", f"{x},{y},{w},{h}")
    theirs = np.asarray(pil_rgb(CORPUS / name).crop((x, y, x + w, y + h)))
    assert np.array_equal(ours, theirs)
    flipped = urec_decode(CORPUS / name, "--crop", f"{x},{y},{w},{h}", "--flip")
    assert np.array_equal(flipped, theirs[:, ::-1])


def test_synthetic_cmyk_jpeg_decodes_like_pil(mixed_folder):
    """The --mix folder's CMYK JPEG (Adobe YCCK, written by the library's
    libjpeg encoder): pixel-identical to PIL, whole and cropped, as the corpus
    CMYK files are. (synthetic_images_test checks it shows the painted picture.)"""
    path = next(mixed_folder.glob("*/cmyk.JPEG"))
    with Image.open(path) as im:
        assert im.mode == "CMYK" and im.info.get("adobe_transform") == 2
    theirs = np.asarray(pil_rgb(path))
    ours = urec_decode(path)
    assert np.array_equal(ours, theirs), f"max diff {np.abs(ours.astype(int) - theirs).max()}"
    crop = urec_decode(path, "--crop", "17,9,101,77")
    assert np.array_equal(crop, theirs[9:86, 17:118])


@pytest.mark.parametrize("box,size", [
    ((0, 0, 480, 360), (224, 224)),
    ((37, 11, 301, 222), (224, 224)),
    ((100, 100, 50, 70), (224, 224)),   # upscale
    ((5, 6, 470, 90), (64, 32)),
])
def test_resized_crop_equals_torchvision_on_pil(box, size):
    """Without DCT scaling, crop+resize is torchvision's resized_crop exactly."""
    x, y, w, h = box
    name = CORPUS / "pillow__flower.jpg"
    ours = urec_decode(name, "--crop", f"{x},{y},{w},{h}", "--resize", f"{size[0]}x{size[1]}",
                       "--no-dct-scaling")
    theirs = np.asarray(F.resized_crop(pil_rgb(name), y, x, h, w, [size[1], size[0]],
                                       interpolation=transforms.InterpolationMode.BILINEAR))
    assert np.array_equal(ours, theirs), f"max diff {np.abs(ours.astype(int) - theirs).max()}"
    flipped = urec_decode(name, "--crop", f"{x},{y},{w},{h}", "--resize", f"{size[0]}x{size[1]}",
                          "--no-dct-scaling", "--flip")
    theirs_flipped = np.asarray(F.hflip(F.resized_crop(
        pil_rgb(name), y, x, h, w, [size[1], size[0]],
        interpolation=transforms.InterpolationMode.BILINEAR)))
    assert np.array_equal(flipped, theirs_flipped)


def synthetic_jpeg(tmp_path, width, height, quality=90):
    rng = np.random.default_rng(width * 7 + height)
    yy, xx = np.mgrid[0:height, 0:width]
    img = np.stack([xx * 255 // width, yy * 255 // height, (xx + yy) % 256], axis=-1)
    img = np.clip(img + rng.normal(0, 12, img.shape), 0, 255).astype(np.uint8)
    path = tmp_path / f"synthetic_{width}x{height}.jpg"
    Image.fromarray(img).save(path, quality=quality)
    return path


def test_center_crop_equals_torchvision_resize_then_center_crop(tmp_path):
    """DecodeCenterCrop (urec decode --center-crop without --resize) decodes
    only what the kept pixels read and uses the whole-image resize weights:
    byte-identical to torchvision wherever DCT scaling does not apply."""
    reference = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    paths = [CORPUS / "pillow__flower.jpg", CORPUS / "pillow__iptc.jpg",
             CORPUS / "jpeg-decoder__progressive3.jpg", CORPUS / "zune-image__fox410.jpg",
             CORPUS / "pillow__pil_sample_cmyk.jpg", CORPUS / "pillow__hopper_gray.jpg",
             synthetic_jpeg(tmp_path, 500, 375), synthetic_jpeg(tmp_path, 375, 500),
             synthetic_jpeg(tmp_path, 2048, 1536)]
    for path in paths:
        theirs = np.asarray(reference(pil_rgb(path)))
        ours = urec_decode(path, "--center-crop", "224,256", "--no-dct-scaling")
        assert np.array_equal(ours, theirs), path.name
        if "2048" not in path.name:  # DCT scaling applies only to the large one
            assert np.array_equal(urec_decode(path, "--center-crop", "224,256"), theirs)


def test_center_crop_options_are_the_sample_decoders(tmp_path):
    """--center-crop SIZE,RESIZE takes the Loader's and ImageDataset's check
    (SampleDecoderOptions::Check): RESIZE below SIZE is refused, RESIZE 0 is
    CenterCrop(SIZE) alone, torchvision's for an image larger than the crop."""
    path = CORPUS / "pillow__flower.jpg"
    out = subprocess.run([UREC, "decode", str(path), "-o", "-", "--center-crop", "224,200"], capture_output=True,
                         text=True)
    assert out.returncode == 2
    assert "--center-crop 224,200: center crop: resize_shorter (200) must be at least image_size (224)" in out.stderr
    theirs = np.asarray(transforms.CenterCrop(96)(pil_rgb(path)))
    assert np.array_equal(urec_decode(path, "--center-crop", "96,0", "--no-dct-scaling"), theirs)


def test_center_crop_window_close_to_torchvision_resize_then_center_crop(tmp_path):
    """Resize(256)+CenterCrop(224) planned as one window resized to 224x224.

    The window edges are rounded to whole source pixels and the filter is
    clipped at the window (torchvision's reads beyond it), so pixels differ
    slightly; DCT scaling (on by default) adds its own small difference.
    Tolerance: mean abs difference <= 2.5, 99th percentile <= 24 (of 255).
    """
    reference = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    paths = [CORPUS / "pillow__flower.jpg", CORPUS / "pillow__iptc.jpg",
             CORPUS / "jpeg-decoder__progressive3.jpg",
             synthetic_jpeg(tmp_path, 500, 375), synthetic_jpeg(tmp_path, 375, 500),
             synthetic_jpeg(tmp_path, 1024, 768), synthetic_jpeg(tmp_path, 2048, 1536)]
    report = []
    for path in paths:
        theirs = np.asarray(reference(pil_rgb(path))).astype(int)
        for extra in ([], ["--no-dct-scaling"]):
            ours = urec_decode(path, "--center-crop", "224,256", "--resize", "224x224", *extra)
            diff = np.abs(ours.astype(int) - theirs)
            report.append((path.name, " ".join(extra) or "dct-scaling", diff.max(), diff.mean(),
                           np.percentile(diff, 99)))
            assert diff.mean() <= 2.5, report[-1]
            assert np.percentile(diff, 99) <= 24, report[-1]
    for row in report:
        print("center-crop vs torchvision: %s (%s): max %d mean %.3f p99 %.1f" % row)


def urec_plans(width, height, seed, count):
    path = synthetic_plan_image(width, height)
    out = subprocess.run([UREC, "decode", str(path), "--random-resized-crop", f"{seed},0,0",
                          "--print-plans", str(count)], capture_output=True, check=True)
    return np.loadtxt(io.StringIO(out.stdout.decode()), dtype=np.int64).reshape(-1, 5)


_plan_images = {}


def synthetic_plan_image(width, height):
    # Planning needs only the header; a tiny real JPEG of the right size.
    key = (width, height)
    if key not in _plan_images:
        buf = io.BytesIO()
        Image.new("RGB", (width, height)).save(buf, format="JPEG")
        path = Path(os.environ.get("PYTEST_TMP", "/tmp")) / f"urec_plan_{width}x{height}.jpg"
        path.write_bytes(buf.getvalue())
        _plan_images[key] = path
    return _plan_images[key]


def torchvision_plans(width, height, count):
    torch.manual_seed(0)
    img = Image.new("RGB", (width, height))
    rows = []
    for _ in range(count):
        i, j, h, w = transforms.RandomResizedCrop.get_params(img, [0.08, 1.0], [3 / 4, 4 / 3])
        flip = int(torch.rand(1) < 0.5)
        rows.append((j, i, w, h, flip))
    return np.array(rows, dtype=np.int64)


def ks_statistic(a, b):
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / len(a)
    cdf_b = np.searchsorted(b, grid, side="right") / len(b)
    return np.abs(cdf_a - cdf_b).max()


@pytest.mark.parametrize("width,height", [(500, 375), (375, 500), (227, 149), (1000, 120),
                                          (64, 640)])
def test_random_resized_crop_distribution_equals_torchvision(width, height):
    n = 20000
    ours = urec_plans(width, height, seed=11, count=n)
    theirs = torchvision_plans(width, height, n)
    for plans in (ours, theirs):
        x, y, w, h = plans[:, 0], plans[:, 1], plans[:, 2], plans[:, 3]
        assert (x >= 0).all() and (y >= 0).all() and (w > 0).all() and (h > 0).all()
        assert (x + w <= width).all() and (y + h <= height).all()
    # Same algorithm, independent random streams: marginals agree within
    # sampling noise (two-sample KS critical value at alpha=1e-3 is ~0.0195).
    names = ["x", "y", "width", "height", "flip"]
    for k, name in enumerate(names):
        d = ks_statistic(ours[:, k], theirs[:, k])
        assert d < 0.0195, f"{name}: KS statistic {d:.4f}"
    area_ours = ours[:, 2] * ours[:, 3] / (width * height)
    area_theirs = theirs[:, 2] * theirs[:, 3] / (width * height)
    assert abs(area_ours.mean() - area_theirs.mean()) < 0.01
    fallback = lambda p: np.mean((p[:, 0] == (width - p[:, 2]) // 2) &  # noqa: E731
                                 (p[:, 1] == (height - p[:, 3]) // 2) &
                                 ((p[:, 2] == width) | (p[:, 3] == height)))
    assert abs(fallback(ours) - fallback(theirs)) < 0.01


def test_random_resized_crop_fallback_matches_torchvision_geometry():
    # A 20:1 strip almost never fits the ratio bounds: torchvision's fallback
    # is the central crop with the ratio clamped to 4/3.
    ours = urec_plans(2000, 100, seed=3, count=200)
    w_fb, h_fb = round(100 * 4 / 3), 100
    fb = ours[(ours[:, 2] == w_fb) & (ours[:, 3] == h_fb)]
    assert len(fb) > 0
    assert (fb[:, 0] == (2000 - w_fb) // 2).all() and (fb[:, 1] == 0).all()
    theirs = torchvision_plans(2000, 100, 200)
    assert math.isclose(len(fb) / 200,
                        np.mean((theirs[:, 2] == w_fb) & (theirs[:, 3] == h_fb)), abs_tol=0.15)


def test_same_key_same_crop_and_pixels():
    name = CORPUS / "pillow__flower.jpg"
    a = urec_decode(name, "--random-resized-crop", "5,2,99", "--resize", "224x224")
    b = urec_decode(name, "--random-resized-crop", "5,2,99", "--resize", "224x224")
    c = urec_decode(name, "--random-resized-crop", "5,3,99", "--resize", "224x224")
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
