// Test helpers of the device tests (device_batches_test on CUDA,
// device_batches_protocol_test on every device): pseudo-random image bytes
// and what the conversion must make of them. Not library code.
#ifndef UNIRECORD_SRC_GPU_DEVICE_TESTING_H_
#define UNIRECORD_SRC_GPU_DEVICE_TESTING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/device_batches.h"
#include "gpu/host_convert.h"

namespace unirecord::gpu {

// `bytes` pseudo-random bytes (xorshift32 from `seed`).
inline std::vector<uint8_t> TestPattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> v(bytes);
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x);
  }
  return v;
}

// What the conversion of `count` uint8 NHWC images must produce (its CPU
// reference, which the host device runs), as floats.
inline std::vector<float> ReferenceConversion(const std::vector<uint8_t>& nhwc, size_t count, int h, int w,
                                              const CudaOptions& o) {
  std::vector<uint8_t> converted(nhwc.size() * DTypeBytes(o.dtype));
  ConvertOnHost(nhwc.data(), converted.data(), count, h, w, o);
  std::vector<float> out(nhwc.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = ConvertedValue(converted.data(), i, o.dtype);
  return out;
}

}  // namespace unirecord::gpu

#endif  // UNIRECORD_SRC_GPU_DEVICE_TESTING_H_
