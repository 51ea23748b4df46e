// The Loader's pool of batch buffers (prefetch + 1 slots) and the state each
// is in: free, claimed by a batch being filled, or held by the consumer. A
// batch's life, in the order of the files: a slot is claimed here, filled by
// the workers (loader_workers.cc), its fields assembled (batch_fields.h),
// uploaded on a device (device_stage.h), handed out (loader.cc) and released
// back here when the consumer drops the Batch (batch.cc). Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_BATCH_SLOTS_H_
#define UNIRECORD_SRC_PIPELINE_BATCH_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/batch_fields.h"
#include "unirecord/dataset.h"
#include "unirecord/loader.h"
#include "unirecord/status.h"

namespace unirecord::pipeline {

class DeviceStage;

// One batch buffer. At any time it is in exactly one of three states: free
// (in the free ring), claimed by a batch of the current run that is not
// handed out yet (BatchSlots::Claimed), or held by the consumer (`held`,
// possibly by a batch of an earlier epoch or run).
struct Slot {
  uint8_t* images = nullptr;                // owned_images, or the device's host buffer
  std::unique_ptr<uint8_t[]> owned_images;  // loaders without a device
  std::vector<int64_t> labels;
  std::vector<uint64_t> record_ids;
  std::vector<int32_t> crops;               // 5 per sample (Batch::crops)
  std::vector<FieldBuffer> field_buffers;   // LoaderOptions::fields
  std::vector<std::optional<Record>> records;  // sample i's (read_records), which field_buffers may view until assembled
  std::vector<BatchField> fields;
  // A clip loader's (LoaderOptions::clip): each sample's frames' pts and
  // clips' starts (Batch::frame_pts, clip_starts).
  std::vector<int64_t> frame_pts;
  std::vector<double> clip_starts;
  // LoaderOptions::audio: each sample's windows and their valid frames; the
  // last of `fields` shows them.
  std::vector<float> audio;  // float-aligned bytes, of the window's dtype
  std::vector<int64_t> audio_lengths;
  size_t count = 0;    // samples in the batch filled here
  size_t pending = 0;  // samples not yet written
  bool ready = false;
  bool held = false;   // by the consumer
  Status error;        // the first bad record (kRaise) or a failed upload
  size_t error_offset = 0;
  uint64_t skipped = 0;
  std::string last_bad_record;

  // Starts a batch of `samples` in this slot (its first sample was claimed).
  void Claim(size_t samples);
};

// The slots and their rings. Guarded by the loader's mutex. Fixed size:
// nothing is allocated per batch.
class BatchSlots {
 public:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // prefetch + 1 slots for batches of `batch_size` samples of `image_bytes`
  // each (their images in the device's host buffers when `device` is set),
  // every one free. `read_records`: the samples are read as Records.
  Status Allocate(int prefetch, size_t batch_size, size_t image_bytes, bool read_records, const BatchFields& fields,
                  DeviceStage* device);

  // Every slot's rows for the clips and audio windows of `options` (after
  // Allocate): Slot::frame_pts, clip_starts, audio, audio_lengths, and the
  // audio field at the end of Slot::fields.
  Status AllocateClips(size_t batch_size, const LoaderOptions& options);
  // The batch's audio field, if any, sized for `count` samples.
  static void SizeAudioField(const LoaderOptions& options, size_t count, Slot& slot);

  size_t size() const { return slots_.size(); }
  Slot& operator[](size_t index) { return slots_[index]; }
  const Slot& operator[](size_t index) const { return slots_[index]; }

  // Free slots, a FIFO ring: the least recently released buffer is refilled
  // first (most slack for the consumer's stream on a device).
  size_t free_count() const { return free_count_; }
  void PushFree(size_t index);
  size_t PopFree();

  // The slot of run batch b (not yet handed out), or kNone; only batches in
  // [next_batch, next_batch + prefetch) can have one.
  size_t& Claimed(uint64_t batch) { return claimed_[batch % claimed_.size()]; }
  // Every claimed slot index (kNone where none), to free them at a new run.
  std::vector<size_t>& claimed() { return claimed_; }

  size_t HeldCount() const;

 private:
  std::vector<Slot> slots_;
  std::vector<size_t> free_ring_;
  size_t free_head_ = 0;
  size_t free_count_ = 0;
  std::vector<size_t> claimed_;
};

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_BATCH_SLOTS_H_
