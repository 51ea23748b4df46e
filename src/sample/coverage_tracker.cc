// CoverageTracker (sample/coverage.h): one rank's coverage of its epoch.
#include <algorithm>
#include <utility>

#include "sample/coverage.h"
#include "util/splitmix64.h"

namespace unirecord::sample {

void CoverageTracker::Start(const Sampler& run, const std::vector<uint64_t>* subset, CoverageDetail detail,
                            uint64_t end, bool carries) {
  run_ = run;
  subset_ = subset;
  detail_ = detail;
  end_ = std::min(end, run.size());
  // Position k of the partition is padding from the first k whose padded
  // position reaches the epoch's end (they grow with k).
  const uint64_t first = run.PaddedPosition(0), n = run.num_records();
  const uint64_t step = uint64_t{run.options().num_shards} * run.options().num_workers;
  padding_from_ = first >= n ? 0 : (n - first + step - 1) / step;
  if (subset != nullptr && subset != digested_subset_) {
    subset_digest_ = IdDigest{};
    subset_digest_.Add(subset->data(), subset->size());
    digested_subset_ = subset;
  }
  fingerprint_ = run.state().fingerprint;
  if (subset != nullptr) {
    fingerprint_ = Mix64(Mix64(Mix64(fingerprint_ + subset_digest_.count) + subset_digest_.sum1) +
                         subset_digest_.sum2);
  }
  delivered_ = padding_ = dropped_ = CoveragePart{};
  if (with_ids()) delivered_.ids = padding_.ids = dropped_.ids = IdBitmap();
  skipped_ = 0;
  gap_ = carries || run.GlobalPosition(run.position()) > 0;
  uncarried_ = gap_ ? 1 : 0;
  complete_ = run.position() >= end_;
}

void CoverageTracker::AddTo(CoveragePart& part, uint64_t id) {
  part.digest.Add(id);
  if (part.ids && !part.ids->Add(id)) LoseIds();
}

// A multiplicity past IdBitmap's limit: the epoch goes on with sums alone.
void CoverageTracker::LoseIds() {
  detail_ = CoverageDetail::kDigest;
  delivered_.ids.reset();
  padding_.ids.reset();
  dropped_.ids.reset();
}

void CoverageTracker::Deliver(const uint64_t* ids, size_t n, uint64_t first) {
  if (first + n >= end_) complete_ = true;
  if (!tracking()) return;
  const size_t regular = first >= padding_from_ ? 0 : static_cast<size_t>(std::min<uint64_t>(n, padding_from_ - first));
  delivered_.digest.Add(ids, n);
  padding_.digest.Add(ids + regular, n - regular);
  if (!with_ids()) return;
  for (size_t i = 0; i < n && with_ids(); ++i) {
    if (!delivered_.ids->Add(ids[i]) || (i >= regular && !padding_.ids->Add(ids[i]))) LoseIds();
  }
}

void CoverageTracker::DeliverAt(uint64_t id, uint64_t position) {
  if (!tracking()) return;
  AddTo(delivered_, id);
  if (position >= run_->num_records()) AddTo(padding_, id);
}

void CoverageTracker::DropAt(uint64_t id, uint64_t position) {
  if (tracking() && position < run_->num_records()) AddTo(dropped_, id);
}

Status CoverageTracker::Carry(const CoverageDigest& before) {
  if (!gap_) {
    return Status::FailedPrecondition("coverage: nothing to carry: the loader was not restored mid-epoch, or a "
                                      "digest was carried into it since");
  }
  const SamplerOptions& o = run_->options();
  if (before.seed != o.seed || before.epoch != run_->epoch() || before.fingerprint != fingerprint_) {
    return Status::InvalidArgument("coverage: the digest to carry is of seed " + std::to_string(before.seed) +
                                   ", epoch " + std::to_string(before.epoch) + " (or another order or subset); " +
                                   "the loader is at seed " + std::to_string(o.seed) + ", epoch " +
                                   std::to_string(run_->epoch()));
  }
  const bool merged = before.num_shards == 0;
  const bool own = before.num_shards == o.num_shards && before.shard_id == o.shard_id &&
                   before.num_workers == o.num_workers && before.worker_id == o.worker_id;
  if (!merged && !own) {
    return Status::InvalidArgument(
        "coverage: a digest of rank " + std::to_string(before.shard_id) + " of " + std::to_string(before.num_shards) +
        " carries only into that rank of as many ranks (this is rank " + std::to_string(o.shard_id) + " of " +
        std::to_string(o.num_shards) + "); carry the merge of every rank's digests (MergeCoverage) instead");
  }
  gap_ = false;
  --uncarried_;
  if (merged && (o.shard_id != 0 || o.worker_id != 0)) return Status::OK();  // rank 0 carries it
  if (!tracking()) return Status::OK();
  delivered_.digest.Add(before.delivered.digest);
  padding_.digest.Add(before.padding.digest);
  dropped_.digest.Add(before.dropped.digest);
  skipped_ += before.skipped;
  uncarried_ += before.uncarried;
  if (with_ids()) {
    if (!before.ids || !delivered_.ids->Add(*before.delivered.ids) || !padding_.ids->Add(*before.padding.ids) ||
        !dropped_.ids->Add(*before.dropped.ids)) {
      LoseIds();
    }
  }
  return Status::OK();
}

// Each position of the epoch's order once. Without a mixture the order is a
// permutation of the ids, so every id (every subset entry) once; a mixture's
// positions are walked.
const CoveragePart& CoverageTracker::Expected() const {
  const Sampler& run = *run_;
  if (expected_ && expected_epoch_ == run.epoch() && expected_fingerprint_ == fingerprint_ &&
      expected_with_ids_ == with_ids()) {
    return *expected_;
  }
  CoveragePart part;
  if (with_ids()) part.ids = IdBitmap();
  const bool permutation = run.source_counts().size() == 1 && run.num_records() == run.num_ids();
  bool ids_fit = true;
  if (permutation && subset_ == nullptr) {
    for (uint64_t id = 0; id < run.num_ids(); ++id) part.digest.Add(id);
    if (part.ids) ids_fit = part.ids->AddRange(0, run.num_ids());
  } else if (permutation) {
    part.digest = subset_digest_;
    for (size_t i = 0; part.ids && ids_fit && i < subset_->size(); ++i) ids_fit = part.ids->Add((*subset_)[i]);
  } else {
    for (uint64_t p = 0; p < run.num_records(); ++p) {
      const uint64_t id = RecordOf(subset_, run.GlobalAt(p));
      part.digest.Add(id);
      if (part.ids && ids_fit) ids_fit = part.ids->Add(id);
    }
  }
  if (!ids_fit) part.ids.reset();  // the check then compares sums alone
  expected_ = std::move(part);
  expected_epoch_ = run.epoch();
  expected_fingerprint_ = fingerprint_;
  expected_with_ids_ = with_ids();
  return *expected_;
}

// The partition's positions from end_ on (but padding), and on shard 0 and
// worker 0 the positions no rank holds under the sampler's drop_last.
CoveragePart CoverageTracker::Cut() const {
  const Sampler& run = *run_;
  CoveragePart cut;
  if (with_ids()) cut.ids = IdBitmap();
  const uint64_t n = run.num_records();
  for (uint64_t k = end_; k < run.size(); ++k) {
    if (run.PaddedPosition(k) < n) cut.Add(RecordOf(subset_, run.At(k)));
  }
  const SamplerOptions& o = run.options();
  if (o.drop_last && o.shard_id == 0 && o.worker_id == 0) {
    const uint64_t base = run.base();
    for (uint64_t p = base + (n - base) / o.num_shards * o.num_shards; p < n; ++p) {
      cut.Add(RecordOf(subset_, run.GlobalAt(p)));
    }
  }
  return cut;
}

CoverageDigest CoverageTracker::Digest() const {
  CoverageDigest d;
  const Sampler& run = *run_;
  const SamplerOptions& o = run.options();
  d.seed = o.seed;
  d.epoch = run.epoch();
  d.fingerprint = fingerprint_;
  d.num_shards = o.num_shards;
  d.shard_id = o.shard_id;
  d.num_workers = o.num_workers;
  d.worker_id = o.worker_id;
  d.expected = Expected();
  d.delivered = delivered_;
  d.padding = padding_;
  d.dropped = dropped_;
  d.cut = Cut();
  d.skipped = skipped_;
  d.uncarried = uncarried_;
  d.complete = complete_;
  d.ids = with_ids() && d.expected.ids && d.cut.ids;
  if (!d.ids) {
    for (CoveragePart* part : {&d.expected, &d.delivered, &d.padding, &d.dropped, &d.cut}) part->ids.reset();
  }
  return d;
}

}  // namespace unirecord::sample

namespace unirecord {
namespace {

// Every rank and worker of a run of `shards` ranks: from the epoch's start
// or `state`, carrying `carried` when restored mid-epoch, handing out
// `stop` ids each (0: all).
Result<std::vector<CoverageDigest>> PlannedRun(const CoveragePlan& plan, uint32_t shards, const SamplerState* state,
                                               uint64_t stop, const CoverageDigest* carried) {
  std::vector<CoverageDigest> out;
  std::vector<uint64_t> ids(4096);
  for (uint32_t rank = 0; rank < shards; ++rank) {
    for (uint32_t worker = 0; worker < plan.sampler.num_workers; ++worker) {
      SamplerOptions o = plan.sampler;
      o.num_shards = shards;
      o.shard_id = rank;
      o.worker_id = worker;
      UREC_ASSIGN_OR_RETURN(Sampler sampler, Sampler::Create(plan.source_sizes, o));
      sampler.SetEpoch(plan.epoch);
      if (state != nullptr) UREC_RETURN_IF_ERROR(sampler.Restore(*state));
      sample::CoverageTracker tracker;
      tracker.Start(sampler, nullptr, plan.detail, sampler.size());
      if (carried != nullptr && sampler.GlobalPosition(sampler.position()) > 0) {
        UREC_RETURN_IF_ERROR(tracker.Carry(*carried));
      }
      const uint64_t end = stop == 0 ? sampler.size() : std::min(sampler.size(), sampler.position() + stop);
      for (uint64_t k = sampler.position(); k < end;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(ids.size(), end - k));
        for (size_t i = 0; i < n; ++i) ids[i] = sampler.At(k + i);
        tracker.Deliver(ids.data(), n, k);
        k += n;
      }
      out.push_back(tracker.Digest());
    }
  }
  return out;
}

}  // namespace

Result<std::vector<CoverageDigest>> PlanCoverage(const CoveragePlan& plan) {
  const uint32_t shards = plan.sampler.num_shards;
  if (plan.resume_shards == 0) return PlannedRun(plan, shards, nullptr, plan.stop, nullptr);
  UREC_ASSIGN_OR_RETURN(std::vector<CoverageDigest> first, PlannedRun(plan, shards, nullptr, plan.stop, nullptr));
  SamplerOptions o = plan.sampler;
  o.shard_id = o.worker_id = 0;
  UREC_ASSIGN_OR_RETURN(Sampler stopped, Sampler::Create(plan.source_sizes, o));
  stopped.SetEpoch(plan.epoch);
  if (plan.stop != 0) UREC_RETURN_IF_ERROR(stopped.Seek(std::min(plan.stop, stopped.size())));
  if (plan.stop == 0) UREC_RETURN_IF_ERROR(stopped.Seek(stopped.size()));
  SamplerState state = stopped.state();
  if (plan.resume_position) state.position = *plan.resume_position;
  UREC_ASSIGN_OR_RETURN(CoverageDigest merged, MergeCoverage(first));
  return PlannedRun(plan, plan.resume_shards, &state, 0, &merged);
}

}  // namespace unirecord
