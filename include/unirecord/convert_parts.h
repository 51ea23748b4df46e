// Conversions in parts: the converters of convert.h cut into parts that any
// processes may run, committed by one (StagedWrite, staged_write.h;
// unirecord.distributed runs them on Dask). ConvertImageFolder is these
// three steps (PlanImageFolder, ConvertImageFolderPart, CommitImageFolder)
// in one process, so the bytes are the same however the parts are spread:
// with num_shards = N, shard s holds the written files among candidates
// [s*n/N, (s+1)*n/N) of the n candidates in folder order (a rejected file
// leaves its own shard one record short), and a part is a run of whole
// shards. ConvertCoco, ConvertJsonl and ConvertCsv cut the same way
// (PlanSource, ConvertSourcePart, CommitSource).
#ifndef UNIRECORD_CONVERT_PARTS_H_
#define UNIRECORD_CONVERT_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "unirecord/convert.h"
#include "unirecord/staged_write.h"
#include "unirecord/status.h"

namespace unirecord {

// One file of an image folder as ConvertImageFolder lists it.
struct ImageFolderFile {
  std::string path;  // relative to the folder root, '/'-separated
  // Index of its class; -1 for a file directly in the root (no class).
  int64_t label = -1;
  // A candidate image (an image extension) inside a class folder.
  bool is_candidate = false;
};

// The listing and the cut, made once by the driver. Refuses what
// ConvertImageFolder refuses before writing (bad SRC, OUT inside SRC, no
// candidates, num_shards over the candidates).
struct ImageFolderPlan {
  std::string out;                   // where the dataset goes (OUT)
  std::string name;                  // the dataset name (ConvertOptions::name or SRC's)
  bool allow_empty = false;          // ConvertOptions::allow_empty: the commit's
  std::vector<std::string> classes;  // label i is classes[i]
  std::vector<ImageFolderFile> files;  // every file left to convert, in folder order
  uint64_t candidates = 0;
  // With num_shards = N: N + 1 entries; shard s converts
  // files[shard_starts[s], shard_starts[s + 1]) (files that are not
  // candidates go with the shard before them). Empty without num_shards:
  // target_shard_bytes cuts, so the whole folder is one part.
  std::vector<size_t> shard_starts;
  // Class folders the class list cannot store, reported before every part's
  // rows (see ConvertImageFolder), and how many image and other files they held.
  std::vector<ConvertRejection> left_out;
  uint64_t left_out_rejected = 0;
  uint64_t left_out_skipped = 0;
};
Result<ImageFolderPlan> PlanImageFolder(const std::string& src, const std::string& out,
                                        const ConvertOptions& options = {});

// One part: a run of whole shards of a plan (or, without num_shards, the
// whole plan as one part).
struct ImageFolderPart {
  std::vector<std::string> classes;
  std::vector<ImageFolderFile> files;
  // Where each of the part's shards starts in `files` (the first at 0); empty:
  // ConvertOptions' target_shard_bytes (default ~1 GiB) cuts.
  std::vector<size_t> shard_starts;
  uint32_t part = 0;
  uint32_t num_parts = 1;
};
// Shards [first_shard, end_shard) of `plan`, as part `part` of `num_parts`.
ImageFolderPart PartOfPlan(const ImageFolderPlan& plan, uint32_t first_shard, uint32_t end_shard, uint32_t part,
                           uint32_t num_parts);

// Converts `part` into the staged write `token` of dataset `name` in `out`
// (PartWriter). The report covers this part's files only (written,
// rejected, skipped, not_written, byte counts); options.on_progress counts
// the part's candidates.
Result<ConvertReport> ConvertImageFolderPart(const std::string& src, const ImageFolderPart& part,
                                             const std::string& out, const std::string& name,
                                             const std::string& token, const ConvertOptions& options = {});

// Adds the merged rejects report (the plan's left-out rows, then each
// part's rows in part order) to `staged`, commits it, and returns the
// conversion's report: the parts' counts summed, as ConvertImageFolder's.
Result<ConvertReport> CommitImageFolder(StagedWrite& staged, const ImageFolderPlan& plan,
                                        const std::vector<ConvertReport>& parts);

// COCO, JSON Lines and CSV conversions in parts, for engines that run them
// on several machines (unirecord.distributed): as for image folders above,
// a part is a run of whole shards, committed once by the driver, and the
// bytes equal those of ConvertCoco / ConvertJsonl / ConvertCsv with the same
// options. Nothing but paths is shipped: the driver (PlanSource) and each
// part (ConvertSourcePart) read the same input, which cuts the same way.
enum class SourceFormat { kCoco, kJsonl, kCsv, kVideoFolder, kAudioFolder };
struct ConvertSource {
  SourceFormat format = SourceFormat::kCoco;
  std::string input;   // the COCO annotations file, the manifest, or the video or audio folder
  std::string images;  // kCoco: the images folder
  std::string schema;  // kJsonl, kCsv: the schema file
};

struct SourcePlan {
  std::string out;           // where the dataset goes (OUT)
  std::string name;          // the dataset name (ConvertOptions::name or the input's)
  bool allow_empty = false;  // ConvertOptions::allow_empty: the commit's
  // num_shards + 1 entries: shard s holds samples [shard_starts[s], shard_starts[s + 1]).
  std::vector<size_t> shard_starts;
  ConvertReport head;  // what the input reported before any part (left-out entries)
};

// Reads and cuts the input; refuses what the local converter refuses, and
// a plan without options.num_shards (the parts are runs of its shards).
Result<SourcePlan> PlanSource(const ConvertSource& source, const std::string& out, const ConvertOptions& options);

// Writes shards [first_shard, end_shard) into the staged write `token` of
// `plan_name` in `out`, as part `part` of `num_parts`. `options` must be
// the plan's (num_shards, name, limits); threads and on_progress are the
// part's. The report covers the part's samples only.
Result<ConvertReport> ConvertSourcePart(const ConvertSource& source, const std::string& out,
                                        const std::string& plan_name, const std::string& token, uint32_t first_shard,
                                        uint32_t end_shard, uint32_t part, uint32_t num_parts,
                                        const ConvertOptions& options);

// The merged rejects report (the plan's rows, then each part's in part
// order) added to `staged`, committed; the conversion's summed report.
Result<ConvertReport> CommitSource(StagedWrite& staged, const SourcePlan& plan, const std::vector<ConvertReport>& parts);

}  // namespace unirecord

#endif  // UNIRECORD_CONVERT_PARTS_H_
