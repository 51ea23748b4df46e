#include "unirecord/writer.h"

#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <optional>
#include <random>

#include "dataset/commit.h"
#include "dataset/field_defaults.h"
#include "dataset/record_builder_impl.h"
#include "format/array_values.h"
#include "format/dataset_uuid.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "io/file.h"
#include "shard/shard_writer.h"
#include "unirecord/dataset.h"
#include "unirecord/staged_write.h"
#include "util/threads.h"

namespace unirecord {

static_assert(kMaxDatasetShards == format::kMaxShards, "writer.h's public shard limit must equal the format's");

namespace {

enum class ShardingMode { kRoundRobin, kContiguous, kTargetSize };

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
  // A PartWriter's: no lock, no generation; Finish stages the part.
  struct Part {
    std::string token;
    uint32_t number = 0;
    uint32_t count = 0;
    std::string attempt;  // lowercase hex, random: this attempt's file names
  };
  std::optional<Part> part;
  // Appending (WriterOptions::append): the staged write whose one part
  // holds this writer's records, committed after the dataset's segments.
  std::unique_ptr<StagedWrite> staged;

  Result<shard::ShardWriter*> StartShard() {
    const uint32_t number = static_cast<uint32_t>(shards.size());
    if (number >= format::kMaxShards) {
      return Status::InvalidArgument("writer: more than " + std::to_string(format::kMaxShards) + " shards");
    }
    const long pid = ::getpid();
    std::string shard_path = part ? format::PartAttemptShardFileName(name, part->token, part->number, part->attempt, number)
                                  : format::TemporaryShardFileName(name, pid, number);
    std::string index_path = part ? format::PartAttemptIndexFileName(name, part->token, part->number, part->attempt, number)
                                  : format::TemporaryIndexFileName(name, pid, number);
    UREC_ASSIGN_OR_RETURN(auto shard, shard::ShardWriter::Create(context, number, InDir(shard_path), InDir(index_path)));
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
    // A part without target_shard_bytes is cut by NextShard() only.
    if (shards.empty() || (options.target_shard_bytes > 0 && shards.back()->records() > 0 &&
                           shards.back()->file_bytes() >= options.target_shard_bytes)) {
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
    if (part && !finished_ok) {
      for (const auto& shard : shards) {
        io::RemoveFileIfExists(shard->shard_temp_path());
        io::RemoveFileIfExists(shard->index_temp_path());
      }
    }
    shards.clear();  // closes their files
    dataset::ReleaseDataset(out_dir, name, &lock);
    staged.reset();  // an append's: removes what it staged, releases the lock
  }

  // Stages this writer's records and commits them as a new segment.
  Status CommitAppend() {
    UREC_RETURN_IF_ERROR(StagePart());
    UREC_RETURN_IF_ERROR(staged->Commit());
    summary = staged->summary();
    return Status::OK();
  }

  // Closes every shard and writes its final headers: the dataset's values
  // for a Writer, the part's own for a PartWriter (StagedWrite::Commit
  // replaces them). Returns the UUID written.
  Result<format::Uuid> CloseAndFinalize();
  Status Commit();
  Status StagePart();
  Status Init(const std::string& out, const std::string& dataset_name, const Schema& schema,
              const WriterOptions& writer_options);
  // PartWriter::WriteColumns.
  Status WriteColumns(const std::vector<std::string_view>& columns, uint64_t rows);
  bool finished_ok = false;
};

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Writer::~Writer() { impl_->Release(); }

namespace {

Status CheckWriterOptions(const Schema& schema, const WriterOptions& options) {
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
  return ResolveThreadCount(options.threads, "writer: threads").status();
}

// 16 lowercase hex digits from the system's random source: one attempt's
// file names, distinct from any other attempt's on any machine.
std::string RandomHex() {
  std::random_device random;
  const uint64_t value = (static_cast<uint64_t>(random()) << 32) ^ random();
  static const char* kHex = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 0; i < 16; ++i) text[static_cast<size_t>(i)] = kHex[(value >> (4 * (15 - i))) & 15];
  return text;
}

}  // namespace

Status Writer::Impl::Init(const std::string& out, const std::string& dataset_name, const Schema& schema,
                          const WriterOptions& writer_options) {
  out_dir = out;
  name = dataset_name;
  user_schema = schema;
  std::vector<Field> stored_fields = schema.fields();
  for (Field& f : stored_fields) {
    if (f.type == FieldType::kBytes && f.compression == BlobCompression::kNone) {
      f.compression = writer_options.default_blob_compression;
    }
  }
  UREC_ASSIGN_OR_RETURN(context.schema, Schema::Make(std::move(stored_fields)));
  context.layout = index::FieldLayout::For(context.schema, writer_options.record_table);
  context.pages = {writer_options.blob_page_bytes, writer_options.scalar_page_bytes, writer_options.zstd_level};
  options = writer_options;
  if (options.target_shard_bytes > 0 || part) {
    mode = ShardingMode::kTargetSize;
  } else {
    planned_shards = options.num_shards == 0 ? 1 : options.num_shards;
    mode = options.expected_records > 0 ? ShardingMode::kContiguous : ShardingMode::kRoundRobin;
  }
  return Status::OK();
}

Result<std::unique_ptr<Writer>> Writer::Create(const std::string& out_dir, const std::string& name,
                                               const Schema& schema, const WriterOptions& options) {
  UREC_RETURN_IF_ERROR(dataset::CheckDatasetName(name, "writer"));
  UREC_RETURN_IF_ERROR(CheckWriterOptions(schema, options));
  if (options.defaults && !options.append) {
    return Status::InvalidArgument("writer: defaults are for the fields an append's records lack: they need "
                                   "append (Python: mode=\"append\")");
  }
  if (options.append) {
    if (options.num_shards > 0 || options.expected_records > 0) {
      return Status::InvalidArgument("writer: append cuts new shards by target_shard_bytes only "
                                     "(num_shards and expected_records must be 0)");
    }
    const std::string existing = io::JoinPath(out_dir, name);
    Result<std::shared_ptr<Dataset>> old = Dataset::Open(existing);
    if (!old.ok() && old.status().code() != StatusCode::kNotFound) return old.status();
    const std::string where = "append to " + existing;
    if (old.ok()) {
      StagedWriteOptions staged_options;
      staged_options.threads = options.threads;
      staged_options.sync = options.sync;
      staged_options.defaults = options.defaults;
      auto impl = std::make_unique<Impl>();
      UREC_ASSIGN_OR_RETURN(impl->staged, StagedWrite::Begin(out_dir, name, 1, staged_options));
      UREC_RETURN_IF_ERROR(impl->staged->KeepCommitted());
      impl->part = Impl::Part{impl->staged->token(), 0, 1, RandomHex()};
      UREC_RETURN_IF_ERROR(impl->Init(out_dir, name, schema, options));
      // Records that lack fields the dataset has are refused now, not after
      // they are written (Finish checks again, with the rest of the schema).
      const std::optional<Schema> lacking = dataset::LackingFields(impl->context.schema, (*old)->schema());
      if (lacking) {
        UREC_RETURN_IF_ERROR(dataset::CheckDefaults(where, "the records", "the dataset", *lacking, options.defaults));
      }
      return std::unique_ptr<Writer>(new Writer(std::move(impl)));
    }
    UREC_RETURN_IF_ERROR(
        dataset::CheckDefaults(where + " (no dataset there yet)", "the records", "the dataset", Schema(), options.defaults));
  }
  UREC_ASSIGN_OR_RETURN(dataset::DatasetLock locked, dataset::LockDataset(out_dir, name, "writer"));
  auto impl = std::make_unique<Impl>();
  impl->lock = std::move(locked.lock);
  impl->generation = locked.generation;
  UREC_RETURN_IF_ERROR(impl->Init(out_dir, name, schema, options));
  return std::unique_ptr<Writer>(new Writer(std::move(impl)));
}

Result<std::unique_ptr<PartWriter>> PartWriter::Create(const std::string& out_dir, const std::string& name,
                                                       const std::string& token, uint32_t part, uint32_t num_parts,
                                                       const Schema& schema, const WriterOptions& options) {
  UREC_RETURN_IF_ERROR(dataset::CheckDatasetName(name, "part writer"));
  if (!format::IsStagingToken(token)) {
    return Status::InvalidArgument("part writer: token '" + token + "' is not a StagedWrite token (1 to 20 digits)");
  }
  if (num_parts == 0 || num_parts > format::kMaxShards || part >= num_parts) {
    return Status::InvalidArgument("part writer: part " + std::to_string(part) + " of " + std::to_string(num_parts) +
                                   " (parts: 1 to " + std::to_string(format::kMaxShards) + ", part < parts)");
  }
  if (options.num_shards > 0 || options.expected_records > 0) {
    return Status::InvalidArgument("part writer: num_shards and expected_records do not apply to a part "
                                   "(NextShard() and target_shard_bytes cut its shards)");
  }
  UREC_RETURN_IF_ERROR(CheckWriterOptions(schema, options));
  if (!io::PathExists(out_dir)) {
    return Status::NotFound("part writer: output folder " + out_dir + " does not exist (StagedWrite::Begin makes it)");
  }
  auto impl = std::make_unique<Writer::Impl>();
  impl->part = Writer::Impl::Part{token, part, num_parts, RandomHex()};
  UREC_RETURN_IF_ERROR(impl->Init(out_dir, name, schema, options));
  return std::unique_ptr<PartWriter>(new PartWriter(std::unique_ptr<Writer>(new Writer(std::move(impl)))));
}

PartWriter::PartWriter(std::unique_ptr<Writer> writer) : writer_(std::move(writer)) {}
PartWriter::~PartWriter() = default;
const Schema& PartWriter::schema() const { return writer_->schema(); }
Status PartWriter::SetMetadata(const std::string& key, const std::string& value) { return writer_->SetMetadata(key, value); }
Status PartWriter::Write(RecordBuilder& record) { return writer_->Write(record); }
Status PartWriter::WriteColumns(const std::vector<std::string_view>& columns, uint64_t rows) {
  return writer_->WriteColumns(columns, rows);
}
uint64_t PartWriter::records_written() const { return writer_->records_written(); }
Status PartWriter::Finish() { return writer_->Finish(); }
const WriterSummary& PartWriter::summary() const { return writer_->summary(); }

Status PartWriter::NextShard() { return writer_->NextShard(); }

Status Writer::WriteColumns(const std::vector<std::string_view>& columns, uint64_t rows) {
  return impl_->WriteColumns(columns, rows);
}

Status Writer::NextShard() {
  Impl& w = *impl_;
  if (w.finished) return Status::FailedPrecondition("part writer: NextShard after Finish");
  if (!w.failure.ok()) return Status::FailedPrecondition("part writer: unusable after an earlier error: " + w.failure.message());
  w.started = true;
  Status status = w.shards.empty() ? w.StartShard().status() : Status::OK();
  if (status.ok()) status = w.shards.back()->Close();
  if (status.ok()) status = w.StartShard().status();
  if (!status.ok()) w.failure = status;
  return status;
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

Status Writer::Impl::WriteColumns(const std::vector<std::string_view>& columns, uint64_t rows) {
  if (finished) return Status::FailedPrecondition("part writer: WriteColumns after Finish");
  if (!failure.ok()) return Status::FailedPrecondition("part writer: unusable after an earlier error: " + failure.message());
  const Schema& schema = context.schema;
  if (mode != ShardingMode::kTargetSize || !shard::ShardWriter::TakesColumns(context)) {
    return Status::InvalidArgument("part writer: WriteColumns takes numeric scalars and fixed-shape arrays stored "
                                   "in scalar pages only (" + schema.ToString() + "); write records");
  }
  if (columns.size() != schema.num_fields()) {
    return Status::InvalidArgument("part writer: WriteColumns got " + std::to_string(columns.size()) +
                                   " columns for " + std::to_string(schema.num_fields()) + " fields");
  }
  for (size_t k = 0; k < columns.size(); ++k) {
    const Field& f = schema.field(k);
    const uint64_t width = format::FixedValueBytes(f);
    if (columns[k].size() / width != rows || columns[k].size() % width != 0) {
      return Status::InvalidArgument("part writer: column of field '" + f.name + "' holds " +
                                     std::to_string(columns[k].size()) + " bytes, not " + std::to_string(rows) +
                                     " rows of " + std::to_string(width));
    }
    const size_t bad = f.type == FieldType::kBool ? format::FirstBadBoolByte(columns[k]) : columns[k].size();
    if (bad != columns[k].size()) {
      return Status::InvalidArgument("part writer: bool field '" + f.name + "' of record " +
                                     std::to_string(written + bad / width) + " holds a byte other than 0 or 1");
    }
  }
  started = true;
  std::vector<std::string_view> rest = columns;
  for (uint64_t done = 0; done < rows;) {
    Result<shard::ShardWriter*> shard = ShardForNext();
    // ShardForNext cuts a shard before a record once it is long enough; a
    // shard's length changes only when a page is written (AddColumns stops
    // there), but its first record moves it from empty to cuttable.
    const bool first = shard.ok() && (*shard)->records() == 0 && options.target_shard_bytes > 0;
    Result<uint64_t> added = shard.ok() ? (*shard)->AddColumns(rest, first ? 1 : rows - done) : shard.status();
    if (!added.ok()) {
      failure = added.status();
      return failure;
    }
    for (size_t k = 0; k < rest.size(); ++k) {
      const Field& f = schema.field(k);
      rest[k].remove_prefix(*added * format::FixedValueBytes(f));
    }
    done += *added;
    written += *added;
  }
  return Status::OK();
}

uint64_t Writer::records_written() const { return impl_->written; }

Status Writer::AddReport(const std::string& label, std::string text) {
  if (impl_->finished) return Status::FailedPrecondition("writer: AddReport after Finish");
  UREC_RETURN_IF_ERROR(dataset::CheckReportLabel(label, impl_->reports, "writer"));
  impl_->reports.emplace_back(label, std::move(text));
  return Status::OK();
}

Status Writer::Finish() {
  Impl& w = *impl_;
  if (w.finished) return Status::FailedPrecondition("writer: Finish called twice");
  w.finished = true;
  if (!w.failure.ok()) return Status::FailedPrecondition("writer: unusable after an earlier error: " + w.failure.message());
  Status status = w.staged ? w.CommitAppend() : w.part ? w.StagePart() : w.Commit();
  w.finished_ok = status.ok();
  w.Release();
  return status;
}

Result<format::Uuid> Writer::Impl::CloseAndFinalize() {
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
  for (const auto& shard : shards) summary.bytes += shard->shard_file_length() + shard->index_file_length();
  summary.bytes_written = summary.bytes;
  summary.records = written;
  summary.shards = count;
  return uuid;
}

Status Writer::Impl::Commit() {
  UREC_ASSIGN_OR_RETURN(const format::Uuid uuid, CloseAndFinalize());
  const uint32_t count = static_cast<uint32_t>(shards.size());
  // Every file of the new generation goes to its final name; then one
  // rename of the manifest commits them all (format/SPEC.md section 1.1).
  std::vector<std::pair<std::string, std::string>> moves;  // temporary -> final
  for (uint32_t s = 0; s < count; ++s) {
    const std::string shard_path = io::JoinPath(out_dir, format::ShardFileName(name, generation, s, count));
    moves.emplace_back(shards[s]->index_temp_path(), format::IndexPathFor(shard_path));
    moves.emplace_back(shards[s]->shard_temp_path(), shard_path);
    summary.shard_paths.push_back(shard_path);
    summary.index_paths.push_back(format::IndexPathFor(shard_path));
  }
  dataset::PendingGeneration pending;
  pending.generation = generation;
  pending.segments = {format::Segment{generation, count, 0, format::UuidToString(uuid), {}, {}}};
  pending.moves = std::move(moves);
  pending.reports = reports;
  pending.sync = options.sync;
  return dataset::CommitGeneration(out_dir, name, pending, &summary);
}

// The part's files go to their staged names, then the part file that says
// it is complete: a part is staged whole or not at all, and an attempt run
// again replaces each file whole (format/file_names.h).
Status Writer::Impl::StagePart() {
  UREC_RETURN_IF_ERROR(CloseAndFinalize().status());
  // A task that outlived its run (its driver killed, failed or done) must
  // not stage files that no commit will take and that the next writer,
  // already past its cleanup, would leave behind.
  if (!dataset::StagedWriteUnderWay(out_dir, name, part->token)) {
    return Status::FailedPrecondition("part writer: staged write " + part->token + " of dataset '" + name + "' in " +
                                      out_dir + " is over (committed or abandoned, or another writer holds the dataset): part " +
                                      std::to_string(part->number) + " not staged");
  }
  const uint32_t count = static_cast<uint32_t>(shards.size());
  for (uint32_t s = 0; s < count; ++s) {
    const std::string shard_path = InDir(format::StagedShardFileName(name, part->token, part->number, s));
    const std::string index_path = InDir(format::StagedIndexFileName(name, part->token, part->number, s));
    UREC_RETURN_IF_ERROR(io::RenameFile(shards[s]->index_temp_path(), index_path));
    UREC_RETURN_IF_ERROR(io::RenameFile(shards[s]->shard_temp_path(), shard_path));
    summary.shard_paths.push_back(shard_path);
    summary.index_paths.push_back(index_path);
  }
  const std::string attempt_file = InDir(format::PartAttemptPartFileName(name, part->token, part->number, part->attempt));
  UREC_RETURN_IF_ERROR(dataset::WriteWholeFile(
      attempt_file, dataset::EncodePartFile({part->number, part->count, count, written}), options.sync));
  UREC_RETURN_IF_ERROR(io::RenameFile(attempt_file, InDir(format::StagedPartFileName(name, part->token, part->number))));
  if (options.sync) UREC_RETURN_IF_ERROR(io::SyncDirectory(out_dir));
  return Status::OK();
}

const WriterSummary& Writer::summary() const { return impl_->summary; }

}  // namespace unirecord
