#!/usr/bin/env bash
# GPU tests and GPU benchmark rows of the Loader (bench/README.md, "Loader").
# Builds the programs with CMake, or takes them from a bundle made by
# bench/gpu_bundle.sh when one is present (for machines without the build
# dependencies). Writes every result to $OUT (default bench/results/gpu).
#   bench/run_gpu.sh                          # build here, then run
#   BUNDLE=build-gpu-bundle bench/run_gpu.sh  # run prebuilt programs
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench/results/gpu}
BUNDLE=${BUNDLE:-build-gpu-bundle}
WORK=${WORK:-/tmp/unirecord-gpu-bench}
mkdir -p "$OUT" "$WORK"

if [ -x "$BUNDLE/bin/urec" ]; then
  BIN=$ROOT/$BUNDLE/bin
  export LD_LIBRARY_PATH=$ROOT/$BUNDLE/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
else
  BUILD_DIR=${BUILD_DIR:-build-gpu}
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-80;90}" >/dev/null || exit 1
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target device_batches_test loader_test loader_bench urec || exit 1
  BIN=$WORK/bin
  mkdir -p "$BIN"
  for t in device_batches_test loader_test loader_bench urec; do
    ln -sf "$ROOT/$(find "$BUILD_DIR" -type f -name "$t" -perm -u+x | head -1)" "$BIN/$t"
  done
fi

status=0
run() {  # run NAME COMMAND...: output to $OUT/NAME.txt and the terminal
  local name=$1; shift
  echo "== $name: $*"
  "$@" 2>&1 | tee "$OUT/$name.txt"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "== $name failed (exit $rc)"; status=1; }
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
nproc > "$OUT/cores.txt"
run device_batches_test "$BIN/device_batches_test" --gtest_output=json:"$OUT/device_batches_test.json"
run loader_test "$BIN/loader_test"

# An ImageNet-like dataset: 32 classes x 256 JPEGs around 500x375.
if [ ! -d "$WORK/dataset" ]; then
  rm -rf "$WORK/folder"
  "$BIN/urec" synth-imagefolder "$WORK/folder" --classes 32 --per-class 256 >/dev/null || status=1
  "$BIN/urec" convert imagefolder "$WORK/folder" "$WORK/dataset" --name train >/dev/null || status=1
fi
export UREC_LOADER_BENCH_DATASET=$WORK/dataset
run loader_bench "$BIN/loader_bench" --benchmark_out="$OUT/loader_bench.json" --benchmark_out_format=json \
  --benchmark_filter="${BENCH_FILTER:-BM_GpuTransfers|BM_LoaderCuda|BM_LoaderCpu/threads:(1|2|4|8|16)/}"
# urec bench rows, one JSON object each, in one file.
{
  for device in cpu cuda; do
    "$BIN/urec" bench "$WORK/dataset" --device "$device" --epochs 3 --json || status=1
  done
  "$BIN/urec" bench "$WORK/dataset" --device cuda --epochs 2 --step-ms 100 --json || status=1
} > "$OUT/urec_bench.txt"
exit $status
