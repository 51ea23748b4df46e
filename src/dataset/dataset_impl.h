// The inside of a Dataset: its opened shards. Shared with the library's own
// layers that read the shards directly (src/query); not a public header.
#ifndef UNIRECORD_DATASET_DATASET_IMPL_H_
#define UNIRECORD_DATASET_DATASET_IMPL_H_

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "index/record_table.h"
#include "shard/shard_reader.h"
#include "unirecord/dataset.h"

namespace unirecord {

struct Dataset::Impl {
  DatasetOptions options;
  std::vector<std::unique_ptr<shard::ShardReader>> shards;  // by shard number
  std::vector<uint64_t> first_ids;                           // parallel to shards
  std::vector<ShardInfo> infos;
  uint64_t size = 0;
  Schema schema;
  std::map<std::string, std::string> metadata;
  std::string uuid;
  index::FieldLayout layout;

  // The shard holding `id` and the row in it.
  Result<std::pair<const shard::ShardReader*, uint64_t>> Locate(uint64_t id) const {
    if (id >= size) {
      return Status::OutOfRange("record id " + std::to_string(id) + " out of range (dataset has " +
                                std::to_string(size) + " records)");
    }
    size_t s = static_cast<size_t>(std::upper_bound(first_ids.begin(), first_ids.end(), id) - first_ids.begin()) - 1;
    return std::pair<const shard::ShardReader*, uint64_t>(shards[s].get(), id - first_ids[s]);
  }
};

}  // namespace unirecord

#endif  // UNIRECORD_DATASET_DATASET_IMPL_H_
