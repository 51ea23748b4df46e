// AddFields, AddFieldsPart, DropFields (unirecord/fields.h; format/SPEC.md
// section 1.4): a field group written through a StagedWrite (all its parts
// in this process, or one part in a task), or a new manifest that hides
// fields.
#include "unirecord/fields.h"

#include <algorithm>
#include <optional>

#include "dataset/commit.h"
#include "dataset/field_defaults.h"
#include "format/array_values.h"
#include "format/record_values.h"
#include "format/file_names.h"
#include "format/header_codec.h"
#include "io/file.h"
#include "shard/shard_reader.h"
#include "unirecord/staged_write.h"

namespace unirecord {
namespace {

// The committed dataset of `d`, opened under its lock.
Result<std::shared_ptr<Dataset>> OpenCommitted(const dataset::DatasetPath& d) {
  return Dataset::Open(io::JoinPath(d.dir, d.name));
}

// MatchedPageBytes for column files of `fields` beside all of `dataset`'s shards.
uint32_t MatchedPageBytes(const Dataset& dataset, const Schema& fields, uint32_t configured) {
  uint64_t records = 0, pages = 0;
  for (const ShardInfo& shard : dataset.shards()) {
    records += shard.records;
    pages += shard.scalar_pages;
  }
  return dataset::MatchedPageBytes(records, pages, fields, configured);
}

// InvalidArgument for options AddFields refuses.
Status CheckAddOptions(const std::string& path, const Schema& fields, const AddFieldsOptions& options) {
  if (fields.num_fields() == 0) return Status::InvalidArgument("add fields to " + path + ": no fields given");
  const WriterOptions& w = options.writer;
  if (w.num_shards != 0 || w.expected_records != 0 || w.target_shard_bytes != 0) {
    return Status::InvalidArgument("add fields to " + path + ": the column files are cut as the shards; "
                                   "leave num_shards, expected_records and target_shard_bytes unset");
  }
  return Status::OK();
}

// InvalidArgument for options.segments out of range, or leaving segments
// without values and no defaults.
Status CheckSegments(const std::string& path, const Dataset& dataset, const AddFieldsOptions& options) {
  const size_t count = dataset.segments().size();
  std::vector<bool> given(count, options.segments.empty());
  for (uint32_t k : options.segments) {
    if (k >= count) {
      return Status::InvalidArgument("add fields to " + path + ": segment " + std::to_string(k) +
                                     " does not exist (the dataset has " + std::to_string(count) + ")");
    }
    given[k] = true;
  }
  std::string lacking;
  for (size_t k = 0; k < count; ++k) {
    if (!given[k]) lacking += (lacking.empty() ? "" : ", ") + std::to_string(k);
  }
  if (lacking.empty() || options.defaults) return Status::OK();
  return Status::InvalidArgument("add fields to " + path + ": segments " + lacking +
                                 " get no values; every segment must get the fields: give values for them, "
                                 "or a default");
}

// The first of records [first, first + count) that `columns` lacks.
std::optional<uint64_t> MissingRecord(const FieldColumns& columns, uint64_t first, uint64_t count) {
  const uint64_t end = columns.first_id + columns.records;
  if (first >= columns.first_id && first + count <= end) return std::nullopt;
  return first < columns.first_id ? first : end;
}

Status NoValues(const FieldColumns& columns) {
  return Status::InvalidArgument("the arrays hold the values of records " + std::to_string(columns.first_id) +
                                 " to " + std::to_string(columns.first_id + columns.records) + " (excluded)");
}

// InvalidArgument unless `columns` fits `fields`: one array per field, each
// numeric of fixed shape, `records` rows long, bools 0 or 1.
Status CheckColumns(const Schema& fields, const FieldColumns& columns) {
  if (columns.columns.size() != fields.num_fields()) {
    return Status::InvalidArgument("add fields: " + std::to_string(columns.columns.size()) + " arrays for " +
                                   std::to_string(fields.num_fields()) + " fields");
  }
  for (size_t k = 0; k < fields.num_fields(); ++k) {
    const Field& f = fields.field(k);
    if (!IsNumeric(f.type) || f.has_variable_shape()) {
      return Status::InvalidArgument("add fields: field '" + f.name + "' is " + FieldTypeName(f.type) +
                                     (f.has_variable_shape() ? " of variable shape" : "") +
                                     "; arrays hold numbers of fixed shape only");
    }
    const std::string_view column = columns.columns[k];
    const uint64_t width = format::FixedValueBytes(f);
    if (width == 0 ? !column.empty() : column.size() % width != 0 || column.size() / width != columns.records) {
      return Status::InvalidArgument("add fields: the array of field '" + f.name + "' holds " +
                                     std::to_string(column.size()) + " bytes, not " +
                                     std::to_string(columns.records) + " records of " + std::to_string(width));
    }
    const size_t bad = f.type == FieldType::kBool ? format::FirstBadBoolByte(column) : column.size();
    if (bad != column.size()) {
      return Status::InvalidArgument("add fields: record " + std::to_string(columns.first_id + bad / width) +
                                     ": bool field '" + f.name + "' holds a byte other than 0 or 1");
    }
  }
  return Status::OK();
}

// FieldValues reading `columns` (checked by CheckColumns), for the records
// an add does not write column by column.
FieldValues RowsOf(const Schema& fields, const FieldColumns& columns) {
  return [&fields, &columns](const Dataset&, uint64_t id, RecordBuilder& out) -> Status {
    if (MissingRecord(columns, id, 1)) return NoValues(columns);
    const uint64_t row = id - columns.first_id;
    for (size_t k = 0; k < fields.num_fields(); ++k) {
      const Field& f = fields.field(k);
      const uint64_t width = format::FixedValueBytes(f);
      UREC_RETURN_IF_ERROR(out.SetValues(k, f.type, columns.columns[k].data() + row * width, f.shape));
    }
    return Status::OK();
  };
}

// FailedPrecondition when options.dataset_uuid names another version than
// `dataset`.
Status CheckUuid(const std::string& path, const Dataset& dataset, const AddFieldsOptions& options) {
  if (options.dataset_uuid.empty() || dataset.uuid() == options.dataset_uuid) return Status::OK();
  return Status::FailedPrecondition(path + ": another writer committed while the values were made for the "
                                    "version before; add the fields again");
}

// Stages `part` of the add to `dataset` (dataset `d`), whose shards and
// segments the caller checked. `columns`, when given, holds what `values`
// reads: the part is then written column by column where its fields allow.
Result<WriterSummary> WritePart(const dataset::DatasetPath& d, const Dataset& dataset, const Schema& fields,
                                const FieldValues& values, const FieldColumns* columns, const FieldPart& part,
                                const AddFieldsOptions& options) {
  WriterOptions part_options = options.writer;
  if (options.match_shard_pages) {
    part_options.scalar_page_bytes = MatchedPageBytes(dataset, fields, options.writer.scalar_page_bytes);
  }
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<PartWriter> writer,
                        PartWriter::Create(d.dir, d.name, part.token, part.part, part.num_parts, fields, part_options));
  // The part's segment: its values, or the defaults.
  size_t segment = 0;
  while (segment + 1 < dataset.segments().size() && dataset.segments()[segment + 1].first_shard <= part.first_shard) {
    ++segment;
  }
  const bool given = options.segments.empty() || std::find(options.segments.begin(), options.segments.end(),
                                                           segment) != options.segments.end();
  const FieldValues& fill = given ? values : options.defaults;
  const bool by_column = given && columns != nullptr &&
                         std::all_of(fields.fields().begin(), fields.fields().end(),
                                     [](const Field& f) { return f.storage() == StorageClass::kColumn; });
  RecordBuilder builder(fields);
  std::vector<std::string_view> rows(fields.num_fields());
  for (uint32_t j = part.first_shard; j < part.end_shard; ++j) {
    if (j > part.first_shard) UREC_RETURN_IF_ERROR(writer->NextShard());
    const ShardInfo& shard = dataset.shards()[j];
    if (by_column) {
      if (const std::optional<uint64_t> missing = MissingRecord(*columns, shard.first_id, shard.records)) {
        return Status::InvalidArgument("add fields: record " + std::to_string(*missing) + ": " +
                                       NoValues(*columns).message());
      }
      for (size_t k = 0; k < rows.size(); ++k) {
        const Field& f = fields.field(k);
        const uint64_t width = format::FixedValueBytes(f);
        rows[k] = columns->columns[k].substr((shard.first_id - columns->first_id) * width, shard.records * width);
      }
      UREC_RETURN_IF_ERROR(writer->WriteColumns(rows, shard.records));
      continue;
    }
    for (uint64_t id = shard.first_id; id < shard.first_id + shard.records; ++id) {
      builder.Clear();
      Status set = fill(dataset, id, builder);
      if (!set.ok()) return Status(set.code(), "add fields: record " + std::to_string(id) + ": " + set.message());
      UREC_RETURN_IF_ERROR(writer->Write(builder));
    }
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return writer->summary();
}

// AddFields of `values`, or of `columns` when given (`values` reads them).
Result<WriterSummary> AddAll(const std::string& path, const Schema& fields, const FieldValues& values,
                             const FieldColumns* columns, const AddFieldsOptions& options) {
  UREC_RETURN_IF_ERROR(CheckAddOptions(path, fields, options));
  UREC_ASSIGN_OR_RETURN(const dataset::DatasetPath d,
                        dataset::ResolveDatasetPath(path, "fields are added only to those"));
  // One part per segment; the count is read again under the lock (Commit
  // checks the parts against the dataset it commits to as well).
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, OpenCommitted(d));
  const auto parts = static_cast<uint32_t>(dataset->segments().size());
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<StagedWrite> staged, BeginAddFields(path, parts, options.commit));
  UREC_ASSIGN_OR_RETURN(dataset, OpenCommitted(d));
  if (dataset->segments().size() != parts) {
    return Status::FailedPrecondition("add fields to " + path + ": another writer committed meanwhile; try again");
  }
  UREC_RETURN_IF_ERROR(CheckSegments(path, *dataset, options));
  UREC_RETURN_IF_ERROR(CheckUuid(path, *dataset, options));
  for (uint32_t k = 0; k < parts; ++k) {
    const SegmentInfo& segment = dataset->segments()[k];
    const FieldPart part{staged->token(), k, parts, dataset->version(), segment.first_shard,
                         segment.first_shard + segment.shards};
    UREC_RETURN_IF_ERROR(WritePart(d, *dataset, fields, values, columns, part, options).status());
  }
  UREC_RETURN_IF_ERROR(staged->Commit());
  return staged->summary();
}

// AddFieldsPart of `values`, or of `columns` when given (`values` reads them).
Result<WriterSummary> AddPart(const std::string& path, const Schema& fields, const FieldValues& values,
                              const FieldColumns* columns, const FieldPart& part, const AddFieldsOptions& options) {
  UREC_RETURN_IF_ERROR(CheckAddOptions(path, fields, options));
  UREC_ASSIGN_OR_RETURN(const dataset::DatasetPath d,
                        dataset::ResolveDatasetPath(path, "fields are added only to those"));
  DatasetOptions at;
  at.version = part.version;
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, Dataset::Open(io::JoinPath(d.dir, d.name), at));
  const std::string where = "add fields to " + path + ": part " + std::to_string(part.part) + ": ";
  const size_t shards = dataset->shards().size();
  if (part.first_shard >= part.end_shard || part.end_shard > shards) {
    return Status::InvalidArgument(where + "shards [" + std::to_string(part.first_shard) + ", " +
                                   std::to_string(part.end_shard) + ") are not a run of the dataset's " +
                                   std::to_string(shards));
  }
  for (const SegmentInfo& segment : dataset->segments()) {
    if (segment.first_shard > part.first_shard && segment.first_shard < part.end_shard) {
      return Status::InvalidArgument(where + "shards [" + std::to_string(part.first_shard) + ", " +
                                     std::to_string(part.end_shard) + ") span two segments (a part holds shards "
                                     "of one)");
    }
  }
  UREC_RETURN_IF_ERROR(CheckSegments(path, *dataset, options));
  UREC_RETURN_IF_ERROR(CheckUuid(path, *dataset, options));
  return WritePart(d, *dataset, fields, values, columns, part, options);
}

}  // namespace

Result<WriterSummary> AddFields(const std::string& path, const Schema& fields, const FieldValues& values,
                                const AddFieldsOptions& options) {
  return AddAll(path, fields, values, nullptr, options);
}

Result<WriterSummary> AddFields(const std::string& path, const Schema& fields, const FieldColumns& values,
                                const AddFieldsOptions& options) {
  UREC_RETURN_IF_ERROR(CheckColumns(fields, values));
  return AddAll(path, fields, RowsOf(fields, values), &values, options);
}

Result<WriterSummary> AddFieldsPart(const std::string& path, const Schema& fields, const FieldValues& values,
                                    const FieldPart& part, const AddFieldsOptions& options) {
  return AddPart(path, fields, values, nullptr, part, options);
}

Result<WriterSummary> AddFieldsPart(const std::string& path, const Schema& fields, const FieldColumns& values,
                                    const FieldPart& part, const AddFieldsOptions& options) {
  UREC_RETURN_IF_ERROR(CheckColumns(fields, values));
  return AddPart(path, fields, RowsOf(fields, values), &values, part, options);
}

Result<std::unique_ptr<StagedWrite>> BeginAddFields(const std::string& path, uint32_t num_parts,
                                                    const StagedWriteOptions& options) {
  UREC_ASSIGN_OR_RETURN(const dataset::DatasetPath d,
                        dataset::ResolveDatasetPath(path, "fields are added only to those"));
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<StagedWrite> staged, StagedWrite::Begin(d.dir, d.name, num_parts, options));
  UREC_RETURN_IF_ERROR(staged->AddFieldGroup());
  return staged;
}

Result<WriterSummary> DropFields(const std::string& path, const std::vector<std::string>& names,
                                 const StagedWriteOptions& options) {
  UREC_ASSIGN_OR_RETURN(const dataset::DatasetPath d,
                        dataset::ResolveDatasetPath(path, "fields are dropped only from those"));
  UREC_ASSIGN_OR_RETURN(dataset::DatasetLock locked, dataset::LockDataset(d.dir, d.name, "drop fields"));
  WriterSummary summary;
  Status status = [&]() -> Status {
    UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, OpenCommitted(d));
    for (const std::string& name : names) UREC_RETURN_IF_ERROR(dataset->schema().FindField(name).status());
    size_t left = 0;
    for (const Field& f : dataset->schema().fields()) {
      left += std::find(names.begin(), names.end(), f.name) == names.end() ? 1 : 0;
    }
    if (left == 0) return Status::InvalidArgument("drop fields of " + path + ": no field would be left");
    // Each name leaves the groups that supply it and is hidden in the
    // shards (a name the shards lack hides nothing there).
    std::vector<format::Segment> segments;
    for (const SegmentInfo& segment : dataset->segments()) {
      format::Segment named = dataset::AsSegment(segment, segment.generation, segment.first_id);
      std::vector<format::FieldGroup> groups;
      for (format::FieldGroup& group : named.groups) {
        group.fields.erase(std::remove_if(group.fields.begin(), group.fields.end(),
                                          [&](const std::string& f) {
                                            return std::find(names.begin(), names.end(), f) != names.end();
                                          }),
                           group.fields.end());
        if (!group.fields.empty()) groups.push_back(std::move(group));
      }
      named.groups = std::move(groups);
      for (const std::string& name : names) {
        if (std::find(named.dropped.begin(), named.dropped.end(), name) == named.dropped.end()) {
          named.dropped.push_back(name);
        }
      }
      segments.push_back(std::move(named));
    }
    dataset::PendingGeneration pending;
    pending.generation = locked.generation;
    pending.segments = std::move(segments);
    pending.sync = options.sync;
    UREC_RETURN_IF_ERROR(dataset::CommitGeneration(d.dir, d.name, pending, &summary));
    summary.records = dataset->size();
    return Status::OK();
  }();
  dataset::ReleaseDataset(d.dir, d.name, &locked.lock);
  if (!status.ok()) return status;
  return summary;
}

}  // namespace unirecord

namespace unirecord::dataset {

uint32_t MatchedPageBytes(uint64_t records, uint64_t pages, const Schema& fields, uint32_t configured) {
  constexpr uint64_t kMinColumnPageBytes = 512;
  uint64_t row_bytes = 0;
  for (const Field& f : fields.fields()) {
    if (f.storage() != StorageClass::kColumn) continue;
    // A string's bytes are unknown ahead: counted as 16.
    row_bytes += f.type == FieldType::kString ? 16 : format::FixedValueBytes(f);
  }
  if (pages == 0 || row_bytes == 0) return configured;
  const uint64_t matched = records / pages * row_bytes;
  return static_cast<uint32_t>(std::min<uint64_t>(configured, std::max(kMinColumnPageBytes, matched)));
}

std::optional<Schema> LackingFields(const Schema& records, const Schema& dataset) {
  const std::vector<Field>& have = records.fields();
  const std::vector<Field>& all = dataset.fields();
  if (have.size() > all.size() || !std::equal(have.begin(), have.end(), all.begin())) return std::nullopt;
  if (have.size() == all.size()) return Schema();
  Result<Schema> lacking = Schema::Make(std::vector<Field>(all.begin() + have.size(), all.end()));
  if (!lacking.ok()) return std::nullopt;  // (a dataset's fields always make a schema)
  return *lacking;
}

Status CheckDefaults(const std::string& where, const std::string& whose, const std::string& owner,
                     const Schema& lacking, const FieldDefaults& defaults) {
  const std::string named = lacking.num_fields() == 0 ? std::string("no field") : "the fields " + lacking.FieldNames();
  if (!defaults) {
    if (lacking.num_fields() == 0) return Status::OK();
    return Status::InvalidArgument(where + ": " + whose + " lack " + named + " (" + lacking.ToString() +
                                   "), added to " + owner + " after its shards were written; give them a default "
                                   "(urec: --default FIELD=VALUE; Python: default={FIELD: VALUE}; C++: the "
                                   "options' defaults), or drop the fields first");
  }
  RecordBuilder check(lacking);
  const Status set = defaults(check);
  if (set.ok()) return Status::OK();
  return Status::InvalidArgument(where + ": the defaults: " + set.message() + " (" + whose + " lack " + named + ")");
}

Result<format::FieldGroup> WriteDefaultGroup(const DefaultGroup& where, const Schema& lacking,
                                             const FieldDefaults& defaults, uint64_t* bytes_written) {
  uint64_t records = 0;
  for (uint64_t n : where.records) records += n;
  WriterOptions options = AddFieldsOptions().writer;  // as AddFields writes column files
  options.sync = where.sync;
  options.scalar_page_bytes = MatchedPageBytes(records, where.scalar_pages, lacking, options.scalar_page_bytes);
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<PartWriter> writer, PartWriter::Create(where.dir, where.name, where.token,
                                                                               where.part, where.num_parts, lacking,
                                                                               options));
  RecordBuilder row(lacking);
  for (size_t j = 0; j < where.records.size(); ++j) {
    if (j > 0) UREC_RETURN_IF_ERROR(writer->NextShard());
    for (uint64_t r = 0; r < where.records[j]; ++r) {
      Status set = defaults(row);
      if (!set.ok()) return Status::InvalidArgument("the defaults: " + set.message());
      set = writer->Write(row);  // (InvalidArgument for a field the defaults left unset)
      if (!set.ok()) return Status(set.code(), "the defaults: " + set.message());
    }
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  const WriterSummary& staged = writer->summary();
  const auto count = static_cast<uint32_t>(where.records.size());
  format::FieldGroup group{where.group_generation, "", {}};
  for (const Field& f : lacking.fields()) group.fields.push_back(f.name);
  for (uint32_t j = 0; j < count; ++j) {
    const std::string path = io::JoinPath(
        where.dir, format::ColumnFileName(where.name, where.segment_generation, where.group_generation, j, count));
    UREC_RETURN_IF_ERROR(io::RenameFile(staged.index_paths[j], format::IndexPathFor(path)));
    UREC_RETURN_IF_ERROR(io::RenameFile(staged.shard_paths[j], path));
    UREC_ASSIGN_OR_RETURN(std::unique_ptr<shard::ShardReader> file, shard::ShardReader::Open(path, true));
    if (j == 0) group.uuid = format::UuidToString(file->header().values.uuid);
  }
  *bytes_written += staged.bytes;
  return group;
}

}  // namespace unirecord::dataset
