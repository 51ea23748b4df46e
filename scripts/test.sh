#!/usr/bin/env bash
# Runs every test: installs missing packages, builds, runs the C++ suites
# (CTest), the memory-sensitive suites again under AddressSanitizer + UBSan
# (scripts/test-asan.sh: its SUITES list says which), the pytest suites (urec
# CLI against PIL/torchvision, the Python binding with torch DataLoader and
# torch.distributed), the example trainer built against an installed copy, and
# unirecord built as a parent project's subdirectory (library only). The
# README's test command; CI runs it. Prints the wall time of each stage.
set -euo pipefail
cd "$(dirname "$0")/.."
stage_times=()
stage() {  # stage NAME COMMAND...: runs it, timed
  local name=$1 start=$SECONDS
  shift
  echo "== test.sh: $name"
  "$@"
  stage_times+=("$(printf '%-16s %4d s' "$name" $((SECONDS - start)))")
  echo "== test.sh: $name took $((SECONDS - start)) s"
}
stage deps bash -c 'scripts/install-deps.sh && scripts/install-deps.sh --check'
stage build scripts/build.sh
stage ctest bash -c 'cd build && ctest --output-on-failure -j "$(nproc)"'
stage subproject scripts/check-subproject.sh build/check-subproject-full
stage asan scripts/test-asan.sh
stage python scripts/test-python.sh
stage example env BUILD_DIR=build scripts/test-example.sh
printf '== test.sh: stage times\n'
printf '  %s\n' "${stage_times[@]}"
echo "all tests passed in $SECONDS s"
