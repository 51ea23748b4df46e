// The Loader's workers: each takes the next samples in sampler order (a
// claim: one sample with an image, up to kMaxSamplesPerClaim without),
// claims a batch slot with a batch's first sample, reads and decodes its
// samples into the slot outside the lock, and the one that writes a batch's
// last sample finishes it: assembles its fields and queues its upload.
#include <algorithm>
#include <array>

#include "io/file.h"
#include "pipeline/sample_batches.h"

namespace unirecord::pipeline {

// The next sample can be loaded: its batch already has a slot, or it starts
// a batch within `prefetch` of the consumer and a slot is free. Batches
// claim slots in order, so when the consumer's next batch has no slot, no
// later batch has one either.
bool SampleBatches::WorkAvailable() const {
  if (next_sample_ >= end_position_) return false;
  const uint64_t offset = next_sample_ - start_position_;
  if (offset % batch_size() != 0) return true;  // its batch claimed a slot with its first sample
  return offset / batch_size() < next_batch_ + options_.prefetch && slots_.free_count() > 0;
}

// Fills sample `offset` of `slot` from sampler position `position` (whose
// record is `record`: RecordAt(position)); with kSkip, bad records are
// replaced by the following positions' records.
Status SampleBatches::LoadSample(uint64_t position, uint64_t record, Slot& slot, size_t offset, uint64_t epoch,
                                 uint64_t seed, DecodeStage& decode, AudioDecode* audio, SampleTimes& times,
                                 uint64_t* skipped, std::string* last_bad) {
  const uint64_t size = sampler_.size();
  for (int attempt = 0;; ++attempt) {
    const uint64_t id = attempt == 0 ? record : RecordAt((position + attempt) % size);
    CropWindow window;
    const Status named = reads_.Read(id, seed, epoch, decode, audio, slot, offset, times, &window);  // naming the record
    if (named.ok()) {
      slot.record_ids[offset] = id;
      const int32_t crop[5] = {window.x, window.y, window.width, window.height, window.flip ? 1 : 0};
      std::copy(crop, crop + 5, slot.crops.begin() + 5 * offset);
      return named;
    }
    if (options_.on_bad_record == OnBadRecord::kRaise) return named;
    ++*skipped;
    *last_bad = named.message();
    if (attempt + 1 >= options_.max_consecutive_bad) {
      return Status(named.code(), std::to_string(attempt + 1) +
                                      " bad records in a row (on_bad_record=skip), the last: " + named.message());
    }
  }
}

void SampleBatches::WorkerLoop(DecodeStage& decode, AudioDecode* audio) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || WorkAvailable(); });
    if (stopping_) return;
    const uint64_t position = next_sample_;
    const uint64_t batch = (position - start_position_) / batch_size();
    const size_t offset = static_cast<size_t>((position - start_position_) % batch_size());
    if (offset == 0) {  // the first sample of the batch claims a free slot
      const size_t claim = slots_.PopFree();
      slots_.Claimed(batch) = claim;
      slots_[claim].Claim(static_cast<size_t>(std::min<uint64_t>(batch_size(), end_position_ - position)));
    }
    const size_t slot_index = slots_.Claimed(batch);
    Slot& slot = slots_[slot_index];
    // Consecutive samples of this batch taken at once (samples_per_claim).
    const size_t take = static_cast<size_t>(
        std::min<uint64_t>(samples_per_claim_, start_position_ + batch * batch_size() + slot.count - position));
    next_sample_ += take;
    const uint64_t my_generation = generation_;
    const uint64_t epoch = sampler_.epoch();
    const uint64_t seed = sampler_.options().seed;
    ++busy_;
    lock.unlock();

    SampleTimes times;
    uint64_t skipped = 0;
    std::string last_bad;
    Status status;
    size_t error_offset = offset;
    const Clock::time_point claim_start = Clock::now();
    {
      // One stat() per shard per claim guards this claim's reads against
      // a shard truncated in place, instead of one per blob read.
      io::TruncationCheckScope check_each_shard_once;
      std::array<uint64_t, kMaxSamplesPerClaim> ids;
      for (size_t k = 0; k < take; ++k) ids[k] = RecordAt(position + k);
      for (size_t k = 0; k < take && status.ok(); ++k) {
        // Samples of microseconds wait mostly on memory: start loading
        // the next ones' entries and values while this one is read.
        if (k + 2 < take) reads_.plan().Prefetch(ids[k + 2], ShardPages::PrefetchStage::kEntry);
        if (k + 1 < take) reads_.plan().Prefetch(ids[k + 1], ShardPages::PrefetchStage::kBlobs);
        status = LoadSample(position + k, ids[k], slot, offset + k, epoch, seed, decode, audio, times, &skipped,
                            &last_bad);
        error_offset = offset + k;
      }
    }
    if (reads_.records()) times.read_s += Seconds(Clock::now() - claim_start) - times.decode_s;

    lock.lock();
    if (generation_ == my_generation) {
      totals_.read_s += times.read_s;
      totals_.decode_s += times.decode_s;
      totals_.frames_decoded += times.frames_decoded;
      slot.skipped += skipped;
      if (!last_bad.empty()) slot.last_bad_record = std::move(last_bad);
      if (!status.ok() && (slot.error.ok() || error_offset < slot.error_offset)) {
        slot.error = std::move(status);
        slot.error_offset = error_offset;
      }
      slot.pending -= take;
      if (slot.pending == 0) {
        FinishBatch(slot_index, lock);
        slot.ready = true;
        batches_completed_.fetch_add(1, std::memory_order_release);
        ready_cv_.notify_all();
      }
    }
    if (--busy_ == 0) idle_cv_.notify_all();
  }
}

// The last sample of the slot's batch is in: assemble its fields, let the
// Records it read go (the shards' pages may be unmapped), and queue its
// upload. The lock is dropped meanwhile (the worker still counts as busy).
void SampleBatches::FinishBatch(size_t slot_index, std::unique_lock<std::mutex>& lock) {
  Slot& slot = slots_[slot_index];
  if (!slot.error.ok() || (device_ == nullptr && fields_.empty() && !options_.audio)) return;
  const size_t count = slot.count;
  lock.unlock();
  fields_.Assemble(count, slot.field_buffers, slot.fields);
  BatchSlots::SizeAudioField(options_, count, slot);
  // Only samples read as a Record have one (read_records); the image-only
  // path fills none.
  for (std::optional<Record>& record : slot.records) record.reset();
  Status uploaded;
  Clock::duration took{};
  if (device_ != nullptr) {
    const Clock::time_point t0 = Clock::now();
    uploaded = device_->Upload(slot_index, count, slot.fields);
    took = Clock::now() - t0;
  }
  lock.lock();
  totals_.upload_s += Seconds(took);
  if (device_ != nullptr && uploaded.ok()) ++totals_.uploads;
  if (!uploaded.ok()) slot.error = std::move(uploaded);
}

}  // namespace unirecord::pipeline

