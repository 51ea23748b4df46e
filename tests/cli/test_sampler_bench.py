"""`urec bench`: the native loader from the command line, on a small converted
folder; the JSON report has the keys tools read, and the options are
parsed by the library's tables (--on-bad-record as Python's on_bad_record)."""
import json

import pytest


@pytest.fixture(scope="module")
def dataset(urec, mixed_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "ds"
    urec("convert", "imagefolder", mixed_folder, out, "--name", "train")
    return out


def bench(urec, dataset, *args):
    return json.loads(urec("bench", dataset, "--batch", 8, "--size", 32, "--json", *args).stdout)


def test_json_report(urec, dataset):
    report = bench(urec, dataset, "--epochs", 2, "--threads", 2)
    for key in ("images_per_s", "batches", "threads", "samples", "stages", "epochs", "wait_share"):
        assert key in report
    assert report["threads"] == 2
    assert set(report["stages"]) == {"read_s", "decode_s", "upload_s", "wait_s", "frames_decoded"}
    assert report["stages"]["frames_decoded"] == 0  # images, no video clips
    # 26 records (24 + the CMYK JPEG + the PNG named .JPEG; the broken files are rejected at convert) per epoch.
    assert report["samples"] == 2 * 26
    assert report["batches"] == 2 * 4
    assert [e["epoch"] for e in report["epochs"]] == [0, 1]
    assert [e["images"] for e in report["epochs"]] == [26, 26]
    assert all(e["cpu_s"] > 0 for e in report["epochs"])  # a time: no exact value to expect
    assert report["images_per_s"] == pytest.approx(report["samples"] / report["wall_s"], rel=1e-9)
    # The wall is the setup plus the epochs' walls (each epoch's rate is its images over its wall).
    epochs_wall = sum(e["images"] / e["images_per_s"] for e in report["epochs"])
    assert report["setup_s"] >= 0
    assert report["setup_s"] + epochs_wall == pytest.approx(report["wall_s"], rel=1e-6)


def test_val_transform_sequential_and_max_batches(urec, dataset):
    report = bench(urec, dataset, "--transform", "val", "--order", "sequential", "--max-batches", 1)
    assert report["batches"] == 1 and report["samples"] == 8


def test_layout_defaults_to_the_python_loaders(urec, dataset):
    # NCHW, as unirecord.Loader hands batches to torch (the resizer writes it).
    default = bench(urec, dataset, "--max-batches", 1)
    assert default["layout"] == "NCHW"
    nhwc = bench(urec, dataset, "--max-batches", 1, "--layout", "NHWC")
    assert nhwc["layout"] == "NHWC"


def test_text_report_names_the_stages(urec, dataset):
    out = urec("bench", dataset, "--batch", 8, "--size", 32).stdout
    for word in ("images/s", "read", "decode+resize", "consumer wait", "skipped"):
        assert word in out


def test_bad_options_are_usage_errors(urec, dataset):
    for args in (["--transform", "crop"], ["--device", "tpu"], ["--order", "random"], ["--layout", "CHW"],
                 ["--on-bad-record", "ignore"]):
        result = urec("bench", dataset, *args, check=False)
        assert result.returncode == 2, args
    refused = urec("bench", dataset, "--on-bad-record", "ignore", check=False)
    assert "'ignore'" in refused.stderr and "raise" in refused.stderr and "skip" in refused.stderr


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_device_path_on_the_host_device(urec, dataset, dtype):
    """`--device emulated` runs urec bench's device path (upload, conversion,
    Synchronize per batch, release) on the host device, as `--device cuda`
    would on a GPU: the same samples, and the consumer's time outside Next()
    reported per part."""
    report = bench(urec, dataset, "--epochs", 2, "--threads", 2, "--device", "emulated", "--dtype", dtype)
    cpu = bench(urec, dataset, "--epochs", 2, "--threads", 2)
    assert report["device"] == "emulated"
    assert report["samples"] == cpu["samples"] == 2 * 26 and report["batches"] == cpu["batches"]
    assert set(report["consumer"]) == {"sync_s", "release_s"}
    assert report["stages"]["upload_s"] > 0 and cpu["stages"]["upload_s"] == 0
    assert cpu["consumer"]["sync_s"] == 0  # no device: nothing to wait for
