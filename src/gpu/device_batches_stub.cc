// device_batches.h in a build without CUDA (no nvcc, or
// -DUNIRECORD_ENABLE_CUDA=OFF): no devices, and every call that would need
// one fails with NotSupported. The Loader refuses CudaOptions::device >= 0
// before it gets here (BuiltWithCuda()).
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

Result<std::unique_ptr<DeviceBatches>> DeviceBatches::Create(const CudaOptions&, size_t, size_t, int, int) {
  return NotBuilt("device batch buffers");
}

// Never called: Create makes no DeviceBatches here.
DeviceBatches::~DeviceBatches() = default;
Status DeviceBatches::Upload(size_t, size_t, std::vector<FieldUpload>*) { return NotBuilt("batch upload"); }
Status DeviceBatches::Recycle(size_t) { return NotBuilt("batch recycle"); }

Status StreamWaitEvent(void*, void*) { return NotBuilt("waiting on a CUDA event"); }
Status EventSynchronize(void*) { return NotBuilt("waiting on a CUDA event"); }

Status LaunchConvert(const uint8_t*, void*, size_t, int, int, const CudaOptions&, void*) {
  return NotBuilt("the conversion kernel");
}

}  // namespace gpu
}  // namespace unirecord
