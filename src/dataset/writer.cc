#include "unirecord/writer.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "dataset/manifest.h"
#include "format/array_values.h"
#include "format/endian.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "format/record_values.h"
#include "index/record_table.h"
#include "io/file.h"
#include "shard/shard_writer.h"
#include "util/threads.h"

namespace unirecord {

// --- RecordBuilder ----------------------------------------------------------

namespace {

using Slot = RecordBuilder::Impl::Slot;

template <typename T>
constexpr FieldType TypeOf() {
  if constexpr (std::is_same_v<T, int32_t>) return FieldType::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return FieldType::kInt64;
  if constexpr (std::is_same_v<T, float>) return FieldType::kFloat32;
  return FieldType::kFloat64;
}

Result<Slot*> CheckedSlot(RecordBuilder::Impl& impl, size_t field, FieldType type, bool array) {
  if (field >= impl.schema.num_fields()) {
    return Status::InvalidArgument("record: field index " + std::to_string(field) + " out of range (" +
                                   std::to_string(impl.schema.num_fields()) + " fields)");
  }
  const Field& f = impl.schema.field(field);
  if (f.type != type || f.is_array() != array) {
    return Status::InvalidArgument("record: field '" + f.name + "' is " + FieldTypeName(f.type) +
                                   (f.is_array() ? " array" : "") + ", not " + FieldTypeName(type) +
                                   (array ? " array" : ""));
  }
  return &impl.slots[field];
}


// Every numeric setter ends here: the value's shape is checked against the
// field's pattern and stored as its kind says (SPEC.md 6.1 and 6.3).
Status SetNumericValues(RecordBuilder::Impl& impl, size_t field, FieldType type, const void* data,
                        const std::vector<int64_t>& shape) {
  UREC_ASSIGN_OR_RETURN(Slot * slot, CheckedSlot(impl, field, type, !shape.empty()));
  const Field& f = impl.schema.field(field);
  if (!IsNumeric(f.type)) {
    return Status::InvalidArgument("record: field '" + f.name + "' is " + FieldTypeName(f.type) + ", not numeric");
  }
  UREC_RETURN_IF_ERROR(format::CheckShape(f, shape));
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  const std::string_view bytes(static_cast<const char*>(data), count * NumericWidth(f.type));  // host is little-endian
  if (f.type == FieldType::kBool) {
    for (char c : bytes) {
      if (c != 0 && c != 1) {
        return Status::InvalidArgument("record: bool field '" + f.name + "' holds a byte other than 0 or 1");
      }
    }
  }
  if (shape.empty()) {
    std::memcpy(slot->scalar, bytes.data(), bytes.size());
    slot->indexed_bits = format::IndexedBitsOf(f.type, slot->scalar);
    slot->value = std::string_view(reinterpret_cast<const char*>(slot->scalar), bytes.size());
  } else if (KindInfoOf(f.kind()).per_record_shape) {
    format::EncodeVarArray(f, shape, bytes, &slot->owned);
    slot->value = slot->owned;
  } else {
    slot->owned.assign(bytes.data(), bytes.size());
    slot->value = slot->owned;
  }
  slot->set = true;
  return Status::OK();
}

template <typename T>
Status SetArrayValues(RecordBuilder::Impl& impl, size_t field, const T* values, size_t count) {
  UREC_RETURN_IF_ERROR(CheckedSlot(impl, field, TypeOf<T>(), true).status());
  const Field& f = impl.schema.field(field);
  // The one -1 dimension of a variable-shape field follows from the count.
  std::vector<int64_t> shape = f.shape;
  const int64_t fixed = f.num_elements();
  const auto variable = std::count(shape.begin(), shape.end(), kVariableDim);
  if (variable == 1 && count % static_cast<size_t>(fixed) == 0) {
    *std::find(shape.begin(), shape.end(), kVariableDim) = static_cast<int64_t>(count) / fixed;
  } else if (variable > 0 || count != static_cast<size_t>(fixed)) {
    return Status::InvalidArgument("record: field '" + f.name + "' of shape " + format::ShapeToString(f.shape) +
                                   " takes " + (variable > 0 ? "a multiple of " : "") + std::to_string(fixed) +
                                   " elements" + (variable > 1 ? " and a shape (SetValues)" : "") + ", got " +
                                   std::to_string(count));
  }
  return SetNumericValues(impl, field, TypeOf<T>(), values, shape);
}

}  // namespace

RecordBuilder::RecordBuilder(const Schema& schema) : impl_(std::make_unique<Impl>(schema)) {}
RecordBuilder::~RecordBuilder() = default;
RecordBuilder::RecordBuilder(RecordBuilder&&) noexcept = default;
RecordBuilder& RecordBuilder::operator=(RecordBuilder&&) noexcept = default;

const Schema& RecordBuilder::schema() const { return impl_->schema; }

Status RecordBuilder::SetInt32(size_t field, int32_t value) { return SetValues(field, FieldType::kInt32, &value, {}); }
Status RecordBuilder::SetInt64(size_t field, int64_t value) { return SetValues(field, FieldType::kInt64, &value, {}); }
Status RecordBuilder::SetFloat32(size_t field, float value) { return SetValues(field, FieldType::kFloat32, &value, {}); }
Status RecordBuilder::SetFloat64(size_t field, double value) { return SetValues(field, FieldType::kFloat64, &value, {}); }

Status RecordBuilder::SetString(size_t field, std::string_view value) {
  UREC_ASSIGN_OR_RETURN(Slot * slot, CheckedSlot(*impl_, field, FieldType::kString, false));
  if (value.size() > format::kMaxBlobBytes) {
    return Status::InvalidArgument("record: string for field '" + impl_->schema.field(field).name +
                                   "' exceeds 4 GiB - 1 bytes");
  }
  slot->owned.assign(value.data(), value.size());
  slot->value = slot->owned;
  slot->set = true;
  return Status::OK();
}

Status RecordBuilder::SetBytes(size_t field, std::string_view value) {
  UREC_ASSIGN_OR_RETURN(Slot * slot, CheckedSlot(*impl_, field, FieldType::kBytes, false));
  if (value.size() > format::kMaxBlobBytes) {
    return Status::InvalidArgument("record: blob for field '" + impl_->schema.field(field).name +
                                   "' exceeds 4 GiB - 1 bytes");
  }
  slot->value = value;
  slot->set = true;
  return Status::OK();
}

Status RecordBuilder::SetBytesOwned(size_t field, std::string value) {
  UREC_ASSIGN_OR_RETURN(Slot * slot, CheckedSlot(*impl_, field, FieldType::kBytes, false));
  slot->owned = std::move(value);
  return SetBytes(field, slot->owned);
}

Status RecordBuilder::SetValues(size_t field, FieldType type, const void* data, const std::vector<int64_t>& shape) {
  return SetNumericValues(*impl_, field, type, data, shape);
}
Status RecordBuilder::SetArray(size_t field, const int32_t* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }
Status RecordBuilder::SetArray(size_t field, const int64_t* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }
Status RecordBuilder::SetArray(size_t field, const float* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }
Status RecordBuilder::SetArray(size_t field, const double* v, size_t n) { return SetArrayValues(*impl_, field, v, n); }

#define UREC_BY_NAME(call)                                           \
  UREC_ASSIGN_OR_RETURN(size_t index, impl_->schema.FindField(field)); \
  return call

Status RecordBuilder::SetInt32(std::string_view field, int32_t value) { UREC_BY_NAME(SetInt32(index, value)); }
Status RecordBuilder::SetInt64(std::string_view field, int64_t value) { UREC_BY_NAME(SetInt64(index, value)); }
Status RecordBuilder::SetFloat32(std::string_view field, float value) { UREC_BY_NAME(SetFloat32(index, value)); }
Status RecordBuilder::SetFloat64(std::string_view field, double value) { UREC_BY_NAME(SetFloat64(index, value)); }
Status RecordBuilder::SetString(std::string_view field, std::string_view value) { UREC_BY_NAME(SetString(index, value)); }
Status RecordBuilder::SetBytes(std::string_view field, std::string_view value) { UREC_BY_NAME(SetBytes(index, value)); }
Status RecordBuilder::SetBytesOwned(std::string_view field, std::string value) {
  UREC_BY_NAME(SetBytesOwned(index, std::move(value)));
}
Status RecordBuilder::SetValues(std::string_view field, FieldType type, const void* data,
                                const std::vector<int64_t>& shape) {
  UREC_BY_NAME(SetValues(index, type, data, shape));
}
Status RecordBuilder::SetArray(std::string_view field, const int32_t* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }
Status RecordBuilder::SetArray(std::string_view field, const int64_t* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }
Status RecordBuilder::SetArray(std::string_view field, const float* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }
Status RecordBuilder::SetArray(std::string_view field, const double* v, size_t n) { UREC_BY_NAME(SetArray(index, v, n)); }

#undef UREC_BY_NAME

void RecordBuilder::Clear() {
  for (Slot& slot : impl_->slots) {
    slot.set = false;
    slot.value = {};
  }
}

// --- Writer -----------------------------------------------------------------

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
  const Result<format::Manifest> manifest = format::ReadManifest(dir, name);
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
  Schema user_schema;  // as given; context.schema has default_blob_compression applied
  format::ShardContext context;
  std::vector<std::unique_ptr<format::ShardWriter>> shards;
  uint64_t written = 0;
  bool started = false;
  bool finished = false;
  Status failure;  // first error that made the writer unusable
  WriterSummary summary;

  Result<format::ShardWriter*> StartShard() {
    const uint32_t number = static_cast<uint32_t>(shards.size());
    if (number >= format::kMaxShards) return Status::InvalidArgument("writer: more than 99999 shards");
    char number_text[16];
    std::snprintf(number_text, sizeof(number_text), "%05" PRIu32, number);
    UREC_ASSIGN_OR_RETURN(auto shard, format::ShardWriter::Create(context, number,
                                                                  TemporaryPath(number_text + std::string(".urec")),
                                                                  TemporaryPath(number_text + std::string(".uidx"))));
    shards.push_back(std::move(shard));
    return shards.back().get();
  }

  // First id of shard s in contiguous mode.
  uint64_t ContiguousStart(uint32_t s) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(context.options.expected_records) * s /
                                 planned_shards);
  }

  Result<format::ShardWriter*> ShardForNext() {
    if (mode == ShardingMode::kRoundRobin) {
      while (shards.size() < planned_shards) UREC_RETURN_IF_ERROR(StartShard().status());
      return shards[written % planned_shards].get();
    }
    if (mode == ShardingMode::kContiguous) {
      if (written >= context.options.expected_records) {
        return Status::InvalidArgument("writer: more records than expected_records (" +
                                       std::to_string(context.options.expected_records) + ")");
      }
      // Move to the shard whose range holds `written`; skipped shards stay empty.
      while (shards.empty() || written >= ContiguousStart(static_cast<uint32_t>(shards.size()))) {
        if (!shards.empty()) UREC_RETURN_IF_ERROR(shards.back()->Close());
        UREC_RETURN_IF_ERROR(StartShard().status());
      }
      return shards.back().get();
    }
    if (shards.empty() ||
        (shards.back()->records() > 0 && shards.back()->file_bytes() >= context.options.target_shard_bytes)) {
      if (!shards.empty()) UREC_RETURN_IF_ERROR(shards.back()->Close());
      UREC_RETURN_IF_ERROR(StartShard().status());
    }
    return shards.back().get();
  }

  format::Uuid DatasetUuid() const {
    XXH3_state_t* state = XXH3_createState();
    XXH3_128bits_reset(state);
    auto add_u64 = [state](uint64_t v) {
      uint8_t bytes[8];
      format::StoreLE<uint64_t>(bytes, v);
      XXH3_128bits_update(state, bytes, sizeof(bytes));
    };
    XXH3_128bits_update(state, format::kUuidDomain, std::strlen(format::kUuidDomain));
    add_u64(shards.size());
    for (const auto& shard : shards) {
      add_u64(shard->records());
      add_u64(shard->footer_checksum());
      add_u64(shard->record_table_checksum());
    }
    format::ShardHeaderValues anonymous;
    anonymous.blob_page_bytes = context.options.blob_page_bytes;
    anonymous.scalar_page_bytes = context.options.scalar_page_bytes;
    anonymous.zstd_level = context.options.zstd_level;
    const std::string header = format::BuildShardHeader(context.schema, context.metadata, anonymous);
    XXH3_128bits_update(state, header.data(), header.size());
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state));
    XXH3_freeState(state);
    format::Uuid uuid;
    std::memcpy(uuid.data(), canonical.digest, uuid.size());
    uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0F) | 0x80);  // version 8
    uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3F) | 0x80);  // variant 10
    return uuid;
  }

  std::string TemporaryPath(const std::string& tag) const {
    return io::JoinPath(out_dir, format::TemporaryFileName(name, ::getpid(), tag));
  }

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
    return Status::InvalidArgument("writer: num_shards " + std::to_string(options.num_shards) + " exceeds 99999");
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
  impl->context.options = options;
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
  const RecordBuilder::Impl& values = *record.impl_;
  if (values.schema != w.user_schema && values.schema != w.context.schema) {
    return Status::InvalidArgument("writer: record built for another schema (" + values.schema.ToString() + ")");
  }
  for (size_t f = 0; f < values.slots.size(); ++f) {
    if (!values.slots[f].set) {
      return Status::InvalidArgument("writer: field '" + w.context.schema.field(f).name + "' of record " +
                                     std::to_string(w.written) + " is not set");
    }
  }
  if (w.mode == ShardingMode::kContiguous && w.written >= w.context.options.expected_records) {
    return Status::InvalidArgument("writer: more records than expected_records (" +
                                   std::to_string(w.context.options.expected_records) + ")");
  }
  w.started = true;
  Result<format::ShardWriter*> shard = w.ShardForNext();
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
  const int threads = context.options.threads;
  UREC_RETURN_IF_ERROR(ParallelFor(shards.size(), threads, "writer: threads", [this](size_t s) {
    return shards[s]->closed() ? Status::OK() : shards[s]->Close();
  }));
  const uint32_t count = static_cast<uint32_t>(shards.size());
  const format::Uuid uuid = DatasetUuid();
  std::vector<uint64_t> first_ids(count + 1, 0);
  for (uint32_t s = 0; s < count; ++s) first_ids[s + 1] = first_ids[s] + shards[s]->records();
  UREC_RETURN_IF_ERROR(ParallelFor(count, threads, "writer: threads", [&](size_t s) {
    format::ShardWriter& shard = *shards[s];
    format::ShardHeaderValues header;
    header.uuid = uuid;
    header.shard_number = static_cast<uint32_t>(s);
    header.shard_count = count;
    header.record_count = shard.records();
    header.blob_page_bytes = context.options.blob_page_bytes;
    header.scalar_page_bytes = context.options.scalar_page_bytes;
    header.zstd_level = context.options.zstd_level;
    format::IndexHeaderValues index;
    index.uuid = uuid;
    index.shard_number = static_cast<uint32_t>(s);
    index.shard_count = count;
    index.first_id = first_ids[s];
    index.dataset_record_count = written;
    index.shard_file_length = shard.shard_file_length();
    index.shard_footer_checksum = shard.footer_checksum();
    return shard.Finalize(header, index, context.options.sync);
  }));
  // Every file of the new generation goes to its final name; then one
  // rename of the manifest commits them all (format/SPEC.md section 1.1).
  const bool sync = context.options.sync;
  std::vector<std::pair<std::string, std::string>> moves;  // temporary -> final
  for (uint32_t s = 0; s < count; ++s) {
    const std::string shard_path = io::JoinPath(out_dir, format::ShardFileName(name, generation, s, count));
    moves.emplace_back(shards[s]->index_temp_path(), format::IndexPathFor(shard_path));
    moves.emplace_back(shards[s]->shard_temp_path(), shard_path);
    summary.shard_paths.push_back(shard_path);
    summary.index_paths.push_back(format::IndexPathFor(shard_path));
    summary.bytes += shards[s]->shard_file_length() + shards[s]->index_file_length();
  }
  format::Manifest manifest;
  manifest.generation = generation;
  manifest.shard_count = count;
  manifest.uuid = format::UuidToString(uuid);
  for (const auto& [label, text] : reports) {
    const std::string temporary = TemporaryPath(label + ".tsv");
    UREC_RETURN_IF_ERROR(WriteWholeFile(temporary, text, sync));
    moves.emplace_back(temporary, io::JoinPath(out_dir, format::ReportFileName(name, generation, label)));
    summary.report_paths.push_back(moves.back().second);
    manifest.reports.push_back(label);
  }
  for (const auto& [from, to] : moves) UREC_RETURN_IF_ERROR(io::RenameFile(from, to));
  if (sync) UREC_RETURN_IF_ERROR(io::SyncDirectory(out_dir));
  const std::string manifest_temporary = TemporaryPath("uset");
  summary.manifest_path = io::JoinPath(out_dir, format::ManifestFileName(name));
  UREC_RETURN_IF_ERROR(WriteWholeFile(manifest_temporary, format::EncodeManifest(manifest), sync));
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
