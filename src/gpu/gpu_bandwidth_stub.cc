// gpu_bandwidth.h in a build without CUDA: nothing to measure.
#include "gpu/gpu_bandwidth.h"

namespace unirecord::gpu {

Result<GpuBandwidth> MeasureGpuBandwidth(const CudaOptions&, size_t, int, int, int) {
  return Status::NotSupported("GPU bandwidth: unirecord was built without CUDA");
}

}  // namespace unirecord::gpu
