// Reads of some fields of a Dataset's records, resolved once: by segment,
// which of its sources (its shard, the column files of its field groups:
// format/SPEC.md section 1.4) are read at all, which of their blobs, and
// whether their scalar page. The Loader reads through one the fields its
// later stages use (ShardAccess::Get): a record read so touches no byte of
// another field, and verify_checksums covers exactly the bytes it reads. A
// file of which only indexed values are read is read in its index alone:
// a remote shard is then not downloaded.
// Not public API.
#ifndef UNIRECORD_DATASET_FIELD_READS_H_
#define UNIRECORD_DATASET_FIELD_READS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "unirecord/dataset.h"

namespace unirecord::dataset_internal {

// One source of a segment: what a read of the chosen fields takes from it.
struct SourceReads {
  bool entry = false;                // its record-table entry (every read of it starts there)
  std::vector<uint32_t> blob_slots;  // the blobs read, by slot, increasing
  bool page = false;                 // its scalar page
};

// Made by ShardAccess::Reads, which knows where the dataset's fields are.
class FieldReads {
 public:
  // `reads`: by field of the schema, 1 for a field read; `segments`: by
  // segment, by source, what is read of it.
  FieldReads(std::shared_ptr<const Dataset> dataset, std::vector<uint8_t> reads,
             std::vector<std::vector<SourceReads>> segments);

  const Dataset& dataset() const { return *dataset_; }
  bool Reads(size_t field) const { return field < reads_.size() && reads_[field] != 0; }
  // "'label', 'boxes'": the fields read, for messages.
  std::string Names() const;
  // By source of segment `segment` (Dataset::segments()).
  const std::vector<SourceReads>& Sources(size_t segment) const { return segments_[segment]; }
  // Some blob or scalar page is read: the shard files themselves, not only
  // their indexes (which hold the entries and the indexed values).
  bool reads_pages() const { return reads_pages_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<uint8_t> reads_;                     // by field of the schema
  std::vector<std::vector<SourceReads>> segments_;  // by segment, by source
  bool reads_pages_ = false;
};

}  // namespace unirecord::dataset_internal

#endif  // UNIRECORD_DATASET_FIELD_READS_H_
