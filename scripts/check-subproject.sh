#!/usr/bin/env bash
# Proves that unirecord inside another CMake project (add_subdirectory, as
# FetchContent does) builds the library alone: a tiny parent project adds it
# with GoogleTest and Google Benchmark made unfindable
# (CMAKE_DISABLE_FIND_PACKAGE_*), so a configure that asked for them fails;
# no test, tool or benchmark target may exist; and a program linking
# unirecord::unirecord must build and read the golden dataset (skipped with
# --configure-only, as CTest check_subproject runs it; scripts/test.sh runs
# the whole check).
# Usage: check-subproject.sh [--configure-only] WORK_DIR   (emptied first)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIGURE_ONLY=0
if [ "${1:-}" = --configure-only ]; then CONFIGURE_ONLY=1; shift; fi
WORK=${1:?usage: check-subproject.sh [--configure-only] WORK_DIR}
rm -rf "$WORK"
mkdir -p "$WORK/parent"
cat > "$WORK/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(parent LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
add_subdirectory("$ROOT" unirecord)
add_executable(parent_app main.cc)
target_link_libraries(parent_app PRIVATE unirecord::unirecord)
CMAKE
cat > "$WORK/parent/main.cc" <<'CC'
#include <cstdio>

#include "unirecord/dataset.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto dataset = unirecord::Dataset::Open(argv[1]);
  if (!dataset.ok()) {
    std::fprintf(stderr, "%s\n", dataset.status().ToString().c_str());
    return 1;
  }
  std::printf("%llu records\n", static_cast<unsigned long long>((*dataset)->size()));
  return 0;
}
CC
# Makefiles whatever CMAKE_GENERATOR says: the target list below is read from
# their `help` output.
cmake -G "Unix Makefiles" -S "$WORK/parent" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DUNIRECORD_ENABLE_CUDA=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON >"$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; echo "check-subproject: configuring a parent project failed" >&2; exit 1; }
targets=$(cmake --build "$WORK/build" --target help)
for absent in urec golden_test loader_test format_bench loader_bench gtest benchmark; do
  if grep -qE "^\.\.\. $absent( |$)" <<<"$targets"; then
    echo "check-subproject: target '$absent' exists in a library-only subproject build" >&2
    exit 1
  fi
done
grep -qE '^\.\.\. unirecord( |$)' <<<"$targets" || { echo "check-subproject: no unirecord target" >&2; exit 1; }
if ((CONFIGURE_ONLY)); then
  echo "check-subproject: configure ok (the library alone; no GoogleTest, Google Benchmark or test targets)"
  exit 0
fi
cmake --build "$WORK/build" --target parent_app -j "$(nproc)" >"$WORK/build.log" 2>&1 ||
  { tail -50 "$WORK/build.log"; echo "check-subproject: building the parent project failed" >&2; exit 1; }
out=$("$WORK/build/parent_app" "$ROOT/tests/data/golden/v1")
[ "$out" = "6 records" ] || { echo "check-subproject: parent_app printed '$out'" >&2; exit 1; }
echo "check-subproject: ok (library alone inside a parent project; no GoogleTest, Google Benchmark or test targets)"
