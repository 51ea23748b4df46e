"""Fixtures for the urec CLI tests: the binary, and small synthetic image folders."""
import os
import subprocess

import pytest

UREC = os.environ.get("UREC", "")


def run_urec(*args, check=True, text=True):
    """Runs urec; returns the CompletedProcess (stdout/stderr captured)."""
    result = subprocess.run([UREC, *map(str, args)], capture_output=True, text=text)
    if check and result.returncode != 0:
        raise AssertionError(f"urec {' '.join(map(str, args))} exited {result.returncode}: {result.stderr}")
    return result


@pytest.fixture(scope="session")
def urec():
    if not UREC or not os.path.exists(UREC):
        pytest.skip("UREC does not name a built urec binary")
    return run_urec


@pytest.fixture(scope="session")
def mixed_folder(urec, tmp_path_factory):
    """4 classes x 6 JPEGs, plus a CMYK JPEG, a PNG named .JPEG, a truncated
    and an empty .JPEG, and a README.txt (`synth-imagefolder --mix`)."""
    src = tmp_path_factory.mktemp("synth") / "train"
    urec("synth-imagefolder", src, "--classes", 4, "--per-class", 6, "--width", 160, "--height", 120, "--mix")
    return src
