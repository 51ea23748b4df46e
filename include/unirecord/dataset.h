// Dataset: random access to the records of a unirecord dataset.
//
//   UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> ds, Dataset::Open("out/"));
//   UREC_ASSIGN_OR_RETURN(size_t image, ds->schema().FindField("image"));
//   UREC_ASSIGN_OR_RETURN(size_t label, ds->schema().FindField("label"));
//   for (uint64_t id = 0; id < ds->size(); ++id) {
//     UREC_ASSIGN_OR_RETURN(Blob jpeg, ds->GetBlob(id, image));        // zero-copy
//     UREC_ASSIGN_OR_RETURN(int64_t y, ds->GetIndexedInt64(id, label)); // index only
//   }
//
// Open memory-maps every shard and index file. It reads and checks only the
// fixed-size parts of each file (preambles, headers, trailers, footers, the
// index section directory) and does no per-record work, so it takes
// milliseconds and O(shards) memory whatever the record count.
//
// Every const method is thread-safe: many threads may call Get/GetBlob/
// GetIndexed* on one Dataset at once. A Record or Blob keeps its Dataset (and
// so the mapped files) alive; the views it hands out (Blob::data, strings,
// arrays) point into the mapped files or into buffers it owns, and stay valid
// while the Record or Blob lives, even after the last other reference to the
// Dataset is gone.
//
// Record ids are global and shard-major: shard 0 holds ids [0, n0), shard 1
// holds [n0, n0 + n1), and so on.
//
// Files must not be truncated or rewritten while a Dataset maps them (as with
// any mmap, reading a page that no longer exists raises SIGBUS). The Writer
// never does: a new generation of a dataset has new file names, and the old
// one is kept as a version (unirecord/versions.h) or, once collected,
// unlinked; an open Dataset keeps reading the generation it opened.
//
// Fields added later (unirecord/fields.h) are read from column files beside
// the shards as if the shard held them: schema() and Record show every
// field, whichever file holds it.
//
// Scalar (non-blob, non-indexed) fields are read by inflating their scalar
// page (16 KiB by default: a random Get costs ~30 us, docs/format.md
// "Performance"); each thread keeps its last 4 inflated pages, so reads in id
// order or in small blocks inflate each page once.
#ifndef UNIRECORD_DATASET_H_
#define UNIRECORD_DATASET_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "unirecord/media_value.h"
#include "unirecord/remote.h"
#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord {

namespace dataset_internal {
class ShardAccess;  // src/dataset/shard_access.h
class FieldReads;   // src/dataset/field_reads.h
}  // namespace dataset_internal

struct DatasetOptions {
  // Verify checksums on every read: each index record-table entry, each blob
  // read, each scalar page inflated, and each sorted index the first time a
  // query uses it (the whole section, once per open dataset): a damaged
  // index makes a query fail, never answer wrongly. At open, headers,
  // footers and trailers are always verified. Default: true.
  bool verify_checksums = true;

  // Also hash every index section (record table, secondary indexes) at open.
  // Costs a full read of every index file; per-entry checksums already guard
  // every read, so this is off by default. Verify() does it on demand.
  bool verify_index_at_open = false;

  // Accept a set of shards that is not the whole dataset (e.g. one shard file
  // opened on its own for inspection). Ids are then numbered over the opened
  // shards only, in shard-number order. Default: false (a missing shard is a
  // NotFound error naming it).
  bool allow_partial = false;

  // Which version of a dataset with a manifest to open (format/SPEC.md
  // section 1.3; unirecord/versions.h lists them): `version`, a committed
  // generation kept by the writer, or the one `tag` names. Default: 0 and
  // "", the latest. NotFound when that version is not kept (urec gc removed
  // it) or the tag does not exist; InvalidArgument for a path without a
  // manifest (a glob, a .urec file) or a tag naming another version than
  // `version`. A Dataset opened at a version keeps reading it, byte for
  // byte, while writers commit newer ones.
  uint64_t version = 0;
  std::string tag;

  // Scalar pages (the fields stored in columns: numbers, fixed-shape arrays,
  // strings) inflated for reads are kept, up to this many bytes, for every
  // thread reading this Dataset to share: reads at random (a shuffled
  // Loader of such fields) then inflate each page once, not once per
  // record. The first pages read stay until the Dataset closes (a remote
  // dataset's: until it closes the file, once read). 0: only each thread's
  // few most recent pages. Default: 256 MiB.
  uint64_t page_cache_bytes = uint64_t{256} << 20;

  // Remote datasets (http://, https://, s3://): the cache directory and its
  // budget, prefetch, retries, S3 settings (unirecord/remote.h).
  RemoteOptions remote;
};

// The bytes of one `bytes` field of one record: a view into the mapped shard,
// or, for a zstd-compressed blob, into a buffer this object owns. A Blob from
// Dataset::GetBlob holds a reference to its Dataset, so the view stays valid
// as long as the Blob does.
class Blob {
 public:
  Blob() = default;
  // `owner` keeps the viewed bytes alive (nullptr: the caller does).
  explicit Blob(std::string_view mapped, std::shared_ptr<const void> owner = nullptr)
      : view_(mapped), owner_(std::move(owner)) {}
  explicit Blob(std::string inflated) : owned_(std::move(inflated)), is_owned_(true) {}

  std::string_view data() const { return is_owned_ ? std::string_view(owned_) : view_; }
  size_t size() const { return data().size(); }
  // True when the bytes point into the mapped file (no copy was made).
  bool zero_copy() const { return !is_owned_; }

 private:
  friend class Dataset;
  std::string_view view_;
  std::shared_ptr<const void> owner_;  // what view_ points into
  std::string owned_;
  bool is_owned_ = false;
};

// The shape of one array value (at most 8 dimensions, none -1).
struct ArrayShape {
  int64_t dims[8] = {};
  size_t ndim = 0;

  size_t size() const { return ndim; }
  int64_t operator[](size_t i) const { return dims[i]; }
  const int64_t* begin() const { return dims; }
  const int64_t* end() const { return dims + ndim; }
  std::vector<int64_t> ToVector() const { return std::vector<int64_t>(begin(), end()); }
};

// A numeric array value of one record (fixed- or variable-shape): `count`
// elements of `type`, row-major, little-endian, aligned for the element
// type, viewed in place (a mapped blob page or an inflated scalar page that
// the Record holds). An empty array has count 0 and some extent 0.
struct ArrayView {
  FieldType type = FieldType::kInt32;
  ArrayShape shape;  // this record's shape
  const void* data = nullptr;
  size_t count = 0;

  size_t bytes() const { return count * NumericWidth(type); }
  // Typed pointer; nullptr when T does not match `type` (float16 has no C++
  // type: read its bits through `data`).
  template <typename T>
  const T* as() const;
};

class Dataset;
namespace shard {
class ShardReader;
}
namespace remote {
class RemoteShards;
}

// One record read by Dataset::Get: the views of its blobs and its scalar
// values. It keeps its Dataset alive. Typed getters fail with InvalidArgument on a field of another type
// (every integer and bool scalar may be read with GetInt64, every float one
// with GetFloat64) and OutOfRange on a bad field index. GetArray reads any
// numeric array, fixed- or variable-shape; a damaged variable shape is
// Corruption naming the record and field.
class Record {
 public:
  Record();
  ~Record();
  Record(Record&&) noexcept;
  Record& operator=(Record&&) noexcept;

  uint64_t id() const;
  const Schema& schema() const;

  Result<std::string_view> GetBytes(size_t field) const;
  Result<int32_t> GetInt32(size_t field) const;
  Result<int64_t> GetInt64(size_t field) const;
  Result<float> GetFloat32(size_t field) const;
  Result<double> GetFloat64(size_t field) const;
  Result<std::string_view> GetString(size_t field) const;
  Result<ArrayView> GetArray(size_t field) const;
  // A video or audio field's value, parsed and checked (views into the
  // record's bytes: valid while the Record lives). Corruption naming the
  // file, record and field when the value does not parse.
  Result<MediaValueView> GetMedia(size_t field) const;

  // By name (KeyNotFound for an unknown name).
  Result<std::string_view> GetBytes(std::string_view field) const;
  Result<int32_t> GetInt32(std::string_view field) const;
  Result<int64_t> GetInt64(std::string_view field) const;
  Result<float> GetFloat32(std::string_view field) const;
  Result<double> GetFloat64(std::string_view field) const;
  Result<std::string_view> GetString(std::string_view field) const;
  Result<ArrayView> GetArray(std::string_view field) const;
  Result<MediaValueView> GetMedia(std::string_view field) const;

 private:
  friend class Dataset;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Per-shard facts for `urec inspect`.
struct ShardInfo {
  std::string path;        // the .urec file as opened
  std::string index_path;  // its .uidx
  uint32_t number = 0;     // shard number within the dataset (over all segments)
  uint32_t segment = 0;    // its segment (SegmentInfo)
  uint64_t first_id = 0;   // global id of its first record
  uint64_t records = 0;
  uint64_t file_bytes = 0;
  uint64_t index_bytes = 0;
  uint64_t blob_pages = 0;
  uint64_t scalar_pages = 0;
  uint64_t blob_bytes = 0;           // blob bytes as stored (after optional zstd)
  uint64_t scalar_raw_bytes = 0;     // scalar page bytes before zstd
  uint64_t scalar_stored_bytes = 0;  // scalar page bytes after zstd
  uint32_t blob_page_bytes = 0;    // writer's page-size settings
  uint32_t scalar_page_bytes = 0;
  uint32_t index_entry_bytes = 0;  // stride of the index record table (0: none, format/SPEC.md 8.5)
  uint32_t format_major = 0;       // version the file was written with
  uint32_t format_minor = 0;
};

// Fields added to a segment after it was written (format/SPEC.md section
// 1.4; unirecord/fields.h adds them): column files beside its shards, one
// row per record of the shard beside it.
struct FieldGroupInfo {
  uint64_t generation = 0;          // the version that added it
  std::string uuid;                 // its column files'
  std::vector<std::string> fields;  // the fields read from it (a later group or a drop hides the others)
  std::vector<std::string> paths;   // its column files (.urec), by shard of the segment
};

// A run of shards written together (format/SPEC.md section 1.2): a dataset
// written once is one segment; each append without a copy adds one, and a
// merge keeps its inputs' segments.
struct SegmentInfo {
  uint64_t generation = 0;  // in its files' names; 0 without a manifest
  std::string uuid;         // its shards' UUID
  uint32_t first_shard = 0;
  uint32_t shards = 0;
  uint64_t first_id = 0;
  uint64_t records = 0;
  std::vector<FieldGroupInfo> field_groups;  // by generation
  std::vector<std::string> dropped_fields;   // fields of its shards hidden (DropFields)
};

// Always held by a shared_ptr (Open returns one): the Records and Blobs it
// hands out share its ownership.
class Dataset : public std::enable_shared_from_this<Dataset> {
 public:
  // `path` is a remote location (http://HOST/DIR/, .../NAME or .../NAME.uset,
  // s3://BUCKET/KEY/...; docs/remote.md), a directory (the dataset its manifest NAME.uset commits; in a
  // folder written before manifests, every *.urec in it; format/SPEC.md
  // section 1.1), DIR/NAME or DIR/NAME.uset (dataset NAME of a folder that
  // holds several), a single .urec file, or a glob pattern
  // ("out/train-*.urec": the shards; column files of field groups it also
  // matches are left out, unless it matches only those). Each shard's index
  // is the .uidx file of the same name beside it.
  // Errors: NotFound for a missing path, shard or index; Corruption for
  // damaged or mixed files; NotSupported for an unknown major version;
  // InvalidArgument for a path that names no shard. Messages name the file.
  static Result<std::shared_ptr<Dataset>> Open(const std::string& path,
                                               const DatasetOptions& options = {});
  // An explicit list of .urec paths, in any order.
  static Result<std::shared_ptr<Dataset>> Open(const std::vector<std::string>& shard_paths,
                                               const DatasetOptions& options = {});

  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  uint64_t size() const;  // records
  // Shard files opened (not LoaderOptions' num_shards, which counts ranks).
  uint32_t num_files() const;
  const Schema& schema() const;
  const std::map<std::string, std::string>& metadata() const;
  // The content-derived dataset UUID, "xxxxxxxx-xxxx-8xxx-xxxx-xxxxxxxxxxxx".
  const std::string& uuid() const;
  const DatasetOptions& options() const;
  // Opened shards, by shard number.
  const std::vector<ShardInfo>& shards() const;
  // Its segments, in id order (one for a dataset written at once).
  const std::vector<SegmentInfo>& segments() const;
  // The generation opened (DatasetOptions::version, or the latest); 0 when
  // opened without a manifest (a glob, .urec files, a folder written before
  // manifests).
  uint64_t version() const;

  // The whole record. OutOfRange for id >= size(); Corruption (naming file
  // and record) on a checksum or bounds failure.
  Result<Record> Get(uint64_t id) const;

  // Only one `bytes` field: reads the index entry and the blob, nothing else.
  // Of a video or audio field, the stored media value: checked as it is used
  // (ParseMediaValue checks its header, table and extradata; the decoders and
  // Remux each packet, SPEC.md 6.4), not hashed whole here.
  Result<Blob> GetBlob(uint64_t id, size_t field) const;

  // An indexed field's value from the index record table alone (no page is
  // read). Int fields via GetIndexedInt64, float fields via GetIndexedFloat64;
  // InvalidArgument for a field that is not indexed or of the other kind.
  Result<int64_t> GetIndexedInt64(uint64_t id, size_t field) const;
  Result<double> GetIndexedFloat64(uint64_t id, size_t field) const;

  // Remote datasets: the record ids in the order they will be read (the
  // Loader passes each epoch's order, then the next epoch's), so that their
  // shards are downloaded ahead of the reads. Local datasets: nothing to do.
  void PlanReads(const std::vector<uint64_t>& ids) const;
  bool is_remote() const;
  // Remote datasets: requests, downloads and cache hits so far (zeros for a
  // local one).
  RemoteStats remote_stats() const;

  // Deep check: every checksum of every file (pages, blobs, every index
  // section and entry) and the consistency of the index with its shard.
  // Reads everything; returns the first problem found, naming the file.
  Status Verify() const;

  struct Impl;  // defined inside the library (src/dataset)

 private:
  // The library's layers above the dataset read its shards through this
  // (src/dataset/shard_access.h).
  friend class dataset_internal::ShardAccess;
  explicit Dataset(std::unique_ptr<Impl> impl);
  // Get: every field (`reads` null), or only those `reads` names (ShardAccess::Get).
  Result<Record> Read(uint64_t id, const std::shared_ptr<const dataset_internal::FieldReads>& reads) const;
  static Result<std::shared_ptr<Dataset>> OpenRemote(const std::string& location, const DatasetOptions& options);
  std::unique_ptr<Impl> impl_;
};

template <typename T>
const T* ArrayView::as() const {
  constexpr FieldType wanted = std::is_same_v<T, int32_t>    ? FieldType::kInt32
                               : std::is_same_v<T, int64_t>  ? FieldType::kInt64
                               : std::is_same_v<T, float>    ? FieldType::kFloat32
                               : std::is_same_v<T, double>   ? FieldType::kFloat64
                               : std::is_same_v<T, uint8_t>  ? FieldType::kUint8
                               : std::is_same_v<T, int8_t>   ? FieldType::kInt8
                               : std::is_same_v<T, uint16_t> ? FieldType::kUint16
                               : std::is_same_v<T, int16_t>  ? FieldType::kInt16
                               : std::is_same_v<T, uint32_t> ? FieldType::kUint32
                               : std::is_same_v<T, bool>     ? FieldType::kBool
                                                             : FieldType::kBytes;
  return wanted == type ? static_cast<const T*>(data) : nullptr;
}

}  // namespace unirecord

#endif  // UNIRECORD_DATASET_H_
