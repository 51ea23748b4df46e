#!/usr/bin/env bash
# Checks that unirecord installs and can be used from outside this tree:
# `cmake --install` into a fresh prefix, then builds examples/cpp_trainer
# against it with find_package(unirecord CONFIG) + libtorch, and a second
# program with nothing but `pkg-config --static`; converts a small image
# folder whose classes differ in colour, and trains a few steps, failing
# unless the loss goes down.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-example}
WORK=$PWD/$BUILD_DIR/work
PREFIX=$WORK/prefix
STEPS=${STEPS:-80}
JOBS=${JOBS:-$(nproc)}

# An existing build (scripts/test.sh passes build/) is installed as it is.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DUNIRECORD_BUILD_TESTS=OFF \
    -DUNIRECORD_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
rm -rf "$WORK"
mkdir -p "$WORK"
cmake --install "$BUILD_DIR" --prefix "$PREFIX" >/dev/null

echo "test-example: no tool or test helpers in the installed library"
# One entry point of each helper of unirecord_tools_support (what urec ships:
# the JPEG encoder, the synthetic images, the whole-image resize,
# urec's file reads and writes) and of unirecord_testing (the test pictures,
# the GPU bandwidth measurement): none may be defined in libunirecord.a. The
# internal archives must define them all, or the names here went stale and
# this check would pass for nothing. Neither archive is built by default
# (urec builds the first): build both.
cmake --build "$BUILD_DIR" -j "$JOBS" --target unirecord_tools_support unirecord_testing
support_helpers=(unirecord::image_internal::EncodeJpeg unirecord::image_internal::ResizeRgb unirecord::WriteSyntheticImageFolder
                 unirecord::EncodeSyntheticJpeg unirecord::ReadImageFile unirecord::WriteWholeFile)
testing_helpers=(unirecord::testing::SyntheticRgb unirecord::gpu::MeasureGpuBandwidth)
defined() { nm -C --defined-only "$1" | grep -E ' [TW] ' | sed -E 's/^[0-9a-f]* [TW] //; s/\[abi:[^]]*\]//g; s/\(.*//' | sort -u; }
installed=$(defined "$(find "$PREFIX" -name libunirecord.a | head -1)")
check_helpers() {  # ARCHIVE NAME...
  local archive=$1 internal
  shift
  internal=$(defined "$(find "$BUILD_DIR" -name "$archive" | head -1)")
  for name in "$@"; do
    grep -qxF "$name" <<<"$internal" || { echo "test-example: $name is not in $archive"; exit 1; }
    if grep -qxF "$name" <<<"$installed"; then
      echo "test-example: the installed libunirecord.a defines $name (a helper of $archive)"
      exit 1
    fi
  done
}
check_helpers libunirecord_tools_support.a "${support_helpers[@]}"
check_helpers libunirecord_testing.a "${testing_helpers[@]}"

echo "test-example: find_package(unirecord CONFIG) + libtorch"
cmake -S examples/cpp_trainer -B "$WORK/trainer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$WORK/trainer" -j "$JOBS"

echo "test-example: pkg-config"
pc_dir=$(dirname "$(find "$PREFIX" -name unirecord.pc | head -1)")
c++ -O2 examples/cpp_trainer/first_batch.cc -o "$WORK/first_batch" \
  $(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs --static unirecord)

# Four classes, each its own colour under noise and random boxes.
/usr/bin/python3 - "$WORK/folder" <<'PY'
import os, random, sys
from PIL import Image, ImageDraw
random.seed(0)
colours = [(200, 40, 40), (40, 180, 60), (50, 70, 210), (220, 200, 40)]
for label, colour in enumerate(colours):
    folder = os.path.join(sys.argv[1], f"class{label}")
    os.makedirs(folder)
    for i in range(40):
        w, h = random.randint(80, 160), random.randint(80, 160)
        img = Image.effect_noise((w, h), 60).convert("RGB")
        img = Image.blend(img, Image.new("RGB", (w, h), colour), 0.6)
        draw = ImageDraw.Draw(img)
        for _ in range(3):
            x, y = random.randrange(w), random.randrange(h)
            draw.rectangle([x, y, x + w // 4, y + h // 4], fill=tuple(random.randrange(256) for _ in range(3)))
        img.save(os.path.join(folder, f"{i}.jpg"), quality=90)
PY
"$PREFIX/bin/urec" convert imagefolder "$WORK/folder" "$WORK/dataset" --name train >/dev/null

"$WORK/first_batch" "$WORK/dataset"
"$WORK/trainer/cpp_trainer" "$WORK/dataset" --steps "$STEPS" --expect-decrease
echo "test-example: passed"
