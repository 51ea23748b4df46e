#!/usr/bin/env bash
# Configures and builds unirecord into ${BUILD_DIR:-build}. Extra arguments go to cmake.
# BUILD_TARGETS (space-separated) builds only those targets and what they need
# (scripts/demo.sh: the library and urec); unset, everything: the tests,
# benchmarks and fuzz replays that scripts/test.sh runs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
