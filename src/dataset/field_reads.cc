#include "dataset/field_reads.h"

#include <algorithm>

#include "dataset/dataset_impl.h"

namespace unirecord::dataset_internal {

Result<std::shared_ptr<const FieldReads>> FieldReads::Create(std::shared_ptr<const Dataset> dataset,
                                                             const std::vector<size_t>& fields) {
  if (dataset == nullptr) return Status::InvalidArgument("field reads: no dataset");
  const Dataset::Impl& d = *dataset->impl_;
  auto reads = std::make_shared<FieldReads>();
  reads->reads_.assign(d.schema.num_fields(), 0);
  for (size_t field : fields) {
    if (field >= reads->reads_.size()) {
      return Status::OutOfRange("field reads: field " + std::to_string(field) + " of a schema of " +
                                std::to_string(reads->reads_.size()) + " fields");
    }
    reads->reads_[field] = 1;
  }
  for (const Dataset::Impl::SegmentFields& segment : d.segment_fields) {
    std::vector<SourceReads> sources(segment.layouts.size());
    for (size_t field = 0; field < reads->reads_.size(); ++field) {
      if (reads->reads_[field] == 0) continue;
      const Dataset::Impl::FieldSource& at = segment.fields[field];
      const index::FieldLayout& layout = segment.layouts[at.source];
      SourceReads& source = sources[at.source];
      source.entry = true;  // an indexed value is in the entry itself
      if (layout.blob_slot[at.field] >= 0) source.blob_slots.push_back(static_cast<uint32_t>(layout.blob_slot[at.field]));
      if (layout.column_slot[at.field] >= 0) source.page = true;
    }
    for (SourceReads& source : sources) {
      std::sort(source.blob_slots.begin(), source.blob_slots.end());
      reads->reads_pages_ = reads->reads_pages_ || !source.blob_slots.empty() || source.page;
    }
    reads->segments_.push_back(std::move(sources));
  }
  reads->dataset_ = std::move(dataset);
  return std::shared_ptr<const FieldReads>(std::move(reads));
}

std::string FieldReads::Names() const {
  std::string names;
  for (size_t field = 0; field < reads_.size(); ++field) {
    if (reads_[field] == 0) continue;
    names += (names.empty() ? "'" : ", '") + dataset_->schema().field(field).name + "'";
  }
  return names.empty() ? "none" : names;
}

}  // namespace unirecord::dataset_internal
