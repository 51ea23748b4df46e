#include "image/resample.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

// GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized on their own
// _mm512_undefined_* placeholders (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "unirecord/image.h"

namespace unirecord::image_internal {
namespace {

constexpr int kWeightBits = 22;  // PIL's PRECISION_BITS for 8-bit images
// The SIMD horizontal pass splits each weight as hi * 2^11 + lo, both int16.
constexpr int kWeightSplitBits = 11;

double Triangle(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Per produced output: the first source index (relative to `origin`), the
// tap count, and `taps` fixed-point weights (PIL's precompute_coeffs +
// normalize_coeffs_8bpc, for outputs out_first.. of the whole resampling).
// Returns taps (the stride of `weights`).
int ComputeWeights(const Axis& axis, int origin, std::vector<int>* first, std::vector<int>* count,
                   std::vector<int32_t>* weights) {
  const double scale = (axis.in1 - axis.in0) / axis.out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;  // the triangle's support is 1
  const int taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  first->resize(axis.out_count);
  count->resize(axis.out_count);
  weights->assign(static_cast<size_t>(axis.out_count) * taps, 0);
  const double inv_filter_scale = 1.0 / filter_scale;
  for (int i = 0; i < axis.out_count; ++i) {
    const double center = axis.in0 + (axis.out_first + i + 0.5) * scale;
    int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    int hi = std::min(static_cast<int>(center + support + 0.5), axis.in_size);
    int n = std::max(hi - lo, 0);
    // The tap weight is recomputed (not stored) on the second pass, so that
    // the per-image hot path allocates nothing; the doubles are identical.
    auto tap = [&](int k) { return Triangle((k + lo - center + 0.5) * inv_filter_scale); };
    double total = 0.0;
    for (int k = 0; k < n; ++k) total += tap(k);
    int32_t* out = weights->data() + static_cast<size_t>(i) * taps;
    for (int k = 0; k < n; ++k) {
      const double w = tap(k);
      double normalized = total != 0.0 ? w / total : w;
      out[k] = static_cast<int32_t>(normalized < 0 ? -0.5 + normalized * (1 << kWeightBits)
                                                   : 0.5 + normalized * (1 << kWeightBits));
    }
    (*first)[i] = lo - origin;
    (*count)[i] = n;
  }
  return taps;
}

// An axis whose outputs are all produced and copy the source one to one.
bool IsIdentity(const Axis& a, int origin, int region_size) {
  return a.out_size == a.in_size && a.in0 == 0 && a.in1 == a.in_size && a.out_first == 0 &&
         a.out_count == a.out_size && origin == 0 && region_size == a.in_size;
}

inline uint8_t ToByte(int32_t acc) {
  int32_t v = acc >> kWeightBits;
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// One output row of the horizontal pass. Outputs are produced in increasing
// address order (reversed x when flipping), which lets the SIMD version store
// 4 bytes per pixel: the 4th byte is overwritten by the next pixel, and the
// buffer has one byte of slack after the row.
struct HorizontalJob {
  const int32_t* weights;
  const int* first;
  const int* count;
  int taps;
  int src_width;
  int dst_width;
  bool flip;
  const HorizontalPair* pairs;   // for the AVX2 kernel (PlanHorizontalPairs)
  const int16_t* pair_weights;
  const HorizontalGroup* groups;  // for the AVX-512 kernel (PlanHorizontalGroups)
  const int16_t* group_tables;
};

// The output pixel written at position `o` of the row: outputs are written
// in increasing address order, so a flip reverses the order of x.
inline int OutputX(const HorizontalJob& j, int o) { return j.flip ? j.dst_width - 1 - o : o; }

// Lays out, for each pair of outputs in output order, the source offsets and
// the split weights the AVX2 kernel loads: per pair of taps, 16 int16 of hi
// weights then 16 of lo, each 8 = (w_k, w_k+1) x 4 for one pixel.
void PlanHorizontalPairs(const HorizontalJob& j, ResampleScratch* s) {
  const int pair_count = j.dst_width / 2;
  s->pairs.resize(pair_count);
  size_t steps_total = 0;
  for (int q = 0; q < pair_count; ++q) {
    const int x0 = OutputX(j, 2 * q), x1 = OutputX(j, 2 * q + 1);
    const int steps = (std::max(j.count[x0], j.count[x1]) + 1) / 2;
    HorizontalPair& pair = s->pairs[q];
    pair.src0 = j.first[x0] * 3;
    pair.src1 = j.first[x1] * 3;
    // The last 8-byte load ends at byte first*3 + 6*steps + 1 of the row.
    const int row_bytes = j.src_width * 3;
    if (std::max(pair.src0, pair.src1) + 6 * steps + 2 > row_bytes) {
      pair.tap_pairs = -1;
      continue;
    }
    pair.tap_pairs = steps;
    pair.weight_index = static_cast<int>(steps_total) * 2;
    steps_total += steps;
  }
  s->pair_weights.resize(steps_total * 32);
  for (int q = 0; q < pair_count; ++q) {
    const HorizontalPair& pair = s->pairs[q];
    if (pair.tap_pairs < 0) continue;
    const int x[2] = {OutputX(j, 2 * q), OutputX(j, 2 * q + 1)};
    int16_t* block = s->pair_weights.data() + static_cast<size_t>(pair.weight_index) * 16;
    for (int k = 0; k < pair.tap_pairs; ++k, block += 32) {
      for (int half = 0; half < 2; ++half) {
        const int32_t* w = j.weights + static_cast<size_t>(x[half]) * j.taps;
        const int n = j.count[x[half]];
        const int32_t w0 = 2 * k < n ? w[2 * k] : 0;
        const int32_t w1 = 2 * k + 1 < n ? w[2 * k + 1] : 0;
        for (int c = 0; c < 4; ++c) {
          block[half * 8 + 2 * c] = static_cast<int16_t>(w0 >> kWeightSplitBits);
          block[half * 8 + 2 * c + 1] = static_cast<int16_t>(w1 >> kWeightSplitBits);
          block[16 + half * 8 + 2 * c] = static_cast<int16_t>(w0 & ((1 << kWeightSplitBits) - 1));
          block[16 + half * 8 + 2 * c + 1] = static_cast<int16_t>(w1 & ((1 << kWeightSplitBits) - 1));
        }
      }
    }
  }
}

// One output pixel, scalar: for edge pixels of the SIMD versions.
inline void HorizontalPixel(const HorizontalJob& j, const uint8_t* in, int x, uint8_t* out) {
  const int32_t* w = j.weights + static_cast<size_t>(x) * j.taps;
  const uint8_t* p = in + j.first[x] * 3;
  int32_t r = 1 << (kWeightBits - 1), g = r, b = r;
  for (int k = 0, n = j.count[x]; k < n; ++k) {
    r += p[3 * k] * w[k];
    g += p[3 * k + 1] * w[k];
    b += p[3 * k + 2] * w[k];
  }
  out[0] = ToByte(r);
  out[1] = ToByte(g);
  out[2] = ToByte(b);
}

// Two output pixels per step, 256-bit: the low 128 bits hold pixel x0, the
// high 128 bits x1, each as int16 lanes R_k R_k+1 G_k G_k+1 B_k B_k+1 0 0 so
// that one madd multiplies two taps and adds them. A 22-bit weight does not
// fit an int16, so each is split as hi * 2^11 + lo (both < 2^12) and the two
// sums are recombined: integer arithmetic throughout, hence the same bytes as
// the scalar path. Pixels whose 8-byte loads could run past the row take the
// scalar path (the byte after the row may lie past the caller's buffer).
__attribute__((target("avx2"))) void HorizontalRowAvx2(const HorizontalJob& j, const uint8_t* in,
                                                      uint8_t* out) {
  const __m256i half = _mm256_set1_epi32(1 << (kWeightBits - 1));
  // Per 128-bit lane: bytes R0 G0 B0 R1 G1 B1 -> int16 R0 R1 G0 G1 B0 B1 0 0.
  const __m256i spread = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
                                          0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const HorizontalPair* pair = j.pairs;
  int o = 0;
  for (; o + 1 < j.dst_width; o += 2, ++pair) {
    if (pair->tap_pairs < 0) {
      HorizontalPixel(j, in, OutputX(j, o), out + 3 * o);
      HorizontalPixel(j, in, OutputX(j, o + 1), out + 3 * o + 3);
      continue;
    }
    const uint8_t* p0 = in + pair->src0;
    const uint8_t* p1 = in + pair->src1;
    const __m256i* w = reinterpret_cast<const __m256i*>(j.pair_weights) + pair->weight_index;
    __m256i acc_hi = _mm256_setzero_si256(), acc_lo = _mm256_setzero_si256();
    for (int k = 0; k < pair->tap_pairs; ++k, p0 += 6, p1 += 6, w += 2) {
      const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p0));
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p1));
      const __m256i px = _mm256_shuffle_epi8(_mm256_set_m128i(b, a), spread);
      acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(px, _mm256_loadu_si256(w)));
      acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(px, _mm256_loadu_si256(w + 1)));
    }
    __m256i acc = _mm256_add_epi32(_mm256_slli_epi32(acc_hi, kWeightSplitBits),
                                   _mm256_add_epi32(acc_lo, half));
    acc = _mm256_srai_epi32(acc, kWeightBits);
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    const __m128i bytes = _mm_packus_epi16(words, words);  // R0 G0 B0 x R1 G1 B1 x
    const int32_t first = _mm_cvtsi128_si32(bytes);
    const int32_t second = _mm_extract_epi32(bytes, 1);
    std::memcpy(out + 3 * o, &first, 4);   // the 4th byte is overwritten next
    std::memcpy(out + 3 * o + 3, &second, 4);  // needs the buffer's 1-byte slack
  }
  if (o < j.dst_width) HorizontalPixel(j, in, OutputX(j, o), out + 3 * o);
}

constexpr int kGroupBytes = 16;    // output bytes per AVX-512 step (16 int32 lanes)
constexpr int kWindowBytes = 128;  // source bytes one vpermi2b selects from
constexpr int kTableBlocks = 3;    // per group and tap pair: indices, hi weights, lo weights

// Lays out the AVX-512 kernel's tables: per group of 16 output bytes and per
// pair of taps, one 64-byte block of vpermi2b indices (byte 4m: the offset
// in the group's window of output byte m's tap 2k, byte 4m+2: of tap 2k+1;
// the odd bytes are zeroed by the mask, making int16 lanes), then 32 int16 hi
// weights and 32 lo weights in the same lane order. Returns false when a
// group's taps span more than the window (downscales beyond about 6x): the
// AVX2 kernel then does the row.
bool PlanHorizontalGroups(const HorizontalJob& j, ResampleScratch* s) {
  const int out_bytes = j.dst_width * 3;
  const int group_count = (out_bytes + kGroupBytes - 1) / kGroupBytes;
  s->groups.resize(group_count);
  size_t blocks = 0;
  for (int g = 0; g < group_count; ++g) {
    int lo = INT_MAX, hi = 0, tap_pairs = 0;
    for (int b = g * kGroupBytes; b < std::min(out_bytes, (g + 1) * kGroupBytes); ++b) {
      const int x = OutputX(j, b / 3), n = j.count[x];
      if (n == 0) continue;
      lo = std::min(lo, j.first[x] * 3 + b % 3);
      hi = std::max(hi, (j.first[x] + n - 1) * 3 + b % 3 + 1);
      tap_pairs = std::max(tap_pairs, (n + 1) / 2);
    }
    if (tap_pairs == 0) lo = hi = 0;
    if (hi - lo > kWindowBytes) return false;
    s->groups[g] = {lo, tap_pairs, static_cast<int>(blocks)};
    blocks += static_cast<size_t>(tap_pairs) * kTableBlocks;
  }
  s->group_tables.assign(blocks * 32, 0);
  for (int g = 0; g < group_count; ++g) {
    const HorizontalGroup& group = s->groups[g];
    for (int b = g * kGroupBytes; b < std::min(out_bytes, (g + 1) * kGroupBytes); ++b) {
      const int x = OutputX(j, b / 3), n = j.count[x], m = b - g * kGroupBytes;
      const int32_t* w = j.weights + static_cast<size_t>(x) * j.taps;
      for (int t = 0; t < n; ++t) {
        int16_t* block = s->group_tables.data() +
                         (static_cast<size_t>(group.table_index) + (t / 2) * kTableBlocks) * 32;
        const int lane = 2 * m + t % 2;
        // Byte 2 * lane of the index block; lanes of taps past n keep index 0
        // and weight 0.
        reinterpret_cast<uint8_t*>(block)[2 * lane] =
            static_cast<uint8_t>((j.first[x] + t) * 3 + b % 3 - group.window);
        block[32 + lane] = static_cast<int16_t>(w[t] >> kWeightSplitBits);
        block[64 + lane] = static_cast<int16_t>(w[t] & ((1 << kWeightSplitBits) - 1));
      }
    }
  }
  return true;
}

// 16 output bytes per step: one vpermi2b gathers, for each, the source bytes
// of two taps from a 128-byte window of the row (zero-extended to int16), and
// two vpdpwssd add pixel * hi and pixel * lo for both taps at once. Integer
// arithmetic throughout, as in the AVX2 kernel; the sums are never negative
// (weights and pixels are not), so an unsigned saturating narrow clips them.
// kRows rows at a time share each table load. Masked loads read nothing past
// a row.
template <int kRows>
__attribute__((target(UNIRECORD_AVX512))) inline void HorizontalRowsAvx512(const HorizontalJob& j,
                                                                          const uint8_t* in,
                                                                          size_t in_stride,
                                                                          uint8_t* out,
                                                                          size_t out_stride) {
  const int row_bytes = j.src_width * 3, out_bytes = j.dst_width * 3;
  const __m512i half = _mm512_set1_epi32(1 << (kWeightBits - 1));
  const __m512i* tables = reinterpret_cast<const __m512i*>(j.group_tables);
  const __mmask64 even_bytes = 0x5555555555555555ull;
  for (int g = 0, b = 0; b < out_bytes; ++g, b += kGroupBytes) {
    const HorizontalGroup& group = j.groups[g];
    const int avail = row_bytes - group.window;
    const __mmask64 mask_a = avail >= 64 ? ~0ull : (1ull << avail) - 1;
    const __mmask64 mask_b = avail >= 128 ? ~0ull : avail > 64 ? (1ull << (avail - 64)) - 1 : 0;
    __m512i a[kRows], c[kRows], acc_hi[kRows], acc_lo[kRows];
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* window = in + r * in_stride + group.window;
      if (avail >= kWindowBytes) {  // plain loads where they can: masked ones are slower
        a[r] = _mm512_loadu_si512(window);
        c[r] = _mm512_loadu_si512(window + 64);
      } else {
        a[r] = _mm512_maskz_loadu_epi8(mask_a, window);
        c[r] = avail > 64 ? _mm512_maskz_loadu_epi8(mask_b, window + 64) : _mm512_setzero_si512();
      }
      acc_hi[r] = _mm512_setzero_si512();
      acc_lo[r] = half;
    }
    const __m512i* t = tables + group.table_index;
    for (int k = 0; k < group.tap_pairs; ++k, t += kTableBlocks) {
      const __m512i index = _mm512_loadu_si512(t);
      const __m512i w_hi = _mm512_loadu_si512(t + 1), w_lo = _mm512_loadu_si512(t + 2);
      for (int r = 0; r < kRows; ++r) {
        const __m512i px = _mm512_maskz_permutex2var_epi8(even_bytes, a[r], index, c[r]);
        acc_hi[r] = _mm512_dpwssd_epi32(acc_hi[r], px, w_hi);
        acc_lo[r] = _mm512_dpwssd_epi32(acc_lo[r], px, w_lo);
      }
    }
    const int n = std::min(kGroupBytes, out_bytes - b);
    for (int r = 0; r < kRows; ++r) {
      const __m512i acc = _mm512_srai_epi32(
          _mm512_add_epi32(_mm512_slli_epi32(acc_hi[r], kWeightSplitBits), acc_lo[r]),
          kWeightBits);
      const __m128i bytes = _mm512_cvtusepi32_epi8(acc);
      if (n == kGroupBytes) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + r * out_stride + b), bytes);
      } else {
        _mm_mask_storeu_epi8(out + r * out_stride + b, (1u << n) - 1, bytes);
      }
    }
  }
}

__attribute__((target(UNIRECORD_AVX512))) void HorizontalAvx512(const HorizontalJob& j,
                                                               const uint8_t* in,
                                                               size_t in_stride, uint8_t* out,
                                                               size_t out_stride, int rows) {
  constexpr int kBlock = 4;  // rows sharing each table load
  int r = 0;
  for (; r + kBlock <= rows; r += kBlock) {
    HorizontalRowsAvx512<kBlock>(j, in + r * in_stride, in_stride, out + r * out_stride,
                                 out_stride);
  }
  for (; r < rows; ++r) {
    HorizontalRowsAvx512<1>(j, in + r * in_stride, in_stride, out + r * out_stride, out_stride);
  }
}

void HorizontalRowScalar(const HorizontalJob& j, const uint8_t* in, uint8_t* out) {
  for (int o = 0; o < j.dst_width; ++o) {
    HorizontalPixel(j, in, OutputX(j, o), out + 3 * o);
  }
}

// acc[i] += row[i] * weight over a row, written plainly so the compiler
// vectorises it; compiled twice (AVX2 and baseline) and picked at run time.
struct VerticalJob {
  const uint8_t* rows;  // first source row of this output row
  size_t stride;        // bytes between source rows (= row width)
  const int32_t* weights;
  int count;
  int32_t* acc;
  uint8_t* out;
};

inline void VerticalRowGeneric(const VerticalJob& j) {
  // Locals and __restrict: uint8_t pointers may alias anything, which would
  // otherwise keep the loops scalar.
  const size_t n = j.stride;
  int32_t* __restrict acc = j.acc;
  uint8_t* __restrict out = j.out;
  for (size_t i = 0; i < n; ++i) acc[i] = 1 << (kWeightBits - 1);
  for (int k = 0; k < j.count; ++k) {
    const uint8_t* __restrict row = j.rows + k * n;
    const int32_t wk = j.weights[k];
    for (size_t i = 0; i < n; ++i) acc[i] += row[i] * wk;
  }
  for (size_t i = 0; i < n; ++i) {
    int32_t v = acc[i] >> kWeightBits;
    out[i] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
}

__attribute__((target("avx2"))) void VerticalRowAvx2(const VerticalJob& j) {
  VerticalRowGeneric(j);
}
void VerticalRowBaseline(const VerticalJob& j) { VerticalRowGeneric(j); }

// 32 output bytes per step with the accumulators in registers: the bytes of
// two source rows are interleaved and zero-extended to int16 pairs, and two
// vpdpwssd add both rows times the split weights (hi * 2^11 + lo, as in the
// horizontal kernels), so each pair of taps costs two multiplies per 16
// outputs. Masked loads and stores for the row's tail.
__attribute__((target(UNIRECORD_AVX512))) void VerticalRowAvx512(const VerticalJob& j) {
  const size_t n = j.stride;
  const __m512i half = _mm512_set1_epi32(1 << (kWeightBits - 1));
  for (size_t i = 0; i < n; i += 32) {
    // Plain loads and stores but for the row's tail: masked ones are slower.
    const bool full = n - i >= 32;
    const __mmask32 mask = full ? ~0u : (1u << (n - i)) - 1;
    __m512i hi0 = _mm512_setzero_si512(), hi1 = hi0, lo0 = half, lo1 = half;
    for (int k = 0; k < j.count; k += 2) {
      const uint8_t* row = j.rows + static_cast<size_t>(k) * n + i;
      const int32_t w0 = j.weights[k], w1 = k + 1 < j.count ? j.weights[k + 1] : 0;
      const __m256i a = full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row))
                             : _mm256_maskz_loadu_epi8(mask, row);
      const __m256i b = k + 1 >= j.count ? a
                        : full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + n))
                               : _mm256_maskz_loadu_epi8(mask, row + n);
      const __m512i w_hi = _mm512_set1_epi32(static_cast<int32_t>(
          (static_cast<uint32_t>(w1 >> kWeightSplitBits) << 16) |
          static_cast<uint32_t>(w0 >> kWeightSplitBits)));
      const int32_t lo_mask = (1 << kWeightSplitBits) - 1;
      const __m512i w_lo = _mm512_set1_epi32(static_cast<int32_t>(
          (static_cast<uint32_t>(w1 & lo_mask) << 16) | static_cast<uint32_t>(w0 & lo_mask)));
      // Per 128-bit lane: bytes 0-7 (low) and 8-15 (high) of a and b.
      const __m512i p0 = _mm512_cvtepu8_epi16(_mm256_unpacklo_epi8(a, b));
      const __m512i p1 = _mm512_cvtepu8_epi16(_mm256_unpackhi_epi8(a, b));
      hi0 = _mm512_dpwssd_epi32(hi0, p0, w_hi);
      lo0 = _mm512_dpwssd_epi32(lo0, p0, w_lo);
      hi1 = _mm512_dpwssd_epi32(hi1, p1, w_hi);
      lo1 = _mm512_dpwssd_epi32(lo1, p1, w_lo);
    }
    // r0 holds bytes 0-7 and 16-23, r1 bytes 8-15 and 24-31.
    const __m128i r0 = _mm512_cvtusepi32_epi8(_mm512_srai_epi32(
        _mm512_add_epi32(_mm512_slli_epi32(hi0, kWeightSplitBits), lo0), kWeightBits));
    const __m128i r1 = _mm512_cvtusepi32_epi8(_mm512_srai_epi32(
        _mm512_add_epi32(_mm512_slli_epi32(hi1, kWeightSplitBits), lo1), kWeightBits));
    const __m256i row = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi64(r0, r1)),
                                                _mm_unpackhi_epi64(r0, r1), 1);
    if (full) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(j.out + i), row);
    } else {
      _mm256_mask_storeu_epi8(j.out + i, mask, row);
    }
  }
}

// `rows` rows of the horizontal pass, in_stride / out_stride bytes apart.
using HorizontalRows = void (*)(const HorizontalJob&, const uint8_t* in, size_t in_stride,
                                uint8_t* out, size_t out_stride, int rows);

template <void (*kRow)(const HorizontalJob&, const uint8_t*, uint8_t*)>
void EachRow(const HorizontalJob& j, const uint8_t* in, size_t in_stride, uint8_t* out,
             size_t out_stride, int rows) {
  for (int r = 0; r < rows; ++r) kRow(j, in + r * in_stride, out + r * out_stride);
}

struct Kernels {
  HorizontalRows horizontal;
  void (*vertical)(const VerticalJob&);
  void (*split)(const uint8_t* rgb, size_t pixels, uint8_t* r, uint8_t* g, uint8_t* b);
};

const Kernels& PickKernels(ResampleKernels which) {
  static const Kernels portable{EachRow<HorizontalRowScalar>, VerticalRowBaseline, SplitPlanes};
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  static const bool avx512 =
      avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
      __builtin_cpu_supports("avx512vnni");
  static const Kernels avx2_kernels{EachRow<HorizontalRowAvx2>, VerticalRowAvx2, SplitPlanes};
  static const Kernels avx512_kernels{HorizontalAvx512, VerticalRowAvx512, SplitPlanesAvx512};
  if (which == ResampleKernels::kBest && avx512) return avx512_kernels;
  if (which != ResampleKernels::kPortable && avx2) return avx2_kernels;
  return portable;
}

}  // namespace

void SourceRange(const Axis& axis, int* lo, int* hi) {
  const double scale = (axis.in1 - axis.in0) / axis.out_size;
  const double support = std::max(scale, 1.0);
  const double first_center = axis.in0 + (axis.out_first + 0.5) * scale;
  const double last_center = axis.in0 + (axis.out_first + axis.out_count - 0.5) * scale;
  *lo = std::max(static_cast<int>(first_center - support + 0.5), 0);
  *hi = std::min(static_cast<int>(last_center + support + 0.5), axis.in_size);
}

void ResampleRgbAxes(const uint8_t* region, int region_x, int region_y, int region_width,
                     int region_height, size_t region_stride, const Axis& ax, const Axis& ay,
                     uint8_t* dst, size_t dst_stride, bool flip, ResampleScratch* s,
                     size_t plane_bytes) {
  Kernels kernels = PickKernels(s->kernels);
  const int dst_width = ax.out_count, dst_height = ay.out_count;
  const int taps_x = ComputeWeights(ax, region_x, &s->first_x, &s->count_x, &s->weights_x);
  const int taps_y = ComputeWeights(ay, region_y, &s->first_y, &s->count_y, &s->weights_y);
  // Horizontal pass over the rows the vertical pass will read.
  const int row_first = s->first_y[0];
  const int row_end = s->first_y[dst_height - 1] + s->count_y[dst_height - 1];
  const size_t hstride = static_cast<size_t>(dst_width) * 3;
  s->horizontal.resize(hstride * std::max(row_end - row_first, 1) + 1);  // +1: 4-byte stores
  const bool need_horizontal = !IsIdentity(ax, region_x, region_width);
  HorizontalJob hjob{s->weights_x.data(), s->first_x.data(), s->count_x.data(), taps_x,
                     region_width, dst_width, flip, nullptr, nullptr, nullptr, nullptr};
  if (need_horizontal && kernels.horizontal == HorizontalAvx512) {
    if (PlanHorizontalGroups(hjob, s)) {
      hjob.groups = s->groups.data();
      hjob.group_tables = s->group_tables.data();
    } else {
      kernels.horizontal = EachRow<HorizontalRowAvx2>;
    }
  }
  if (need_horizontal && kernels.horizontal == EachRow<HorizontalRowAvx2>) {
    PlanHorizontalPairs(hjob, s);
    hjob.pairs = s->pairs.data();
    hjob.pair_weights = s->pair_weights.data();
  }
  for (int y = row_first; y < row_end && !need_horizontal; ++y) {
    const uint8_t* in = region + static_cast<size_t>(y) * region_stride;
    uint8_t* out = s->horizontal.data() + (y - row_first) * hstride;
    if (!flip) {
      std::memcpy(out, in, hstride);
    } else {
      for (int x = 0; x < dst_width; ++x) std::memcpy(out + (dst_width - 1 - x) * 3, in + x * 3, 3);
    }
  }
  if (need_horizontal) {
    kernels.horizontal(hjob, region + static_cast<size_t>(row_first) * region_stride,
                       region_stride, s->horizontal.data(), hstride, row_end - row_first);
  }
  const bool need_vertical = !IsIdentity(ay, region_y, region_height);
  s->accumulators.resize(hstride);
  if (plane_bytes > 0) s->packed_row.resize(hstride);
  for (int y = 0; y < dst_height; ++y) {
    // Planar output: the row is made packed in a small buffer, then split
    // while it is still in L1 (no second pass over the image).
    uint8_t* out = plane_bytes > 0 ? s->packed_row.data() : dst + static_cast<size_t>(y) * dst_stride;
    const uint8_t* rows = s->horizontal.data() + (s->first_y[y] - row_first) * hstride;
    if (!need_vertical) {
      std::memcpy(out, rows, hstride);
    } else {
      kernels.vertical({rows, hstride, s->weights_y.data() + static_cast<size_t>(y) * taps_y,
                        s->count_y[y], s->accumulators.data(), out});
    }
    if (plane_bytes > 0) {
      uint8_t* r = dst + static_cast<size_t>(y) * dst_stride;
      kernels.split(out, static_cast<size_t>(dst_width), r, r + plane_bytes, r + 2 * plane_bytes);
    }
  }
}

void ResampleRgb(const uint8_t* src, int src_width, int src_height, size_t src_stride,
                 const SourceBox& box, uint8_t* dst, int dst_width, int dst_height,
                 size_t dst_stride, bool flip, ResampleScratch* s, size_t plane_bytes) {
  ResampleRgbAxes(src, 0, 0, src_width, src_height, src_stride,
                  {src_width, box.x0, box.x1, dst_width, 0, dst_width},
                  {src_height, box.y0, box.y1, dst_height, 0, dst_height}, dst, dst_stride, flip,
                  s, plane_bytes);
}

}  // namespace unirecord::image_internal
