// Batches of samples in sampler order: the stages before packing, driven
// by one pool of worker threads. A batch's life, one file each:
//   read_plan.{h,cc}       what is read of each record (only the fields
//                          used), remote datasets download ahead
//   batch_slots.{h,cc}     a batch claims a buffer of the pool
//   loader_workers.cc      the workers take its samples in sampler order,
//                          bad records raised or replaced
//   record_reads.{h,cc}    each sample's record read into its place
//   decode_stage.{h,cc}    its image decoded and transformed there
//   batch_fields.{h,cc}    its fields read, then the batch's assembled
//   device_stage.{h,cc}    it is uploaded to a device
//   sample_batches.cc      the consumer gets it (Next): runs and epochs
//   batch.cc               the consumer releases it: the slot is free again
// The Loader hands these batches out, or the PackStage (pack_stage.h) cuts
// them (windows of documents) into rows. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_SAMPLE_BATCHES_H_
#define UNIRECORD_SRC_PIPELINE_SAMPLE_BATCHES_H_

#include <atomic>
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
#include "pipeline/batch_stream.h"
#include "pipeline/device_stage.h"
#include "pipeline/decode_stage.h"
#include "pipeline/record_reads.h"
#include "sample/coverage.h"
#include "unirecord/loader.h"

namespace unirecord::pipeline {

// SampleBatches' samples per claim without an image (and the most it can be).
constexpr size_t kSamplesPerClaimWithoutImages = 16;
constexpr size_t kMaxSamplesPerClaim = kSamplesPerClaimWithoutImages;

// InvalidArgument for no dataset, or a null one.
Status CheckDatasets(const std::vector<std::shared_ptr<const Dataset>>& datasets);

class SampleBatches final : public BatchStream {
 public:
  // Checks `options` against the datasets (LoaderOptions::pack is not
  // theirs: the PackStage's), allocates the pool and starts epoch 0.
  static Result<std::shared_ptr<SampleBatches>> Create(std::vector<std::shared_ptr<const Dataset>> datasets,
                                                       const LoaderOptions& options);
  SampleBatches(Sampler sampler, BatchFields fields)
      : fields_(std::move(fields)), sampler_(std::move(sampler)), order_(sampler_) {}
  ~SampleBatches() override { Stop(); }

  // The sampler as created (epoch 0, position 0): where a state's
  // positions are in the epoch's order.
  const Sampler& order() const { return order_; }

  // BatchStream
  void Stop() override;
  const LoaderOptions& options() const override { return options_; }
  int threads() const override { return thread_count_; }
  uint64_t batches_per_epoch() const override;
  Result<Batch> Next() override;
  void SetEpoch(uint64_t epoch) override;
  uint64_t epoch() const override;
  SamplerState state() const override;
  Status Restore(const SamplerState& state) override;
  LoaderStats stats() const override;
  void ResetStats() override;
  // Each batch counts as Next hands it out.
  CoverageDigest coverage() const override { return coverage_.Digest(); }
  Status ResumeCoverage(const CoverageDigest& before) override { return coverage_.Carry(before); }

  // Batch::Pool (batch.cc): the consumer gives a batch back, or waits for its device copy.
  void Return(size_t slot_index) override;
  Status WaitOn(size_t slot_index, void* cuda_stream) const override;
  Status Synchronize(size_t slot_index) const override;

 private:
  // --- set at Create, then read-only ---
  LoaderOptions options_;
  BatchFields fields_;
  // The datasets (several: a mixture, whose sampler ids number their
  // records one after another) and how a sample of them is read.
  RecordReads reads_;
  std::vector<std::unique_ptr<DecodeStage>> decoders_;  // one per worker thread
  std::vector<std::unique_ptr<AudioDecode>> audio_decoders_;  // LoaderOptions::audio: one per worker thread
  size_t image_bytes_ = 0;  // one sample: image_size^2 * 3
  // Samples a worker takes per trip through the lock: 1 when each decodes an
  // image (milliseconds: finer is better balanced); more without images,
  // where a sample costs microseconds and the lock round trip would be a
  // large share of it.
  size_t samples_per_claim_ = 1;
  int thread_count_ = 1;
  std::unique_ptr<DeviceStage> device_;  // CudaOptions::device >= 0
  // The workers leave a core idle: the consumer polls before it sleeps.
  bool consumer_polls_ = false;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // workers: work or a free slot appeared
  std::condition_variable ready_cv_;  // consumer: a batch completed
  std::condition_variable idle_cv_;   // SetEpoch/Restore: the last busy worker finished
  // Batches completed so far (bumped under mu_; read without it by a
  // consumer polling for its batch, see AwaitBatchBriefly).
  std::atomic<uint64_t> batches_completed_{0};
  // --- everything below is guarded by mu_. Sampler::At() is called outside
  // the lock, but the sampler changes only while no worker is busy ---
  Sampler sampler_;
  const Sampler order_;
  BatchSlots slots_;
  uint64_t generation_ = 0;      // bumped when the run restarts; stale work is dropped
  uint64_t start_position_ = 0;  // sampler position of this run's first sample
  uint64_t base_batches_ = 0;    // batch number of this run's first batch in the epoch
  uint64_t end_position_ = 0;    // one past the last sample loaded this epoch
  uint64_t next_sample_ = 0;     // next sampler position to hand to a worker
  uint64_t next_batch_ = 0;      // next batch (of this run) for the consumer
  uint64_t run_batches_ = 0;     // batches in this run
  int busy_ = 0;
  bool stopping_ = false;
  Status sticky_error_;
  std::vector<std::thread> workers_;
  LoaderStats totals_;
  Clock::time_point stats_since_ = Clock::now();
  // The consumer's alone (StartRun, Next, coverage(), ResumeCoverage all run
  // on the thread that drives the Loader), though StartRun and Next update
  // it under mu_.
  sample::CoverageTracker coverage_;

  // sample_batches.cc: Create's parts, runs, the consumer's side.
  Status Configure(const LoaderOptions& options);
  Status StartWorkers();
  size_t batch_size() const { return options_.batch_size; }
  uint64_t EpochEnd() const;
  uint64_t RecordAt(uint64_t position) const { return RecordAt(sampler_, position); }
  uint64_t RecordAt(const Sampler& order, uint64_t position) const;
  void StartRun(uint64_t position);
  void Quiesce(std::unique_lock<std::mutex>& lock);
  void AwaitBatchBriefly(std::unique_lock<std::mutex>& lock);
  uint64_t ConsumedPosition() const;
  // Remote datasets download ahead in this run's order.
  void PlanRemoteReads();

  // loader_workers.cc: what a worker does with a claim.
  bool WorkAvailable() const;
  void WorkerLoop(DecodeStage& decode, AudioDecode* audio);
  Status LoadSample(uint64_t position, uint64_t record, Slot& slot, size_t offset, uint64_t epoch, uint64_t seed,
                    DecodeStage& decode, AudioDecode* audio, SampleTimes& times, uint64_t* skipped,
                    std::string* last_bad);
  void FinishBatch(size_t slot_index, std::unique_lock<std::mutex>& lock);
};

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_SAMPLE_BATCHES_H_
