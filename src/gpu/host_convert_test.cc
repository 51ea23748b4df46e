// The conversion kernel's CPU reference, which the host device runs and the
// CUDA kernel is checked against: the layouts and normalisation worked out
// by hand here (binary16 rounding: format/schema_test.cc).
#include "gpu/host_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "unirecord/schema.h"

namespace unirecord::gpu {
namespace {

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
