#include "convert/coco_annotations.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "convert/json_policy.h"
#include "convert/source_path.h"

namespace unirecord::convert_internal {
namespace {

// Python's json.dump writes NaN, Infinity and -Infinity, which JSON has not:
// outside strings they become null, so that the value is reported where it is.
std::string NonFiniteAsNull(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    const bool token_start = i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]));
    size_t skip = 0;
    if (token_start) {
      for (std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
        if (text.substr(i, word.size()) == word) skip = word.size();
      }
    }
    if (skip > 0) {
      out += "null";
      i += skip - 1;
    } else {
      out += c;
    }
  }
  return out;
}

// obj[key] when obj is an object that has it.
const Json* Member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// An integer member: "" and *out, or why not (`written`: the file's
// integers past 64 bits, named as written).
std::string IntegerMember(const Json& obj, const char* key, bool required, int64_t* out,
                          const WrittenIntegers& written) {
  const Json* value = Member(obj, key);
  if (value == nullptr) return required ? std::string("missing key '") + key + "'" : "";
  if (!value->is_number_integer() && written.count(value) == 0) {
    return std::string("'") + key + "' must be an integer, not " + QuoteJson(*value);
  }
  const std::string why = JsonToInt64(*value, out, &written);
  return why.empty() ? "" : std::string("'") + key + "': " + why;
}

// A number member as the float32 the record stores (as a manifest's float32
// field: finite, within float32's range).
std::string Float32Member(const Json& obj, const char* key, float* out) {
  const Json* value = Member(obj, key);
  if (value == nullptr) return std::string("missing key '") + key + "'";
  if (!value->is_number()) return std::string("'") + key + "' must be a finite number, not " + QuoteJson(*value);
  const std::string why = JsonToFloat32(*value, out);
  return why.empty() ? "" : std::string("'") + key + "': " + why;
}

// The annotation at annotations[index], or why it cannot be used (the image
// and category it names are checked by the caller).
std::string ReadAnnotation(const Json& a, const WrittenIntegers& written, CocoAnnotation* out, int64_t* image_id) {
  if (!a.is_object()) return "not an object: " + QuoteJson(a);
  std::string why = IntegerMember(a, "image_id", true, image_id, written);
  if (why.empty()) why = IntegerMember(a, "category_id", true, &out->category_id, written);
  if (!why.empty()) return why;
  const Json* box = Member(a, "bbox");
  if (box == nullptr) return "missing key 'bbox'";
  if (!box->is_array() || box->size() != 4) return "'bbox' must be 4 numbers [x, y, width, height], not " + QuoteJson(*box);
  for (size_t k = 0; k < 4; ++k) {
    const Json& v = (*box)[k];
    if (!v.is_number()) {
      return "'bbox' holds " + QuoteJson(v) + " (NaN, infinite or not a number): " + QuoteJson(*box);
    }
    why = JsonToFloat32(v, &out->box[k]);
    if (!why.empty()) return "'bbox': " + why + " (in " + QuoteJson(*box) + ")";
  }
  if (out->box[2] < 0 || out->box[3] < 0) return "'bbox' has a negative width or height: " + QuoteJson(*box);
  if (Member(a, "area") != nullptr) {
    why = Float32Member(a, "area", &out->area);
    if (!why.empty()) return why;
  } else {
    // width * height, which float32 may not hold although each does.
    why = JsonToFloat32(Json(double(out->box[2]) * double(out->box[3])), &out->area);
    if (!why.empty()) return "'area' (not given: the box's width * height): " + why;
  }
  int64_t crowd = 0;
  why = IntegerMember(a, "iscrowd", false, &crowd, written);
  if (!why.empty()) return why;
  if (crowd != 0 && crowd != 1) return "'iscrowd' must be 0 or 1, not " + std::to_string(crowd);
  out->iscrowd = static_cast<uint8_t>(crowd);
  const Json* segmentation = Member(a, "segmentation");
  out->segmentation = segmentation == nullptr ? "null" : segmentation->dump();  // depth-limited: dump cannot overflow
  return "";
}

}  // namespace

Result<CocoAnnotations> ParseCocoAnnotations(std::string_view json, const std::string& path) {
  Json doc;
  WrittenIntegers written;
  const std::string bad = ParseConverterJson(NonFiniteAsNull(WithoutByteOrderMark(json)), &doc, &written);
  if (!bad.empty()) {
    if (bad.rfind("too large", 0) == 0) return Status::InvalidArgument(path + ": " + bad);
    return Status::Corruption(path + ": " + bad);
  }
  const Json* images = Member(doc, "images");
  if (images == nullptr || !images->is_array()) {
    return Status::Corruption(path + ": not a COCO annotations file: no \"images\" array at the top level");
  }
  const Json* annotations = Member(doc, "annotations");
  const Json* categories = Member(doc, "categories");
  for (const auto& [name, value] : {std::pair{"annotations", annotations}, std::pair{"categories", categories}}) {
    if (value != nullptr && !value->is_array()) {
      return Status::Corruption(path + ": \"" + name + "\" is not an array");
    }
  }
  CocoAnnotations out;

  // Categories, by id.
  std::map<int64_t, Json> category_of;
  for (size_t i = 0; categories != nullptr && i < categories->size(); ++i) {
    const Json& c = (*categories)[i];
    const std::string where = "categories[" + std::to_string(i) + "]";
    int64_t id = 0;
    std::string why = IntegerMember(c, "id", true, &id, written);
    const Json* name = Member(c, "name");
    if (why.empty() && (name == nullptr || !name->is_string())) why = "'name' must be a string";
    if (why.empty() && category_of.count(id) > 0) why = "duplicate category id " + std::to_string(id);
    if (!why.empty()) {
      out.rejected.push_back({where, why});
      continue;
    }
    Json entry = {{"id", id}, {"name", *name}};
    const Json* super = Member(c, "supercategory");
    if (super != nullptr && super->is_string()) entry["supercategory"] = *super;
    category_of[id] = std::move(entry);
  }
  Json category_list = Json::array();
  for (auto& [id, entry] : category_of) category_list.push_back(std::move(entry));
  out.categories_json = category_list.dump();

  // Images, by id.
  std::map<int64_t, CocoImage> image_of;
  for (size_t i = 0; i < images->size(); ++i) {
    const Json& m = (*images)[i];
    const Json* file = Member(m, "file_name");
    // Named by its file_name when that is a usable path, else by position
    // (a NUL or newline would not survive the rejects report's row).
    const bool named = file != nullptr && file->is_string() && !file->get_ref<const std::string&>().empty() &&
                       std::none_of(file->get_ref<const std::string&>().begin(),
                                    file->get_ref<const std::string&>().end(),
                                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
    const std::string where = named ? file->get<std::string>() : "images[" + std::to_string(i) + "]";
    CocoImage image;
    std::string why =
        m.is_object() ? IntegerMember(m, "id", true, &image.id, written) : "not an object: " + QuoteJson(m);
    if (why.empty() && file == nullptr) why = "missing key 'file_name'";
    if (why.empty() && !file->is_string()) why = "'file_name' must be a string, not " + QuoteJson(*file);
    if (why.empty()) why = CheckSourcePathText(file->get<std::string>(), "'file_name'", "the images folder");
    if (why.empty()) why = IntegerMember(m, "width", false, &image.width, written);
    if (why.empty()) why = IntegerMember(m, "height", false, &image.height, written);
    if (why.empty() && image_of.count(image.id) > 0) {
      why = "duplicate image id " + std::to_string(image.id) + " (first: " + image_of[image.id].file_name + ")";
    }
    if (!why.empty()) {
      ++out.images_rejected;
      out.rejected.push_back({where, why});
      continue;
    }
    image.file_name = file->get<std::string>();
    image_of[image.id] = std::move(image);
  }

  // Annotations, onto their images.
  std::map<int64_t, bool> annotation_seen;
  for (size_t i = 0; annotations != nullptr && i < annotations->size(); ++i) {
    const Json& a = (*annotations)[i];
    int64_t id = 0;
    std::string why = a.is_object() ? IntegerMember(a, "id", true, &id, written) : "not an object: " + QuoteJson(a);
    const std::string where = why.empty() ? "annotation " + std::to_string(id) : "annotations[" + std::to_string(i) + "]";
    CocoAnnotation annotation;
    annotation.id = id;
    int64_t image_id = 0;
    if (why.empty() && annotation_seen.count(id) > 0) why = "duplicate annotation id " + std::to_string(id);
    if (why.empty()) why = ReadAnnotation(a, written, &annotation, &image_id);
    if (why.empty() && image_of.count(image_id) == 0) {
      why = "image_id " + std::to_string(image_id) + " is not among the usable images";
    }
    if (why.empty() && category_of.count(annotation.category_id) == 0) {
      why = "category_id " + std::to_string(annotation.category_id) + " is not among the categories";
    }
    if (a.is_object() && Member(a, "id") != nullptr) annotation_seen[id] = true;
    if (!why.empty()) {
      ++out.annotations_rejected;
      out.rejected.push_back({where, why});
      continue;
    }
    image_of[image_id].annotations.push_back(std::move(annotation));
    ++out.annotations;
  }
  for (auto& [id, image] : image_of) {
    std::sort(image.annotations.begin(), image.annotations.end(),
              [](const CocoAnnotation& a, const CocoAnnotation& b) { return a.id < b.id; });
    out.images.push_back(std::move(image));
  }
  return out;
}

}  // namespace unirecord::convert_internal
