#include "unirecord/schema.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <iterator>
#include <unordered_set>

#include "format/endian.h"
#include "format/format_constants.h"
#include "unirecord/media_value.h"

namespace unirecord {

namespace {

// SPEC.md section 5, "Shard header" (the schema): every element type, in
// FieldType order. A constant array, not a function-local vector: FindType
// runs for every value written (no initialisation guard, no indirection).
constexpr TypeInfo kTypes[] = {
      {FieldType::kInt32, "int32", 4, 'i', true, 0},   {FieldType::kInt64, "int64", 8, 'i', true, 0},
      {FieldType::kFloat32, "float32", 4, 'f', true, 0}, {FieldType::kFloat64, "float64", 8, 'f', true, 0},
      {FieldType::kString, "string", 0, 0, false, 0},   {FieldType::kBytes, "bytes", 0, 0, false, 0},
      {FieldType::kUint8, "uint8", 1, 'u', true, format::kFormatMinorArrays},    {FieldType::kInt8, "int8", 1, 'i', true, format::kFormatMinorArrays},
      {FieldType::kUint16, "uint16", 2, 'u', true, format::kFormatMinorArrays},  {FieldType::kInt16, "int16", 2, 'i', true, format::kFormatMinorArrays},
      {FieldType::kUint32, "uint32", 4, 'u', true, format::kFormatMinorArrays},  {FieldType::kFloat16, "float16", 2, 'f', false, format::kFormatMinorArrays},
      {FieldType::kBool, "bool", 1, 'b', true, format::kFormatMinorArrays},
      {FieldType::kVideo, "video", 0, 0, false, format::kFormatMinorMedia},
      {FieldType::kAudio, "audio", 0, 0, false, format::kFormatMinorMedia},
};

// SPEC.md section 5, "Shard header" (storage classes); indexed scalars aside.
const KindInfo kKinds[] = {
    {FieldKind::kScalar, "scalar", StorageClass::kColumn, false, 0},
    {FieldKind::kFixedArray, "array", StorageClass::kColumn, false, 0},
    {FieldKind::kVarArray, "variable-shape array", StorageClass::kBlob, true, format::kFormatMinorArrays},
    {FieldKind::kString, "string", StorageClass::kColumn, false, 0},
    {FieldKind::kBytes, "bytes", StorageClass::kBlob, false, 0},
    {FieldKind::kVideo, "video", StorageClass::kBlob, false, format::kFormatMinorMedia},
    {FieldKind::kAudio, "audio", StorageClass::kBlob, false, format::kFormatMinorMedia},
};

}  // namespace

const std::vector<TypeInfo>& AllTypes() {
  static const std::vector<TypeInfo> all(std::begin(kTypes), std::end(kTypes));
  return all;
}

const TypeInfo* FindType(FieldType type) {
  const size_t i = static_cast<size_t>(type) - 1;
  return i < std::size(kTypes) ? &kTypes[i] : nullptr;
}

const TypeInfo* FindType(std::string_view name) {
  for (const TypeInfo& t : kTypes) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

const char* FieldTypeName(FieldType type) {
  const TypeInfo* t = FindType(type);
  return t != nullptr ? t->name : "unknown";
}

Result<FieldType> ParseFieldType(std::string_view name) {
  if (const TypeInfo* t = FindType(name)) return t->type;
  std::string known;
  for (const TypeInfo& t : kTypes) known += (known.empty() ? "'" : ", '") + std::string(t.name) + "'";
  if (name.empty()) return Status::InvalidArgument("field type must be one of " + known);
  return Status::InvalidArgument("unknown field type '" + MessageText(name) + "' (expected one of " + known + ")");
}

const char* BlobCompressionName(BlobCompression compression) {
  return compression == BlobCompression::kZstd ? "zstd" : "none";
}

Result<BlobCompression> ParseBlobCompression(std::string_view name) {
  if (name == "none") return BlobCompression::kNone;
  if (name == "zstd") return BlobCompression::kZstd;
  return Status::InvalidArgument("unknown compression '" + MessageText(name) + "' (expected 'none' or 'zstd')");
}

bool IsNumeric(FieldType type) { return NumericWidth(type) != 0; }

size_t NumericWidth(FieldType type) {
  const TypeInfo* t = FindType(type);
  return t != nullptr ? t->width : 0;
}

bool IsIntegral(FieldType type) {
  const TypeInfo* t = FindType(type);
  return t != nullptr && (t->kind == 'i' || t->kind == 'u' || t->kind == 'b');
}

float HalfToFloat(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

uint16_t FloatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (magnitude >= 0x47800000u) return sign | 0x7c00u;  // >= 2^16 (and inf): inf
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a subnormal half, in units of 2^-24. The scaling is exact
    // and nearbyint rounds to nearest even; 0x400 is the smallest normal.
    float scaled;
    std::memcpy(&scaled, &magnitude, sizeof scaled);
    return sign | static_cast<uint16_t>(std::nearbyint(scaled * 16777216.0f));
  }
  // Rebias the exponent (127 -> 15) and drop 13 mantissa bits, rounding to
  // nearest even; a carry out of the mantissa moves into the exponent, up to
  // inf, as it should.
  uint32_t half = (magnitude - 0x38000000u) >> 13;
  const uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

int64_t ElementToInt64(FieldType type, const void* element) {
  const auto* p = static_cast<const uint8_t*>(element);
  const TypeInfo* t = FindType(type);
  switch (t->width * 4 + (t->kind == 'i' ? 1 : 0)) {
    case 1 * 4: return format::LoadLE<uint8_t>(p);
    case 1 * 4 + 1: return format::LoadLE<int8_t>(p);
    case 2 * 4: return format::LoadLE<uint16_t>(p);
    case 2 * 4 + 1: return format::LoadLE<int16_t>(p);
    case 4 * 4: return format::LoadLE<uint32_t>(p);
    case 4 * 4 + 1: return format::LoadLE<int32_t>(p);
    default: return format::LoadLE<int64_t>(p);
  }
}

double ElementToDouble(FieldType type, const void* element) {
  const auto* p = static_cast<const uint8_t*>(element);
  switch (NumericWidth(type)) {
    case 2: return HalfToFloat(format::LoadLE<uint16_t>(p));
    case 4: return format::LoadLE<float>(p);
    default: return format::LoadLE<double>(p);
  }
}

bool FitsIntegral(FieldType type, int64_t value) {
  const TypeInfo& t = *FindType(type);
  if (t.width == 8) return true;
  const int bits = t.kind == 'b' ? 1 : 8 * t.width - (t.kind == 'i' ? 1 : 0);
  const int64_t min = t.kind == 'i' ? -(int64_t{1} << bits) : 0;
  return value >= min && value <= (int64_t{1} << bits) - 1;
}

bool NarrowFloat(FieldType type, double value, void* out) {
  const double magnitude = std::fabs(value);
  const bool finite = std::isfinite(value);
  if (type == FieldType::kFloat64) {
    std::memcpy(out, &value, sizeof(value));
    return true;
  }
  if (type == FieldType::kFloat32) {
    // The midpoint between FLT_MAX and 2^128: from it up, the nearest is an infinity.
    if (finite && magnitude >= 0x1.ffffffp+127) return false;
    // Between FLT_MAX and the midpoint the nearest is FLT_MAX (said, not left to an out-of-range cast).
    const float f = finite && magnitude > FLT_MAX ? std::copysign(FLT_MAX, static_cast<float>(value))
                                                  : static_cast<float>(value);
    std::memcpy(out, &f, sizeof(f));
    return true;
  }
  if (type != FieldType::kFloat16) return false;
  // Directly from the double: through a float, a value just past a midpoint
  // of two halves could first round onto it, then to the wrong side.
  uint16_t bits = std::signbit(value) ? 0x8000u : 0;
  if (!finite) {
    bits |= std::isnan(value) ? 0x7e00u : 0x7c00u;
  } else if (magnitude >= 65520.0) {  // 65504 (the largest half) + half its spacing
    return false;
  } else if (magnitude < 0x1p-14) {
    // A subnormal half, in units of 2^-24 (the scaling is exact; 0x400,
    // reached by rounding up, is the smallest normal, as it should be).
    bits |= static_cast<uint16_t>(std::nearbyint(magnitude * 0x1p24));
  } else {
    int exponent = 0;
    std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
    double significand = std::nearbyint(std::ldexp(magnitude, 11 - exponent));  // 1024..2048, exact scaling
    int unbiased = exponent - 1;
    if (significand == 2048.0) {
      significand = 1024.0;
      ++unbiased;
    }
    bits |= static_cast<uint16_t>(((unbiased + 15) << 10) | (static_cast<int>(significand) - 1024));
  }
  format::StoreLE<uint16_t>(static_cast<uint8_t*>(out), bits);
  return true;
}

const KindInfo& KindInfoOf(FieldKind kind) { return kKinds[static_cast<size_t>(kind)]; }

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
Field Field::Video(std::string name) {
  return Field{std::move(name), FieldType::kVideo, {}, false, BlobCompression::kNone};
}
Field Field::Audio(std::string name) {
  return Field{std::move(name), FieldType::kAudio, {}, false, BlobCompression::kNone};
}
Field Field::Array(std::string name, FieldType element_type, std::vector<int64_t> shape) {
  return Field{std::move(name), element_type, std::move(shape), false, BlobCompression::kNone};
}

int64_t Field::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d == kVariableDim ? 1 : d;
  return n;
}

bool Field::has_variable_shape() const {
  for (int64_t d : shape) {
    if (d == kVariableDim) return true;
  }
  return false;
}

FieldKind Field::kind() const {
  if (type == FieldType::kString) return FieldKind::kString;
  if (type == FieldType::kBytes) return FieldKind::kBytes;
  if (type == FieldType::kVideo) return FieldKind::kVideo;
  if (type == FieldType::kAudio) return FieldKind::kAudio;
  if (shape.empty()) return FieldKind::kScalar;
  return has_variable_shape() ? FieldKind::kVarArray : FieldKind::kFixedArray;
}

StorageClass Field::storage() const {
  return indexed && shape.empty() ? StorageClass::kIndexed : KindInfoOf(kind()).storage;
}

bool Field::has_list_index() const {
  return indexed && shape.size() == 1 && shape[0] == kVariableDim && IsIntegral(type);
}

bool Field::operator==(const Field& other) const {
  return name == other.name && type == other.type && shape == other.shape &&
         indexed == other.indexed && compression == other.compression;
}

namespace {

Status CheckField(const Field& f) {
  const std::string where = "schema field '" + MessageText(f.name) + "'";
  if (f.name.empty()) return Status::InvalidArgument("schema: a field has an empty name");
  if (f.name.size() > format::kMaxFieldNameBytes) {
    return Status::InvalidArgument(where + ": name longer than 255 bytes");
  }
  if (f.name.find('\0') != std::string::npos) {
    return Status::InvalidArgument(where + ": name contains a NUL byte");
  }
  const TypeInfo* type = FindType(f.type);
  if (type == nullptr) {
    return Status::InvalidArgument(where + ": unknown type " + std::to_string(static_cast<int>(f.type)));
  }
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
      if (d == kVariableDim) continue;
      if (d < 1) {
        return Status::InvalidArgument(where + ": dimension " + std::to_string(d) + " < 1 (and not -1, variable)");
      }
      if (d > format::kMaxArrayElements || elements * d > format::kMaxArrayElements) {
        return Status::InvalidArgument(where + ": more than 2^28 elements");  // in its fixed dimensions
      }
      elements *= d;
    }
  }
  if (f.indexed && (!type->indexable || !f.shape.empty()) && !f.has_list_index()) {
    return Status::InvalidArgument(where + ": only scalars of an integer, bool, float32 or float64 type and "
                                           "variable-length lists (shape [-1]) of an integer or bool type can be indexed");
  }
  if (f.compression != BlobCompression::kNone && f.type != FieldType::kBytes) {
    return Status::InvalidArgument(where + ": compression applies to bytes fields only");
  }
  if (f.compression != BlobCompression::kNone && f.compression != BlobCompression::kZstd) {
    return Status::InvalidArgument(where + ": unknown compression");
  }
  return Status::OK();
}

// The parameter field `param` of media field `media`, as Schema::Make declares it.
Field MediaParameter(const Field& media, const MediaParameterField& param) {
  return Field{media.name + "." + param.name, param.type, {}, param.indexed, BlobCompression::kNone};
}

// Adds each media field's parameter fields the list lacks, right after it,
// and refuses one declared otherwise; `source` gets, per field of the
// result, the index of its media field or -1.
Status AddMediaParameters(std::vector<Field>* fields, std::vector<int>* source) {
  std::vector<Field> out;
  std::vector<std::pair<std::string, size_t>> wanted;  // parameter name -> media field's index in `out`
  for (const Field& f : *fields) {
    out.push_back(f);
    MediaKind kind;
    if (!MediaKindOf(f.type, &kind)) continue;
    const size_t media = out.size() - 1;
    for (const MediaParameterField& param : MediaParameterFields(kind)) {
      const Field expected = MediaParameter(f, param);
      wanted.emplace_back(expected.name, media);
      const auto given = std::find_if(fields->begin(), fields->end(),
                                      [&](const Field& g) { return g.name == expected.name; });
      if (given == fields->end()) {
        out.push_back(expected);
      } else if (*given != expected) {
        return Status::InvalidArgument("schema field '" + MessageText(expected.name) + "' clashes with the " +
                                       FieldTypeName(f.type) + " field '" + MessageText(f.name) +
                                       "', whose parameter it is: it must be " + FieldTypeName(expected.type) +
                                       (expected.indexed ? " (indexed)" : ""));
      }
    }
  }
  if (wanted.empty()) return Status::OK();
  source->assign(out.size(), -1);
  for (size_t i = 0; i < out.size(); ++i) {
    for (const auto& [name, media] : wanted) {
      if (out[i].name == name) (*source)[i] = static_cast<int>(media);
    }
  }
  // The source indexes are those of `out`, where each media field kept its place among the given fields.
  *fields = std::move(out);
  return Status::OK();
}

}  // namespace

Result<Schema> Schema::Make(std::vector<Field> fields) {
  if (fields.empty()) return Status::InvalidArgument("schema: no fields");
  std::vector<int> media_source;
  UREC_RETURN_IF_ERROR(AddMediaParameters(&fields, &media_source));
  if (fields.size() > format::kMaxFields) {
    return Status::InvalidArgument("schema: more than 65535 fields");
  }
  std::unordered_set<std::string> names;
  for (const Field& f : fields) {
    UREC_RETURN_IF_ERROR(CheckField(f));
    if (!names.insert(f.name).second) {
      return Status::InvalidArgument("schema: field name '" + MessageText(f.name) + "' used twice");
    }
  }
  Schema schema(std::move(fields));
  schema.media_source_ = std::move(media_source);
  return schema;
}

int Schema::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<size_t> Schema::FindField(std::string_view name) const {
  int i = FieldIndex(name);
  if (i < 0) return Status::KeyNotFound("no field named '" + MessageText(name) + "' (fields: " + FieldNames() + ")");
  return static_cast<size_t>(i);
}

std::string Schema::FieldNames() const {
  std::string names;
  for (const Field& f : fields_) names += (names.empty() ? "" : ", ") + f.name;
  return names;
}

uint16_t Schema::RequiredMinorVersion() const {
  uint16_t minor = 0;
  for (const Field& f : fields_) {
    minor = std::max({minor, FindType(f.type)->since_minor, KindInfoOf(f.kind()).since_minor});
    if (f.has_list_index()) minor = std::max(minor, format::kFormatMinorListIndex);
  }
  return minor;
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
      return Status::InvalidArgument("name list: name '" + MessageText(names[i]) + "' contains a newline");
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
