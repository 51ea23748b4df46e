// The steps of format/SPEC.md section 1.1 ("Writing") that Writer and
// StagedWrite share: the lock, cleanup, and the commit by one manifest rename.
#ifndef UNIRECORD_DATASET_COMMIT_H_
#define UNIRECORD_DATASET_COMMIT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "format/manifest.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/status.h"
#include "unirecord/writer.h"

namespace unirecord::dataset {

// InvalidArgument unless `name` is a dataset name (non-empty, no '/', not
// starting with '.'); `who` starts the message ("writer").
Status CheckDatasetName(const std::string& name, const std::string& who);

// InvalidArgument unless `label` is lowercase letters a-z and not among
// `reports` (label, text).
Status CheckReportLabel(const std::string& label, const std::vector<std::pair<std::string, std::string>>& reports,
                        const std::string& who);

// A dataset with a manifest: a folder holding one, DIR/NAME or
// DIR/NAME.uset. NotFound (ending "; " + `why`) when there is no manifest,
// InvalidArgument for a folder of several.
struct DatasetPath {
  std::string dir;
  std::string name;
};
Result<DatasetPath> ResolveDatasetPath(const std::string& path, const std::string& why);

// Writes `bytes` to a new file at `path`, fsynced when `sync`.
Status WriteWholeFile(const std::string& path, const std::string& bytes, bool sync);

// Under the dataset's lock: removes every file of dataset `name` in `dir`
// that no kept version uses (format/SPEC.md section 1.3: uncommitted
// generations and their kept manifests, versions `urec gc` dropped,
// pre-manifest files a manifest replaced, dead writers' temporaries and
// staged parts). Returns the highest generation number seen.
Result<uint64_t> RemoveUnusedFiles(const std::string& dir, const std::string& name);

// Steps 1 and 2: creates `out_dir` (one level), takes the writers' lock of
// `name` (FailedPrecondition naming the holder when another writer has it)
// and cleans up. `generation` is the one the holder commits. A staged write
// passes its token: the lock file names it while the run holds the lock.
// Every writer refuses a dataset whose tags file has a line that does not
// read or names a version that is not kept (Corruption naming the file and
// the line, format/SPEC.md section 1.3), so that no commit or collection
// goes on past a tag that stopped protecting its version.
struct DatasetLock {
  io::FileLock lock;
  uint64_t generation = 0;
  format::Tags tags;  // NAME.utag's, every one naming a kept version
};
Result<DatasetLock> LockDataset(const std::string& out_dir, const std::string& name, const std::string& who,
                                const std::string& staged_token = "");

// Whether staged write `token` of `name` still holds the lock: its lock
// file names it. False once the run released the lock (committed or
// abandoned) or the next writer took it; true after a killed driver until
// then.
bool StagedWriteUnderWay(const std::string& out_dir, const std::string& name, const std::string& token);

// Step 5 (and the end of a failed write): removes what the committed
// generation does not use, then releases the lock.
void ReleaseDataset(const std::string& out_dir, const std::string& name, io::FileLock* lock);

// Steps 3 and 4 for files already written: renames `moves` (temporary ->
// generation name), writes the reports (label, text) under their generation
// names, fsyncs the directory, keeps the manifest (NAME.gGGGGGG.uver) and
// commits it (NAME.uset). Fills `summary`'s report_paths, manifest_path,
// shards, uuid and generation.
struct PendingGeneration {
  uint64_t generation = 0;
  // The dataset's segments in id order: those kept from earlier generations,
  // then (usually) one of files named for `generation`.
  std::vector<format::Segment> segments;
  std::vector<std::pair<std::string, std::string>> moves;
  std::vector<std::pair<std::string, std::string>> reports;
  bool sync = true;
};
Status CommitGeneration(const std::string& out_dir, const std::string& name, const PendingGeneration& pending,
                        WriterSummary* summary);

// The manifest committing `segments` as generation `generation`: its shard
// count and dataset UUID (format::DatasetUuidOf).
format::Manifest ManifestOf(uint64_t generation, std::vector<format::Segment> segments);


// The segment as a manifest names it, at `generation` from id `first_id`,
// its field groups at their own generations.
format::Segment AsSegment(const SegmentInfo& segment, uint64_t generation, uint64_t first_id);

// The file that says a staged part is complete (format/file_names.h,
// StagedPartFileName): text lines "unirecord-part 1", "part K", "parts N",
// "shards M", "records R".
struct PartFile {
  uint32_t part = 0;
  uint32_t parts = 0;
  uint32_t shards = 0;
  uint64_t records = 0;
};
std::string EncodePartFile(const PartFile& part);
// Corruption naming `path` unless `text` is exactly such a file.
Result<PartFile> DecodePartFile(const std::string& text, const std::string& path);

}  // namespace unirecord::dataset

#endif  // UNIRECORD_DATASET_COMMIT_H_
