#!/usr/bin/env bash
# Runs the pytest suites: tests/cli (the urec tool against PIL/torchvision as
# references) and python/tests (the binding, when it is built), two processes
# at a time (pytest-xdist) where installed. Uses a venv over Debian's python3
# so that Debian's torch, PIL and numpy are visible.
# Every skip must be one tests/allowed_skips.txt allows (tests/skip_policy.py):
# a suite that stopped running fails the run. The GPU tests that
# bench/run_gpu.sh selects (-m device) must be collected here too.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
export UREC="${UREC:-$PWD/${BUILD_DIR:-build}/tools/urec}"
suites=(tests/cli)
if [ -f python/pyproject.toml ] || [ -f python/setup.py ]; then
  # The wheel takes the module that scripts/build.sh linked to the library
  # (BUILD/python) instead of compiling the library a second time.
  core=$(ls "${BUILD_DIR:-build}"/python/unirecord/_core*.so 2>/dev/null | head -n 1)
  UNIRECORD_PREBUILT_CORE=${core:+$PWD/$core} \
    "$VENV/bin/python" -m pip install -q --no-build-isolation --no-index ./python
  suites+=(python/tests)
  device_tests=$("$VENV/bin/python" -m pytest -q --collect-only -p no:cacheprovider -c python/pyproject.toml \
    --rootdir python -m device $(grep -l "cuda_check.DEVICES" python/tests/test_*.py) | grep -c '::' || true)
  if [ "$device_tests" -eq 0 ]; then
    echo "test-python: no test carries the device marker: bench/run_gpu.sh would run none" >&2
    exit 1
  fi
  echo "test-python: $device_tests device tests (bench/run_gpu.sh runs them with -m device)"
fi
parallel=()
if "$VENV/bin/python" -c 'import xdist' 2>/dev/null; then
  parallel=(-n "${PYTEST_WORKERS:-$(nproc)}")
fi
PYTHONPATH=$PWD/tests${PYTHONPATH:+:$PYTHONPATH} UNIRECORD_STRICT_SKIPS=1 \
  "$VENV/bin/python" -m pytest -q -rs -p skip_policy --rootdir "$PWD" "${parallel[@]}" "${suites[@]}"
