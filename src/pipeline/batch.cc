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
    c_ = other.c_;
    other.Clear();
  }
  return *this;
}

Batch::~Batch() { Release(); }

void Batch::Release() {
  if (pool_ != nullptr) std::exchange(pool_, nullptr)->Return(slot_);
  Clear();
}

Batch Batch::Pool::Make(std::shared_ptr<Pool> pool, size_t slot, const Contents& contents) {
  Batch batch;
  batch.pool_ = std::move(pool);
  batch.slot_ = slot;
  batch.c_ = contents;
  return batch;
}

const std::vector<BatchField>& Batch::fields() const {
  static const std::vector<BatchField> kNone;
  return c_.fields != nullptr ? *c_.fields : kNone;
}

const BatchField* Batch::field(std::string_view name) const {
  for (const BatchField& f : fields()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status Batch::WaitOn(void* cuda_stream) const {
  if (c_.ready_event != nullptr) return pool_->WaitOn(slot_, cuda_stream);
  return Status::FailedPrecondition("batch is not on a CUDA device (CudaOptions::device < 0)");
}

Status Batch::Synchronize() const {
  if (c_.ready_event != nullptr) return pool_->Synchronize(slot_);
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
