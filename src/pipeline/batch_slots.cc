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

Status BatchSlots::AllocateClips(size_t batch_size, const LoaderOptions& options) {
  const size_t clips = options.clip ? size_t(options.clip->clips_per_video) : 1;
  try {
    for (Slot& slot : slots_) {
      if (options.clip) {
        slot.frame_pts.resize(batch_size * options.clip->sample_frames());
        slot.clip_starts.resize(batch_size * clips);
      }
      if (!options.audio) continue;
      const AudioClipOptions& a = *options.audio;
      slot.audio.resize((batch_size * clips * a.sample_bytes() + sizeof(float) - 1) / sizeof(float));
      slot.audio_lengths.resize(batch_size * clips);
      BatchField field;
      field.name = a.field;
      field.type = a.dtype == media::SampleType::kInt16 ? FieldType::kInt16 : FieldType::kFloat32;
      field.kind = FieldKind::kFixedArray;
      field.data = slot.audio.data();
      field.lengths = slot.audio_lengths.data();
      slot.fields.push_back(std::move(field));
      SizeAudioField(options, batch_size, slot);
    }
  } catch (const std::bad_alloc&) {
    return Status::InvalidArgument("loader: cannot allocate the clips' and audio windows' batch buffers "
                                   "(batch_size, frames, seconds, prefetch)");
  }
  return Status::OK();
}

void BatchSlots::SizeAudioField(const LoaderOptions& options, size_t count, Slot& slot) {
  if (!options.audio) return;
  BatchField& field = slot.fields.back();
  const int64_t n = static_cast<int64_t>(count);
  const int64_t channels = options.audio->channels, frames = static_cast<int64_t>(options.audio->window_frames());
  if (options.clip && options.clip->clips_per_video > 1) {
    const int64_t k = options.clip->clips_per_video;
    field.shape = {n, k, channels, frames};
    field.lengths_shape = {n, k};
  } else {
    field.shape = {n, channels, frames};
    field.lengths_shape = {n};
  }
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
