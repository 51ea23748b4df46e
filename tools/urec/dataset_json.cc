#include "dataset_json.h"

#include <sys/stat.h>

#include <cstdio>
#include <vector>

namespace unirecord::cli {
namespace {

// One element as JSON, by its type's kind (schema.h's TypeInfo table).
Json ElementToJson(FieldType type, const void* element) {
  switch (FindType(type)->kind) {
    case 'f': return Json(ElementToDouble(type, element));
    case 'b': return Json(ElementToInt64(type, element) != 0);
    default: return Json(ElementToInt64(type, element));
  }
}

Json NestedArray(const ArrayView& array, size_t dim, size_t* pos) {
  Json out = Json::array();
  const size_t width = NumericWidth(array.type);
  for (int64_t i = 0; i < array.shape[dim]; ++i) {
    if (dim + 1 == array.shape.size()) {
      out.push_back(ElementToJson(array.type, static_cast<const char*>(array.data) + width * (*pos)++));
    } else {
      out.push_back(NestedArray(array, dim + 1, pos));
    }
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<Dataset>> OpenForReading(const std::string& path) {
  DatasetOptions options;
  struct stat st;
  options.allow_partial = stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  return Dataset::Open(path, options);
}

Result<Json> FieldToJson(const Record& record, size_t field) {
  const Field& f = record.schema().field(field);
  if (f.is_array()) {
    UREC_ASSIGN_OR_RETURN(ArrayView array, record.GetArray(field));
    size_t pos = 0;
    return NestedArray(array, 0, &pos);
  }
  switch (f.kind()) {
    case FieldKind::kString: {
      UREC_ASSIGN_OR_RETURN(std::string_view v, record.GetString(field));
      return Json(std::string(v));
    }
    case FieldKind::kBytes: {
      UREC_ASSIGN_OR_RETURN(std::string_view v, record.GetBytes(field));
      return Json{{"size", v.size()}};
    }
    default:
      break;
  }
  if (IsIntegral(f.type)) {
    UREC_ASSIGN_OR_RETURN(int64_t v, record.GetInt64(field));
    return f.type == FieldType::kBool ? Json(v != 0) : Json(v);
  }
  UREC_ASSIGN_OR_RETURN(double v, record.GetFloat64(field));
  return Json(v);
}

Result<Json> RecordToJson(const Record& record, const std::vector<size_t>& fields) {
  Json out{{"id", record.id()}};
  for (size_t f : fields) {
    UREC_ASSIGN_OR_RETURN(Json value, FieldToJson(record, f));
    out[record.schema().field(f).name] = std::move(value);
  }
  return out;
}

Json FieldSchemaToJson(const Field& field) {
  Json j{{"name", field.name}, {"type", FieldTypeName(field.type)}};
  if (field.is_array()) j["shape"] = field.shape;
  if (field.indexed) j["indexed"] = true;
  if (field.type == FieldType::kBytes) {
    j["compression"] = BlobCompressionName(field.compression);
  }
  return j;
}

std::string DumpJson(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace);
}

std::string DumpJsonLine(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

Status WriteStdout(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0) {
    return Status::IOError("cannot write to standard output");
  }
  return Status::OK();
}

}  // namespace unirecord::cli
