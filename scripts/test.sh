#!/usr/bin/env bash
# Runs every test: installs missing packages, builds, runs the C++ suites
# (CTest), the same image-layer suites under AddressSanitizer, and the Python
# suites (pytest). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
if [ -x scripts/test-asan.sh ]; then scripts/test-asan.sh; fi
if [ -x scripts/test-python.sh ]; then scripts/test-python.sh; fi
echo "all tests passed"
