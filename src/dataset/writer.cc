#include "unirecord/writer.h"

#include <unistd.h>
#include <zstd.h>

#include <algorithm>

#include "dataset/manifest.h"
#include "dataset/record_builder_impl.h"
#include "format/dataset_uuid.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "io/file.h"
#include "shard/shard_writer.h"
#include "util/threads.h"

namespace unirecord {

static_assert(kMaxDatasetShards == format::kMaxShards, "writer.h's public shard limit must equal the format's");

namespace {

enum class ShardingMode { kRoundRobin, kContiguous, kTargetSize };

// Writes `bytes` to a new file at `path`, fsynced when `sync`.
Status WriteWholeFile(const std::string& path, const std::string& bytes, bool sync) {
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(path));
  UREC_RETURN_IF_ERROR(file.Append(bytes));
  if (sync) UREC_RETURN_IF_ERROR(file.Sync());
  return file.Close();
}

// Under the dataset's lock: removes every file of dataset `name` in `dir`
// that the committed generation does not use (earlier and uncommitted
// generations, pre-manifest files a manifest replaced, dead writers'
// temporaries). The committed generation is the one DIR/NAME.uset names, or
// the pre-manifest layout (generation 0) when there is none; with a damaged
// manifest only temporaries go. Returns the highest generation number seen,
// so that the next one is new. Removal failures are left for the next run.
Result<uint64_t> RemoveUnusedFiles(const std::string& dir, const std::string& name) {
  const Result<dataset::Manifest> manifest = dataset::ReadManifest(dir, name);
  const bool known = manifest.ok() || manifest.status().code() == StatusCode::kNotFound;
  const uint64_t committed = manifest.ok() ? manifest->generation : 0;
  UREC_ASSIGN_OR_RETURN(std::vector<std::string> files, io::ListDirectory(dir));
  uint64_t highest = committed;
  for (const std::string& file : files) {
    const format::FileOfDataset of = format::ClassifyFile(file, name);
    highest = std::max(highest, of.generation);
    const bool unused = of.role == format::FileRole::kTemporary ||
                        (known && (of.role == format::FileRole::kShard || of.role == format::FileRole::kReport) &&
                         of.generation != committed);
    if (unused) io::RemoveFileIfExists(io::JoinPath(dir, file));
  }
  return highest;
}

}  // namespace

struct Writer::Impl {
  std::string out_dir;
  std::string name;
  io::FileLock lock;        // held from Create until Finish or destruction
  uint64_t generation = 0;  // the one this writer commits
  std::vector<std::pair<std::string, std::string>> reports;  // label, text
  ShardingMode mode = ShardingMode::kRoundRobin;
  uint32_t planned_shards = 1;  // round robin and contiguous modes
  WriterOptions options;
  Schema user_schema;  // as given; context.schema has default_blob_compression applied
  shard::ShardContext context;
  std::vector<std::unique_ptr<shard::ShardWriter>> shards;
  uint64_t written = 0;
  bool started = false;
  bool finished = false;
  Status failure;  // first error that made the writer unusable
  WriterSummary summary;

  Result<shard::ShardWriter*> StartShard() {
    const uint32_t number = static_cast<uint32_t>(shards.size());
    if (number >= format::kMaxShards) {
      return Status::InvalidArgument("writer: more than " + std::to_string(format::kMaxShards) + " shards");
    }
    const long pid = ::getpid();
    UREC_ASSIGN_OR_RETURN(auto shard, shard::ShardWriter::Create(
                                          context, number,
                                          InDir(format::TemporaryShardFileName(name, pid, number)),
                                          InDir(format::TemporaryIndexFileName(name, pid, number))));
    shards.push_back(std::move(shard));
    return shards.back().get();
  }

  // First id of shard s in contiguous mode.
  uint64_t ContiguousStart(uint32_t s) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(options.expected_records) * s /
                                 planned_shards);
  }

  Result<shard::ShardWriter*> ShardForNext() {
    if (mode == ShardingMode::kRoundRobin) {
      while (shards.size() < planned_shards) UREC_RETURN_IF_ERROR(StartShard().status());
      return shards[written % planned_shards].get();
    }
    if (mode == ShardingMode::kContiguous) {
      // Write() has refused records past expected_records. Move to the shard whose range holds `written`; skipped shards stay empty.
      while (shards.empty() || written >= ContiguousStart(static_cast<uint32_t>(shards.size()))) {
        if (!shards.empty()) UREC_RETURN_IF_ERROR(shards.back()->Close());
        UREC_RETURN_IF_ERROR(StartShard().status());
      }
      return shards.back().get();
    }
    if (shards.empty() ||
        (shards.back()->records() > 0 && shards.back()->file_bytes() >= options.target_shard_bytes)) {
      if (!shards.empty()) UREC_RETURN_IF_ERROR(shards.back()->Close());
      UREC_RETURN_IF_ERROR(StartShard().status());
    }
    return shards.back().get();
  }

  format::Uuid DatasetUuid() const {
    std::vector<format::ShardDigest> digests;
    for (const auto& shard : shards) {
      digests.push_back({shard->records(), shard->footer_checksum(), shard->record_table_checksum()});
    }
    return format::DeriveDatasetUuid(digests, context.schema, context.metadata, PageHeaderValues());
  }

  // The page settings as a shard header records them.
  format::ShardHeaderValues PageHeaderValues() const {
    format::ShardHeaderValues values;
    values.blob_page_bytes = context.pages.blob_page_bytes;
    values.scalar_page_bytes = context.pages.scalar_page_bytes;
    values.zstd_level = context.pages.zstd_level;
    return values;
  }

  std::string InDir(const std::string& file) const { return io::JoinPath(out_dir, file); }

  // Ends the write: removes what the committed generation does not use
  // (after a failure: everything this writer wrote) and drops the lock.
  void Release() {
    if (!lock.held()) return;
    shards.clear();  // closes their files
    (void)RemoveUnusedFiles(out_dir, name);
    lock.Release();
  }

  Status Commit();
};

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Writer::~Writer() { impl_->Release(); }

Result<std::unique_ptr<Writer>> Writer::Create(const std::string& out_dir, const std::string& name,
                                               const Schema& schema, const WriterOptions& options) {
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    return Status::InvalidArgument("writer: dataset name '" + name + "' must be non-empty, contain no '/' "
                                   "and not start with '.'");
  }
  if (schema.num_fields() == 0) return Status::InvalidArgument("writer: empty schema");
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("writer: set num_shards or target_shard_bytes, not both");
  }
  if (options.num_shards > format::kMaxShards) {
    return Status::InvalidArgument("writer: num_shards " + std::to_string(options.num_shards) + " exceeds " +
                                   std::to_string(format::kMaxShards));
  }
  if (options.expected_records > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("writer: expected_records applies to num_shards mode only");
  }
  if (options.blob_page_bytes == 0 || options.scalar_page_bytes == 0) {
    return Status::InvalidArgument("writer: page sizes must be positive");
  }
  if (options.zstd_level < ZSTD_minCLevel() || options.zstd_level > ZSTD_maxCLevel()) {
    return Status::InvalidArgument("writer: zstd_level " + std::to_string(options.zstd_level) + " out of range");
  }
  if (options.default_blob_compression != BlobCompression::kNone &&
      options.default_blob_compression != BlobCompression::kZstd) {
    return Status::InvalidArgument("writer: unknown default_blob_compression");
  }
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "writer: threads").status());
  UREC_RETURN_IF_ERROR(io::CreateDirectory(out_dir));

  auto impl = std::make_unique<Impl>();
  impl->out_dir = out_dir;
  impl->name = name;
  const std::string lock_path = io::JoinPath(out_dir, format::LockFileName(name));
  Result<io::FileLock> lock = io::FileLock::Acquire(lock_path);
  if (!lock.ok()) {
    if (lock.status().code() != StatusCode::kFailedPrecondition) return lock.status();
    return Status::FailedPrecondition("writer: dataset '" + name + "' in " + out_dir +
                                      " is being written by another writer (" + lock.status().message() + ")");
  }
  impl->lock = std::move(*lock);
  UREC_ASSIGN_OR_RETURN(const uint64_t highest, RemoveUnusedFiles(out_dir, name));
  if (highest >= format::kMaxGeneration) {
    return Status::FailedPrecondition("writer: dataset '" + name + "' in " + out_dir + " is at the last generation");
  }
  impl->generation = highest + 1;
  impl->user_schema = schema;
  std::vector<Field> stored_fields = schema.fields();
  for (Field& f : stored_fields) {
    if (f.type == FieldType::kBytes && f.compression == BlobCompression::kNone) {
      f.compression = options.default_blob_compression;
    }
  }
  UREC_ASSIGN_OR_RETURN(impl->context.schema, Schema::Make(std::move(stored_fields)));
  impl->context.layout = index::FieldLayout::For(impl->context.schema);
  impl->context.pages = {options.blob_page_bytes, options.scalar_page_bytes, options.zstd_level};
  impl->options = options;
  if (options.target_shard_bytes > 0) {
    impl->mode = ShardingMode::kTargetSize;
  } else {
    impl->planned_shards = options.num_shards == 0 ? 1 : options.num_shards;
    impl->mode = options.expected_records > 0 ? ShardingMode::kContiguous : ShardingMode::kRoundRobin;
  }
  return std::unique_ptr<Writer>(new Writer(std::move(impl)));
}

const Schema& Writer::schema() const { return impl_->context.schema; }

Status Writer::SetMetadata(const std::string& key, const std::string& value) {
  if (impl_->started || impl_->finished) {
    return Status::FailedPrecondition("writer: SetMetadata must come before the first Write");
  }
  impl_->context.metadata[key] = value;
  return Status::OK();
}

Status Writer::Write(RecordBuilder& record) {
  Impl& w = *impl_;
  if (w.finished) return Status::FailedPrecondition("writer: Write after Finish");
  if (!w.failure.ok()) return Status::FailedPrecondition("writer: unusable after an earlier error: " + w.failure.message());
  const format::RecordValues& values = *record.impl_;
  if (values.schema != w.user_schema && values.schema != w.context.schema) {
    return Status::InvalidArgument("writer: record built for another schema (" + values.schema.ToString() + ")");
  }
  for (size_t f = 0; f < values.slots.size(); ++f) {
    if (!values.slots[f].set) {
      return Status::InvalidArgument("writer: field '" + w.context.schema.field(f).name + "' of record " +
                                     std::to_string(w.written) + " is not set");
    }
  }
  if (w.mode == ShardingMode::kContiguous && w.written >= w.options.expected_records) {
    return Status::InvalidArgument("writer: more records than expected_records (" +
                                   std::to_string(w.options.expected_records) + ")");
  }
  w.started = true;
  Result<shard::ShardWriter*> shard = w.ShardForNext();
  Status status = shard.ok() ? (*shard)->Add(values) : shard.status();
  if (!status.ok()) {
    w.failure = status;
    return status;
  }
  ++w.written;
  record.Clear();
  return Status::OK();
}

uint64_t Writer::records_written() const { return impl_->written; }

Status Writer::AddReport(const std::string& label, std::string text) {
  if (impl_->finished) return Status::FailedPrecondition("writer: AddReport after Finish");
  if (label.empty() || label.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
    return Status::InvalidArgument("writer: report label '" + label + "' must be lowercase letters a-z");
  }
  for (const auto& report : impl_->reports) {
    if (report.first == label) return Status::InvalidArgument("writer: report '" + label + "' added twice");
  }
  impl_->reports.emplace_back(label, std::move(text));
  return Status::OK();
}

Status Writer::Finish() {
  Impl& w = *impl_;
  if (w.finished) return Status::FailedPrecondition("writer: Finish called twice");
  w.finished = true;
  if (!w.failure.ok()) return Status::FailedPrecondition("writer: unusable after an earlier error: " + w.failure.message());
  Status status = w.Commit();
  w.Release();
  return status;
}

Status Writer::Impl::Commit() {
  started = true;
  if (mode != ShardingMode::kTargetSize) {
    while (shards.size() < planned_shards) UREC_RETURN_IF_ERROR(StartShard().status());
  } else if (shards.empty()) {
    UREC_RETURN_IF_ERROR(StartShard().status());
  }
  const int threads = options.threads;
  UREC_RETURN_IF_ERROR(ParallelFor(shards.size(), threads, "writer: threads", [this](size_t s) {
    return shards[s]->closed() ? Status::OK() : shards[s]->Close();
  }));
  const uint32_t count = static_cast<uint32_t>(shards.size());
  const format::Uuid uuid = DatasetUuid();
  std::vector<uint64_t> first_ids(count + 1, 0);
  for (uint32_t s = 0; s < count; ++s) first_ids[s + 1] = first_ids[s] + shards[s]->records();
  UREC_RETURN_IF_ERROR(ParallelFor(count, threads, "writer: threads", [&](size_t s) {
    shard::ShardWriter& shard = *shards[s];
    format::ShardHeaderValues header = PageHeaderValues();
    header.uuid = uuid;
    header.shard_number = static_cast<uint32_t>(s);
    header.shard_count = count;
    header.record_count = shard.records();
    format::IndexHeaderValues index;
    index.uuid = uuid;
    index.shard_number = static_cast<uint32_t>(s);
    index.shard_count = count;
    index.first_id = first_ids[s];
    index.dataset_record_count = written;
    index.shard_file_length = shard.shard_file_length();
    index.shard_footer_checksum = shard.footer_checksum();
    return shard.Finalize(header, index, options.sync);
  }));
  // Every file of the new generation goes to its final name; then one
  // rename of the manifest commits them all (format/SPEC.md section 1.1).
  const bool sync = options.sync;
  std::vector<std::pair<std::string, std::string>> moves;  // temporary -> final
  for (uint32_t s = 0; s < count; ++s) {
    const std::string shard_path = io::JoinPath(out_dir, format::ShardFileName(name, generation, s, count));
    moves.emplace_back(shards[s]->index_temp_path(), format::IndexPathFor(shard_path));
    moves.emplace_back(shards[s]->shard_temp_path(), shard_path);
    summary.shard_paths.push_back(shard_path);
    summary.index_paths.push_back(format::IndexPathFor(shard_path));
    summary.bytes += shards[s]->shard_file_length() + shards[s]->index_file_length();
  }
  dataset::Manifest manifest;
  manifest.generation = generation;
  manifest.shard_count = count;
  manifest.uuid = format::UuidToString(uuid);
  for (const auto& [label, text] : reports) {
    const std::string temporary = InDir(format::TemporaryReportFileName(name, ::getpid(), label));
    UREC_RETURN_IF_ERROR(WriteWholeFile(temporary, text, sync));
    moves.emplace_back(temporary, io::JoinPath(out_dir, format::ReportFileName(name, generation, label)));
    summary.report_paths.push_back(moves.back().second);
    manifest.reports.push_back(label);
  }
  for (const auto& [from, to] : moves) UREC_RETURN_IF_ERROR(io::RenameFile(from, to));
  if (sync) UREC_RETURN_IF_ERROR(io::SyncDirectory(out_dir));
  const std::string manifest_temporary = InDir(format::TemporaryManifestFileName(name, ::getpid()));
  summary.manifest_path = io::JoinPath(out_dir, format::ManifestFileName(name));
  UREC_RETURN_IF_ERROR(WriteWholeFile(manifest_temporary, dataset::EncodeManifest(manifest), sync));
  UREC_RETURN_IF_ERROR(io::RenameFile(manifest_temporary, summary.manifest_path));
  summary.records = written;
  summary.shards = count;
  summary.uuid = manifest.uuid;
  summary.generation = generation;
  if (sync) UREC_RETURN_IF_ERROR(io::SyncDirectory(out_dir));
  return Status::OK();
}

const WriterSummary& Writer::summary() const { return impl_->summary; }

}  // namespace unirecord
