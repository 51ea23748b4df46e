#!/usr/bin/env bash
# Builds the image-layer, sampler, loader, query and lifetime tests with
# AddressSanitizer + UBSan into build-asan/ and runs them: every file of the
# JPEG conformance corpus and every PNG seed of fuzz/corpus/png must decode or fail cleanly with no memory error,
# leak or undefined behaviour, the threaded loader and the query plans (a
# damaged sorted index included) must be clean too, and views held past
# their Dataset/Loader must stay valid. Only these targets are
# built, so it takes a few minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DUNIRECORD_SANITIZE=address,undefined \
  -DUNIRECORD_BUILD_BENCH=OFF -DUNIRECORD_BUILD_TOOLS=OFF -DUNIRECORD_ENABLE_CUDA=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target jpeg_corpus_test jpeg_decoder_test jpeg_encoder_test \
  jpeg_probe_test jpeg_restart_crop_test jpeg_transcode_test resample_test sampler_test loader_test \
  sample_decoder_test parser_test query_test dataset_lifetime_test status_test png_decoder_test fuzz_image_replay
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in image/jpeg_probe_test image/jpeg_corpus_test image/jpeg_decoder_test image/jpeg_encoder_test image/png_decoder_test \
         image/jpeg_transcode_test image/resample_test sample/sampler_test pipeline/loader_test \
         pipeline/sample_decoder_test query/parser_test query/query_test dataset/dataset_lifetime_test \
         util/status_test; do
  "$BUILD_DIR/src/$t" --gtest_brief=1
done
# The fast-layout crop path on damaged data; the thousand-crop exactness run
# stays in the ordinary build.
"$BUILD_DIR/src/image/jpeg_restart_crop_test" --gtest_brief=1 --gtest_filter=-*Thousands*
# The image fuzz target over the PNG seeds (valid and damaged) and the fast-layout JPEG seeds.
"$BUILD_DIR/fuzz/fuzz_image_replay" fuzz/corpus/png fuzz/corpus/jpeg >/dev/null
echo "test-asan: image layer, sampler, loader, query, lifetimes and Result asserts clean under address,undefined"
