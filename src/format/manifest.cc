#include "format/manifest.h"

#include <cinttypes>
#include <cstdio>

#include "format/checksum.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "io/file.h"

namespace unirecord::format {
namespace {

using format::kManifestFirstLine;

bool ParseDecimal(const std::string& s, uint64_t max, uint64_t* value) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *value = std::stoull(s);
  return *value <= max;
}

std::string Hex64(uint64_t v) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016" PRIx64, v);
  return hex;
}

}  // namespace

std::string EncodeManifest(const Manifest& manifest) {
  std::string text = std::string(kManifestFirstLine) + "\n";
  text += "generation " + std::to_string(manifest.generation) + "\n";
  text += "shards " + std::to_string(manifest.shard_count) + "\n";
  text += "uuid " + manifest.uuid + "\n";
  for (const std::string& label : manifest.reports) text += "report " + label + "\n";
  text += "checksum " + Hex64(format::Checksum(text.data(), text.size())) + "\n";
  return text;
}

Result<Manifest> DecodeManifest(const std::string& text, const std::string& path) {
  auto corrupt = [&](const std::string& what) { return Status::Corruption(path + ": manifest " + what); };
  const size_t checksum_at = text.rfind("checksum ");
  if (text.compare(0, std::string(kManifestFirstLine).size() + 1, std::string(kManifestFirstLine) + "\n") != 0) {
    return corrupt("does not start with '" + std::string(kManifestFirstLine) + "'");
  }
  if (checksum_at == std::string::npos || (checksum_at > 0 && text[checksum_at - 1] != '\n') ||
      text.compare(checksum_at, std::string::npos, "checksum " + Hex64(format::Checksum(text.data(), checksum_at)) + "\n") != 0) {
    return corrupt("checksum mismatch (truncated or damaged)");
  }
  Manifest manifest;
  bool has_generation = false, has_shards = false, has_uuid = false;
  size_t line_start = std::string(kManifestFirstLine).size() + 1;
  while (line_start < checksum_at) {
    const size_t end = text.find('\n', line_start);  // found: the text before checksum_at ends in '\n'
    const std::string line = text.substr(line_start, end - line_start);
    line_start = end + 1;
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    uint64_t number = 0;
    if (key == "generation") {
      if (has_generation || !ParseDecimal(value, format::kMaxGeneration, &number) || number == 0) return corrupt("bad generation '" + value + "'");
      manifest.generation = number;
      has_generation = true;
    } else if (key == "shards") {
      if (has_shards || !ParseDecimal(value, format::kMaxShards, &number) || number == 0) return corrupt("bad shard count '" + value + "'");
      manifest.shard_count = static_cast<uint32_t>(number);
      has_shards = true;
    } else if (key == "uuid") {
      if (has_uuid || value.size() != 36) return corrupt("bad uuid '" + value + "'");
      manifest.uuid = value;
      has_uuid = true;
    } else if (key == "report") {
      if (value.empty() || value.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
        return corrupt("bad report label '" + value + "'");
      }
      manifest.reports.push_back(value);
    }  // other keys: added by a later minor version, ignored
  }
  if (!has_generation || !has_shards || !has_uuid) return corrupt("lacks generation, shards or uuid");
  return manifest;
}

Result<Manifest> ReadManifest(const std::string& dir, const std::string& name) {
  const std::string path = io::JoinPath(dir, format::ManifestFileName(name));
  UREC_ASSIGN_OR_RETURN(io::MappedFile file, io::MappedFile::Open(path));
  if (file.size() > format::kMaxManifestBytes) {
    return Status::Corruption(path + ": manifest larger than " + std::to_string(format::kMaxManifestBytes) + " bytes");
  }
  const auto* bytes = reinterpret_cast<const char*>(file.data());
  return DecodeManifest(bytes == nullptr ? std::string() : std::string(bytes, file.size()), path);
}

}  // namespace unirecord::format
