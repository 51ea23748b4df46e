// The conversion kernel's CPU reference (device_batches.cu's ConvertKernel):
// uint8 NHWC images to CudaOptions::dtype in CudaOptions::layout, normalised
// as (x - mean) * (1 / std) in float, float16 rounded to nearest even. The
// host device (host_device_batches.cc) converts with it, and the GPU tests
// check the kernel against it.
#ifndef UNIRECORD_SRC_GPU_HOST_CONVERT_H_
#define UNIRECORD_SRC_GPU_HOST_CONVERT_H_

#include <cstddef>
#include <cstdint>

#include "unirecord/cuda.h"

namespace unirecord::gpu {

// Writes count * height * width * 3 values of options.dtype to `output`.
void ConvertOnHost(const uint8_t* input, void* output, size_t count, int height, int width,
                   const CudaOptions& options);

// Value `index` of converted images of `dtype` (as ConvertOnHost or the
// kernel wrote them), as a float: for tests that compare conversions.
float ConvertedValue(const void* converted, size_t index, DeviceDType dtype);

}  // namespace unirecord::gpu

#endif  // UNIRECORD_SRC_GPU_HOST_CONVERT_H_
