#!/usr/bin/env bash
# `urec convert imagefolder` against `cp -r` of the same folder, on the same
# disk, in the same run: medians of RUNS alternating runs, page cache warm
# for both (the source is read once before timing).
#
#   bench/convert_bench.sh [CLASSES] [PER_CLASS] [RUNS]    (default 100 50 5: ~5000 JPEGs, ~0.5 GB)
#
# Env: UREC (default build/tools/urec), WORK (default out/convert-bench, on the
# disk to measure), THREADS (default: one per core).
# Prints a markdown table (medians) and every run's times.
set -euo pipefail
cd "$(dirname "$0")/.."
CLASSES=${1:-100}
PER_CLASS=${2:-50}
RUNS=${3:-5}
UREC=${UREC:-build/tools/urec}
WORK=${WORK:-out/convert-bench}
THREADS=${THREADS:-0}

src="$WORK/src-${CLASSES}x${PER_CLASS}"
if [ ! -d "$src" ]; then
  "$UREC" synth-imagefolder "$src" --classes "$CLASSES" --per-class "$PER_CLASS"
fi
files=$(find "$src" -type f | wc -l)
bytes=$(du -sb "$src" | cut -f1)
cat "$src"/*/* > /dev/null  # warm the page cache for both contenders

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# Each timed command writes to a fresh folder (deleting 1000s of files right
# before, on a filesystem mounted with `discard`, slows the next file creations
# run after run) and starts with everything flushed. The order alternates.
rm -rf "$WORK/runs"
mkdir -p "$WORK/runs"
settle() { sync; sleep 2; }
time_cp() {
  settle
  local t0 t1 t2; t0=$(now); cp -r "$src" "$WORK/runs/copy-$1"; t1=$(now); sync; t2=$(now)
  cp_times+=("$(calc "$t1 - $t0")"); cp_sync_times+=("$(calc "$t2 - $t0")")
}
time_convert() {
  settle
  # urec fsyncs its output before it exits, so its time includes the flush.
  local t0 t1; t0=$(now)
  "$UREC" convert imagefolder "$src" "$WORK/runs/records-$1" --threads "$THREADS" > /dev/null
  t1=$(now)
  convert_times+=("$(calc "$t1 - $t0")")
}
cp_times=() cp_sync_times=() convert_times=()
for ((run = 1; run <= RUNS; run++)); do
  if ((run % 2)); then time_cp "$run"; time_convert "$run"; else time_convert "$run"; time_cp "$run"; fi
done
rm -rf "$WORK/runs"

cp_median=$(printf '%s\n' "${cp_times[@]}" | median)
cp_sync_median=$(printf '%s\n' "${cp_sync_times[@]}" | median)
convert_median=$(printf '%s\n' "${convert_times[@]}" | median)
echo "files: $files, bytes: $bytes, runs: $RUNS, threads: $THREADS ($(nproc) cores), work dir: $WORK"
echo "| command | median s | MB/s | vs cp -r |"
echo "| --- | --- | --- | --- |"
for row in "cp -r SRC:$cp_median" "cp -r SRC && sync:$cp_sync_median" "urec convert imagefolder:$convert_median"; do
  name=${row%:*}; t=${row##*:}
  printf '| %s | %.3f | %.0f | %.2fx |\n' "$name" "$t" "$(calc "$bytes / $t / 1000000")" \
    "$(calc "$t / $cp_median")"
done
echo "all runs (s): cp ${cp_times[*]}; cp+sync ${cp_sync_times[*]}; convert ${convert_times[*]}"
