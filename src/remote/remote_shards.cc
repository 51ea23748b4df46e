#include "remote/remote_shards.h"

#include <algorithm>
#include <functional>

#include "format/endian.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "format/header_codec.h"
#include "format/manifest.h"
#include "index/index_file.h"
#include "remote/folder_listing.h"

namespace unirecord::remote {
namespace {

// Bytes fetched from each end of a shard for its frame; more when the
// header or footer is longer. A shard this small or smaller is fetched whole.
constexpr uint64_t kFrameProbeBytes = 64 << 10;
// An index file: its record table is 8 + 24 x blobs + 8 x indexed + 8 bytes a record.
constexpr uint64_t kMaxIndexBytes = uint64_t{4} << 30;
// Shards read lately kept open (and pinned) between reads, at least: a
// shard reopened for every read would cost a pin and a map per record.
constexpr size_t kRecentShards = 2;
// How far either way from the cursor a read's shard is looked for in the plan.
constexpr size_t kCursorSearch = 256;
// Verification failures of one shard before its download is reported.
constexpr int kDownloadAttempts = 3;

// Writes a response body into a file, starting over on each attempt.
class FileSink : public BodySink {
 public:
  FileSink(std::string path, const std::atomic<bool>* cancel) : path_(std::move(path)), cancel_(cancel) {}
  Status Start() override {
    UREC_ASSIGN_OR_RETURN(file_, io::WritableFile::Create(path_));
    return Status::OK();
  }
  Status Write(const char* data, size_t size) override {
    if (cancel_ != nullptr && cancel_->load()) return Status::FailedPrecondition("download cancelled: dataset closed");
    return file_.Append(data, size);
  }
  Status Finish() {
    UREC_RETURN_IF_ERROR(file_.Sync());
    return file_.Close();
  }

 private:
  std::string path_;
  const std::atomic<bool>* cancel_;
  io::WritableFile file_;
};

Status WriteWhole(const std::string& path, const std::string& bytes) {
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(path));
  UREC_RETURN_IF_ERROR(file.Append(bytes));
  UREC_RETURN_IF_ERROR(file.Sync());
  return file.Close();
}

}  // namespace

std::vector<uint32_t> PrefetchWindow(const std::vector<uint32_t>& visits, size_t cursor, int prefetch_shards,
                                     const std::function<bool(uint32_t)>& is_open) {
  std::vector<uint32_t> window;
  int ahead = 0;  // shards in window that are not open
  for (size_t v = cursor; v < visits.size() && ahead < prefetch_shards; ++v) {
    if (std::find(window.begin(), window.end(), visits[v]) != window.end()) continue;
    window.push_back(visits[v]);
    if (!is_open(visits[v])) ++ahead;
  }
  return window;
}

size_t MoveCursor(const std::vector<uint32_t>& visits, size_t cursor, uint32_t s, size_t search) {
  if (cursor >= visits.size()) return cursor;  // no plan (random reads): nothing to look through
  const size_t ahead = visits.size() - 1 - cursor;
  const size_t reach = std::min(search, std::max(ahead, cursor));
  // Distance 0 first, then ahead before behind at equal distance: the reads
  // move forward.
  for (size_t d = 0; d <= reach; ++d) {
    if (d <= ahead && visits[cursor + d] == s) return cursor + d;
    if (d != 0 && d <= cursor && visits[cursor - d] == s) return cursor;
  }
  return cursor;
}

RemoteShards::~RemoteShards() {
  {
    std::lock_guard<std::mutex> lock(plan_mu_);
    stopping_ = true;
  }
  cancel_.store(true);
  plan_cv_.notify_all();
  for (std::thread& t : prefetchers_) t.join();
}

shard::ShardFiles RemoteShards::FrameFiles(uint32_t s) const {
  shard::ShardFiles files = DataFiles(shards_[s]);
  files.frame_only = true;
  return files;
}

RemoteStats RemoteShards::stats() const {
  RemoteStats st;
  st.requests = http_->requests();
  st.retries = http_->retries();
  st.bytes_downloaded = http_->bytes();
  st.shard_downloads = shard_downloads_.load();
  st.cache_hits = cache_hits_.load();
  st.verify_failures = verify_failures_.load();
  st.prefetched = prefetched_.load();
  st.read_fetches = read_fetches_.load();
  return st;
}

Result<std::string> RemoteShards::ListedDataset(const std::string& location) const {
  UREC_ASSIGN_OR_RETURN(
      std::vector<std::string> files,
      ListFolder(location_, [&](const std::string& url, uint64_t max_bytes) {
        return http_->GetString(url, std::nullopt, max_bytes);
      }, location));
  // What the names hold is judged as a local directory's are.
  const format::FolderDatasets found = format::FindFolderDatasets(files);
  UREC_RETURN_IF_ERROR(format::CheckOneDataset(location, found, /*globs=*/false));
  if (found.committed.empty()) {
    return Status::NotFound(location + ": its listing names no manifest (.uset); give the dataset's location as " +
                            "FOLDER/NAME or FOLDER/NAME.uset");
  }
  return found.committed.front();
}

Result<uint64_t> RemoteShards::WantedVersion(const std::string& name, uint64_t version, const std::string& tag) const {
  if (tag.empty()) return version;
  const std::string url = location_.FileUrl(format::TagsFileName(name));
  Result<std::string> text = http_->GetString(url, std::nullopt, format::kMaxTagsBytes);
  format::TagsFile tags;  // none without a tags file
  if (text.ok()) {
    tags = format::DecodeTags(*text, url);
  } else if (text.status().code() != StatusCode::kNotFound) {
    return text.status();
  }
  return format::ResolveVersion(tags, tag, version, url);
}

Result<std::string> RemoteShards::FetchManifest(const std::string& name) const {
  return http_->GetString(location_.FileUrl(format::ManifestFileName(name)), std::nullopt, format::kMaxManifestBytes);
}

namespace {

Status CheckRemoteOptions(const std::string& location, const RemoteOptions& options) {
  if (options.max_requests < 1 || options.attempts < 1 || options.prefetch_shards < 0 || options.timeout_s < 1 ||
      options.retry_backoff_ms < 0 || options.min_rate_bytes_per_s < 0 || options.min_rate_window_s < 1 ||
      options.request_deadline_s < 0) {
    return Status::InvalidArgument(location +
                                   ": remote options out of range (max_requests, attempts, timeout_s and "
                                   "min_rate_window_s must be >= 1, prefetch_shards, retry_backoff_ms, "
                                   "min_rate_bytes_per_s and request_deadline_s >= 0)");
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<RemoteShards>> RemoteShards::Open(const std::string& location, const RemoteOptions& options,
                                                        uint64_t version, const std::string& tag) {
  UREC_RETURN_IF_ERROR(CheckRemoteOptions(location, options));
  std::shared_ptr<RemoteShards> r(new RemoteShards());
  r->options_ = options;
  UREC_ASSIGN_OR_RETURN(r->location_, ParseLocation(location, options));
  UREC_ASSIGN_OR_RETURN(r->cache_,
                        ShardCache::Open(options.cache_dir.empty() ? DefaultCacheDir() : options.cache_dir,
                                         options.cache_limit));
  UREC_RETURN_IF_ERROR(r->cache_->MakeRoom(0));  // temporaries of killed processes
  r->http_ = std::make_unique<HttpClient>(r->location_, options);
  std::string name;
  UREC_ASSIGN_OR_RETURN(const std::string manifest_text, r->FetchNamedManifest(location, &name));
  UREC_RETURN_IF_ERROR(r->DecodeWantedManifest(location, name, manifest_text, version, tag));
  UREC_RETURN_IF_ERROR(r->ListFiles(name));
  UREC_RETURN_IF_ERROR(r->FetchIndexesAndFrames());
  r->SizeKeptOpen();
  return r;
}

Result<std::string> RemoteShards::FetchNamedManifest(const std::string& location, std::string* name) {
  *name = location_.dataset_name;
  if (name->empty()) {
    UREC_ASSIGN_OR_RETURN(*name, ListedDataset(location));
  }
  Result<std::string> manifest_text = FetchManifest(*name);
  if (manifest_text.status().code() == StatusCode::kNotFound && !location_.dataset_name.empty() &&
      !format::ManifestDatasetName(location.substr(location.rfind('/') + 1))) {
    // As a local path may name a folder, a remote one given without its
    // trailing '/' may too: LOCATION/ holding one dataset.
    UREC_ASSIGN_OR_RETURN(Location folder, ParseLocation(location + "/", options_));
    std::swap(location_, folder);
    Result<std::string> listed = ListedDataset(location + "/");
    if (listed.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(manifest_text.status().message() + "; nor is " + location +
                              "/ a folder holding a dataset (" + listed.status().message() + ")");
    }
    UREC_RETURN_IF_ERROR(listed.status());  // a server error keeps its code (urec's exit 3)
    *name = *listed;
    manifest_text = FetchManifest(*name);
  }
  return manifest_text;
}

Status RemoteShards::DecodeWantedManifest(const std::string& location, const std::string& name,
                                          const std::string& manifest_text, uint64_t version, const std::string& tag) {
  std::string manifest_url = location_.FileUrl(format::ManifestFileName(name));
  UREC_ASSIGN_OR_RETURN(manifest_, format::DecodeManifest(manifest_text, manifest_url));
  UREC_ASSIGN_OR_RETURN(const uint64_t wanted, WantedVersion(name, version, tag));
  if (wanted == 0 || wanted == manifest_.generation) return Status::OK();
  manifest_url = location_.FileUrl(format::VersionFileName(name, wanted));
  Result<std::string> kept = http_->GetString(manifest_url, std::nullopt, format::kMaxManifestBytes);
  if (kept.status().code() == StatusCode::kNotFound) {
    return Status::NotFound(location + ": version " + std::to_string(wanted) +
                            " is not kept (never committed, or removed by urec gc)");
  }
  UREC_RETURN_IF_ERROR(kept.status());
  UREC_ASSIGN_OR_RETURN(manifest_, format::DecodeManifest(*kept, manifest_url));
  if (manifest_.generation != wanted) {
    return Status::Corruption(manifest_url + ": manifest of generation " + std::to_string(manifest_.generation));
  }
  return Status::OK();
}

Status RemoteShards::ListFiles(const std::string& name) {
  const Location& loc = location_;
  const format::Manifest& manifest = manifest_;
  // Cached per segment: a segment's files are the same bytes in every
  // version and dataset that holds it (its UUID derives from them), so the
  // segments an append kept are not downloaded again. Column files of field
  // groups (SPEC.md 1.4) are cached under their group's UUID, the same way.
  auto add_files = [&](const std::string& uuid, uint32_t count,
                       const std::function<std::string(uint32_t)>& file_name) -> Status {
    UREC_ASSIGN_OR_RETURN(const std::string meta_dir, cache_->MetaDir(uuid));
    UREC_ASSIGN_OR_RETURN(const std::string data_dir, cache_->DataDir(uuid));
    for (uint32_t s = 0; s < count; ++s) {
      Shard& file = shards_.emplace_back();
      file.name = file_name(s);
      file.uuid = uuid;
      file.url = loc.FileUrl(file.name);
      file.index_url = format::IndexPathFor(file.url);
      file.frame_path = io::JoinPath(meta_dir, file.name);
      file.index_path = format::IndexPathFor(file.frame_path);
      file.data_path = io::JoinPath(data_dir, file.name);
    }
    return Status::OK();
  };
  for (const format::Segment& segment : manifest.segments) {
    UREC_RETURN_IF_ERROR(add_files(segment.uuid, segment.shard_count, [&](uint32_t s) {
      return format::ShardFileName(name, segment.generation, s, segment.shard_count);
    }));
  }
  columns_.resize(manifest.shard_count);
  uint32_t first = 0;
  for (const format::Segment& segment : manifest.segments) {
    for (const format::FieldGroup& group : segment.groups) {
      for (uint32_t s = 0; s < segment.shard_count; ++s) {
        columns_[first + s].push_back(static_cast<uint32_t>(shards_.size() + s));
      }
      UREC_RETURN_IF_ERROR(add_files(group.uuid, segment.shard_count, [&](uint32_t s) {
        return format::ColumnFileName(name, segment.generation, group.generation, s, segment.shard_count);
      }));
    }
    first += segment.shard_count;
  }
  return Status::OK();
}

Status RemoteShards::FetchIndexesAndFrames() {
  const auto files = static_cast<uint32_t>(shards_.size());
  std::atomic<uint32_t> next{0};
  std::mutex error_mu;
  Status first_error;
  auto fetch = [&] {
    for (uint32_t s = next++; s < files; s = next++) {
      Status fetched = FetchIndexAndFrame(s);
      if (!fetched.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (first_error.ok()) first_error = fetched;
        next = files;
      }
    }
  };
  std::vector<std::thread> fetchers;
  const int fetcher_count = std::min<int>(options_.max_requests, static_cast<int>(files));
  for (int i = 1; i < fetcher_count; ++i) fetchers.emplace_back(fetch);
  fetch();
  for (std::thread& t : fetchers) t.join();
  return first_error;
}

void RemoteShards::SizeKeptOpen() {
  // Kept open: every shard without a budget; with one, as many as it holds
  // beside the prefetched ones and the one being downloaded.
  uint64_t total = 0;
  for (const Shard& shard : shards_) total += shard.length;
  const uint64_t mean = std::max<uint64_t>(1, total / shards_.size());
  const uint64_t fit = options_.cache_limit / mean;
  const uint64_t others = static_cast<uint64_t>(options_.prefetch_shards) + 1;
  // A record reads its shard and each column file beside it: all of them
  // stay open between reads.
  size_t files_per_shard = 1;
  for (const std::vector<uint32_t>& columns : columns_) files_per_shard = std::max(files_per_shard, 1 + columns.size());
  const uint64_t recent = kRecentShards * files_per_shard;
  keep_open_ = options_.cache_limit == 0
                   ? shards_.size()
                   : std::min<uint64_t>(std::max<uint64_t>(recent, fit > others ? fit - others : 0), shards_.size());
  kept_.resize(shards_.size());
  lru_position_.resize(shards_.size());
}

Status RemoteShards::FetchIndexAndFrame(uint32_t s) {
  Shard& shard = shards_[s];
  // Cached: both were verified together before the frame's rename.
  if (io::PathExists(shard.frame_path) && io::PathExists(shard.index_path)) {
    UREC_ASSIGN_OR_RETURN(index::IndexReader cached, index::IndexReader::Open(shard.index_path, false));
    shard.length = cached.header().shard_file_length();
    return Status::OK();
  }
  UREC_ASSIGN_OR_RETURN(std::string index_bytes, http_->GetString(shard.index_url, std::nullopt, kMaxIndexBytes));
  UREC_ASSIGN_OR_RETURN(Temporary index_tmp, cache_->CreateTemporary(shard.index_path));
  Status written = WriteWhole(index_tmp.path, index_bytes);
  Result<index::IndexReader> index = written.ok() ? index::IndexReader::Open(index_tmp.path, true) : written;
  if (!index.ok()) {
    cache_->Discard(std::move(index_tmp));
    return index.status().WithContext(shard.index_url);
  }
  const uint64_t length = index->header().shard_file_length();
  if (length < format::kPreambleSize + format::kTrailerSize) {
    cache_->Discard(std::move(index_tmp));
    return Status::Corruption(shard.index_url + ": impossible shard length " + std::to_string(length));
  }

  // The frame: the shard's first and last bytes, the rest a hole.
  UREC_ASSIGN_OR_RETURN(Temporary frame_tmp, cache_->CreateTemporary(shard.frame_path));
  auto fail = [&](Status status) {
    cache_->Discard(std::move(index_tmp));
    cache_->Discard(std::move(frame_tmp));
    return status;
  };
  Result<io::WritableFile> frame = io::WritableFile::Create(frame_tmp.path);
  if (!frame.ok()) return fail(frame.status());
  if (length <= 2 * kFrameProbeBytes) {
    Result<std::string> whole = http_->GetString(shard.url, ByteRange{0, length}, length, length);
    if (!whole.ok()) return fail(whole.status());
    if (Status w = frame->Append(*whole); !w.ok()) return fail(w);
  } else {
    Result<std::string> head = http_->GetString(shard.url, ByteRange{0, kFrameProbeBytes}, kFrameProbeBytes, length);
    if (!head.ok()) return fail(head.status());
    const uint64_t header_end =
        format::kPreambleSize + format::LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(head->data()) +
                                                         format::kPreambleHeaderLengthOffset);
    if (header_end > length - format::kTrailerSize || header_end < format::kPreambleSize) {
      return fail(Status::Corruption(shard.url + ": header length out of bounds (not a shard of this dataset?)"));
    }
    if (header_end > head->size()) {
      Result<std::string> more = http_->GetString(shard.url, ByteRange{head->size(), header_end}, header_end, length);
      if (!more.ok()) return fail(more.status());
      *head += *more;
    }
    const uint64_t tail_begin = length - kFrameProbeBytes;
    Result<std::string> tail = http_->GetString(shard.url, ByteRange{tail_begin, length}, kFrameProbeBytes, length);
    if (!tail.ok()) return fail(tail.status());
    const uint64_t directory = format::LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(tail->data()) + tail->size() -
                                                        format::kTrailerSize + format::kTrailerDirectoryOffsetOffset);
    if (directory < head->size() || directory >= length - format::kTrailerSize) {
      return fail(Status::Corruption(shard.url + ": footer offset out of bounds (not a shard of this dataset?)"));
    }
    if (directory < tail_begin) {
      Result<std::string> more = http_->GetString(shard.url, ByteRange{directory, tail_begin}, tail_begin - directory, length);
      if (!more.ok()) return fail(more.status());
      *tail = *more + *tail;
    }
    Status w = frame->Append(*head);
    if (w.ok()) w = frame->ExtendTo(length);
    if (w.ok()) w = frame->WriteAt(length - tail->size(), tail->data(), tail->size());
    if (!w.ok()) return fail(w);
  }
  Status closed = frame->Sync();
  if (closed.ok()) closed = frame->Close();
  if (!closed.ok()) return fail(closed);
  shard::ShardFiles files = FrameFiles(s);
  files.index_path = index_tmp.path;
  Result<std::unique_ptr<shard::ShardReader>> checked = shard::ShardReader::Open(frame_tmp.path, false, files);
  if (!checked.ok()) return fail(checked.status());
  if (format::UuidToString((*checked)->header().values.uuid) != shard.uuid) {
    return fail(Status::Corruption(shard.url + ": belongs to dataset " +
                                   format::UuidToString((*checked)->header().values.uuid) + ", but the manifest names " +
                                   shard.uuid));
  }
  Result<io::FlockedFile> index_done = cache_->Commit(std::move(index_tmp), shard.index_path);
  if (!index_done.ok()) {
    cache_->Discard(std::move(frame_tmp));
    return index_done.status();
  }
  UREC_RETURN_IF_ERROR(cache_->Commit(std::move(frame_tmp), shard.frame_path).status());
  shard.length = length;
  return Status::OK();
}

shard::ShardFiles RemoteShards::DataFiles(const Shard& shard) {
  shard::ShardFiles files;
  files.index_path = shard.index_path;
  files.name = shard.url;
  files.index_name = shard.index_url;
  return files;
}

Result<std::shared_ptr<const ShardData>> RemoteShards::OpenCached(Shard& shard, io::FlockedFile pin) {
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<shard::ShardReader> reader,
                        shard::ShardReader::Open(shard.data_path, false, DataFiles(shard)));
  return Opened(shard, std::move(pin), std::move(reader));
}

std::shared_ptr<const ShardData> RemoteShards::Opened(Shard& shard, io::FlockedFile pin,
                                                      std::unique_ptr<shard::ShardReader> reader) {
  auto data = std::make_shared<ShardData>();
  data->pin = std::move(pin);
  data->reader = std::move(reader);
  data->reader->KeepDecodedPages(page_budget_);  // none kept without a budget
  shard.open = data;
  return std::shared_ptr<const ShardData>(std::move(data));
}

Result<std::shared_ptr<const ShardData>> RemoteShards::Download(Shard& shard) {
  Status last;
  for (int attempt = 1; attempt <= kDownloadAttempts; ++attempt) {
    UREC_RETURN_IF_ERROR(cache_->MakeRoom(shard.length));
    UREC_ASSIGN_OR_RETURN(Temporary tmp, cache_->CreateTemporary(shard.data_path));
    FileSink sink(tmp.path, &cancel_);
    Status got = http_->Get(shard.url, std::nullopt, shard.length, sink);
    if (got.ok()) got = sink.Finish();
    if (!got.ok()) {
      cache_->Discard(std::move(tmp));
      if (got.code() != StatusCode::kCorruption) return got;
      last = got;
      verify_failures_.fetch_add(1);
      continue;
    }
    // Every byte, against the index downloaded at open (SPEC.md section 11,
    // deep verify): the length and footer checksum bind the shard to its
    // index, every page, blob and padding byte is checked.
    Result<std::unique_ptr<shard::ShardReader>> reader = shard::ShardReader::Open(tmp.path, false, DataFiles(shard));
    Status verified = reader.ok() ? (*reader)->Verify() : reader.status();
    if (!verified.ok()) {
      cache_->Discard(std::move(tmp));
      last = verified;
      verify_failures_.fetch_add(1);
      continue;
    }
    UREC_ASSIGN_OR_RETURN(io::FlockedFile pin, cache_->Commit(std::move(tmp), shard.data_path));
    shard_downloads_.fetch_add(1);
    // The verified mapping is the one read (a mapping outlives the rename;
    // the reader names the shard by its URL, not its path).
    return Opened(shard, std::move(pin), std::move(reader).value());
  }
  return Status::Corruption(shard.url + ": downloaded " + std::to_string(kDownloadAttempts) +
                            " times, refused each time (" + last.message() + ")");
}

Result<std::shared_ptr<const ShardData>> RemoteShards::Fetch(uint32_t s, bool by_prefetcher) {
  Shard& shard = shards_[s];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (std::shared_ptr<const ShardData> open = shard.open.lock()) return open;
  (by_prefetcher ? prefetched_ : read_fetches_).fetch_add(1);
  Result<io::FlockedFile> pin = cache_->Pin(shard.data_path);
  if (pin.ok()) {
    Result<std::shared_ptr<const ShardData>> cached = OpenCached(shard, std::move(pin).value());
    if (cached.ok()) {
      cache_hits_.fetch_add(1);
      return cached;
    }
    // A cached file that no longer opens (damaged on this disk): remove it
    // unless someone has it open, and download it again.
    Result<io::FlockedFile> unused = io::FlockedFile::Lock(shard.data_path, io::FlockedFile::Mode::kExclusive, false);
    if (!unused.ok()) return cached.status();
    io::RemoveFileIfExists(shard.data_path);
  } else if (pin.status().code() != StatusCode::kNotFound) {
    return pin.status();
  }
  return Download(shard);
}

Result<std::shared_ptr<const ShardData>> RemoteShards::Acquire(uint32_t s) {
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<const ShardData> data, Fetch(s, false));
  std::lock_guard<std::mutex> lock(plan_mu_);
  cursor_ = MoveCursor(visits_, cursor_, s, kCursorSearch);
  if (kept_[s] == data) {
    lru_.splice(lru_.end(), lru_, lru_position_[s]);
    return data;
  }
  // The reads opened a shard they did not keep open: the window moves on.
  if (kept_[s] == nullptr) lru_position_[s] = lru_.insert(lru_.end(), s);
  kept_[s] = data;
  if (lru_.size() > keep_open_) {
    kept_[lru_.front()].reset();
    lru_.pop_front();
  }
  UpdateWindowLocked();
  return data;
}

void RemoteShards::UpdateWindowLocked() {
  window_ = PrefetchWindow(visits_, cursor_, options_.prefetch_shards, [&](uint32_t s) { return kept_[s] != nullptr; });
  for (auto it = held_.begin(); it != held_.end();) {
    it = std::find(window_.begin(), window_.end(), it->first) == window_.end() ? held_.erase(it) : std::next(it);
  }
  plan_cv_.notify_all();
}

void RemoteShards::Plan(std::vector<uint32_t> visits) {
  {
    std::lock_guard<std::mutex> lock(plan_mu_);
    visits_.clear();
    for (uint32_t s : visits) {
      if (s >= columns_.size() || (!visits_.empty() && visits_.back() == s)) continue;
      visits_.push_back(s);
      // A shard's column files are read with it (and fetched ahead with it).
      visits_.insert(visits_.end(), columns_[s].begin(), columns_[s].end());
    }
    cursor_ = 0;
    ++plan_serial_;
    failed_.clear();
    UpdateWindowLocked();
    // Started with the first plan, not at open: a dataset only read at random
    // (and perhaps forked into DataLoader workers) has no threads.
    if (prefetchers_.empty()) {
      const int count = std::min(options_.prefetch_shards, options_.max_requests);
      for (int i = 0; i < count; ++i) prefetchers_.emplace_back([this] { PrefetchLoop(); });
    }
  }
  plan_cv_.notify_all();
}

void RemoteShards::PrefetchLoop() {
  std::unique_lock<std::mutex> lock(plan_mu_);
  for (;;) {
    uint32_t target = 0;
    bool found = false;
    plan_cv_.wait(lock, [&] {
      if (stopping_) return true;
      for (uint32_t s : window_) {
        if (kept_[s] == nullptr && held_.count(s) == 0 && fetching_.count(s) == 0 && failed_.count(s) == 0) {
          target = s;
          found = true;
          return true;
        }
      }
      return false;
    });
    if (stopping_) return;
    if (!found) continue;
    fetching_.insert(target);
    const uint64_t serial = plan_serial_;
    lock.unlock();
    // Errors are the reader's to report, when it reads the shard itself.
    Result<std::shared_ptr<const ShardData>> data = Fetch(target, true);
    lock.lock();
    fetching_.erase(target);
    if (!data.ok()) {
      if (serial == plan_serial_) failed_.insert(target);  // not retried in a loop
      continue;
    }
    if (serial == plan_serial_ && std::find(window_.begin(), window_.end(), target) != window_.end()) {
      held_[target] = std::move(data).value();
    }
  }
}

}  // namespace unirecord::remote
