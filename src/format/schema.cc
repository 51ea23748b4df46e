#include "unirecord/schema.h"

#include <unordered_set>

#include "format/format_constants.h"

namespace unirecord {

const char* FieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::kInt32: return "int32";
    case FieldType::kInt64: return "int64";
    case FieldType::kFloat32: return "float32";
    case FieldType::kFloat64: return "float64";
    case FieldType::kString: return "string";
    case FieldType::kBytes: return "bytes";
  }
  return "unknown";
}

Result<FieldType> ParseFieldType(std::string_view name) {
  for (FieldType t : {FieldType::kInt32, FieldType::kInt64, FieldType::kFloat32, FieldType::kFloat64,
                      FieldType::kString, FieldType::kBytes}) {
    if (name == FieldTypeName(t)) return t;
  }
  return Status::InvalidArgument("unknown field type '" + std::string(name) +
                                 "' (expected one of 'int32', 'int64', 'float32', 'float64', 'string', 'bytes')");
}

const char* BlobCompressionName(BlobCompression compression) {
  return compression == BlobCompression::kZstd ? "zstd" : "none";
}

Result<BlobCompression> ParseBlobCompression(std::string_view name) {
  if (name == "none") return BlobCompression::kNone;
  if (name == "zstd") return BlobCompression::kZstd;
  return Status::InvalidArgument("unknown compression '" + std::string(name) + "' (expected 'none' or 'zstd')");
}

bool IsNumeric(FieldType type) { return NumericWidth(type) != 0; }

size_t NumericWidth(FieldType type) {
  switch (type) {
    case FieldType::kInt32:
    case FieldType::kFloat32: return 4;
    case FieldType::kInt64:
    case FieldType::kFloat64: return 8;
    default: return 0;
  }
}

Field Field::Int32(std::string name, bool indexed) {
  return Field{std::move(name), FieldType::kInt32, {}, indexed, BlobCompression::kNone};
}
Field Field::Int64(std::string name, bool indexed) {
  return Field{std::move(name), FieldType::kInt64, {}, indexed, BlobCompression::kNone};
}
Field Field::Float32(std::string name, bool indexed) {
  return Field{std::move(name), FieldType::kFloat32, {}, indexed, BlobCompression::kNone};
}
Field Field::Float64(std::string name, bool indexed) {
  return Field{std::move(name), FieldType::kFloat64, {}, indexed, BlobCompression::kNone};
}
Field Field::String(std::string name) {
  return Field{std::move(name), FieldType::kString, {}, false, BlobCompression::kNone};
}
Field Field::Bytes(std::string name, BlobCompression compression) {
  return Field{std::move(name), FieldType::kBytes, {}, false, compression};
}
Field Field::Array(std::string name, FieldType element_type, std::vector<int64_t> shape) {
  return Field{std::move(name), element_type, std::move(shape), false, BlobCompression::kNone};
}

int64_t Field::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool Field::operator==(const Field& other) const {
  return name == other.name && type == other.type && shape == other.shape &&
         indexed == other.indexed && compression == other.compression;
}

namespace {

bool KnownType(FieldType type) {
  return type >= FieldType::kInt32 && type <= FieldType::kBytes;
}

Status CheckField(const Field& f) {
  const std::string where = "schema field '" + f.name + "'";
  if (f.name.empty()) return Status::InvalidArgument("schema: a field has an empty name");
  if (f.name.size() > format::kMaxFieldNameBytes) {
    return Status::InvalidArgument(where + ": name longer than 255 bytes");
  }
  if (f.name.find('\0') != std::string::npos) {
    return Status::InvalidArgument(where + ": name contains a NUL byte");
  }
  if (!KnownType(f.type)) return Status::InvalidArgument(where + ": unknown type");
  if (!f.shape.empty()) {
    if (!IsNumeric(f.type)) {
      return Status::InvalidArgument(where + ": only numeric fields can have a shape, not " +
                                     FieldTypeName(f.type));
    }
    if (f.shape.size() > format::kMaxArrayDims) {
      return Status::InvalidArgument(where + ": more than 8 dimensions");
    }
    int64_t elements = 1;
    for (int64_t d : f.shape) {
      if (d < 1) return Status::InvalidArgument(where + ": dimension " + std::to_string(d) + " < 1");
      if (d > format::kMaxArrayElements || elements * d > format::kMaxArrayElements) {
        return Status::InvalidArgument(where + ": more than 2^28 elements");
      }
      elements *= d;
    }
  }
  if (f.indexed && (!IsNumeric(f.type) || !f.shape.empty())) {
    return Status::InvalidArgument(where + ": only numeric scalars can be indexed");
  }
  if (f.compression != BlobCompression::kNone && f.type != FieldType::kBytes) {
    return Status::InvalidArgument(where + ": compression applies to bytes fields only");
  }
  if (f.compression != BlobCompression::kNone && f.compression != BlobCompression::kZstd) {
    return Status::InvalidArgument(where + ": unknown compression");
  }
  return Status::OK();
}

}  // namespace

Result<Schema> Schema::Make(std::vector<Field> fields) {
  if (fields.empty()) return Status::InvalidArgument("schema: no fields");
  if (fields.size() > format::kMaxFields) {
    return Status::InvalidArgument("schema: more than 65535 fields");
  }
  std::unordered_set<std::string> names;
  for (const Field& f : fields) {
    UREC_RETURN_IF_ERROR(CheckField(f));
    if (!names.insert(f.name).second) {
      return Status::InvalidArgument("schema: field name '" + f.name + "' used twice");
    }
  }
  return Schema(std::move(fields));
}

int Schema::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<size_t> Schema::FindField(std::string_view name) const {
  int i = FieldIndex(name);
  if (i < 0) return Status::KeyNotFound("no field named '" + std::string(name) + "'");
  return static_cast<size_t>(i);
}

std::string Schema::ToString() const {
  std::string out;
  for (const Field& f : fields_) {
    if (!out.empty()) out += ", ";
    out += f.name + ": " + FieldTypeName(f.type);
    if (!f.shape.empty()) {
      out += "[";
      for (size_t d = 0; d < f.shape.size(); ++d) {
        if (d > 0) out += ",";
        out += std::to_string(f.shape[d]);
      }
      out += "]";
    }
    if (f.indexed) out += " (indexed)";
    if (f.compression == BlobCompression::kZstd) out += " (zstd)";
  }
  return out;
}

Result<std::string> EncodeNameList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) return Status::InvalidArgument("name list: name " + std::to_string(i) + " is empty");
    if (names[i].find('\n') != std::string::npos) {
      return Status::InvalidArgument("name list: name '" + names[i] + "' contains a newline");
    }
    if (i > 0) out += '\n';
    out += names[i];
  }
  return out;
}

std::vector<std::string> DecodeNameList(std::string_view encoded) {
  std::vector<std::string> names;
  if (encoded.empty()) return names;
  size_t start = 0;
  while (true) {
    size_t end = encoded.find('\n', start);
    if (end == std::string_view::npos) {
      names.emplace_back(encoded.substr(start));
      return names;
    }
    names.emplace_back(encoded.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace unirecord
