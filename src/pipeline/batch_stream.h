// The consumer's end of the Loader's stages: the last stage before the
// consumer, which hands the batches out (SampleBatches, or the PackStage
// over them) and gets their buffers back. Loader's methods forward to it,
// so each answers for itself: no stage asks which other one it is, and
// none reaches into another's state. Not public API.
#ifndef UNIRECORD_SRC_PIPELINE_BATCH_STREAM_H_
#define UNIRECORD_SRC_PIPELINE_BATCH_STREAM_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "unirecord/coverage.h"
#include "unirecord/loader.h"
#include "unirecord/packing.h"
#include "unirecord/sampler.h"
#include "unirecord/status.h"

namespace unirecord {

// The side of a Batch that hands it out and gets it back.
struct Batch::Pool {
  virtual ~Pool() = default;
  virtual void Return(size_t slot) = 0;
  virtual Status WaitOn(size_t slot, void* cuda_stream) const = 0;
  virtual Status Synchronize(size_t slot) const = 0;

  // What a batch shows through Batch's accessors.
  using Contents = Batch::Contents;
  // A batch of `contents` in buffer `slot` of `pool`, which gets the
  // buffer back when the batch is released (pool null: nothing to give back).
  static Batch Make(std::shared_ptr<Pool> pool, size_t slot, const Contents& contents);
};

namespace pipeline {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class BatchStream : public Batch::Pool, public std::enable_shared_from_this<BatchStream> {
 public:
  // The Loader is going: stop the threads (batches handed out stay valid,
  // sharing this stage).
  virtual void Stop() = 0;

  virtual const LoaderOptions& options() const = 0;
  virtual int threads() const = 0;
  virtual uint64_t batches_per_epoch() const = 0;
  virtual Result<Batch> Next() = 0;
  virtual void SetEpoch(uint64_t epoch) = 0;
  virtual uint64_t epoch() const = 0;
  virtual SamplerState state() const = 0;
  virtual Status Restore(const SamplerState& state) = 0;
  // A packing stage's position (the others: FailedPrecondition).
  virtual Result<PackState> pack_state() const;
  virtual Status Restore(const PackState& state);
  virtual LoaderStats stats() const = 0;
  virtual void ResetStats() = 0;
  // What was delivered of the epoch (Loader::coverage, ResumeCoverage).
  virtual CoverageDigest coverage() const = 0;
  virtual Status ResumeCoverage(const CoverageDigest& before) = 0;
};

}  // namespace pipeline
}  // namespace unirecord

#endif  // UNIRECORD_SRC_PIPELINE_BATCH_STREAM_H_
