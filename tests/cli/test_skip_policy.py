"""tests/skip_policy.py: which skips the allow list lets through, and that a
run with a skip it does not allow fails (in a pytest run of its own)."""
import os
import pathlib
import subprocess
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import skip_policy  # noqa: E402


def test_the_allow_list_parses_and_matches_node_and_reason():
    allowed = skip_policy.load_allowed()
    assert allowed
    assert skip_policy.is_allowed("python/tests/test_loader.py::test_device_loader[cuda]",
                                  "no CUDA device, or unirecord built without CUDA", allowed)
    # The CUDA case of a test parametrized over something else too.
    assert skip_policy.is_allowed("python/tests/test_video_clips.py::test_device_batches[2-cuda]",
                                  "no CUDA device, or unirecord built without CUDA", allowed)
    assert not skip_policy.is_allowed("python/tests/test_video_clips.py::test_device_batches[2-emulated]",
                                      "no CUDA device, or unirecord built without CUDA", allowed)
    # The same reason on the host device's case, or another reason on the CUDA case, is not allowed.
    assert not skip_policy.is_allowed("python/tests/test_loader.py::test_device_loader[emulated]",
                                      "no CUDA device, or unirecord built without CUDA", allowed)
    assert not skip_policy.is_allowed("python/tests/test_loader.py::test_device_loader[cuda]",
                                      "could not import 'torch'", allowed)
    assert not skip_policy.is_allowed("tests/cli/test_convert_crash.py::test_x[append-fsync]",
                                      "strace is missing or cannot trace here", allowed)


def test_a_malformed_line_is_an_error_naming_it(tmp_path):
    bad = tmp_path / "allowed.txt"
    bad.write_text("# fine\npython/tests/* | reason without why\n")
    with pytest.raises(pytest.UsageError, match=r"allowed.txt:2: expected 'node glob \| reason regex \| why'"):
        skip_policy.load_allowed(bad)


@pytest.mark.parametrize("strict,exit_code", [("1", 1), ("0", 0)])
def test_an_unexpected_skip_fails_the_run(tmp_path, strict, exit_code):
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n"
        "def test_skipped():\n    pytest.skip('a package is missing')\n"
        "def test_passes():\n    pass\n")
    env = dict(os.environ, UNIRECORD_STRICT_SKIPS=strict, PYTHONPATH=str(TESTS))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "skip_policy", "-p", "no:cacheprovider",
                             str(tmp_path / "test_skips.py")], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == exit_code, result.stdout + result.stderr
    assert ("skips not allowed on CI" in result.stdout) == (strict == "1")
