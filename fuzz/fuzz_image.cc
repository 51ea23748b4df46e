// Fuzz target for the image layer: bytes -> ProbeImage (JPEG or PNG by the
// magic) -> for a JPEG, CheckDecodable -> a planned random-resized crop
// decoded into a 64x64 RGB buffer (one ImageDecoder reused across inputs, as
// a loader thread does), then a full Decode under a small pixel limit so that
// headers claiming huge images are refused before any large allocation.
// Every call must return a Status.
//
// Seeds: tests/data/jpeg-conformance/ (the conformance corpus),
// fuzz/corpus/jpeg/ (fast-layout JPEGs as `urec convert` writes them, and
// copies whose restart markers lie; fuzz/make_jpeg_seeds.sh), so that the
// restart-segment crop path runs on valid and damaged segment structure, and
// fuzz/corpus/png/ (every PNG colour type and bit depth, interlaced,
// palette + tRNS, and damaged copies; fuzz/make_png_seeds.py).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "unirecord/image.h"

namespace {

unirecord::DecodeOptions Options(bool strict) {
  unirecord::DecodeOptions o;
  o.strict = strict;
  o.limits.max_dimension = 8192;
  o.limits.max_pixels = int64_t{1} << 22;  // 4 Mpx: keeps each run fast
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static unirecord::ImageDecoder lenient(Options(false));
  static unirecord::ImageDecoder strict(Options(true));
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  auto info = unirecord::ProbeImage(bytes);
  if (!info.ok()) return 0;
  if (info->format == unirecord::ImageFormat::kJpeg) {
    auto jpeg = unirecord::ProbeJpeg(bytes);
    if (!jpeg.ok()) return 0;
    (void)jpeg->display_width();
    if (!unirecord::CheckDecodable(*jpeg).ok()) return 0;
    if (!unirecord::CheckDecodable(*jpeg, Options(false).limits).ok()) return 0;
  }

  // Vary seed and decoder with the input so both modes and many windows run.
  const uint64_t seed = size;
  unirecord::ImageDecoder& decoder = (size & 1) ? strict : lenient;
  const unirecord::CropWindow window = unirecord::PlanRandomResizedCrop(
      info->width, info->height, unirecord::RandomResizedCropParams{}, seed, 0, 0);
  static std::vector<uint8_t> out(64 * 64 * 3);
  unirecord::DecodeStats stats;
  (void)decoder.DecodeCropResized(bytes, window, 64, 64, out.data(), out.size(), &stats);
  (void)decoder.DecodeCenterCrop(bytes, 32, 40, out.data(), out.size(), &stats);

  auto full = decoder.Decode(bytes, &stats);
  if (full.ok() && !full->pixels.empty()) {
    volatile uint8_t touch = full->pixels.back();
    (void)touch;
  }
  return 0;
}
