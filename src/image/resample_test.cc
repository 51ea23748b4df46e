// The resampler (SIMD kernels included) against a plain transcription of
// Pillow's BILINEAR resample arithmetic (libImaging/Resample.c: double
// coefficients normalised per output, rounded to 22 fractional bits,
// horizontal pass, 8-bit clip, vertical pass). Buffers are exactly as large
// as the images, so an over-read shows under AddressSanitizer.
#include "image/resample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "image/resize_rgb.h"
#include "unirecord/image.h"

namespace unirecord::image_internal {
namespace {

struct Coefficients {
  std::vector<int> lo, n;
  std::vector<std::vector<int32_t>> w;
};

Coefficients PillowCoefficients(int in_size, double in0, double in1, int out_size) {
  Coefficients c;
  const double scale = (in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;  // bilinear support 1.0
  for (int i = 0; i < out_size; ++i) {
    const double center = in0 + (i + 0.5) * scale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size);
    std::vector<double> k;
    double total = 0;
    for (int x = xmin; x < xmax; ++x) {
      const double t = std::fabs((x - center + 0.5) / filterscale);
      k.push_back(t < 1.0 ? 1.0 - t : 0.0);
      total += k.back();
    }
    std::vector<int32_t> fixed;
    for (double v : k) {
      const double norm = total != 0.0 ? v / total : v;
      fixed.push_back(static_cast<int32_t>(norm < 0 ? -0.5 + norm * (1 << 22)
                                                    : 0.5 + norm * (1 << 22)));
    }
    c.lo.push_back(xmin);
    c.n.push_back(xmax - xmin);
    c.w.push_back(fixed);
  }
  return c;
}

uint8_t Clip8(int64_t acc) {
  const int64_t v = acc >> 22;
  return static_cast<uint8_t>(std::clamp<int64_t>(v, 0, 255));
}

// Pillow's resize(size, BILINEAR, box) of an RGB image, then mirrored when flip.
std::vector<uint8_t> PillowResize(const std::vector<uint8_t>& src, int sw, int sh,
                                  const SourceBox& box, int dw, int dh, bool flip) {
  const Coefficients cx = PillowCoefficients(sw, box.x0, box.x1, dw);
  const Coefficients cy = PillowCoefficients(sh, box.y0, box.y1, dh);
  std::vector<uint8_t> horizontal(static_cast<size_t>(dw) * sh * 3);
  for (int y = 0; y < sh; ++y) {
    for (int x = 0; x < dw; ++x) {
      for (int ch = 0; ch < 3; ++ch) {
        int64_t acc = 1 << 21;
        for (int k = 0; k < cx.n[x]; ++k) {
          acc += int64_t{src[(static_cast<size_t>(y) * sw + cx.lo[x] + k) * 3 + ch]} * cx.w[x][k];
        }
        horizontal[(static_cast<size_t>(y) * dw + x) * 3 + ch] = Clip8(acc);
      }
    }
  }
  std::vector<uint8_t> out(static_cast<size_t>(dw) * dh * 3);
  for (int y = 0; y < dh; ++y) {
    for (int x = 0; x < dw; ++x) {
      const int ox = flip ? dw - 1 - x : x;
      for (int ch = 0; ch < 3; ++ch) {
        int64_t acc = 1 << 21;
        for (int k = 0; k < cy.n[y]; ++k) {
          acc += int64_t{horizontal[(static_cast<size_t>(cy.lo[y] + k) * dw + x) * 3 + ch]} *
                 cy.w[y][k];
        }
        out[(static_cast<size_t>(y) * dw + ox) * 3 + ch] = Clip8(acc);
      }
    }
  }
  return out;
}

std::vector<uint8_t> RandomImage(std::mt19937& rng, int w, int h) {
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * 3);
  // Mostly smooth with noise and some saturated runs, so clipping happens too.
  std::uniform_int_distribution<int> noise(-40, 40), pick(0, 9);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int ch = 0; ch < 3; ++ch) {
        const int base = (x * (ch + 1) * 7 + y * 5) % 256;
        const int v = pick(rng) == 0 ? 255 * (pick(rng) & 1) : base + noise(rng);
        img[(static_cast<size_t>(y) * w + x) * 3 + ch] = static_cast<uint8_t>(std::clamp(v, 0, 255));
      }
    }
  }
  return img;
}

TEST(Resample, EqualsPillowArithmeticOnRandomBoxesSizesAndFlips) {
  std::mt19937 rng(20261123);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  ResampleScratch scratch;  // reused across cases, as a decoder does
  for (int trial = 0; trial < 400; ++trial) {
    const int sw = 1 + static_cast<int>(unit(rng) * (trial % 4 == 0 ? 12 : 520));
    const int sh = 1 + static_cast<int>(unit(rng) * (trial % 4 == 1 ? 12 : 300));
    double x0 = unit(rng) * sw * 0.5, y0 = unit(rng) * sh * 0.5;
    double x1 = x0 + std::max(unit(rng) * (sw - x0), 0.5);
    double y1 = y0 + std::max(unit(rng) * (sh - y0), 0.5);
    if (trial % 5 == 0) x0 = 0, y0 = 0, x1 = sw, y1 = sh;  // whole image
    x1 = std::min<double>(x1, sw);
    y1 = std::min<double>(y1, sh);
    // Down- and upscales, odd and even widths, single pixels.
    const int dw = 1 + static_cast<int>(unit(rng) * (trial % 3 == 0 ? 400 : 240));
    const int dh = 1 + static_cast<int>(unit(rng) * 240);
    const bool flip = trial % 2 == 1;
    const std::vector<uint8_t> src = RandomImage(rng, sw, sh);
    const std::vector<uint8_t> expected = PillowResize(src, sw, sh, {x0, y0, x1, y1}, dw, dh, flip);
    std::vector<uint8_t> actual(expected.size() + 1, 0xAB);  // +1: must stay untouched
    ResampleRgb(src.data(), sw, sh, static_cast<size_t>(sw) * 3, {x0, y0, x1, y1}, actual.data(),
                dw, dh, static_cast<size_t>(dw) * 3, flip, &scratch);
    ASSERT_EQ(actual.back(), 0xAB) << "wrote past the destination";
    actual.pop_back();
    ASSERT_EQ(actual, expected) << "case " << trial << ": " << sw << "x" << sh << " box (" << x0
                                << "," << y0 << ")-(" << x1 << "," << y1 << ") -> " << dw << "x"
                                << dh << (flip ? " flipped" : "");
  }
}

// Every kernel set (AVX-512 and AVX2 where the CPU has them) must give the
// same bytes as the portable one: randomized windows, sizes (downscales up
// to 10x, past the AVX-512 kernel's window), flips, packed and planar output.
// On a CPU without them the sets fall back and compare the portable kernels.
void ExpectKernelsEqualPortable(ResampleKernels kernels, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  ResampleScratch dispatched, portable;
  dispatched.kernels = kernels;
  portable.kernels = ResampleKernels::kPortable;
  for (int trial = 0; trial < 300; ++trial) {
    const int sw = 1 + static_cast<int>(unit(rng) * (trial % 4 == 0 ? 16 : 600));
    const int sh = 1 + static_cast<int>(unit(rng) * (trial % 4 == 1 ? 16 : 400));
    const double x0 = unit(rng) * sw * 0.5, y0 = unit(rng) * sh * 0.5;
    const double x1 = std::min<double>(x0 + std::max(unit(rng) * (sw - x0), 0.5), sw);
    const double y1 = std::min<double>(y0 + std::max(unit(rng) * (sh - y0), 0.5), sh);
    const int out_range = trial % 3 == 0 ? 400 : trial % 7 == 1 ? 50 : 240;
    const int dw = 1 + static_cast<int>(unit(rng) * out_range);
    const int dh = 1 + static_cast<int>(unit(rng) * out_range);
    const bool flip = trial % 2 == 1;
    const size_t plane_bytes = trial % 3 == 2 ? static_cast<size_t>(dw) * dh : 0;
    const size_t dst_stride = plane_bytes > 0 ? dw : static_cast<size_t>(dw) * 3;
    const std::vector<uint8_t> src = RandomImage(rng, sw, sh);
    std::vector<uint8_t> a(static_cast<size_t>(dw) * dh * 3), b(a.size());
    ResampleRgb(src.data(), sw, sh, static_cast<size_t>(sw) * 3, {x0, y0, x1, y1}, a.data(), dw,
                dh, dst_stride, flip, &dispatched, plane_bytes);
    ResampleRgb(src.data(), sw, sh, static_cast<size_t>(sw) * 3, {x0, y0, x1, y1}, b.data(), dw,
                dh, dst_stride, flip, &portable, plane_bytes);
    ASSERT_EQ(a, b) << "case " << trial << ": " << sw << "x" << sh << " box (" << x0 << "," << y0
                    << ")-(" << x1 << "," << y1 << ") -> " << dw << "x" << dh
                    << (flip ? " flipped" : "") << (plane_bytes > 0 ? " planar" : "");
  }
}

TEST(Resample, BestKernelsEqualPortableKernelsByteForByte) {
  ExpectKernelsEqualPortable(ResampleKernels::kBest, 20261124);
}

TEST(Resample, Avx2KernelsEqualPortableKernelsByteForByte) {
  ExpectKernelsEqualPortable(ResampleKernels::kAvx2, 20261125);
}

TEST(Resample, ResizeRgbHonoursSourceStride) {
  std::mt19937 rng(7);
  const int sw = 333, sh = 101, pad = 13;
  const std::vector<uint8_t> packed = RandomImage(rng, sw, sh);
  std::vector<uint8_t> strided(static_cast<size_t>(sw * 3 + pad) * sh, 0);
  for (int y = 0; y < sh; ++y) {
    std::copy_n(packed.begin() + static_cast<size_t>(y) * sw * 3, sw * 3,
                strided.begin() + static_cast<size_t>(y) * (sw * 3 + pad));
  }
  std::vector<uint8_t> a(224 * 224 * 3), b(224 * 224 * 3);
  ASSERT_TRUE(ResizeRgb(packed.data(), sw, sh, sw * 3, a.data(), 224, 224, true).ok());
  ASSERT_TRUE(ResizeRgb(strided.data(), sw, sh, sw * 3 + pad, b.data(), 224, 224, true).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, PillowResize(packed, sw, sh, {0, 0, double(sw), double(sh)}, 224, 224, true));
}

}  // namespace
}  // namespace unirecord::image_internal
