#include "unirecord/loader.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "dataset/dataset_impl.h"
#include "gpu/device_batches.h"
#include "io/file.h"
#include "pipeline/batch_fields.h"
#include "util/threads.h"

namespace unirecord {

// The loader side of a Batch: where its buffer goes back.
struct Batch::Pool {
  virtual ~Pool() = default;
  virtual void Return(size_t slot) = 0;
  // The slot's device batch (a device is set): Batch::WaitOn, Synchronize.
  virtual Status WaitOn(size_t slot, void* cuda_stream) const = 0;
  virtual Status Synchronize(size_t slot) const = 0;
};

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

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

constexpr size_t kNoSlot = static_cast<size_t>(-1);

// Loader::Impl::samples_per_claim for samples without an image (and the
// most it can be).
constexpr size_t kSamplesPerClaimWithoutImages = 16;
constexpr size_t kMaxSamplesPerClaim = kSamplesPerClaimWithoutImages;

}  // namespace

struct Loader::Impl final : Batch::Pool {
  // One batch buffer of the pool. At any time it is in exactly one of three
  // states: free (in `free_slots`), claimed by a batch of the current run
  // that is not handed out yet (in `claimed`), or held by the consumer
  // (`held`, possibly by a batch of an earlier epoch/run).
  struct Slot {
    uint8_t* images = nullptr;
    std::unique_ptr<uint8_t[]> owned_images;  // host-only loaders
    std::vector<int64_t> labels;
    std::vector<uint64_t> record_ids;
    std::vector<int32_t> crops;                       // 5 per sample (Batch::crops)
    std::vector<pipeline::FieldBuffer> field_buffers;  // LoaderOptions::fields
    std::vector<std::optional<Record>> records;  // sample i's, which field_buffers may view until assembled
    std::vector<BatchField> fields;
    size_t count = 0;    // samples in the batch filled here
    size_t pending = 0;  // samples not yet written
    bool ready = false;
    bool held = false;   // by the consumer
    Status error;               // the first bad record (kRaise) or a failed upload
    size_t error_offset = 0;
    uint64_t skipped = 0;
    std::string last_bad_record;
  };

  // The datasets (several: a mixture, whose sampler ids number their records
  // one after another from first_ids[k]).
  std::vector<SampleSource> sources;
  std::vector<uint64_t> first_ids;
  LoaderOptions options;
  pipeline::BatchFields fields;
  // Samples go through a Record (one read of every blob and the scalar page)
  // when fields are batched or there is no image; else the image and label
  // are read alone (SampleDecoder::DecodeRecord).
  bool read_records = false;
  size_t image_index = 0;
  size_t label_index = 0;
  std::vector<std::unique_ptr<SampleDecoder>> decoders;  // one per worker thread
  size_t image_bytes = 0;  // one sample: image_size^2 * 3
  // Samples a worker takes per trip through the lock: 1 when each decodes an
  // image (milliseconds: finer is better balanced); more without images,
  // where a sample costs microseconds and the lock round trip would be a
  // large share of it.
  size_t samples_per_claim = 1;
  int thread_count = 1;
  std::unique_ptr<gpu::DeviceBatches> device;  // CudaOptions::device >= 0

  std::mutex mu;
  std::condition_variable work_cv;   // workers: work or a free slot appeared
  std::condition_variable ready_cv;  // consumer: a batch completed
  std::condition_variable idle_cv;   // SetEpoch/Restore: the last busy worker finished
  // Batches completed so far (bumped under mu; read without it by a
  // consumer polling for its batch, see AwaitBatchBriefly).
  std::atomic<uint64_t> batches_completed{0};
  // The workers leave a core idle: the consumer polls before it sleeps.
  bool consumer_polls = false;
  // Everything below is guarded by mu. Sampler::At() is called outside the
  // lock, but the sampler changes only while no worker is busy.
  Sampler sampler;
  std::vector<Slot> slots;
  // Free slots, a FIFO ring of capacity slots.size(): the least recently
  // released buffer is refilled first (most slack for the consumer's
  // stream on the GPU path). Fixed size: nothing is allocated per batch.
  std::vector<size_t> free_slots;
  size_t free_head = 0;
  size_t free_count = 0;
  // The slot of run batch b (not yet handed out) at claimed[b % prefetch];
  // only batches in [next_batch, next_batch + prefetch) can have one.
  std::vector<size_t> claimed;
  uint64_t generation = 0;    // bumped when the run restarts; stale work is dropped
  uint64_t start_position = 0;  // sampler position of this run's first sample
  uint64_t base_batches = 0;    // batch number of this run's first batch in the epoch
  uint64_t end_position = 0;    // one past the last sample loaded this epoch
  uint64_t next_sample = 0;     // next sampler position to hand to a worker
  uint64_t next_batch = 0;      // next batch (of this run) for the consumer
  uint64_t run_batches = 0;     // batches in this run
  int busy = 0;
  bool stopping = false;
  Status sticky_error;
  std::vector<std::thread> workers;

  LoaderStats totals;
  Clock::time_point stats_since = Clock::now();

  Impl(Sampler s, std::vector<SampleSource> srcs) : sources(std::move(srcs)), sampler(std::move(s)) {
    uint64_t first = 0;
    for (const SampleSource& source : sources) {
      first_ids.push_back(first);
      first += source.dataset().size();
    }
  }

  ~Impl() override { StopWorkers(); }

  // The Loader is going; batches the consumer holds may outlive it (they
  // share this Impl), so the buffers stay until the last one is released.
  void StopWorkers() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
    }
    work_cv.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
  }

  size_t batch_size() const { return options.batch_size; }

  uint64_t EpochEnd() const {
    const uint64_t size = sampler.size();
    return options.drop_last ? size - size % batch_size() : size;
  }

  void PushFree(size_t slot_index) {
    free_slots[(free_head + free_count) % free_slots.size()] = slot_index;
    ++free_count;
  }

  size_t PopFree() {
    const size_t slot_index = free_slots[free_head];
    free_head = (free_head + 1) % free_slots.size();
    --free_count;
    return slot_index;
  }

  size_t& ClaimedSlot(uint64_t batch) { return claimed[batch % claimed.size()]; }

  // Starts loading from `position` of the current sampler epoch. Caller holds
  // the lock and no worker is busy. Slots claimed by batches of the old run
  // that were never handed out become free; slots the consumer holds stay
  // held (their batches stay valid) until released.
  void StartRun(uint64_t position) {
    ++generation;
    for (size_t& slot_index : claimed) {
      if (slot_index == kNoSlot) continue;
      // The batch may have been uploaded: let the copy leave the pinned
      // buffer before a worker rewrites it.
      if (device != nullptr) {
        Status recycled = device->Recycle(slot_index);
        (void)recycled;  // a failing device fails the next upload too
      }
      slots[slot_index].ready = false;
      PushFree(slot_index);
      slot_index = kNoSlot;
    }
    end_position = EpochEnd();
    start_position = std::min(position, end_position);
    next_sample = start_position;
    next_batch = 0;
    run_batches = (end_position - start_position + batch_size() - 1) / batch_size();
    // The batches all ranks needed for the positions of the epoch's order
    // consumed before this run, rounded up: exact when the state came from
    // the same ranks and batch size.
    const uint64_t per_batch = uint64_t{sampler.options().num_shards} * batch_size();
    base_batches = (sampler.GlobalPosition(start_position) + per_batch - 1) / per_batch;
    sticky_error = Status::OK();
    PlanRemoteReads();
    work_cv.notify_all();
  }

  // A remote dataset downloads shards ahead in this run's order (a pure
  // function of seed and epoch, known before the first read), followed by
  // the next epoch's: the next epoch's first shards download while this one
  // ends instead of stalling its first batch (a plan of an epoch that never
  // comes costs prefetch_shards downloads at most).
  // A mixture plans each remote dataset's own records.
  void PlanRemoteReads() {
    bool any_remote = false;
    for (const SampleSource& source : sources) any_remote = any_remote || source.dataset().is_remote();
    if (!any_remote) return;
    std::vector<std::vector<uint64_t>> ids(sources.size());
    auto add = [&](const Sampler& order, uint64_t begin, uint64_t end) {
      for (uint64_t p = begin; p < end; ++p) {
        const uint64_t id = RecordAt(order, p);
        const size_t k = SourceOf(id);
        if (sources[k].dataset().is_remote()) ids[k].push_back(id - first_ids[k]);
      }
    };
    add(sampler, start_position, end_position);
    Sampler next_epoch = sampler;
    next_epoch.SetEpoch(sampler.epoch() + 1);
    add(next_epoch, 0, EpochEnd());
    for (size_t k = 0; k < sources.size(); ++k) {
      if (sources[k].dataset().is_remote()) sources[k].dataset().PlanReads(ids[k]);
    }
  }

  // The dataset of mixture id `id` (its record: id - first_ids[k]).
  size_t SourceOf(uint64_t id) const {
    return static_cast<size_t>(std::upper_bound(first_ids.begin(), first_ids.end(), id) - first_ids.begin()) - 1;
  }

  // Stops handing out work and waits until no worker is busy. Caller holds `lock`.
  void Quiesce(std::unique_lock<std::mutex>& lock) {
    ++generation;
    next_sample = end_position;
    idle_cv.wait(lock, [&] { return busy == 0; });
  }

  // The next sample can be loaded: its batch already has a slot, or it
  // starts a batch within `prefetch` of the consumer and a slot is free.
  // Batches claim slots in order, so when the consumer's next batch has no
  // slot, no later batch has one either.
  bool WorkAvailable() {
    if (next_sample >= end_position) return false;
    const uint64_t offset = next_sample - start_position;
    if (offset % batch_size() != 0) return true;  // its batch claimed a slot with its first sample
    return offset / batch_size() < next_batch + claimed.size() && free_count > 0;
  }

  uint64_t RecordAt(uint64_t position) const { return RecordAt(sampler, position); }
  uint64_t RecordAt(const Sampler& order, uint64_t position) const {
    const uint64_t id = order.At(position);
    return options.subset ? (*options.subset)[id] : id;
  }

  // Dataset::Impl::Prefetch of mixture id `id`.
  void Prefetch(uint64_t id, Dataset::Impl::PrefetchStage stage) const {
    const size_t k = SourceOf(id);
    sources[k].dataset().impl().Prefetch(id - first_ids[k], stage);
  }

  // Fills sample `offset` of `slot` from sampler position `position` (whose
  // record is `record`: RecordAt(position)); with kSkip, bad records are
  // replaced by the following positions' records.
  Status LoadSample(uint64_t position, uint64_t record, Slot& slot, size_t offset, uint64_t epoch, uint64_t seed,
                    SampleDecoder& decoder, SampleTimes& times,
                    uint64_t* skipped, std::string* last_bad) {
    uint8_t* out = slot.images + offset * image_bytes;
    int64_t* label = &slot.labels[offset];
    const uint64_t size = sampler.size();
    for (int attempt = 0;; ++attempt) {
      const uint64_t id = attempt == 0 ? record : RecordAt((position + attempt) % size);
      const size_t k = SourceOf(id);
      CropWindow window;
      // Errors name the record (and its path).
      Status named = read_records ? ReadRecord(sources[k], id - first_ids[k], slot, offset, epoch, seed, decoder,
                                               times, &window)
                                  : decoder.DecodeRecord(sources[k], id - first_ids[k], seed, epoch, out, image_bytes,
                                                         label, &times, &window);
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
                                        " bad records in a row (on_bad_record=skip), the last: " +
                                        named.message());
      }
    }
  }

  // Sample `offset` of `slot` from one Record: the image (its window into
  // *window), the label and the batched fields. Adds the decode's time to
  // times.decode_s; WorkerLoop counts the rest of a claim as read time (two
  // clock reads per sample would be a tenth of a token sample's cost).
  Status ReadRecord(const SampleSource& source, uint64_t id, Slot& slot, size_t offset, uint64_t epoch, uint64_t seed, SampleDecoder& decoder,
                    SampleTimes& times, CropWindow* window) {
    double decode_s = 0;
    Status status = [&]() -> Status {
      UREC_ASSIGN_OR_RETURN(Record record, source.dataset().Get(id));
      if (source.has_labels()) {
        UREC_ASSIGN_OR_RETURN(slot.labels[offset], record.GetInt64(label_index));
      }
      pipeline::SampleImage sample;
      if (source.has_image()) {
        UREC_ASSIGN_OR_RETURN(std::string_view image, record.GetBytes(image_index));
        const Clock::time_point t1 = Clock::now();
        UREC_RETURN_IF_ERROR(
            decoder.Decode(image, seed, epoch, id, slot.images + offset * image_bytes, image_bytes, window));
        decode_s = Seconds(Clock::now() - t1);
        sample.window = *window;
        sample.output_size = options.image_size;
        if (fields.has_masks()) {  // masks must be the size the window was planned on
          UREC_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(image));
          sample.width = info.window_width(options.decode.apply_exif);
          sample.height = info.window_height(options.decode.apply_exif);
        }
      }
      UREC_RETURN_IF_ERROR(
          fields.ReadSample(record, source.has_image() ? &sample : nullptr, offset, slot.field_buffers));
      slot.records[offset].emplace(std::move(record));
      return Status::OK();
    }();
    times.decode_s += decode_s;
    if (!status.ok()) return status.WithContext(source.Describe(id));
    return status;
  }

  void WorkerLoop(SampleDecoder& decoder) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      work_cv.wait(lock, [&] { return stopping || WorkAvailable(); });
      if (stopping) return;
      const uint64_t position = next_sample;
      const uint64_t batch = (position - start_position) / batch_size();
      const size_t offset = static_cast<size_t>((position - start_position) % batch_size());
      if (offset == 0) {  // the first sample of the batch claims a free slot
        const size_t claim = PopFree();
        ClaimedSlot(batch) = claim;
        Slot& fresh = slots[claim];
        fresh.count = static_cast<size_t>(std::min<uint64_t>(batch_size(), end_position - position));
        fresh.pending = fresh.count;
        fresh.ready = false;
        fresh.error = Status::OK();
        fresh.error_offset = 0;
        fresh.skipped = 0;
        fresh.last_bad_record.clear();
      }
      const size_t slot_index = ClaimedSlot(batch);
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
        std::array<uint64_t, kMaxSamplesPerClaim> ids;
        for (size_t k = 0; k < take; ++k) ids[k] = RecordAt(position + k);
        for (size_t k = 0; k < take && status.ok(); ++k) {
          // Samples of microseconds wait mostly on memory: start loading
          // the next ones' entries and values while this one is read.
          if (k + 2 < take) Prefetch(ids[k + 2], Dataset::Impl::PrefetchStage::kEntry);
          if (k + 1 < take) Prefetch(ids[k + 1], Dataset::Impl::PrefetchStage::kBlobs);
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

  // The last sample of the slot's batch is in: queue its upload. The lock is
  // dropped meanwhile (the worker still counts as busy).
  void FinishBatch(size_t slot_index, std::unique_lock<std::mutex>& lock) {
    Slot& slot = slots[slot_index];
    if (!slot.error.ok() || (device == nullptr && fields.empty())) return;
    const size_t count = slot.count;
    lock.unlock();
    fields.Assemble(count, slot.field_buffers, slot.fields);
    // The shards' pages may go. Only samples read as a Record have one
    // (read_records); the image-only path fills none.
    for (std::optional<Record>& record : slot.records) record.reset();
    if (device == nullptr) {
      lock.lock();
      return;
    }
    const Clock::time_point t0 = Clock::now();
    Status status = UploadBatch(slot_index, count, slot.fields);
    const Clock::duration took = Clock::now() - t0;
    lock.lock();
    totals.upload_s += Seconds(took);
    if (!status.ok()) slot.error = std::move(status);
  }

  // Uploads the slot's images and its numeric fields (values, lengths,
  // offsets), and points each field's device_* members at their copies.
  Status UploadBatch(size_t slot_index, size_t count, std::vector<BatchField>& batch_fields) {
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
    for (BatchField& f : batch_fields) {
      f.device_data = nullptr;
      f.device_lengths = nullptr;
      f.device_offsets = nullptr;
      if (f.data == nullptr) continue;  // strings and bytes stay on the host
      add(f, Part::kData, f.data, f.shape, NumericWidth(f.type));
      add(f, Part::kLengths, f.lengths, f.lengths_shape, sizeof(int64_t));
      add(f, Part::kOffsets, f.offsets, {static_cast<int64_t>(count) + 1}, sizeof(int64_t));
    }
    UREC_RETURN_IF_ERROR(device->Upload(slot_index, count, &uploads));
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

  Status WaitOn(size_t slot_index, void* cuda_stream) const override { return device->WaitOn(slot_index, cuda_stream); }
  Status Synchronize(size_t slot_index) const override { return device->Synchronize(slot_index); }

  void Return(size_t slot_index) override {
    Status recycled;
    if (device != nullptr) recycled = device->Recycle(slot_index);
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      Slot& slot = slots[slot_index];
      slot.held = false;
      slot.ready = false;
      PushFree(slot_index);
      if (!recycled.ok() && sticky_error.ok()) sticky_error = recycled;
      wake = WorkAvailable();
    }
    if (wake) work_cv.notify_all();
  }

  size_t HeldCount() const {
    size_t held = 0;
    for (const Slot& slot : slots) held += slot.held ? 1 : 0;
    return held;
  }

  Result<Batch> Next(std::shared_ptr<Impl> self) {
    std::unique_lock<std::mutex> lock(mu);
    if (!sticky_error.ok()) return sticky_error;
    Batch batch;
    batch.epoch_ = sampler.epoch();
    if (sources[0].has_image()) batch.height_ = batch.width_ = options.image_size;
    batch.layout_ = options.layout;
    if (next_batch >= run_batches) return batch;  // end of the epoch
    const uint64_t run_batch = next_batch;
    if (ClaimedSlot(run_batch) == kNoSlot && free_count == 0) {
      // Unclaimed and nothing free: every buffer is held by the consumer
      // (batches claim slots in order, so no later batch has one).
      return Status::FailedPrecondition("the consumer holds all " + std::to_string(HeldCount()) +
                                        " batch buffers (prefetch + 1 = " + std::to_string(slots.size()) +
                                        "); release one before Next()");
    }
    const Clock::time_point t0 = Clock::now();
    auto batch_ready = [&] {
      const size_t claim = ClaimedSlot(run_batch);
      return claim != kNoSlot && slots[claim].ready;
    };
    if (consumer_polls && !batch_ready()) AwaitBatchBriefly(lock);
    // Releases (from any thread) only add free slots, so this batch gets one.
    ready_cv.wait(lock, batch_ready);
    const size_t slot_index = ClaimedSlot(run_batch);
    Slot& slot = slots[slot_index];
    totals.wait_s += Seconds(Clock::now() - t0);
    totals.skipped += slot.skipped;
    if (!slot.last_bad_record.empty()) totals.last_bad_record = std::move(slot.last_bad_record);
    slot.last_bad_record.clear();
    if (!slot.error.ok()) {
      sticky_error = slot.error;
      return sticky_error;
    }
    slot.held = true;
    ClaimedSlot(run_batch) = kNoSlot;
    ++next_batch;
    ++totals.batches;
    totals.samples += slot.count;
    // The prefetch window moved on: one more batch may claim a slot. A wake
    // costs microseconds on a VM: only when a worker has work now.
    if (WorkAvailable()) work_cv.notify_all();

    batch.pool_ = std::move(self);
    batch.slot_ = slot_index;
    batch.size_ = slot.count;
    batch.index_ = base_batches + run_batch;
    batch.images_ = sources[0].has_image() ? slot.images : nullptr;
    batch.labels_ = sources[0].has_labels() ? slot.labels.data() : nullptr;
    batch.record_ids_ = slot.record_ids.data();
    batch.crops_ = sources[0].has_image() ? slot.crops.data() : nullptr;
    batch.fields_ = &slot.fields;
    if (device != nullptr) {
      batch.device_images_ = device->device_output(slot_index);
      batch.ready_event_ = device->ready_event(slot_index);
    }
    return batch;
  }

  // Polls, with `lock` released, until some batch completes or
  // kConsumerPoll passes. A batch of small samples completes every ~100 us;
  // sleeping on ready_cv instead costs the worker that completes it a futex
  // wake and the consumer a context switch (together ~10% of a token
  // batch's time on a VM, bench/README.md). Only with a core to spare.
  void AwaitBatchBriefly(std::unique_lock<std::mutex>& lock) {
    constexpr std::chrono::microseconds kConsumerPoll{200};
    const uint64_t seen = batches_completed.load(std::memory_order_acquire);
    lock.unlock();
    const Clock::time_point until = Clock::now() + kConsumerPoll;
    while (batches_completed.load(std::memory_order_acquire) == seen && Clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    lock.lock();
  }

  uint64_t ConsumedPosition() const {
    return std::min(end_position, start_position + next_batch * batch_size());
  }
};

Loader::Loader(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Loader::~Loader() { impl_->StopWorkers(); }

SampleDecoderOptions SampleOptionsOf(const LoaderOptions& o) {
  SampleDecoderOptions sample;
  sample.transform = o.transform;
  sample.image_size = o.image_size;
  sample.resize_shorter = o.resize_shorter;
  sample.crop = o.crop;
  sample.decode = o.decode;
  sample.decode.layout = o.layout;
  return sample;
}

namespace {

Status CheckOptions(const Dataset& dataset, const LoaderOptions& o) {
  if (o.batch_size == 0) return Status::InvalidArgument("loader: batch_size must be positive");
  UREC_RETURN_IF_ERROR(SampleOptionsOf(o).Check().WithContext("loader"));
  if (o.prefetch > 0 &&
      o.batch_size > SIZE_MAX / (size_t(o.image_size) * size_t(o.image_size) * 3) / (size_t(o.prefetch) + 1)) {
    return Status::InvalidArgument("loader: batch_size " + std::to_string(o.batch_size) + " is too large");
  }
  if (o.prefetch < 1 || o.prefetch > 1024) {
    return Status::InvalidArgument("loader: prefetch " + std::to_string(o.prefetch) + " is out of range 1..1024");
  }
  if (o.max_consecutive_bad < 1) return Status::InvalidArgument("loader: max_consecutive_bad must be >= 1");
  if (o.subset) {
    for (uint64_t id : *o.subset) {
      if (id >= dataset.size()) {
        return Status::OutOfRange("loader: subset id " + std::to_string(id) + " is past the dataset's " +
                                  std::to_string(dataset.size()) + " records");
      }
    }
  }
  if (o.cuda.device >= 0) {
    if (!BuiltWithCuda() && !o.cuda.host_emulation) {
      return Status::NotSupported("loader: CUDA device " + std::to_string(o.cuda.device) +
                                  " requested, but unirecord was built without CUDA");
    }
    for (float s : o.cuda.std) {
      if (!(s > 0)) return Status::InvalidArgument("loader: every CUDA std must be positive");
    }
  }
  return Status::OK();
}

}  // namespace

const char* RaggedLayoutName(RaggedLayout layout) { return layout == RaggedLayout::kJagged ? "jagged" : "pad"; }

Result<RaggedLayout> ParseRaggedLayout(std::string_view name) {
  if (name == "pad") return RaggedLayout::kPad;
  if (name == "jagged") return RaggedLayout::kJagged;
  return Status::InvalidArgument("unknown ragged layout '" + std::string(name) + "' (expected 'pad' or 'jagged')");
}

const char* OnBadRecordName(OnBadRecord on_bad_record) {
  return on_bad_record == OnBadRecord::kSkip ? "skip" : "raise";
}

Result<OnBadRecord> ParseOnBadRecord(std::string_view name) {
  if (name == "raise") return OnBadRecord::kRaise;
  if (name == "skip") return OnBadRecord::kSkip;
  return Status::InvalidArgument("unknown bad-record policy '" + std::string(name) + "' (expected 'raise' or 'skip')");
}

Result<std::unique_ptr<Loader>> Loader::Create(std::shared_ptr<const Dataset> dataset,
                                               const LoaderOptions& options) {
  return Create(std::vector<std::shared_ptr<const Dataset>>{std::move(dataset)}, options);
}

namespace {

// "dataset 1 (path/of/its/first.urec)": how a mixture's errors name a dataset.
std::string DatasetName(size_t k, const Dataset& dataset) {
  std::string name = "dataset " + std::to_string(k);
  if (!dataset.shards().empty()) name += " (" + dataset.shards().front().path + ")";
  return name;
}

// A mixture's batches hold every dataset's samples alike: the fields the
// loader reads must have one type and shape in all of them.
Status CheckSameFields(const std::vector<std::shared_ptr<const Dataset>>& datasets, const LoaderOptions& o) {
  for (const std::string* name : {&o.image_field, &o.label_field}) {
    if (name->empty()) continue;
    const int first = datasets[0]->schema().FieldIndex(*name);
    for (size_t k = 1; k < datasets.size() && first >= 0; ++k) {
      const int other = datasets[k]->schema().FieldIndex(*name);
      if (other < 0) continue;  // SampleSource::Create names the missing field
      const Field& a = datasets[0]->schema().field(first);
      const Field& b = datasets[k]->schema().field(other);
      if (a.type != b.type || a.shape != b.shape) {
        return Status::InvalidArgument("loader: the datasets differ in field '" + *name + "': " +
                                       DatasetName(0, *datasets[0]) + " has " + Schema::Make({a}).value().ToString() +
                                       ", " + DatasetName(k, *datasets[k]) + " has " +
                                       Schema::Make({b}).value().ToString());
      }
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<Loader>> Loader::Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                               const LoaderOptions& options) {
  if (datasets.empty()) return Status::InvalidArgument("loader: no dataset");
  for (const auto& dataset : datasets) {
    if (dataset == nullptr) return Status::InvalidArgument("loader: no dataset");
  }
  if (datasets.size() > 1 && options.subset) {
    return Status::InvalidArgument("loader: subset selects records of one dataset; it cannot be given with " +
                                   std::to_string(datasets.size()) + " datasets");
  }
  UREC_RETURN_IF_ERROR(CheckOptions(*datasets[0], options));
  UREC_RETURN_IF_ERROR(CheckSameFields(datasets, options));
  std::vector<uint64_t> sizes;
  std::vector<SampleSource> sources;
  for (size_t k = 0; k < datasets.size(); ++k) {
    sizes.push_back(options.subset ? options.subset->size() : datasets[k]->size());
    // A mixture's errors say which dataset a record is in.
    std::string name = datasets.size() > 1 ? DatasetName(k, *datasets[k]) : "";
    Result<SampleSource> source = SampleSource::Create(
        std::move(datasets[k]), {options.image_field, options.label_field, options.path_field}, name);
    if (!source.ok()) return source.status().WithContext(name.empty() ? "loader" : "loader: " + name);
    sources.push_back(std::move(source).value());
  }
  Result<Sampler> sampler = Sampler::Create(sizes, options.sampler);
  if (!sampler.ok()) return sampler.status().WithContext("loader");

  auto impl = std::make_shared<Impl>(std::move(sampler).value(), std::move(sources));
  impl->options = options;
  {
    const Schema& schema = impl->sources[0].dataset().schema();
    UREC_ASSIGN_OR_RETURN(impl->fields, pipeline::BatchFields::Create(schema, options));
    impl->read_records = !impl->fields.empty() || !impl->sources[0].has_image();
    // A Record is read by field index: a mixture read so needs one schema.
    for (size_t k = 1; impl->read_records && k < impl->sources.size(); ++k) {
      const Schema& other = impl->sources[k].dataset().schema();
      if (!(other == schema)) {
        return Status::InvalidArgument("loader: batched fields (or image_field=None) over several datasets need one "
                                       "schema: " + DatasetName(0, impl->sources[0].dataset()) + " has " +
                                       schema.ToString() + ", " + DatasetName(k, impl->sources[k].dataset()) +
                                       " has " + other.ToString());
      }
    }
    if (impl->sources[0].has_image()) impl->image_index = static_cast<size_t>(schema.FieldIndex(options.image_field));
    if (impl->sources[0].has_labels()) impl->label_index = static_cast<size_t>(schema.FieldIndex(options.label_field));
  }
  // The upload reads NHWC; the conversion kernel makes the device layout.
  if (options.cuda.device >= 0) impl->options.layout = ImageLayout::kNHWC;
  impl->options.decode.layout = impl->options.layout;
  const SampleDecoderOptions sample_options = SampleOptionsOf(impl->options);
  impl->image_bytes = impl->sources[0].has_image() ? sample_options.output_bytes() : 0;
  impl->samples_per_claim = impl->sources[0].has_image() ? 1 : kSamplesPerClaimWithoutImages;
  UREC_ASSIGN_OR_RETURN(impl->thread_count, ResolveThreadCount(options.threads, "loader: threads"));
  impl->consumer_polls = impl->thread_count < UsableCores();
  for (int i = 0; i < impl->thread_count; ++i) {
    UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> decoder, SampleDecoder::Create(sample_options));
    impl->decoders.push_back(std::move(decoder));
  }

  const size_t slot_count = static_cast<size_t>(options.prefetch) + 1;
  impl->slots.resize(slot_count);
  impl->free_slots.resize(slot_count);
  for (size_t i = 0; i < slot_count; ++i) impl->PushFree(i);
  impl->claimed.assign(static_cast<size_t>(options.prefetch), kNoSlot);
  if (options.cuda.device >= 0) {
    UREC_ASSIGN_OR_RETURN(impl->device,
                          gpu::DeviceBatches::Create(options.cuda, slot_count, options.batch_size,
                                                     impl->image_bytes > 0 ? options.image_size : 0,
                                                     impl->image_bytes > 0 ? options.image_size : 0));
  }
  for (size_t i = 0; i < slot_count; ++i) {
    Impl::Slot& slot = impl->slots[i];
    if (impl->device != nullptr) slot.images = impl->device->host(i);
    try {
      if (slot.images == nullptr) {
        slot.owned_images.reset(new uint8_t[options.batch_size * impl->image_bytes]);
        slot.images = slot.owned_images.get();
      }
      slot.labels.resize(options.batch_size);
      slot.record_ids.resize(options.batch_size);
      slot.crops.resize(options.batch_size * 5);
      slot.records.resize(impl->read_records ? options.batch_size : 0);
      impl->fields.Allocate(options.batch_size, &slot.field_buffers, &slot.fields);
    } catch (const std::bad_alloc&) {
      return Status::InvalidArgument("loader: cannot allocate " + std::to_string(slot_count) + " batch buffers of " +
                                     std::to_string(options.batch_size) + " images of " +
                                     std::to_string(impl->image_bytes) + " bytes (batch_size, size, prefetch)");
    }
  }
  impl->StartRun(0);
  Impl* raw = impl.get();
  impl->workers.reserve(impl->thread_count);
  for (int i = 0; i < impl->thread_count; ++i) {
    try {
      impl->workers.emplace_back([raw, i] { raw->WorkerLoop(*raw->decoders[i]); });
    } catch (const std::system_error& e) {
      return Status::IOError("loader: cannot start decode thread " + std::to_string(i + 1) + " of " +
                             std::to_string(impl->thread_count) + ": " + e.what());
    }
  }
  return std::unique_ptr<Loader>(new Loader(std::move(impl)));
}

const LoaderOptions& Loader::options() const { return impl_->options; }
int Loader::threads() const { return impl_->thread_count; }

uint64_t Loader::batches_per_epoch() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->base_batches + impl_->run_batches;
}

Result<Batch> Loader::Next() { return impl_->Next(impl_); }

void Loader::SetEpoch(uint64_t epoch) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  // Already at the start of this epoch: keep what is being prefetched.
  if (epoch == impl_->sampler.epoch() && impl_->sampler.base() == 0 && impl_->start_position == 0 &&
      impl_->next_batch == 0 && impl_->sticky_error.ok()) {
    return;
  }
  impl_->Quiesce(lock);
  impl_->sampler.SetEpoch(epoch);
  impl_->StartRun(0);
}

uint64_t Loader::epoch() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->sampler.epoch();
}

SamplerState Loader::state() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Sampler consumed = impl_->sampler;  // at the consumer's position, not the workers'
  Status at = consumed.Seek(impl_->ConsumedPosition());
  (void)at;  // the consumed position is within the partition
  return consumed.state();
}

Status Loader::Restore(const SamplerState& state) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  Sampler restored = impl_->sampler;
  UREC_RETURN_IF_ERROR(restored.Restore(state));
  impl_->Quiesce(lock);
  impl_->sampler = std::move(restored);
  impl_->StartRun(impl_->sampler.position());
  return Status::OK();
}

LoaderStats Loader::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  LoaderStats stats = impl_->totals;
  stats.wall_s = Seconds(Clock::now() - impl_->stats_since);
  if (stats.wall_s > 0) {
    stats.images_per_s = double(stats.samples) / stats.wall_s;
    stats.batches_per_s = double(stats.batches) / stats.wall_s;
  }
  return stats;
}

void Loader::ResetStats() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->totals = LoaderStats{};
  impl_->stats_since = Clock::now();
}

}  // namespace unirecord
