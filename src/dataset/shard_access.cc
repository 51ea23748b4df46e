#include "dataset/shard_access.h"

#include <algorithm>

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
Result<std::shared_ptr<const FieldReads>> ShardAccess::Reads(std::shared_ptr<const Dataset> dataset,
                                                             const std::vector<size_t>& fields) {
  if (dataset == nullptr) return Status::InvalidArgument("field reads: no dataset");
  const Dataset::Impl& d = *dataset->impl_;
  std::vector<uint8_t> reads(d.schema.num_fields(), 0);
  for (size_t field : fields) {
    if (field >= reads.size()) {
      return Status::OutOfRange("field reads: field " + std::to_string(field) + " of a schema of " +
                                std::to_string(reads.size()) + " fields");
    }
    reads[field] = 1;
  }
  std::vector<std::vector<SourceReads>> segments;
  for (const Dataset::Impl::SegmentFields& segment : d.segment_fields) {
    std::vector<SourceReads> sources(segment.layouts.size());
    for (size_t field = 0; field < reads.size(); ++field) {
      if (reads[field] == 0) continue;
      const Dataset::Impl::FieldSource& at = segment.fields[field];
      const index::FieldLayout& layout = segment.layouts[at.source];
      SourceReads& source = sources[at.source];
      source.entry = true;  // an indexed value is in the entry itself
      if (layout.blob_slot[at.field] >= 0) source.blob_slots.push_back(static_cast<uint32_t>(layout.blob_slot[at.field]));
      if (layout.column_slot[at.field] >= 0) source.page = true;
    }
    for (SourceReads& source : sources) std::sort(source.blob_slots.begin(), source.blob_slots.end());
    segments.push_back(std::move(sources));
  }
  return std::make_shared<const FieldReads>(std::move(dataset), std::move(reads), std::move(segments));
}

Result<Record> ShardAccess::Get(const std::shared_ptr<const FieldReads>& reads, uint64_t id) {
  return reads->dataset().Read(id, reads);
}
void ShardAccess::Prefetch(const FieldReads& reads, uint64_t id, ShardPages::PrefetchStage stage) {
  reads.dataset().impl_->Prefetch(id, stage, reads);
}

}  // namespace unirecord::dataset_internal
