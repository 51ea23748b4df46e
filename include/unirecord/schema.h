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
// "Shard header": the `type` of a field). 7..13 came with format 1.1, 14 and
// 15 with format 1.3.
enum class FieldType : uint8_t {
  kInt32 = 1,
  kInt64 = 2,
  kFloat32 = 3,
  kFloat64 = 4,
  kString = 5,  // UTF-8 (not checked), any length, may be empty
  kBytes = 6,   // opaque blob, any length up to 4 GiB - 1, may be empty
  kUint8 = 7,
  kInt8 = 8,
  kUint16 = 9,
  kInt16 = 10,
  kUint32 = 11,
  kFloat16 = 12,  // IEEE 754 binary16
  kBool = 13,     // one byte, 0 or 1
  kVideo = 14,    // one video stream: a media value (unirecord/media_value.h, SPEC.md 6.4)
  kAudio = 15,    // one audio stream: a media value
};

// A dimension of Field::shape whose extent each record stores (format 1.1):
// boxes {-1, 4}, tokens {-1}, a mask {-1, -1}.
inline constexpr int64_t kVariableDim = -1;

// What the library knows about each element type: the one table that
// writer validation, reader views, the Python conversion and the CLI's
// printers consult (docs/DEVELOPING.md, "Adding a field type or kind").
struct TypeInfo {
  FieldType type;
  const char* name;     // "float32": schema, Python (numpy dtype name) and CLI name
  uint8_t width;        // bytes per element; 0 for string and bytes
  char kind;            // numpy kind: 'i' signed, 'u' unsigned, 'f' float, 'b' bool; 0 for string, bytes
  bool indexable;       // a scalar of this type may be `indexed`
  uint16_t since_minor;  // format minor version that introduced it
};
// nullptr for a type this library does not know (a newer file's).
const TypeInfo* FindType(FieldType type);
// By name ("uint8", "float16", "bool", ...); nullptr when unknown.
const TypeInfo* FindType(std::string_view name);
// Every known type, in FieldType order.
const std::vector<TypeInfo>& AllTypes();

// "int32", "int64", "float32", ...; "unknown" for a type not in the table.
// ParseFieldType: the type of a name; InvalidArgument listing the names for
// another.
const char* FieldTypeName(FieldType type);
Result<FieldType> ParseFieldType(std::string_view name);

// True for every numeric type (the ones with an element width).
bool IsNumeric(FieldType type);

// Size in bytes of one element of a numeric type; 0 for string and bytes.
size_t NumericWidth(FieldType type);

// True for the integer types and bool (TypeInfo::kind 'i', 'u', 'b').
bool IsIntegral(FieldType type);

// True when `value` is in the range of the integral `type` (bool: 0 or 1).
bool FitsIntegral(FieldType type, int64_t value);

// One little-endian element of a numeric `type` at `element`, widened:
// integers and bool to int64 (ElementToInt64), floats, float16 included,
// to double (ElementToDouble). Exact.
int64_t ElementToInt64(FieldType type, const void* element);
double ElementToDouble(FieldType type, const void* element);
// IEEE 754 binary16 bits to float (exact; a NaN's payload is not kept).
float HalfToFloat(uint16_t bits);
// The binary16 bits of `value`, rounded to nearest even (CUDA's
// __float2half_rn); FloatToHalf(HalfToFloat(h)) == h for every h but NaNs.
uint16_t FloatToHalf(float value);

// The one float policy of every writer (JSON and CSV values, Python numbers,
// lists and numpy arrays; docs/python.md and docs/cli.md, "How numbers are
// stored"): `value` stored as the float `type` (float16, float32 or float64)
// is rounded to the nearest value of that type, ties to even, as IEEE 754
// and numpy's astype round; below the smallest normal value that means a
// subnormal, and below half the smallest subnormal (float32: 2^-150, about
// 7e-46) a zero of the value's sign. NaN and infinities stay what they are. A
// finite value that would round to an infinity is refused: false, nothing
// written (float32: |value| >= 2^128 - 2^103, about 3.4028235678e38; float16:
// >= 65520). Writes the type's width of little-endian bytes at `out`; false
// for a type that is not a float.
bool NarrowFloat(FieldType type, double value, void* out);

// A field's kind follows from its type and shape; it decides where values
// live, how they are checked and how they are read (format/SPEC.md section 5).
enum class FieldKind : uint8_t {
  kScalar,      // one numeric value
  kFixedArray,  // numeric, every dimension >= 1: same shape in every record
  kVarArray,    // numeric, some dimension kVariableDim: each record stores its shape
  kString,
  kBytes,
  kVideo,  // a media value (SPEC.md 6.4) and its parameter fields (format 1.3)
  kAudio,
};

// Where a field's values live (format/SPEC.md section 5).
enum class StorageClass : uint8_t {
  kColumn,   // scalar pages
  kIndexed,  // inline in the record table (numeric scalars marked `indexed`)
  kBlob,     // blob pages, located by the record table
};

struct KindInfo {
  FieldKind kind;
  const char* name;          // "scalar", "array", "variable-shape array", "string", "bytes", "video", "audio"
  StorageClass storage;      // before `indexed` (which moves a scalar to kIndexed)
  bool per_record_shape;     // the stored value starts with its shape (SPEC.md 6.3)
  uint16_t since_minor;      // format minor version that introduced it
};
const KindInfo& KindInfoOf(FieldKind kind);

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

  // Empty for a scalar. Otherwise the field is a row-major array of `type`
  // (numeric types only): {3} for an RGB mean, {28, 28} for an MNIST image
  // stored as float32. A dimension of kVariableDim (-1) varies per record:
  // {-1, 4} for boxes, {-1} for tokens (format 1.1).
  std::vector<int64_t> shape;

  // On a numeric scalar: the value is stored inline in the index record
  // table (cheap per-record reads, see Dataset::GetIndexedInt64) and in a
  // sorted secondary index. Use it for label/width/height-like fields.
  // On a variable-length list (shape {-1}) of an integer or bool type
  // (format 1.2): the index gets a list index of its elements and lengths
  // (format/SPEC.md section 8.4) for `contains`, `any(... in [...])` and
  // `len(...)` queries (docs/query.md); the values stay in blobs.
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
  // A video or audio stream (format 1.3): Schema::Make adds its parameter
  // fields ("NAME.width", ...: MediaParameterFields in unirecord/media_value.h).
  static Field Video(std::string name);
  static Field Audio(std::string name);
  // A fixed-shape array of a numeric `element_type`.
  static Field Array(std::string name, FieldType element_type, std::vector<int64_t> shape);

  bool is_array() const { return !shape.empty(); }
  // True when some dimension is kVariableDim.
  bool has_variable_shape() const;
  FieldKind kind() const;
  StorageClass storage() const;
  // `indexed` on a variable-length integer or bool list: a list index.
  bool has_list_index() const;
  // Number of elements: 1 for a scalar, the product of `shape` for a
  // fixed-shape array; for a variable-shape one, of its fixed dimensions.
  int64_t num_elements() const;

  bool operator==(const Field& other) const;
  bool operator!=(const Field& other) const { return !(*this == other); }
};

class Schema {
 public:
  // Validates and builds a schema. InvalidArgument (naming the field) when:
  // there are no fields or more than 65535; a name is empty, longer than 255
  // bytes, contains NUL, or repeats; the type is unknown; a shape is given
  // for string/bytes, has a dimension < 1 other than kVariableDim, more than
  // 8 dimensions, or more than 2^28 elements in its fixed dimensions;
  // `indexed` is set on anything but a scalar of an indexable type (every
  // numeric type but float16) or a shape {-1} list of an integer or bool
  // type (format 1.2); `compression` is set on anything but bytes.
  // A video or audio field brings its parameter fields ("video.width", ...;
  // MediaParameterFields): Make inserts each one the list lacks right after
  // the media field, keeps one given as the parameter field is declared,
  // and refuses one declared otherwise (a clash of name or type).
  static Result<Schema> Make(std::vector<Field> fields);

  Schema() = default;  // empty; only useful as a placeholder to assign to

  size_t num_fields() const { return fields_.size(); }
  const Field& field(size_t i) const { return fields_[i]; }
  const std::vector<Field>& fields() const { return fields_; }

  // Index of the field called `name`, or -1.
  int FieldIndex(std::string_view name) const;
  // Same, as a Result: KeyNotFound("no field named 'x' (fields: image,
  // label, ...)") when absent.
  Result<size_t> FindField(std::string_view name) const;
  // The field names in order, comma-separated: "image, label, path".
  std::string FieldNames() const;

  // For a media parameter field ("video.width"), the index of its video or
  // audio field; -1 for every other field. Writers refuse values for them:
  // the record builder fills them from the media value.
  int MediaSourceOf(size_t field) const { return media_source_.empty() ? -1 : media_source_[field]; }

  bool operator==(const Schema& other) const { return fields_ == other.fields_; }
  bool operator!=(const Schema& other) const { return !(*this == other); }

  // "image: bytes, label: int64 (indexed), mean: float32[3], boxes: float32[-1,4]".
  std::string ToString() const;

  // The format minor version a file of this schema needs: 0 unless a field
  // uses a type or kind of a later minor version (SPEC.md section 14).
  uint16_t RequiredMinorVersion() const;

 private:
  explicit Schema(std::vector<Field> fields) : fields_(std::move(fields)) {}
  std::vector<Field> fields_;
  std::vector<int> media_source_;  // per field (MediaSourceOf); empty when no field is a media one
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
