#include "pipeline/read_plan.h"

#include <algorithm>

namespace unirecord::pipeline {

std::string DatasetName(size_t k, const Dataset& dataset) {
  std::string name = "dataset " + std::to_string(k);
  if (!dataset.shards().empty()) name += " (" + dataset.shards().front().path + ")";
  return name;
}

Result<ReadPlan> ReadPlan::Create(std::vector<SampleSource> sources, const std::vector<size_t>& record_fields) {
  ReadPlan plan;
  uint64_t first = 0;
  for (const SampleSource& source : sources) {
    plan.first_ids_.push_back(first);
    first += source.dataset().size();
    // Records read in their indexes alone (indexed values) download nothing.
    bool downloads = source.dataset().is_remote();
    if (!record_fields.empty()) {
      UREC_ASSIGN_OR_RETURN(std::shared_ptr<const dataset_internal::FieldReads> reads,
                            dataset_internal::ShardAccess::Reads(source.dataset().shared_from_this(), record_fields));
      downloads = downloads && reads->reads_pages();
      plan.reads_.push_back(std::move(reads));
    }
    plan.downloads_.push_back(downloads);
    plan.any_downloads_ = plan.any_downloads_ || downloads;
  }
  plan.sources_ = std::move(sources);
  return plan;
}

std::pair<size_t, uint64_t> ReadPlan::Locate(uint64_t id) const {
  const auto k = static_cast<size_t>(std::upper_bound(first_ids_.begin(), first_ids_.end(), id) - first_ids_.begin()) - 1;
  return {k, id - first_ids_[k]};
}

Result<Record> ReadPlan::Read(uint64_t id) const {
  const auto [k, record] = Locate(id);
  return dataset_internal::ShardAccess::Get(reads_[k], record);
}

void ReadPlan::Prefetch(uint64_t id, ShardPages::PrefetchStage stage) const {
  const auto [k, record] = Locate(id);
  if (k < reads_.size()) dataset_internal::ShardAccess::Prefetch(*reads_[k], record, stage);
}

// A remote dataset downloads ahead in this order (a pure function of seed
// and epoch, known before the first read); the loader passes this run's
// order followed by the next epoch's, so that the next epoch's first shards
// download while this one ends instead of stalling its first batch (a plan
// of an epoch that never comes costs prefetch_shards downloads at most). A
// mixture plans each remote dataset's own records.
void ReadPlan::PlanRemote(const std::vector<uint64_t>& ids) const {
  std::vector<std::vector<uint64_t>> records(sources_.size());
  for (uint64_t id : ids) {
    const auto [k, record] = Locate(id);
    if (downloads_[k]) records[k].push_back(record);
  }
  for (size_t k = 0; k < sources_.size(); ++k) {
    if (downloads_[k]) sources_[k].dataset().PlanReads(records[k]);
  }
}

}  // namespace unirecord::pipeline
