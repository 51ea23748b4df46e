// The Loader's consumer side: Create, runs (an epoch from a position, after
// SetEpoch or Restore), Next, and the loader's state; the stages a batch goes
// through are in the files loader_impl.h lists.
#include "unirecord/loader.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "pipeline/loader_impl.h"
#include "pipeline/packed_loader.h"
#include "util/threads.h"

namespace unirecord {

using pipeline::BatchSlots;
using pipeline::Clock;
using pipeline::Seconds;

// The Loader is going; batches the consumer holds may outlive it (they share
// this Impl), so the buffers stay until the last one is released.
void Loader::Impl::StopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  work_cv.notify_all();
  for (std::thread& t : workers) t.join();
  workers.clear();
}

uint64_t Loader::Impl::EpochEnd() const {
  const uint64_t size = sampler.size();
  return options.drop_last ? size - size % batch_size() : size;
}

uint64_t Loader::Impl::RecordAt(const Sampler& order, uint64_t position) const {
  const uint64_t id = order.At(position);
  return options.subset ? (*options.subset)[id] : id;
}

// Starts loading from `position` of the current sampler epoch. Caller holds
// the lock and no worker is busy. Slots claimed by batches of the old run
// that were never handed out become free; slots the consumer holds stay
// held (their batches stay valid) until released.
void Loader::Impl::StartRun(uint64_t position) {
  ++generation;
  for (size_t& slot_index : slots.claimed()) {
    if (slot_index == BatchSlots::kNone) continue;
    // The batch may have been uploaded: let the copy leave the host buffer
    // before a worker rewrites it.
    if (device != nullptr) {
      Status recycled = device->Recycle(slot_index);
      (void)recycled;  // a failing device fails the next upload too
    }
    slots[slot_index].ready = false;
    slots.PushFree(slot_index);
    slot_index = BatchSlots::kNone;
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
  coverage.Start(sampler, options.subset ? &*options.subset : nullptr, options.coverage, end_position);
  PlanRemoteReads();
  work_cv.notify_all();
}

// This run's order, then the next epoch's (ReadPlan::PlanRemote).
void Loader::Impl::PlanRemoteReads() {
  if (!reads.any_remote()) return;
  std::vector<uint64_t> ids;
  for (uint64_t p = start_position; p < end_position; ++p) ids.push_back(RecordAt(p));
  Sampler next_epoch = sampler;
  next_epoch.SetEpoch(sampler.epoch() + 1);
  for (uint64_t p = 0, end = EpochEnd(); p < end; ++p) ids.push_back(RecordAt(next_epoch, p));
  reads.PlanRemote(ids);
}

// Stops handing out work and waits until no worker is busy. Caller holds `lock`.
void Loader::Impl::Quiesce(std::unique_lock<std::mutex>& lock) {
  ++generation;
  next_sample = end_position;
  idle_cv.wait(lock, [&] { return busy == 0; });
}

Result<Batch> Loader::Impl::Next(std::shared_ptr<Impl> self) {
  std::unique_lock<std::mutex> lock(mu);
  if (!sticky_error.ok()) return sticky_error;
  Batch batch;
  batch.epoch_ = sampler.epoch();
  if (reads.source(0).has_image()) batch.height_ = batch.width_ = options.image_size;
  batch.layout_ = options.layout;
  if (next_batch >= run_batches) return batch;  // end of the epoch
  const uint64_t run_batch = next_batch;
  if (slots.Claimed(run_batch) == BatchSlots::kNone && slots.free_count() == 0) {
    // Unclaimed and nothing free: every buffer is held by the consumer
    // (batches claim slots in order, so no later batch has one).
    return Status::FailedPrecondition("the consumer holds all " + std::to_string(slots.HeldCount()) +
                                      " batch buffers (prefetch + 1 = " + std::to_string(slots.size()) +
                                      "); release one before Next()");
  }
  const Clock::time_point t0 = Clock::now();
  auto batch_ready = [&] {
    const size_t claim = slots.Claimed(run_batch);
    return claim != BatchSlots::kNone && slots[claim].ready;
  };
  if (consumer_polls && !batch_ready()) AwaitBatchBriefly(lock);
  // Releases (from any thread) only add free slots, so this batch gets one.
  ready_cv.wait(lock, batch_ready);
  const size_t slot_index = slots.Claimed(run_batch);
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
  slots.Claimed(run_batch) = BatchSlots::kNone;
  ++next_batch;
  ++totals.batches;
  totals.samples += slot.count;
  coverage.Deliver(slot.record_ids.data(), slot.count, start_position + run_batch * batch_size());
  coverage.Skip(slot.skipped);
  // The prefetch window moved on: one more batch may claim a slot. A wake
  // costs microseconds on a VM: only when a worker has work now.
  if (WorkAvailable()) work_cv.notify_all();

  batch.pool_ = std::move(self);
  batch.slot_ = slot_index;
  batch.size_ = slot.count;
  batch.index_ = base_batches + run_batch;
  batch.images_ = reads.source(0).has_image() ? slot.images : nullptr;
  batch.labels_ = reads.source(0).has_labels() ? slot.labels.data() : nullptr;
  batch.record_ids_ = slot.record_ids.data();
  batch.crops_ = reads.source(0).has_image() ? slot.crops.data() : nullptr;
  batch.fields_ = &slot.fields;
  if (device != nullptr) {
    batch.device_images_ = device->device_images(slot_index);
    batch.ready_event_ = device->ready_event(slot_index);
  }
  return batch;
}


// Polls, with `lock` released, until some batch completes or
// kConsumerPoll passes. A batch of small samples completes every ~100 us;
// sleeping on ready_cv instead costs the worker that completes it a futex
// wake and the consumer a context switch (together ~10% of a token
// batch's time on a VM, bench/README.md). Only with a core to spare.
void Loader::Impl::AwaitBatchBriefly(std::unique_lock<std::mutex>& lock) {
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

uint64_t Loader::Impl::ConsumedPosition() const {
  return std::min(end_position, start_position + next_batch * batch_size());
}

Loader::Loader(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Loader::Loader(std::shared_ptr<Packed> packed) : packed_(std::move(packed)) {}
Loader::~Loader() {
  if (impl_ != nullptr) impl_->StopWorkers();
}

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
                                               const LoaderOptions& given) {
  if (datasets.empty()) return Status::InvalidArgument("loader: no dataset");
  for (const auto& dataset : datasets) {
    if (dataset == nullptr) return Status::InvalidArgument("loader: no dataset");
  }
  if (given.pack) {
    UREC_ASSIGN_OR_RETURN(std::shared_ptr<Packed> packed, Packed::Create(std::move(datasets), given));
    return std::unique_ptr<Loader>(new Loader(std::move(packed)));
  }
  // The default label field is optional: a dataset without it (COCO's,
  // token datasets) has no labels. A label field the user named must exist.
  LoaderOptions options = given;
  if (options.label_field == LoaderOptions().label_field && datasets[0]->schema().FieldIndex(options.label_field) < 0) {
    options.label_field.clear();
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

  const Schema& schema = sources[0].dataset().schema();
  UREC_ASSIGN_OR_RETURN(pipeline::BatchFields fields, pipeline::BatchFields::Create(schema, options));
  const bool read_records = !fields.empty() || !sources[0].has_image();
  // A Record is read by field index: a mixture read so needs one schema.
  for (size_t k = 1; read_records && k < sources.size(); ++k) {
    const Schema& other = sources[k].dataset().schema();
    if (!(other == schema)) {
      return Status::InvalidArgument("loader: batched fields (or image_field=None) over several datasets need one "
                                     "schema: " + DatasetName(0, sources[0].dataset()) + " has " +
                                     schema.ToString() + ", " + DatasetName(k, sources[k].dataset()) +
                                     " has " + other.ToString());
    }
  }
  const size_t image_index = sources[0].has_image() ? static_cast<size_t>(schema.FieldIndex(options.image_field)) : 0;
  const size_t label_index = sources[0].has_labels() ? static_cast<size_t>(schema.FieldIndex(options.label_field)) : 0;
  // Records are read for the fields the later stages use, no other.
  std::vector<size_t> record_fields;
  if (read_records) {
    record_fields = fields.SchemaFields();
    if (sources[0].has_image()) record_fields.push_back(image_index);
    if (sources[0].has_labels()) record_fields.push_back(label_index);
  }
  UREC_ASSIGN_OR_RETURN(pipeline::ReadPlan plan, pipeline::ReadPlan::Create(std::move(sources), record_fields));

  auto impl = std::make_shared<Impl>(std::move(sampler).value(), std::move(plan));
  impl->options = options;
  impl->fields = std::move(fields);
  impl->read_records = read_records;
  impl->image_index = image_index;
  impl->label_index = label_index;
  // The upload reads NHWC; the conversion kernel makes the device layout.
  if (options.cuda.device >= 0) impl->options.layout = ImageLayout::kNHWC;
  impl->options.decode.layout = impl->options.layout;
  const SampleDecoderOptions sample_options = SampleOptionsOf(impl->options);
  impl->image_bytes = impl->reads.source(0).has_image() ? sample_options.output_bytes() : 0;
  impl->samples_per_claim = impl->reads.source(0).has_image() ? 1 : pipeline::kSamplesPerClaimWithoutImages;
  UREC_ASSIGN_OR_RETURN(impl->thread_count, ResolveThreadCount(options.threads, "loader: threads"));
  impl->consumer_polls = impl->thread_count < UsableCores();
  for (int i = 0; i < impl->thread_count; ++i) {
    UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> decoder, SampleDecoder::Create(sample_options));
    impl->decoders.push_back(std::move(decoder));
  }

  if (options.cuda.device >= 0) {
    UREC_ASSIGN_OR_RETURN(impl->device,
                          pipeline::DeviceStage::Create(options.cuda, static_cast<size_t>(options.prefetch) + 1,
                                                        options.batch_size,
                                                        impl->image_bytes > 0 ? options.image_size : 0));
  }
  UREC_RETURN_IF_ERROR(impl->slots.Allocate(options.prefetch, options.batch_size, impl->image_bytes,
                                            impl->read_records, impl->fields, impl->device.get()));
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

const LoaderOptions& Loader::options() const { return packed_ ? packed_->options : impl_->options; }
int Loader::threads() const { return packed_ ? packed_->inner->threads() : impl_->thread_count; }

uint64_t Loader::batches_per_epoch() const {
  if (packed_) return 0;
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->base_batches + impl_->run_batches;
}

Result<Batch> Loader::Next() {
  if (!packed_) return impl_->Next(impl_);
  size_t rows = 0;
  UREC_ASSIGN_OR_RETURN(const size_t slot, packed_->Next(&rows));
  Batch batch;
  batch.epoch_ = packed_->inner->epoch();
  if (rows == 0) return batch;  // end of the epoch
  batch.pool_ = packed_;
  batch.slot_ = slot;
  batch.size_ = rows;
  batch.index_ = packed_->run_batches - 1;
  batch.fields_ = &packed_->slots[slot]->fields;
  if (packed_->device != nullptr) batch.ready_event_ = packed_->device->ready_event(slot);
  return batch;
}

void Loader::SetEpoch(uint64_t epoch) {
  if (packed_) return packed_->SetEpoch(epoch);
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
  if (packed_) return packed_->inner->epoch();
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->sampler.epoch();
}

SamplerState Loader::state() const {
  if (packed_) return packed_->state().window;
  std::lock_guard<std::mutex> lock(impl_->mu);
  Sampler consumed = impl_->sampler;  // at the consumer's position, not the workers'
  Status at = consumed.Seek(impl_->ConsumedPosition());
  (void)at;  // the consumed position is within the partition
  return consumed.state();
}

Status Loader::Restore(const SamplerState& state) {
  if (packed_) {
    return Status::InvalidArgument("loader: a packing loader restores a PackState (pack_state()), not a "
                                   "SamplerState");
  }
  std::unique_lock<std::mutex> lock(impl_->mu);
  Sampler restored = impl_->sampler;
  UREC_RETURN_IF_ERROR(restored.Restore(state));
  impl_->Quiesce(lock);
  impl_->sampler = std::move(restored);
  impl_->StartRun(impl_->sampler.position());
  return Status::OK();
}

Result<PackState> Loader::pack_state() const {
  if (!packed_) return Status::FailedPrecondition("loader: pack_state() of a loader that does not pack");
  return packed_->state();
}

Status Loader::Restore(const PackState& state) {
  if (!packed_) return Status::FailedPrecondition("loader: a PackState restores only a packing loader");
  return packed_->Restore(state);
}

LoaderStats Loader::stats() const {
  if (packed_) return packed_->stats();
  std::lock_guard<std::mutex> lock(impl_->mu);
  LoaderStats stats = impl_->totals;
  stats.wall_s = pipeline::Seconds(pipeline::Clock::now() - impl_->stats_since);
  if (stats.wall_s > 0) {
    stats.images_per_s = double(stats.samples) / stats.wall_s;
    stats.batches_per_s = double(stats.batches) / stats.wall_s;
  }
  return stats;
}

void Loader::ResetStats() {
  if (packed_) return packed_->ResetStats();
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->totals = LoaderStats{};
  impl_->stats_since = pipeline::Clock::now();
}

}  // namespace unirecord
