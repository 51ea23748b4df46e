"""The exit-code table of docs/cli.md, one test per row, and the inputs that
used to abort urec (a directory, /dev/zero, a FIFO, huge thread counts and
output sizes, ids that wrap around)."""
import os
import resource
import subprocess
import threading

import pytest

from conftest import run_urec


def jpeg_bytes(width, height, seed=0):
    import numpy as np
    from PIL import Image
    import io

    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=90)
    return out.getvalue()


def claim_size(jpeg, width, height):
    """The JPEG with its frame header (SOF0/1/2) claiming another size."""
    data = bytearray(jpeg)
    for i in range(2, len(data) - 9):
        if data[i] == 0xFF and data[i + 1] in (0xC0, 0xC1, 0xC2):
            data[i + 5:i + 9] = bytes([height >> 8, height & 0xFF, width >> 8, width & 0xFF])
            return bytes(data)
    raise AssertionError("no SOF marker")


@pytest.fixture(scope="module")
def small_dataset(urec, tmp_path_factory):
    src = tmp_path_factory.mktemp("exit") / "src"
    for c in range(2):
        for i in range(3):
            (src / f"c{c}").mkdir(parents=True, exist_ok=True)
            (src / f"c{c}" / f"{i}.jpg").write_bytes(jpeg_bytes(48, 32, seed=c * 3 + i))
    out = src.parent / "out"
    urec("convert", "imagefolder", src, out, "--name", "d")
    return src, out


def one_error_line(result, code):
    assert result.returncode == code, (result.returncode, result.stderr)
    assert result.stderr.startswith("urec") and ": error: " in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr  # one line, no stack trace
    return result.stderr


# --- row 0: success ----------------------------------------------------------------

@pytest.mark.parametrize("args", [["--help"], ["--version"], ["cat", "--help"], ["inspect", "OUT"]])
def test_success_exits_0(urec, small_dataset, args):
    _, out = small_dataset
    result = urec(*[out if a == "OUT" else a for a in args], check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout and not result.stderr


# --- row 1: failure (missing, damaged, unsupported input; I/O) ------------------------

def test_failures_exit_1(urec, small_dataset, tmp_path):
    _, out = small_dataset
    one_error_line(urec("inspect", tmp_path / "missing", check=False), 1)
    one_error_line(urec("cat", out, 6, check=False), 1)  # 6 records: ids 0..5
    bad = tmp_path / "cut.jpg"
    bad.write_bytes(jpeg_bytes(64, 48)[:40])
    assert "JPEG header" in one_error_line(urec("decode", bad, "-o", "-", check=False), 1)
    big = tmp_path / "big.jpg"
    big.write_bytes(b"")
    os.truncate(big, (1 << 30) + 1)  # sparse
    assert "over the 1073741824-byte limit" in one_error_line(urec("decode", big, "-o", "-", check=False), 1)


# --- row 2: bad usage (the command line does not parse, or a value is refused) ---------

@pytest.mark.parametrize("args, words", [
    ([], "A subcommand is required"),
    (["frobnicate"], "unknown subcommand 'frobnicate' (one of: "),
    (["cat", "OUT", "abc"], "'abc' is not a whole number"),
    (["cat", "OUT", "-1"], "'-1' is out of range 0..18446744073709551615"),
    (["cat", "OUT", "18446744073709551616"], "'18446744073709551616' is out of range 0..18446744073709551615"),
    (["cat", "OUT"], "ID is required"),
    (["bench", "OUT", "--batch", "0"], "--batch: '0' is out of range 1..1048576"),
    (["bench", "OUT", "--batch", "-4"], "--batch: '-4' is out of range 1..1048576"),
    (["bench", "OUT", "--epochs", "-1"], "--epochs: '-1' is out of range"),
    (["sample", "--records", "10", "--num-shards", "0"], "--num-shards: '0' is out of range"),
    (["convert", "imagefolder", "SRC", "NEW", "--shards", "0"], "--shards: '0' is out of range 1..99999"),
    (["convert", "imagefolder", "SRC", "NEW", "--shards", "2", "--shard-size", "1M"], "excludes"),
    (["convert", "imagefolder", "SRC", "NEW", "--shard-size", "lots"], "is not a size"),
    (["convert", "imagefolder", "SRC", "NEW", "--threads", "100000"], "--threads: '100000' is out of range 0..1024"),
    (["convert", "imagefolder", "SRC", "NEW", "--shards", "7"],
     "num_shards 7 is more than the 6 image files found"),
    (["decode", "SRC", "-o", "-"], "not a regular file (a directory)"),
    (["decode", "/dev/zero", "-o", "-"], "/dev/zero: not a regular file (a character device)"),
    (["decode", "GIF", "-o", "-"], "not a JPEG or PNG: GIF image"),
    (["bench", "OUT", "--threads", "100000"], "--threads: '100000' is out of range 0..1024"),
    (["cat", "OUT", "0", "--field", "nope"], "no field named 'nope' (fields: image, label, path, "),
    (["query", "OUT", "label == 0", "--fields", "nope"], "no field named 'nope' (fields: image, label, path, "),
    (["query", "OUT", "label == 0", "--group-by", "nope"], "no field named 'nope' (fields: image, label, path, "),
])
def test_bad_usage_exits_2_with_a_readable_message(urec, small_dataset, tmp_path, args, words):
    src, out = small_dataset
    gif = tmp_path / "gif.jpg"
    gif.write_bytes(b"GIF89a" + bytes(100))
    names = {"SRC": src, "OUT": out, "NEW": tmp_path / "new", "GIF": gif}
    result = urec(*[names.get(a, a) for a in args], check=False)
    message = one_error_line(result, 2)
    assert words in message
    assert "e+308" not in message and "1.797" not in message
    assert not (tmp_path / "new").exists() or not any((tmp_path / "new").glob("*.urec"))


def test_a_fifo_is_refused_without_waiting_for_a_writer(urec, tmp_path):
    fifo = tmp_path / "in.jpg"
    os.mkfifo(fifo)
    timer = threading.Timer(20, lambda: open(fifo, "wb").close())  # unblocks a reader that hangs
    timer.start()
    try:
        result = urec("decode", fifo, "-o", "-", check=False)
    finally:
        timer.cancel()
    assert "not a regular file (a FIFO)" in one_error_line(result, 2)
    shard = tmp_path / "d-00000-of-00001.urec"  # a FIFO where a shard is expected
    os.mkfifo(shard)
    timer = threading.Timer(20, lambda: open(shard, "wb").close())
    timer.start()
    try:
        result = urec("inspect", shard, check=False)
    finally:
        timer.cancel()
    assert "not a regular file (a FIFO)" in one_error_line(result, 2)


@pytest.mark.parametrize("option, value", [("--resize", "60000x60000"), ("--center-crop", "65000,65000"),
                                           ("--resize", "65501x1")])
def test_output_sizes_over_the_pixel_limit_are_refused_before_allocating(urec, tmp_path, option, value):
    image = tmp_path / "a.jpg"
    image.write_bytes(jpeg_bytes(64, 48))
    def cap_memory():  # 1 GiB of address space: allocating the output first would abort
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    result = subprocess.run([os.environ["UREC"], "decode", image, option, value, "-o", tmp_path / "out.ppm"],
                            capture_output=True, text=True, preexec_fn=cap_memory)
    assert "is over the limit of" in one_error_line(result, 2)
    assert not (tmp_path / "out.ppm").exists()


def test_max_pixels_is_the_users_limit(urec, tmp_path):
    image = tmp_path / "a.jpg"
    image.write_bytes(jpeg_bytes(64, 48))
    result = urec("decode", image, "--resize", "70x70", "--max-pixels", "4000", "-o", "-", check=False)
    assert "output size 70x70 is over the limit of 4000 pixels" in one_error_line(result, 2)
    assert urec("decode", image, "--resize", "20x20", "--max-pixels", "4000", "-o", "-", text=False).returncode == 0
    result = urec("decode", image, "--max-pixels", "3071", "-o", "-", check=False)  # the image is 64x48
    assert "JPEG is 64x48, over the limit of 3071 pixels" in one_error_line(result, 2)


def test_convert_rejects_a_header_that_claims_more_than_the_file_holds(urec, tmp_path):
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    honest = jpeg_bytes(160, 120)
    (src / "a" / "honest.jpg").write_bytes(honest)
    bomb = claim_size(jpeg_bytes(320, 240, seed=1), 11584, 11584)  # 134 Mpx: inside the default pixel limit
    assert len(bomb) < 262088  # fewer bytes than one bit per 8x8 block
    (src / "a" / "bomb.jpg").write_bytes(bomb)
    result = urec("convert", "imagefolder", src, tmp_path / "out", "--name", "d")
    assert "1 written, 1 rejected" in result.stdout
    rows = dict(line.split("\t") for line in next((tmp_path / "out").glob("d.rejects.g*.tsv")).read_text().splitlines()[1:])
    assert rows == {"a/bomb.jpg": f"corrupt: JPEG header claims 11584x11584 pixels (2096704 blocks of 8x8), "
                                  f"more than a {len(bomb)}-byte file can code"}
    # A limit the user sets rejects the honest file too, with the limit as the reason
    # (every file rejected: a failure unless --allow-empty, issue 36).
    result = urec("convert", "imagefolder", src, tmp_path / "out2", "--name", "d", "--max-pixels", "10000",
                  "--allow-empty")
    assert "0 written, 2 rejected" in result.stdout
    rows = dict(line.split("\t") for line in next((tmp_path / "out2").glob("d.rejects.g*.tsv")).read_text().splitlines()[1:])
    assert rows["a/honest.jpg"] == "unsupported: JPEG is 160x120, over the limit of 10000 pixels"


def test_thread_counts_up_to_the_limit_still_work(urec, small_dataset, tmp_path):
    src, _ = small_dataset
    result = urec("convert", "imagefolder", src, tmp_path / "out", "--threads", 64)
    assert "6 written" in result.stdout


# Before: add-field and convert read such a FILE as an I/O error (exit 1).
@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
@pytest.mark.parametrize("command", ["add-field", "convert jsonl", "add-field --schema"])
def test_a_file_argument_that_is_no_regular_file_exits_2_naming_it(urec, small_dataset, tmp_path, kind, command):
    _, out = small_dataset
    schema = tmp_path / "s.json"
    schema.write_text('{"fields": [{"name": "v", "type": "float32"}]}')
    values = tmp_path / "v.jsonl"
    values.write_text('{"id": 0, "v": 1}\n')
    path = {"directory": tmp_path / "dir", "fifo": tmp_path / "fifo", "device": "/dev/zero"}[kind]
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    timer = threading.Timer(20, lambda: open(path, "wb").close()) if kind == "fifo" else None
    if timer:
        timer.start()  # unblocks a reader that hangs
    try:
        if command == "add-field":
            result = urec("add-field", out, path, "--schema", schema, check=False)
        elif command == "add-field --schema":
            result = urec("add-field", out, values, "--schema", path, check=False)
        else:
            result = urec("convert", "jsonl", path, tmp_path / "new", "--schema", schema, check=False)
    finally:
        if timer:
            timer.cancel()
    message = one_error_line(result, 2)
    assert f"{path}: not a regular file" in message, message
