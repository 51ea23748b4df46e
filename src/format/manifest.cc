#include "format/manifest.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>

#include "format/checksum.h"
#include "format/dataset_uuid.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "format/header_codec.h"
#include "io/file.h"

namespace unirecord::format {
namespace {

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

bool IsUuidText(const std::string& s) {
  Uuid uuid;
  return UuidFromString(s, &uuid);
}

// A line (or part of one) for a message: bytes outside 0x20..0x7e as \xNN,
// so that a damaged byte shows and no message holds a NUL or invalid UTF-8.
std::string PrintableLine(const std::string& line) {
  constexpr size_t kShown = 80;
  std::string out;
  for (size_t i = 0; i < line.size() && i < kShown; ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += line[i];
    } else {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02X", byte);
      out += hex;
    }
  }
  return line.size() > kShown ? out + "... (" + std::to_string(line.size()) + " bytes)" : out;
}

std::string WithChecksum(std::string text) {
  text += "checksum " + Hex64(format::Checksum(text.data(), text.size())) + "\n";
  return text;
}

// The lines between the first line (one of `first_lines`) and the checksum
// line, which must match; sets `*version` to the index of the first line.
Result<std::vector<std::string>> CheckedLines(const std::string& text, const std::vector<std::string>& first_lines,
                                              const std::string& what, const std::string& path, size_t* version) {
  auto corrupt = [&](const std::string& problem) { return Status::Corruption(path + ": " + what + " " + problem); };
  size_t start = std::string::npos;
  for (size_t v = 0; v < first_lines.size(); ++v) {
    if (text.compare(0, first_lines[v].size() + 1, first_lines[v] + "\n") == 0) {
      *version = v;
      start = first_lines[v].size() + 1;
    }
  }
  if (start == std::string::npos) {
    std::string known;
    for (const std::string& line : first_lines) known += (known.empty() ? "'" : "' or '") + line;
    return corrupt("does not start with " + known + "' (a newer version, or not a " + what + ")");
  }
  const size_t checksum_at = text.rfind("checksum ");
  if (checksum_at == std::string::npos || checksum_at < start || text[checksum_at - 1] != '\n' ||
      text.compare(checksum_at, std::string::npos, "checksum " + Hex64(format::Checksum(text.data(), checksum_at)) + "\n") != 0) {
    return corrupt("checksum mismatch (truncated or damaged)");
  }
  std::vector<std::string> lines;
  while (start < checksum_at) {
    const size_t end = text.find('\n', start);  // found: the text before checksum_at ends in '\n'
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

void SplitKey(const std::string& line, std::string* key, std::string* value) {
  const size_t space = line.find(' ');
  *key = line.substr(0, space);
  *value = space == std::string::npos ? "" : line.substr(space + 1);
}

// "GENERATION SHARDS FIRST_ID UUID".
bool ParseSegment(const std::string& value, Segment* segment) {
  char generation[32], shards[32], first_id[32], uuid[64];
  int consumed = 0;
  if (value.size() > 120 ||
      std::sscanf(value.c_str(), "%31s %31s %31s %63s%n", generation, shards, first_id, uuid, &consumed) != 4 ||
      static_cast<size_t>(consumed) != value.size()) {
    return false;
  }
  uint64_t g = 0, s = 0, f = 0;
  if (!ParseDecimal(generation, kMaxGeneration, &g) || g == 0 || !ParseDecimal(shards, kMaxShards, &s) || s == 0 ||
      !ParseDecimal(first_id, UINT64_MAX, &f) || !IsUuidText(uuid)) {
    return false;
  }
  *segment = Segment{g, static_cast<uint32_t>(s), f, uuid, {}, {}};
  return value == std::to_string(g) + " " + std::to_string(s) + " " + std::to_string(f) + " " + uuid;
}

// A field name in a manifest line: '%', ',' and bytes outside 0x21..0x7e
// as %XX (uppercase hex), so that names never hold the separators.
std::string EscapeName(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f || std::string(kEscapedNameBytes).find(c) != std::string::npos) {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + EscapeName(name);
  return out;
}

// NAMES back to names: non-empty, distinct, each in its one escaped form.
bool ParseNames(const std::string& text, std::vector<std::string>* names) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string escaped = text.substr(start, end - start);
    std::string name;
    for (size_t i = 0; i < escaped.size(); ++i) {
      if (escaped[i] != '%') {
        name += escaped[i];
        continue;
      }
      if (i + 2 >= escaped.size()) return false;
      const std::string hex = escaped.substr(i + 1, 2);
      if (hex.find_first_not_of("0123456789ABCDEF") != std::string::npos) return false;
      name += static_cast<char>(std::stoi(hex, nullptr, 16));
      i += 2;
    }
    if (name.empty() || EscapeName(name) != escaped || name.size() > kMaxFieldNameBytes) return false;
    for (const std::string& seen : *names) {
      if (seen == name) return false;
    }
    names->push_back(name);
    start = end + 1;
  }
  return true;
}

// "SEGMENT_GENERATION GROUP_GENERATION UUID NAMES".
bool ParseFieldGroup(const std::string& value, uint64_t* segment_generation, FieldGroup* group) {
  char segment[32], generation[32], uuid[64];
  int consumed = 0;
  if (value.size() > kMaxManifestBytes ||
      std::sscanf(value.c_str(), "%31s %31s %63s %n", segment, generation, uuid, &consumed) != 3 ||
      static_cast<size_t>(consumed) >= value.size()) {
    return false;
  }
  if (!ParseDecimal(segment, kMaxGeneration, segment_generation) || *segment_generation == 0 ||
      !ParseDecimal(generation, kMaxGeneration, &group->generation) || group->generation == 0 || !IsUuidText(uuid) ||
      !ParseNames(value.substr(consumed), &group->fields)) {
    return false;
  }
  group->uuid = uuid;
  return value == std::to_string(*segment_generation) + " " + std::to_string(group->generation) + " " + group->uuid +
                      " " + EscapeNames(group->fields);
}

Result<std::string> ReadSmallFile(const std::string& path, uint64_t limit, const std::string& what) {
  UREC_ASSIGN_OR_RETURN(io::MappedFile file, io::MappedFile::Open(path));
  if (file.size() > limit) {
    return Status::Corruption(path + ": " + what + " larger than " + std::to_string(limit) + " bytes");
  }
  const auto* bytes = reinterpret_cast<const char*>(file.data());
  return bytes == nullptr ? std::string() : std::string(bytes, file.size());
}

}  // namespace

Manifest Manifest::OneSegment(uint64_t generation, uint32_t shard_count, const std::string& uuid) {
  Manifest manifest;
  manifest.generation = generation;
  manifest.shard_count = shard_count;
  manifest.uuid = uuid;
  manifest.segments.push_back(Segment{generation, shard_count, 0, uuid, {}, {}});
  return manifest;
}

std::string DatasetUuidOf(const std::vector<Segment>& segments) {
  std::vector<SegmentDigest> digests;
  std::vector<FieldsDigest> fields;
  bool any_group = false;
  for (const Segment& s : segments) {
    SegmentDigest digest;
    UuidFromString(s.uuid, &digest.uuid);  // checked text (IsUuidText or UuidToString)
    digest.shard_count = s.shard_count;
    digest.first_id = s.first_id;
    digests.push_back(digest);
    FieldsDigest& of = fields.emplace_back();
    for (const FieldGroup& g : s.groups) {
      FieldGroupDigest group;
      UuidFromString(g.uuid, &group.uuid);
      group.fields = g.fields;
      of.groups.push_back(std::move(group));
    }
    of.dropped = s.dropped;
    any_group = any_group || !s.groups.empty() || !s.dropped.empty();
  }
  Uuid uuid = digests.size() == 1 ? digests[0].uuid : DeriveSegmentsUuid(digests);
  if (any_group) uuid = DeriveFieldGroupsUuid(uuid, fields);
  return UuidToString(uuid);
}

std::string EncodeManifest(const Manifest& manifest) {
  // No segments listed: the one segment a manifest 1 implies.
  const bool one_segment = manifest.segments.empty() ||
                           (manifest.segments.size() == 1 &&
                            manifest.segments[0] == Segment{manifest.generation, manifest.shard_count, 0, manifest.uuid, {}, {}});
  std::string text = std::string(one_segment ? kManifestFirstLine : kSegmentedManifestFirstLine) + "\n";
  text += "generation " + std::to_string(manifest.generation) + "\n";
  text += "shards " + std::to_string(manifest.shard_count) + "\n";
  text += "uuid " + manifest.uuid + "\n";
  if (!one_segment) {
    for (const Segment& s : manifest.segments) {
      text += "segment " + std::to_string(s.generation) + " " + std::to_string(s.shard_count) + " " +
              std::to_string(s.first_id) + " " + s.uuid + "\n";
    }
    for (const Segment& s : manifest.segments) {
      for (const FieldGroup& g : s.groups) {
        text += std::string(kFieldGroupKey) + " " + std::to_string(s.generation) + " " + std::to_string(g.generation) +
                " " + g.uuid + " " + EscapeNames(g.fields) + "\n";
      }
    }
    for (const Segment& s : manifest.segments) {
      if (!s.dropped.empty()) {
        text += std::string(kDroppedFieldsKey) + " " + std::to_string(s.generation) + " " + EscapeNames(s.dropped) + "\n";
      }
    }
  }
  for (const std::string& label : manifest.reports) text += "report " + label + "\n";
  return WithChecksum(std::move(text));
}

Result<Manifest> DecodeManifest(const std::string& text, const std::string& path) {
  auto corrupt = [&](const std::string& what) { return Status::Corruption(path + ": manifest " + what); };
  size_t version = 0;
  UREC_ASSIGN_OR_RETURN(std::vector<std::string> lines,
                        CheckedLines(text, {kManifestFirstLine, kSegmentedManifestFirstLine}, "manifest", path, &version));
  const bool segmented = version == 1;
  Manifest manifest;
  bool has_generation = false, has_shards = false, has_uuid = false;
  std::vector<std::pair<uint64_t, FieldGroup>> groups;  // (segment generation, group), in line order
  std::vector<std::pair<uint64_t, std::vector<std::string>>> drops;  // (segment generation, names)
  for (const std::string& line : lines) {
    std::string key, value;
    SplitKey(line, &key, &value);
    uint64_t number = 0;
    if (key == "generation") {
      if (has_generation || !ParseDecimal(value, format::kMaxGeneration, &number) || number == 0) {
        return corrupt("bad generation '" + PrintableLine(value) + "'");
      }
      manifest.generation = number;
      has_generation = true;
    } else if (key == "shards") {
      if (has_shards || !ParseDecimal(value, format::kMaxShards, &number) || number == 0) {
        return corrupt("bad shard count '" + PrintableLine(value) + "'");
      }
      manifest.shard_count = static_cast<uint32_t>(number);
      has_shards = true;
    } else if (key == "uuid") {
      if (has_uuid || !IsUuidText(value)) return corrupt("bad uuid '" + PrintableLine(value) + "'");
      manifest.uuid = value;
      has_uuid = true;
    } else if (key == "segment" && segmented) {
      Segment segment;
      if (!ParseSegment(value, &segment)) return corrupt("bad segment '" + PrintableLine(value) + "'");
      manifest.segments.push_back(segment);
    } else if (key == kFieldGroupKey && segmented) {
      std::pair<uint64_t, FieldGroup> group;
      if (!ParseFieldGroup(value, &group.first, &group.second)) {
        return corrupt("bad field group line '" + PrintableLine(line) + "'");
      }
      groups.push_back(std::move(group));
    } else if (key == kDroppedFieldsKey && segmented) {
      std::pair<uint64_t, std::vector<std::string>> drop;
      std::string segment, names;
      SplitKey(value, &segment, &names);
      if (!ParseDecimal(segment, kMaxGeneration, &drop.first) || std::to_string(drop.first) != segment ||
          !ParseNames(names, &drop.second)) {
        return corrupt("bad dropped fields line '" + PrintableLine(line) + "'");
      }
      drops.push_back(std::move(drop));
    } else if (key == "report") {
      if (value.empty() || value.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
        return corrupt("bad report label '" + PrintableLine(value) + "'");
      }
      manifest.reports.push_back(value);
    }  // other keys: added by a later minor version, ignored
  }
  if (!has_generation || !has_shards || !has_uuid) return corrupt("lacks generation, shards or uuid");
  if (!segmented) {
    manifest.segments.push_back(Segment{manifest.generation, manifest.shard_count, 0, manifest.uuid, {}, {}});
    return manifest;
  }
  // Segments: at least one, ids from 0 upwards, generations distinct and
  // not after the manifest's, shard counts summing to `shards`.
  if (manifest.segments.empty()) return corrupt("(version 2) lists no segment");
  uint64_t shards = 0;
  for (size_t i = 0; i < manifest.segments.size(); ++i) {
    const Segment& s = manifest.segments[i];
    const std::string which = "segment " + std::to_string(i) + " ";
    if (s.generation > manifest.generation) return corrupt(which + "has generation " + std::to_string(s.generation) + ", after the manifest's");
    if (i == 0 ? s.first_id != 0 : s.first_id < manifest.segments[i - 1].first_id) {
      return corrupt(which + "starts at id " + std::to_string(s.first_id) + " (ids must start at 0 and not decrease)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (manifest.segments[j].generation == s.generation) return corrupt(which + "repeats generation " + std::to_string(s.generation));
    }
    shards += s.shard_count;
  }
  if (shards != manifest.shard_count) {
    return corrupt("segments hold " + std::to_string(shards) + " shards, 'shards' says " +
                   std::to_string(manifest.shard_count));
  }
  // Field groups: of a listed segment, after it and not after the manifest,
  // ascending per segment, no field supplied by two groups of one segment.
  for (auto& [segment_generation, group] : groups) {
    const std::string which = "field group " + std::to_string(group.generation) + " of segment generation " +
                              std::to_string(segment_generation) + " ";
    Segment* segment = nullptr;
    for (Segment& s : manifest.segments) {
      if (s.generation == segment_generation) segment = &s;
    }
    if (segment == nullptr) return corrupt(which + "names no segment of the manifest");
    if (group.generation <= segment_generation || group.generation > manifest.generation) {
      return corrupt(which + "is not after its segment and at most the manifest's generation");
    }
    if (!segment->groups.empty() && segment->groups.back().generation >= group.generation) {
      return corrupt(which + "is not after the segment's other groups");
    }
    for (const FieldGroup& earlier : segment->groups) {
      for (const std::string& field : group.fields) {
        if (std::find(earlier.fields.begin(), earlier.fields.end(), field) != earlier.fields.end()) {
          return corrupt(which + "supplies field '" + field + "', as group " + std::to_string(earlier.generation) +
                         " does");
        }
      }
    }
    segment->groups.push_back(std::move(group));
  }
  for (auto& [segment_generation, names] : drops) {
    Segment* segment = nullptr;
    for (Segment& s : manifest.segments) {
      if (s.generation == segment_generation) segment = &s;
    }
    if (segment == nullptr || !segment->dropped.empty()) {
      return corrupt("dropped fields of segment generation " + std::to_string(segment_generation) +
                     (segment == nullptr ? ", which the manifest does not list" : " listed twice"));
    }
    segment->dropped = std::move(names);
  }
  return manifest;
}

Result<Manifest> ReadManifest(const std::string& dir, const std::string& name) {
  const std::string path = io::JoinPath(dir, format::ManifestFileName(name));
  UREC_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxManifestBytes, "manifest"));
  return DecodeManifest(text, path);
}

Result<Manifest> ReadVersionManifest(const std::string& dir, const std::string& name, uint64_t generation) {
  const std::string path = io::JoinPath(dir, format::VersionFileName(name, generation));
  UREC_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxManifestBytes, "manifest"));
  UREC_ASSIGN_OR_RETURN(Manifest manifest, DecodeManifest(text, path));
  if (manifest.generation != generation) {
    return Status::Corruption(path + ": manifest of generation " + std::to_string(manifest.generation) +
                              " kept under the name of generation " + std::to_string(generation));
  }
  return manifest;
}

Status CheckTagName(const std::string& tag) {
  if (tag.empty() || tag.size() > kMaxTagBytes || tag[0] < 'a' || tag[0] > 'z' ||
      tag.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") != std::string::npos) {
    return Status::InvalidArgument("tag '" + PrintableLine(tag) + "': a tag is 1 to " + std::to_string(kMaxTagBytes) +
                                   " of a-z 0-9 . _ -, starting with a letter");
  }
  return Status::OK();
}

std::string EncodeTags(const Tags& tags) {
  std::string text = std::string(kTagsFirstLine) + "\n";
  for (const auto& [tag, generation] : tags) text += "tag " + tag + " " + std::to_string(generation) + "\n";
  return WithChecksum(std::move(text));
}

namespace {

// The first of `problems` and how many follow.
std::string FirstProblem(const std::vector<std::string>& problems) {
  return problems.front() +
         (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more problems)" : "");
}

}  // namespace

Status TagsFile::Sound() const {
  if (problems.empty()) return Status::OK();
  return Status::Corruption(FirstProblem(problems) +
                            "; a tag that does not read protects no version, so writers refuse this dataset until "
                            "the tags file is repaired (urec versions lists the tags it still holds: remove " +
                            path + " and tag those versions again)");
}

TagsFile DecodeTags(const std::string& text, const std::string& path) {
  TagsFile file;
  file.path = path;
  size_t version = 0;
  Result<std::vector<std::string>> lines = CheckedLines(text, {kTagsFirstLine}, "tags file", path, &version);
  if (!lines.ok()) {
    file.problems.push_back(lines.status().message());
    return file;
  }
  constexpr size_t kListedProblems = 20;  // a file of a million bad lines: not a million messages
  size_t unlisted = 0;
  std::set<std::string> repeated;
  for (size_t i = 0; i < lines->size(); ++i) {
    const std::string& line = (*lines)[i];
    const size_t number = i + 2;  // after the first line
    std::string key, value, tag, generation_text;
    SplitKey(line, &key, &value);
    SplitKey(value, &tag, &generation_text);
    uint64_t generation = 0;
    std::string problem;
    if (key != "tag" || line != "tag " + tag + " " + generation_text) {
      problem = "is not 'tag NAME VERSION'";
    } else if (Status name = CheckTagName(tag); !name.ok()) {
      problem = "names no tag: " + name.message();
    } else if (!ParseDecimal(generation_text, kMaxGeneration, &generation) || generation == 0 ||
               std::to_string(generation) != generation_text) {
      problem = "names no version (a generation: decimal, from 1, without leading zeros)";
    } else if (const auto seen = file.line_of.find(tag); seen != file.line_of.end()) {
      problem = "names tag '" + tag + "' again (line " + std::to_string(seen->second) + ")";
      repeated.insert(tag);
    } else {
      file.tags.emplace(tag, generation);
      file.line_of.emplace(tag, number);
      continue;
    }
    if (file.problems.size() < kListedProblems) {
      file.problems.push_back(path + ": tags file line " + std::to_string(number) + " '" + PrintableLine(line) + "' " +
                              problem);
    } else {
      ++unlisted;
    }
  }
  if (unlisted > 0) file.problems.push_back(path + ": tags file: " + std::to_string(unlisted) + " more such lines");
  for (const std::string& tag : repeated) {  // which line is right is unknown
    file.tags.erase(tag);
    file.line_of.erase(tag);
  }
  return file;
}

Result<TagsFile> ReadTags(const std::string& dir, const std::string& name) {
  const std::string path = io::JoinPath(dir, format::TagsFileName(name));
  Result<std::string> text = ReadSmallFile(path, kMaxTagsBytes, "tags file");
  if (!text.ok()) {
    if (text.status().code() != StatusCode::kNotFound) return text.status();
    TagsFile none;
    none.path = path;
    return none;
  }
  return DecodeTags(*text, path);
}

void CheckTagsAgainst(const std::set<uint64_t>& kept, TagsFile* file) {
  for (auto it = file->tags.begin(); it != file->tags.end();) {
    if (kept.count(it->second) > 0) {
      ++it;
      continue;
    }
    file->problems.push_back(file->path + ": tags file line " + std::to_string(file->line_of.at(it->first)) +
                             ": tag '" + it->first + "' names version " + std::to_string(it->second) +
                             ", which is not kept");
    it = file->tags.erase(it);
  }
}

Result<uint64_t> ResolveVersion(const TagsFile& file, const std::string& tag, uint64_t version,
                                const std::string& where) {
  if (tag.empty()) return version;
  UREC_RETURN_IF_ERROR(CheckTagName(tag));
  const auto found = file.tags.find(tag);
  if (found == file.tags.end()) {
    if (!file.problems.empty()) {
      return Status::Corruption(where + ": no sound tag '" + tag + "': " + FirstProblem(file.problems));
    }
    std::string known;
    for (const auto& [t, g] : file.tags) known += (known.empty() ? "" : ", ") + t;
    return Status::NotFound(where + ": no tag '" + tag + "' (" +
                            (known.empty() ? "the dataset has no tags" : "tags: " + known) + ")");
  }
  if (version != 0 && version != found->second) {
    return Status::InvalidArgument(where + ": tag '" + tag + "' names version " + std::to_string(found->second) +
                                   ", not the version " + std::to_string(version) + " also asked for");
  }
  return found->second;
}

}  // namespace unirecord::format
