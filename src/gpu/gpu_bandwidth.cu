#include "gpu/gpu_bandwidth.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include "gpu/cuda_status.h"
#include "gpu/device_batches.h"

namespace unirecord::gpu {
namespace {

// Device and pinned host allocations and events of one measurement, freed
// on every return path.
struct MeasureBuffers {
  void* host = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ~MeasureBuffers() {
    if (host) cudaFreeHost(host);
    if (a) cudaFree(a);
    if (b) cudaFree(b);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

double HostSecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Result<GpuBandwidth> MeasureGpuBandwidth(const CudaOptions& options, size_t count, int height, int width,
                                         int repeats) {
  if (options.device < 0 || options.device >= DeviceCount()) {
    return Status::InvalidArgument("CUDA device " + std::to_string(options.device) + " does not exist");
  }
  UREC_CUDA_RETURN(cudaSetDevice(options.device), "cudaSetDevice");
  const size_t bytes = count * size_t(height) * size_t(width) * 3;
  const size_t out_bytes = bytes * DTypeBytes(options.dtype);
  MeasureBuffers m;
  UREC_CUDA_RETURN(cudaHostAlloc(&m.host, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  UREC_CUDA_RETURN(cudaMalloc(&m.a, out_bytes), "cudaMalloc");
  UREC_CUDA_RETURN(cudaMalloc(&m.b, out_bytes), "cudaMalloc");
  UREC_CUDA_RETURN(cudaEventCreate(&m.start), "cudaEventCreate");
  UREC_CUDA_RETURN(cudaEventCreate(&m.stop), "cudaEventCreate");
  std::memset(m.host, 7, bytes);
  GpuBandwidth result;

  // Runs `body` repeats + 1 times (the first warms up), returns the best seconds.
  auto best_of = [&](auto&& body) -> Result<double> {
    double best = 1e30;
    for (int i = 0; i <= repeats; ++i) {
      UREC_ASSIGN_OR_RETURN(double seconds, body());
      if (i > 0) best = std::min(best, seconds);
    }
    return best;
  };
  auto device_seconds = [&](auto&& enqueue) -> Result<double> {
    UREC_CUDA_RETURN(cudaEventRecord(m.start, 0), "cudaEventRecord");
    UREC_RETURN_IF_ERROR(enqueue());
    UREC_CUDA_RETURN(cudaEventRecord(m.stop, 0), "cudaEventRecord");
    UREC_CUDA_RETURN(cudaEventSynchronize(m.stop), "cudaEventSynchronize");
    float ms = 0;
    UREC_CUDA_RETURN(cudaEventElapsedTime(&ms, m.start, m.stop), "cudaEventElapsedTime");
    return ms * 1e-3;
  };

  UREC_ASSIGN_OR_RETURN(double h2d, best_of([&]() -> Result<double> {
    const auto t0 = std::chrono::steady_clock::now();
    UREC_CUDA_RETURN(cudaMemcpyAsync(m.a, m.host, bytes, cudaMemcpyHostToDevice, 0), "cudaMemcpyAsync");
    UREC_CUDA_RETURN(cudaStreamSynchronize(0), "cudaStreamSynchronize");
    return HostSecondsSince(t0);
  }));
  result.memcpy_h2d = double(bytes) / h2d * 1e-9;

  CudaOptions copy_only = options;
  copy_only.dtype = DeviceDType::kUint8;
  copy_only.layout = ImageLayout::kNHWC;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBatches> batches,
                        DeviceBatches::Create(copy_only, 1, count, height, width));
  std::memset(batches->host(0), 7, bytes);
  UREC_ASSIGN_OR_RETURN(double upload, best_of([&]() -> Result<double> {
    const auto t0 = std::chrono::steady_clock::now();
    UREC_RETURN_IF_ERROR(batches->Upload(0, count));
    UREC_RETURN_IF_ERROR(batches->Synchronize(0));
    return HostSecondsSince(t0);
  }));
  result.upload = double(bytes) / upload * 1e-9;

  UREC_ASSIGN_OR_RETURN(double d2d, best_of([&] {
    return device_seconds([&]() -> Status {
      UREC_CUDA_RETURN(cudaMemcpyAsync(m.b, m.a, out_bytes, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
      return Status::OK();
    });
  }));
  result.memcpy_d2d = 2.0 * double(out_bytes) / d2d * 1e-9;

  UREC_ASSIGN_OR_RETURN(double convert, best_of([&] {
    return device_seconds([&] {
      return LaunchConvert(static_cast<const uint8_t*>(m.a), m.b, count, height, width, options, nullptr);
    });
  }));
  result.convert = double(bytes + out_bytes) / convert * 1e-9;
  return result;
}

}  // namespace unirecord::gpu
