"""PNG through `urec decode` against PIL and torchvision: every colour type
and bit depth, plain and Adam7, palette and tRNS. Full decodes and crops are
PIL's Image.open(...).convert("RGB") byte for byte; crops resized (and
flipped) and Resize + CenterCrop are torchvision's on that image, byte for
byte (PNG has no DCT scaling, so no tolerance is needed).

PIL writes the files it can write; 2/4-bit gray, 16-bit colour and Adam7
files come from the seed generator of the fuzz corpus (fuzz/make_png_seeds.py,
plain zlib), and PIL is still the reference that reads them."""
import importlib.util
import io
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from test_decode import read_ppm

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

torch = pytest.importorskip("torch")
transforms = pytest.importorskip("torchvision.transforms")
F = pytest.importorskip("torchvision.transforms.functional")

ROOT = Path(__file__).resolve().parents[2]
UREC = os.environ.get("UREC", "")

_spec = importlib.util.spec_from_file_location("make_png_seeds", ROOT / "fuzz" / "make_png_seeds.py")
seeds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(seeds)

W, H = 161, 117  # odd: filters, packed bytes and interlace passes end mid-way


def picture(mode_max, channels):
    """A smooth picture with noise, as samples in [0, mode_max]."""
    rng = np.random.default_rng(mode_max * 10 + channels)
    yy, xx = np.mgrid[0:H, 0:W]
    base = np.stack([xx / (W - 1), yy / (H - 1), (xx + yy) / (W + H - 2), 1 - xx / (W - 1)][:channels], -1)
    noisy = base * mode_max + rng.normal(0, mode_max / 20, base.shape)
    return np.clip(np.rint(noisy), 0, mode_max).astype(np.int64)


def pil_png(image, **save):
    buf = io.BytesIO()
    image.save(buf, "PNG", **save)
    return buf.getvalue()


def raw_png(depth, ctype, interlace=False, plte=None, trns=None):
    channels = seeds.CHANNELS[ctype]
    samples = picture((1 << depth) - 1, channels)
    return seeds.encode(W, H, depth, ctype, lambda x, y: tuple(int(v) for v in samples[y, x]), interlace, plte, trns)


def cases():
    """name -> PNG bytes, covering every colour type and bit depth."""
    rgb = picture(255, 3).astype(np.uint8)
    rgba = picture(255, 4).astype(np.uint8)
    gray = rgb[..., 0]
    palette = Image.fromarray(rgb).quantize(200)
    out = {
        "gray1 (PIL mode 1)": pil_png(Image.fromarray(gray > 127)),
        "gray8": pil_png(Image.fromarray(gray)),
        "gray8 tRNS": pil_png(Image.fromarray(gray), transparency=50),
        "gray16 (PIL mode I, clipped)": pil_png(Image.fromarray((picture(65535, 1)[..., 0] // 64).astype(np.uint16))),
        "gray16 full range": pil_png(Image.fromarray(picture(65535, 1)[..., 0].astype(np.uint16))),
        "gray+alpha8": pil_png(Image.fromarray(rgba[..., :2], "LA")),
        "rgb8": pil_png(Image.fromarray(rgb)),
        "rgb8 tRNS": pil_png(Image.fromarray(rgb), transparency=(10, 20, 30)),
        "rgba8": pil_png(Image.fromarray(rgba, "RGBA")),
        "palette8": pil_png(palette),
        "palette8 tRNS": pil_png(palette, transparency=bytes(range(0, 200, 2))),
        "palette1": pil_png(Image.fromarray(rgb).quantize(2), bits=1),
        "palette2": pil_png(Image.fromarray(rgb).quantize(4), bits=2),
        "palette4": pil_png(Image.fromarray(rgb).quantize(16), bits=4),
        "palette8 indices past the PLTE": raw_png(8, 3, plte=bytes(range(30))),
    }
    for depth in (2, 4):
        out[f"gray{depth}"] = raw_png(depth, 0)
    for ctype, name in ((2, "rgb16"), (4, "gray+alpha16"), (6, "rgba16")):
        out[name] = raw_png(16, ctype)
    for depth, ctype in ((1, 0), (4, 0), (16, 0), (8, 2), (16, 2), (2, 3), (8, 4), (16, 6)):
        plte = bytes(i % 256 for i in range(3 * (1 << depth))) if ctype == 3 else None
        out[f"adam7 type{ctype} {depth}-bit"] = raw_png(depth, ctype, True, plte)
    return out


CASES = cases()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("png")
    paths = {}
    for i, (name, data) in enumerate(CASES.items()):
        # Named .JPEG: the decoder must go by the bytes.
        paths[name] = root / (f"case{i}.JPEG" if i % 3 == 0 else f"case{i}.png")
        paths[name].write_bytes(data)
    return paths


def urec_decode(path, *args):
    out = subprocess.run([UREC, "decode", str(path), "-o", "-", *map(str, args)], capture_output=True)
    assert out.returncode == 0, out.stderr.decode()
    return read_ppm(out.stdout)


def pil_rgb(path):
    with Image.open(path) as im:
        return im.convert("RGB")


def test_cases_cover_every_colour_type_and_bit_depth():
    seen = set()
    for data in CASES.values():
        depth, ctype, interlace = data[24], data[25], data[28]
        seen.add((ctype, depth, interlace))
    for ctype, depths in seeds.DEPTHS.items():
        for depth in depths:
            assert (ctype, depth, 0) in seen, (ctype, depth)


@pytest.mark.parametrize("name", sorted(CASES))
def test_full_decode_and_crops_equal_pil(files, name):
    theirs = np.asarray(pil_rgb(files[name]))
    ours = urec_decode(files[name])
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs), f"{name}: max diff {np.abs(ours.astype(int) - theirs).max()}"
    for x, y, w, h in ((0, 0, W, 1), (W - 1, H - 1, 1, 1), (17, 33, 100, 50), (5, 0, 3, H)):
        crop = theirs[y:y + h, x:x + w]
        assert np.array_equal(urec_decode(files[name], "--crop", f"{x},{y},{w},{h}"), crop), (name, x, y)
        assert np.array_equal(urec_decode(files[name], "--crop", f"{x},{y},{w},{h}", "--flip"), crop[:, ::-1])


@pytest.mark.parametrize("name", ["gray1 (PIL mode 1)", "gray16 full range", "rgba16", "palette8 tRNS",
                                  "adam7 type2 16-bit", "rgb8"])
def test_resized_crops_equal_torchvision(files, name):
    bilinear = transforms.InterpolationMode.BILINEAR
    image = pil_rgb(files[name])
    for (x, y, w, h), (ow, oh) in (((0, 0, W, H), (64, 64)), ((37, 11, 101, 90), (224, 224)),
                                   ((100, 20, 40, 70), (31, 17))):
        theirs = F.resized_crop(image, y, x, h, w, [oh, ow], interpolation=bilinear)
        ours = urec_decode(files[name], "--crop", f"{x},{y},{w},{h}", "--resize", f"{ow}x{oh}")
        assert np.array_equal(ours, np.asarray(theirs)), (name, x, y, w, h)
        flipped = urec_decode(files[name], "--crop", f"{x},{y},{w},{h}", "--resize", f"{ow}x{oh}", "--flip")
        assert np.array_equal(flipped, np.asarray(F.hflip(theirs))), (name, x, y, w, h)


@pytest.mark.parametrize("name", ["rgb8", "palette4", "gray+alpha16", "adam7 type6 16-bit"])
def test_center_crop_equals_torchvision_resize_then_center_crop(files, name):
    reference = transforms.Compose([transforms.Resize(100), transforms.CenterCrop(96)])
    theirs = np.asarray(reference(pil_rgb(files[name])))
    assert np.array_equal(urec_decode(files[name], "--center-crop", "96,100"), theirs), name


def test_random_resized_crop_is_the_planned_window_through_torchvision(files):
    name = "rgb16"
    for record in range(5):
        plan = subprocess.run([UREC, "decode", str(files[name]), "--random-resized-crop", f"7,1,{record}",
                               "--print-plans", "1"], capture_output=True, text=True, check=True)
        x, y, w, h, flip = map(int, plan.stdout.split())
        theirs = F.resized_crop(pil_rgb(files[name]), y, x, h, w, [48, 48],
                                interpolation=transforms.InterpolationMode.BILINEAR)
        if flip:
            theirs = F.hflip(theirs)
        ours = urec_decode(files[name], "--random-resized-crop", f"7,1,{record}", "--resize", "48x48")
        assert np.array_equal(ours, np.asarray(theirs)), record


def test_damaged_pngs_are_errors_naming_the_file(tmp_path):
    good = CASES["rgb8"]
    idat = good.index(b"IDAT")
    damaged = {
        "cut.png": (good[: len(good) // 2], "PNG decode: "),
        "bad-crc.png": (good[: idat + 40] + bytes([good[idat + 40] ^ 1]) + good[idat + 41:], "PNG decode: "),
        "header-only.png": (good[:20], "PNG header"),
        "huge.png": (good[:16] + (60000).to_bytes(4, "big") * 2 + good[24:], "over the limit"),
    }
    for name, (data, words) in damaged.items():
        path = tmp_path / name
        path.write_bytes(data)
        out = subprocess.run([UREC, "decode", str(path), "-o", "-"], capture_output=True, text=True)
        assert out.returncode != 0 and str(path) in out.stderr and words in out.stderr, (name, out.stderr)
