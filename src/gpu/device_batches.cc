// What both devices of device_batches.h share: the choice between them and
// the layout of a batch's field ranges.
#include "gpu/device_batches.h"

#include <algorithm>
#include <cstring>

namespace unirecord::gpu {

Result<std::unique_ptr<DeviceBatches>> DeviceBatches::Create(const CudaOptions& options, size_t slots,
                                                             size_t max_batch, int height, int width) {
  if (options.host_emulation) return CreateHostBatches(options, slots, max_batch, height, width);
  return CreateCudaBatches(options, slots, max_batch, height, width);
}

Status CopyDeviceToHost(const CudaOptions& options, const void* device, void* host, size_t bytes) {
  if (!options.host_emulation) return CudaCopyToHost(options.device, device, host, bytes);
  if (bytes > 0) std::memcpy(host, device, bytes);
  return Status::OK();
}

namespace {

constexpr size_t kFieldAlign = 256;

size_t AlignUp(size_t n) { return (n + kFieldAlign - 1) / kFieldAlign * kFieldAlign; }

}  // namespace

FieldStaging::FieldStaging(const std::vector<DeviceBatches::FieldUpload>& fields) {
  offsets_.reserve(fields.size());
  for (const DeviceBatches::FieldUpload& f : fields) {
    bytes_ = AlignUp(bytes_);
    offsets_.push_back(bytes_);
    bytes_ += f.bytes;
  }
}

void FieldStaging::Stage(std::vector<DeviceBatches::FieldUpload>* fields, uint8_t* staging,
                         const uint8_t* device_buffer) const {
  for (size_t i = 0; i < fields->size(); ++i) {
    DeviceBatches::FieldUpload& f = (*fields)[i];
    if (f.bytes > 0) std::memcpy(staging + offsets_[i], f.host, f.bytes);
    f.device = device_buffer + offsets_[i];
  }
}

size_t FieldStaging::GrownCapacity(size_t capacity, size_t needed) {
  return std::max({needed, 2 * capacity, size_t{1} << 16});
}

}  // namespace unirecord::gpu
