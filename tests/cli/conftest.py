"""Fixtures for the urec CLI tests: the binary, and small synthetic image folders."""
import os
import subprocess

import pytest

UREC = os.environ.get("UREC", "")
# Without a urec binary every test here fails (CI must not go green on a
# suite that did not run); UREC_MAY_SKIP=1 makes them skip instead, for a
# checkout where urec is deliberately not built.
MAY_SKIP_ENV = "UREC_MAY_SKIP"


def missing_urec():
    """Why UREC does not name a urec binary, or None when it does."""
    if not UREC:
        return "UREC is not set"
    if not os.path.isfile(UREC) or not os.access(UREC, os.X_OK):
        return f"UREC={UREC} is not an executable file"
    return None


def require_urec():
    """Fails the calling test without a urec binary, or skips it when UREC_MAY_SKIP=1."""
    why = missing_urec()
    if why is None:
        return
    if os.environ.get(MAY_SKIP_ENV) == "1":
        pytest.skip(f"{why} ({MAY_SKIP_ENV}=1)")
    pytest.fail(f"{why}: the urec CLI suite needs the built binary (scripts/test-python.sh sets UREC; "
                f"{MAY_SKIP_ENV}=1 skips the suite instead)", pytrace=False)


def run_urec(*args, check=True, text=True):
    """Runs urec; returns the CompletedProcess (stdout/stderr captured)."""
    result = subprocess.run([UREC, *map(str, args)], capture_output=True, text=text)
    if check and result.returncode != 0:
        raise AssertionError(f"urec {' '.join(map(str, args))} exited {result.returncode}: {result.stderr}")
    return result


@pytest.fixture(autouse=True)
def _urec_is_built():
    """Every test of the suite, also those that run UREC themselves."""
    require_urec()


@pytest.fixture(scope="session")
def urec():
    require_urec()
    return run_urec


@pytest.fixture(scope="session")
def mixed_folder(urec, tmp_path_factory):
    """4 classes x 6 JPEGs, plus a CMYK JPEG, a PNG named .JPEG, a truncated
    and an empty .JPEG, and a README.txt (`synth-imagefolder --mix`)."""
    src = tmp_path_factory.mktemp("synth") / "train"
    urec("synth-imagefolder", src, "--classes", 4, "--per-class", 6, "--width", 160, "--height", 120, "--mix")
    return src
