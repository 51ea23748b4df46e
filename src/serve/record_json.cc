#include "serve/record_json.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "unirecord/image.h"

namespace unirecord::serve {
namespace {

constexpr size_t kSummaryStringBytes = 160;  // of a string in the grid
constexpr size_t kSummaryValues = 16;        // a 1-D array this short shows its values in the grid
constexpr int64_t kHeatCells = 24;           // a 2-D array's heat map: at most this many cells a side
constexpr size_t kMaxBoxes = 256;            // boxes drawn on one image
constexpr size_t kBlobHeadBytes = 32;        // a blob's first bytes on the record's page, in hex

// The first `limit` bytes of `s`, not cutting a UTF-8 sequence in two.
std::string_view Prefix(std::string_view s, size_t limit) {
  if (s.size() <= limit) return s;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

Json StringJson(std::string_view s, size_t limit) {
  Json out{{"v", std::string(Prefix(s, limit))}, {"bytes", s.size()}};
  if (s.size() > limit) out["cut"] = true;
  return out;
}

Json ScalarJson(const Record& record, size_t field, const FieldRoles& roles) {
  const Field& f = record.schema().field(field);
  if (f.type == FieldType::kBool || IsIntegral(f.type)) {
    Result<int64_t> v = record.GetInt64(field);
    if (!v.ok()) return Json{{"error", v.status().ToString()}};
    Json out{{"v", f.type == FieldType::kBool ? Json(*v != 0) : IntegerJson(*v)}};
    if (static_cast<int>(field) == roles.label) {
      const std::string name = roles.ClassName(*v, false);
      if (!name.empty()) out["name"] = name;
    }
    return out;
  }
  Result<double> v = record.GetFloat64(field);
  if (!v.ok()) return Json{{"error", v.status().ToString()}};
  return Json{{"v", NumberJson(*v)}};
}

Json BlobJson(std::string_view bytes, bool head) {
  Json out{{"bytes", bytes.size()}};
  const ImageFormat format = SniffImageFormat(bytes);
  if (format != ImageFormat::kUnknown) {
    out["format"] = ImageFormatName(format);
    Result<ImageInfo> info = ProbeImage(bytes);
    if (info.ok()) {
      out["width"] = info->width;
      out["height"] = info->height;
    } else {
      out["error"] = info.status().ToString();
    }
  }
  if (head) {
    std::string hex;
    char byte[4];
    for (size_t i = 0; i < std::min(bytes.size(), kBlobHeadBytes); ++i) {
      std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(bytes[i]));
      hex += byte;
    }
    out["head"] = hex;
  }
  return out;
}

const void* ElementAt(const ArrayView& array, size_t i) {
  return static_cast<const char*>(array.data) + i * NumericWidth(array.type);
}

// Element i as a double (for ranges and heat maps), by its type's kind
// (schema.h's TypeInfo table).
double Element(const ArrayView& array, size_t i) {
  return FindType(array.type)->kind == 'f' ? ElementToDouble(array.type, ElementAt(array, i))
                                           : static_cast<double>(ElementToInt64(array.type, ElementAt(array, i)));
}

// Element i as JSON: integers exactly, bools as booleans.
Json ElementJson(const ArrayView& array, size_t i) {
  switch (FindType(array.type)->kind) {
    case 'f': return NumberJson(ElementToDouble(array.type, ElementAt(array, i)));
    case 'b': return ElementToInt64(array.type, ElementAt(array, i)) != 0;
    default: return IntegerJson(ElementToInt64(array.type, ElementAt(array, i)));
  }
}

// Elements [0, n) flat.
Json Flat(const ArrayView& array, size_t n) {
  Json out = Json::array();
  for (size_t i = 0; i < n; ++i) out.push_back(ElementJson(array, i));
  return out;
}

Json Nested(const ArrayView& array, size_t dim, size_t* pos) {
  Json out = Json::array();
  for (int64_t i = 0; i < array.shape[dim]; ++i) {
    out.push_back(dim + 1 == array.shape.size() ? ElementJson(array, (*pos)++) : Nested(array, dim + 1, pos));
  }
  return out;
}

// A 2-D array averaged over blocks into at most kHeatCells x kHeatCells
// cells (NaNs left out of the means; a block of only NaNs is null).
Json HeatMap(const ArrayView& array) {
  const int64_t rows = array.shape[0], cols = array.shape[1];
  const int64_t out_rows = std::min(rows, kHeatCells), out_cols = std::min(cols, kHeatCells);
  std::vector<double> sum(static_cast<size_t>(out_rows * out_cols), 0);
  std::vector<uint64_t> count(sum.size(), 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const double v = Element(array, static_cast<size_t>(r * cols + c));
      if (std::isnan(v)) continue;
      const size_t cell = static_cast<size_t>((r * out_rows / rows) * out_cols + c * out_cols / cols);
      sum[cell] += v;
      ++count[cell];
    }
  }
  Json cells = Json::array();
  for (size_t i = 0; i < sum.size(); ++i) cells.push_back(count[i] ? NumberJson(sum[i] / count[i]) : Json());
  return Json{{"rows", out_rows}, {"cols", out_cols}, {"cells", std::move(cells)}};
}

// dtype, shape, element count, the range of the values (NaNs counted apart).
Json ArraySummary(const ArrayView& array) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  uint64_t nans = 0;
  for (size_t i = 0; i < array.count; ++i) {
    const double v = Element(array, i);
    if (std::isnan(v)) {
      ++nans;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  Json out{{"dtype", FieldTypeName(array.type)}, {"shape", array.shape.ToVector()}, {"count", array.count}};
  if (array.count > nans) {
    out["min"] = NumberJson(lo);
    out["max"] = NumberJson(hi);
  }
  if (nans) out["nans"] = nans;
  return out;
}

Json ArrayJson(const Record& record, size_t field, bool full) {
  Result<ArrayView> array = record.GetArray(field);
  if (!array.ok()) return Json{{"error", array.status().ToString()}};
  Json out = ArraySummary(*array);
  if (full) {
    if (array->count <= kMaxArrayElements) {
      size_t pos = 0;
      out["v"] = array->shape.size() == 0 ? Json::array() : Nested(*array, 0, &pos);
    } else {
      out["head"] = Flat(*array, 256);
      out["cut"] = true;
    }
  } else if (array->shape.size() == 1 && array->count <= kSummaryValues) {
    out["v"] = Flat(*array, array->count);
  }
  if (array->shape.size() == 2 && array->count > 0) out["heat"] = HeatMap(*array);
  return out;
}

Json FieldJson(const Record& record, size_t field, const FieldRoles& roles, bool full) {
  const Field& f = record.schema().field(field);
  switch (f.kind()) {
    case FieldKind::kString: {
      Result<std::string_view> v = record.GetString(field);
      if (!v.ok()) return Json{{"error", v.status().ToString()}};
      return StringJson(*v, full ? kMaxStringBytes : kSummaryStringBytes);
    }
    case FieldKind::kBytes: {
      Result<std::string_view> v = record.GetBytes(field);
      if (!v.ok()) return Json{{"error", v.status().ToString()}};
      return BlobJson(*v, full);
    }
    case FieldKind::kVideo:
    case FieldKind::kAudio: {  // its parameters (the frames are not drawn here)
      Result<MediaValueView> v = record.GetMedia(field);
      if (!v.ok()) return Json{{"error", v.status().ToString()}};
      const MediaParams& m = v->params;
      Json media{{"kind", MediaKindName(m.kind)}, {"codec", m.codec}, {"seconds", v->seconds()},
                 {"packets", v->packets.size()}};
      if (m.kind == MediaKind::kVideo) {
        media.update({{"width", m.width}, {"height", m.height}, {"fps", v->average_fps()}, {"rotation", m.rotation}});
      } else {
        media.update({{"sample_rate", m.sample_rate}, {"channels", m.channels}});
      }
      return Json{{"media", std::move(media)}};
    }
    case FieldKind::kScalar:
      return ScalarJson(record, field, roles);
    case FieldKind::kFixedArray:
    case FieldKind::kVarArray:
      return ArrayJson(record, field, full);
  }
  return Json{{"error", "unknown kind of field"}};
}

Json RecordJson(const Record& record, const FieldRoles& roles, bool full) {
  Json fields = Json::array();
  for (size_t f = 0; f < record.schema().num_fields(); ++f) fields.push_back(FieldJson(record, f, roles, full));
  return Json{{"id", record.id()}, {"fields", std::move(fields)}, {"boxes", BoxesJson(record, roles)}};
}

// An integer list field of shape (-1,) named `name`, or -1.
int IntList(const Schema& schema, const char* name) {
  const int i = schema.FieldIndex(name);
  if (i < 0) return -1;
  const Field& f = schema.field(static_cast<size_t>(i));
  return f.shape == std::vector<int64_t>{kVariableDim} && IsIntegral(f.type) ? i : -1;
}

}  // namespace

Json BoxesJson(const Record& record, const FieldRoles& roles, const CropWindow* window, int out_size) {
  Json out = Json::array();
  if (roles.boxes < 0) return out;
  Result<ArrayView> boxes = record.GetArray(static_cast<size_t>(roles.boxes));
  if (!boxes.ok() || boxes->shape.size() != 2 || boxes->shape[1] != 4 || boxes->as<float>() == nullptr) return out;
  Result<ArrayView> labels = Status::NotFound("no labels");
  if (roles.box_labels >= 0) labels = record.GetArray(static_cast<size_t>(roles.box_labels));
  const bool has_labels = labels.ok() && labels->shape.size() == 1;
  const size_t count = std::min(static_cast<size_t>(boxes->shape[0]), kMaxBoxes);
  std::vector<float> mapped(boxes->as<float>(), boxes->as<float>() + 4 * count);
  std::vector<uint8_t> keep(count, 1);
  if (window != nullptr) MapBoxes(*window, out_size, out_size, roles.box_format, mapped.data(), count, mapped.data(), keep.data());
  const bool xyxy = roles.box_format == BoxFormat::kXYXY;
  size_t next = 0;  // mapped boxes are packed: the kept ones, in order
  for (size_t i = 0; i < count; ++i) {
    if (!keep[i]) continue;
    const float* box = &mapped[4 * next++];
    Json item{{"b", {NumberJson(box[0]), NumberJson(box[1]), NumberJson(xyxy ? box[2] - box[0] : box[2]),
                     NumberJson(xyxy ? box[3] - box[1] : box[3])}}};
    if (has_labels && i < labels->count) {
      const int64_t label = ElementToInt64(labels->type, ElementAt(*labels, i));
      item["label"] = label;
      const std::string name = roles.ClassName(label, true);
      if (!name.empty()) item["name"] = name;
    }
    out.push_back(std::move(item));
  }
  return out;
}

std::string FieldRoles::ClassName(int64_t value, bool box_label) const {
  if (box_label && !category_names.empty()) {
    auto found = category_names.find(value);
    return found == category_names.end() ? "" : found->second;
  }
  return value >= 0 && static_cast<uint64_t>(value) < class_names.size() ? class_names[static_cast<size_t>(value)] : "";
}

FieldRoles FindRoles(const Dataset& dataset, BoxFormat box_format) {
  const Schema& schema = dataset.schema();
  FieldRoles roles;
  roles.box_format = box_format;
  const int label = schema.FieldIndex("label");
  if (label >= 0 && schema.field(static_cast<size_t>(label)).kind() == FieldKind::kScalar &&
      IsIntegral(schema.field(static_cast<size_t>(label)).type)) {
    roles.label = label;
  }
  auto classes = dataset.metadata().find(kClassesMetadataKey);
  if (classes != dataset.metadata().end()) roles.class_names = DecodeNameList(classes->second);
  auto categories = dataset.metadata().find("categories");  // COCO's, as `urec convert coco` keeps them
  if (categories != dataset.metadata().end()) {
    const Json parsed = Json::parse(categories->second, nullptr, false);
    for (const Json& c : parsed.is_array() ? parsed : Json::array()) {
      if (c.is_object() && c.contains("id") && c["id"].is_number_integer() && c.contains("name") &&
          c["name"].is_string()) {
        roles.category_names[c["id"].get<int64_t>()] = c["name"].get<std::string>();
      }
    }
  }
  for (size_t f = 0; f < schema.num_fields(); ++f) {
    const Field& field = schema.field(f);
    if (field.type == FieldType::kFloat32 && field.shape == std::vector<int64_t>{kVariableDim, 4} &&
        (roles.boxes < 0 || field.name == "boxes")) {
      roles.boxes = static_cast<int>(f);
    }
  }
  if (roles.boxes >= 0) {
    roles.box_labels = IntList(schema, "category_id");
    if (roles.box_labels < 0) roles.box_labels = IntList(schema, "labels");
  }
  return roles;
}

Json RecordSummary(const Record& record, const FieldRoles& roles) { return RecordJson(record, roles, false); }

Json RecordValues(const Record& record, const FieldRoles& roles) { return RecordJson(record, roles, true); }

}  // namespace unirecord::serve
