// Fields added, replaced and dropped without rewriting a dataset
// (format/SPEC.md section 1.4). A field added later is written into column
// files beside the shards, one row per record, and committed as a new
// version (unirecord/versions.h): the shards are not touched, so adding a
// 4-byte field writes about 4 bytes per record.
//
//   UREC_ASSIGN_OR_RETURN(Schema fields, Schema::Make({Field::Float32("score", /*indexed=*/true)}));
//   UREC_ASSIGN_OR_RETURN(WriterSummary added, AddFields("out/train", fields,
//       [&](const Dataset&, uint64_t id, RecordBuilder& out) { return out.SetFloat32(0, scores[id]); }));
//   UREC_RETURN_IF_ERROR(DropFields("out/train", {"old_label"}).status());
//
// A field named as one the dataset has replaces it from the new version on
// (it keeps its place in the schema); a dropped field is hidden from the new
// version on, and the bytes only it used go when `urec gc` drops the versions
// that show it (fields of the shards themselves stay in the shards). Every
// segment gets the added fields (from `values`, or from
// AddFieldsOptions::defaults for segments its `segments` leaves out), and
// later appends must carry them. AddFields computes the values on the
// calling thread; BeginAddFields and AddFieldsPart spread an add over tasks
// in any processes (unirecord.add_fields with processes= or client=), with
// the same bytes.
//
// `path` everywhere: a folder holding one dataset with a manifest, DIR/NAME
// or DIR/NAME.uset. Both take the dataset's writers' lock
// (FailedPrecondition while another writer holds it) and are kill-safe as
// every commit: the dataset opens as before or as after.
#ifndef UNIRECORD_FIELDS_H_
#define UNIRECORD_FIELDS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/schema.h"
#include "unirecord/staged_write.h"
#include "unirecord/status.h"
#include "unirecord/writer.h"

namespace unirecord {

// Sets the new fields of record `id` of `dataset` (the version being added
// to) in `out`, a builder of the new fields' schema. Called once per record
// (of AddFieldsOptions::segments; of the part, in AddFieldsPart) in id
// order, on the calling thread. An error stops the add, which then
// commits nothing.
using FieldValues = std::function<Status(const Dataset& dataset, uint64_t id, RecordBuilder& out)>;

// The new fields' values as arrays, the fast way to add numbers:
// `columns[k]` holds field k's values of records first_id, first_id + 1,
// ..., first_id + records - 1 back to back, little-endian (the bytes of a
// C-contiguous array of shape (records, *shape)); every field numeric, of
// fixed shape. The records an add sets must lie in that range. Fields
// stored in scalar pages (not indexed) are written column by column
// (PartWriter::WriteColumns) at a fraction of a FieldValues' cost; the
// bytes equal those of a FieldValues that sets the same values.
struct FieldColumns {
  uint64_t first_id = 0;
  uint64_t records = 0;
  std::vector<std::string_view> columns;
};

struct AddFieldsOptions {
  // Page sizes and compression of the column files; their sharding
  // (num_shards, expected_records, target_shard_bytes) is the dataset's and
  // must stay unset. record_table is false here: column files of fields
  // that allow it have none (format/SPEC.md 8.5).
  WriterOptions writer = [] {
    WriterOptions w;
    w.record_table = false;
    return w;
  }();
  // Threads that verify and stamp the column files, fsync.
  StagedWriteOptions commit;
  // Scalar pages of the column files hold about as many rows as the
  // shards' do (at most writer.scalar_page_bytes): a record read at random
  // inflates one page of each file, so a narrow field in pages of
  // thousands of rows would cost more than the shard's page. false:
  // writer.scalar_page_bytes as given.
  bool match_shard_pages = true;
  // The segments (indexes into Dataset::segments()) whose records `values`
  // sets; empty: every segment. The records of the others (new data, say)
  // get `defaults`; without it an add that leaves a segment out is refused
  // (InvalidArgument naming the segments left without values).
  std::vector<uint32_t> segments;
  FieldValues defaults;
  // Non-empty: the add is refused (FailedPrecondition) unless the dataset
  // it adds to has this UUID (Dataset::uuid()), the one the values were
  // computed from; another writer's commit in between changes it.
  std::string dataset_uuid;
};

// Adds `fields` to the dataset at `path`. InvalidArgument for a schema
// without fields or writer options that shard; errors of `values` are
// returned naming the record.
Result<WriterSummary> AddFields(const std::string& path, const Schema& fields, const FieldValues& values,
                                const AddFieldsOptions& options = {});
Result<WriterSummary> AddFields(const std::string& path, const Schema& fields, const FieldColumns& values,
                                const AddFieldsOptions& options = {});

// A part of an add spread over processes (a Dask job): the driver holds a
// StagedWrite with AddFieldGroup() and gives every task its token and a run
// of whole shards of one segment, [first_shard, end_shard) of the dataset's
// shards (the parts, in order, cover every shard once).
struct FieldPart {
  std::string token;
  uint32_t part = 0;
  uint32_t num_parts = 0;
  uint64_t version = 0;  // the dataset's version the driver holds the lock of
  uint32_t first_shard = 0;
  uint32_t end_shard = 0;
};

// The driver's side: a StagedWrite of `num_parts` parts on the dataset at
// `path`, with AddFieldGroup() called; its lock is taken now, so the
// version committed once it returns is the one the parts add to.
Result<std::unique_ptr<StagedWrite>> BeginAddFields(const std::string& path, uint32_t num_parts,
                                                    const StagedWriteOptions& options = {});

// Writes part `part` of an add (any process that sees `path`): the fields of
// the records of its shards from `values`, as AddFields writes them, so the
// committed column files equal those of AddFields with the same values.
// Returns the staged part's summary (PartWriter::summary); errors as
// AddFields'.
Result<WriterSummary> AddFieldsPart(const std::string& path, const Schema& fields, const FieldValues& values,
                                    const FieldPart& part, const AddFieldsOptions& options = {});
Result<WriterSummary> AddFieldsPart(const std::string& path, const Schema& fields, const FieldColumns& values,
                                    const FieldPart& part, const AddFieldsOptions& options = {});

// Hides `names` from the next version. KeyNotFound for a name the dataset
// does not have; InvalidArgument when no field would be left.
Result<WriterSummary> DropFields(const std::string& path, const std::vector<std::string>& names,
                                 const StagedWriteOptions& options = {});

}  // namespace unirecord

#endif  // UNIRECORD_FIELDS_H_
