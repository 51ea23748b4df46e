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
#include "remote/remote_shards.h"
#include "shard/shard_reader.h"
#include "unirecord/dataset.h"

namespace unirecord {

struct Dataset::Impl {
  DatasetOptions options;
  // By shard number. Of a remote dataset, only the frames (header, footer,
  // index): page reads go through Data().
  std::vector<std::unique_ptr<shard::ShardReader>> shards;
  std::shared_ptr<remote::RemoteShards> remote;  // null for a local dataset
  std::vector<uint64_t> first_ids;                           // parallel to shards
  std::vector<ShardInfo> infos;
  uint64_t size = 0;
  Schema schema;
  std::map<std::string, std::string> metadata;
  std::string uuid;
  index::FieldLayout layout;

  // The position in `shards` of the shard holding `id` (< size).
  size_t ShardOf(uint64_t id) const {
    return static_cast<size_t>(std::upper_bound(first_ids.begin(), first_ids.end(), id) - first_ids.begin()) - 1;
  }

  // The shard holding `id` and the row in it (index reads only: for a
  // remote dataset, its frame).
  Result<std::pair<const shard::ShardReader*, uint64_t>> Locate(uint64_t id) const {
    if (id >= size) {
      return Status::OutOfRange("record id " + std::to_string(id) + " out of range (dataset has " +
                                std::to_string(size) + " records)");
    }
    const size_t s = ShardOf(id);
    return std::pair<const shard::ShardReader*, uint64_t>(shards[s].get(), id - first_ids[s]);
  }

  // Starts loading record `id`'s record-table entry (kEntry) or, a record
  // later, its blobs' first bytes (kBlobs): ShardReader::PrefetchEntry and
  // PrefetchBlobs. Local datasets only (a remote shard may not be here
  // yet); ids out of range are ignored.
  enum class PrefetchStage { kEntry, kBlobs };
  void Prefetch(uint64_t id, PrefetchStage stage) const {
    if (remote != nullptr || id >= size) return;
    const size_t s = ShardOf(id);
    const uint64_t row = id - first_ids[s];
    if (stage == PrefetchStage::kEntry) {
      shards[s]->PrefetchEntry(row);
    } else {
      shards[s]->PrefetchBlobs(row);
    }
  }

  // A shard whose pages may be read, and what keeps them mapped (null: the
  // Dataset itself). For a remote dataset: downloaded, verified, pinned.
  struct PageReader {
    const shard::ShardReader* reader = nullptr;
    std::shared_ptr<const void> hold;
  };
  Result<PageReader> Pages(size_t s) const {
    if (remote == nullptr) return PageReader{shards[s].get(), nullptr};
    UREC_ASSIGN_OR_RETURN(std::shared_ptr<const remote::ShardData> data,
                          remote->Acquire(static_cast<uint32_t>(s)));
    const shard::ShardReader* reader = data->reader.get();
    return PageReader{reader, std::move(data)};
  }
};

}  // namespace unirecord

#endif  // UNIRECORD_DATASET_DATASET_IMPL_H_
