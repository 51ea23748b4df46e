// The shards of a remote dataset: what Dataset::Open needs at once (the
// manifest, every index, every shard's frame) and each shard's data on
// demand, through the ShardCache, downloaded ahead in the planned order.
#ifndef UNIRECORD_REMOTE_REMOTE_SHARDS_H_
#define UNIRECORD_REMOTE_REMOTE_SHARDS_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/file.h"
#include "format/manifest.h"
#include "remote/http_client.h"
#include "remote/location.h"
#include "remote/shard_cache.h"
#include "shard/shard_reader.h"
#include "unirecord/remote.h"
#include "unirecord/status.h"

namespace unirecord::remote {

// One downloaded, verified, pinned shard, open for reading. Readers hold it
// (a shared_ptr) while they use its mapped bytes.
struct ShardData {
  io::FlockedFile pin;
  std::unique_ptr<shard::ShardReader> reader;
};

// The shards to hold for reads at visits[cursor...]: the distinct shards
// from the cursor on, up to and including the `prefetch_shards`-th one for
// which is_open(s) is false. The open ones among them are being read (a
// block shuffle reads a window of shards at once); the others are downloaded
// ahead, so prefetch runs ahead of the whole set being read, not just of
// the cursor's shard.
std::vector<uint32_t> PrefetchWindow(const std::vector<uint32_t>& visits, size_t cursor, int prefetch_shards,
                                     const std::function<bool(uint32_t)>& is_open);

// Where the plan's cursor goes when a read needs shard s: to the nearest
// visit of s within `search` visits either way, staying put when that visit
// is behind the cursor. Reads from several threads arrive a little out of
// the planned order; a late read of a shard the plan visits again later
// (the next epoch's, a full shuffle's) must not move the cursor to that
// later visit, past shards still to be prefetched. A read of a shard that is
// nowhere near leaves the cursor where it is.
size_t MoveCursor(const std::vector<uint32_t>& visits, size_t cursor, uint32_t s, size_t search);

class RemoteShards {
 public:
  // Downloads (or finds in the cache) the manifest, indexes and frames of the
  // dataset at `location`. frame_paths() then opens with
  // ShardReader::Open(path, verify, FrameFiles(s)).
  // `version` / `tag` pick a kept version as DatasetOptions' do (0 and "":
  // the latest).
  static Result<std::shared_ptr<RemoteShards>> Open(const std::string& location, const RemoteOptions& options,
                                                    uint64_t version = 0, const std::string& tag = "");
  ~RemoteShards();

  const std::string& uuid() const { return manifest_.uuid; }
  // The manifest opened: its segments hold the shards in order.
  const format::Manifest& manifest() const { return manifest_; }
  //
  // Files are numbered: the shards first (0 .. shard count - 1, in manifest
  // order), then the column files of field groups (SPEC.md 1.4), which
  // ColumnFile() numbers. Each is cached, downloaded and verified as a shard.
  uint32_t file_count() const { return static_cast<uint32_t>(shards_.size()); }
  // The file number of shard s's column file of its segment's group g
  // (manifest order).
  uint32_t ColumnFile(uint32_t s, size_t g) const { return columns_[s][g]; }
  // The cached frame of file f and how to open it.
  const std::string& frame_path(uint32_t f) const { return shards_[f].frame_path; }
  shard::ShardFiles FrameFiles(uint32_t f) const;

  // File f's data: from this process's open files, the cache, or
  // downloaded (and verified) now. Thread-safe.
  Result<std::shared_ptr<const ShardData>> Acquire(uint32_t f);

  // The shards, in the order reads will need them (repeats allowed): the
  // next prefetch_shards distinct files ahead of the reads (a shard, then
  // its column files) are downloaded in the background and held.
  void Plan(std::vector<uint32_t> visits);

  RemoteStats stats() const;

  // The files' data readers opened from now on keep their inflated scalar
  // pages within `budget` (shard::ShardReader::KeepDecodedPages), until
  // the file is closed. Call before reads begin.
  void KeepDecodedPages(std::shared_ptr<shard::PageBudget> budget) { page_budget_ = std::move(budget); }

 private:
  struct Shard {
    std::string name;        // file name (the remote's)
    std::string uuid;        // its segment's: what its header must hold
    std::string url;
    std::string index_url;
    std::string frame_path;  // DIR/v1/UUID/meta/NAME (UUID: its segment's)
    std::string index_path;  // DIR/v1/UUID/meta/NAME.uidx
    std::string data_path;   // DIR/v1/UUID/data/NAME
    uint64_t length = 0;     // from its index
    std::mutex mu;           // one download per shard in this process
    std::weak_ptr<const ShardData> open;
  };

  RemoteShards() = default;
  // The one dataset that location_'s folder listing (every page of it,
  // ListFolder) names, judged as a local directory is
  // (format::FindFolderDatasets); `location` for messages. NotFound when it
  // names no manifest, InvalidArgument for more than one dataset.
  Result<std::string> ListedDataset(const std::string& location) const;
  // The text of dataset `name`'s manifest in location_'s folder.
  Result<std::string> FetchManifest(const std::string& name) const;
  // The generation `tag` names (its tags file), else `version`.
  Result<uint64_t> WantedVersion(const std::string& name, uint64_t version, const std::string& tag) const;
  // The steps of Open. The text of the manifest `location` names and the
  // dataset's `*name`: given in it, else the one its folder listing holds
  // (also when a location without its trailing '/' names a folder).
  Result<std::string> FetchNamedManifest(const std::string& location, std::string* name);
  // Sets manifest_ from `manifest_text`, or from the kept version `tag` or
  // `version` names.
  Status DecodeWantedManifest(const std::string& location, const std::string& name, const std::string& manifest_text,
                              uint64_t version, const std::string& tag);
  // Fills shards_ (the segments' shards, then their column files) and columns_ from manifest_.
  Status ListFiles(const std::string& name);
  // Every file's index and frame (FetchIndexAndFrame), max_requests at a time.
  Status FetchIndexesAndFrames();
  // How many data files stay open (keep_open_), within the cache's budget.
  void SizeKeptOpen();
  // How a shard's data file opens: its cached index, named by their URLs.
  static shard::ShardFiles DataFiles(const Shard& shard);
  Status FetchIndexAndFrame(uint32_t s);
  // File s's data without moving the plan's cursor; counted in prefetched_
  // or read_fetches_ when it was not open.
  Result<std::shared_ptr<const ShardData>> Fetch(uint32_t s, bool by_prefetcher);
  Result<std::shared_ptr<const ShardData>> Download(Shard& shard);
  // Recomputes window_ from the cursor and lets go of held shards outside
  // it. Caller holds plan_mu_.
  void UpdateWindowLocked();
  Result<std::shared_ptr<const ShardData>> OpenCached(Shard& shard, io::FlockedFile pin);
  std::shared_ptr<const ShardData> Opened(Shard& shard, io::FlockedFile pin, std::unique_ptr<shard::ShardReader> reader);
  void PrefetchLoop();

  RemoteOptions options_;
  Location location_;
  std::shared_ptr<ShardCache> cache_;
  std::unique_ptr<HttpClient> http_;
  format::Manifest manifest_;
  std::deque<Shard> shards_;  // by file number; deque: Shard holds a mutex
  std::vector<std::vector<uint32_t>> columns_;  // by shard: its column files' numbers, by group

  // Prefetch state, guarded by plan_mu_.
  std::mutex plan_mu_;
  std::condition_variable plan_cv_;
  std::vector<uint32_t> visits_;
  size_t cursor_ = 0;         // the visit the reads are at
  uint64_t plan_serial_ = 0;  // bumped by Plan: in-flight work of an old plan is dropped
  // Shards being fetched by a prefetcher, and those whose prefetch failed
  // in this plan (left to the reads, which report the error). A shard of the
  // window neither kept, held, fetching nor failed is a prefetcher's next
  // target, so a shard the plan visits again after it was let go (the next
  // epoch's, a full shuffle's) is prefetched again.
  std::set<uint32_t> fetching_;
  std::set<uint32_t> failed_;
  // PrefetchWindow from the cursor, open meaning kept_ (at most keep_open_ +
  // prefetch_shards shards). Recomputed when the reads open a shard or the
  // plan changes, not at every read.
  std::vector<uint32_t> window_;
  std::map<uint32_t, std::shared_ptr<const ShardData>> held_;  // prefetched, in window_: pinned
  // The shards read last, kept open (and pinned): keep_open_ of them, least
  // recently read first in lru_.
  size_t keep_open_ = 0;
  std::vector<std::shared_ptr<const ShardData>> kept_;  // by shard
  std::list<uint32_t> lru_;
  std::vector<std::list<uint32_t>::iterator> lru_position_;  // by shard, valid while kept_[s]
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};  // downloads stop: the dataset is closing
  std::vector<std::thread> prefetchers_;

  std::atomic<uint64_t> shard_downloads_{0};
  std::atomic<uint64_t> cache_hits_{0};
  std::atomic<uint64_t> verify_failures_{0};
  std::atomic<uint64_t> prefetched_{0};
  std::atomic<uint64_t> read_fetches_{0};
  std::shared_ptr<shard::PageBudget> page_budget_;
};

}  // namespace unirecord::remote

#endif  // UNIRECORD_REMOTE_REMOTE_SHARDS_H_
