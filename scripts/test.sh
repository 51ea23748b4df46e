#!/usr/bin/env bash
# Runs every test: installs missing packages, builds, runs the C++ suites
# (CTest), the memory-sensitive suites again under AddressSanitizer + UBSan
# (scripts/test-asan.sh: its SUITES list says which), the pytest suites (urec
# CLI against PIL/torchvision, the Python binding with torch DataLoader and
# torch.distributed), the example trainer built against an installed copy, and
# unirecord built as a parent project's subdirectory (library only). The README's test command; CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-deps.sh --check
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
scripts/check-subproject.sh build/check-subproject-full
scripts/test-asan.sh
scripts/test-python.sh
BUILD_DIR=build scripts/test-example.sh
echo "all tests passed"
