// A record as the viewer's page shows it: in the grid, a summary of each
// field (a string's first characters, an array's shape, type, range and a
// few values or a small heat map, a blob's size and image format) and the
// boxes to draw; on the record's page, every value, bounded. Each field is
// read on its own, so a damaged one is an error in its cell and the others
// still show.
#ifndef UNIRECORD_SRC_SERVE_RECORD_JSON_H_
#define UNIRECORD_SRC_SERVE_RECORD_JSON_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "serve/json.h"
#include "unirecord/dataset.h"
#include "unirecord/sample_decoder.h"

namespace unirecord::serve {

// What some fields mean, found once from the schema and metadata.
struct FieldRoles {
  int label = -1;                        // an int scalar "label"
  std::vector<std::string> class_names;  // the `classes` metadata
  std::map<int64_t, std::string> category_names;  // COCO's `categories` metadata: id -> name
  int boxes = -1;       // a float32 (-1, 4) field: "boxes" if there is one
  int box_labels = -1;  // an integer list beside it: "category_id", else "labels"
  BoxFormat box_format = BoxFormat::kXYWH;

  // The name of class `value` of the label field (or of a box label), or "".
  std::string ClassName(int64_t value, bool box_label) const;
};

FieldRoles FindRoles(const Dataset& dataset, BoxFormat box_format);

// The grid's cell of a record: {"id", "fields": [summary per schema field],
// "boxes": [{"b": [x, y, w, h], "label", "name"}]}; a field that cannot be
// read is {"error": message}.
Json RecordSummary(const Record& record, const FieldRoles& roles);

// The record's page: {"id", "fields": [value per schema field], "boxes"}:
// numbers, strings up to kMaxStringBytes, arrays as nested lists up to
// kMaxArrayElements elements (larger ones: the summary and their first
// elements), blobs as their size, format and first bytes.
Json RecordValues(const Record& record, const FieldRoles& roles);

// The record's boxes as [{"b": [x, y, width, height], "label", "name"}]:
// in image pixels, or, with `window`, as MapBoxes maps them onto the
// out_size x out_size crop of that window (boxes left outside dropped).
Json BoxesJson(const Record& record, const FieldRoles& roles, const CropWindow* window = nullptr, int out_size = 0);

inline constexpr size_t kMaxStringBytes = 64 << 10;
inline constexpr size_t kMaxArrayElements = 4096;

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_RECORD_JSON_H_
