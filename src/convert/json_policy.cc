#include "convert/json_policy.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

namespace unirecord::convert_internal {
namespace {

// nlohmann's exception text without its "[json.exception.parse_error.101] " tag.
std::string WithoutTag(const std::string& what) {
  const size_t tag = what.find("] ");
  return tag == std::string::npos ? what : what.substr(tag + 2);
}

// Builds the value as nlohmann's own DOM parser does (iteratively: no
// recursion per level), refusing nesting past kMaxJsonDepth and a key given
// twice in one object (nlohmann keeps the last, so a line could show one
// value and store another). Returning false stops the parse.
class PolicySax final : public Json::json_sax_t {
 public:
  explicit PolicySax(Json* root) : root_(root) {}

  const std::string& error() const { return error_; }

  bool null() override { return Put(Json(nullptr)) != nullptr; }
  bool boolean(bool v) override { return Put(Json(v)) != nullptr; }
  bool number_integer(number_integer_t v) override { return Put(Json(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return Put(Json(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t&) override { return Put(Json(v)) != nullptr; }
  bool string(string_t& v) override { return Put(Json(std::move(v))) != nullptr; }
  bool binary(binary_t& v) override { return Put(Json::binary(std::move(v))) != nullptr; }

  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& k) override {
    Frame& top = frames_.back();
    if (top.container->contains(k)) {
      return Fail("key '" + k + "' appears twice in one object (at " + Where(/*pending=*/false) + ")");
    }
    top.key = k;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return Fail("not valid JSON: " + WithoutTag(e.what()));
  }

 private:
  struct Frame {
    Json* container;
    std::string key;  // objects: the key of the value being read
  };

  // Places `v` where the parse is (the root, the end of the open array, or
  // the open object's current key); its address, or nullptr on failure.
  Json* Put(Json v) {
    if (frames_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Frame& top = frames_.back();
    if (top.container->is_array()) {
      top.container->push_back(std::move(v));
      return &top.container->back();
    }
    Json& slot = (*top.container)[top.key];
    slot = std::move(v);
    return &slot;
  }

  bool Open(Json container) {
    if (frames_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      return Fail("arrays and objects nest deeper than " + std::to_string(kMaxJsonDepth) + " levels (at " +
                  Where(/*pending=*/true) + ")");
    }
    Json* placed = Put(std::move(container));
    frames_.push_back({placed, {}});
    return true;
  }

  bool Close() {
    frames_.pop_back();
    return true;
  }

  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

  // The path of the open container (pending: of the value being started
  // in it), as "annotations[3].bbox"; "the top level" for the root.
  std::string Where(bool pending) const {
    std::string path;
    for (size_t i = 0; i < frames_.size(); ++i) {
      const bool last = i + 1 == frames_.size();
      if (last && !pending) break;
      const Json& c = *frames_[i].container;
      if (c.is_array()) {
        path += "[" + std::to_string(last ? c.size() : c.size() - 1) + "]";
      } else {
        path += (path.empty() ? "" : ".") + frames_[i].key;
      }
      if (path.size() > 120) return path.substr(0, 117) + "...";
    }
    return path.empty() ? "the top level" : path;
  }

  Json* root_;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

std::string ParseConverterJson(std::string_view text, Json* value) {
  *value = Json();
  try {
    PolicySax sax(value);
    const bool ok = Json::sax_parse(text.begin(), text.end(), &sax);
    if (ok) return "";
    *value = Json();
    return sax.error().empty() ? std::string("not valid JSON") : sax.error();
  } catch (const std::bad_alloc&) {
    *value = Json();
    return "too large to parse in memory";
  } catch (const Json::exception& e) {  // not expected: the SAX interface reports errors
    *value = Json();
    return "not valid JSON: " + WithoutTag(e.what());
  }
}

std::string QuoteJson(const Json& value) {
  std::string text = value.dump();
  return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

std::string JsonToElement(const TypeInfo& type, const Json& v, uint8_t bytes[8]) {
  std::memset(bytes, 0, 8);
  if (type.kind == 'b') {
    if (!v.is_boolean() && !(v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))) {
      return QuoteJson(v) + " is not a bool (true, false, 0 or 1)";
    }
    bytes[0] = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : static_cast<uint8_t>(v.get<int64_t>());
    return "";
  }
  if (type.kind == 'f') {
    if (!v.is_number()) return QuoteJson(v) + " is not a number";
    const double d = v.get<double>();
    if (!std::isfinite(d)) return QuoteJson(v) + " is not a finite number";
    if (type.width == 4) {
      if (!(std::fabs(d) <= FLT_MAX)) return QuoteJson(v) + " is out of float32's range";
      const float f = static_cast<float>(d);
      std::memcpy(bytes, &f, 4);
    } else {
      std::memcpy(bytes, &d, 8);
    }
    return "";
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return QuoteJson(v) + " is out of " + type.name + "'s range";
  }
  if (!v.is_number_integer()) return QuoteJson(v) + " is not an integer";
  const int64_t i = v.get<int64_t>();
  if (!FitsIntegral(type.type, i)) return QuoteJson(v) + " is out of " + type.name + "'s range";
  for (int k = 0; k < type.width; ++k) bytes[k] = static_cast<uint8_t>(static_cast<uint64_t>(i) >> (8 * k));
  return "";
}

std::string JsonToFloat32(const Json& v, float* out) {
  uint8_t bytes[8];
  std::string why = JsonToElement(*FindType(FieldType::kFloat32), v, bytes);
  if (why.empty()) std::memcpy(out, bytes, sizeof(float));
  return why;
}

std::string JsonToInt64(const Json& v, int64_t* out) {
  uint8_t bytes[8];
  std::string why = JsonToElement(*FindType(FieldType::kInt64), v, bytes);
  if (why.empty()) {
    uint64_t u = 0;
    for (int k = 0; k < 8; ++k) u |= static_cast<uint64_t>(bytes[k]) << (8 * k);
    *out = static_cast<int64_t>(u);
  }
  return why;
}

}  // namespace unirecord::convert_internal
