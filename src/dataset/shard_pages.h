// Where a dataset's shard pages come from: the one local-or-remote choice,
// made when the dataset opens (Arrow's RandomAccessFile is the model: one
// read interface, whatever is behind it). Not public API.
#ifndef UNIRECORD_DATASET_SHARD_PAGES_H_
#define UNIRECORD_DATASET_SHARD_PAGES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "dataset/field_reads.h"
#include "remote/remote_shards.h"
#include "shard/shard_reader.h"
#include "unirecord/dataset.h"

namespace unirecord {

class ShardPages {
 public:
  // A shard whose pages may be read, and what keeps them mapped (null: the
  // Dataset itself).
  struct Reader {
    const shard::ShardReader* reader = nullptr;
    std::shared_ptr<const void> hold;
  };
  enum class PrefetchStage { kEntry, kBlobs };

  virtual ~ShardPages() = default;

  // Shard s (source 0) or its column file of field group source - 1
  // (format/SPEC.md 1.4), readable: local, the opened file; remote,
  // downloaded, verified and pinned while the Reader is held.
  virtual Result<Reader> Pages(size_t s, uint32_t source) const = 0;
  // Starts loading row `row` of shard s: the record-table entries (kEntry)
  // or the blobs' first bytes (kBlobs) of what `sources` reads of its files
  // (by source, as Pages numbers them). Nothing where the shard may not be
  // here yet (remote).
  virtual void Prefetch(size_t s, uint64_t row, PrefetchStage stage,
                        const std::vector<dataset_internal::SourceReads>& sources) const = 0;
  // The shards in the order reads will visit them: downloaded ahead (remote).
  virtual void Plan(std::vector<uint32_t> visits) const = 0;
  virtual bool remote() const = 0;
  virtual RemoteStats stats() const = 0;
};

// The opened shards themselves and, by shard and group, their column files
// (both outlive the ShardPages).
std::unique_ptr<ShardPages> LocalShardPages(
    const std::vector<std::unique_ptr<shard::ShardReader>>& shards,
    const std::vector<std::vector<std::unique_ptr<shard::ShardReader>>>& columns);
// A remote dataset's shards, fetched through `remote`.
std::unique_ptr<ShardPages> RemoteShardPages(std::shared_ptr<remote::RemoteShards> remote);

}  // namespace unirecord

#endif  // UNIRECORD_DATASET_SHARD_PAGES_H_
