#include "dataset_json.h"

#include <sys/stat.h>

#include <cstdio>
#include <vector>

namespace unirecord::cli {
namespace {

template <typename T>
Json NestedArray(const T* data, const std::vector<int64_t>& shape, size_t dim, size_t* pos) {
  Json out = Json::array();
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (dim + 1 == shape.size()) {
      out.push_back(data[(*pos)++]);
    } else {
      out.push_back(NestedArray(data, shape, dim + 1, pos));
    }
  }
  return out;
}

Json ArrayToJson(const ArrayView& array) {
  size_t pos = 0;
  switch (array.type) {
    case FieldType::kInt32: return NestedArray(array.as<int32_t>(), *array.shape, 0, &pos);
    case FieldType::kInt64: return NestedArray(array.as<int64_t>(), *array.shape, 0, &pos);
    case FieldType::kFloat32: return NestedArray(array.as<float>(), *array.shape, 0, &pos);
    case FieldType::kFloat64: return NestedArray(array.as<double>(), *array.shape, 0, &pos);
    default: return Json::array();
  }
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
    return ArrayToJson(array);
  }
  switch (f.type) {
    case FieldType::kInt32:
    case FieldType::kInt64: {
      UREC_ASSIGN_OR_RETURN(int64_t v, record.GetInt64(field));
      return Json(v);
    }
    case FieldType::kFloat32:
    case FieldType::kFloat64: {
      UREC_ASSIGN_OR_RETURN(double v, record.GetFloat64(field));
      return Json(v);
    }
    case FieldType::kString: {
      UREC_ASSIGN_OR_RETURN(std::string_view v, record.GetString(field));
      return Json(std::string(v));
    }
    case FieldType::kBytes: {
      UREC_ASSIGN_OR_RETURN(std::string_view v, record.GetBytes(field));
      return Json{{"size", v.size()}};
    }
  }
  return Status::Internal("field '" + f.name + "' has an unknown type");
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
