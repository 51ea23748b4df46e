#include "format/array_values.h"

#include <cstring>

#include "format/endian.h"
#include "format/format_constants.h"

namespace unirecord::format {

uint64_t IndexedBitsOf(FieldType type, const uint8_t* p) {
  if (IsIntegral(type)) return static_cast<uint64_t>(ElementToInt64(type, p));
  const double value = ElementToDouble(type, p);
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

namespace {

size_t VariableDims(const Field& field) {
  size_t n = 0;
  for (int64_t d : field.shape) n += d == kVariableDim ? 1 : 0;
  return n;
}

}  // namespace

size_t ShapePrefixBytes(const Field& field) {
  const size_t raw = kShapeExtentSize * VariableDims(field);
  return (raw + kShapePrefixAlignment - 1) / kShapePrefixAlignment * kShapePrefixAlignment;
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

Status CheckShape(const Field& field, const std::vector<int64_t>& shape) {
  bool fits = shape.size() == field.shape.size();
  int64_t elements = 1;
  for (size_t i = 0; fits && i < shape.size(); ++i) {
    const int64_t d = shape[i];
    fits = d >= 0 && (field.shape[i] == kVariableDim || d == field.shape[i]) && d <= kMaxArrayElements &&
           (d == 0 || elements <= kMaxArrayElements / d);
    if (fits) elements *= d;
  }
  if (fits && elements <= kMaxArrayElements) return Status::OK();
  return Status::InvalidArgument("field '" + field.name + "' takes shape " + ShapeToString(field.shape) +
                                 " (-1: any extent, at most 2^28 elements), got " + ShapeToString(shape));
}

void EncodeVarArray(const Field& field, const std::vector<int64_t>& shape, std::string_view data, std::string* out) {
  out->assign(ShapePrefixBytes(field), '\0');
  uint8_t* prefix = reinterpret_cast<uint8_t*>(out->data());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (field.shape[i] != kVariableDim) continue;
    StoreLE<uint32_t>(prefix, static_cast<uint32_t>(shape[i]));
    prefix += kShapeExtentSize;
  }
  out->append(data.data(), data.size());
}

Status ParseVarArray(const Field& field, std::string_view stored, ParsedArray* out) {
  // Built only for an error: this runs once per read of every array.
  auto context = [&field] { return "array '" + field.name + "'"; };
  const size_t prefix_bytes = ShapePrefixBytes(field);
  if (stored.size() < prefix_bytes) {
    return Status::Corruption(context() + " is " + std::to_string(stored.size()) + " bytes, shorter than its " +
                              std::to_string(prefix_bytes) + "-byte shape prefix");
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(stored.data());
  const uint8_t* extent = p;
  uint64_t elements = 1;
  for (size_t i = 0; i < field.shape.size(); ++i) {
    uint64_t d = static_cast<uint64_t>(field.shape[i]);
    if (field.shape[i] == kVariableDim) {
      d = LoadLE<uint32_t>(extent);
      extent += kShapeExtentSize;
    }
    if (d > static_cast<uint64_t>(kMaxArrayElements) || (d != 0 && elements > kMaxArrayElements / d)) {
      return Status::Corruption(context() + " has an impossible shape (extent " + std::to_string(d) + " of dimension " +
                                std::to_string(i) + ": over 2^28 elements)");
    }
    elements *= d;
    out->dims[i] = static_cast<int64_t>(d);
  }
  for (const uint8_t* pad = extent; pad < p + prefix_bytes; ++pad) {
    if (*pad != 0) return Status::Corruption(context() + ": nonzero padding in its shape prefix");
  }
  const uint64_t data_bytes = stored.size() - prefix_bytes;
  if (data_bytes != elements * NumericWidth(field.type)) {
    return Status::Corruption(context() + ": its shape needs " + std::to_string(elements * NumericWidth(field.type)) +
                              " bytes of elements, the value holds " + std::to_string(data_bytes));
  }
  out->data = p + prefix_bytes;
  out->count = static_cast<size_t>(elements);
  return Status::OK();
}

}  // namespace unirecord::format
