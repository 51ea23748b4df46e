"""Marks every test that runs the loader's device path: a test parametrized
over `device` (cuda_check.DEVICES) gets the `device` marker, so
bench/run_gpu.sh selects the GPU tests with `-m device` and a renamed or new
device test cannot drop out of that run."""
import pytest

DEVICE_PARAMETER = "device"


def pytest_collection_modifyitems(items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and DEVICE_PARAMETER in callspec.params:
            item.add_marker(pytest.mark.device)
