#include "dataset/shard_access.h"

#include "dataset/dataset_impl.h"

namespace unirecord::dataset_internal {

size_t ShardAccess::ShardCount(const Dataset& d) { return d.impl_->shards.size(); }
uint64_t ShardAccess::FirstId(const Dataset& d, size_t s) { return d.impl_->first_ids[s]; }
const shard::ShardReader& ShardAccess::Frame(const Dataset& d, size_t s) { return *d.impl_->shards[s]; }
Result<std::vector<ShardPages::Reader>> ShardAccess::Files(const Dataset& d, size_t s, bool pages) {
  std::vector<ShardPages::Reader> files;
  for (uint32_t source = 0; source <= d.impl_->columns[s].size(); ++source) {
    if (pages) {
      UREC_ASSIGN_OR_RETURN(files.emplace_back(), d.impl_->pages->Pages(s, source));
    } else {
      files.push_back({&d.impl_->SourceFrame(s, source), nullptr});
    }
  }
  return files;
}
std::pair<uint32_t, size_t> ShardAccess::SourceOf(const Dataset& d, size_t s, size_t field) {
  const Dataset::Impl::FieldSource& at = d.impl_->SourceOf(s, field);
  return {at.source, at.field};
}
Result<Record> ShardAccess::Get(const std::shared_ptr<const FieldReads>& reads, uint64_t id) {
  return reads->dataset().Read(id, reads);
}
void ShardAccess::Prefetch(const FieldReads& reads, uint64_t id, ShardPages::PrefetchStage stage) {
  reads.dataset().impl_->Prefetch(id, stage, reads);
}

}  // namespace unirecord::dataset_internal
