#!/usr/bin/env bash
# Runs the pytest suites: tests/cli (the urec tool against PIL/torchvision as
# references) and python/tests (the binding, when it is built). Uses a venv
# over Debian's python3 so that Debian's torch, PIL and numpy are visible.
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
fi
"$VENV/bin/python" -m pytest -q "${suites[@]}"
