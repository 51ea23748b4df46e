#include "pipeline/device_stage.h"

namespace unirecord::pipeline {

Result<std::unique_ptr<DeviceStage>> DeviceStage::Create(const CudaOptions& options, size_t slots, size_t batch_size,
                                                         int height, int width, size_t images_per_sample) {
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<gpu::DeviceBatches> batches,
                        gpu::DeviceBatches::Create(options, slots, batch_size * images_per_sample, height, width));
  return std::unique_ptr<DeviceStage>(new DeviceStage(std::move(batches), images_per_sample));
}

Status DeviceStage::Upload(size_t slot, size_t count, std::vector<BatchField>& fields) {
  enum class Part { kData, kLengths, kOffsets };
  struct Target {
    BatchField* field;
    Part part;
  };
  std::vector<gpu::DeviceBatches::FieldUpload> uploads;
  std::vector<Target> targets;
  auto add = [&](BatchField& f, Part part, const void* host, const std::vector<int64_t>& shape, size_t width) {
    if (host == nullptr) return;
    size_t elements = 1;
    for (int64_t extent : shape) elements *= static_cast<size_t>(extent);
    uploads.push_back({host, elements * width, nullptr});
    targets.push_back({&f, part});
  };
  for (BatchField& f : fields) {
    f.device_data = nullptr;
    f.device_lengths = nullptr;
    f.device_offsets = nullptr;
    if (f.data == nullptr) continue;  // strings and bytes stay on the host
    add(f, Part::kData, f.data, f.shape, NumericWidth(f.type));
    add(f, Part::kLengths, f.lengths, f.lengths_shape, sizeof(int64_t));
    add(f, Part::kOffsets, f.offsets, {static_cast<int64_t>(count) + 1}, sizeof(int64_t));
  }
  UREC_RETURN_IF_ERROR(batches_->Upload(slot, count * images_per_sample_, &uploads));
  for (size_t i = 0; i < uploads.size(); ++i) {
    BatchField& f = *targets[i].field;
    switch (targets[i].part) {
      case Part::kData: f.device_data = uploads[i].device; break;
      case Part::kLengths: f.device_lengths = static_cast<const int64_t*>(uploads[i].device); break;
      case Part::kOffsets: f.device_offsets = static_cast<const int64_t*>(uploads[i].device); break;
    }
  }
  return Status::OK();
}

}  // namespace unirecord::pipeline
