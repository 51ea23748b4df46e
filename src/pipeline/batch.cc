// Batch, the consumer's handle on a filled buffer of the stage that handed
// it out (batch_stream.h), which gets the buffer back when it is released.
#include <utility>

#include "pipeline/batch_stream.h"

namespace unirecord {

Batch::Batch(Batch&& other) noexcept { *this = std::move(other); }

Batch& Batch::operator=(Batch&& other) noexcept {
  if (this != &other) {
    Release();
    pool_ = std::move(other.pool_);
    slot_ = other.slot_;
    size_ = std::exchange(other.size_, 0);
    epoch_ = other.epoch_;
    index_ = other.index_;
    height_ = other.height_;
    width_ = other.width_;
    layout_ = other.layout_;
    images_ = std::exchange(other.images_, nullptr);
    labels_ = std::exchange(other.labels_, nullptr);
    record_ids_ = std::exchange(other.record_ids_, nullptr);
    crops_ = std::exchange(other.crops_, nullptr);
    fields_ = std::exchange(other.fields_, nullptr);
    device_images_ = std::exchange(other.device_images_, nullptr);
    ready_event_ = std::exchange(other.ready_event_, nullptr);
  }
  return *this;
}

Batch::~Batch() { Release(); }

void Batch::Release() {
  if (pool_ != nullptr) std::exchange(pool_, nullptr)->Return(slot_);
  size_ = 0;
  images_ = nullptr;
  labels_ = nullptr;
  record_ids_ = nullptr;
  crops_ = nullptr;
  fields_ = nullptr;
  device_images_ = nullptr;
  ready_event_ = nullptr;
}

Batch Batch::Pool::Make(std::shared_ptr<Pool> pool, size_t slot, const Contents& c) {
  Batch batch;
  batch.pool_ = std::move(pool);
  batch.slot_ = slot;
  batch.size_ = c.size;
  batch.epoch_ = c.epoch;
  batch.index_ = c.index;
  batch.height_ = c.height;
  batch.width_ = c.width;
  batch.layout_ = c.layout;
  batch.images_ = c.images;
  batch.labels_ = c.labels;
  batch.record_ids_ = c.record_ids;
  batch.crops_ = c.crops;
  batch.fields_ = c.fields;
  batch.device_images_ = c.device_images;
  batch.ready_event_ = c.ready_event;
  return batch;
}

const std::vector<BatchField>& Batch::fields() const {
  static const std::vector<BatchField> kNone;
  return fields_ != nullptr ? *fields_ : kNone;
}

const BatchField* Batch::field(std::string_view name) const {
  for (const BatchField& f : fields()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status Batch::WaitOn(void* cuda_stream) const {
  if (ready_event_ != nullptr) return pool_->WaitOn(slot_, cuda_stream);
  return Status::FailedPrecondition("batch is not on a CUDA device (CudaOptions::device < 0)");
}

Status Batch::Synchronize() const {
  if (ready_event_ != nullptr) return pool_->Synchronize(slot_);
  return Status::FailedPrecondition("batch is not on a CUDA device (CudaOptions::device < 0)");
}

namespace pipeline {

Result<PackState> BatchStream::pack_state() const {
  return Status::FailedPrecondition("loader: pack_state() of a loader that does not pack");
}

Status BatchStream::Restore(const PackState&) {
  return Status::FailedPrecondition("loader: a PackState restores only a packing loader");
}

}  // namespace pipeline
}  // namespace unirecord
