// The Loader's device stage: a finished batch's images and numeric fields
// go up to the device (LoaderOptions::cuda) through gpu::DeviceBatches, CUDA
// or the host device; everything before it is the same for both, and for the
// CPU path. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_DEVICE_STAGE_H_
#define UNIRECORD_SRC_PIPELINE_DEVICE_STAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/device_batches.h"
#include "unirecord/cuda.h"
#include "unirecord/loader.h"
#include "unirecord/status.h"

namespace unirecord::pipeline {

class DeviceStage {
 public:
  // `slots` batch slots of up to `batch_size` samples of `images_per_sample`
  // images of height x width (0: no images). A clip loader's sample is one
  // image per clip, its frames one above the other (height T * size), so
  // that the conversion to NCHW makes each clip [3, T, size, size].
  static Result<std::unique_ptr<DeviceStage>> Create(const CudaOptions& options, size_t slots, size_t batch_size,
                                                     int height, int width, size_t images_per_sample = 1);

  // The slot's host buffer of uint8 NHWC images (pinned on CUDA).
  uint8_t* host_images(size_t slot) const { return batches_->host(slot); }
  const void* device_images(size_t slot) const { return batches_->device_output(slot); }
  void* ready_event(size_t slot) const { return batches_->ready_event(slot); }

  // Queues the upload of the slot's `count` images and its numeric fields
  // (values, lengths, offsets), and points each field's device_* members
  // at their copies. Thread-safe for distinct slots.
  Status Upload(size_t slot, size_t count, std::vector<BatchField>& fields);
  // The slot is free again: its last upload has left the host buffers, and
  // the device buffers are rewritten only after the consumer is done.
  Status Recycle(size_t slot) { return batches_->Recycle(slot); }
  Status WaitOn(size_t slot, void* stream) const { return batches_->WaitOn(slot, stream); }
  Status Synchronize(size_t slot) const { return batches_->Synchronize(slot); }

 private:
  DeviceStage(std::unique_ptr<gpu::DeviceBatches> batches, size_t images_per_sample)
      : batches_(std::move(batches)), images_per_sample_(images_per_sample) {}
  std::unique_ptr<gpu::DeviceBatches> batches_;
  size_t images_per_sample_;
};

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_DEVICE_STAGE_H_
