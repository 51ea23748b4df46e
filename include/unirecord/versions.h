// The versions of a dataset (format/SPEC.md section 1.3). Every commit of a
// dataset with a manifest is a version, numbered by its generation, and is
// kept: a Dataset opens any kept one (DatasetOptions::version or ::tag) and
// reads it byte for byte while newer ones commit. Versions go only when
// CollectGarbage says so; then the files no kept version uses go with them.
// CompactDataset rewrites the latest version as one segment (a new version).
//
//   UREC_ASSIGN_OR_RETURN(VersionList listed, ListVersions("out/train"));
//   UREC_RETURN_IF_ERROR(TagVersion("out/train", "paper-v1", listed.versions.back().generation));
//   GcOptions gc;
//   gc.keep_last = 3;  // and every tagged one
//   UREC_ASSIGN_OR_RETURN(GcSummary freed, CollectGarbage("out/train", gc));
//
// `path` everywhere: a folder holding one dataset with a manifest, DIR/NAME
// or DIR/NAME.uset. Tagging and collecting take the dataset's writers' lock
// (FailedPrecondition while a writer holds it) and, as every writer, refuse
// a dataset whose tags file is damaged (Corruption naming it; see
// VersionList::tag_problems).
#ifndef UNIRECORD_VERSIONS_H_
#define UNIRECORD_VERSIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "unirecord/status.h"
#include "unirecord/writer.h"

namespace unirecord {

struct VersionInfo {
  uint64_t generation = 0;
  bool latest = false;            // the one NAME.uset commits
  std::vector<std::string> tags;  // sorted
  uint32_t segments = 0;
  uint32_t shards = 0;
  std::string uuid;               // the dataset UUID of that version
  int64_t committed_unix_s = 0;   // when it committed (its kept manifest's mtime)
};

struct VersionList {
  std::vector<VersionInfo> versions;  // oldest first
  // A warning per line of the tags file that does not read or names a
  // version that is not kept, naming the file and the line: its tag is in
  // no VersionInfo, and every writer refuses the dataset until the file is
  // repaired (format/SPEC.md section 1.3). Readers go on: a version opens by
  // number, and by every tag of a sound line.
  std::vector<std::string> tag_problems;
};

// Every kept version. NotFound when `path` has no manifest; Corruption
// naming the file for a kept manifest that does not read.
Result<VersionList> ListVersions(const std::string& path);

// Names kept version `version` (0: the latest) `tag`: 1 to 64 of a-z 0-9 . _ -,
// starting with a letter. An existing tag is moved. NotFound for a version
// that is not kept.
Status TagVersion(const std::string& path, const std::string& tag, uint64_t version = 0);
// Removes `tag`; with `version` != 0 only when the tag names that version
// (InvalidArgument otherwise, and the tag stays). NotFound when there is no
// such tag.
Status UntagVersion(const std::string& path, const std::string& tag, uint64_t version = 0);

struct GcOptions {
  // Keep the newest `keep_last` versions (>= 1; 0: not a rule).
  uint32_t keep_last = 0;
  // Keep the versions committed less than this many seconds ago (-1: not a
  // rule).
  int64_t keep_newer_than_s = -1;
  // Say what would go, remove nothing.
  bool dry_run = false;
};
// A version goes when every rule given lets it go; the latest and tagged
// versions always stay. InvalidArgument when no rule is given.
struct GcSummary {
  std::vector<uint64_t> removed;  // generations, ascending
  std::vector<uint64_t> kept;
  uint64_t files_removed = 0;
  uint64_t bytes_freed = 0;       // of files with no other link
};
Result<GcSummary> CollectGarbage(const std::string& path, const GcOptions& options);

struct CompactOptions {
  // How the records are cut into shards, as WriterOptions: set at most one;
  // both 0 means target_shard_bytes = 1 GiB (the converters' default).
  uint32_t num_shards = 0;
  uint64_t target_shard_bytes = 0;
  // Threads for the closing work of the new shards (WriterOptions::threads).
  // Default: 1.
  int threads = 1;
  // fsync the new files and the directory. Default: true.
  bool sync = true;
};

// Rewrites the latest version as one segment (format/SPEC.md 1.2) and
// commits it as a new version: the same records and ids, schema (zstd
// fields stay zstd; added fields move into the shards, dropped ones are
// gone), metadata (a grown class list: the dataset's) and page settings. This is how a dataset appended to many times gets its manifest
// small again (a manifest holds about 14,000 segments, docs/scale.md).
// Earlier versions stay until collected; their readers keep reading. A
// float16 scalar NaN keeps its sign but not its payload bits (a Record reads
// it as a float). Holds the writers' lock as any writer.
Result<WriterSummary> CompactDataset(const std::string& path, const CompactOptions& options = {});

}  // namespace unirecord

#endif  // UNIRECORD_VERSIONS_H_
