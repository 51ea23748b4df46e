// Batches of samples (sample_batches.h): Create, runs (an epoch from a
// position, after SetEpoch or Restore), the consumer's Next and the state;
// the workers that fill the batches are in loader_workers.cc.
#include "pipeline/sample_batches.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "util/threads.h"

namespace unirecord::pipeline {

namespace {

Status CheckOptions(const Dataset& dataset, const LoaderOptions& o) {
  if (o.batch_size == 0) return Status::InvalidArgument("loader: batch_size must be positive");
  UREC_RETURN_IF_ERROR(SampleOptionsOf(o).Check().WithContext("loader"));
  if (o.clip) UREC_RETURN_IF_ERROR(o.clip->Check().WithContext("loader"));
  if (o.audio) UREC_RETURN_IF_ERROR(o.audio->Check().WithContext("loader"));
  const size_t frames = o.clip ? o.clip->sample_frames() : 1;
  if (o.prefetch > 0 &&
      o.batch_size > SIZE_MAX / (size_t(o.image_size) * size_t(o.image_size) * 3 * frames) / (size_t(o.prefetch) + 1)) {
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

Status CheckDatasets(const std::vector<std::shared_ptr<const Dataset>>& datasets) {
  if (datasets.empty()) return Status::InvalidArgument("loader: no dataset");
  for (const auto& dataset : datasets) {
    if (dataset == nullptr) return Status::InvalidArgument("loader: no dataset");
  }
  return Status::OK();
}

Result<std::shared_ptr<SampleBatches>> SampleBatches::Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                                             const LoaderOptions& given) {
  UREC_RETURN_IF_ERROR(CheckDatasets(datasets));
  // The default label field is optional: a dataset without it (COCO's,
  // token datasets) has no labels. A label field the user named must exist.
  LoaderOptions options = given;
  if (options.label_field == LoaderOptions().label_field && datasets[0]->schema().FieldIndex(options.label_field) < 0) {
    options.label_field.clear();
  }
  // A clip loader's "image" is its video field; an audio loader without
  // clips has no image unless one was named.
  if (options.clip) options.image_field = options.clip->field;
  if (!options.clip && options.audio && options.image_field == LoaderOptions().image_field &&
      datasets[0]->schema().FieldIndex(options.image_field) < 0) {
    options.image_field.clear();
  }
  if (datasets.size() > 1 && options.subset) {
    return Status::InvalidArgument("loader: subset selects records of one dataset; it cannot be given with " +
                                   std::to_string(datasets.size()) + " datasets");
  }
  UREC_RETURN_IF_ERROR(CheckOptions(*datasets[0], options));
  UREC_RETURN_IF_ERROR(CheckSameFields(datasets, options));
  const SampleFields names{options.image_field, options.label_field, options.path_field,
                           options.clip ? FieldType::kVideo : FieldType::kBytes};
  std::vector<uint64_t> sizes;
  std::vector<SampleSource> sources;
  for (size_t k = 0; k < datasets.size(); ++k) {
    sizes.push_back(options.subset ? options.subset->size() : datasets[k]->size());
    // A mixture's errors say which dataset a record is in.
    std::string name = datasets.size() > 1 ? DatasetName(k, *datasets[k]) : "";
    Result<SampleSource> source = SampleSource::Create(std::move(datasets[k]), names, name);
    if (!source.ok()) return source.status().WithContext(name.empty() ? "loader" : "loader: " + name);
    sources.push_back(std::move(source).value());
  }
  Result<Sampler> sampler = Sampler::Create(sizes, options.sampler);
  if (!sampler.ok()) return sampler.status().WithContext("loader");
  UREC_ASSIGN_OR_RETURN(BatchFields fields,
                        BatchFields::Create(sources[0].dataset().schema(), BatchFieldOptionsOf(options)));

  auto batches = std::make_shared<SampleBatches>(std::move(sampler).value(), std::move(fields));
  ClipReads clip_reads;
  if (options.clip) {
    clip_reads.frames_per_sample = options.clip->sample_frames();
    clip_reads.clips = static_cast<size_t>(options.clip->clips_per_video);
  }
  if (options.audio) clip_reads.audio_field = options.audio->field;
  UREC_ASSIGN_OR_RETURN(batches->reads_,
                        RecordReads::Create(std::move(sources), names, &batches->fields_, clip_reads));
  UREC_RETURN_IF_ERROR(batches->Configure(options));
  UREC_RETURN_IF_ERROR(batches->StartWorkers());
  return batches;
}

// The decoders, the device and the pool of batch buffers for `options`;
// then epoch 0 starts.
Status SampleBatches::Configure(const LoaderOptions& options) {
  options_ = options;
  // The upload reads NHWC; the conversion kernel makes the device layout.
  if (options.cuda.device >= 0) options_.layout = ImageLayout::kNHWC;
  options_.decode.layout = options_.layout;
  const SampleDecoderOptions sample_options = SampleOptionsOf(options_);
  const size_t frames = options.clip ? options.clip->sample_frames() : 1;
  image_bytes_ = reads_.has_image() ? sample_options.output_bytes() * frames : 0;
  samples_per_claim_ = reads_.has_image() || options.audio ? 1 : kSamplesPerClaimWithoutImages;
  UREC_ASSIGN_OR_RETURN(thread_count_, ResolveThreadCount(options.threads, "loader: threads"));
  consumer_polls_ = thread_count_ < UsableCores();
  for (int i = 0; i < thread_count_; ++i) {
    Result<std::unique_ptr<DecodeStage>> decode = options.clip ? CreateClipDecode(*options.clip, sample_options)
                                                               : CreateImageDecode(sample_options, fields_.has_masks());
    if (!decode.ok()) return decode.status();
    decoders_.push_back(std::move(decode).value());
    if (options.audio) {
      audio_decoders_.push_back(
          CreateAudioDecode(*options.audio, options.clip ? options.clip->clips_per_video : 1));
    }
  }
  if (options.cuda.device >= 0) {
    // A clip is one image of its T frames one above the other (DeviceStage::Create).
    const int clip_frames = options.clip ? options.clip->frames : 1;
    const int size = image_bytes_ > 0 ? options.image_size : 0;
    UREC_ASSIGN_OR_RETURN(device_, DeviceStage::Create(options.cuda, static_cast<size_t>(options.prefetch) + 1,
                                                       options.batch_size, size * clip_frames, size,
                                                       options.clip ? options.clip->clips_per_video : 1));
  }
  UREC_RETURN_IF_ERROR(slots_.Allocate(options.prefetch, options.batch_size, image_bytes_, reads_.records(), fields_,
                                       device_.get()));
  UREC_RETURN_IF_ERROR(slots_.AllocateClips(options.batch_size, options_));
  std::lock_guard<std::mutex> lock(mu_);
  StartRun(0);
  return Status::OK();
}

Status SampleBatches::StartWorkers() {
  workers_.reserve(thread_count_);
  for (int i = 0; i < thread_count_; ++i) {
    try {
      AudioDecode* audio = audio_decoders_.empty() ? nullptr : audio_decoders_[i].get();
      workers_.emplace_back([this, i, audio] { WorkerLoop(*decoders_[i], audio); });
    } catch (const std::system_error& e) {
      return Status::IOError("loader: cannot start decode thread " + std::to_string(i + 1) + " of " +
                             std::to_string(thread_count_) + ": " + e.what());
    }
  }
  return Status::OK();
}

// The Loader is going; batches the consumer holds may outlive it (they share
// this stage), so the buffers stay until the last one is released.
void SampleBatches::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

uint64_t SampleBatches::EpochEnd() const {
  const uint64_t size = sampler_.size();
  return options_.drop_last ? size - size % batch_size() : size;
}

uint64_t SampleBatches::RecordAt(const Sampler& order, uint64_t position) const {
  const uint64_t id = order.At(position);
  return options_.subset ? (*options_.subset)[id] : id;
}

// Starts loading from `position` of the current sampler epoch. Caller holds
// the lock and no worker is busy. Slots claimed by batches of the old run
// that were never handed out become free; slots the consumer holds stay
// held (their batches stay valid) until released.
void SampleBatches::StartRun(uint64_t position) {
  ++generation_;
  for (size_t& slot_index : slots_.claimed()) {
    if (slot_index == BatchSlots::kNone) continue;
    // The batch may have been uploaded: let the copy leave the host buffer
    // before a worker rewrites it.
    if (device_ != nullptr) {
      Status recycled = device_->Recycle(slot_index);
      (void)recycled;  // a failing device fails the next upload too
    }
    slots_[slot_index].ready = false;
    slots_.PushFree(slot_index);
    slot_index = BatchSlots::kNone;
  }
  end_position_ = EpochEnd();
  start_position_ = std::min(position, end_position_);
  next_sample_ = start_position_;
  next_batch_ = 0;
  run_batches_ = (end_position_ - start_position_ + batch_size() - 1) / batch_size();
  // The batches all ranks needed for the positions of the epoch's order
  // consumed before this run, rounded up: exact when the state came from
  // the same ranks and batch size.
  const uint64_t per_batch = uint64_t{sampler_.options().num_shards} * batch_size();
  base_batches_ = (sampler_.GlobalPosition(start_position_) + per_batch - 1) / per_batch;
  sticky_error_ = Status::OK();
  coverage_.Start(sampler_, options_.subset ? &*options_.subset : nullptr, options_.coverage, end_position_);
  PlanRemoteReads();
  work_cv_.notify_all();
}

// This run's order, then the next epoch's (ReadPlan::PlanRemote).
void SampleBatches::PlanRemoteReads() {
  if (!reads_.plan().downloads()) return;
  std::vector<uint64_t> ids;
  for (uint64_t p = start_position_; p < end_position_; ++p) ids.push_back(RecordAt(p));
  Sampler next_epoch = sampler_;
  next_epoch.SetEpoch(sampler_.epoch() + 1);
  for (uint64_t p = 0, end = EpochEnd(); p < end; ++p) ids.push_back(RecordAt(next_epoch, p));
  reads_.plan().PlanRemote(ids);
}

// Stops handing out work and waits until no worker is busy. Caller holds `lock`.
void SampleBatches::Quiesce(std::unique_lock<std::mutex>& lock) {
  ++generation_;
  next_sample_ = end_position_;
  idle_cv_.wait(lock, [&] { return busy_ == 0; });
}

Result<Batch> SampleBatches::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!sticky_error_.ok()) return sticky_error_;
  Contents batch;
  batch.epoch = sampler_.epoch();
  if (reads_.has_image()) batch.height = batch.width = options_.image_size;
  batch.layout = options_.layout;
  if (next_batch_ >= run_batches_) return Make(nullptr, 0, batch);  // end of the epoch
  const uint64_t run_batch = next_batch_;
  if (slots_.Claimed(run_batch) == BatchSlots::kNone && slots_.free_count() == 0) {
    // Unclaimed and nothing free: every buffer is held by the consumer
    // (batches claim slots in order, so no later batch has one).
    return Status::FailedPrecondition("the consumer holds all " + std::to_string(slots_.HeldCount()) +
                                      " batch buffers (prefetch + 1 = " + std::to_string(slots_.size()) +
                                      "); release one before Next()");
  }
  const Clock::time_point t0 = Clock::now();
  auto batch_ready = [&] {
    const size_t claim = slots_.Claimed(run_batch);
    return claim != BatchSlots::kNone && slots_[claim].ready;
  };
  if (consumer_polls_ && !batch_ready()) AwaitBatchBriefly(lock);
  // Releases (from any thread) only add free slots, so this batch gets one.
  ready_cv_.wait(lock, batch_ready);
  const size_t slot_index = slots_.Claimed(run_batch);
  Slot& slot = slots_[slot_index];
  totals_.wait_s += Seconds(Clock::now() - t0);
  totals_.skipped += slot.skipped;
  if (!slot.last_bad_record.empty()) totals_.last_bad_record = std::move(slot.last_bad_record);
  slot.last_bad_record.clear();
  if (!slot.error.ok()) {
    sticky_error_ = slot.error;
    return sticky_error_;
  }
  slot.held = true;
  slots_.Claimed(run_batch) = BatchSlots::kNone;
  ++next_batch_;
  ++totals_.batches;
  totals_.samples += slot.count;
  coverage_.Deliver(slot.record_ids.data(), slot.count, start_position_ + run_batch * batch_size());
  coverage_.Skip(slot.skipped);
  // The prefetch window moved on: one more batch may claim a slot. A wake
  // costs microseconds on a VM: only when a worker has work now.
  if (WorkAvailable()) work_cv_.notify_all();

  batch.size = slot.count;
  batch.index = base_batches_ + run_batch;
  batch.images = reads_.has_image() ? slot.images : nullptr;
  batch.labels = reads_.has_labels() ? slot.labels.data() : nullptr;
  batch.record_ids = slot.record_ids.data();
  batch.crops = reads_.has_image() ? slot.crops.data() : nullptr;
  if (options_.clip) {
    batch.clip_frames = options_.clip->frames;
    batch.clips = options_.clip->clips_per_video;
    batch.frame_pts = slot.frame_pts.data();
    batch.clip_starts = slot.clip_starts.data();
  }
  batch.fields = &slot.fields;
  if (device_ != nullptr) {
    batch.device_images = device_->device_images(slot_index);
    batch.ready_event = device_->ready_event(slot_index);
  }
  return Make(shared_from_this(), slot_index, batch);
}

// Polls, with `lock` released, until some batch completes or
// kConsumerPoll passes. A batch of small samples completes every ~100 us;
// sleeping on ready_cv instead costs the worker that completes it a futex
// wake and the consumer a context switch (together ~10% of a token
// batch's time on a VM, bench/README.md). Only with a core to spare.
void SampleBatches::AwaitBatchBriefly(std::unique_lock<std::mutex>& lock) {
  constexpr std::chrono::microseconds kConsumerPoll{200};
  const uint64_t seen = batches_completed_.load(std::memory_order_acquire);
  lock.unlock();
  const Clock::time_point until = Clock::now() + kConsumerPoll;
  while (batches_completed_.load(std::memory_order_acquire) == seen && Clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  lock.lock();
}

uint64_t SampleBatches::ConsumedPosition() const {
  return std::min(end_position_, start_position_ + next_batch_ * batch_size());
}

uint64_t SampleBatches::batches_per_epoch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return base_batches_ + run_batches_;
}

void SampleBatches::SetEpoch(uint64_t epoch) {
  std::unique_lock<std::mutex> lock(mu_);
  // Already at the start of this epoch: keep what is being prefetched.
  if (epoch == sampler_.epoch() && sampler_.base() == 0 && start_position_ == 0 && next_batch_ == 0 &&
      sticky_error_.ok()) {
    return;
  }
  Quiesce(lock);
  sampler_.SetEpoch(epoch);
  StartRun(0);
}

uint64_t SampleBatches::epoch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sampler_.epoch();
}

SamplerState SampleBatches::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  Sampler consumed = sampler_;  // at the consumer's position, not the workers'
  Status at = consumed.Seek(ConsumedPosition());
  (void)at;  // the consumed position is within the partition
  return consumed.state();
}

Status SampleBatches::Restore(const SamplerState& state) {
  std::unique_lock<std::mutex> lock(mu_);
  Sampler restored = sampler_;
  UREC_RETURN_IF_ERROR(restored.Restore(state));
  Quiesce(lock);
  sampler_ = std::move(restored);
  StartRun(sampler_.position());
  return Status::OK();
}

LoaderStats SampleBatches::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  LoaderStats stats = totals_;
  stats.wall_s = Seconds(Clock::now() - stats_since_);
  if (stats.wall_s > 0) {
    stats.images_per_s = double(stats.samples) / stats.wall_s;
    stats.batches_per_s = double(stats.batches) / stats.wall_s;
  }
  return stats;
}

void SampleBatches::ResetStats() {
  std::lock_guard<std::mutex> lock(mu_);
  totals_ = LoaderStats{};
  stats_since_ = Clock::now();
}

void SampleBatches::Return(size_t slot_index) {
  Status recycled;
  if (device_ != nullptr) recycled = device_->Recycle(slot_index);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = slots_[slot_index];
    slot.held = false;
    slot.ready = false;
    slots_.PushFree(slot_index);
    if (!recycled.ok() && sticky_error_.ok()) sticky_error_ = recycled;
    wake = WorkAvailable();
  }
  if (wake) work_cv_.notify_all();
}

Status SampleBatches::WaitOn(size_t slot_index, void* cuda_stream) const {
  return device_->WaitOn(slot_index, cuda_stream);
}

Status SampleBatches::Synchronize(size_t slot_index) const { return device_->Synchronize(slot_index); }

}  // namespace unirecord::pipeline
