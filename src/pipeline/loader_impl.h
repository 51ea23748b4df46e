// The Loader's insides, shared by the files of src/pipeline/ that make it,
// one stage of a batch's life each:
//   batch_slots.{h,cc}   the pool of batch buffers: a batch claims a slot
//   loader_workers.cc    the workers fill it: read, decode, batch the fields
//   batch_fields.{h,cc}  the fields are assembled
//   device_stage.{h,cc}  the batch is uploaded to a device
//   loader.cc            the consumer gets it (Next), runs and epochs, Create
//   batch.cc             the consumer releases it: the slot is free again
//   read_plan.{h,cc}     what is read of each record (only the fields used),
//                        and remote datasets download ahead in the run's order
//   loader_coverage.cc   what was delivered (coverage(), ResumeCoverage)
// and, when packing, packed_loader.{h,cc} (with packer.{h,cc}) cuts the
// batches of an inner Loader (windows of documents) into rows.
// Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_LOADER_IMPL_H_
#define UNIRECORD_SRC_PIPELINE_LOADER_IMPL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/batch_fields.h"
#include "pipeline/batch_slots.h"
#include "pipeline/device_stage.h"
#include "pipeline/read_plan.h"
#include "sample/coverage.h"
#include "unirecord/loader.h"

namespace unirecord {

// The loader's side of a Batch: where its buffer goes back, and the device
// batch it may wait for.
struct Batch::Pool {
  virtual ~Pool() = default;
  virtual void Return(size_t slot) = 0;
  virtual Status WaitOn(size_t slot, void* cuda_stream) const = 0;
  virtual Status Synchronize(size_t slot) const = 0;
};

namespace pipeline {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Loader::Impl::samples_per_claim for samples without an image (and the
// most it can be).
constexpr size_t kSamplesPerClaimWithoutImages = 16;
constexpr size_t kMaxSamplesPerClaim = kSamplesPerClaimWithoutImages;

}  // namespace pipeline

struct Loader::Impl final : Batch::Pool {
  using Slot = pipeline::Slot;

  Impl(Sampler s, pipeline::ReadPlan plan) : reads(std::move(plan)), sampler(std::move(s)) {}
  ~Impl() override { StopWorkers(); }

  // --- set at Create, then read-only ---
  // The datasets (several: a mixture, whose sampler ids number their
  // records one after another) and what is read of their records.
  pipeline::ReadPlan reads;
  LoaderOptions options;
  pipeline::BatchFields fields;
  // Samples go through a Record (of the fields used: the image, the label
  // and the batched fields) when fields are batched or there is no image;
  // else the image and label are read alone (SampleDecoder::DecodeRecord).
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
  std::unique_ptr<pipeline::DeviceStage> device;  // CudaOptions::device >= 0
  // The workers leave a core idle: the consumer polls before it sleeps.
  bool consumer_polls = false;

  std::mutex mu;
  std::condition_variable work_cv;   // workers: work or a free slot appeared
  std::condition_variable ready_cv;  // consumer: a batch completed
  std::condition_variable idle_cv;   // SetEpoch/Restore: the last busy worker finished
  // Batches completed so far (bumped under mu; read without it by a
  // consumer polling for its batch, see AwaitBatchBriefly).
  std::atomic<uint64_t> batches_completed{0};
  // --- everything below is guarded by mu. Sampler::At() is called outside
  // the lock, but the sampler changes only while no worker is busy ---
  Sampler sampler;
  pipeline::BatchSlots slots;
  uint64_t generation = 0;      // bumped when the run restarts; stale work is dropped
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
  pipeline::Clock::time_point stats_since = pipeline::Clock::now();
  // The consumer's alone (StartRun, Next, coverage(), ResumeCoverage all run
  // on the thread that drives the Loader), though StartRun and Next update
  // it under mu.
  sample::CoverageTracker coverage;

  size_t batch_size() const { return options.batch_size; }
  uint64_t EpochEnd() const;
  uint64_t RecordAt(uint64_t position) const { return RecordAt(sampler, position); }
  uint64_t RecordAt(const Sampler& order, uint64_t position) const;

  // loader.cc: runs, the consumer's side.
  void StopWorkers();
  void StartRun(uint64_t position);
  void Quiesce(std::unique_lock<std::mutex>& lock);
  Result<Batch> Next(std::shared_ptr<Impl> self);
  void AwaitBatchBriefly(std::unique_lock<std::mutex>& lock);
  uint64_t ConsumedPosition() const;

  // loader_workers.cc: what a worker does with a claim.
  bool WorkAvailable() const;
  void WorkerLoop(SampleDecoder& decoder);
  Status LoadSample(uint64_t position, uint64_t record, Slot& slot, size_t offset, uint64_t epoch, uint64_t seed,
                    SampleDecoder& decoder, SampleTimes& times, uint64_t* skipped, std::string* last_bad);
  Status ReadRecord(uint64_t id, Slot& slot, size_t offset, uint64_t epoch, uint64_t seed, SampleDecoder& decoder,
                    SampleTimes& times, CropWindow* window);
  void FinishBatch(size_t slot_index, std::unique_lock<std::mutex>& lock);

  // batch.cc: the consumer gives a batch back, or waits for its device copy.
  void Return(size_t slot_index) override;
  Status WaitOn(size_t slot_index, void* cuda_stream) const override;
  Status Synchronize(size_t slot_index) const override;

  // loader.cc: remote datasets download ahead in this run's order.
  void PlanRemoteReads();
};

}  // namespace unirecord

#endif  // UNIRECORD_SRC_PIPELINE_LOADER_IMPL_H_
