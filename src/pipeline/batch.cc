// Batch, the consumer's handle on a filled slot, and what its release does
// on the loader's side: the slot is free again (after its device copy left
// the host buffer).
#include <utility>

#include "pipeline/loader_impl.h"

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

void Loader::Impl::Return(size_t slot_index) {
  Status recycled;
  if (device != nullptr) recycled = device->Recycle(slot_index);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    Slot& slot = slots[slot_index];
    slot.held = false;
    slot.ready = false;
    slots.PushFree(slot_index);
    if (!recycled.ok() && sticky_error.ok()) sticky_error = recycled;
    wake = WorkAvailable();
  }
  if (wake) work_cv.notify_all();
}

Status Loader::Impl::WaitOn(size_t slot_index, void* cuda_stream) const {
  return device->WaitOn(slot_index, cuda_stream);
}

Status Loader::Impl::Synchronize(size_t slot_index) const { return device->Synchronize(slot_index); }

}  // namespace unirecord
