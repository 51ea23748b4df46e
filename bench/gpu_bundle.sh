#!/usr/bin/env bash
# Packs what bench/run_gpu.sh runs on a GPU machine that cannot build
# unirecord (no libjpeg-turbo/zstd headers, no package registry, another
# Python and torch): the GPU test programs, loader_bench and urec of a CUDA
# build, the static library and public headers (run_gpu.sh compiles the
# Python binding there against that machine's Python), and the shared
# libraries a bare machine may lack, into ${BUNDLE:-build-gpu-bundle}/{bin,lib,include}.
# The test data is not copied: it travels with the working tree (tests/data,
# found through UNIRECORD_TEST_DATA_DIR).
#   BUILD_DIR=build-loader bench/gpu_bundle.sh   # reuse a configured CUDA build
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-gpu}
BUNDLE=${BUNDLE:-build-gpu-bundle}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-80;90}" >/dev/null
fi
grep -q '^UNIRECORD_ENABLE_CUDA:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" || { echo "gpu_bundle: $BUILD_DIR is not a CUDA build" >&2; exit 1; }
# The programs: every test labelled gpu (CMake lists them when it configures;
# run_gpu.sh runs the tests among them), the loader benchmark and urec.
mapfile -t gpu_tests < <(grep . "$BUILD_DIR/gpu_test_programs.txt")
((${#gpu_tests[@]})) || { echo "gpu_bundle: $BUILD_DIR/gpu_test_programs.txt lists no test" >&2; exit 1; }
programs=("${gpu_tests[@]}" loader_bench urec)
cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${programs[@]}" unirecord
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib" "$BUNDLE/include"
for t in "${programs[@]}"; do
  bin=$(find "$BUILD_DIR" -type f -name "$t" -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "gpu_bundle: $t was not built" >&2; exit 1; }
  strip -o "$BUNDLE/bin/$t" "$bin"
done
strip --strip-debug -o "$BUNDLE/lib/libunirecord.a" "$BUILD_DIR/libunirecord.a"
cp -r include/unirecord "$BUNDLE/include/"
# Everything the programs link but libc/libstdc++/CUDA, which the GPU machine has.
ldd "$BUNDLE"/bin/* | awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcudart)\.so' |
  while read -r lib; do cp -L "$lib" "$BUNDLE/lib/"; done
printf '%s\n' "${programs[@]}" > "$BUNDLE/programs.txt"
du -sh "$BUNDLE"
