// ConvertImageFolder: a torchvision ImageFolder into a unirecord dataset.
// The files are read, checked and written as records by the converters'
// shared machinery (convert/file_records.h), in folder order.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "convert/file_records.h"
#include "convert/image_folder_listing.h"
#include "io/file.h"
#include "unirecord/convert.h"
#include "unirecord/convert_parts.h"
#include "unirecord/dataset.h"
#include "unirecord/schema.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using convert_internal::CheckOutputOutsideSource;
using convert_internal::CommitParts;
using convert_internal::CommitTarget;
using convert_internal::ConvertLocally;
using convert_internal::DefaultName;
using convert_internal::ImageRecordHooks;
using convert_internal::ResolvePath;
using convert_internal::ShardStarts;
using convert_internal::PartTarget;
using convert_internal::WriteImagePart;

std::string SkipReason(const ImageFolderFile& file) {
  if (file.label < 0) return "skipped: not inside a class folder";
  const size_t slash = file.path.rfind('/');
  const size_t dot = file.path.rfind('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return "skipped: not an image extension (" + (has_extension ? file.path.substr(dot) : std::string("none")) + ")";
}

// Takes out of `listing` the class folders whose names the class list cannot
// hold (a newline: EncodeNameList stores one name a line), with their files,
// and renumbers the other classes' labels. Returns a row per file taken out
// (a row for the folder itself when it holds none) and counts them into
// `report`: image files as rejected, others as skipped.
std::vector<ConvertRejection> TakeOutUnstorableClasses(ImageFolderListing* listing, ConvertReport* report) {
  const char* kReason = "class folder name holds a newline, which the class list (one name a line) cannot store";
  std::vector<int64_t> new_label(listing->classes.size(), -1);
  std::vector<std::string> kept;
  for (size_t c = 0; c < listing->classes.size(); ++c) {
    if (listing->classes[c].find('\n') != std::string::npos) continue;
    new_label[c] = static_cast<int64_t>(kept.size());
    kept.push_back(listing->classes[c]);
  }
  std::vector<ConvertRejection> rows;
  if (kept.size() == listing->classes.size()) return rows;
  std::vector<bool> has_files(listing->classes.size(), false);
  std::vector<ImageFolderFile> files;
  for (ImageFolderFile& file : listing->files) {
    if (file.label < 0 || new_label[static_cast<size_t>(file.label)] >= 0) {
      if (file.label >= 0) file.label = new_label[static_cast<size_t>(file.label)];
      files.push_back(std::move(file));
      continue;
    }
    has_files[static_cast<size_t>(file.label)] = true;
    if (file.is_candidate) {
      ++report->rejected;
      --listing->candidates;
      rows.push_back({file.path, kReason});
    } else {
      ++report->skipped;
      rows.push_back({file.path, std::string("skipped: ") + kReason});
    }
  }
  for (size_t c = 0; c < listing->classes.size(); ++c) {
    if (new_label[c] < 0 && !has_files[c]) {
      ++report->skipped;
      rows.push_back({listing->classes[c] + "/", std::string("skipped: an empty ") + kReason});
    }
  }
  listing->files = std::move(files);
  listing->classes = std::move(kept);
  return rows;
}

Result<Schema> ImageFolderSchema() {
  return Schema::Make({Field::Bytes("image"), Field::Int64("label", /*indexed=*/true), Field::String("path"),
                       Field::Int32("width", /*indexed=*/true), Field::Int32("height", /*indexed=*/true),
                       Field::Int32("jpeg_layout"), Field::Int64("source_size"), Field::Int64("source_xxh3")});
}

// Appending: the folder's classes mapped onto the dataset's class list by
// name, so that a folder holding only some classes appends with the labels
// the dataset gives them. A class the dataset lacks is refused, naming it,
// unless `extend_classes` adds it at the end of the list: a later segment's
// class list may only grow at its end (format/SPEC.md 1.2), so that every
// earlier label keeps its meaning.
Status MapOntoCommittedClasses(const std::string& out, const std::string& name, const std::string& src,
                               bool extend_classes, ImageFolderListing* listing) {
  Result<std::shared_ptr<Dataset>> committed = Dataset::Open(io::JoinPath(out, name));
  if (!committed.ok()) return Status::OK();  // nothing to map onto (the commit reports a damaged one)
  const auto classes = (*committed)->metadata().find(kClassesMetadataKey);
  if (classes == (*committed)->metadata().end()) return Status::OK();
  std::vector<std::string> names = DecodeNameList(classes->second);
  std::vector<int64_t> label_of(listing->classes.size(), -1);
  for (size_t c = 0; c < listing->classes.size(); ++c) {
    const auto found = std::find(names.begin(), names.end(), listing->classes[c]);
    if (found != names.end()) {
      label_of[c] = found - names.begin();
    } else if (extend_classes) {
      label_of[c] = static_cast<int64_t>(names.size());
      names.push_back(listing->classes[c]);
    } else {
      return Status::InvalidArgument("append to " + io::JoinPath(out, name) + ": class '" + listing->classes[c] +
                                     "' of " + src + " is not among the dataset's " + std::to_string(names.size()) +
                                     " classes; add it at the end of the class list with --extend-classes "
                                     "(C++: ConvertOptions::extend_classes), or convert again without --append");
    }
  }
  for (ImageFolderFile& file : listing->files) {
    if (file.label >= 0) file.label = label_of[static_cast<size_t>(file.label)];
  }
  listing->classes = names;
  return Status::OK();
}

}  // namespace

Result<ImageFolderPlan> PlanImageFolder(const std::string& src, const std::string& out,
                                        const ConvertOptions& options) {
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "threads").status());
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("give a shard count or a shard size, not both");
  }
  UREC_ASSIGN_OR_RETURN(ImageFolderListing listing, ListImageFolder(src));
  ConvertReport left_out;
  ImageFolderPlan plan;
  plan.left_out = TakeOutUnstorableClasses(&listing, &left_out);
  plan.left_out_rejected = left_out.rejected;
  plan.left_out_skipped = left_out.skipped;
  if (listing.classes.empty()) return Status::InvalidArgument("no class sub-folders in " + src);
  if (listing.candidates == 0) {
    return Status::InvalidArgument("no image files (.jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp) in the class folders of " + src);
  }
  UREC_RETURN_IF_ERROR(CheckOutputOutsideSource(src, out));
  if (options.num_shards > listing.candidates) {
    return Status::InvalidArgument("num_shards " + std::to_string(options.num_shards) + " is more than the " +
                                   std::to_string(listing.candidates) + " image files found: some shards would be empty");
  }
  plan.out = out;
  plan.name = options.name.empty() ? DefaultName(src) : options.name;
  if (options.append) {
    UREC_RETURN_IF_ERROR(MapOntoCommittedClasses(out, plan.name, src, options.extend_classes, &listing));
  } else if (options.extend_classes) {
    return Status::InvalidArgument("extend_classes (--extend-classes) needs append (--append)");
  }
  plan.allow_empty = options.allow_empty;
  plan.classes = std::move(listing.classes);
  plan.candidates = listing.candidates;
  if (options.num_shards > 0) plan.shard_starts = ShardStarts(listing.files, listing.candidates, options.num_shards);
  plan.files = std::move(listing.files);
  return plan;
}

ImageFolderPart PartOfPlan(const ImageFolderPlan& plan, uint32_t first_shard, uint32_t end_shard, uint32_t part,
                           uint32_t num_parts) {
  ImageFolderPart p;
  p.classes = plan.classes;
  p.part = part;
  p.num_parts = num_parts;
  if (plan.shard_starts.empty()) {
    p.files = plan.files;
    return p;
  }
  const size_t begin = plan.shard_starts.at(first_shard), end = plan.shard_starts.at(end_shard);
  p.files.assign(plan.files.begin() + static_cast<std::ptrdiff_t>(begin), plan.files.begin() + static_cast<std::ptrdiff_t>(end));
  for (uint32_t s = first_shard; s < end_shard; ++s) p.shard_starts.push_back(plan.shard_starts[s] - begin);
  return p;
}

Result<ConvertReport> ConvertImageFolderPart(const std::string& src, const ImageFolderPart& part,
                                             const std::string& out, const std::string& name,
                                             const std::string& token, const ConvertOptions& options) {
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "threads").status());
  for (size_t i = 0; i < part.shard_starts.size(); ++i) {
    if (part.shard_starts[i] > part.files.size() || (i > 0 && part.shard_starts[i] < part.shard_starts[i - 1]) ||
        (i == 0 && part.shard_starts[0] != 0)) {
      return Status::InvalidArgument("image folder part " + std::to_string(part.part) +
                                     ": shard_starts must start at 0 and rise within its files");
    }
  }
  for (const ImageFolderFile& file : part.files) {
    if (file.label >= static_cast<int64_t>(part.classes.size()) || (file.is_candidate && file.label < 0)) {
      return Status::InvalidArgument("image folder part " + std::to_string(part.part) + ": " + file.path +
                                     " has label " + std::to_string(file.label) + " of " +
                                     std::to_string(part.classes.size()) + " classes");
    }
  }
  PartTarget target{out, name, token, part.part, part.num_parts, {}, {}};
  UREC_ASSIGN_OR_RETURN(target.schema, ImageFolderSchema());
  UREC_ASSIGN_OR_RETURN(std::string class_list, EncodeNameList(part.classes));
  target.metadata.emplace_back(kClassesMetadataKey, std::move(class_list));

  const size_t kLabel = 1, kPath = 2;
  ImageRecordHooks hooks;
  hooks.fill = [&](size_t i, RecordBuilder& record) {
    UREC_RETURN_IF_ERROR(record.SetInt64(kLabel, part.files[i].label));
    return record.SetString(kPath, part.files[i].path);
  };
  hooks.skip_reason = [&](size_t i) { return SkipReason(part.files[i]); };
  UREC_ASSIGN_OR_RETURN(ConvertReport report, WriteImagePart(target, src, part.files, part.shard_starts, options, hooks));
  report.classes = part.classes;
  return report;
}

namespace {

// What a plan reports before any part: its name, classes and left-out folders.
ConvertReport PlanReport(const ImageFolderPlan& plan) {
  ConvertReport head;
  head.name = plan.name;
  head.classes = plan.classes;
  head.rejected = plan.left_out_rejected;
  head.skipped = plan.left_out_skipped;
  head.not_written = plan.left_out;
  return head;
}

}  // namespace

Result<ConvertReport> CommitImageFolder(StagedWrite& staged, const ImageFolderPlan& plan,
                                        const std::vector<ConvertReport>& parts) {
  return CommitParts(staged, CommitTarget{plan.out, plan.name, plan.allow_empty}, PlanReport(plan), parts);
}

Result<ConvertReport> ConvertImageFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options) {
  UREC_ASSIGN_OR_RETURN(ImageFolderPlan plan, PlanImageFolder(src, out, options));
  ImageFolderPart whole;
  whole.classes = plan.classes;
  whole.files = std::move(plan.files);
  whole.shard_starts = plan.shard_starts;
  if (!whole.shard_starts.empty()) whole.shard_starts.pop_back();  // a part lists where its shards start
  UREC_ASSIGN_OR_RETURN(const Schema schema, ImageFolderSchema());
  return ConvertLocally(out, plan.name, options, schema, plan.candidates, PlanReport(plan),
                        [&](const std::string& token, uint32_t part, uint32_t num_parts, const ConvertOptions& o) {
                          whole.part = part;
                          whole.num_parts = num_parts;
                          return ConvertImageFolderPart(src, whole, out, plan.name, token, o);
                        });
}

}  // namespace unirecord
