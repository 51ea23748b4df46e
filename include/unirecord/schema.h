// Schema: the typed fields every record of a dataset has.
//
// A schema is an ordered list of fields. Each field has a name, a type and,
// for numeric fields, an optional fixed shape (an array of that element type).
// `bytes` fields (images, audio, ...) live in blob pages and are read back
// zero-copy; every other field lives in compressed columnar scalar pages,
// except `indexed` fields, whose values are stored inline in the index's
// fixed-stride record table (and in a sorted secondary index) so that a
// reader can fetch e.g. a label without touching any page.
//
// The on-disk encoding is described in format/SPEC.md.
#ifndef UNIRECORD_SCHEMA_H_
#define UNIRECORD_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/status.h"

namespace unirecord {

// The values are frozen in the file format (format/SPEC.md section 5,
// "Shard header": the `type` of a field).
enum class FieldType : uint8_t {
  kInt32 = 1,
  kInt64 = 2,
  kFloat32 = 3,
  kFloat64 = 4,
  kString = 5,  // UTF-8 (not checked), any length, may be empty
  kBytes = 6,   // opaque blob, any length up to 4 GiB - 1, may be empty
};

// "int32", "int64", "float32", "float64", "string", "bytes"; parse returns
// InvalidArgument (listing the names) for another name.
const char* FieldTypeName(FieldType type);
Result<FieldType> ParseFieldType(std::string_view name);

// True for int32, int64, float32 and float64.
bool IsNumeric(FieldType type);

// Size in bytes of one element of a numeric type; 0 for string and bytes.
size_t NumericWidth(FieldType type);

// How a `bytes` field is stored. Frozen in the file format.
enum class BlobCompression : uint8_t {
  kNone = 0,  // stored as given: reads are zero-copy views into the mapped shard
  kZstd = 1,  // each blob zstd-compressed on its own: reads inflate into a buffer
};

// "none" | "zstd"; parse returns InvalidArgument for another name.
const char* BlobCompressionName(BlobCompression compression);
Result<BlobCompression> ParseBlobCompression(std::string_view name);

struct Field {
  std::string name;
  FieldType type = FieldType::kInt64;

  // Empty for a scalar. Otherwise the field is a fixed-shape, row-major array
  // of `type` (numeric types only), every dimension >= 1; e.g. {3} for an RGB
  // mean, {28, 28} for an MNIST image stored as float32.
  std::vector<int64_t> shape;

  // Numeric scalars only. The value is stored inline in the index record
  // table (cheap per-record reads, see Dataset::GetIndexedInt64) and in a
  // sorted secondary index. Use it for label/width/height-like fields.
  bool indexed = false;

  // `bytes` fields only.
  BlobCompression compression = BlobCompression::kNone;

  // Convenience constructors.
  static Field Int32(std::string name, bool indexed = false);
  static Field Int64(std::string name, bool indexed = false);
  static Field Float32(std::string name, bool indexed = false);
  static Field Float64(std::string name, bool indexed = false);
  static Field String(std::string name);
  static Field Bytes(std::string name, BlobCompression compression = BlobCompression::kNone);
  // A fixed-shape array of a numeric `element_type`.
  static Field Array(std::string name, FieldType element_type, std::vector<int64_t> shape);

  bool is_array() const { return !shape.empty(); }
  // Number of elements: 1 for a scalar, the product of `shape` for an array.
  int64_t num_elements() const;

  bool operator==(const Field& other) const;
  bool operator!=(const Field& other) const { return !(*this == other); }
};

class Schema {
 public:
  // Validates and builds a schema. InvalidArgument (naming the field) when:
  // there are no fields or more than 65535; a name is empty, longer than 255
  // bytes, contains NUL, or repeats; a shape is given for string/bytes, has a
  // dimension < 1, more than 8 dimensions, or more than 2^28 elements;
  // `indexed` is set on anything but a numeric scalar; `compression` is set
  // on anything but bytes.
  static Result<Schema> Make(std::vector<Field> fields);

  Schema() = default;  // empty; only useful as a placeholder to assign to

  size_t num_fields() const { return fields_.size(); }
  const Field& field(size_t i) const { return fields_[i]; }
  const std::vector<Field>& fields() const { return fields_; }

  // Index of the field called `name`, or -1.
  int FieldIndex(std::string_view name) const;
  // Same, as a Result: KeyNotFound("no field named 'x'") when absent.
  Result<size_t> FindField(std::string_view name) const;

  bool operator==(const Schema& other) const { return fields_ == other.fields_; }
  bool operator!=(const Schema& other) const { return !(*this == other); }

  // "image: bytes, label: int64 (indexed), mean: float32[3]".
  std::string ToString() const;

 private:
  explicit Schema(std::vector<Field> fields) : fields_(std::move(fields)) {}
  std::vector<Field> fields_;
};

// --- Dataset metadata conventions -----------------------------------------
// Metadata is a map of string keys to string values stored in every shard
// header (Writer::SetMetadata, Dataset::metadata). Values are opaque bytes to
// the format; these are the conventions unirecord's own tools follow.

// Key of the class names of a classification dataset, in label order.
inline constexpr const char* kClassesMetadataKey = "classes";

// Encodes a list of names as one name per line ("cat\ndog"; no trailing
// newline; an empty list is ""). InvalidArgument if a name contains '\n' or
// if a name is empty (an empty name would be ambiguous in a one-element list).
Result<std::string> EncodeNameList(const std::vector<std::string>& names);
// Inverse of EncodeNameList.
std::vector<std::string> DecodeNameList(std::string_view encoded);

}  // namespace unirecord

#endif  // UNIRECORD_SCHEMA_H_
