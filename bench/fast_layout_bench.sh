#!/usr/bin/env bash
# The fast layout's measurements (issue 9) in one run, on the two ImageNet-like
# sets of image_bench (smooth: ~3 bits per pixel; entropy: ImageNet's ~4.9):
#   1. decode + resize per core: image_bench (C++, fast-layout cases included)
#      and image_peer.py (PIL + torchvision) on the same files;
#   2. the native loader (`urec bench`) against torchvision ImageFolder + PIL
#      in a DataLoader, 1 thread vs num_workers=0 and 2 threads vs 2 workers,
#      on each set copied 4 times into 8 class folders (1,024 files) and
#      converted (transcoded into the fast layout);
# Results go to $OUT (default out/fast-layout-bench). Check the load average
# first: a figure counts only from a quiet machine. PARTS=loader (or image)
# runs one part only; image_interleaved.py is the steadier figure for part 1.
#
#   bench/fast_layout_bench.sh [BUILD_DIR]     (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${OUT:-out/fast-layout-bench}
REPS=${REPS:-5}
PARTS=${PARTS:-image,loader}
mkdir -p "$OUT"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/load.txt"
cases='BM_(a_full_decode|b_full_decode_crop_resize|d_crop_dct_decode_resize|crop_decode_only|entropy_floor|val_center_crop_exact)(_fastlayout(_libjpeg_entropy)?)?(/baseline|/progressive)?$|BM_resize/ours|BM_(c_crop_decode_resize|val_center_window_decode|val_full_decode_resize_crop)$'
for set in smooth entropy; do
  [[ ,$PARTS, == *,image,* ]] || break
  dir=/tmp/unirecord-imagenet-$set
  UREC_IMAGE_BENCH_SET=$set UREC_IMAGE_BENCH_DIR=$dir "$BUILD/bench/image_bench" \
    --benchmark_filter="$cases" --benchmark_repetitions="$REPS" \
    --benchmark_report_aggregates_only=true --benchmark_min_time=0.5 \
    --benchmark_out="$OUT/image_bench_$set.json" --benchmark_out_format=json > /dev/null
  /usr/bin/python3 bench/image_peer.py --dir "$dir" --runs "$REPS" \
    --cpp-json "$OUT/image_bench_$set.json" | tee "$OUT/image_peer_$set.txt"
done
for set in smooth entropy; do
  [[ ,$PARTS, == *,loader,* ]] || break
  folder=$OUT/folder-$set
  if [ ! -d "$folder" ]; then
    for c in 0 1 2 3 4 5 6 7; do mkdir -p "$folder/class$c"; done
    i=0
    for copy in 0 1 2 3; do
      for f in /tmp/unirecord-imagenet-$set/*.jpg; do
        cp "$f" "$folder/class$((i % 8))/$copy-$(basename "$f")"
        i=$((i + 1))
      done
    done
  fi
  rm -rf "$OUT/records-$set"
  "$BUILD/tools/urec" convert imagefolder "$folder" "$OUT/records-$set" --name train | tee "$OUT/convert_$set.txt"
  /usr/bin/python3 bench/loader_peer.py --folder "$folder" --dataset "$OUT/records-$set/train" \
    --urec "$BUILD/tools/urec" --pairs 1:0,2:2 --skip compare,scaling,memory --rounds "${ROUNDS:-3}" \
    --epochs 3 --batch 256 --json "$OUT/loader_$set.json" 2>&1 | tee "$OUT/loader_$set.txt"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"
