// Internal to the convert layer: manifests (JSON Lines or CSV, one sample a
// line) and the schema file that types their fields, parsed into checked
// per-line values for ConvertJsonl / ConvertCsv.
#ifndef UNIRECORD_SRC_CONVERT_MANIFEST_H_
#define UNIRECORD_SRC_CONVERT_MANIFEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "unirecord/media_value.h"
#include "unirecord/schema.h"
#include "unirecord/writer.h"
#include "unirecord/status.h"

namespace unirecord::convert_internal {

// The schema file: {"fields": [{"name", "type", "shape"?, "indexed"?}, ...]}.
// "type" is a numeric type of schema.h ("int32", "float32", ...; not
// float16), "string", or "image" / "video" / "audio" (a path relative to
// the manifest: an image stored as convert imagefolder stores images, a
// video's or audio file's stream as convert videofolder / audiofolder store
// them; one such file field at most).
struct ManifestSchema {
  std::vector<Field> fields;  // the manifest's fields, an image as bytes
  int image = -1;             // index in `fields` of the file field (image, video or audio), or -1
  std::optional<MediaKind> media;  // the file field is a video or audio one
  // With a video or audio field, numeric scalar fields named "start" and
  // "end" (seconds; either may be absent) cut each record's stream to the
  // packets that decode [start, end] (CutMediaValue): their indexes, or -1.
  int start = -1, end = -1;
  // The records' schema: `fields`, then with an image path, width, height,
  // jpeg_layout, source_size and source_xxh3; with a video or audio field,
  // its parameter fields after it and path at the end.
  Schema schema;
  // Per field of `fields`, its index in `schema` (empty: the same index).
  std::vector<size_t> record_index;
};
Result<ManifestSchema> ParseManifestSchema(std::string_view text, const std::string& file);

// One manifest line as the records need it.
struct ManifestLine {
  uint64_t line = 0;   // 1-based line number where the sample starts
  std::string reason;  // why it is rejected; "" for a usable line
  std::string image_path;  // the image field's value
  // Per field of ManifestSchema::fields (the image's unused): the elements
  // of numeric fields (field type, little-endian) and their shape, or the
  // string.
  struct Value {
    std::vector<uint8_t> data;
    std::vector<int64_t> shape;
    std::string text;
  };
  std::vector<Value> values;
};

// Sets `record`'s field k - `skip` from `line`'s value of schema field k,
// for every field k >= `skip` but the image (the builder's schema lists the
// fields in that order).
Status SetManifestValues(const ManifestSchema& schema, const ManifestLine& line, size_t skip, RecordBuilder& record);

// Every non-blank line of a JSON Lines manifest (each an object with one
// key per field, no other), checked against `schema`.
std::vector<ManifestLine> ParseJsonlManifest(std::string_view text, const ManifestSchema& schema);

// A CSV manifest (RFC 4180: commas, "quoted" cells with "" for a quote,
// newlines inside quotes): a header row naming each field once, then one
// sample a row. Cells of string and image fields are taken as they are;
// the others are parsed as JSON (a number, true/false, an array such as
// [1, 2, 3]). InvalidArgument naming the file for a header that does not
// name the fields or an unterminated quote.
Result<std::vector<ManifestLine>> ParseCsvManifest(std::string_view text, const ManifestSchema& schema,
                                                   const std::string& file);

}  // namespace unirecord::convert_internal

#endif  // UNIRECORD_SRC_CONVERT_MANIFEST_H_
