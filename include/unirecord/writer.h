// Writer: turns a stream of records into a sharded unirecord dataset.
//
//   UREC_ASSIGN_OR_RETURN(Schema schema, Schema::Make({Field::Bytes("image"),
//                                                      Field::Int64("label", true)}));
//   WriterOptions options;
//   options.num_shards = 4;
//   UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create("out", "train", schema, options));
//   UREC_RETURN_IF_ERROR(writer->SetMetadata("classes", "cat\ndog"));
//   RecordBuilder record(schema);
//   for (...) {
//     UREC_RETURN_IF_ERROR(record.SetBytes(0, jpeg_bytes));   // a view, no copy
//     UREC_RETURN_IF_ERROR(record.SetInt64(1, label));
//     UREC_RETURN_IF_ERROR(writer->Write(record));
//   }
//   UREC_RETURN_IF_ERROR(writer->Finish());
//
// Output (format/SPEC.md section 1): out/train.uset, the manifest, naming
// generation G; out/train-00000-of-00004.gGGGGGG.urec + .uidx, ...; and the
// lock file out/.train.lock. G is one more than the generation it replaces.
//
// Atomicity: Create takes an exclusive lock on out/.train.lock (a second
// writer of the same dataset fails at once with FailedPrecondition naming
// the holder's pid and host) and removes what killed writers left. Records
// go to hidden temporary files (".train.tmp-PID-*.partial"). Finish() fsyncs
// them, renames them to generation G's names, then commits by renaming one
// new manifest over the old one; the previous generation is kept as a
// version until CollectGarbage drops it (unirecord/versions.h). A
// reader therefore sees exactly the old dataset or exactly the new one,
// whenever the process is killed; destroying a Writer without a successful
// Finish() removes what it wrote.
//
// Determinism: the same records, metadata and options give byte-identical
// files (no timestamps, no randomness, no dependence on `threads`). The
// dataset UUID is derived from the content.
//
// A Writer is not thread-safe: call it from one thread at a time. One dataset
// written by many processes (a Dask job) is a staged write: staged_write.h.
#ifndef UNIRECORD_WRITER_H_
#define UNIRECORD_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord {

// The most shards one dataset may have (shard numbers are five digits in file
// names). The frozen value lives in src/format/format_constants.h; writer.cc
// static_asserts that this public copy equals it.
inline constexpr uint32_t kMaxDatasetShards = 99999;

class RecordBuilder;

// The values an append or a merge gives the fields its new records lack:
// fields added to the dataset after its shards were written (AddFields,
// unirecord/fields.h). Their names and types are the dataset's; the new
// segment gets them as a field group of its own (format/SPEC.md section
// 1.4), as if `urec add-field --default` had added them to it. `out` is a
// builder of exactly the lacking fields, in the dataset's order (its
// schema() names them; empty when nothing is lacking): set every one, by
// name, or return an error. Called once before anything is written (an
// error refuses the commit, naming the lacking fields), then once per record
// that gets the values, on the committing thread. Without defaults, new
// records that lack fields are refused naming them.
using FieldDefaults = std::function<Status(RecordBuilder& out)>;

struct WriterOptions {
  // How records are split into shards: set exactly one of num_shards and
  // target_shard_bytes (both 0 means num_shards = 1).
  //
  // num_shards = N, expected_records = 0: record k (in Write order) goes to
  //   shard k % N (round robin). Global ids are shard-major, so the record
  //   written k-th gets id  first_id(k % N) + k / N. All N shards stay open
  //   until Finish (N files, and every shard's record table in memory:
  //   entry size x records, e.g. 64 B per ImageNet record).
  // num_shards = N, expected_records = n > 0: contiguous split that keeps the
  //   Write order: shard s holds records [s*n/N, (s+1)*n/N) (integer
  //   division), so the k-th written record gets id k. Writing more than n
  //   records is an error; writing fewer leaves the last shards short.
  // target_shard_bytes = B: records fill shard 0, then shard 1, ... A new
  //   shard starts before a record when the current .urec file has reached B
  //   bytes; the shard count is known at Finish(). Ids follow Write order.
  // The two sequential modes keep one shard open at a time.
  uint32_t num_shards = 0;
  uint64_t expected_records = 0;
  uint64_t target_shard_bytes = 0;

  // Blob pages are closed when the next blob would take them past this size
  // (a larger blob gets a page of its own). Default: 1 MiB.
  uint32_t blob_page_bytes = 1 << 20;

  // Scalar pages are closed when their uncompressed columns reach this size.
  // Smaller pages make random reads of non-indexed scalars cheaper (a read
  // inflates one page: a random Get costs ~30 us at 16 KiB, docs/format.md
  // "Performance"). Default: 16 KiB.
  uint32_t scalar_page_bytes = 16 << 10;

  // zstd level for scalar pages and for compressed blobs. Default: 3.
  int zstd_level = 3;

  // Compression for every `bytes` field whose Field::compression is kNone.
  // Default: kNone (blobs stored as given, read zero-copy).
  BlobCompression default_blob_compression = BlobCompression::kNone;

  // Threads for the per-shard work of Finish() (closing shards: last pages,
  // sorted indexes, index files; writing headers; fsync), which matters with
  // many shards. Write() itself runs on the calling thread: hashing a blob
  // costs ~10 us per 100 KB, far below the cost of reading it. 0 = every
  // core this process may run on; at most 1024. The output never depends on
  // it. Default: 1.
  int threads = 1;

  // fsync files and the directory at Finish(). Tests may turn it off for
  // speed. Default: true.
  bool sync = true;

  // Add the records to dataset `name` in `out_dir` instead of replacing it:
  // Finish commits a new generation that keeps the committed shards where
  // they are (ids 0..n-1 unchanged, not a byte copied) and adds the new
  // records (ids from n on) as one more segment (format/SPEC.md 1.2), in
  // new shards cut by target_shard_bytes (one shard when 0; num_shards and
  // expected_records must stay 0). The schema and metadata must be the
  // dataset's (but for a class list, which may gain names at its end, and
  // fields added to the dataset later, which `defaults` gives the records):
  // Finish fails naming what differs and commits nothing. Readers of the
  // old generation keep reading it, and it stays a version until collected.
  // The lock is held from Create to Finish, so a second appender is refused
  // at once (FailedPrecondition naming the holder) and may retry after. No
  // dataset `name` yet: a plain write. Default: false.
  bool append = false;
  // With append: the values of the fields the dataset has and the records
  // lack (fields added to it later; see FieldDefaults). The records must
  // have the dataset's first fields, in order; the rest get these. Checked
  // at Create, when the dataset is known. Unset: records that lack fields
  // are refused at Create, naming them.
  FieldDefaults defaults;

  // false: shards whose fields are all non-indexed scalars, strings or
  // fixed-shape arrays get no record table (format/SPEC.md 8.5, format 1.2):
  // 16 bytes a record less, rows found through the page directory; readers
  // from before it refuse such files. AddFields turns it off for column
  // files. Default: true (every shard has one, as always).
  bool record_table = true;
};

class Writer;

// The values of one record, set field by field (by index or by name), then
// passed to Writer::Write. Every field must be set before each Write; a
// builder is reused across records (Clear() is implicit after Write). Setters
// fail with OutOfRange on a field index past the schema (as Dataset's
// getters), InvalidArgument on a type mismatch (e.g. SetInt64 on an int32
// field) or an array of the wrong element count, and KeyNotFound on an
// unknown field name.
class RecordBuilder {
 public:
  explicit RecordBuilder(const Schema& schema);
  ~RecordBuilder();
  RecordBuilder(RecordBuilder&&) noexcept;
  RecordBuilder& operator=(RecordBuilder&&) noexcept;

  const Schema& schema() const;

  Status SetInt32(size_t field, int32_t value);
  Status SetInt64(size_t field, int64_t value);
  Status SetFloat32(size_t field, float value);
  Status SetFloat64(size_t field, double value);
  // Copies the string.
  Status SetString(size_t field, std::string_view value);
  // Bytes by view: NOT copied; `value` must stay valid until Write returns.
  Status SetBytes(size_t field, std::string_view value);
  // Bytes by value: the builder takes the string (no copy when moved in).
  Status SetBytesOwned(size_t field, std::string value);
  // Any numeric field, of any element type: a scalar (`shape` empty), a
  // fixed-shape or a variable-shape array. `data` holds the elements of
  // `type` (the field's type), row-major, little-endian; `shape` must fit
  // the field's (same rank, equal fixed dimensions, any extent >= 0 where
  // the field has -1, at most 2^28 elements); bool elements are 0 or 1.
  // Copied. InvalidArgument naming the field and both shapes otherwise.
  Status SetValues(size_t field, FieldType type, const void* data, const std::vector<int64_t>& shape);
  // Arrays: `count` must equal the field's number of elements; copied. A
  // variable-shape field with one -1 dimension takes any count that fills
  // its fixed dimensions (e.g. 4 x boxes for {-1, 4}).
  Status SetArray(size_t field, const int32_t* values, size_t count);
  Status SetArray(size_t field, const int64_t* values, size_t count);
  Status SetArray(size_t field, const float* values, size_t count);
  Status SetArray(size_t field, const double* values, size_t count);

  // The same, by field name (one lookup per call).
  Status SetInt32(std::string_view field, int32_t value);
  Status SetInt64(std::string_view field, int64_t value);
  Status SetFloat32(std::string_view field, float value);
  Status SetFloat64(std::string_view field, double value);
  Status SetString(std::string_view field, std::string_view value);
  Status SetBytes(std::string_view field, std::string_view value);
  Status SetBytesOwned(std::string_view field, std::string value);
  Status SetValues(std::string_view field, FieldType type, const void* data, const std::vector<int64_t>& shape);
  Status SetArray(std::string_view field, const int32_t* values, size_t count);
  Status SetArray(std::string_view field, const int64_t* values, size_t count);
  Status SetArray(std::string_view field, const float* values, size_t count);
  Status SetArray(std::string_view field, const double* values, size_t count);

  // A video or audio field (format 1.3): `container` is a file's bytes
  // (mp4, mkv, webm, ogg, flac, wav, mp3, ...), demuxed into the field's
  // media value (unirecord/media.h Demux: the field's kind, its best
  // stream); the field's parameter fields ("video.width", ...) are set from
  // it. InvalidArgument naming the field and the problem (not media, no such
  // stream, unsupported codec, corrupt, absurd parameters).
  Status SetMedia(size_t field, std::string_view container);
  Status SetMedia(std::string_view field, std::string_view container);
  // The same from an already built media value (SPEC.md 6.4: Demux's
  // output, or a value read from another dataset); checked, then copied.
  Status SetMediaValue(size_t field, std::string_view media_value);
  Status SetMediaValue(std::string_view field, std::string_view media_value);

  // Marks every field unset (keeps buffers for reuse).
  void Clear();

 private:
  friend class Writer;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What Finish() produced.
struct WriterSummary {
  uint64_t records = 0;
  uint32_t shards = 0;
  uint64_t bytes = 0;                    // all shard and index files together
  std::string uuid;                      // "xxxxxxxx-xxxx-8xxx-xxxx-xxxxxxxxxxxx"
  std::vector<std::string> shard_paths;  // final .urec paths, by shard number
  std::vector<std::string> index_paths;  // final .uidx paths, by shard number
  std::vector<std::string> report_paths;  // AddReport files, in the order added
  std::string manifest_path;             // OUT/NAME.uset
  uint64_t generation = 0;               // the generation committed
  // Bytes of shard and index files this commit wrote (`bytes` counts the
  // whole dataset's): an append writes only its new segment, a merge only
  // the copies it could not link.
  uint64_t bytes_written = 0;
};

class Writer {
 public:
  // Starts a dataset called `name` in `out_dir` (created if missing, with
  // its missing parents). `name` must be non-empty, contain no '/' and not start with '.'.
  // A dataset of the same name already in `out_dir` is replaced at Finish()
  // (and kept as a version, unirecord/versions.h);
  // files of other names are left alone. FailedPrecondition when another
  // Writer (in any process) is writing the same dataset.
  static Result<std::unique_ptr<Writer>> Create(const std::string& out_dir, const std::string& name,
                                                const Schema& schema,
                                                const WriterOptions& options = {});

  // Unless Finish() ran: removes what this writer wrote, releases the lock.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // The schema as stored: the one given to Create, with
  // WriterOptions::default_blob_compression applied to bytes fields.
  // RecordBuilders may be built from either.
  const Schema& schema() const;

  // Adds or replaces one metadata entry (stored in every shard header). Must
  // be called before the first Write (FailedPrecondition afterwards: the
  // header's size is fixed when the first shard starts). For class names use
  // key kClassesMetadataKey and EncodeNameList (schema.h).
  Status SetMetadata(const std::string& key, const std::string& value);

  // Appends one record. `record` must have been built for an equal schema and
  // have every field set. Clears `record` on success (ready for the next one).
  // After an error other than InvalidArgument the writer is unusable.
  Status Write(RecordBuilder& record);

  // Records written so far.
  uint64_t records_written() const;

  // Adds a text report committed together with the dataset, by the same
  // rename: OUT/NAME.LABEL.gGGGGGG.tsv (the converter's "rejects" report).
  // `label` is lowercase letters a-z, each label once; call before Finish.
  Status AddReport(const std::string& label, std::string text);

  // Completes every shard and index, fsyncs them and commits the generation
  // (see Atomicity above), then releases the lock. After Finish (successful
  // or not) no further Write is accepted.
  Status Finish();

  // Valid after a successful Finish().
  const WriterSummary& summary() const;

 private:
  friend class PartWriter;  // staged_write.h: a part is a Writer without lock or commit
  struct Impl;
  explicit Writer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Options of MergeDatasets and of StagedWrite::Begin (staged_write.h).
struct StagedWriteOptions {
  // Threads that verify and stamp shards at Commit; 0 = every core; at most
  // 1024. Default: 1.
  int threads = 1;
  // fsync the stamped files and the directory. Default: true.
  bool sync = true;
  // An append (StagedWrite::KeepCommitted) or a merge: the values of the
  // fields the new records (the inputs that have fewer fields) lack; see
  // FieldDefaults. Any other staged write refuses defaults that set a field.
  FieldDefaults defaults;
};

// Merges datasets with the same schema and metadata (a later input's class
// list may extend the one before it: format/SPEC.md 1.2) into dataset `name`
// in `out_dir`: the inputs' records in argument order
// (ids concatenated), committed as a new generation (a dataset `name`
// already in `out_dir` is replaced, and kept as a version; it may be one of
// the inputs). No shard is rewritten: each input's segments become segments
// of the merged dataset (format/SPEC.md section 1.2), by hard link, in
// place when they are already `name`'s files, or copied byte for byte where
// the file system makes no link (another device). A mismatch is refused
// naming what differs (the schemas, or the metadata keys) and the input.
// Inputs may differ by fields added later (AddFields): an input with the
// first fields of the one with the most, in order, lacks the rest, and its
// segments get them from options.defaults as a field group of defaults;
// without defaults the merge is refused naming the fields. Inputs that lack
// fields must lack the same ones. Inputs whose fields are alike but grouped
// otherwise (added at other times, or carried by their shards) merge as
// they are: each segment keeps its groups.
Result<WriterSummary> MergeDatasets(const std::string& out_dir, const std::string& name,
                                    const std::vector<std::string>& inputs, const StagedWriteOptions& options = {});

}  // namespace unirecord

#endif  // UNIRECORD_WRITER_H_
