#!/usr/bin/env bash
# The one command for a machine with a GPU (docs/DEVELOPING.md, "On a GPU
# machine"): every GPU test, C++ and Python, then the GPU benchmark rows.
#   bench/run_gpu.sh                          # bundle (bench/gpu_bundle.sh) here if none, then run
#   BUNDLE=build-gpu-bundle bench/run_gpu.sh  # run a bundle made on a build machine
# The machine needs the NVIDIA driver, a C++ compiler, Python 3 with torch,
# pybind11 and pytest (today's GPU hosts: Python 3.12, torch 2.11 + CUDA 13);
# not unirecord's build dependencies: the bundle brings the programs, the
# static library and the shared libraries, and the Python binding is compiled
# here against this machine's Python. Test data comes from the working tree
# (tests/data) by relative path.
# Tests run with UNIRECORD_REQUIRE_GPU=1: a test that would skip without a
# device fails instead. The test part ends with one line "N passed, M failed";
# the exit status is non-zero on any failure. BENCH=0 skips the benchmarks.
# Every output goes to $OUT (default bench/results/gpu).
# A dry run of this script on a machine without a GPU (CI-like; the CUDA
# checks then run on the host device): REQUIRE_GPU=0 DEVICE=emulated BENCH=0.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench/results/gpu}
BUNDLE=${BUNDLE:-build-gpu-bundle}
WORK=${WORK:-/tmp/unirecord-gpu}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT" "$WORK"
[ -x "$BUNDLE/bin/urec" ] || bench/gpu_bundle.sh || exit 1
BUNDLE=$(cd "$BUNDLE" && pwd)
BIN=$BUNDLE/bin
CUDA_LIB=${CUDA_LIB:-/usr/local/cuda/lib64}
export LD_LIBRARY_PATH=$BUNDLE/lib:$CUDA_LIB:${LD_LIBRARY_PATH:-}
DEVICE=${DEVICE:-cuda}
export UNIRECORD_REQUIRE_GPU=${REQUIRE_GPU:-1} UNIRECORD_TEST_DATA_DIR=$ROOT/tests/data UREC=$BIN/urec
export PYTHONUNBUFFERED=1

passed=0
failed=0
failures=()
check() {  # check NAME COMMAND...: one test step, its output in $OUT/NAME.txt
  local name=$1; shift
  "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); echo "== $name: passed"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "== $name: FAILED (exit $rc)"; tail -n 25 "$OUT/$name.txt"
  fi
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; "$PYTHON" --version
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# The C++ tests of the bundle.
for t in $(cat "$BUNDLE/programs.txt"); do
  case $t in *_test) check "$t" "$BIN/$t" --gtest_brief=1 ;; esac
done

# The Python binding for this machine's Python, against the bundle.
build_python() {
  local py=$WORK/py
  rm -rf "$py" && mkdir -p "$py" && cp -r python/unirecord "$py/" || return 1
  local suffix includes
  suffix=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') || return 1
  # pip's pybind11 says where its headers are; Debian's pybind11-dev has them in /usr/include.
  includes=$("$PYTHON" -m pybind11 --includes 2>/dev/null) ||
    includes="-I$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" || return 1
  # shellcheck disable=SC2086  # the include flags are words
  ${CXX:-c++} -O2 -std=c++17 -shared -fPIC -fvisibility=hidden $includes -I"$BUNDLE/include" -Ipython/src \
    python/src/*.cc -o "$py/unirecord/_core$suffix" "$BUNDLE/lib/libunirecord.a" "$BUNDLE"/lib/*.so* \
    -L"$CUDA_LIB" -lcudart -lpthread -Wl,-rpath,"$BUNDLE/lib:$CUDA_LIB"
}
check python_binding build_python
export PYTHONPATH=$WORK/py:$ROOT/python/tests
records=$WORK/records90
if [ ! -d "$records" ]; then
  "$BIN/urec" synth-imagefolder "$WORK/folder90" --classes 4 --per-class 23 >/dev/null &&
    "$BIN/urec" convert imagefolder "$WORK/folder90" "$records" --name train >/dev/null
fi
check cuda_check "$PYTHON" python/tests/cuda_check.py "$records" "$DEVICE"
# The device tests are those parametrized over cuda_check.DEVICES, which carry
# the marker `device`; an empty selection is a failure (pytest exits 5). The over-HTTP
# one serves the dataset with nginx; a GPU host without it runs the others and
# says so (CI runs that test on the host device).
device_filter=()
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  device_filter=(-k "not over_http")
  echo "== no nginx here: test_device_loader_over_http left out"
fi
check python_device_tests "$PYTHON" -m pytest -q -p no:cacheprovider -c python/pyproject.toml --rootdir python \
  $(grep -l "cuda_check.DEVICES" python/tests/test_*.py) -m device "${device_filter[@]}"
echo "$passed passed, $failed failed${failures[*]:+ (${failures[*]})}" | tee "$OUT/summary.txt"
status=$((failed > 0))
[ "${BENCH:-1}" = 0 ] && exit $status

# Benchmarks (bench/README.md, "Loader"). An ImageNet-like dataset: 32 classes
# x 160 JPEGs around 500x375, as in the H100 measurements of 4ce68bf.
bench=$WORK/bench
if [ ! -d "$bench/records" ]; then
  "$BIN/urec" synth-imagefolder "$bench/train" --classes 32 --per-class 160 >/dev/null &&
    "$BIN/urec" convert imagefolder "$bench/train" "$bench/records" --name train >/dev/null || exit 1
fi
threads=${THREADS:-$(nproc)}
row() {  # row NAME COMMAND...: one benchmark, its output in $OUT/NAME.txt and here
  local name=$1; shift
  echo "== $name: $*"
  "$@" 2>&1 | tee "$OUT/$name.txt" | tail -n 12
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "== $name failed"; status=1; }
}
# urec bench on the device against urec bench on the CPU and the Python
# Loader on the device, interleaved rounds (goals: >= 0.95x each).
row device_vs_cpu "$PYTHON" bench/loader_vs_urec_bench.py --urec "$BIN/urec" --work "$bench" --device cuda \
  --cpu-baseline --threads "$threads" --rounds "${ROUNDS:-3}" --epochs 4 --json "$OUT/device_vs_cpu.json"
# Where the consumer's time goes on the device (sync_s, release_s), and the
# host layouts the two paths decode into.
for args in "--device cuda" "--device cuda --dtype uint8 --layout NHWC" "--device cpu --layout NHWC" "--device cpu"; do
  # shellcheck disable=SC2086
  "$BIN/urec" bench "$bench/records" --threads "$threads" --epochs 4 --json $args
done > "$OUT/urec_bench_rows.txt" 2>&1 || status=1
cat "$OUT/urec_bench_rows.txt"
# A 100 ms simulated step: the step allows 2,560 images/s at batch 256 (goal >= 95 %).
row step_100ms "$BIN/urec" bench "$bench/records" --device cuda --threads "$threads" --epochs 2 --step-ms 100
export UREC_LOADER_BENCH_DATASET=$bench/records
row loader_bench "$BIN/loader_bench" --benchmark_out="$OUT/loader_bench.json" --benchmark_out_format=json \
  --benchmark_filter="${BENCH_FILTER:-BM_GpuTransfers|BM_LoaderCuda/threads:$threads/|BM_LoaderCpu/threads:$threads/}"
exit $status
