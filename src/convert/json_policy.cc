#include "convert/json_policy.h"

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
  PolicySax(Json* root, WrittenIntegers* written) : root_(root), written_(written) {}

  const std::string& error() const { return error_; }

  bool null() override { return Put(Json(nullptr)) != nullptr; }
  bool boolean(bool v) override { return Put(Json(v)) != nullptr; }
  bool number_integer(number_integer_t v) override { return Put(Json(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return Put(Json(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t& text) override {
    if (Put(Json(v)) == nullptr) return false;
    // An integer literal read as a double: one past 64 bits (no "-0").
    const bool integer = text.find_first_not_of("-0123456789") == std::string::npos && std::fabs(v) >= 0x1p63;
    if (written_ != nullptr && integer) written_at_.push_back({PathOfLast(), text});
    return true;
  }
  bool string(string_t& v) override { return Put(Json(std::move(v))) != nullptr; }
  bool binary(binary_t& v) override { return Put(Json::binary(std::move(v))) != nullptr; }

  bool start_object(std::size_t) override { return Open(Json::object()); }
  bool start_array(std::size_t) override { return Open(Json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& k) override {
    Frame& top = frames_.back();
    if (top.container->contains(k)) {
      return Fail("key '" + MessageText(k) + "' appears twice in one object (at " + Where(/*pending=*/false) + ")");
    }
    top.key = k;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return Fail("not valid JSON: " + MessageText(WithoutTag(e.what())));
  }

  // Once the parse is done (values no longer move as arrays grow): the
  // integer literals past 64 bits, by the address of their value.
  void ListWrittenIntegers() const {
    for (const auto& [path, text] : written_at_) {
      const Json* value = root_;
      for (const Step& step : path) value = step.in_array ? &(*value)[step.index] : &(*value)[step.key];
      (*written_)[value] = text;
    }
  }

 private:
  struct Frame {
    Json* container;
    std::string key;  // objects: the key of the value being read
  };
  struct Step {
    bool in_array;
    size_t index;     // in_array
    std::string key;  // else
  };

  // The steps from the root to the value placed last.
  std::vector<Step> PathOfLast() const {
    std::vector<Step> path;
    for (const Frame& frame : frames_) {
      const bool in_array = frame.container->is_array();
      path.push_back({in_array, in_array ? frame.container->size() - 1 : 0, in_array ? std::string() : frame.key});
    }
    return path;
  }

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
  WrittenIntegers* written_;
  std::vector<std::pair<std::vector<Step>, std::string>> written_at_;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

std::string ParseConverterJson(std::string_view text, Json* value, WrittenIntegers* written) {
  *value = Json();
  if (written != nullptr) written->clear();
  // nlohmann would skip it wherever a parse starts: a line or a cell too.
  if (text.size() != WithoutByteOrderMark(text).size()) {
    return "a UTF-8 byte-order mark starts the value (only a file's first bytes may hold one)";
  }
  try {
    PolicySax sax(value, written);
    const bool ok = Json::sax_parse(text.begin(), text.end(), &sax);
    if (ok) {
      if (written != nullptr) sax.ListWrittenIntegers();
      return "";
    }
    *value = Json();
    return sax.error().empty() ? std::string("not valid JSON") : sax.error();
  } catch (const std::bad_alloc&) {
    *value = Json();
    return "too large to parse in memory";
  } catch (const Json::exception& e) {  // not expected: the SAX interface reports errors
    *value = Json();
    return "not valid JSON: " + MessageText(WithoutTag(e.what()));
  }
}

std::string_view WithoutByteOrderMark(std::string_view text) {
  return text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
}

std::string QuoteJson(const Json& value) {
  std::string text = value.dump();
  return text.size() <= 60 ? text : text.substr(0, 57) + "...";
}

std::string JsonToElement(const TypeInfo& type, const Json& v, uint8_t bytes[8], const WrittenIntegers* written) {
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
    if (!NarrowFloat(type.type, d, bytes)) return QuoteJson(v) + " is out of " + type.name + "'s range";
    return "";
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return QuoteJson(v) + " is out of " + type.name + "'s range";
  }
  if (!v.is_number_integer()) {
    const auto as_written = written != nullptr ? written->find(&v) : WrittenIntegers::const_iterator();
    if (written != nullptr && as_written != written->end()) {
      return MessageText(as_written->second) + " is out of " + type.name + "'s range";
    }
    return QuoteJson(v) + " is not an integer";
  }
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

std::string JsonToInt64(const Json& v, int64_t* out, const WrittenIntegers* written) {
  uint8_t bytes[8];
  std::string why = JsonToElement(*FindType(FieldType::kInt64), v, bytes, written);
  if (why.empty()) {
    uint64_t u = 0;
    for (int k = 0; k < 8; ++k) u |= static_cast<uint64_t>(bytes[k]) << (8 * k);
    *out = static_cast<int64_t>(u);
  }
  return why;
}

}  // namespace unirecord::convert_internal
