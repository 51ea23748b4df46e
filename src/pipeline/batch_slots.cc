#include "pipeline/batch_slots.h"

#include <new>

#include "pipeline/device_stage.h"

namespace unirecord::pipeline {

void Slot::Claim(size_t samples) {
  count = samples;
  pending = samples;
  ready = false;
  error = Status::OK();
  error_offset = 0;
  skipped = 0;
  last_bad_record.clear();
}

Status BatchSlots::Allocate(int prefetch, size_t batch_size, size_t image_bytes, bool read_records,
                            const BatchFields& fields, DeviceStage* device) {
  const size_t count = static_cast<size_t>(prefetch) + 1;
  slots_.resize(count);
  free_ring_.resize(count);
  for (size_t i = 0; i < count; ++i) PushFree(i);
  claimed_.assign(static_cast<size_t>(prefetch), kNone);
  for (size_t i = 0; i < count; ++i) {
    Slot& slot = slots_[i];
    if (device != nullptr) slot.images = device->host_images(i);
    try {
      if (slot.images == nullptr) {
        slot.owned_images.reset(new uint8_t[batch_size * image_bytes]);
        slot.images = slot.owned_images.get();
      }
      slot.labels.resize(batch_size);
      slot.record_ids.resize(batch_size);
      slot.crops.resize(batch_size * 5);
      slot.records.resize(read_records ? batch_size : 0);
      fields.Allocate(batch_size, &slot.field_buffers, &slot.fields);
    } catch (const std::bad_alloc&) {
      return Status::InvalidArgument("loader: cannot allocate " + std::to_string(count) + " batch buffers of " +
                                     std::to_string(batch_size) + " images of " + std::to_string(image_bytes) +
                                     " bytes (batch_size, size, prefetch)");
    }
  }
  return Status::OK();
}

void BatchSlots::PushFree(size_t index) {
  free_ring_[(free_head_ + free_count_) % free_ring_.size()] = index;
  ++free_count_;
}

size_t BatchSlots::PopFree() {
  const size_t index = free_ring_[free_head_];
  free_head_ = (free_head_ + 1) % free_ring_.size();
  --free_count_;
  return index;
}

size_t BatchSlots::HeldCount() const {
  size_t held = 0;
  for (const Slot& slot : slots_) held += slot.held ? 1 : 0;
  return held;
}

}  // namespace unirecord::pipeline
