// The Loader's workers: each takes the next samples in sampler order (a
// claim: one sample with an image, up to kMaxSamplesPerClaim without),
// claims a batch slot with a batch's first sample, reads and decodes its
// samples into the slot outside the lock, and the one that writes a batch's
// last sample finishes it: assembles its fields and queues its upload.
#include <algorithm>
#include <array>

#include "io/file.h"
#include "pipeline/loader_impl.h"

namespace unirecord {

using pipeline::Clock;
using pipeline::Seconds;

// The next sample can be loaded: its batch already has a slot, or it starts
// a batch within `prefetch` of the consumer and a slot is free. Batches
// claim slots in order, so when the consumer's next batch has no slot, no
// later batch has one either.
bool Loader::Impl::WorkAvailable() const {
  if (next_sample >= end_position) return false;
  const uint64_t offset = next_sample - start_position;
  if (offset % batch_size() != 0) return true;  // its batch claimed a slot with its first sample
  return offset / batch_size() < next_batch + options.prefetch && slots.free_count() > 0;
}

// Fills sample `offset` of `slot` from sampler position `position` (whose
// record is `record`: RecordAt(position)); with kSkip, bad records are
// replaced by the following positions' records.
Status Loader::Impl::LoadSample(uint64_t position, uint64_t record, Slot& slot, size_t offset, uint64_t epoch,
                                uint64_t seed, SampleDecoder& decoder, SampleTimes& times, uint64_t* skipped,
                                std::string* last_bad) {
  uint8_t* out = slot.images + offset * image_bytes;
  int64_t* label = &slot.labels[offset];
  const uint64_t size = sampler.size();
  for (int attempt = 0;; ++attempt) {
    const uint64_t id = attempt == 0 ? record : RecordAt((position + attempt) % size);
    CropWindow window;
    // Errors name the record (and its path).
    Status named;
    if (read_records) {
      named = ReadRecord(id, slot, offset, epoch, seed, decoder, times, &window);
    } else {
      const auto [k, in_dataset] = reads.Locate(id);
      named = decoder.DecodeRecord(reads.source(k), in_dataset, seed, epoch, out, image_bytes, label, &times, &window);
    }
    if (named.ok()) {
      slot.record_ids[offset] = id;
      const int32_t crop[5] = {window.x, window.y, window.width, window.height, window.flip ? 1 : 0};
      std::copy(crop, crop + 5, slot.crops.begin() + 5 * offset);
      return named;
    }
    if (options.on_bad_record == OnBadRecord::kRaise) return named;
    ++*skipped;
    *last_bad = named.message();
    if (attempt + 1 >= options.max_consecutive_bad) {
      return Status(named.code(), std::to_string(attempt + 1) +
                                      " bad records in a row (on_bad_record=skip), the last: " + named.message());
    }
  }
}

// Sample `offset` of `slot` from one Record of mixture id `id`, read for the
// fields used (ReadPlan): the image (its window into *window), the label and
// the batched fields. Adds the decode's time to times.decode_s; WorkerLoop
// counts the rest of a claim as read time (two clock reads per sample would
// be a tenth of a token sample's cost).
Status Loader::Impl::ReadRecord(uint64_t id, Slot& slot, size_t offset, uint64_t epoch, uint64_t seed,
                                SampleDecoder& decoder, SampleTimes& times, CropWindow* window) {
  const std::pair<size_t, uint64_t> at = reads.Locate(id);
  const SampleSource& source = reads.source(at.first);
  const uint64_t in_dataset = at.second;  // what the crop is keyed and errors named with
  double decode_s = 0;
  Status status = [&]() -> Status {
    UREC_ASSIGN_OR_RETURN(Record record, reads.Read(id));
    if (source.has_labels()) {
      UREC_ASSIGN_OR_RETURN(slot.labels[offset], record.GetInt64(label_index));
    }
    pipeline::SampleImage sample;
    if (source.has_image()) {
      UREC_ASSIGN_OR_RETURN(std::string_view image, record.GetBytes(image_index));
      const Clock::time_point t1 = Clock::now();
      UREC_RETURN_IF_ERROR(
          decoder.Decode(image, seed, epoch, in_dataset, slot.images + offset * image_bytes, image_bytes, window));
      decode_s = Seconds(Clock::now() - t1);
      sample.window = *window;
      sample.output_size = options.image_size;
      if (fields.has_masks()) {  // masks must be the size the window was planned on
        UREC_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(image));
        sample.width = info.window_width(options.decode.apply_exif);
        sample.height = info.window_height(options.decode.apply_exif);
      }
    }
    UREC_RETURN_IF_ERROR(fields.ReadSample(record, source.has_image() ? &sample : nullptr, offset, slot.field_buffers));
    slot.records[offset].emplace(std::move(record));
    return Status::OK();
  }();
  times.decode_s += decode_s;
  if (!status.ok()) return status.WithContext(source.Describe(in_dataset));
  return status;
}

void Loader::Impl::WorkerLoop(SampleDecoder& decoder) {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    work_cv.wait(lock, [&] { return stopping || WorkAvailable(); });
    if (stopping) return;
    const uint64_t position = next_sample;
    const uint64_t batch = (position - start_position) / batch_size();
    const size_t offset = static_cast<size_t>((position - start_position) % batch_size());
    if (offset == 0) {  // the first sample of the batch claims a free slot
      const size_t claim = slots.PopFree();
      slots.Claimed(batch) = claim;
      slots[claim].Claim(static_cast<size_t>(std::min<uint64_t>(batch_size(), end_position - position)));
    }
    const size_t slot_index = slots.Claimed(batch);
    Slot& slot = slots[slot_index];
    // Consecutive samples of this batch taken at once (samples_per_claim).
    const size_t take = static_cast<size_t>(
        std::min<uint64_t>(samples_per_claim, start_position + batch * batch_size() + slot.count - position));
    next_sample += take;
    const uint64_t my_generation = generation;
    const uint64_t epoch = sampler.epoch();
    const uint64_t seed = sampler.options().seed;
    ++busy;
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
      std::array<uint64_t, pipeline::kMaxSamplesPerClaim> ids;
      for (size_t k = 0; k < take; ++k) ids[k] = RecordAt(position + k);
      for (size_t k = 0; k < take && status.ok(); ++k) {
        // Samples of microseconds wait mostly on memory: start loading
        // the next ones' entries and values while this one is read.
        if (k + 2 < take) reads.Prefetch(ids[k + 2], ShardPages::PrefetchStage::kEntry);
        if (k + 1 < take) reads.Prefetch(ids[k + 1], ShardPages::PrefetchStage::kBlobs);
        status = LoadSample(position + k, ids[k], slot, offset + k, epoch, seed, decoder, times, &skipped, &last_bad);
        error_offset = offset + k;
      }
    }
    if (read_records) times.read_s += Seconds(Clock::now() - claim_start) - times.decode_s;

    lock.lock();
    if (generation == my_generation) {
      totals.read_s += times.read_s;
      totals.decode_s += times.decode_s;
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
        batches_completed.fetch_add(1, std::memory_order_release);
        ready_cv.notify_all();
      }
    }
    if (--busy == 0) idle_cv.notify_all();
  }
}

// The last sample of the slot's batch is in: assemble its fields, let the
// Records it read go (the shards' pages may be unmapped), and queue its
// upload. The lock is dropped meanwhile (the worker still counts as busy).
void Loader::Impl::FinishBatch(size_t slot_index, std::unique_lock<std::mutex>& lock) {
  Slot& slot = slots[slot_index];
  if (!slot.error.ok() || (device == nullptr && fields.empty())) return;
  const size_t count = slot.count;
  lock.unlock();
  fields.Assemble(count, slot.field_buffers, slot.fields);
  // Only samples read as a Record have one (read_records); the image-only
  // path fills none.
  for (std::optional<Record>& record : slot.records) record.reset();
  Status uploaded;
  Clock::duration took{};
  if (device != nullptr) {
    const Clock::time_point t0 = Clock::now();
    uploaded = device->Upload(slot_index, count, slot.fields);
    took = Clock::now() - t0;
  }
  lock.lock();
  totals.upload_s += Seconds(took);
  if (device != nullptr && uploaded.ok()) ++totals.uploads;
  if (!uploaded.ok()) slot.error = std::move(uploaded);
}

}  // namespace unirecord
