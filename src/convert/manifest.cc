#include "convert/manifest.h"

#include <map>
#include <set>
#include <utility>

#include "convert/json_policy.h"
#include "convert/source_path.h"

namespace unirecord::convert_internal {
namespace {

// The fields a manifest with an image adds to its records (as ConvertImageFolder's).
const char* const kImageExtras[] = {"path", "width", "height", "jpeg_layout", "source_size", "source_xxh3"};

// Appends one element of numeric `type` from JSON `v`, or says why not
// (`written`: the line's integers past 64 bits, as ParseConverterJson gives them).
std::string AppendElement(const TypeInfo& type, const Json& v, const WrittenIntegers& written,
                          std::vector<uint8_t>* out) {
  uint8_t bytes[8];
  std::string why = JsonToElement(type, v, bytes, &written);
  if (why.empty()) out->insert(out->end(), bytes, bytes + type.width);
  return why;
}

// Flattens nested arrays `v` of rank shape->size() (row-major) into `out`,
// filling the -1 extents of *shape from the first row at each depth and
// checking every row against it.
std::string AppendArray(const TypeInfo& type, const Json& v, const WrittenIntegers& written, size_t depth,
                        std::vector<int64_t>* shape, std::vector<bool>* seen, std::vector<uint8_t>* out) {
  if (depth == shape->size()) return AppendElement(type, v, written, out);
  if (!v.is_array()) return "expected an array of rank " + std::to_string(shape->size()) + ", found " + QuoteJson(v);
  const int64_t n = static_cast<int64_t>(v.size());
  if (!(*seen)[depth]) {
    (*seen)[depth] = true;
    if ((*shape)[depth] == kVariableDim) (*shape)[depth] = n;
  }
  if ((*shape)[depth] != n) {
    return "dimension " + std::to_string(depth) + " has " + std::to_string(n) + " values where " +
           std::to_string((*shape)[depth]) + " are expected";
  }
  for (const Json& item : v) {
    std::string why = AppendArray(type, item, written, depth + 1, shape, seen, out);
    if (!why.empty()) return why;
  }
  return "";
}

// The values of one sample from the object `sample`; "" or why not.
std::string ReadSample(const Json& sample, const WrittenIntegers& written, const ManifestSchema& schema,
                       ManifestLine* line) {
  if (!sample.is_object()) return "not a JSON object: " + QuoteJson(sample);
  for (auto it = sample.begin(); it != sample.end(); ++it) {
    bool known = false;
    for (const Field& f : schema.fields) known = known || f.name == it.key();
    if (!known) return "key '" + MessageText(it.key()) + "' is not a field of the schema";
  }
  line->values.resize(schema.fields.size());
  for (size_t k = 0; k < schema.fields.size(); ++k) {
    const Field& field = schema.fields[k];
    const auto it = sample.find(field.name);
    if (it == sample.end()) return "missing field '" + field.name + "'";
    ManifestLine::Value& value = line->values[k];
    const bool is_image = static_cast<int>(k) == schema.image;
    if (is_image || field.type == FieldType::kString) {
      if (!it->is_string()) return "field '" + field.name + "': " + QuoteJson(*it) + " is not a string";
      (is_image ? line->image_path : value.text) = it->get<std::string>();
      if (is_image) {
        const std::string why = CheckSourcePathText(
            line->image_path, schema.media ? "the file path" : "the image path", "the manifest's folder");
        if (!why.empty()) return "field '" + field.name + "': " + why;
      }
      continue;
    }
    const TypeInfo& type = *FindType(field.type);
    value.shape = field.shape;
    std::vector<bool> seen(field.shape.size(), false);
    std::string why = AppendArray(type, *it, written, 0, &value.shape, &seen, &value.data);
    if (!why.empty()) return "field '" + field.name + "': " + why;
    // Extents under an empty one are never seen ([] for a (-1, -1) field):
    // the array is empty, and so are they.
    for (int64_t& extent : value.shape) {
      if (extent == kVariableDim) extent = 0;
    }
  }
  return "";
}

}  // namespace

Result<ManifestSchema> ParseManifestSchema(std::string_view text, const std::string& file) {
  Json root;
  WrittenIntegers written;
  const std::string bad = ParseConverterJson(WithoutByteOrderMark(text), &root, &written);
  if (!bad.empty()) return Status::InvalidArgument("schema file " + file + ": " + bad);
  const auto fields = root.is_object() ? root.find("fields") : root.end();
  if (!root.is_object() || fields == root.end() || !fields->is_array() || fields->empty()) {
    return Status::InvalidArgument("schema file " + file + ": expected {\"fields\": [{\"name\": ..., \"type\": ...}, ...]}");
  }
  ManifestSchema out;
  std::vector<Field> record_fields;
  for (size_t k = 0; k < fields->size(); ++k) {
    const Json& f = (*fields)[k];
    const std::string where = "schema file " + file + ": fields[" + std::to_string(k) + "]";
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("type") ||
        !f["type"].is_string()) {
      return Status::InvalidArgument(where + ": needs a string 'name' and a string 'type'");
    }
    Field field;
    field.name = f["name"].get<std::string>();
    const std::string type = f["type"].get<std::string>();
    if (type == "image" || type == "video" || type == "audio") {
      if (out.image >= 0) {
        return Status::InvalidArgument(where + ": a second image, video or audio field (at most one)");
      }
      out.image = static_cast<int>(k);
      field.type = type == "image" ? FieldType::kBytes : type == "video" ? FieldType::kVideo : FieldType::kAudio;
      if (type != "image") out.media = type == "video" ? MediaKind::kVideo : MediaKind::kAudio;
    } else if (type == "string") {
      field.type = FieldType::kString;
    } else {
      const TypeInfo* info = FindType(std::string_view(type));
      if (info == nullptr || info->width == 0 || info->type == FieldType::kFloat16) {
        return Status::InvalidArgument(where + ": type '" + MessageText(type) +
                                       "' is not image, video, audio, string or a numeric type other than float16");
      }
      field.type = info->type;
    }
    if (f.contains("shape")) {
      const Json& shape = f["shape"];
      if (!shape.is_array() || type == "image" || type == "video" || type == "audio" || type == "string") {
        return Status::InvalidArgument(where + ": 'shape' must be an array of dimensions, for numeric types");
      }
      for (const Json& d : shape) {
        int64_t extent = 0;
        const std::string why = JsonToInt64(d, &extent, &written);
        if (!why.empty()) return Status::InvalidArgument(where + ": 'shape' holds " + why);
        field.shape.push_back(extent);
      }
    }
    if (f.contains("indexed")) {
      if (!f["indexed"].is_boolean()) return Status::InvalidArgument(where + ": 'indexed' must be true or false");
      field.indexed = f["indexed"].get<bool>();
    }
    out.fields.push_back(field);
  }
  record_fields = out.fields;
  if (out.media) {
    for (size_t k = 0; k < out.fields.size(); ++k) {
      const Field& f = out.fields[k];
      if (f.name == "path") {
        return Status::InvalidArgument("schema file " + file + ": field 'path' is one the " +
                                       MediaKindName(*out.media) + " field adds");
      }
      if (f.name != "start" && f.name != "end") continue;
      if (f.is_array() || f.type == FieldType::kString || f.type == FieldType::kBool) {
        return Status::InvalidArgument("schema file " + file + ": field '" + f.name +
                                       "' cuts the stream: it must be a numeric scalar (seconds)");
      }
      (f.name == "start" ? out.start : out.end) = static_cast<int>(k);
    }
    record_fields.push_back(Field::String("path"));
  } else if (out.image >= 0) {
    for (const char* extra : kImageExtras) {
      for (const Field& f : out.fields) {
        if (f.name == extra) {
          return Status::InvalidArgument("schema file " + file + ": field '" + extra +
                                         "' is one the image field adds (path, width, height, jpeg_layout, "
                                         "source_size, source_xxh3)");
        }
      }
    }
    record_fields.push_back(Field::String("path"));
    record_fields.push_back(Field::Int32("width", /*indexed=*/true));
    record_fields.push_back(Field::Int32("height", /*indexed=*/true));
    record_fields.push_back(Field::Int32("jpeg_layout"));
    record_fields.push_back(Field::Int64("source_size"));
    record_fields.push_back(Field::Int64("source_xxh3"));
  }
  Result<Schema> schema = Schema::Make(record_fields);
  if (!schema.ok()) return Status::InvalidArgument("schema file " + file + ": " + schema.status().message());
  out.schema = std::move(*schema);
  if (out.media) {  // the media field's parameter fields sit after it
    for (const Field& f : out.fields) out.record_index.push_back(static_cast<size_t>(out.schema.FieldIndex(f.name)));
  }
  return out;
}

Status SetManifestValues(const ManifestSchema& schema, const ManifestLine& line, size_t skip, RecordBuilder& record) {
  for (size_t k = skip; k < schema.fields.size(); ++k) {
    const Field& field = schema.fields[k];
    if (static_cast<int>(k) == schema.image) continue;
    const ManifestLine::Value& value = line.values[k];
    const size_t index = schema.record_index.empty() ? k - skip : schema.record_index[k];
    if (field.type == FieldType::kString) {
      UREC_RETURN_IF_ERROR(record.SetString(index, value.text));
    } else {
      UREC_RETURN_IF_ERROR(record.SetValues(index, field.type, value.data.data(), value.shape));
    }
  }
  return Status::OK();
}

std::vector<ManifestLine> ParseJsonlManifest(std::string_view text, const ManifestSchema& schema) {
  // A byte-order mark is skipped at the start of the file only: one that
  // starts another line is refused with that line (ParseConverterJson).
  text = WithoutByteOrderMark(text);
  std::vector<ManifestLine> lines;
  uint64_t number = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line_text = text.substr(start, end - start);
    ++number;
    start = end + 1;
    if (line_text.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // a blank line holds no sample
    ManifestLine line;
    line.line = number;
    Json sample;
    WrittenIntegers written;
    line.reason = ParseConverterJson(line_text, &sample, &written);
    if (line.reason.empty()) line.reason = ReadSample(sample, written, schema, &line);
    lines.push_back(std::move(line));
  }
  return lines;
}

Result<std::vector<ManifestLine>> ParseCsvManifest(std::string_view text, const ManifestSchema& schema,
                                                   const std::string& file) {
  // A UTF-8 byte-order mark (Excel writes one) is not part of the first
  // column's name; JSON Lines and COCO skip it too.
  text = WithoutByteOrderMark(text);
  // Rows of cells, each with the line it starts on.
  std::vector<std::pair<uint64_t, std::vector<std::string>>> rows;
  uint64_t line = 1;
  size_t i = 0;
  while (i < text.size()) {
    std::vector<std::string> cells(1);
    const uint64_t row_line = line;
    bool row_done = false;
    while (!row_done) {
      std::string& cell = cells.back();
      if (i < text.size() && text[i] == '"') {
        const uint64_t quote_line = line;
        ++i;
        for (;;) {
          if (i >= text.size()) {
            return Status::InvalidArgument(file + ": line " + std::to_string(quote_line) +
                                           ": a quoted cell is not closed before the end of the file");
          }
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              cell += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          cell += text[i++];
        }
      }
      while (i < text.size() && text[i] != ',' && text[i] != '\n') cell += text[i++];
      if (i < text.size() && text[i] == ',') {
        ++i;
        cells.emplace_back();  // `cell` is not used past here: this may move it
      } else {
        row_done = true;
        if (!cell.empty() && cell.back() == '\r') cell.pop_back();  // CRLF line ends
        if (i < text.size()) ++i, ++line;  // the newline
      }
    }
    if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line holds no sample
    rows.push_back({row_line, std::move(cells)});
  }
  if (rows.empty()) return Status::InvalidArgument(file + ": no header row");
  const std::vector<std::string>& header = rows[0].second;
  std::map<std::string, size_t> column;
  for (size_t c = 0; c < header.size(); ++c) {
    if (!column.emplace(header[c], c).second) {
      return Status::InvalidArgument(file + ": the header names column '" + MessageText(header[c]) + "' twice");
    }
  }
  std::set<std::string> names;
  for (const Field& f : schema.fields) {
    names.insert(f.name);
    if (!column.count(f.name)) return Status::InvalidArgument(file + ": the header has no column '" + f.name + "'");
  }
  for (const std::string& h : header) {
    if (!names.count(h)) {
      return Status::InvalidArgument(file + ": column '" + MessageText(h) + "' is not a field of the schema");
    }
  }
  std::vector<ManifestLine> lines;
  for (size_t r = 1; r < rows.size(); ++r) {
    ManifestLine out;
    out.line = rows[r].first;
    const std::vector<std::string>& cells = rows[r].second;
    if (cells.size() != header.size()) {
      out.reason = std::to_string(cells.size()) + " cells where the header has " + std::to_string(header.size());
      lines.push_back(std::move(out));
      continue;
    }
    // The row as the JSON object a JSON Lines manifest would hold.
    Json sample = Json::object();
    WrittenIntegers written;  // of every cell (a map's values keep their addresses)
    for (size_t k = 0; k < schema.fields.size() && out.reason.empty(); ++k) {
      const Field& f = schema.fields[k];
      const std::string& cell = cells[column[f.name]];
      if (static_cast<int>(k) == schema.image || f.type == FieldType::kString) {
        sample[f.name] = cell;
        continue;
      }
      WrittenIntegers in_cell;
      const std::string why = ParseConverterJson(cell, &sample[f.name], &in_cell);
      if (!why.empty()) out.reason = "field '" + f.name + "': " + why;
      written.insert(in_cell.begin(), in_cell.end());
    }
    if (out.reason.empty()) out.reason = ReadSample(sample, written, schema, &out);
    lines.push_back(std::move(out));
  }
  return lines;
}

}  // namespace unirecord::convert_internal
