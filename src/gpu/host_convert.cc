#include "gpu/host_convert.h"

#include <array>
#include <cmath>
#include <cstring>

#include "unirecord/schema.h"

namespace unirecord::gpu {

float ConvertedValue(const void* converted, size_t index, DeviceDType dtype) {
  const uint8_t* bytes = static_cast<const uint8_t*>(converted);
  switch (dtype) {
    case DeviceDType::kUint8: return bytes[index];
    case DeviceDType::kFloat16: {
      uint16_t half;
      std::memcpy(&half, bytes + 2 * index, sizeof half);
      return HalfToFloat(half);
    }
    case DeviceDType::kFloat32: {
      float value;
      std::memcpy(&value, bytes + 4 * index, sizeof value);
      return value;
    }
  }
  return NAN;
}

namespace {

// One table per channel, by byte: the kernel's value, already stored as T.
template <typename T>
void ConvertWith(const uint8_t* input, T* output, size_t count, size_t plane, const CudaOptions& o) {
  const bool normalize = o.normalize && o.dtype != DeviceDType::kUint8;
  std::array<std::array<T, 256>, 3> table;
  for (int c = 0; c < 3; ++c) {
    const float inv_std = 1.0f / o.std[c];
    for (int b = 0; b < 256; ++b) {
      const float v = normalize ? (static_cast<float>(b) - o.mean[c]) * inv_std : static_cast<float>(b);
      if constexpr (sizeof(T) == 2) {
        table[c][b] = FloatToHalf(v);
      } else {
        table[c][b] = static_cast<T>(v);
      }
    }
  }
  if (o.layout == ImageLayout::kNHWC) {
    for (size_t i = 0; i < count * plane * 3; i += 3) {
      output[i] = table[0][input[i]];
      output[i + 1] = table[1][input[i + 1]];
      output[i + 2] = table[2][input[i + 2]];
    }
    return;
  }
  for (size_t n = 0; n < count; ++n) {
    const uint8_t* in = input + n * plane * 3;
    T* r = output + n * plane * 3;
    T* g = r + plane;
    T* b = g + plane;
    for (size_t p = 0; p < plane; ++p) {
      r[p] = table[0][in[3 * p]];
      g[p] = table[1][in[3 * p + 1]];
      b[p] = table[2][in[3 * p + 2]];
    }
  }
}

}  // namespace

void ConvertOnHost(const uint8_t* input, void* output, size_t count, int height, int width,
                   const CudaOptions& options) {
  const size_t plane = size_t(height) * size_t(width);
  switch (options.dtype) {
    case DeviceDType::kUint8: ConvertWith(input, static_cast<uint8_t*>(output), count, plane, options); break;
    case DeviceDType::kFloat16: ConvertWith(input, static_cast<uint16_t*>(output), count, plane, options); break;
    case DeviceDType::kFloat32: ConvertWith(input, static_cast<float*>(output), count, plane, options); break;
  }
}

}  // namespace unirecord::gpu
