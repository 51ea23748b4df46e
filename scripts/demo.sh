#!/usr/bin/env bash
# The README's main job, on a fresh Debian machine: installs what is missing,
# builds, makes a small sample image folder (with the awkward files real
# folders hold), converts it, inspects it, and checks that a record read back
# (rewritten into the fast layout) decodes to its source file's pixels and
# names the source's size.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Only what the demo runs: the library and urec (scripts/test.sh builds the
# tests, benchmarks and fuzz replays).
BUILD_TARGETS="unirecord urec" scripts/build.sh
UREC=${BUILD_DIR:-build}/tools/urec
DEMO=${DEMO_DIR:-out/demo}
rm -rf "$DEMO"
mkdir -p "$DEMO"

echo "== urec synth-imagefolder $DEMO/images --classes 10 --per-class 20 --mix"
"$UREC" synth-imagefolder "$DEMO/images" --classes 10 --per-class 20 --mix
echo "== urec convert imagefolder $DEMO/images $DEMO/records --name train"
"$UREC" convert imagefolder "$DEMO/images" "$DEMO/records" --name train
echo "== $DEMO/records/train.rejects.g*.tsv (files not written, and why)"
cat "$DEMO"/records/train.rejects.g*.tsv
echo "== urec inspect $DEMO/records"
"$UREC" inspect "$DEMO/records"
echo "== urec cat $DEMO/records 7"
"$UREC" cat "$DEMO/records" 7
path=$("$UREC" cat "$DEMO/records" 7 --field path)
"$UREC" cat "$DEMO/records" 7 --field image > "$DEMO/record7.jpg"
"$UREC" decode "$DEMO/record7.jpg" -o "$DEMO/record7.ppm"
"$UREC" decode "$DEMO/images/$path" -o "$DEMO/source7.ppm"
cmp "$DEMO/record7.ppm" "$DEMO/source7.ppm"
[ "$("$UREC" cat "$DEMO/records" 7 --field source_size)" = "$(stat -c %s "$DEMO/images/$path")" ]
echo "demo: record 7 ($path, $(stat -c %s "$DEMO/record7.jpg") bytes in the fast layout) decodes to" \
  "the same pixels as its $(stat -c %s "$DEMO/images/$path")-byte source file"

echo "== the PNG named .JPEG (as ImageNet has one): kept as the PNG it is, by its magic bytes"
png_id=$("$UREC" query "$DEMO/records" 'jpeg_layout == 0' --ids)
png_path=$("$UREC" cat "$DEMO/records" "$png_id" --field path)
[ "${png_path##*/}" = png_named_jpeg.JPEG ]
"$UREC" cat "$DEMO/records" "$png_id" --field image > "$DEMO/record-png.JPEG"
cmp "$DEMO/record-png.JPEG" "$DEMO/images/$png_path"
"$UREC" decode "$DEMO/record-png.JPEG" --center-crop 32,40 -o "$DEMO/record-png-crop.ppm"
echo "demo: record $png_id ($png_path) is the source PNG byte for byte and decodes through the same crop/resize"

echo "== urec decode: a 224x224 random-resized crop of record 7, decoding only the crop's rows and columns"
"$UREC" decode "$DEMO/record7.jpg" --random-resized-crop 0,0,7 --resize 224x224 -o "$DEMO/record7-crop.ppm"
head -c 15 "$DEMO/record7-crop.ppm" | head -2 | tr '\n' ' '; echo
echo "== urec bench $DEMO/records: the native loader, RandomResizedCrop(224)+flip, 2 epochs"
"$UREC" bench "$DEMO/records" --batch 32 --epochs 2 --transform train
