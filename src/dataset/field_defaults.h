// Fields a dataset has and new records lack (fields added after its shards
// were written): an append (StagedWrite::KeepCommitted, Writer's append) or
// a merge gives them their defaults (StagedWriteOptions::defaults) as a field
// group of the new segment, written here beside its shards (format/SPEC.md
// section 1.4), the way AddFields writes one.
#ifndef UNIRECORD_DATASET_FIELD_DEFAULTS_H_
#define UNIRECORD_DATASET_FIELD_DEFAULTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/manifest.h"
#include "unirecord/schema.h"
#include "unirecord/status.h"
#include "unirecord/writer.h"

namespace unirecord::dataset {

// The fields of `dataset` that `records` lacks: those after the fields
// `records` has, which must be `dataset`'s first ones, equal and in order (a
// field group's names follow the shards' fields, SPEC.md 1.4); an empty
// schema when `records` equals `dataset`. nullopt when `records` is not such
// a start of `dataset` (another type, order or field).
std::optional<Schema> LackingFields(const Schema& records, const Schema& dataset);

// InvalidArgument unless `defaults` sets exactly the fields of `lacking`:
// without defaults for a non-empty `lacking`, naming the fields and the way
// through (urec's --default, Python's default=); otherwise the error of
// `defaults`, called once with a builder of `lacking`. `where` starts the
// message ("append to DIR/NAME"), `whose` names the records that lack the
// fields ("the new records"), `owner` the dataset that has them.
Status CheckDefaults(const std::string& where, const std::string& whose, const std::string& owner,
                     const Schema& lacking, const FieldDefaults& defaults);

// Where a field group of defaults goes: beside the shards of the segment of
// generation `segment_generation` of dataset `name` in `dir` (shard j holds
// records[j] records, all of them scalar_pages scalar pages), as group
// `group_generation`, staged as part `part` of `num_parts` of the staged write
// `token` (under way: the lock names it) before its files get their names.
struct DefaultGroup {
  std::string dir;
  std::string name;
  std::string token;
  uint32_t part = 0;
  uint32_t num_parts = 1;
  uint64_t segment_generation = 0;
  uint64_t group_generation = 0;
  std::vector<uint64_t> records;
  uint64_t scalar_pages = 0;
  bool sync = true;
};

// Writes the column files of `lacking` holding `defaults` (called for each
// record) for `where`, names them and checks each as a reader does; adds
// their bytes to `*bytes_written`. Returns the group as the manifest names
// it (its UUID derived from its content, as AddFields' groups).
Result<format::FieldGroup> WriteDefaultGroup(const DefaultGroup& where, const Schema& lacking,
                                             const FieldDefaults& defaults, uint64_t* bytes_written);

// WriterOptions::scalar_page_bytes for column files of `fields` beside shards
// holding `records` records in `pages` scalar pages: the shards' mean rows
// per scalar page times the new fields' bytes a row, within
// [512, `configured`] (AddFieldsOptions::match_shard_pages).
uint32_t MatchedPageBytes(uint64_t records, uint64_t pages, const Schema& fields, uint32_t configured);

}  // namespace unirecord::dataset

#endif  // UNIRECORD_DATASET_FIELD_DEFAULTS_H_
