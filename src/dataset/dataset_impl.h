// The inside of a Dataset: its opened shards. Used inside src/dataset only;
// the layers above read through shard_access.h. Not a public header.
#ifndef UNIRECORD_DATASET_DATASET_IMPL_H_
#define UNIRECORD_DATASET_DATASET_IMPL_H_

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format/manifest.h"
#include "index/record_table.h"
#include "dataset/shard_pages.h"
#include "remote/remote_shards.h"
#include "shard/shard_reader.h"
#include "unirecord/dataset.h"

namespace unirecord {

struct Dataset::Impl {
  DatasetOptions options;
  // By shard number. Of a remote dataset, only the frames (header, footer,
  // index): page reads go through `pages`.
  std::vector<std::unique_ptr<shard::ShardReader>> shards;
  std::unique_ptr<ShardPages> pages;  // local or remote: chosen at open
  std::vector<uint64_t> first_ids;                           // parallel to shards
  std::vector<ShardInfo> infos;
  std::vector<SegmentInfo> segments;
  uint64_t version = 0;  // generation opened through a manifest
  uint64_t size = 0;
  Schema schema;
  std::map<std::string, std::string> metadata;
  std::string uuid;
  index::FieldLayout layout;

  // The checks across the shards of each segment (one dataset, no repeats,
  // every shard unless allow_partial, consecutive ids), across segments (one
  // schema and metadata) and the Dataset made of them. `segments[k]` holds
  // segment k's shards.
  static Result<std::shared_ptr<Dataset>> FromSegments(
      std::vector<std::vector<std::unique_ptr<shard::ShardReader>>> segments, const DatasetOptions& options,
      std::shared_ptr<remote::RemoteShards> remote);
  // Opens `paths[k]`, the shards of `manifest`'s segment k, and checks them
  // against it (each segment's UUID, the dataset's).
  static Result<std::shared_ptr<Dataset>> OpenSegments(const std::vector<std::vector<std::string>>& paths,
                                                       const format::Manifest& manifest,
                                                       const std::string& manifest_path, const DatasetOptions& options);

  // Corruption unless the opened segments are those `manifest` names (the
  // dataset's UUID too); then sets the segments' generations and `version`.
  // `where` (the manifest's path) starts the messages.
  Status CheckAgainst(const format::Manifest& manifest, const std::string& where);

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

  // ShardPages::Prefetch of record `id`; ids out of range are ignored.
  void Prefetch(uint64_t id, ShardPages::PrefetchStage stage) const {
    if (id >= size) return;
    const size_t s = ShardOf(id);
    pages->Prefetch(s, id - first_ids[s], stage);
  }
};

}  // namespace unirecord

#endif  // UNIRECORD_DATASET_DATASET_IMPL_H_
