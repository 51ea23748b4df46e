#include "dataset/shard_pages.h"

#include <utility>

namespace unirecord {
namespace {

class Local final : public ShardPages {
 public:
  explicit Local(const std::vector<std::unique_ptr<shard::ShardReader>>& shards) : shards_(shards) {}
  Result<Reader> Pages(size_t s) const override { return Reader{shards_[s].get(), nullptr}; }
  void Prefetch(size_t s, uint64_t row, PrefetchStage stage) const override {
    if (stage == PrefetchStage::kEntry) {
      shards_[s]->PrefetchEntry(row);
    } else {
      shards_[s]->PrefetchBlobs(row);
    }
  }
  void Plan(std::vector<uint32_t>) const override {}
  bool remote() const override { return false; }
  RemoteStats stats() const override { return {}; }

 private:
  const std::vector<std::unique_ptr<shard::ShardReader>>& shards_;
};

class Remote final : public ShardPages {
 public:
  explicit Remote(std::shared_ptr<remote::RemoteShards> remote) : remote_(std::move(remote)) {}
  Result<Reader> Pages(size_t s) const override {
    UREC_ASSIGN_OR_RETURN(std::shared_ptr<const remote::ShardData> data, remote_->Acquire(static_cast<uint32_t>(s)));
    const shard::ShardReader* reader = data->reader.get();
    return Reader{reader, std::move(data)};
  }
  void Prefetch(size_t, uint64_t, PrefetchStage) const override {}
  void Plan(std::vector<uint32_t> visits) const override { remote_->Plan(std::move(visits)); }
  bool remote() const override { return true; }
  RemoteStats stats() const override { return remote_->stats(); }

 private:
  std::shared_ptr<remote::RemoteShards> remote_;
};

}  // namespace

std::unique_ptr<ShardPages> LocalShardPages(const std::vector<std::unique_ptr<shard::ShardReader>>& shards) {
  return std::make_unique<Local>(shards);
}

std::unique_ptr<ShardPages> RemoteShardPages(std::shared_ptr<remote::RemoteShards> remote) {
  return std::make_unique<Remote>(std::move(remote));
}

}  // namespace unirecord
