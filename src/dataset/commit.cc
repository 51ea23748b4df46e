#include "dataset/commit.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "format/dataset_uuid.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "format/manifest.h"
#include "io/file.h"

namespace unirecord::dataset {

Status CheckDatasetName(const std::string& name, const std::string& who) {
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    return Status::InvalidArgument(who + ": dataset name '" + name + "' must be non-empty, contain no '/' "
                                   "and not start with '.'");
  }
  return Status::OK();
}

Status CheckReportLabel(const std::string& label, const std::vector<std::pair<std::string, std::string>>& reports,
                        const std::string& who) {
  if (label.empty() || label.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
    return Status::InvalidArgument(who + ": report label '" + label + "' must be lowercase letters a-z");
  }
  for (const auto& report : reports) {
    if (report.first == label) return Status::InvalidArgument(who + ": report '" + label + "' added twice");
  }
  return Status::OK();
}

Result<DatasetPath> ResolveDatasetPath(const std::string& path, const std::string& why) {
  if (io::IsDirectory(path)) {
    UREC_ASSIGN_OR_RETURN(std::vector<std::string> files, io::ListDirectory(path));
    std::vector<std::string> names;
    for (const std::string& file : files) {
      if (std::optional<std::string> name = format::ManifestDatasetName(file)) names.push_back(*name);
    }
    if (names.size() == 1) return DatasetPath{path, names[0]};
    if (names.empty()) {
      return Status::NotFound(path + ": no dataset with a manifest (NAME.uset) here; " + why);
    }
    return Status::InvalidArgument(path + ": holds more than one dataset (" + names[0] + ", " + names[1] +
                                   (names.size() > 2 ? ", ..." : "") + "); name one as DIR/NAME");
  }
  const std::string base = io::BaseName(path);
  std::string name = format::ManifestDatasetName(base).value_or(base);
  DatasetPath resolved{io::DirName(path), name};
  const std::string manifest = io::JoinPath(resolved.dir, format::ManifestFileName(name));
  if (!io::PathExists(manifest)) {
    if (Status exists = io::CheckExists(path); !exists.ok()) {
      return Status(exists.code(), exists.message() + " (nor is there a manifest " + manifest + ")");
    }
    return Status::NotFound(path + ": not a dataset with a manifest (no " + manifest +
                            "); " + why);
  }
  return resolved;
}

Status WriteWholeFile(const std::string& path, const std::string& bytes, bool sync) {
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(path));
  UREC_RETURN_IF_ERROR(file.Append(bytes));
  if (sync) UREC_RETURN_IF_ERROR(file.Sync());
  return file.Close();
}

// The files in use are those of the committed manifest (DIR/NAME.uset) and
// of every kept version up to it; without a manifest, the pre-manifest layout
// (generation 0). With a damaged manifest or kept version only temporaries
// go. Removal failures are left for the next run.
Result<uint64_t> RemoveUnusedFiles(const std::string& dir, const std::string& name) {
  const Result<format::Manifest> manifest = format::ReadManifest(dir, name);
  bool known = manifest.ok() || manifest.status().code() == StatusCode::kNotFound;
  const uint64_t committed = manifest.ok() ? manifest->generation : 0;
  UREC_ASSIGN_OR_RETURN(std::vector<std::string> files, io::ListDirectory(dir));
  // (generation, field group generation) whose shard and index files (or
  // column files) are used.
  std::set<std::pair<uint64_t, uint64_t>> shard_generations;
  std::set<uint64_t> report_generations;  // whose reports are
  auto use = [&](const format::Manifest& m) {
    for (const format::Segment& s : m.segments) {
      shard_generations.insert({s.generation, 0});
      for (const format::FieldGroup& g : s.groups) shard_generations.insert({s.generation, g.generation});
    }
    report_generations.insert(m.generation);
  };
  if (manifest.ok()) use(*manifest);
  if (!manifest.ok()) shard_generations.insert({0, 0}), report_generations.insert(0);
  uint64_t highest = committed;
  for (const std::string& file : files) {
    const format::FileOfDataset of = format::ClassifyFile(file, name);
    highest = std::max({highest, of.generation, of.group_generation});
    if (of.role != format::FileRole::kVersion) continue;
    if (manifest.ok() && of.generation > committed) {
      io::RemoveFileIfExists(io::JoinPath(dir, file));  // kept before a commit that never happened
      continue;
    }
    Result<format::Manifest> kept = format::ReadVersionManifest(dir, name, of.generation);
    if (kept.ok()) use(*kept);
    known = known && kept.ok();
  }
  for (const std::string& file : files) {
    const format::FileOfDataset of = format::ClassifyFile(file, name);
    const bool unused =
        of.role == format::FileRole::kTemporary ||
        (known && of.role == format::FileRole::kShard &&
         shard_generations.count({of.generation, of.group_generation}) == 0) ||
        (known && of.role == format::FileRole::kReport && report_generations.count(of.generation) == 0);
    if (unused) io::RemoveFileIfExists(io::JoinPath(dir, file));
  }
  return highest;
}

namespace {

// What the lock file's line ends with while staged write `token` holds it.
std::string StagedWriteNote(const std::string& token) { return "staged-write " + token; }

// NAME.utag, checked against the kept versions (after cleanup: those up to
// the committed one) as writers need it.
Result<format::Tags> SoundTags(const std::string& dir, const std::string& name) {
  UREC_ASSIGN_OR_RETURN(format::TagsFile tags, format::ReadTags(dir, name));
  if (tags.tags.empty() && tags.problems.empty()) return format::Tags();
  std::set<uint64_t> kept;
  if (Result<format::Manifest> manifest = format::ReadManifest(dir, name); manifest.ok()) {
    kept.insert(manifest->generation);  // kept without a copy when written before format 1.2
  }
  UREC_ASSIGN_OR_RETURN(const std::vector<std::string> files, io::ListDirectory(dir));
  for (const std::string& file : files) {
    const format::FileOfDataset of = format::ClassifyFile(file, name);
    if (of.role == format::FileRole::kVersion) kept.insert(of.generation);
  }
  format::CheckTagsAgainst(kept, &tags);
  UREC_RETURN_IF_ERROR(tags.Sound());
  return tags.tags;
}

}  // namespace

bool StagedWriteUnderWay(const std::string& out_dir, const std::string& name, const std::string& token) {
  std::string line;
  if (!io::ReadFile(io::JoinPath(out_dir, format::LockFileName(name)), 4096, &line).ok()) return false;
  const std::string end = " " + StagedWriteNote(token) + "\n";
  return line.size() >= end.size() && line.compare(line.size() - end.size(), end.size(), end) == 0;
}

Result<DatasetLock> LockDataset(const std::string& out_dir, const std::string& name, const std::string& who,
                                const std::string& staged_token) {
  UREC_RETURN_IF_ERROR(io::CreateDirectory(out_dir));
  DatasetLock locked;
  Result<io::FileLock> lock = io::FileLock::Acquire(io::JoinPath(out_dir, format::LockFileName(name)),
                                                    staged_token.empty() ? "" : StagedWriteNote(staged_token));
  if (!lock.ok()) {
    if (lock.status().code() != StatusCode::kFailedPrecondition) return lock.status();
    return Status::FailedPrecondition(who + ": dataset '" + name + "' in " + out_dir +
                                      " is being written by another writer (" + lock.status().message() + ")");
  }
  locked.lock = std::move(*lock);
  Result<uint64_t> highest = RemoveUnusedFiles(out_dir, name);
  if (!highest.ok() || *highest >= format::kMaxGeneration) {
    locked.lock.Release();
    if (!highest.ok()) return highest.status();
    return Status::FailedPrecondition(who + ": dataset '" + name + "' in " + out_dir + " is at the last generation");
  }
  locked.generation = *highest + 1;
  Result<format::Tags> tags = SoundTags(out_dir, name);
  if (!tags.ok()) {
    locked.lock.Release();
    return Status(tags.status().code(), who + ": " + tags.status().message());
  }
  locked.tags = std::move(*tags);
  return locked;
}

void ReleaseDataset(const std::string& out_dir, const std::string& name, io::FileLock* lock) {
  if (!lock->held()) return;
  (void)RemoveUnusedFiles(out_dir, name);
  lock->Release();
}

Status CommitGeneration(const std::string& out_dir, const std::string& name, const PendingGeneration& pending,
                        WriterSummary* summary) {
  const bool sync = pending.sync;
  std::vector<std::pair<std::string, std::string>> moves = pending.moves;
  format::Manifest manifest = ManifestOf(pending.generation, pending.segments);
  for (const auto& [label, text] : pending.reports) {
    const std::string temporary = io::JoinPath(out_dir, format::TemporaryReportFileName(name, ::getpid(), label));
    UREC_RETURN_IF_ERROR(WriteWholeFile(temporary, text, sync));
    moves.emplace_back(temporary, io::JoinPath(out_dir, format::ReportFileName(name, pending.generation, label)));
    summary->report_paths.push_back(moves.back().second);
    manifest.reports.push_back(label);
  }
  for (const auto& [from, to] : moves) UREC_RETURN_IF_ERROR(io::RenameFile(from, to));
  // The version committed before this one is kept too: a dataset written
  // before format 1.2 has no kept manifest of it yet.
  const std::string temporary = io::JoinPath(out_dir, format::TemporaryVersionFileName(name, ::getpid()));
  summary->manifest_path = io::JoinPath(out_dir, format::ManifestFileName(name));
  if (Result<format::Manifest> current = format::ReadManifest(out_dir, name); current.ok()) {
    const std::string kept = io::JoinPath(out_dir, format::VersionFileName(name, current->generation));
    if (!io::PathExists(kept)) {
      UREC_RETURN_IF_ERROR(WriteWholeFile(temporary, format::EncodeManifest(*current), sync));
      UREC_RETURN_IF_ERROR(io::RenameFile(temporary, kept));
    }
  }
  const std::string text = format::EncodeManifest(manifest);
  UREC_RETURN_IF_ERROR(WriteWholeFile(temporary, text, sync));
  UREC_RETURN_IF_ERROR(io::RenameFile(temporary, io::JoinPath(out_dir, format::VersionFileName(name, manifest.generation))));
  if (sync) UREC_RETURN_IF_ERROR(io::SyncDirectory(out_dir));
  const std::string manifest_temporary = io::JoinPath(out_dir, format::TemporaryManifestFileName(name, ::getpid()));
  UREC_RETURN_IF_ERROR(WriteWholeFile(manifest_temporary, text, sync));
  UREC_RETURN_IF_ERROR(io::RenameFile(manifest_temporary, summary->manifest_path));
  summary->shards = manifest.shard_count;
  summary->uuid = manifest.uuid;
  summary->generation = pending.generation;
  if (sync) UREC_RETURN_IF_ERROR(io::SyncDirectory(out_dir));
  return Status::OK();
}

format::Manifest ManifestOf(uint64_t generation, std::vector<format::Segment> segments) {
  format::Manifest manifest;
  manifest.generation = generation;
  for (const format::Segment& s : segments) manifest.shard_count += s.shard_count;
  manifest.uuid = format::DatasetUuidOf(segments);
  manifest.segments = std::move(segments);
  return manifest;
}

format::Segment AsSegment(const SegmentInfo& segment, uint64_t generation, uint64_t first_id) {
  format::Segment named{generation, segment.shards, first_id, segment.uuid, {}, segment.dropped_fields};
  for (const FieldGroupInfo& g : segment.field_groups) named.groups.push_back({g.generation, g.uuid, g.fields});
  return named;
}

std::string EncodePartFile(const PartFile& part) {
  return std::string(format::kPartFileFirstLine) + "\npart " + std::to_string(part.part) + "\nparts " +
         std::to_string(part.parts) + "\nshards " + std::to_string(part.shards) + "\nrecords " +
         std::to_string(part.records) + "\n";
}

Result<PartFile> DecodePartFile(const std::string& text, const std::string& path) {
  PartFile part;
  unsigned long long number = 0, count = 0, shards = 0, records = 0;
  int consumed = 0;
  const std::string pattern = std::string(format::kPartFileFirstLine) + "\npart %llu\nparts %llu\nshards %llu\nrecords %llu\n%n";
  if (text.size() > 256 || std::sscanf(text.c_str(), pattern.c_str(), &number, &count, &shards, &records, &consumed) != 4 ||
      static_cast<size_t>(consumed) != text.size() || count == 0 || count > format::kMaxShards || number >= count ||
      shards == 0 || shards > format::kMaxShards) {
    return Status::Corruption(path + ": not a complete part file");
  }
  part.part = static_cast<uint32_t>(number);
  part.parts = static_cast<uint32_t>(count);
  part.shards = static_cast<uint32_t>(shards);
  part.records = records;
  if (EncodePartFile(part) != text) return Status::Corruption(path + ": not a complete part file");
  return part;
}

}  // namespace unirecord::dataset
