// Internal to the convert layer: what every converter shares. Worker threads
// read and check the source images (and transcode JPEGs) into a ring of
// slots while the calling thread writes them, strictly in order, as records:
// the output never depends on the thread count. Also the rejects report, the
// shard cut by candidate count and the local driver of a staged write.
#ifndef UNIRECORD_SRC_CONVERT_FILE_RECORDS_H_
#define UNIRECORD_SRC_CONVERT_FILE_RECORDS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "convert/source_image.h"
#include "unirecord/convert.h"
#include "unirecord/convert_parts.h"
#include "unirecord/media_value.h"
#include "unirecord/schema.h"
#include "unirecord/writer.h"

namespace unirecord::convert_internal {

// Shards of about 1 GiB when neither a count nor a size is given.
inline constexpr uint64_t kDefaultShardBytes = uint64_t{1} << 30;

double SecondsSince(std::chrono::steady_clock::time_point start);

// The rejects report: a header row, then one "path<TAB>reason" row per file.
std::string RejectsTsv(const std::vector<ConvertRejection>& rows);

// Absolute, symlinks resolved as far as the path exists.
Result<std::string> ResolvePath(const std::string& path);
// A folder converter's default dataset name: SRC's last component ("data"
// when it has none).
std::string DefaultName(const std::string& src);
// InvalidArgument when `out` is `src` or inside it.
Status CheckOutputOutsideSource(const std::string& src, const std::string& out);

// Shard s starts at candidate floor(s * n / N) of the n candidates (shard 0
// at the first file): the file index of each start, N + 1 entries.
std::vector<size_t> ShardStarts(const std::vector<ImageFolderFile>& files, uint64_t candidates, uint32_t shards);

// What a converter adds to the image fields of its records.
struct ImageRecordHooks {
  // Sets file i's fields other than the image's (image, width, height,
  // jpeg_layout, source_size, source_xxh3, found in the schema by name).
  std::function<Status(size_t i, RecordBuilder& record)> fill;
  // A reason to reject file i although its image is usable ("": keep it).
  std::function<std::string(size_t i, const SourceImageInfo& info)> reject;
  // The rejects report's reason for file i, which is not a candidate.
  std::function<std::string(size_t i)> skip_reason;
  // Optional: a reason to reject candidate i whatever its file holds (a
  // manifest line that does not parse), checked first ("": go on).
  std::function<std::string(size_t i)> invalid;
  // The image field's name. Empty: records without an image (a manifest of
  // token sequences): no file is read, the records hold what `fill` sets.
  std::string image_field = "image";
  // Set: the files are video or audio containers and `image_field` a field
  // of this kind: each file's best stream of it is demuxed (media::Demux)
  // into the field's media value on the reading threads; no image fields
  // (width, height, ...) are set. A file FFmpeg cannot read, without such a
  // stream, cut short, corrupt or with absurd parameters is rejected with
  // Demux's reason.
  std::optional<MediaKind> media;
  // Optional, with `media`: rewrites candidate i's media value before it is
  // stored (a manifest row's start/end cut it); an error rejects the file.
  std::function<Status(size_t i, std::string* value)> prepare_media;
  // Optional: how candidate i is named when strict mode stops at it
  // (default: ROOT/PATH, the file).
  std::function<std::string(size_t i)> strict_name;
};

// Where a part goes: part `part` of `num_parts` of the staged write `token`
// of dataset `name` in `out`, with these records and metadata.
struct PartTarget {
  std::string out;
  std::string name;
  std::string token;
  uint32_t part = 0;
  uint32_t num_parts = 1;
  Schema schema;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Writes part `target` (PartWriter): a record for each candidate of `files`
// (paths relative to `root`), in order, starting a new shard at each of
// shard_starts after the first (empty: options.target_shard_bytes, or
// kDefaultShardBytes, cuts). Files that are not candidates and images that
// are not usable go to not_written (counted as skipped and rejected);
// strict: Corruption at the first rejected one. The report holds the
// part's counts, name, shards, bytes, shard paths and seconds;
// options.on_progress counts the candidates.
Result<ConvertReport> WriteImagePart(const PartTarget& target, const std::string& root,
                                     const std::vector<ImageFolderFile>& files,
                                     const std::vector<size_t>& shard_starts, const ConvertOptions& options,
                                     const ImageRecordHooks& hooks);

// A converter's input read and cut once (COCO, JSON Lines, CSV): the files
// in record order under `root`, where each of num_shards shards starts
// (N + 1 entries; empty: target_shard_bytes cuts), how records are made
// (hooks, indexed by position in `files`) and what the input reported
// before any part (`head`). A distributed task prepares its own copy from
// the same input, which cuts it the same way: only paths are shipped.
struct PreparedConversion {
  std::string name;
  std::string root;
  std::vector<ImageFolderFile> files;
  std::vector<size_t> shard_starts;
  Schema schema;
  std::vector<std::pair<std::string, std::string>> metadata;
  ImageRecordHooks hooks;
  // Optional: adds what the hooks counted while a part was written to its
  // report, and starts the count over (COCO's annotations).
  std::function<void(ConvertReport* part)> finish_part;
  ConvertReport head;
  std::shared_ptr<void> input;  // the parsed input the hooks read
};

// The whole conversion of `c` into `out` (ConvertLocally, one part).
Result<ConvertReport> ConvertPrepared(const PreparedConversion& c, const std::string& out, const ConvertOptions& options);

// Shards [first_shard, end_shard) of `c` (cut by num_shards) written as part
// `part` of `num_parts` of the staged write `token` in `out`.
Result<ConvertReport> WritePreparedShards(const PreparedConversion& c, const std::string& out, const std::string& token,
                                          uint32_t first_shard, uint32_t end_shard, uint32_t part, uint32_t num_parts,
                                          const ConvertOptions& options);

// The inputs of ConvertCoco (coco.cc) and ConvertJsonl / ConvertCsv
// (manifest_convert.cc), read and cut; refused as those refuse them (COCO
// also refuses an OUT inside its images folder).
Result<PreparedConversion> PrepareCoco(const std::string& annotations, const std::string& images_dir,
                                       const std::string& out, const ConvertOptions& options);
Result<PreparedConversion> PrepareManifest(const std::string& manifest, const std::string& schema_path,
                                           const ConvertOptions& options, bool csv);
// ConvertVideoFolder's / ConvertAudioFolder's (media_folder.cc).
Result<PreparedConversion> PrepareMediaFolder(const std::string& src, const std::string& out,
                                              const ConvertOptions& options, MediaKind kind);

// Where a staged write commits: dataset `name` in `out`, and whether a
// conversion that wrote no record may commit (ConvertOptions::allow_empty).
struct CommitTarget {
  std::string out;
  std::string name;
  bool allow_empty = false;
};

// Sums the parts' reports into `head` (a report holding what was reported
// before any part), adds the rejects report to `staged` and commits it.
// When the parts wrote no record and !target.allow_empty, nothing is
// committed: InvalidArgument naming the rejects report, saved as
// OUT/NAME.rejected.tsv (removed by the next commit of NAME).
Result<ConvertReport> CommitParts(StagedWrite& staged, const CommitTarget& target, ConvertReport head,
                                  const std::vector<ConvertReport>& parts);

// Writes part `part` of `num_parts` of a staged write `token` (the records,
// not the commit) with these options.
using PartFunction = std::function<Result<ConvertReport>(const std::string& token, uint32_t part, uint32_t num_parts,
                                                          const ConvertOptions& options)>;

// A local conversion: a staged write of dataset `name` in `out` of one part
// of records of `schema` (with options.append and a dataset NAME there,
// appended: records that lack fields it added later are refused before
// they are written unless options.defaults fit), committed by
// CommitParts(head); options.on_progress sees `files_total` candidates, the
// last call after the commit.
Result<ConvertReport> ConvertLocally(const std::string& out, const std::string& name, const ConvertOptions& options,
                                     const Schema& schema, uint64_t files_total, ConvertReport head,
                                     const PartFunction& write_part);

}  // namespace unirecord::convert_internal

#endif  // UNIRECORD_SRC_CONVERT_FILE_RECORDS_H_
