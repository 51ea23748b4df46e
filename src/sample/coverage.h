// What a loader has delivered of its epoch (include/unirecord/coverage.h),
// kept as its batches go out: CoverageTracker, which the Loader and the
// packing loader hold and `urec sample --check` drives over a planned run.
// Not public API.
#ifndef UNIRECORD_SRC_SAMPLE_COVERAGE_H_
#define UNIRECORD_SRC_SAMPLE_COVERAGE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "unirecord/coverage.h"
#include "unirecord/sampler.h"

namespace unirecord::sample {

// The record at sampler id `id`: the subset's id at that index, when there is one.
inline uint64_t RecordOf(const std::vector<uint64_t>* subset, uint64_t id) { return subset ? (*subset)[id] : id; }

// The coverage of one rank's epoch. Driven from one thread (the loader's
// consumer); no allocation per id but the bitmaps' own (CoverageDetail::kIds).
class CoverageTracker {
 public:
  // A run starts at `run`'s position (a copy is kept): a new epoch, or a
  // restored one, whose earlier part is lost (uncarried) until Carry. The
  // run leaves out its partition's positions from `end` on (the loader's
  // drop_last; `run.size()`: none) and, on shard 0 and worker 0, the
  // sampler's drop_last tail. `carries`: the restored state carries
  // consumed documents (packing), so the run is resumed even at position 0.
  // Ids map through `subset` (may be null; must outlive the tracker's use).
  void Start(const Sampler& run, const std::vector<uint64_t>* subset, CoverageDetail detail, uint64_t end,
             bool carries = false);

  // `n` ids handed out from position `first` of the run's partition.
  void Deliver(const uint64_t* ids, size_t n, uint64_t first);
  // One id at (padded) position `position` of the epoch's order (packing).
  void DeliverAt(uint64_t id, uint64_t position);
  // One id at (padded) position `position` left out by design where it was
  // reached (packing); past the epoch's end it was never expected.
  void DropAt(uint64_t id, uint64_t position);
  void Skip(uint64_t replaced) { skipped_ += replaced; }
  void Finish() { complete_ = true; }

  // Adds what a run delivered before the restore that started this one: a
  // digest of this very rank, or the merge of every rank's (only shard 0
  // and worker 0 add it; the others only close their gap).
  Status Carry(const CoverageDigest& before);

  // The digest so far, with the epoch's expected multiset (computed once
  // per epoch) and the run's cut.
  CoverageDigest Digest() const;

 private:
  bool tracking() const { return detail_ != CoverageDetail::kNone; }
  bool with_ids() const { return detail_ == CoverageDetail::kIds; }
  void AddTo(CoveragePart& part, uint64_t id);
  void LoseIds();
  const CoveragePart& Expected() const;
  CoveragePart Cut() const;

  std::optional<Sampler> run_;
  const std::vector<uint64_t>* subset_ = nullptr;
  CoverageDetail detail_ = CoverageDetail::kDigest;
  uint64_t end_ = 0;
  uint64_t padding_from_ = 0;  // the run's first position past the epoch's end
  uint64_t fingerprint_ = 0;
  CoveragePart delivered_, padding_, dropped_;
  uint64_t skipped_ = 0;
  uint64_t uncarried_ = 0;
  bool gap_ = false;  // restored mid-epoch, nothing carried yet
  bool complete_ = false;
  // Per epoch and fingerprint: the expected multiset; per subset: its digest.
  mutable std::optional<CoveragePart> expected_;
  mutable uint64_t expected_epoch_ = 0, expected_fingerprint_ = 0;
  mutable bool expected_with_ids_ = false;  // asked for ids (they may not have fit)
  const std::vector<uint64_t>* digested_subset_ = nullptr;
  IdDigest subset_digest_;
};

}  // namespace unirecord::sample

#endif  // UNIRECORD_SRC_SAMPLE_COVERAGE_H_
