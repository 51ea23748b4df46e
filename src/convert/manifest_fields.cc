// AddFieldsFromJsonl (unirecord/convert.h): a JSON Lines file of record ids
// and values, parsed as ConvertJsonl parses its manifest, added as a field
// group (unirecord/fields.h).
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convert/manifest.h"
#include "convert/source_image.h"
#include "unirecord/convert.h"
#include "unirecord/dataset.h"
#include "unirecord/fields.h"

namespace unirecord {

using convert_internal::ManifestLine;
using convert_internal::ManifestSchema;

Result<WriterSummary> AddFieldsFromJsonl(const std::string& path, const std::string& jsonl, const std::string& schema,
                                         const AddFieldsOptions& options, const std::string& defaults) {
  UREC_ASSIGN_OR_RETURN(const std::shared_ptr<Dataset> dataset, Dataset::Open(path));
  std::string schema_text, text;
  UREC_RETURN_IF_ERROR(ReadConverterInput("schema file", schema, &schema_text));
  UREC_ASSIGN_OR_RETURN(const ManifestSchema fields, convert_internal::ParseManifestSchema(schema_text, schema));
  if (fields.image >= 0) {
    return Status::InvalidArgument(schema + ": an image, video or audio field cannot be added (convert the files "
                                   "instead)");
  }
  for (const Field& f : fields.fields) {
    if (f.name == "id") return Status::InvalidArgument(schema + ": field 'id' names the record in each line");
  }
  // The lines' keys: the record id, then the fields.
  ManifestSchema with_id = fields;
  with_id.fields.insert(with_id.fields.begin(), Field::Int64("id"));
  UREC_RETURN_IF_ERROR(ReadConverterInput("field values file", jsonl, &text));
  const std::vector<ManifestLine> lines = convert_internal::ParseJsonlManifest(text, with_id);
  text.clear();
  const uint64_t records = dataset->size();
  std::vector<uint64_t> line_of(records, 0);  // index into `lines` + 1; 0: none yet
  for (size_t i = 0; i < lines.size(); ++i) {
    const ManifestLine& line = lines[i];
    const std::string where = jsonl + " line " + std::to_string(line.line) + ": ";
    if (!line.reason.empty()) return Status::InvalidArgument(where + line.reason);
    int64_t id = 0;
    std::memcpy(&id, line.values[0].data.data(), sizeof(id));  // int64, little-endian (checked by the parser)
    if (id < 0 || static_cast<uint64_t>(id) >= records) {
      return Status::InvalidArgument(where + "id " + std::to_string(id) + " is not a record of " + path + " (" +
                                     std::to_string(records) + " records)");
    }
    if (line_of[static_cast<size_t>(id)] != 0) {
      return Status::InvalidArgument(where + "id " + std::to_string(id) + " repeats line " +
                                     std::to_string(lines[line_of[static_cast<size_t>(id)] - 1].line));
    }
    line_of[static_cast<size_t>(id)] = i + 1;
  }
  // A segment has a line for every record, or (getting the defaults) none.
  AddFieldsOptions add = options;
  add.segments.clear();
  const std::vector<SegmentInfo>& segments = dataset->segments();
  for (size_t k = 0; k < segments.size(); ++k) {
    const SegmentInfo& segment = segments[k];
    uint64_t lined = 0;
    for (uint64_t id = segment.first_id; id < segment.first_id + segment.records; ++id) lined += line_of[id] != 0;
    if (lined == segment.records) {
      add.segments.push_back(static_cast<uint32_t>(k));
      continue;
    }
    for (uint64_t id = segment.first_id; lined > 0 && id < segment.first_id + segment.records; ++id) {
      if (line_of[id] == 0) {
        return Status::InvalidArgument(jsonl + ": no line for id " + std::to_string(id) + " (every record of " +
                                       path + " needs one, or every record of a segment none; it has " +
                                       std::to_string(records) + ")");
      }
    }
  }
  // (AddFieldsOptions::segments empty means every segment.)
  if (add.segments.empty()) return Status::InvalidArgument(jsonl + ": no line for any record of " + path);
  if (add.segments.size() == segments.size()) add.segments.clear();
  const FieldDefaults default_values = defaults.empty() ? nullptr : JsonFieldDefaults(defaults);
  if (default_values) {
    RecordBuilder check(fields.schema);
    const Status fits = default_values(check);
    if (!fits.ok()) return Status::InvalidArgument("defaults " + MessageText(defaults) + ": " + fits.message());
    add.defaults = [&](const Dataset&, uint64_t, RecordBuilder& out) { return default_values(out); };
  }
  return AddFields(path, fields.schema, [&](const Dataset& d, uint64_t id, RecordBuilder& out) -> Status {
    if (d.size() != records) {
      return Status::FailedPrecondition(path + ": another writer changed the dataset meanwhile; try again");
    }
    return convert_internal::SetManifestValues(with_id, lines[line_of[id] - 1], 1, out);
  }, add);
}

FieldDefaults JsonFieldDefaults(std::string object) {
  // Parsed once for the fields asked for (a check, then every record, ask
  // for the same ones).
  struct Parsed {
    ManifestSchema fields;
    ManifestLine line;
  };
  auto parsed = std::make_shared<std::optional<Parsed>>();
  return [object = std::move(object), parsed](RecordBuilder& out) -> Status {
    if (!*parsed || (*parsed)->fields.schema != out.schema()) {
      Parsed p;
      p.fields.fields = out.schema().fields();
      p.fields.schema = out.schema();
      for (const Field& f : p.fields.fields) {
        if (f.type == FieldType::kBytes || f.type == FieldType::kFloat16) {
          return Status::InvalidArgument("field '" + f.name + "' is " + FieldTypeName(f.type) +
                                         ", whose values JSON does not give (give them from Python or C++)");
        }
      }
      std::vector<ManifestLine> lines = convert_internal::ParseJsonlManifest(object, p.fields);
      if (lines.size() != 1 || !lines[0].reason.empty()) {
        return Status::InvalidArgument(lines.size() == 1 ? lines[0].reason : "not one JSON object: " + MessageText(object));
      }
      p.line = std::move(lines[0]);
      *parsed = std::move(p);
    }
    return convert_internal::SetManifestValues((*parsed)->fields, (*parsed)->line, 0, out);
  };
}

}  // namespace unirecord
