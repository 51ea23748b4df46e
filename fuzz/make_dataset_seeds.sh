#!/usr/bin/env bash
# Rebuilds fuzz/corpus/dataset/ from the golden files in tests/data/golden/:
# one seed per one-shard file pair, in fuzz_dataset's input layout
#   [flags:1][shard length N: uint32 LE][N shard bytes][index bytes]
# flags bit 0 = verify_checksums, bit 1 = verify_index_at_open.
set -euo pipefail
cd "$(dirname "$0")/.."
golden=tests/data/golden
out=fuzz/corpus/dataset
mkdir -p "$out"
seed() {  # seed NAME FLAGS SHARD INDEX
  python3 - "$out/$1" "$2" "$3" "$4" <<'PY'
import os, struct, sys
path, flags, shard, index = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = open(shard, 'rb').read()
i = open(index, 'rb').read() if os.path.exists(index) else b''
open(path, 'wb').write(bytes([flags]) + struct.pack('<I', len(s)) + s + i)
PY
}
for n in 0 1; do
  base=$golden/v1/golden-0000$n-of-00002
  seed v1-shard$n-verify 1 "$base.urec" "$base.uidx"
  seed v1-shard$n-verify-index 3 "$base.urec" "$base.uidx"
  seed v1-shard$n-noverify 0 "$base.urec" "$base.uidx"
done
# Format 1.1: variable-shape arrays and the new element types.
seed v1_1-arrays-verify 1 "$golden/v1_1/arrays-00000-of-00001.urec" "$golden/v1_1/arrays-00000-of-00001.uidx"
seed v1_1-arrays-noverify 0 "$golden/v1_1/arrays-00000-of-00001.urec" "$golden/v1_1/arrays-00000-of-00001.uidx"
for dir in "$golden"/v1_1-bad/*/; do
  case=$(basename "$dir")
  seed "v1_1-bad-$case" 1 "$dir/bad-00000-of-00001.urec" "$dir/bad-00000-of-00001.uidx"
done
for dir in "$golden"/bad/*/; do
  case=$(basename "$dir")
  seed "bad-$case" 1 "$dir/bad-00000-of-00001.urec" "$dir/bad-00000-of-00001.uidx"
done
