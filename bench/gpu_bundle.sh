#!/usr/bin/env bash
# Packs the GPU test and benchmark programs of a CUDA build, with the shared
# libraries a bare CUDA machine may lack (libjpeg-turbo, zstd, xxhash, Google
# Benchmark), into ${BUNDLE:-build-gpu-bundle}/{bin,lib} for bench/run_gpu.sh
# on a machine that cannot build unirecord itself.
#   BUILD_DIR=build-loader bench/gpu_bundle.sh   # reuse a configured CUDA build
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-gpu}
BUNDLE=${BUNDLE:-build-gpu-bundle}
targets=(device_batches_test loader_test loader_bench urec)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${targets[@]}"
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
for t in "${targets[@]}"; do
  bin=$(find "$BUILD_DIR" -type f -name "$t" -perm -u+x | head -1)
  strip -o "$BUNDLE/bin/$t" "$bin"
done
# Everything the programs link but libc/libstdc++/CUDA, which the GPU machine has.
ldd "$BUNDLE"/bin/* | awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcudart)\.so' |
  while read -r lib; do cp -L "$lib" "$BUNDLE/lib/"; done
du -sh "$BUNDLE"
