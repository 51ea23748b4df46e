// The one place that spells and parses the names of a dataset's files in its
// folder (format/SPEC.md section 1). Writer, reader and converter all go
// through here.
//
// Generation 0 is the layout written before manifests existed (no generation
// tag, no manifest); every commit of today's writer is a generation >= 1.
#ifndef UNIRECORD_FORMAT_FILE_NAMES_H_
#define UNIRECORD_FORMAT_FILE_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::format {

// NAME-SSSSS-of-NNNNN.urec (generation 0) or NAME-SSSSS-of-NNNNN.gGGGGGG.urec.
std::string ShardFileName(const std::string& name, uint64_t generation, uint32_t shard, uint32_t count);
// NAME-SSSSS-of-NNNNN.gGGGGGG.fFFFFFF.urec: the column file of field group F
// beside shard S of the segment of generation G (SPEC.md section 1.4);
// group_generation 0 is the shard itself.
std::string ColumnFileName(const std::string& name, uint64_t generation, uint64_t group_generation, uint32_t shard,
                           uint32_t count);
// The index beside a shard: the same path with extension .uidx.
std::string IndexPathFor(const std::string& shard_path);
// NAME.LABEL.tsv (generation 0) or NAME.LABEL.gGGGGGG.tsv: a report committed
// with the dataset (the converter's "rejects").
std::string ReportFileName(const std::string& name, uint64_t generation, const std::string& label);
// NAME.uset: the manifest naming the committed generation.
std::string ManifestFileName(const std::string& name);
// The dataset name of a manifest file name ("train.uset" -> "train").
std::optional<std::string> ManifestDatasetName(const std::string& file);
// NAME.gGGGGGG.uver: the kept manifest of generation G (a version).
std::string VersionFileName(const std::string& name, uint64_t generation);
// NAME.utag: the tags naming versions.
std::string TagsFileName(const std::string& name);
// .NAME.lock: the writers' lock.
std::string LockFileName(const std::string& name);
// .NAME.tmp-PID-TAG.partial: a file being written by process PID, where TAG
// names what it becomes: SSSSS.urec / SSSSS.uidx (shard SSSSS and its
// index), LABEL.tsv (a report) or uset (the manifest).
std::string TemporaryShardFileName(const std::string& name, long pid, uint32_t shard);
std::string TemporaryIndexFileName(const std::string& name, long pid, uint32_t shard);
std::string TemporaryReportFileName(const std::string& name, long pid, const std::string& label);
std::string TemporaryManifestFileName(const std::string& name, long pid);
std::string TemporaryVersionFileName(const std::string& name, long pid);
std::string TemporaryTagsFileName(const std::string& name, long pid);

// The files of a staged write (StagedWrite and PartWriter, staged_write.h), all of
// them temporaries of the form above with the write's TOKEN (decimal digits)
// in the PID place, so that the next writer removes whatever a killed run
// left:
//   .NAME.tmp-TOKEN-pKKKKK.SSSSS.urec.partial   shard SSSSS of part KKKKK, staged
//   .NAME.tmp-TOKEN-pKKKKK.SSSSS.uidx.partial   its index
//   .NAME.tmp-TOKEN-pKKKKK.part.partial         part KKKKK is complete (its shard count)
//   .NAME.tmp-TOKEN-pKKKKK.aATTEMPT.SSSSS.urec.partial (and .uidx): being
//     written by one attempt at the part (ATTEMPT: lowercase hex, random),
//     renamed to the staged names when the part is complete.
std::string StagedShardFileName(const std::string& name, const std::string& token, uint32_t part, uint32_t shard);
std::string StagedIndexFileName(const std::string& name, const std::string& token, uint32_t part, uint32_t shard);
std::string StagedPartFileName(const std::string& name, const std::string& token, uint32_t part);
std::string PartAttemptShardFileName(const std::string& name, const std::string& token, uint32_t part,
                                     const std::string& attempt, uint32_t shard);
std::string PartAttemptIndexFileName(const std::string& name, const std::string& token, uint32_t part,
                                     const std::string& attempt, uint32_t shard);
std::string PartAttemptPartFileName(const std::string& name, const std::string& token, uint32_t part,
                                    const std::string& attempt);
// A staged write's token: 1 to 20 decimal digits.
bool IsStagingToken(const std::string& token);

// A shard or index file name taken apart; any dataset name.
struct ShardFileParts {
  std::string name;
  uint64_t generation = 0;
  uint64_t group_generation = 0;  // a column file's F; 0 for a shard
  uint32_t shard = 0;
  uint32_t count = 0;
  bool is_index = false;
};
std::optional<ShardFileParts> ParseShardFileName(const std::string& file);

// What `file` (a name in the folder) is to the dataset `name`.
enum class FileRole {
  kOther,      // not a file of this dataset: never touched
  kShard,      // .urec or .uidx of `generation` (a column file: of `group_generation` too)
  kReport,     // report of `generation` ("rejects" at generation 0)
  kManifest,
  kVersion,    // kept manifest of `generation`
  kTags,
  kLock,
  kTemporary,  // a writer's temporary, today's or an older version's
};
struct FileOfDataset {
  FileRole role = FileRole::kOther;
  uint64_t generation = 0;  // kShard, kReport, kVersion
  uint64_t group_generation = 0;  // kShard: a column file's field group
};
FileOfDataset ClassifyFile(const std::string& file, const std::string& name);

// What a folder holds, judged from the names of its files: a local
// directory's entries or a remote folder's listing, so that both open the
// same folder alike. Shards of a generation no manifest names are an
// unfinished or superseded write, never a dataset; shards of generation 0
// whose name has no manifest are a dataset of the layout before manifests.
struct FolderDatasets {
  std::vector<std::string> committed;  // names of the datasets with a manifest, sorted
  std::vector<std::string> loose;      // file names of the shards without a manifest, sorted
  bool unfinished = false;             // shards of a generation > 0 were left out
};
FolderDatasets FindFolderDatasets(const std::vector<std::string>& files);
// InvalidArgument when `found` is more than one dataset (two manifests, or
// a manifest and loose shards), naming them: "FOLDER: holds more than one
// dataset (a, b); open one as DIR/NAME" (`globs`: ", or its shards with a
// glob like DIR/NAME-*.urec" too). OK otherwise.
Status CheckOneDataset(const std::string& folder, const FolderDatasets& found, bool globs);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_FILE_NAMES_H_
