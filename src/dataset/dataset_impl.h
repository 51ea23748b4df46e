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

  // Where a field of `schema` is read in one segment (format/SPEC.md 1.4):
  // source 0 is the segment's shard, source g >= 1 the column file of its
  // field group g-1; `field` indexes that file's schema.
  struct FieldSource {
    uint32_t source = 0;
    uint32_t field = 0;
  };
  struct SegmentFields {
    std::vector<FieldSource> fields;                 // by field of `schema`
    std::vector<index::FieldLayout> layouts;         // by source
  };
  std::vector<SegmentFields> segment_fields;  // by segment
  std::vector<uint32_t> segment_of;           // by shard
  // columns[s][g - 1]: shard s's column file of source g (of a remote
  // dataset, its frame, as `shards`).
  std::vector<std::vector<std::unique_ptr<shard::ShardReader>>> columns;

  // One segment as opened: its shards and, by field group (manifest order),
  // the group's column files by shard.
  struct OpenedGroup {
    format::FieldGroup group;
    std::vector<std::unique_ptr<shard::ShardReader>> files;
  };
  struct OpenedSegment {
    std::vector<std::unique_ptr<shard::ShardReader>> shards;
    std::vector<OpenedGroup> groups;
    std::vector<std::string> dropped;  // fields of its shards hidden
  };

  // The checks across the shards of each segment (one dataset, no repeats,
  // every shard unless allow_partial, consecutive ids), of its column files
  // (the group's UUID, numbers, one row per record of their shard, the
  // fields named), across segments (one schema, after groups and drops,
  // and metadata) and the Dataset made of them.
  static Result<std::shared_ptr<Dataset>> FromSegments(std::vector<OpenedSegment> segments,
                                                       const DatasetOptions& options,
                                                       std::shared_ptr<remote::RemoteShards> remote);
  // Opens `paths[k]`, the files of `manifest`'s segment k, and checks them
  // against it (each segment's UUID, the dataset's).
  struct SegmentFiles {
    std::vector<std::string> shards;
    std::vector<std::vector<std::string>> groups;  // by field group, by shard
  };
  static Result<std::shared_ptr<Dataset>> OpenSegments(const std::vector<SegmentFiles>& paths,
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

  // Shard s's file of `source` (0: the shard; else a column file), its
  // frame: index reads only.
  const shard::ShardReader& SourceFrame(size_t s, uint32_t source) const {
    return source == 0 ? *shards[s] : *columns[s][source - 1];
  }
  // Where `field` of `schema` is read for shard s.
  const FieldSource& SourceOf(size_t s, size_t field) const { return segment_fields[segment_of[s]].fields[field]; }
  const index::FieldLayout& LayoutOf(size_t s, uint32_t source) const {
    return segment_fields[segment_of[s]].layouts[source];
  }

  // ShardPages::Prefetch of what `reads` reads of record `id`; ids out of
  // range are ignored.
  void Prefetch(uint64_t id, ShardPages::PrefetchStage stage, const dataset_internal::FieldReads& reads) const {
    if (id >= size) return;
    const size_t s = ShardOf(id);
    pages->Prefetch(s, id - first_ids[s], stage, reads.Sources(segment_of[s]));
  }
};

}  // namespace unirecord

#endif  // UNIRECORD_DATASET_DATASET_IMPL_H_
