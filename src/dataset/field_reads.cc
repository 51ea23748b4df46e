#include "dataset/field_reads.h"

#include <utility>

namespace unirecord::dataset_internal {

FieldReads::FieldReads(std::shared_ptr<const Dataset> dataset, std::vector<uint8_t> reads,
                       std::vector<std::vector<SourceReads>> segments)
    : dataset_(std::move(dataset)), reads_(std::move(reads)), segments_(std::move(segments)) {
  for (const std::vector<SourceReads>& sources : segments_) {
    for (const SourceReads& source : sources) reads_pages_ = reads_pages_ || !source.blob_slots.empty() || source.page;
  }
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
