#include "remote/shard_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace unirecord::remote {
namespace {

constexpr char kLayoutDir[] = "v1";
constexpr char kTemporaryPrefix[] = ".tmp-";
constexpr char kEvictLock[] = ".evict.lock";

std::atomic<uint64_t> g_temporary_serial{0};

bool IsUuidText(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

bool IsTemporaryName(const std::string& name) { return name.rfind(kTemporaryPrefix, 0) == 0; }

// Creates every missing directory of `path` (absolute or relative).
Status CreateDirectories(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && !io::IsDirectory(prefix)) {
      Status made = io::CreateDirectory(prefix);
      if (!made.ok() && !io::IsDirectory(prefix)) return made;
    }
    if (slash == std::string::npos) return Status::OK();
  }
}

// The evictors' lock, taken waiting (evictions are short).
Result<io::FlockedFile> LockEvictors(const std::string& dir) {
  const std::string path = io::JoinPath(dir, kEvictLock);
  for (int attempt = 0;; ++attempt) {
    Result<io::FlockedFile> lock = io::FlockedFile::Lock(path, io::FlockedFile::Mode::kExclusive, true);
    if (lock.ok() || lock.status().code() != StatusCode::kNotFound || attempt == 3) return lock;
    Result<io::FlockedFile> created = io::FlockedFile::Lock(path, io::FlockedFile::Mode::kExclusive, true, true);
    if (created.ok()) return created;  // else another process created it first: lock theirs
  }
}

}  // namespace

Result<std::shared_ptr<ShardCache>> ShardCache::Open(const std::string& dir, uint64_t limit) {
  if (dir.empty()) return Status::InvalidArgument("cache_dir: empty path");
  UREC_RETURN_IF_ERROR(CreateDirectories(io::JoinPath(dir, kLayoutDir)).WithContext("cache_dir"));
  auto cache = std::shared_ptr<ShardCache>(new ShardCache());
  cache->dir_ = dir;
  cache->limit_ = limit;
  return cache;
}

Result<std::string> ShardCache::MetaDir(const std::string& uuid) const {
  if (!IsUuidText(uuid)) return Status::Corruption("segment uuid '" + uuid + "' is not a UUID");
  const std::string path = io::JoinPath(io::JoinPath(io::JoinPath(dir_, kLayoutDir), uuid), "meta");
  UREC_RETURN_IF_ERROR(CreateDirectories(path));
  return path;
}

Result<std::string> ShardCache::DataDir(const std::string& uuid) const {
  if (!IsUuidText(uuid)) return Status::Corruption("segment uuid '" + uuid + "' is not a UUID");
  const std::string path = io::JoinPath(io::JoinPath(io::JoinPath(dir_, kLayoutDir), uuid), "data");
  UREC_RETURN_IF_ERROR(CreateDirectories(path));
  return path;
}

Result<io::FlockedFile> ShardCache::Pin(const std::string& path) const {
  UREC_ASSIGN_OR_RETURN(io::FlockedFile pin, io::FlockedFile::Lock(path, io::FlockedFile::Mode::kShared, true));
  pin.Touch();
  return pin;
}

Result<Temporary> ShardCache::CreateTemporary(const std::string& final_path) const {
  for (int attempt = 1;; ++attempt) {
    Temporary t;
    t.path = io::JoinPath(io::DirName(final_path), std::string(kTemporaryPrefix) + std::to_string(::getpid()) + "-" +
                                                       std::to_string(g_temporary_serial.fetch_add(1)) + "-" +
                                                       io::BaseName(final_path));
    Result<io::FlockedFile> lock = io::FlockedFile::Lock(t.path, io::FlockedFile::Mode::kExclusive, false, true);
    if (lock.ok()) {
      t.lock = std::move(lock).value();
      return t;
    }
    // An evictor saw the new file before its lock and took it for a killed
    // writer's (it removes it): take another name.
    const StatusCode code = lock.status().code();
    if ((code != StatusCode::kFailedPrecondition && code != StatusCode::kNotFound) || attempt == 5) {
      return lock.status();
    }
  }
}

Result<io::FlockedFile> ShardCache::Commit(Temporary temporary, const std::string& final_path) const {
  Status renamed = io::RenameFile(temporary.path, final_path);
  if (!renamed.ok()) {
    Discard(std::move(temporary));
    return renamed;
  }
  UREC_RETURN_IF_ERROR(temporary.lock.Relock(io::FlockedFile::Mode::kShared));
  temporary.lock.Touch();
  return std::move(temporary.lock);
}

void ShardCache::Discard(Temporary temporary) const {
  io::RemoveFileIfExists(temporary.path);
  temporary.lock.Release();
}

Result<std::vector<ShardCache::Entry>> ShardCache::Scan() const {
  std::vector<Entry> entries;
  const std::string layout = io::JoinPath(dir_, kLayoutDir);
  UREC_ASSIGN_OR_RETURN(std::vector<std::string> datasets, io::ListDirectory(layout));
  for (const std::string& uuid : datasets) {
    if (!IsUuidText(uuid)) continue;  // not ours: never touched
    for (const char* kind : {"meta", "data"}) {
      const std::string sub = io::JoinPath(io::JoinPath(layout, uuid), kind);
      Result<std::vector<std::string>> names = io::ListDirectory(sub);
      if (!names.ok()) continue;  // being created, or not there
      for (const std::string& name : *names) {
        const bool temporary = IsTemporaryName(name);
        if (!temporary && std::string(kind) == "meta") continue;  // indexes and frames: not evicted
        Result<io::FileFacts> facts = io::StatFile(io::JoinPath(sub, name));
        if (!facts.ok() || !facts->regular) continue;  // gone meanwhile
        entries.push_back({io::JoinPath(sub, name), facts->size, facts->modified_ns, temporary});
      }
    }
  }
  return entries;
}

Result<CacheUsage> ShardCache::Usage() const {
  UREC_ASSIGN_OR_RETURN(std::vector<Entry> entries, Scan());
  CacheUsage usage;
  for (const Entry& e : entries) {
    if (e.temporary) {
      ++usage.temporaries;
    } else {
      usage.shard_bytes += e.size;
      ++usage.shard_files;
    }
  }
  return usage;
}

Status ShardCache::MakeRoom(uint64_t incoming) const {
  UREC_ASSIGN_OR_RETURN(io::FlockedFile evicting, LockEvictors(dir_));
  UREC_ASSIGN_OR_RETURN(std::vector<Entry> entries, Scan());
  uint64_t total = 0;
  for (const Entry& e : entries) total += e.size;  // temporaries too: downloads in progress take space
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.temporary != b.temporary ? a.temporary : a.modified_ns < b.modified_ns;
  });
  for (const Entry& e : entries) {
    const bool over = limit_ > 0 && total + incoming > limit_;
    if (!e.temporary && !over) break;
    // Exclusive without waiting: fails while any reader pins the shard, or
    // while the temporary's writer is alive.
    Result<io::FlockedFile> unused = io::FlockedFile::Lock(e.path, io::FlockedFile::Mode::kExclusive, false);
    if (!unused.ok()) continue;
    io::RemoveFileIfExists(e.path);
    total -= e.size;
  }
  return Status::OK();
}

}  // namespace unirecord::remote
