#!/usr/bin/env bash
# Runs every test: installs missing packages, builds, runs the C++ suites
# (CTest), the image-layer, sampler and loader suites again under
# AddressSanitizer, the pytest suites (urec CLI against PIL/torchvision, the
# Python binding with torch DataLoader and torch.distributed), and the example
# trainer built against an installed copy. The README's test command; CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
scripts/test-asan.sh
scripts/test-python.sh
BUILD_DIR=build scripts/test-example.sh
echo "all tests passed"
