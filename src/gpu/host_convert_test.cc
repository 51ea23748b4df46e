// The conversion kernel's CPU reference, which the host device runs and the
// CUDA kernel is checked against: binary16 rounding, and the layouts and
// normalisation worked out by hand here.
#include "gpu/host_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace unirecord::gpu {
namespace {

TEST(HostConvertTest, FloatToHalfRoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);             // the largest half
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);             // below the midpoint to 2^16
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);             // the midpoint: to even, which is inf
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // half of it: to even (0)
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: to even (2)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);      // tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(HostConvertTest, EveryHalfSurvivesARoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const bool nan = (half & 0x7c00) == 0x7c00 && (half & 0x3ff) != 0;
    if (nan) continue;
    ASSERT_EQ(FloatToHalf(HalfToFloat(half)), half) << std::hex << bits;
  }
}

// Two 1x2 images: pixel (n, p) has channels (10n + p, 100 + p, 200).
TEST(HostConvertTest, LayoutsAndNormalisation) {
  const std::vector<uint8_t> nhwc = {0, 100, 200, 1, 101, 200, 10, 100, 200, 11, 101, 200};
  CudaOptions o;
  o.mean = {1.0f, 2.0f, 3.0f};
  o.std = {2.0f, 4.0f, 8.0f};
  o.dtype = DeviceDType::kFloat32;
  o.layout = ImageLayout::kNCHW;
  std::vector<float> out(12);
  ConvertOnHost(nhwc.data(), out.data(), 2, 1, 2, o);
  EXPECT_EQ(out, (std::vector<float>{-0.5f, 0.0f, 24.5f, 24.75f, 24.625f, 24.625f,  //
                                     4.5f, 5.0f, 24.5f, 24.75f, 24.625f, 24.625f}));
  o.layout = ImageLayout::kNHWC;
  ConvertOnHost(nhwc.data(), out.data(), 2, 1, 2, o);
  EXPECT_EQ(out, (std::vector<float>{-0.5f, 24.5f, 24.625f, 0.0f, 24.75f, 24.625f,  //
                                     4.5f, 24.5f, 24.625f, 5.0f, 24.75f, 24.625f}));
  o.normalize = false;
  o.dtype = DeviceDType::kFloat16;
  std::vector<uint16_t> half(12);
  ConvertOnHost(nhwc.data(), half.data(), 2, 1, 2, o);
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(HalfToFloat(half[i]), float(nhwc[i])) << i;
  o.dtype = DeviceDType::kUint8;  // never normalised
  o.normalize = true;
  o.layout = ImageLayout::kNCHW;
  std::vector<uint8_t> bytes(12);
  ConvertOnHost(nhwc.data(), bytes.data(), 2, 1, 2, o);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{0, 1, 100, 101, 200, 200, 10, 11, 100, 101, 200, 200}));
}

}  // namespace
}  // namespace unirecord::gpu
