// ListVersions, TagVersion, CollectGarbage (unirecord/versions.h;
// format/SPEC.md section 1.3).
#include "unirecord/versions.h"

#include <algorithm>
#include <unistd.h>

#include <ctime>
#include <map>
#include <set>

#include "dataset/commit.h"
#include "format/file_names.h"
#include "format/manifest.h"
#include "io/file.h"

namespace unirecord {
namespace {

using dataset::DatasetPath;

// NotFound messages end by saying why a manifest is needed.
Result<DatasetPath> Resolve(const std::string& path) {
  return dataset::ResolveDatasetPath(path, "versions are kept only by those");
}

// The kept versions' manifests by generation (the latest included, also
// when a dataset from before format 1.2 kept no copy of it yet).
Result<std::map<uint64_t, format::Manifest>> KeptManifests(const DatasetPath& d, format::Manifest* latest) {
  UREC_ASSIGN_OR_RETURN(*latest, format::ReadManifest(d.dir, d.name));
  UREC_ASSIGN_OR_RETURN(std::vector<std::string> files, io::ListDirectory(d.dir));
  std::map<uint64_t, format::Manifest> kept;
  for (const std::string& file : files) {
    const format::FileOfDataset of = format::ClassifyFile(file, d.name);
    if (of.role != format::FileRole::kVersion || of.generation > latest->generation) continue;
    UREC_ASSIGN_OR_RETURN(format::Manifest manifest, format::ReadVersionManifest(d.dir, d.name, of.generation));
    kept.emplace(of.generation, std::move(manifest));
  }
  kept.emplace(latest->generation, *latest);
  return kept;
}

// When generation `g` committed: its kept manifest's mtime (NAME.uset's for
// a latest version without one).
int64_t CommittedAt(const DatasetPath& d, uint64_t g) {
  Result<io::FileFacts> facts = io::StatFile(io::JoinPath(d.dir, format::VersionFileName(d.name, g)));
  if (!facts.ok()) facts = io::StatFile(io::JoinPath(d.dir, format::ManifestFileName(d.name)));
  return facts.ok() ? facts->modified_ns / 1000000000 : 0;
}

Status WriteTags(const DatasetPath& d, const format::Tags& tags) {
  const std::string temporary = io::JoinPath(d.dir, format::TemporaryTagsFileName(d.name, ::getpid()));
  UREC_RETURN_IF_ERROR(dataset::WriteWholeFile(temporary, format::EncodeTags(tags), /*sync=*/true));
  UREC_RETURN_IF_ERROR(io::RenameFile(temporary, io::JoinPath(d.dir, format::TagsFileName(d.name))));
  return io::SyncDirectory(d.dir);
}

// Runs `work(tags)` under the dataset's writers' lock, `tags` the sound
// ones LockDataset read.
template <typename Work>
Status UnderLock(const DatasetPath& d, const std::string& who, Work work) {
  UREC_ASSIGN_OR_RETURN(dataset::DatasetLock locked, dataset::LockDataset(d.dir, d.name, who));
  Status status = work(std::move(locked.tags));
  dataset::ReleaseDataset(d.dir, d.name, &locked.lock);
  return status;
}

}  // namespace

Result<VersionList> ListVersions(const std::string& path) {
  UREC_ASSIGN_OR_RETURN(const DatasetPath d, Resolve(path));
  format::Manifest latest;
  UREC_ASSIGN_OR_RETURN(const auto kept, KeptManifests(d, &latest));
  UREC_ASSIGN_OR_RETURN(format::TagsFile tags, format::ReadTags(d.dir, d.name));
  std::set<uint64_t> generations;
  for (const auto& [g, manifest] : kept) generations.insert(g);
  format::CheckTagsAgainst(generations, &tags);
  VersionList list;
  for (const std::string& problem : tags.problems) {
    list.tag_problems.push_back(problem + " (writers refuse this dataset until the tags file is repaired)");
  }
  for (const auto& [g, manifest] : kept) {
    VersionInfo v;
    v.generation = g;
    v.latest = g == latest.generation;
    for (const auto& [tag, tagged] : tags.tags) {
      if (tagged == g) v.tags.push_back(tag);
    }
    v.segments = static_cast<uint32_t>(manifest.segments.size());
    v.shards = manifest.shard_count;
    v.uuid = manifest.uuid;
    v.committed_unix_s = CommittedAt(d, g);
    list.versions.push_back(std::move(v));
  }
  return list;
}

Status TagVersion(const std::string& path, const std::string& tag, uint64_t version) {
  UREC_RETURN_IF_ERROR(format::CheckTagName(tag));
  UREC_ASSIGN_OR_RETURN(const DatasetPath d, Resolve(path));
  return UnderLock(d, "tag", [&](format::Tags tags) -> Status {
    format::Manifest latest;
    UREC_ASSIGN_OR_RETURN(const auto kept, KeptManifests(d, &latest));
    const uint64_t g = version == 0 ? latest.generation : version;
    if (kept.count(g) == 0) {
      return Status::NotFound(io::JoinPath(d.dir, d.name) + ": version " + std::to_string(g) +
                              " is not kept (urec versions lists the kept ones)");
    }
    tags[tag] = g;
    return WriteTags(d, tags);
  });
}

Status UntagVersion(const std::string& path, const std::string& tag, uint64_t version) {
  UREC_RETURN_IF_ERROR(format::CheckTagName(tag));
  UREC_ASSIGN_OR_RETURN(const DatasetPath d, Resolve(path));
  return UnderLock(d, "untag", [&](format::Tags tags) -> Status {
    const auto found = tags.find(tag);
    if (found == tags.end()) return Status::NotFound(io::JoinPath(d.dir, d.name) + ": no tag '" + tag + "'");
    if (version != 0 && found->second != version) {
      return Status::InvalidArgument(io::JoinPath(d.dir, d.name) + ": tag '" + tag + "' names version " +
                                     std::to_string(found->second) + ", not " + std::to_string(version) +
                                     " (kept as it is)");
    }
    tags.erase(found);
    return WriteTags(d, tags);
  });
}

Result<GcSummary> CollectGarbage(const std::string& path, const GcOptions& options) {
  if (options.keep_last == 0 && options.keep_newer_than_s < 0) {
    return Status::InvalidArgument(
        "gc: say which versions to keep (GcOptions::keep_last >= 1, or keep_newer_than_s >= 0)");
  }
  UREC_ASSIGN_OR_RETURN(const DatasetPath d, Resolve(path));
  GcSummary summary;
  const Status status = UnderLock(d, "gc", [&](const format::Tags& tags) -> Status {
    format::Manifest latest;
    UREC_ASSIGN_OR_RETURN(const auto kept, KeptManifests(d, &latest));
    std::set<uint64_t> tagged;
    for (const auto& [tag, g] : tags) tagged.insert(g);
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    size_t newer = 0;  // versions after the one looked at
    for (auto it = kept.rbegin(); it != kept.rend(); ++it, ++newer) {
      const uint64_t g = it->first;
      const bool by_count = options.keep_last > 0 && newer < options.keep_last;
      const bool by_age = options.keep_newer_than_s >= 0 && now - CommittedAt(d, g) < options.keep_newer_than_s;
      const bool stays = g == latest.generation || tagged.count(g) > 0 || by_count || by_age;
      (stays ? summary.kept : summary.removed).push_back(g);
    }
    std::sort(summary.kept.begin(), summary.kept.end());
    std::sort(summary.removed.begin(), summary.removed.end());
    if (options.dry_run || summary.removed.empty()) return Status::OK();
    // What each file costs before, to count what went.
    UREC_ASSIGN_OR_RETURN(const std::vector<std::string> before, io::ListDirectory(d.dir));
    std::map<std::string, io::FileFacts> facts;
    for (const std::string& file : before) {
      if (format::ClassifyFile(file, d.name).role == format::FileRole::kOther) continue;
      if (Result<io::FileFacts> f = io::StatFile(io::JoinPath(d.dir, file)); f.ok()) facts.emplace(file, *f);
    }
    for (const uint64_t g : summary.removed) io::RemoveFileIfExists(io::JoinPath(d.dir, format::VersionFileName(d.name, g)));
    UREC_RETURN_IF_ERROR(dataset::RemoveUnusedFiles(d.dir, d.name).status());
    for (const auto& [file, f] : facts) {
      if (io::PathExists(io::JoinPath(d.dir, file))) continue;
      ++summary.files_removed;
      if (f.links == 1) summary.bytes_freed += f.size;
    }
    return io::SyncDirectory(d.dir);
  });
  if (!status.ok()) return status;
  return summary;
}

}  // namespace unirecord
