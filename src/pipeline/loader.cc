#include "unirecord/loader.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>

#include "gpu/device_batches.h"
#include "util/threads.h"

namespace unirecord {

// The loader side of a Batch: where its buffer goes back.
struct Batch::Pool {
  virtual ~Pool() = default;
  virtual void Return(size_t slot) = 0;
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
  device_images_ = nullptr;
  ready_event_ = nullptr;
}

Status Batch::WaitOn(void* cuda_stream) const {
  if (ready_event_ != nullptr) return gpu::StreamWaitEvent(cuda_stream, ready_event_);
  return Status::FailedPrecondition("batch is not on a CUDA device (CudaOptions::device < 0)");
}

Status Batch::Synchronize() const {
  if (ready_event_ != nullptr) return gpu::EventSynchronize(ready_event_);
  return Status::FailedPrecondition("batch is not on a CUDA device (CudaOptions::device < 0)");
}

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

constexpr size_t kNoSlot = static_cast<size_t>(-1);

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
    size_t count = 0;    // samples in the batch filled here
    size_t pending = 0;  // samples not yet written
    bool ready = false;
    bool held = false;   // by the consumer
    Status error;               // the first bad record (kRaise) or a failed upload
    size_t error_offset = 0;
    uint64_t skipped = 0;
    std::string last_bad_record;
  };

  SampleSource source;
  LoaderOptions options;
  std::vector<std::unique_ptr<SampleDecoder>> decoders;  // one per worker thread
  size_t image_bytes = 0;  // one sample: image_size^2 * 3
  int thread_count = 1;
  std::unique_ptr<gpu::DeviceBatches> device;  // CudaOptions::device >= 0

  std::mutex mu;
  std::condition_variable work_cv;   // workers: work or a free slot appeared
  std::condition_variable ready_cv;  // consumer: a batch completed
  std::condition_variable idle_cv;   // SetEpoch/Restore: the last busy worker finished
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

  Impl(Sampler s, SampleSource src) : source(std::move(src)), sampler(std::move(s)) {}

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
    sticky_error = Status::OK();
    PlanRemoteReads();
    work_cv.notify_all();
  }

  // A remote dataset downloads shards ahead in this run's order (a pure
  // function of seed and epoch, known before the first read).
  void PlanRemoteReads() {
    if (!source.dataset().is_remote()) return;
    std::vector<uint64_t> ids;
    ids.reserve(end_position - start_position);
    for (uint64_t p = start_position; p < end_position; ++p) ids.push_back(RecordAt(p));
    source.dataset().PlanReads(ids);
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

  uint64_t RecordAt(uint64_t position) const {
    const uint64_t id = sampler.At(position);
    return options.subset ? (*options.subset)[id] : id;
  }

  // Fills sample `offset` of `slot` from sampler position `position`; with
  // kSkip, bad records are replaced by the following positions' records.
  Status LoadSample(uint64_t position, Slot& slot, size_t offset, uint64_t epoch, uint64_t seed,
                    SampleDecoder& decoder, SampleTimes& times,
                    uint64_t* skipped, std::string* last_bad) {
    uint8_t* out = slot.images + offset * image_bytes;
    int64_t* label = &slot.labels[offset];
    const uint64_t size = sampler.size();
    for (int attempt = 0;; ++attempt) {
      const uint64_t id = RecordAt((position + attempt) % size);
      // Errors name the record (and its path).
      Status named = decoder.DecodeRecord(source, id, seed, epoch, out, image_bytes, label, &times);
      if (named.ok()) {
        slot.record_ids[offset] = id;
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

  void WorkerLoop(SampleDecoder& decoder) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      work_cv.wait(lock, [&] { return stopping || WorkAvailable(); });
      if (stopping) return;
      const uint64_t position = next_sample++;
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
      const uint64_t my_generation = generation;
      const uint64_t epoch = sampler.epoch();
      const uint64_t seed = sampler.options().seed;
      ++busy;
      lock.unlock();

      SampleTimes times;
      uint64_t skipped = 0;
      std::string last_bad;
      Status status = LoadSample(position, slot, offset, epoch, seed, decoder, times,
                                 &skipped, &last_bad);

      lock.lock();
      if (generation == my_generation) {
        totals.read_s += times.read_s;
        totals.decode_s += times.decode_s;
        slot.skipped += skipped;
        if (!last_bad.empty()) slot.last_bad_record = std::move(last_bad);
        if (!status.ok() && (slot.error.ok() || offset < slot.error_offset)) {
          slot.error = std::move(status);
          slot.error_offset = offset;
        }
        if (--slot.pending == 0) {
          FinishBatch(slot_index, lock);
          slot.ready = true;
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
    if (device == nullptr || !slot.error.ok()) return;
    const size_t count = slot.count;
    lock.unlock();
    const Clock::time_point t0 = Clock::now();
    Status status = device->Upload(slot_index, count);
    const Clock::duration took = Clock::now() - t0;
    lock.lock();
    totals.upload_s += Seconds(took);
    if (!status.ok()) slot.error = std::move(status);
  }

  void Return(size_t slot_index) override {
    Status recycled;
    if (device != nullptr) recycled = device->Recycle(slot_index);
    {
      std::lock_guard<std::mutex> lock(mu);
      Slot& slot = slots[slot_index];
      slot.held = false;
      slot.ready = false;
      PushFree(slot_index);
      if (!recycled.ok() && sticky_error.ok()) sticky_error = recycled;
    }
    work_cv.notify_all();
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
    batch.height_ = batch.width_ = options.image_size;
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
    // Releases (from any thread) only add free slots, so this batch gets one.
    ready_cv.wait(lock, [&] {
      const size_t claim = ClaimedSlot(run_batch);
      return claim != kNoSlot && slots[claim].ready;
    });
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
    work_cv.notify_all();  // the prefetch window moved on: one more batch may claim a slot

    batch.pool_ = std::move(self);
    batch.slot_ = slot_index;
    batch.size_ = slot.count;
    batch.index_ = start_position / batch_size() + run_batch;
    batch.images_ = slot.images;
    batch.labels_ = source.has_labels() ? slot.labels.data() : nullptr;
    batch.record_ids_ = slot.record_ids.data();
    if (device != nullptr) {
      batch.device_images_ = device->device_output(slot_index);
      batch.ready_event_ = device->ready_event(slot_index);
    }
    return batch;
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
    if (!BuiltWithCuda()) {
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
  if (dataset == nullptr) return Status::InvalidArgument("loader: no dataset");
  UREC_RETURN_IF_ERROR(CheckOptions(*dataset, options));
  const uint64_t records = options.subset ? options.subset->size() : dataset->size();
  Result<SampleSource> source =
      SampleSource::Create(std::move(dataset), {options.image_field, options.label_field, options.path_field});
  if (!source.ok()) return source.status().WithContext("loader");
  UREC_ASSIGN_OR_RETURN(Sampler sampler, Sampler::Create(records, options.sampler));

  auto impl = std::make_shared<Impl>(std::move(sampler), std::move(source).value());
  impl->options = options;
  // The upload reads NHWC; the conversion kernel makes the device layout.
  if (options.cuda.device >= 0) impl->options.layout = ImageLayout::kNHWC;
  impl->options.decode.layout = impl->options.layout;
  const SampleDecoderOptions sample_options = SampleOptionsOf(impl->options);
  impl->image_bytes = sample_options.output_bytes();
  UREC_ASSIGN_OR_RETURN(impl->thread_count, ResolveThreadCount(options.threads, "loader: threads"));
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
                                                     options.image_size, options.image_size));
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
  return (impl_->EpochEnd() + impl_->batch_size() - 1) / impl_->batch_size();
}

Result<Batch> Loader::Next() { return impl_->Next(impl_); }

void Loader::SetEpoch(uint64_t epoch) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  // Already at the start of this epoch: keep what is being prefetched.
  if (epoch == impl_->sampler.epoch() && impl_->start_position == 0 && impl_->next_batch == 0 &&
      impl_->sticky_error.ok()) {
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
  SamplerState state = impl_->sampler.state();
  state.position = impl_->ConsumedPosition();
  return state;
}

Status Loader::Restore(const SamplerState& state) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  Sampler restored = impl_->sampler;
  UREC_RETURN_IF_ERROR(restored.Restore(state));
  impl_->Quiesce(lock);
  impl_->sampler = std::move(restored);
  impl_->StartRun(state.position);
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
