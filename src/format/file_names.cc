#include "format/file_names.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "format/format_constants.h"

namespace unirecord::format {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool AllOf(const std::string& s, const char* allowed) {
  return !s.empty() && s.find_first_not_of(allowed) == std::string::npos;
}

constexpr const char* kDigits = "0123456789";

// "SSSSS": a shard number (or count) in the five digits kMaxShards allows.
std::string ShardNumber(uint32_t shard) {
  char digits[16];
  std::snprintf(digits, sizeof(digits), "%05" PRIu32, shard);
  return digits;
}

// ".NAME.tmp-PID-TAG.partial".
std::string TemporaryFileName(const std::string& name, long pid, const std::string& tag) {
  return "." + name + ".tmp-" + std::to_string(pid) + "-" + tag + kPartialSuffix;
}

// ".gGGGGGG" for generation > 0, "" for generation 0.
std::string GenerationTag(uint64_t generation) {
  if (generation == 0) return "";
  char tag[32];
  std::snprintf(tag, sizeof(tag), ".g%06" PRIu64, generation);
  return tag;
}

// ".fFFFFFF": a column file's field group generation (> 0).
std::string ColumnGenerationTag(uint64_t group_generation) {
  std::string tag = GenerationTag(group_generation);
  if (!tag.empty()) tag[1] = kColumnGenerationTag;
  return tag;
}

// Parses "gDIGITS" (or `letter` DIGITS; at most 18 digits, so no overflow);
// nullopt otherwise.
std::optional<uint64_t> ParseGenerationTag(const std::string& s, char letter = 'g') {
  if (s.size() < 2 || s.size() > 19 || s[0] != letter || !AllOf(s.substr(1), kDigits)) return std::nullopt;
  return std::stoull(s.substr(1));
}

// Splits "STEM.LAST" at the last dot; false without one. `s` is a copy: it
// may be `*stem`.
bool SplitLastDot(std::string s, std::string* stem, std::string* last) {
  const size_t dot = s.rfind('.');
  if (dot == std::string::npos) return false;
  *stem = s.substr(0, dot);
  *last = s.substr(dot + 1);
  return true;
}

// `file` without `suffix` when it ends with it.
std::optional<std::string> StripSuffix(const std::string& file, const std::string& suffix) {
  if (!EndsWith(file, suffix)) return std::nullopt;
  return file.substr(0, file.size() - suffix.size());
}

bool IsTemporaryOf(const std::string& file, const std::string& name) {
  std::optional<std::string> rest = StripSuffix(file, kPartialSuffix);
  if (!rest) return false;
  if (*rest == name + ".rejects.tsv") return true;  // the pre-manifest converter's rejects temporary
  if (rest->empty() || (*rest)[0] != '.') return false;
  // Today's: ".NAME.tmp-PID-TAG". TAG has no '-', PID only digits.
  const size_t tag_dash = rest->rfind('-');
  if (tag_dash != std::string::npos && AllOf(rest->substr(tag_dash + 1), "abcdefghijklmnopqrstuvwxyz0123456789.")) {
    const std::string head = rest->substr(0, tag_dash);
    const size_t pid_dash = head.rfind('-');
    if (pid_dash != std::string::npos && AllOf(head.substr(pid_dash + 1), kDigits) &&
        head.substr(0, pid_dash) == "." + name + ".tmp") {
      return true;
    }
  }
  // The pre-manifest writer's: ".NAME-SHARD.PID.urec" or ".uidx".
  std::string stem, extension, pid;
  if (!SplitLastDot(*rest, &stem, &extension)) return false;
  if ("." + extension != kShardExtension && "." + extension != kIndexExtension) return false;
  if (!SplitLastDot(stem, &stem, &pid) || !AllOf(pid, kDigits)) return false;
  const size_t shard_dash = stem.rfind('-');
  return shard_dash != std::string::npos && AllOf(stem.substr(shard_dash + 1), kDigits) &&
         stem.substr(0, shard_dash) == "." + name;
}

std::optional<uint64_t> ReportGeneration(const std::string& file, const std::string& name) {
  std::optional<std::string> middle = StripSuffix(file, kReportExtension);
  if (!middle || !StartsWith(*middle, name + ".")) return std::nullopt;
  *middle = middle->substr(name.size() + 1);  // "LABEL" or "LABEL.gGGGGGG"
  std::string label = *middle, tag;
  uint64_t generation = 0;
  if (SplitLastDot(*middle, &label, &tag)) {
    std::optional<uint64_t> parsed = ParseGenerationTag(tag);
    if (!parsed) return std::nullopt;
    generation = *parsed;
  } else if (label != "rejects") {
    return std::nullopt;  // untagged: only the pre-manifest converter's report is ours
  }
  if (!AllOf(label, "abcdefghijklmnopqrstuvwxyz") || ReportFileName(name, generation, label) != file) {
    return std::nullopt;
  }
  return generation;
}

// G of "NAME.gGGGGGG.uver" (G >= 1).
std::optional<uint64_t> VersionGeneration(const std::string& file, const std::string& name) {
  std::optional<std::string> middle = StripSuffix(file, kVersionExtension);
  if (!middle || !StartsWith(*middle, name + ".")) return std::nullopt;
  std::optional<uint64_t> generation = ParseGenerationTag(middle->substr(name.size() + 1));
  if (!generation || *generation == 0 || VersionFileName(name, *generation) != file) return std::nullopt;
  return generation;
}

}  // namespace

std::string ShardFileName(const std::string& name, uint64_t generation, uint32_t shard, uint32_t count) {
  return ColumnFileName(name, generation, 0, shard, count);
}

std::string ColumnFileName(const std::string& name, uint64_t generation, uint64_t group_generation, uint32_t shard,
                           uint32_t count) {
  return name + "-" + ShardNumber(shard) + "-of-" + ShardNumber(count) + GenerationTag(generation) +
         ColumnGenerationTag(group_generation) + kShardExtension;
}

std::string IndexPathFor(const std::string& shard_path) {
  return shard_path.substr(0, shard_path.size() - std::string(kShardExtension).size()) + kIndexExtension;
}

std::string ReportFileName(const std::string& name, uint64_t generation, const std::string& label) {
  return name + "." + label + GenerationTag(generation) + kReportExtension;
}

std::string ManifestFileName(const std::string& name) { return name + kManifestExtension; }

std::optional<std::string> ManifestDatasetName(const std::string& file) {
  std::optional<std::string> name = StripSuffix(file, kManifestExtension);
  if (!name || name->empty() || (*name)[0] == '.') return std::nullopt;
  return name;
}

std::string VersionFileName(const std::string& name, uint64_t generation) {
  return name + GenerationTag(generation) + kVersionExtension;
}

std::string TagsFileName(const std::string& name) { return name + kTagsExtension; }

std::string LockFileName(const std::string& name) { return "." + name + ".lock"; }

std::string TemporaryShardFileName(const std::string& name, long pid, uint32_t shard) {
  return TemporaryFileName(name, pid, ShardNumber(shard) + kShardExtension);
}

std::string TemporaryIndexFileName(const std::string& name, long pid, uint32_t shard) {
  return TemporaryFileName(name, pid, ShardNumber(shard) + kIndexExtension);
}

std::string TemporaryReportFileName(const std::string& name, long pid, const std::string& label) {
  return TemporaryFileName(name, pid, label + kReportExtension);
}

std::string TemporaryManifestFileName(const std::string& name, long pid) {
  return TemporaryFileName(name, pid, std::string(kManifestExtension).substr(1));
}

std::string TemporaryVersionFileName(const std::string& name, long pid) {
  return TemporaryFileName(name, pid, std::string(kVersionExtension).substr(1));
}

std::string TemporaryTagsFileName(const std::string& name, long pid) {
  return TemporaryFileName(name, pid, std::string(kTagsExtension).substr(1));
}

namespace {

// ".NAME.tmp-TOKEN-pKKKKK." + rest: the prefix of every file of one staged part.
std::string StagedFileName(const std::string& name, const std::string& token, uint32_t part, const std::string& rest) {
  return "." + name + ".tmp-" + token + "-p" + ShardNumber(part) + "." + rest + kPartialSuffix;
}

}  // namespace

std::string StagedShardFileName(const std::string& name, const std::string& token, uint32_t part, uint32_t shard) {
  return StagedFileName(name, token, part, ShardNumber(shard) + kShardExtension);
}

std::string StagedIndexFileName(const std::string& name, const std::string& token, uint32_t part, uint32_t shard) {
  return StagedFileName(name, token, part, ShardNumber(shard) + kIndexExtension);
}

std::string StagedPartFileName(const std::string& name, const std::string& token, uint32_t part) {
  return StagedFileName(name, token, part, "part");
}

std::string PartAttemptShardFileName(const std::string& name, const std::string& token, uint32_t part,
                                     const std::string& attempt, uint32_t shard) {
  return StagedFileName(name, token, part, "a" + attempt + "." + ShardNumber(shard) + kShardExtension);
}

std::string PartAttemptIndexFileName(const std::string& name, const std::string& token, uint32_t part,
                                     const std::string& attempt, uint32_t shard) {
  return StagedFileName(name, token, part, "a" + attempt + "." + ShardNumber(shard) + kIndexExtension);
}

std::string PartAttemptPartFileName(const std::string& name, const std::string& token, uint32_t part,
                                    const std::string& attempt) {
  return StagedFileName(name, token, part, "a" + attempt + ".part");
}

bool IsStagingToken(const std::string& token) { return token.size() <= 20 && AllOf(token, kDigits); }

std::optional<ShardFileParts> ParseShardFileName(const std::string& file) {
  ShardFileParts parts;
  std::optional<std::string> stem = StripSuffix(file, kShardExtension);
  if (!stem) {
    stem = StripSuffix(file, kIndexExtension);
    if (!stem) return std::nullopt;
    parts.is_index = true;
  }
  std::string head, tag;
  if (SplitLastDot(*stem, &head, &tag)) {
    if (std::optional<uint64_t> group = ParseGenerationTag(tag, kColumnGenerationTag)) {
      parts.group_generation = *group;
      *stem = head;
    }
  }
  if (SplitLastDot(*stem, &head, &tag)) {
    if (std::optional<uint64_t> generation = ParseGenerationTag(tag)) {
      parts.generation = *generation;
      *stem = head;
    }
  }
  // "-SSSSS-of-NNNNN": 15 characters.
  const std::string numbers = "-#####-of-#####";
  if (stem->size() <= numbers.size()) return std::nullopt;
  const size_t at = stem->size() - numbers.size();
  for (size_t i = 0; i < numbers.size(); ++i) {
    const char c = (*stem)[at + i];
    if (numbers[i] == '#' ? (c < '0' || c > '9') : c != numbers[i]) return std::nullopt;
  }
  parts.name = stem->substr(0, at);
  parts.shard = static_cast<uint32_t>(std::stoul(stem->substr(at + 1, 5)));
  parts.count = static_cast<uint32_t>(std::stoul(stem->substr(at + 10, 5)));
  if (parts.name[0] == '.' || (parts.group_generation > 0 && parts.generation == 0)) return std::nullopt;
  const std::string canonical =
      ColumnFileName(parts.name, parts.generation, parts.group_generation, parts.shard, parts.count);
  if ((parts.is_index ? IndexPathFor(canonical) : canonical) != file) return std::nullopt;
  return parts;
}

FileOfDataset ClassifyFile(const std::string& file, const std::string& name) {
  FileOfDataset result;
  if (file == ManifestFileName(name)) {
    result.role = FileRole::kManifest;
  } else if (file == TagsFileName(name)) {
    result.role = FileRole::kTags;
  } else if (std::optional<uint64_t> version = VersionGeneration(file, name)) {
    result.role = FileRole::kVersion;
    result.generation = *version;
  } else if (file == LockFileName(name)) {
    result.role = FileRole::kLock;
  } else if (std::optional<ShardFileParts> parts = ParseShardFileName(file); parts && parts->name == name) {
    result.role = FileRole::kShard;
    result.generation = parts->generation;
    result.group_generation = parts->group_generation;
  } else if (std::optional<uint64_t> generation = ReportGeneration(file, name)) {
    result.role = FileRole::kReport;
    result.generation = *generation;
  } else if (IsTemporaryOf(file, name)) {
    result.role = FileRole::kTemporary;
  }
  return result;
}

FolderDatasets FindFolderDatasets(const std::vector<std::string>& files) {
  FolderDatasets found;
  for (const std::string& file : files) {
    if (std::optional<std::string> name = ManifestDatasetName(file)) found.committed.push_back(*name);
  }
  std::sort(found.committed.begin(), found.committed.end());
  found.committed.erase(std::unique(found.committed.begin(), found.committed.end()), found.committed.end());
  for (const std::string& file : files) {
    if (file.empty() || file[0] == '.' || !EndsWith(file, kShardExtension)) continue;
    const std::optional<ShardFileParts> parts = ParseShardFileName(file);
    if (parts && (parts->generation > 0 ||
                  std::binary_search(found.committed.begin(), found.committed.end(), parts->name))) {
      found.unfinished = found.unfinished || parts->generation > 0;
      continue;
    }
    found.loose.push_back(file);
  }
  std::sort(found.loose.begin(), found.loose.end());
  return found;
}

Status CheckOneDataset(const std::string& folder, const FolderDatasets& found, bool globs) {
  if (found.committed.size() + (found.loose.empty() ? 0 : 1) <= 1) return Status::OK();
  std::string names;
  for (const std::string& name : found.committed) names += (names.empty() ? "" : ", ") + name;
  if (!found.loose.empty()) names += ", and .urec files without a manifest such as " + found.loose.front();
  return Status::InvalidArgument(folder + ": holds more than one dataset (" + names + "); open one as DIR/NAME" +
                                 (globs ? ", or its shards with a glob like DIR/NAME-*.urec" : ""));
}

}  // namespace unirecord::format
