#!/usr/bin/env bash
# Configures and builds unirecord into ${BUILD_DIR:-build}. Extra arguments go to cmake.
# BUILD_TARGETS (space-separated) builds only those targets and what they need
# (scripts/demo.sh: the library and urec); unset, everything: the tests,
# benchmarks, fuzz replays and the Python module (BUILD/python, for
# scripts/test-python.sh) that scripts/test.sh runs.
# Ninja and ccache are used where installed (scripts/install-deps.sh installs
# both): targets build in parallel and a rebuild of unchanged sources is a copy.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-env.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} \
  -DUNIRECORD_BUILD_PYTHON=ON -DPython_EXECUTABLE=/usr/bin/python3 "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
