// device_batches.h's CUDA half in a build without CUDA (no nvcc, or
// -DUNIRECORD_ENABLE_CUDA=OFF): no devices, and every call that would need
// one fails with NotSupported. The Loader refuses CudaOptions::device >= 0
// (but for the host device) before it gets here (BuiltWithCuda()).
#include "gpu/device_batches.h"

#include <string>

namespace unirecord {

bool BuiltWithCuda() { return false; }

namespace gpu {
namespace {

Status NotBuilt(const char* what) {
  return Status::NotSupported(std::string(what) + ": unirecord was built without CUDA");
}

}  // namespace

int DeviceCount() { return 0; }

Result<std::unique_ptr<DeviceBatches>> CreateCudaBatches(const CudaOptions&, size_t, size_t, int, int) {
  return NotBuilt("device batch buffers");
}

Status CudaCopyToHost(int, const void*, void*, size_t) { return NotBuilt("copying from a CUDA device"); }

Status LaunchConvert(const uint8_t*, void*, size_t, int, int, const CudaOptions&, void*) {
  return NotBuilt("the conversion kernel");
}

}  // namespace gpu
}  // namespace unirecord
