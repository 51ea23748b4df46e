#include "dataset/shard_pages.h"

#include <utility>

namespace unirecord {
namespace {

class Local final : public ShardPages {
 public:
  Local(const std::vector<std::unique_ptr<shard::ShardReader>>& shards,
        const std::vector<std::vector<std::unique_ptr<shard::ShardReader>>>& columns)
      : shards_(shards), columns_(columns) {}
  Result<Reader> Pages(size_t s, uint32_t source) const override {
    return Reader{source == 0 ? shards_[s].get() : columns_[s][source - 1].get(), nullptr};
  }
  void Prefetch(size_t s, uint64_t row, PrefetchStage stage,
                const std::vector<dataset_internal::SourceReads>& sources) const override {
    for (size_t source = 0; source < sources.size(); ++source) {
      if (!sources[source].entry) continue;
      const shard::ShardReader& file = source == 0 ? *shards_[s] : *columns_[s][source - 1];
      if (stage == PrefetchStage::kEntry) {
        file.PrefetchEntry(row);
      } else if (!sources[source].blob_slots.empty()) {
        file.PrefetchBlobs(row, sources[source].blob_slots);
      }
    }
  }
  void Plan(std::vector<uint32_t>) const override {}
  bool remote() const override { return false; }
  RemoteStats stats() const override { return {}; }

 private:
  const std::vector<std::unique_ptr<shard::ShardReader>>& shards_;
  const std::vector<std::vector<std::unique_ptr<shard::ShardReader>>>& columns_;
};

class Remote final : public ShardPages {
 public:
  explicit Remote(std::shared_ptr<remote::RemoteShards> remote) : remote_(std::move(remote)) {}
  Result<Reader> Pages(size_t s, uint32_t source) const override {
    const auto shard = static_cast<uint32_t>(s);
    const uint32_t file = source == 0 ? shard : remote_->ColumnFile(shard, source - 1);
    UREC_ASSIGN_OR_RETURN(std::shared_ptr<const remote::ShardData> data, remote_->Acquire(file));
    const shard::ShardReader* reader = data->reader.get();
    return Reader{reader, std::move(data)};
  }
  void Prefetch(size_t, uint64_t, PrefetchStage, const std::vector<dataset_internal::SourceReads>&) const override {}
  void Plan(std::vector<uint32_t> visits) const override { remote_->Plan(std::move(visits)); }
  bool remote() const override { return true; }
  RemoteStats stats() const override { return remote_->stats(); }

 private:
  std::shared_ptr<remote::RemoteShards> remote_;
};

}  // namespace

std::unique_ptr<ShardPages> LocalShardPages(
    const std::vector<std::unique_ptr<shard::ShardReader>>& shards,
    const std::vector<std::vector<std::unique_ptr<shard::ShardReader>>>& columns) {
  return std::make_unique<Local>(shards, columns);
}

std::unique_ptr<ShardPages> RemoteShardPages(std::shared_ptr<remote::RemoteShards> remote) {
  return std::make_unique<Remote>(std::move(remote));
}

}  // namespace unirecord
