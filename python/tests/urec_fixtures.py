"""Fixtures of the unirecord binding tests: small JPEG image folders written
with PIL, and their unirecord conversions (through the binding).

Not a conftest.py: tests/cli has one, and its tests import from it by the
module name "conftest", which a second conftest.py in the same pytest run
would shadow. Test modules import the fixtures they use from here."""
import os

import numpy as np
import pytest

import unirecord

CLASSES = ["cat", "dog", "emu"]


def urec_binary():
    """$UREC, the urec binary; without one the calling test fails (as the CLI
    suite's do: tests/cli/conftest.py), or skips when UREC_MAY_SKIP=1."""
    urec = os.environ.get("UREC", "")
    if urec and os.path.isfile(urec) and os.access(urec, os.X_OK):
        return urec
    why = "UREC is not set" if not urec else f"UREC={urec} is not an executable file"
    if os.environ.get("UREC_MAY_SKIP") == "1":
        pytest.skip(f"{why} (UREC_MAY_SKIP=1)")
    pytest.fail(f"{why}: this test runs the built urec binary (UREC_MAY_SKIP=1 skips it instead)", pytrace=False)


def run_processes(commands, timeout=240):
    """Runs the commands (argument lists) at once, one process each with
    OMP_NUM_THREADS=1, as the ranks of a torch.distributed job; returns their
    exit codes and their output joined. On a timeout every one is killed."""
    import subprocess

    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for c in commands]
    logs = []
    for p in procs:
        try:
            logs.append(p.communicate(timeout=timeout)[0].decode())
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
    return [p.returncode for p in procs], "\n".join(logs)


def signed(body):
    """`body` (bytes) with the checksum line that ends a manifest or tags file
    (XXH3-64 from the system's libxxhash): damage the checksum cannot see."""
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return body + b"checksum %016x\n" % lib.XXH3_64bits(body, len(body))


def write_jpeg(path, width, height, seed, mode="RGB", quality=90):
    from PIL import Image

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    base = np.stack([xx * 255 // max(width, 1), yy * 255 // max(height, 1), (xx + 2 * yy + seed * 37) % 256], -1)
    img = np.clip(base + rng.normal(0, 14, base.shape), 0, 255).astype(np.uint8)
    im = Image.fromarray(img)
    if mode == "L":
        im = im.convert("L")
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, format="JPEG", quality=quality)


def make_image_folder(root, per_class, sizes, seed=0):
    """root/<class>/img_<k>.jpg, with one grayscale image per class."""
    k = 0
    for c, name in enumerate(CLASSES):
        for i in range(per_class):
            w, h = sizes[(c * per_class + i) % len(sizes)]
            write_jpeg(root / name / f"img_{i:03d}.jpg", w, h, seed + k, mode="L" if i == 1 else "RGB")
            k += 1
    return root


@pytest.fixture(scope="session")
def image_folder(tmp_path_factory):
    """3 classes x 6 JPEGs of assorted sizes (one grayscale per class)."""
    sizes = [(320, 240), (240, 320), (500, 375), (300, 300), (257, 411), (640, 480)]
    return make_image_folder(tmp_path_factory.mktemp("folder") / "train", 6, sizes)


@pytest.fixture(scope="session")
def image_records(image_folder, tmp_path_factory):
    """image_folder converted with unirecord.convert_imagefolder (2 shards)."""
    out = tmp_path_factory.mktemp("records")
    report = unirecord.convert_imagefolder(image_folder, out, num_shards=2, sync=False, threads=2)
    assert report["written"] == 18 and report["rejected"] == 0
    return out


@pytest.fixture(scope="session")
def loader_records(tmp_path_factory):
    """A 4-class dataset of 90 small JPEGs for the Loader tests (90 = not a
    multiple of 4 ranks x batch 8: padding and partial batches show)."""
    folder = tmp_path_factory.mktemp("lfolder") / "train"
    k = 0
    for c in range(4):
        for i in range(90 // 4 + (1 if c < 90 % 4 else 0)):
            write_jpeg(folder / f"class{c}" / f"{i:03d}.jpg", 96 + (k % 5) * 16, 80 + (k % 3) * 24, k)
            k += 1
    out = tmp_path_factory.mktemp("lrecords")
    report = unirecord.convert_imagefolder(folder, out, num_shards=3, sync=False, threads=2)
    assert report["written"] == 90
    return out
