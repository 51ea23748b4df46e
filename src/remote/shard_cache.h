// The local cache directory of remote datasets (docs/remote.md "The cache"):
//
//   DIR/.evict.lock                    serialises evictors (flock, all processes)
//   DIR/v1/UUID/meta/NAME-...uidx      indexes and shard frames (sparse), per segment
//   DIR/v1/UUID/data/NAME-...urec      whole shards, verified before their rename
//   DIR/v1/UUID/{meta,data}/.tmp-...   downloads in progress (exclusively flocked)
//
// A file is cached once renamed into place, and only verified files are
// renamed. A reader pins a shard with a shared flock while it maps it; the
// evictor removes a shard only under an exclusive flock it gets without
// waiting, so never one in use by any thread or process. Temporaries whose
// writer is gone (no lock: it was killed) are removed. Nothing outside
// DIR/v1 is ever removed.
#ifndef UNIRECORD_REMOTE_SHARD_CACHE_H_
#define UNIRECORD_REMOTE_SHARD_CACHE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/file.h"
#include "unirecord/status.h"

namespace unirecord::remote {

// A download in progress: its path, exclusively locked.
struct Temporary {
  std::string path;
  io::FlockedFile lock;
};

struct CacheUsage {
  uint64_t shard_bytes = 0;   // of the shard files in data/ dirs
  uint64_t shard_files = 0;
  uint64_t temporaries = 0;   // downloads in progress or left by killed processes
};

class ShardCache {
 public:
  // Creates DIR (and parents) if missing. `limit`: byte budget of the shard
  // files, 0 for none.
  static Result<std::shared_ptr<ShardCache>> Open(const std::string& dir, uint64_t limit);

  const std::string& dir() const { return dir_; }
  uint64_t limit() const { return limit_; }

  // DIR/v1/UUID/meta and DIR/v1/UUID/data, created. `uuid` must be a UUID's text.
  Result<std::string> MetaDir(const std::string& uuid) const;
  Result<std::string> DataDir(const std::string& uuid) const;

  // A pin (shared flock, recency touched) on the cached file `path`;
  // NotFound when it is not cached (or was evicted meanwhile).
  Result<io::FlockedFile> Pin(const std::string& path) const;

  // A new temporary in the directory of `final_path`.
  Result<Temporary> CreateTemporary(const std::string& final_path) const;
  // Renames `temporary` to `final_path` and returns its lock, now shared: the
  // new file's pin.
  Result<io::FlockedFile> Commit(Temporary temporary, const std::string& final_path) const;
  // Removes an abandoned temporary (a failed download).
  void Discard(Temporary temporary) const;

  // Evicts least recently used, unpinned shard files (any dataset in DIR)
  // until `incoming` more bytes fit in the budget, and removes temporaries
  // whose writer is gone. With no budget it only removes those temporaries.
  Status MakeRoom(uint64_t incoming) const;

  // What is in DIR now.
  Result<CacheUsage> Usage() const;

 private:
  struct Entry {
    std::string path;
    uint64_t size = 0;
    int64_t modified_ns = 0;
    bool temporary = false;
  };
  Result<std::vector<Entry>> Scan() const;

  std::string dir_;
  uint64_t limit_ = 0;
};

}  // namespace unirecord::remote

#endif  // UNIRECORD_REMOTE_SHARD_CACHE_H_
