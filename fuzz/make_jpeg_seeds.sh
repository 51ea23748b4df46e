#!/usr/bin/env bash
# Rebuilds fuzz/corpus/jpeg/: JPEGs in the fast layout (as `urec convert`
# stores them) and damaged copies whose restart-segment structure lies, for
# the fast-layout crop path of fuzz_image. Needs a built urec (UREC=...).
set -euo pipefail
cd "$(dirname "$0")/.."
UREC=${UREC:-build/tools/urec}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=fuzz/corpus/jpeg
rm -rf "$out" && mkdir -p "$out" "$work/src/a"
for f in libjpeg-turbo__testorig.jpg pillow__hopper_gray.jpg zune-image__non_interleaved_422_64x64.jpg \
         pillow__flower.jpg pillow__hopper_orientation_6.jpg jpeg-decoder__mozilla__jpg-cmyk-2.jpg; do
  cp "tests/data/jpeg-conformance/$f" "$work/src/a/$f"
done
"$UREC" convert imagefolder "$work/src" "$work/out" --name seeds --threads 1 >/dev/null
n=$("$UREC" inspect "$work/out" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
for ((i = 0; i < n; i++)); do
  "$UREC" cat "$work/out" "$i" --field image > "$work/fast$i.jpg"
done
python3 - "$work" "$out" "$n" <<'PY'
import sys
work, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def markers(b):
    """Offsets of the RST markers in the entropy-coded data (after the first SOS)."""
    sos = b.index(b"\xff\xda")
    start = sos + 2 + (b[sos + 2] << 8 | b[sos + 3])
    return [p for p in range(start, len(b) - 1) if b[p] == 0xFF and 0xD0 <= b[p + 1] <= 0xD7]

for i in range(n):
    b = open(f"{work}/fast{i}.jpg", "rb").read()
    open(f"{out}/fast{i}.jpg", "wb").write(b)
    m = markers(b)
    if len(m) < 3:
        continue
    p = m[len(m) // 2]
    dri = b.index(b"\xff\xdd")
    variants = {
        "marker-missing": b[:p] + b[p + 2:],
        "marker-out-of-order": b[:p + 1] + bytes([0xD0 + (b[p + 1] - 0xD0 + 3) % 8]) + b[p + 2:],
        "marker-duplicated": b[:p + 2] + b[p:],
        "interval-off-by-one": b[:dri + 4] + ((b[dri + 4] << 8 | b[dri + 5]) + 1).to_bytes(2, "big") + b[dri + 6:],
        "cut-mid-segment": b[:p - 7],
        "marker-after-last": b[:-2] + b"\xff\xd0" + b[-2:],
    }
    for name, data in variants.items():
        open(f"{out}/fast{i}-{name}.jpg", "wb").write(data)
PY
ls "$out" | wc -l
