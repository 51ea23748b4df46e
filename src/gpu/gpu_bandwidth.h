// GPU transfer-rate measurement for benchmarks and the GPU tests. Part of the
// internal unirecord_testing library, not of the installed one:
// gpu_bandwidth.cu with CUDA, gpu_bandwidth_stub.cc (NotSupported) without.
#ifndef UNIRECORD_SRC_GPU_GPU_BANDWIDTH_H_
#define UNIRECORD_SRC_GPU_GPU_BANDWIDTH_H_

#include <cstddef>

#include "unirecord/cuda.h"
#include "unirecord/status.h"

namespace unirecord::gpu {

// Transfer rates on `options.device` for batches of `count` images of
// height x width, best of `repeats`, all in GB/s:
//  - memcpy_h2d: a plain pinned cudaMemcpyAsync of the batch's uint8 bytes;
//  - upload: DeviceBatches::Upload of the same bytes (copy only, no kernel);
//  - memcpy_d2d: a device-to-device copy, counting bytes read plus written;
//  - convert: the conversion kernel for `options` (dtype, layout), counting
//    uint8 bytes read plus converted bytes written.
// The first two are timed on the host (issue to completion), the last two
// with CUDA events.
struct GpuBandwidth {
  double memcpy_h2d = 0;
  double upload = 0;
  double memcpy_d2d = 0;
  double convert = 0;
};
Result<GpuBandwidth> MeasureGpuBandwidth(const CudaOptions& options, size_t count, int height, int width,
                                         int repeats);

}  // namespace unirecord::gpu

#endif  // UNIRECORD_SRC_GPU_GPU_BANDWIDTH_H_
