// What the library's own layers above the dataset (the query layer, the
// loader) read of a Dataset: its shards, where each starts, their pages and
// prefetches. The narrow door to Dataset's insides (dataset_impl.h stays
// inside src/dataset). Not public API.
#ifndef UNIRECORD_DATASET_SHARD_ACCESS_H_
#define UNIRECORD_DATASET_SHARD_ACCESS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "dataset/field_reads.h"
#include "dataset/shard_pages.h"
#include "shard/shard_reader.h"
#include "unirecord/dataset.h"

namespace unirecord::dataset_internal {

class ShardAccess {
 public:
  static size_t ShardCount(const Dataset& dataset);
  // The id of shard s's first record.
  static uint64_t FirstId(const Dataset& dataset, size_t s);
  // Shard s's frame: header, footer and index (remote: the cached frame,
  // whose pages are not readable; Files(..., true) gives those).
  static const shard::ShardReader& Frame(const Dataset& dataset, size_t s);
  // Shard s's files by source: the shard (0), then its column files
  // (format/SPEC.md 1.4). `pages`: readable (remote: downloaded and held
  // while the Readers are), else their frames (index reads only).
  static Result<std::vector<ShardPages::Reader>> Files(const Dataset& dataset, size_t s, bool pages);
  // Where field `field` of the dataset's schema is read in shard s: the
  // source (an index into Files()) and the field's index in that file.
  static std::pair<uint32_t, size_t> SourceOf(const Dataset& dataset, size_t s, size_t field);
  // Reads of the fields `fields` (indexes into dataset->schema();
  // OutOfRange for one past it) of the dataset's records.
  static Result<std::shared_ptr<const FieldReads>> Reads(std::shared_ptr<const Dataset> dataset,
                                                         const std::vector<size_t>& fields);
  // Record `id` of reads->dataset(), only the fields `reads` names: no
  // other source, blob or page is read (or verified); the Record's getters
  // of another field fail with FailedPrecondition.
  static Result<Record> Get(const std::shared_ptr<const FieldReads>& reads, uint64_t id);
  // ShardPages::Prefetch of what that read of record `id` touches (ids past
  // the end are ignored).
  static void Prefetch(const FieldReads& reads, uint64_t id, ShardPages::PrefetchStage stage);
};

}  // namespace unirecord::dataset_internal

#endif  // UNIRECORD_DATASET_SHARD_ACCESS_H_
