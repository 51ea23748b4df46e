// Numeric element values and the stored form of variable-shape arrays
// (format/SPEC.md sections 5 and 6.3), shared by the writer, the reader and
// the query layer so that each element type is interpreted in one place.
#ifndef UNIRECORD_FORMAT_ARRAY_VALUES_H_
#define UNIRECORD_FORMAT_ARRAY_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord::format {

// The 8-byte indexed representation of the scalar at `p` (SPEC.md 8.2).
uint64_t IndexedBitsOf(FieldType type, const uint8_t* p);

// Bytes of one value of a numeric field of fixed shape: its elements times
// their width (a scalar's: the width).
inline uint64_t FixedValueBytes(const Field& field) {
  return NumericWidth(field.type) * static_cast<uint64_t>(field.num_elements());
}

// Bytes of the shape prefix of a variable-shape array (SPEC.md 6.3): a u32
// per variable dimension, zero-padded to a multiple of 8.
size_t ShapePrefixBytes(const Field& field);

// Checks `shape` against the field's pattern (rank, fixed dimensions, the
// element limit); InvalidArgument naming the field and both shapes.
Status CheckShape(const Field& field, const std::vector<int64_t>& shape);

// The stored value of a variable-shape array: prefix + `data`
// (`data.size()` = elements x width, checked by the caller with CheckShape).
void EncodeVarArray(const Field& field, const std::vector<int64_t>& shape, std::string_view data, std::string* out);

// A stored variable-shape value, parsed: its shape (the field's rank) and
// elements. Corruption ("array 'NAME' ...": the caller adds file and record)
// when the prefix is cut short, its padding is not zero, an extent or the
// element count passes 2^28, or the elements do not fill the rest exactly.
// Reads only `stored`; allocates nothing.
struct ParsedArray {
  int64_t dims[8] = {};
  const uint8_t* data = nullptr;
  size_t count = 0;
};
Status ParseVarArray(const Field& field, std::string_view stored, ParsedArray* out);

// "[-1, 4]" / "(3, 4)"-style text of a shape.
std::string ShapeToString(const std::vector<int64_t>& shape);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_ARRAY_VALUES_H_
