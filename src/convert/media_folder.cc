// ConvertVideoFolder / ConvertAudioFolder: class folders of video or audio
// files (as Kinetics, UCF-101 or LibriSpeech ship) into a dataset, through
// the converters' shared machinery (convert/file_records.h): a
// PreparedConversion, so that unirecord.distributed runs it in parts
// (source_parts.cc) with the same bytes.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "convert/file_records.h"
#include "convert/image_folder_listing.h"
#include "convert/source_image.h"
#include "io/file.h"
#include "unirecord/convert.h"
#include "unirecord/dataset.h"
#include "unirecord/schema.h"
#include "util/threads.h"

namespace unirecord {
namespace convert_internal {
namespace {

constexpr const char* kTranscriptSuffix = ".trans.txt";

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The folder's parts: the file without its extension ("a/b/84-121123-0000").
std::string Stem(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  return dot != std::string::npos && (slash == std::string::npos || dot > slash) ? path.substr(0, dot) : path;
}

// LibriSpeech's transcripts: every *.trans.txt in the class folders, a line
// "UTTERANCE-ID TEXT" each, keyed by the folder and utterance
// ("19/198/19-198-0001"). A line without a space is no transcript; the
// first of two lines of one utterance is kept (a rejects row would name a
// file that holds no media: the second is reported as the file's skip reason).
struct Transcripts {
  std::map<std::string, std::string> text;
  std::map<std::string, std::string> problems;  // transcript file -> what was left out of it
};

Result<std::shared_ptr<Transcripts>> ReadTranscripts(const std::string& root, const std::vector<ImageFolderFile>& files) {
  auto t = std::make_shared<Transcripts>();
  for (const ImageFolderFile& file : files) {
    if (file.label < 0 || !EndsWith(file.path, kTranscriptSuffix)) continue;
    std::string text;
    UREC_RETURN_IF_ERROR(ReadConverterInput("transcript", io::JoinPath(root, file.path), &text));
    const size_t slash = file.path.rfind('/');
    const std::string folder = slash == std::string::npos ? "" : file.path.substr(0, slash + 1);
    size_t line_number = 0, bad = 0;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      start = end + 1;
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      const size_t space = line.find(' ');
      if (space == std::string::npos || space == 0 || !t->text.emplace(folder + line.substr(0, space), line.substr(space + 1)).second) {
        ++bad;
      }
    }
    if (bad > 0) {
      t->problems[file.path] = std::to_string(bad) + " of its " + std::to_string(line_number) +
                               " lines are not \"UTTERANCE-ID TEXT\" of a new utterance";
    }
  }
  return t;
}

std::string SkipReason(const ImageFolderFile& file, MediaKind kind, const Transcripts& transcripts) {
  if (file.label < 0) return "skipped: not inside a class folder";
  if (kind == MediaKind::kAudio && EndsWith(file.path, kTranscriptSuffix)) {
    const auto problem = transcripts.problems.find(file.path);
    return problem == transcripts.problems.end() ? "skipped: a transcript (read into the transcript field)"
                                                 : "skipped: a transcript, read but for this: " + problem->second;
  }
  const size_t slash = file.path.rfind('/');
  const size_t dot = file.path.rfind('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return std::string("skipped: not ") + (kind == MediaKind::kVideo ? "a video" : "an audio") + " extension (" +
         (has_extension ? file.path.substr(dot) : std::string("none")) + ")";
}

Result<Schema> MediaFolderSchema(MediaKind kind) {
  std::vector<Field> fields = {kind == MediaKind::kVideo ? Field::Video("video") : Field::Audio("audio"),
                               Field::Int64("label", /*indexed=*/true), Field::String("path")};
  if (kind == MediaKind::kAudio) fields.push_back(Field::String("transcript"));
  return Schema::Make(std::move(fields));
}

}  // namespace

Result<PreparedConversion> PrepareMediaFolder(const std::string& src, const std::string& out,
                                              const ConvertOptions& options, MediaKind kind) {
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "threads").status());
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("give a shard count or a shard size, not both");
  }
  if (options.extend_classes) {
    return Status::InvalidArgument("extend_classes: only an image folder has a class list to extend");
  }
  const bool video = kind == MediaKind::kVideo;
  UREC_ASSIGN_OR_RETURN(ImageFolderListing listing, ListImageFolder(src, video ? HasVideoExtension : HasAudioExtension));
  if (listing.classes.empty()) return Status::InvalidArgument("no class sub-folders in " + src);
  if (listing.candidates == 0) {
    return Status::InvalidArgument(video ? "no video files (.mp4 .avi .mkv .webm .mov .m4v .mpg .mpeg .ogv) in the "
                                           "class folders of " + src
                                         : "no audio files (.wav .flac .mp3 .ogg .opus .m4a .aac) in the class "
                                           "folders of " + src);
  }
  UREC_RETURN_IF_ERROR(CheckOutputOutsideSource(src, out));
  if (options.num_shards > listing.candidates) {
    return Status::InvalidArgument("num_shards " + std::to_string(options.num_shards) + " is more than the " +
                                   std::to_string(listing.candidates) + " files found: some shards would be empty");
  }
  PreparedConversion c;
  c.name = options.name.empty() ? DefaultName(src) : options.name;
  c.root = src;
  UREC_ASSIGN_OR_RETURN(c.schema, MediaFolderSchema(kind));
  UREC_ASSIGN_OR_RETURN(std::string class_list, EncodeNameList(listing.classes));
  c.metadata.emplace_back(kClassesMetadataKey, std::move(class_list));
  if (options.num_shards > 0) c.shard_starts = ShardStarts(listing.files, listing.candidates, options.num_shards);
  std::shared_ptr<Transcripts> transcripts = std::make_shared<Transcripts>();
  if (!video) {
    UREC_ASSIGN_OR_RETURN(transcripts, ReadTranscripts(src, listing.files));
  }
  auto files = std::make_shared<std::vector<ImageFolderFile>>(listing.files);
  c.files = std::move(listing.files);
  c.hooks.image_field = video ? "video" : "audio";
  c.hooks.media = kind;
  // By name: the media field's parameter fields come right after it.
  UREC_ASSIGN_OR_RETURN(const size_t label, c.schema.FindField("label"));
  UREC_ASSIGN_OR_RETURN(const size_t path, c.schema.FindField("path"));
  const size_t transcript = video ? 0 : c.schema.FindField("transcript").value();
  c.hooks.fill = [files, transcripts, video, label, path, transcript](size_t i, RecordBuilder& record) -> Status {
    const ImageFolderFile& file = (*files)[i];
    UREC_RETURN_IF_ERROR(record.SetInt64(label, file.label));
    UREC_RETURN_IF_ERROR(record.SetString(path, file.path));
    if (video) return Status::OK();
    const auto text = transcripts->text.find(Stem(file.path));
    return record.SetString(transcript, text == transcripts->text.end() ? "" : text->second);
  };
  c.hooks.skip_reason = [files, transcripts, kind](size_t i) { return SkipReason((*files)[i], kind, *transcripts); };
  c.input = files;
  c.head.name = c.name;
  c.head.classes = listing.classes;
  return c;
}

}  // namespace convert_internal

Result<ConvertReport> ConvertVideoFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options) {
  UREC_ASSIGN_OR_RETURN(convert_internal::PreparedConversion c,
                        convert_internal::PrepareMediaFolder(src, out, options, MediaKind::kVideo));
  return convert_internal::ConvertPrepared(c, out, options);
}

Result<ConvertReport> ConvertAudioFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options) {
  UREC_ASSIGN_OR_RETURN(convert_internal::PreparedConversion c,
                        convert_internal::PrepareMediaFolder(src, out, options, MediaKind::kAudio));
  return convert_internal::ConvertPrepared(c, out, options);
}

}  // namespace unirecord
