// Differential fuzz target for our Huffman decoder (src/image/jpeg_huffman.h):
// bytes -> DecodeCoefficientsOwn; whenever ours decodes, libjpeg-turbo's
// jpeg_read_coefficients must read the same bytes without error and give
// the same coefficient in every block, else the target aborts. Headers
// claiming more than 4 Mpx are skipped (both decoders would allocate the
// whole image's coefficients).
//
// Seeds: tests/data/jpeg-conformance/ and fuzz/corpus/jpeg/ (fast-layout
// JPEGs as `urec convert` writes them, and copies with lying restart markers),
// fuzz/corpus/jpeg_huffman/ (regress-* inputs this target found).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>

#include "image/jpeg_huffman.h"
#include "unirecord/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace unirecord::image_internal;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto info = unirecord::ProbeJpeg(bytes);
  if (!info.ok() || int64_t{info->width} * info->height > (int64_t{1} << 22)) return 0;
  static OwnHuffmanScratch scratch;
  JpegCoefficients ours, theirs;
  if (DecodeCoefficientsOwn(bytes, &scratch, &ours) != OwnHuffmanResult::kDecoded) return 0;
  int warnings = 0;
  std::string error;
  if (!ReadLibjpegCoefficients(bytes, &theirs, &warnings, &error)) {
    std::fprintf(stderr, "ours decoded what libjpeg fails on: %s\n", error.c_str());
    std::abort();
  }
  if (ours.components.size() != theirs.components.size()) std::abort();
  for (size_t c = 0; c < ours.components.size(); ++c) {
    const auto& a = ours.components[c];
    const auto& b = theirs.components[c];
    if (a.blocks_wide != b.blocks_wide || a.blocks_high != b.blocks_high || a.coef != b.coef) {
      std::fprintf(stderr, "component %zu: coefficients differ from libjpeg's\n", c);
      std::abort();
    }
  }
  return 0;
}
