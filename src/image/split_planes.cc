// Packed RGB into planes (resample.h): the planar batch layout splits
// every output row.
#include <algorithm>
#include <cstddef>
#include <cstdint>

// GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized on their own
// _mm512_undefined_* placeholders (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "image/resample.h"

namespace unirecord::image_internal {
namespace {

// vpermi2b / vpermb indices that gather plane c of 64 packed RGB pixels
// (192 bytes in three registers): byte i of the plane is byte 3i + c of the
// block, from the first two registers (one vpermi2b) or, where the mask has
// bit i, from the third (one masked vpermb).
struct SplitIndices {
  uint8_t first_two[3][64];
  uint8_t third[3][64];
  uint64_t from_third[3];
};

const SplitIndices& PlaneIndices() {
  static const SplitIndices indices = [] {
    SplitIndices t{};
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 64; ++i) {
        const int src = 3 * i + c;
        if (src < 128) {
          t.first_two[c][i] = static_cast<uint8_t>(src);
        } else {
          t.third[c][i] = static_cast<uint8_t>(src - 128);
          t.from_third[c] |= uint64_t{1} << i;
        }
      }
    }
    return t;
  }();
  return indices;
}

}  // namespace

__attribute__((target(UNIRECORD_AVX512))) void SplitPlanesAvx512(const uint8_t* rgb,
                                                                size_t pixels, uint8_t* r,
                                                                uint8_t* g, uint8_t* b) {
  const SplitIndices& t = PlaneIndices();
  uint8_t* const planes[3] = {r, g, b};
  __m512i first_two[3], third[3];
  for (int c = 0; c < 3; ++c) {
    first_two[c] = _mm512_loadu_si512(t.first_two[c]);
    third[c] = _mm512_loadu_si512(t.third[c]);
  }
  for (size_t p = 0; p < pixels; p += 64) {
    const uint8_t* in = rgb + 3 * p;
    const size_t n = std::min<size_t>(64, pixels - p);
    __m512i x, y, z;
    if (n == 64) {
      x = _mm512_loadu_si512(in);
      y = _mm512_loadu_si512(in + 64);
      z = _mm512_loadu_si512(in + 128);
    } else {
      const size_t bytes = 3 * n;  // < 192
      auto mask = [bytes](size_t from) -> __mmask64 {
        if (bytes <= from) return 0;
        return bytes - from >= 64 ? ~0ull : (1ull << (bytes - from)) - 1;
      };
      x = _mm512_maskz_loadu_epi8(mask(0), in);
      y = bytes > 64 ? _mm512_maskz_loadu_epi8(mask(64), in + 64) : _mm512_setzero_si512();
      z = bytes > 128 ? _mm512_maskz_loadu_epi8(mask(128), in + 128) : _mm512_setzero_si512();
    }
    for (int c = 0; c < 3; ++c) {
      __m512i plane = _mm512_permutex2var_epi8(x, first_two[c], y);
      plane = _mm512_mask_permutexvar_epi8(plane, t.from_third[c], third[c], z);
      if (n == 64) {
        _mm512_storeu_si512(planes[c] + p, plane);
      } else {
        _mm512_mask_storeu_epi8(planes[c] + p, (1ull << n) - 1, plane);
      }
    }
  }
}

void SplitPlanes(const uint8_t* rgb, size_t pixels, uint8_t* r, uint8_t* g, uint8_t* b) {
  for (size_t p = 0; p < pixels; ++p) {
    r[p] = rgb[3 * p];
    g[p] = rgb[3 * p + 1];
    b[p] = rgb[3 * p + 2];
  }
}

}  // namespace unirecord::image_internal
