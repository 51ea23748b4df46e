#include "dataset_json.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace unirecord::cli {
namespace {

// One element as JSON, by its type's kind (schema.h's TypeInfo table).
Json ElementToJson(FieldType type, const void* element) {
  switch (FindType(type)->kind) {
    case 'f': return FloatToJson(ElementToDouble(type, element));
    case 'b': return Json(ElementToInt64(type, element) != 0);
    default: return Json(ElementToInt64(type, element));
  }
}

Json NestedArray(const ArrayView& array, size_t dim, size_t* pos) {
  Json out = Json::array();
  const size_t width = NumericWidth(array.type);
  for (int64_t i = 0; i < array.shape[dim]; ++i) {
    if (dim + 1 == array.shape.size()) {
      out.push_back(ElementToJson(array.type, static_cast<const char*>(array.data) + width * (*pos)++));
    } else {
      out.push_back(NestedArray(array, dim + 1, pos));
    }
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<Dataset>> OpenForReading(const std::string& path, const RemoteOptions& remote,
                                                const VersionChoice& version, uint64_t page_cache_bytes) {
  DatasetOptions options;
  options.page_cache_bytes = page_cache_bytes;
  options.remote = remote;
  options.version = version.version;
  options.tag = version.tag;
  struct stat st;
  options.allow_partial = stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  return Dataset::Open(path, options);
}

void AddVersionOptions(CLI::App* cmd, VersionChoice* version) {
  cmd->add_option("--version", version->version, "Open this kept version (generation; urec versions lists them)")
      ->check(IntegerIn(1, UINT64_MAX));
  cmd->add_option("--tag", version->tag, "Open the version this tag names (urec tag)")
      ->check(CLI::Validator(
          [](const std::string& tag) { return tag.empty() ? std::string("an empty tag names no version") : std::string(); },
          "TAG"));
}

void AddRemoteOptions(CLI::App* cmd, RemoteOptions* remote) {
  cmd->add_option("--cache-dir", remote->cache_dir,
                  "Remote PATH: local cache directory (default $XDG_CACHE_HOME/unirecord or ~/.cache/unirecord)");
  cmd->add_option("--cache-limit", remote->cache_limit, "Remote PATH: byte budget of cached shards (0: none)")
      ->capture_default_str()
      ->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--prefetch-shards", remote->prefetch_shards, "Remote PATH: shards downloaded ahead of the reads")
      ->capture_default_str()
      ->check(IntegerIn(0, 1024));
  cmd->add_option("--max-requests", remote->max_requests, "Remote PATH: requests in flight at once")
      ->capture_default_str()
      ->check(IntegerIn(1, 1024));
  cmd->add_option("--attempts", remote->attempts, "Remote PATH: attempts per request")
      ->capture_default_str()
      ->check(IntegerIn(1, 1000));
  cmd->add_option("--retry-backoff-ms", remote->retry_backoff_ms, "Remote PATH: the first retry's backoff, doubling")
      ->capture_default_str()
      ->check(IntegerIn(0, 600000));
  cmd->add_option("--timeout-s", remote->timeout_s, "Remote PATH: an attempt receiving no byte this long is retried")
      ->capture_default_str()
      ->check(IntegerIn(1, 86400));
  cmd->add_option("--min-rate-bytes-per-s", remote->min_rate_bytes_per_s,
                  "Remote PATH: an attempt slower than this over --min-rate-window-s is retried (0: no minimum)")
      ->capture_default_str()
      ->check(IntegerIn(0, INT32_MAX));
  cmd->add_option("--min-rate-window-s", remote->min_rate_window_s, "Remote PATH: the window of the minimum rate")
      ->capture_default_str()
      ->check(IntegerIn(1, 86400));
  cmd->add_option("--request-deadline-s", remote->request_deadline_s,
                  "Remote PATH: seconds a request may take in all, retries included (0: none)")
      ->capture_default_str()
      ->check(IntegerIn(0, INT32_MAX));
  cmd->add_option("--s3-endpoint", remote->s3_endpoint,
                  "s3:// PATH: endpoint URL (default AWS_ENDPOINT_URL, else AWS's for the region)");
  cmd->add_option("--s3-addressing", remote->s3_addressing, "s3:// PATH: auto | path | virtual")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "path", "virtual"}));
}

Result<size_t> FindDatasetField(const std::string& path, const Dataset& dataset, const std::string& name) {
  Result<size_t> found = dataset.schema().FindField(name);
  if (!found.ok()) return found.status().WithContext("dataset " + path);
  return found;
}

Result<Json> FieldToJson(const Record& record, size_t field) {
  const Field& f = record.schema().field(field);
  if (f.is_array()) {
    UREC_ASSIGN_OR_RETURN(ArrayView array, record.GetArray(field));
    size_t pos = 0;
    return NestedArray(array, 0, &pos);
  }
  switch (f.kind()) {
    case FieldKind::kString: {
      UREC_ASSIGN_OR_RETURN(std::string_view v, record.GetString(field));
      return Json(std::string(v));
    }
    case FieldKind::kBytes: {
      UREC_ASSIGN_OR_RETURN(std::string_view v, record.GetBytes(field));
      return Json{{"size", v.size()}};
    }
    case FieldKind::kVideo:
    case FieldKind::kAudio: {  // the stored size and the packets; the parameters are fields of their own
      UREC_ASSIGN_OR_RETURN(std::string_view v, record.GetBytes(field));
      UREC_ASSIGN_OR_RETURN(MediaValueView media, record.GetMedia(field));
      return Json{{"size", v.size()}, {"packets", media.packets.size()}, {"codec", media.params.codec}};
    }
    default:
      break;
  }
  if (IsIntegral(f.type)) {
    UREC_ASSIGN_OR_RETURN(int64_t v, record.GetInt64(field));
    if (IsHashField(f)) return Json(HashHex(v));
    return f.type == FieldType::kBool ? Json(v != 0) : Json(v);
  }
  UREC_ASSIGN_OR_RETURN(double v, record.GetFloat64(field));
  return FloatToJson(v);
}

Json FloatToJson(double value) {
  if (std::isnan(value)) return Json(std::signbit(value) ? "-nan" : "nan");  // as the query order and text output
  if (std::isinf(value)) return Json(value < 0 ? "-inf" : "inf");
  return Json(value);
}

Result<Json> RecordToJson(const Record& record, const std::vector<size_t>& fields) {
  Json out{{"id", record.id()}};
  for (size_t f : fields) {
    UREC_ASSIGN_OR_RETURN(Json value, FieldToJson(record, f));
    out[record.schema().field(f).name] = std::move(value);
  }
  return out;
}

bool IsHashField(const Field& field) {
  constexpr std::string_view kSuffix = "_xxh3";
  return field.type == FieldType::kInt64 && !field.is_array() && field.name.size() >= kSuffix.size() &&
         field.name.compare(field.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

std::string HashHex(int64_t bits) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(static_cast<uint64_t>(bits)));
  return text;
}

Json MediaFieldsJson(const Schema& schema) {
  Json out = Json::array();
  for (size_t i = 0; i < schema.num_fields(); ++i) {
    MediaKind kind;
    if (!MediaKindOf(schema.field(i).type, &kind)) continue;
    Json params = Json::array();
    for (size_t k = 0; k < schema.num_fields(); ++k) {
      if (schema.MediaSourceOf(k) == static_cast<int>(i)) params.push_back(schema.field(k).name);
    }
    out.push_back(Json{{"field", schema.field(i).name}, {"kind", MediaKindName(kind)}, {"parameters", params}});
  }
  return out;
}

Json FieldSchemaToJson(const Field& field) {
  Json j{{"name", field.name}, {"type", FieldTypeName(field.type)}};
  if (field.is_array()) j["shape"] = field.shape;
  if (field.indexed) j["indexed"] = true;
  if (field.type == FieldType::kBytes) {
    j["compression"] = BlobCompressionName(field.compression);
  }
  return j;
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 if there is none.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;  // U+D800..U+DFFF are not characters
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  *out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {  // a byte that is not UTF-8: U+DC80 + byte, as Python's surrogateescape
      *out += "\\udc";
      *out += kHex[c >> 4];
      *out += kHex[c & 15];
      ++i;
      continue;
    }
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          *out += "\\u00";
          *out += kHex[c >> 4];
          *out += kHex[c & 15];
        } else {
          out->append(s.substr(i, n));
        }
    }
    i += n;
  }
  *out += '"';
}

// nlohmann's layout (indent < 0: one line), with strings written by
// AppendJsonString instead of nlohmann's serializer, which can only replace
// or drop bytes that are not UTF-8.
void AppendJson(const Json& json, int indent, int depth, std::string* out) {
  if (json.is_string()) return AppendJsonString(json.get_ref<const std::string&>(), out);
  if (!json.is_object() && !json.is_array()) {
    *out += json.dump();
    return;
  }
  const bool object = json.is_object();
  if (json.empty()) {
    *out += object ? "{}" : "[]";
    return;
  }
  const std::string inner = indent < 0 ? "" : "\n" + std::string(static_cast<size_t>(indent * (depth + 1)), ' ');
  *out += object ? '{' : '[';
  bool first = true;
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (!first) *out += ',';
    first = false;
    *out += inner;
    if (object) {
      AppendJsonString(it.key(), out);
      *out += indent < 0 ? ":" : ": ";
    }
    AppendJson(*it, indent, depth + 1, out);
  }
  if (indent >= 0) *out += "\n" + std::string(static_cast<size_t>(indent * depth), ' ');
  *out += object ? '}' : ']';
}

}  // namespace

std::string DumpJson(const Json& json) {
  std::string out;
  AppendJson(json, 2, 0, &out);
  return out;
}

std::string DumpJsonLine(const Json& json) {
  std::string out;
  AppendJson(json, -1, 0, &out);
  return out;
}

Status WriteStdout(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0) {
    return Status::IOError(std::string("standard output: write: ") + std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace unirecord::cli
