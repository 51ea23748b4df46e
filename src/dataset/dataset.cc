#include "unirecord/dataset.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "dataset/dataset_impl.h"
#include "dataset/field_reads.h"
#include "dataset/shard_access.h"
#include "format/manifest.h"
#include "format/array_values.h"
#include "format/dataset_uuid.h"
#include "format/endian.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "format/segment_metadata.h"
#include "io/file.h"
#include "shard/shard_reader.h"

namespace unirecord {

using shard::ShardReader;

// What a Record holds (Record::Impl, private to Record, is this): the
// getters' helpers below take it.
struct RecordData {
  // Keeps `dataset` and the mapped files alive: the Dataset, or the
  // FieldReads the record was read with (which holds it).
  std::shared_ptr<const void> owner;
  std::vector<std::shared_ptr<const void>> holds;  // a remote dataset's files read: kept mapped and pinned
  const Dataset::Impl* dataset = nullptr;
  const dataset_internal::FieldReads* reads = nullptr;  // null: every field was read
  uint64_t id = 0;
  // Of each source of the record's segment (its shard, its column files).
  struct Source {
    const uint8_t* entry = nullptr;
    std::vector<Blob> blobs;  // by blob slot
    std::shared_ptr<const shard::DecodedPage> page;
    uint32_t page_row = 0;
  };
  std::vector<Source> sources;
  const Dataset::Impl::SegmentFields* fields = nullptr;  // its segment's

  // Field `field` of the dataset's schema: the source holding it, the
  // field's index there and that source's layout.
  const Source& SourceOf(size_t field, size_t* local, const index::FieldLayout** layout) const {
    const Dataset::Impl::FieldSource& at = fields->fields[field];
    *local = at.field;
    *layout = &fields->layouts[at.source];
    return sources[at.source];
  }
};

struct Record::Impl : RecordData {};

namespace {

Blob ToBlob(shard::BlobBytes bytes) {
  return bytes.inflated ? Blob(std::move(*bytes.inflated)) : Blob(bytes.mapped);
}

bool HasGlobChars(const std::string& path) { return path.find_first_of("*?[") != std::string::npos; }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "dir/train-00003-of-00004.urec" for shard 3 of 4, derived from a sibling's
// name when it follows the naming scheme; otherwise "shard 3 of 4".
std::string MissingShardName(const std::string& sibling, uint32_t shard, uint32_t count) {
  const std::optional<format::ShardFileParts> parts = format::ParseShardFileName(io::BaseName(sibling));
  if (!parts) return "shard " + std::to_string(shard) + " of " + std::to_string(count);
  const std::string name = format::ShardFileName(parts->name, parts->generation, shard, count);
  return sibling.find('/') == std::string::npos ? name : io::JoinPath(io::DirName(sibling), name);
}

// The files of each of `manifest`'s segments: its shards, and its field
// groups' column files; `missing` gets the first that does not exist.
std::vector<Dataset::Impl::SegmentFiles> SegmentPaths(const std::string& dir, const std::string& name,
                                                      const format::Manifest& manifest, std::string* missing) {
  std::vector<Dataset::Impl::SegmentFiles> paths;
  auto add = [&](std::vector<std::string>* to, std::string path) {
    if (missing->empty() && !io::PathExists(path)) *missing = path;
    to->push_back(std::move(path));
  };
  for (const format::Segment& segment : manifest.segments) {
    Dataset::Impl::SegmentFiles& files = paths.emplace_back();
    for (uint32_t s = 0; s < segment.shard_count; ++s) {
      add(&files.shards, io::JoinPath(dir, format::ShardFileName(name, segment.generation, s, segment.shard_count)));
    }
    for (const format::FieldGroup& group : segment.groups) {
      files.groups.emplace_back();
      for (uint32_t s = 0; s < segment.shard_count; ++s) {
        add(&files.groups.back(), io::JoinPath(dir, format::ColumnFileName(name, segment.generation, group.generation,
                                                                           s, segment.shard_count)));
      }
    }
  }
  return paths;
}

// The generation DatasetOptions::version or ::tag asks for; 0 for the latest.
Result<uint64_t> WantedVersion(const std::string& dir, const std::string& name, const DatasetOptions& options) {
  if (options.tag.empty()) return options.version;
  UREC_ASSIGN_OR_RETURN(const format::TagsFile tags, format::ReadTags(dir, name));
  return format::ResolveVersion(tags, options.tag, options.version, io::JoinPath(dir, name));
}

// The manifest of kept version `generation` (the current manifest when it
// is that one: a dataset written before format 1.2 keeps no copy of it).
Result<format::Manifest> ReadVersion(const std::string& dir, const std::string& name, uint64_t generation) {
  Result<format::Manifest> kept = format::ReadVersionManifest(dir, name, generation);
  if (kept.ok() || kept.status().code() != StatusCode::kNotFound) return kept;
  Result<format::Manifest> current = format::ReadManifest(dir, name);
  if (current.ok() && current->generation == generation) return current;
  return Status::NotFound(io::JoinPath(dir, name) + ": version " + std::to_string(generation) +
                          " is not kept (never committed, or removed by urec gc; urec versions lists the kept ones)");
}

// The dataset DIR/NAME.uset commits (or a kept version of it): exactly the
// shards of its segments.
Result<std::shared_ptr<Dataset>> OpenCommitted(const std::string& dir, const std::string& name,
                                               const DatasetOptions& options) {
  UREC_ASSIGN_OR_RETURN(const uint64_t wanted, WantedVersion(dir, name, options));
  // A writer may commit a newer generation and `urec gc` remove this one
  // between our reading the manifest and opening its shards: then read the
  // latest again.
  const std::string manifest_path =
      io::JoinPath(dir, wanted != 0 ? format::VersionFileName(name, wanted) : format::ManifestFileName(name));
  for (int attempt = 1;; ++attempt) {
    UREC_ASSIGN_OR_RETURN(const format::Manifest manifest,
                          wanted != 0 ? ReadVersion(dir, name, wanted) : format::ReadManifest(dir, name));
    std::string missing;
    const std::vector<Dataset::Impl::SegmentFiles> paths = SegmentPaths(dir, name, manifest, &missing);
    Result<std::shared_ptr<Dataset>> dataset =
        missing.empty() ? Dataset::Impl::OpenSegments(paths, manifest, manifest_path, options)
                        : Status::NotFound(missing + ": " +
                                           (format::ParseShardFileName(io::BaseName(missing))->group_generation > 0
                                                ? "column file"
                                                : "shard") +
                                           " missing (" + manifest_path + " names generation " +
                                           std::to_string(manifest.generation) + " of dataset " + manifest.uuid +
                                           ", " + std::to_string(manifest.shard_count) + " shards)");
    if (dataset.ok() || dataset.status().code() != StatusCode::kNotFound || attempt == 3 || wanted != 0) return dataset;
    Result<format::Manifest> now = format::ReadManifest(dir, name);
    if (!now.ok() || now->generation == manifest.generation) return dataset;
  }
}

// A directory holds one dataset: the one a manifest commits, or (with no
// manifest, the layout before manifests) every .urec file in it. Shards of a
// generation no manifest names are uncommitted or superseded, and so are
// pre-manifest shards of a name that now has a manifest: never opened.
// format::FindFolderDatasets judges, as it does a remote folder's listing.
Result<std::shared_ptr<Dataset>> OpenDirectory(const std::string& dir, const DatasetOptions& options) {
  UREC_ASSIGN_OR_RETURN(std::vector<std::string> files, io::ListDirectory(dir));
  const format::FolderDatasets found = format::FindFolderDatasets(files);
  UREC_RETURN_IF_ERROR(format::CheckOneDataset(dir, found, /*globs=*/true));
  if (!found.committed.empty()) return OpenCommitted(dir, found.committed.front(), options);
  if (!found.loose.empty()) {
    std::vector<std::string> loose;
    for (const std::string& file : found.loose) loose.push_back(io::JoinPath(dir, file));
    return Dataset::Open(loose, options);
  }
  return Status::NotFound(dir + (found.unfinished ? ": no committed dataset, only the shards of an unfinished write "
                                                    "(its next write removes them)"
                                                  : ": no .urec shards in this directory"));
}

Status FieldCheck(const Schema& schema, size_t field) {
  if (field >= schema.num_fields()) {
    return Status::OutOfRange("field index " + std::to_string(field) + " out of range (" +
                              std::to_string(schema.num_fields()) + " fields)");
  }
  return Status::OK();
}

}  // namespace

Dataset::Dataset(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dataset::~Dataset() = default;

Result<std::shared_ptr<Dataset>> Dataset::Open(const std::string& path, const DatasetOptions& options) {
  if (IsRemoteLocation(path)) return OpenRemote(path, options);
  std::vector<std::string> paths;
  const std::string manifest_name = format::ManifestFileName(io::BaseName(path));
  if (io::IsDirectory(path)) return OpenDirectory(path, options);
  if (std::optional<std::string> name = format::ManifestDatasetName(io::BaseName(path)); name && io::PathExists(path)) {
    return OpenCommitted(io::DirName(path), *name, options);
  }
  if (!io::PathExists(path) && io::PathExists(io::JoinPath(io::DirName(path), manifest_name))) {
    return OpenCommitted(io::DirName(path), io::BaseName(path), options);
  }
  if (HasGlobChars(path) && !io::PathExists(path)) {
    UREC_ASSIGN_OR_RETURN(paths, io::Glob(path));
    if (paths.empty()) return Status::NotFound(path + ": no file matches");
    // DIR/NAME-*.urec means the shards: the column files beside them
    // (format/SPEC.md 1.4) belong to field groups, read through the manifest.
    // A glob of column files alone opens them, each group a dataset.
    const auto is_column_file = [](const std::string& p) {
      const std::optional<format::ShardFileParts> parts = format::ParseShardFileName(io::BaseName(p));
      return parts && parts->group_generation != 0;
    };
    if (!std::all_of(paths.begin(), paths.end(), is_column_file)) {
      paths.erase(std::remove_if(paths.begin(), paths.end(), is_column_file), paths.end());
    }
  } else {
    UREC_RETURN_IF_ERROR(io::CheckExists(path));
    paths.push_back(path);
  }
  return Open(paths, options);
}

Result<std::shared_ptr<Dataset>> Dataset::Open(const std::vector<std::string>& shard_paths,
                                               const DatasetOptions& options) {
  if (shard_paths.empty()) return Status::InvalidArgument("Dataset::Open: no shard paths given");
  if (options.version != 0 || !options.tag.empty()) {
    return Status::InvalidArgument(shard_paths.front() + ": a version or tag is asked for, but versions are kept "
                                   "only by a dataset with a manifest (open its folder or DIR/NAME)");
  }
  std::vector<std::unique_ptr<ShardReader>> opened;
  for (const std::string& path : shard_paths) {
    if (!EndsWith(path, format::kShardExtension)) {
      return Status::InvalidArgument(path + ": not a shard path (expected a .urec file)");
    }
    UREC_ASSIGN_OR_RETURN(auto shard, ShardReader::Open(path, options.verify_index_at_open));
    opened.push_back(std::move(shard));
  }
  std::vector<Impl::OpenedSegment> segments(1);
  segments[0].shards = std::move(opened);
  return Impl::FromSegments(std::move(segments), options, nullptr);
}

Result<std::shared_ptr<Dataset>> Dataset::Impl::OpenSegments(const std::vector<SegmentFiles>& paths,
                                                             const format::Manifest& manifest,
                                                             const std::string& manifest_path,
                                                             const DatasetOptions& options) {
  std::vector<OpenedSegment> segments;
  for (size_t k = 0; k < paths.size(); ++k) {
    OpenedSegment& segment = segments.emplace_back();
    segment.dropped = manifest.segments[k].dropped;
    for (const std::string& path : paths[k].shards) {
      UREC_ASSIGN_OR_RETURN(auto shard, ShardReader::Open(path, options.verify_index_at_open));
      segment.shards.push_back(std::move(shard));
    }
    for (size_t g = 0; g < paths[k].groups.size(); ++g) {
      OpenedGroup& group = segment.groups.emplace_back();
      group.group = manifest.segments[k].groups[g];
      for (const std::string& path : paths[k].groups[g]) {
        UREC_ASSIGN_OR_RETURN(auto file, ShardReader::Open(path, options.verify_index_at_open));
        group.files.push_back(std::move(file));
      }
    }
  }
  DatasetOptions whole = options;
  whole.allow_partial = false;  // the manifest names every shard
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, FromSegments(std::move(segments), whole, nullptr));
  UREC_RETURN_IF_ERROR(dataset->impl_->CheckAgainst(manifest, manifest_path));
  return dataset;
}

// The manifest, indexes and shard frames come from the server (or the
// cache); the shards' pages are downloaded when first read (Impl::Pages).
Result<std::shared_ptr<Dataset>> Dataset::OpenRemote(const std::string& location, const DatasetOptions& options) {
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<remote::RemoteShards> remote,
                        remote::RemoteShards::Open(location, options.remote, options.version, options.tag));
  std::vector<Impl::OpenedSegment> segments;
  const format::Manifest& manifest = remote->manifest();
  // Of every shard and column file, its frame (pages come through `pages`).
  auto open_frame = [&](uint32_t file) {
    return ShardReader::Open(remote->frame_path(file), options.verify_index_at_open, remote->FrameFiles(file));
  };
  uint32_t s = 0;
  for (const format::Segment& segment : manifest.segments) {
    Impl::OpenedSegment& opened = segments.emplace_back();
    opened.dropped = segment.dropped;
    for (size_t g = 0; g < segment.groups.size(); ++g) opened.groups.emplace_back().group = segment.groups[g];
    for (uint32_t j = 0; j < segment.shard_count; ++j, ++s) {
      UREC_ASSIGN_OR_RETURN(auto frame, open_frame(s));
      opened.shards.push_back(std::move(frame));
      for (size_t g = 0; g < segment.groups.size(); ++g) {
        UREC_ASSIGN_OR_RETURN(auto column, open_frame(remote->ColumnFile(s, g)));
        opened.groups[g].files.push_back(std::move(column));
      }
    }
  }
  DatasetOptions whole = options;
  whole.allow_partial = false;  // the manifest names every shard
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, Impl::FromSegments(std::move(segments), whole, remote));
  UREC_RETURN_IF_ERROR(dataset->impl_->CheckAgainst(manifest, location + ": the manifest"));
  return dataset;
}

Status Dataset::Impl::CheckAgainst(const format::Manifest& manifest, const std::string& where) {
  const std::string& manifest_path = where;
  for (size_t k = 0; k < segments.size(); ++k) {
    if (segments[k].uuid != manifest.segments[k].uuid || segments[k].first_id != manifest.segments[k].first_id) {
      return Status::Corruption(manifest_path + ": names segment " + std::to_string(k) + " of dataset " +
                                manifest.segments[k].uuid + " from id " + std::to_string(manifest.segments[k].first_id) +
                                ", but its shards hold dataset " + segments[k].uuid + " from id " +
                                std::to_string(segments[k].first_id));
    }
    segments[k].generation = manifest.segments[k].generation;
  }
  if (uuid != manifest.uuid) {
    return Status::Corruption(manifest_path + ": names dataset " + manifest.uuid + ", but its shards hold dataset " + uuid);
  }
  version = manifest.generation;
  return Status::OK();
}

namespace {

// Corruption unless `group`'s column files are one row per record of the
// segment's `shards` (SPEC.md 1.4): the group's UUID, numbered as the
// shards, one schema.
Status CheckColumnFiles(const Dataset::Impl::OpenedGroup& group, const std::vector<const ShardReader*>& shards) {
  uint64_t in_segment = 0;
  for (size_t j = 0; j < group.files.size(); ++j) {
    const ShardReader& file = *group.files[j];
    const format::ShardHeaderValues& v = file.header().values;
    const std::string where = file.path() + ": column file of field group " + std::to_string(group.group.generation);
    if (format::UuidToString(v.uuid) != group.group.uuid) {
      return Status::Corruption(where + " holds dataset " + format::UuidToString(v.uuid) + ", the manifest names " +
                                group.group.uuid);
    }
    if (v.shard_number != j || v.shard_count != shards.size()) {
      return Status::Corruption(where + " says it is file " + std::to_string(v.shard_number) + " of " +
                                std::to_string(v.shard_count) + ", not " + std::to_string(j) + " of " +
                                std::to_string(shards.size()));
    }
    if (file.records() != shards[j]->records()) {
      return Status::Corruption(where + " has " + std::to_string(file.records()) + " rows, its shard " +
                                shards[j]->path() + " " + std::to_string(shards[j]->records()) + " records");
    }
    if (file.index().header().first_id() != in_segment || file.header().schema != group.files[0]->header().schema) {
      return Status::Corruption(where + " does not follow " + group.files[0]->path() +
                                " (another first row or schema)");
    }
    in_segment += file.records();
  }
  return Status::OK();
}

// The fields of a segment, in the order SPEC.md 1.4 gives: its shards'
// except those it drops, then each group's in turn, a name already there
// replaced in place, a new one appended. Fills `fields` (the sources).
Result<Schema> ResolveFields(const Schema& base, const Dataset::Impl::OpenedSegment& segment,
                             const std::vector<const ShardReader*>& shards, Dataset::Impl::SegmentFields* fields) {
  const std::vector<std::string>& dropped = segment.dropped;
  std::vector<Field> all;
  auto source_of = [&](const std::string& name) -> Dataset::Impl::FieldSource* {
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].name == name) return &fields->fields[i];
    }
    return nullptr;
  };
  fields->layouts.push_back(index::FieldLayout::For(base));
  for (size_t i = 0; i < base.num_fields(); ++i) {
    if (std::find(dropped.begin(), dropped.end(), base.field(i).name) != dropped.end()) continue;
    all.push_back(base.field(i));
    fields->fields.push_back({0, static_cast<uint32_t>(i)});
  }
  for (size_t g = 0; g < segment.groups.size(); ++g) {
    const Dataset::Impl::OpenedGroup& group = segment.groups[g];
    UREC_RETURN_IF_ERROR(CheckColumnFiles(group, shards));
    const Schema& schema = group.files[0]->header().schema;
    fields->layouts.push_back(index::FieldLayout::For(schema));
    for (const std::string& name : group.group.fields) {
      Result<size_t> at = schema.FindField(name);
      if (!at.ok()) {
        return Status::Corruption(group.files[0]->path() + ": column file lacks field '" + name +
                                  "' that the manifest's field group " + std::to_string(group.group.generation) +
                                  " names");
      }
      const Dataset::Impl::FieldSource source{static_cast<uint32_t>(g + 1), static_cast<uint32_t>(*at)};
      if (Dataset::Impl::FieldSource* there = source_of(name)) {
        all[static_cast<size_t>(there - fields->fields.data())] = schema.field(*at);
        *there = source;
      } else {
        all.push_back(schema.field(*at));
        fields->fields.push_back(source);
      }
    }
  }
  return Schema::Make(std::move(all));
}

}  // namespace

Result<std::shared_ptr<Dataset>> Dataset::Impl::FromSegments(std::vector<OpenedSegment> segments,
                                                             const DatasetOptions& options,
                                                             std::shared_ptr<remote::RemoteShards> remote) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.page_cache_bytes > 0) {
    const auto budget = std::make_shared<shard::PageBudget>(options.page_cache_bytes);
    if (remote != nullptr) {
      // Its pages are read through the data files it opens (the readers
      // here hold the frames only).
      remote->KeepDecodedPages(budget);
    } else {
      for (OpenedSegment& segment : segments) {
        for (const auto& shard : segment.shards) shard->KeepDecodedPages(budget);
        for (OpenedGroup& group : segment.groups) {
          for (const auto& file : group.files) file->KeepDecodedPages(budget);
        }
      }
    }
  }
  const ShardReader* dataset_last = nullptr;  // the last segment's first shard: the dataset's metadata
  uint64_t next_id = 0;
  for (size_t k = 0; k < segments.size(); ++k) {
    std::vector<std::unique_ptr<ShardReader>>& opened = segments[k].shards;
    if (opened.empty()) return Status::Corruption("segment " + std::to_string(k) + " has no shards");
    std::sort(opened.begin(), opened.end(), [](const auto& a, const auto& b) {
      return a->header().values.shard_number < b->header().values.shard_number;
    });
    const ShardReader& first = *opened.front();
    if (dataset_last != nullptr) {
      const std::string differs = format::MetadataDifference(first.header().metadata, dataset_last->header().metadata,
                                                             format::ClassList::kMayGrow);
      if (!differs.empty()) {
        return Status::Corruption(first.path() + ": segment " + std::to_string(k) + " has another " + differs +
                                  " than segment " + std::to_string(k - 1) + " (" + dataset_last->path() + ")");
      }
    }
    dataset_last = &first;
    const format::ShardHeaderValues& reference = first.header().values;
    for (size_t i = 0; i < opened.size(); ++i) {
      const ShardReader& shard = *opened[i];
      const format::ShardHeaderValues& v = shard.header().values;
      if (v.uuid != reference.uuid || v.shard_count != reference.shard_count) {
        return Status::Corruption(shard.path() + ": belongs to dataset " + format::UuidToString(v.uuid) + " (" +
                                  std::to_string(v.shard_count) + " shards), not to dataset " +
                                  format::UuidToString(reference.uuid) + " (" + std::to_string(reference.shard_count) +
                                  " shards) of " + first.path() +
                                  "; to open one of several datasets in a directory, use a glob like DIR/NAME-*.urec");
      }
      if (i > 0 && v.shard_number == opened[i - 1]->header().values.shard_number) {
        return Status::InvalidArgument(shard.path() + ": shard " + std::to_string(v.shard_number) +
                                       " given twice (also " + opened[i - 1]->path() + ")");
      }
      if (shard.header().schema != first.header().schema || shard.header().metadata != first.header().metadata) {
        return Status::Corruption(shard.path() + ": schema or metadata differ from " + first.path());
      }
    }
    const bool complete = opened.size() == reference.shard_count;
    if (!complete && !options.allow_partial) {
      uint32_t expected = 0;
      for (const auto& shard : opened) {
        if (shard->header().values.shard_number != expected) break;
        ++expected;
      }
      return Status::NotFound(MissingShardName(first.path(), expected, reference.shard_count) +
                              ": shard missing (dataset " + format::UuidToString(reference.uuid) + " has " +
                              std::to_string(reference.shard_count) + " shards, " + std::to_string(opened.size()) +
                              " found)");
    }
    SegmentInfo segment;
    segment.uuid = format::UuidToString(reference.uuid);
    segment.first_shard = static_cast<uint32_t>(impl->shards.size());
    segment.shards = static_cast<uint32_t>(opened.size());
    segment.first_id = next_id;
    uint64_t in_segment = 0;  // ids within the segment, as its indexes count them
    for (auto& shard : opened) {
      const fb::IndexHeader& ih = shard->index().header();
      if (complete && ih.first_id() != in_segment) {
        return Status::Corruption(shard->index_path() + ": first id " + std::to_string(ih.first_id()) +
                                  " but the shards before it hold " + std::to_string(in_segment) + " records");
      }
      ShardInfo info;
      info.path = shard->path();
      info.index_path = shard->index_path();
      info.number = static_cast<uint32_t>(impl->shards.size());
      info.segment = static_cast<uint32_t>(k);
      info.first_id = next_id;
      info.records = shard->records();
      info.file_bytes = shard->file_size();
      info.index_bytes = shard->index().file_size();
      info.blob_pages = shard->footer().blob_page_count();
      info.scalar_pages = shard->footer().scalar_page_count();
      info.blob_bytes = shard->footer().blob_bytes();
      info.scalar_raw_bytes = shard->footer().scalar_raw_bytes();
      info.scalar_stored_bytes = shard->footer().scalar_stored_bytes();
      info.blob_page_bytes = shard->header().values.blob_page_bytes;
      info.scalar_page_bytes = shard->header().values.scalar_page_bytes;
      info.index_entry_bytes = shard->layout().entry_stride;
      info.format_major = shard->major();
      info.format_minor = shard->minor();
      impl->infos.push_back(std::move(info));
      impl->first_ids.push_back(next_id);
      impl->segment_of.push_back(static_cast<uint32_t>(k));
      impl->columns.emplace_back();
      if (shard->records() > UINT64_MAX - next_id) return Status::Corruption(shard->path() + ": record count overflows");
      next_id += shard->records();
      in_segment += shard->records();
      impl->shards.push_back(std::move(shard));
    }
    if (complete && first.index().header().dataset_record_count() != in_segment) {
      return Status::Corruption(first.index_path() + ": dataset has " +
                                std::to_string(first.index().header().dataset_record_count()) +
                                " records by its index, but the shards hold " + std::to_string(in_segment));
    }
    segment.records = in_segment;
    // Its fields: the shards', then its field groups' (SPEC.md 1.4).
    SegmentFields fields;
    std::vector<const ShardReader*> shards;  // the segment's, now in impl->shards
    for (uint32_t j = 0; j < segment.shards; ++j) shards.push_back(impl->shards[segment.first_shard + j].get());
    UREC_ASSIGN_OR_RETURN(Schema schema, ResolveFields(shards[0]->header().schema, segments[k], shards, &fields));
    segment.dropped_fields = segments[k].dropped;
    if (k == 0) {
      impl->schema = std::move(schema);
    } else if (schema != impl->schema) {
      return Status::Corruption(first.path() + ": segment " + std::to_string(k) + " has the fields " +
                                schema.ToString() + ", segment 0 " + impl->schema.ToString());
    }
    for (OpenedGroup& group : segments[k].groups) {
      FieldGroupInfo info;
      info.generation = group.group.generation;
      info.uuid = group.group.uuid;
      info.fields = group.group.fields;
      for (size_t j = 0; j < group.files.size(); ++j) {
        info.paths.push_back(group.files[j]->path());
        impl->columns[segment.first_shard + j].push_back(std::move(group.files[j]));
      }
      segment.field_groups.push_back(std::move(info));
    }
    impl->segment_fields.push_back(std::move(fields));
    impl->segments.push_back(std::move(segment));
  }
  impl->size = next_id;
  impl->metadata = dataset_last->header().metadata;
  std::vector<format::Segment> named;  // as a manifest names them
  for (const SegmentInfo& segment : impl->segments) {
    format::Segment& n = named.emplace_back(
        format::Segment{0, segment.shards, segment.first_id, segment.uuid, {}, segment.dropped_fields});
    for (const FieldGroupInfo& group : segment.field_groups) n.groups.push_back({group.generation, group.uuid, group.fields});
  }
  impl->uuid = format::DatasetUuidOf(named);
  impl->pages = remote != nullptr ? RemoteShardPages(std::move(remote)) : LocalShardPages(impl->shards, impl->columns);
  return std::shared_ptr<Dataset>(new Dataset(std::move(impl)));
}

uint64_t Dataset::size() const { return impl_->size; }
uint32_t Dataset::num_files() const { return static_cast<uint32_t>(impl_->shards.size()); }
const Schema& Dataset::schema() const { return impl_->schema; }
const std::map<std::string, std::string>& Dataset::metadata() const { return impl_->metadata; }
const std::string& Dataset::uuid() const { return impl_->uuid; }
const DatasetOptions& Dataset::options() const { return impl_->options; }
const std::vector<ShardInfo>& Dataset::shards() const { return impl_->infos; }
const std::vector<SegmentInfo>& Dataset::segments() const { return impl_->segments; }
uint64_t Dataset::version() const { return impl_->version; }

Result<Record> Dataset::Get(uint64_t id) const { return Read(id, nullptr); }

Result<Record> Dataset::Read(uint64_t id, const std::shared_ptr<const dataset_internal::FieldReads>& reads) const {
  const bool verify = impl_->options.verify_checksums;
  io::TruncationCheckScope check_the_shard_once;  // not once per blob of the record
  UREC_ASSIGN_OR_RETURN(auto located, impl_->Locate(id));
  const size_t s = impl_->ShardOf(id);
  const uint64_t row = located.second;
  Record record;
  Record::Impl& r = *record.impl_;
  if (reads != nullptr) {
    r.owner = reads;
  } else {
    r.owner = shared_from_this();
  }
  r.dataset = impl_.get();
  r.reads = reads.get();
  r.id = id;
  r.fields = &impl_->segment_fields[impl_->segment_of[s]];
  r.sources.resize(r.fields->layouts.size());
  const std::vector<dataset_internal::SourceReads>* wanted =
      reads != nullptr ? &reads->Sources(impl_->segment_of[s]) : nullptr;
  for (uint32_t k = 0; k < r.sources.size(); ++k) {
    const dataset_internal::SourceReads* want = wanted != nullptr ? &(*wanted)[k] : nullptr;
    if (want != nullptr && !want->entry) continue;  // no field read is in this file
    UREC_ASSIGN_OR_RETURN(ShardPages::Reader pages, impl_->pages->Pages(s, k));
    const ShardReader* shard = pages.reader;
    if (pages.hold != nullptr) r.holds.push_back(std::move(pages.hold));
    RecordData::Source& source = r.sources[k];
    UREC_ASSIGN_OR_RETURN(source.entry, shard->Entry(row, verify));
    const index::FieldLayout& layout = r.fields->layouts[k];
    if (want != nullptr) {
      source.blobs.resize(layout.blob_fields.size());  // those not wanted stay empty, never handed out
      for (uint32_t slot : want->blob_slots) {
        UREC_ASSIGN_OR_RETURN(shard::BlobBytes bytes, shard->ReadBlob(source.entry, row, slot, verify));
        source.blobs[slot] = ToBlob(std::move(bytes));
      }
    } else {
      source.blobs.reserve(layout.blob_fields.size());
      for (size_t slot = 0; slot < layout.blob_fields.size(); ++slot) {
        UREC_ASSIGN_OR_RETURN(shard::BlobBytes bytes, shard->ReadBlob(source.entry, row, slot, verify));
        source.blobs.push_back(ToBlob(std::move(bytes)));
      }
    }
    if (want != nullptr ? want->page : !layout.column_fields.empty()) {
      UREC_ASSIGN_OR_RETURN(source.page, shard->ScalarPage(source.entry, row, verify, &source.page_row));
    }
  }
  return record;
}

Result<Blob> Dataset::GetBlob(uint64_t id, size_t field) const {
  UREC_RETURN_IF_ERROR(FieldCheck(impl_->schema, field));
  UREC_ASSIGN_OR_RETURN(auto located, impl_->Locate(id));
  const size_t s = impl_->ShardOf(id);
  const Impl::FieldSource& at = impl_->SourceOf(s, field);
  const int slot = impl_->LayoutOf(s, at.source).blob_slot[at.field];
  if (slot < 0) {
    const Field& f = impl_->schema.field(field);
    return Status::InvalidArgument("field '" + f.name + "' is " + FieldTypeName(f.type) + ", not bytes");
  }
  const bool verify = impl_->options.verify_checksums;
  UREC_ASSIGN_OR_RETURN(ShardPages::Reader pages, impl_->pages->Pages(s, at.source));
  UREC_ASSIGN_OR_RETURN(const uint8_t* entry, pages.reader->Entry(located.second, verify));
  UREC_ASSIGN_OR_RETURN(shard::BlobBytes bytes,
                        pages.reader->ReadBlob(entry, located.second, static_cast<size_t>(slot), verify));
  Blob blob = ToBlob(std::move(bytes));
  if (blob.zero_copy()) {
    if (pages.hold == nullptr) {
      blob.owner_ = shared_from_this();
    } else {
      // Both: the Dataset and the remote shard's mapping and pin.
      using Owners = std::pair<std::shared_ptr<const Dataset>, std::shared_ptr<const void>>;
      blob.owner_ = std::make_shared<const Owners>(shared_from_this(), std::move(pages.hold));
    }
  }
  return blob;
}

namespace {

Result<uint64_t> IndexedBits(const Dataset::Impl& d, uint64_t id, size_t field, bool want_int) {
  UREC_RETURN_IF_ERROR(FieldCheck(d.schema, field));
  const Field& f = d.schema.field(field);
  UREC_ASSIGN_OR_RETURN(auto located, d.Locate(id));
  const size_t s = d.ShardOf(id);
  const Dataset::Impl::FieldSource& at = d.SourceOf(s, field);
  const index::FieldLayout& layout = d.LayoutOf(s, at.source);
  const int slot = layout.indexed_slot[at.field];
  const bool is_int = IsIntegral(f.type);
  if (slot < 0 || is_int != want_int) {
    return Status::InvalidArgument("field '" + f.name + "' is not an indexed " + (want_int ? "integer" : "float") +
                                   " field");
  }
  UREC_ASSIGN_OR_RETURN(const uint8_t* entry, d.SourceFrame(s, at.source).Entry(located.second, d.options.verify_checksums));
  return format::LoadLE<uint64_t>(entry + layout.IndexedValueOffset(static_cast<size_t>(slot)));
}

// Indexed integers are stored widened to 64 bits: one outside its type's
// range is damage that only the checksums (which may be off) would catch.
Status CheckWidenedInt(const Field& f, int64_t value, uint64_t id) {
  if (FitsIntegral(f.type, value)) return Status::OK();
  const std::string type = FieldTypeName(f.type);
  return Status::Corruption("record " + std::to_string(id) + ": " + type + " field '" + f.name + "' holds " +
                            std::to_string(value) + " in the index, outside " + type + " (a damaged index)");
}

}  // namespace

Result<int64_t> Dataset::GetIndexedInt64(uint64_t id, size_t field) const {
  UREC_ASSIGN_OR_RETURN(uint64_t bits, IndexedBits(*impl_, id, field, true));
  UREC_RETURN_IF_ERROR(CheckWidenedInt(impl_->schema.field(field), static_cast<int64_t>(bits), id));
  return static_cast<int64_t>(bits);
}

Result<double> Dataset::GetIndexedFloat64(uint64_t id, size_t field) const {
  UREC_ASSIGN_OR_RETURN(uint64_t bits, IndexedBits(*impl_, id, field, false));
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

Status Dataset::Verify() const {
  for (size_t s = 0; s < impl_->shards.size(); ++s) {
    for (uint32_t source = 0; source <= impl_->columns[s].size(); ++source) {
      UREC_ASSIGN_OR_RETURN(ShardPages::Reader pages, impl_->pages->Pages(s, source));
      UREC_RETURN_IF_ERROR(pages.reader->Verify());
    }
  }
  return Status::OK();
}

void Dataset::PlanReads(const std::vector<uint64_t>& ids) const {
  if (!impl_->pages->remote()) return;
  std::vector<uint32_t> visits;
  for (uint64_t id : ids) {
    if (id >= impl_->size) continue;
    const auto s = static_cast<uint32_t>(impl_->ShardOf(id));
    if (visits.empty() || visits.back() != s) visits.push_back(s);
  }
  impl_->pages->Plan(std::move(visits));
}

bool Dataset::is_remote() const { return impl_->pages->remote(); }

RemoteStats Dataset::remote_stats() const { return impl_->pages->stats(); }

namespace dataset_internal {

size_t ShardAccess::ShardCount(const Dataset& d) { return d.impl_->shards.size(); }
uint64_t ShardAccess::FirstId(const Dataset& d, size_t s) { return d.impl_->first_ids[s]; }
const shard::ShardReader& ShardAccess::Frame(const Dataset& d, size_t s) { return *d.impl_->shards[s]; }
Result<std::vector<ShardPages::Reader>> ShardAccess::Files(const Dataset& d, size_t s, bool pages) {
  std::vector<ShardPages::Reader> files;
  for (uint32_t source = 0; source <= d.impl_->columns[s].size(); ++source) {
    if (pages) {
      UREC_ASSIGN_OR_RETURN(files.emplace_back(), d.impl_->pages->Pages(s, source));
    } else {
      files.push_back({&d.impl_->SourceFrame(s, source), nullptr});
    }
  }
  return files;
}
std::pair<uint32_t, size_t> ShardAccess::SourceOf(const Dataset& d, size_t s, size_t field) {
  const Dataset::Impl::FieldSource& at = d.impl_->SourceOf(s, field);
  return {at.source, at.field};
}
Result<Record> ShardAccess::Get(const std::shared_ptr<const FieldReads>& reads, uint64_t id) {
  return reads->dataset().Read(id, reads);
}
void ShardAccess::Prefetch(const FieldReads& reads, uint64_t id, ShardPages::PrefetchStage stage) {
  reads.dataset().impl_->Prefetch(id, stage, reads);
}

}  // namespace dataset_internal

// --- Record -----------------------------------------------------------------

Record::Record() : impl_(std::make_unique<Impl>()) {}
Record::~Record() = default;
Record::Record(Record&&) noexcept = default;
Record& Record::operator=(Record&&) noexcept = default;

uint64_t Record::id() const { return impl_->id; }
const Schema& Record::schema() const { return impl_->dataset->schema; }

namespace {

// The field, checked to be `wanted`: the kinds of numbers `accepts`, scalar
// unless `array`.
Result<const Field*> TypedField(const RecordData& r, size_t field, bool (*accepts)(FieldType), bool array,
                                const char* wanted) {
  const Schema& schema = r.dataset->schema;
  UREC_RETURN_IF_ERROR(FieldCheck(schema, field));
  const Field& f = schema.field(field);
  if (r.reads != nullptr && !r.reads->Reads(field)) {
    return Status::FailedPrecondition("record " + std::to_string(r.id) + ": field '" + f.name +
                                      "' was not read (the record was read for " + r.reads->Names() + ")");
  }
  if (!accepts(f.type) || f.is_array() != array) {
    return Status::InvalidArgument("record " + std::to_string(r.id) + ": field '" + f.name + "' is " +
                                   FieldTypeName(f.type) + (f.is_array() ? " array" : "") + ", not " + wanted);
  }
  return &f;
}

template <FieldType T>
bool Is(FieldType type) { return type == T; }
// A blob field read as bytes: `bytes`, or a media field's stored value.
bool IsBlobBytes(FieldType type) {
  return type == FieldType::kBytes || type == FieldType::kVideo || type == FieldType::kAudio;
}
bool IsMedia(FieldType type) { return type == FieldType::kVideo || type == FieldType::kAudio; }
bool IsFloating(FieldType type) { return IsNumeric(type) && !IsIntegral(type); }

// A scalar numeric's value, widened: from the record table (indexed, stored
// widened already) or its scalar page.
template <typename Wide>
Wide NumericValue(const RecordData& r, size_t field, const Field& f) {
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = r.SourceOf(field, &local, &layout);
  if (layout->indexed_slot[local] >= 0) {
    return format::LoadLE<Wide>(source.entry +
                                layout->IndexedValueOffset(static_cast<size_t>(layout->indexed_slot[local])));
  }
  const auto* p = reinterpret_cast<const uint8_t*>(
      source.page->view.Value(static_cast<size_t>(layout->column_slot[local]), source.page_row).data());
  if constexpr (std::is_integral_v<Wide>) {
    return ElementToInt64(f.type, p);
  } else {
    return ElementToDouble(f.type, p);
  }
}

}  // namespace

Result<std::string_view> Record::GetBytes(size_t field) const {
  UREC_RETURN_IF_ERROR(TypedField(*impl_, field, IsBlobBytes, false, "bytes").status());
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  return source.blobs[static_cast<size_t>(layout->blob_slot[local])].data();
}

Result<int64_t> Record::GetInt64(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, IsIntegral, false, "an integer"));
  const int64_t value = NumericValue<int64_t>(*impl_, field, *f);
  UREC_RETURN_IF_ERROR(CheckWidenedInt(*f, value, impl_->id));
  return value;
}

Result<int32_t> Record::GetInt32(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, Is<FieldType::kInt32>, false, "int32"));
  const int64_t value = NumericValue<int64_t>(*impl_, field, *f);
  UREC_RETURN_IF_ERROR(CheckWidenedInt(*f, value, impl_->id));
  return static_cast<int32_t>(value);
}

Result<double> Record::GetFloat64(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, IsFloating, false, "a float"));
  return NumericValue<double>(*impl_, field, *f);
}

Result<float> Record::GetFloat32(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, Is<FieldType::kFloat32>, false, "float32"));
  return static_cast<float>(NumericValue<double>(*impl_, field, *f));
}

Result<std::string_view> Record::GetString(size_t field) const {
  UREC_RETURN_IF_ERROR(TypedField(*impl_, field, Is<FieldType::kString>, false, "string").status());
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  return source.page->view.Value(static_cast<size_t>(layout->column_slot[local]), source.page_row);
}

Result<ArrayView> Record::GetArray(size_t field) const {
  UREC_ASSIGN_OR_RETURN(const Field* f, TypedField(*impl_, field, IsNumeric, true, "a numeric array"));
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  ArrayView view;
  view.type = f->type;
  view.shape.ndim = f->shape.size();
  if (KindInfoOf(f->kind()).per_record_shape) {  // SPEC.md 6.3: a blob with a shape prefix
    const std::string_view stored = source.blobs[static_cast<size_t>(layout->blob_slot[local])].data();
    format::ParsedArray parsed;
    const Status parsed_ok = format::ParseVarArray(*f, stored, &parsed);
    if (!parsed_ok.ok()) {  // named by the file holding the field: the shard or a column file
      const Dataset::Impl& d = *impl_->dataset;
      const size_t s = d.ShardOf(impl_->id);
      const shard::ShardReader& file = d.SourceFrame(s, impl_->fields->fields[field].source);
      return Status::Corruption(file.RowContext(impl_->id - d.first_ids[s]) + ": " + parsed_ok.message());
    }
    std::copy(parsed.dims, parsed.dims + view.shape.ndim, view.shape.dims);
    view.data = parsed.data;
    view.count = parsed.count;
    return view;
  }
  std::copy(f->shape.begin(), f->shape.end(), view.shape.dims);
  view.data = source.page->view.Value(static_cast<size_t>(layout->column_slot[local]), source.page_row).data();
  view.count = static_cast<size_t>(f->num_elements());
  return view;
}

Result<MediaValueView> Record::GetMedia(size_t field) const {
  UREC_RETURN_IF_ERROR(TypedField(*impl_, field, IsMedia, false, "video or audio").status());
  size_t local = 0;
  const index::FieldLayout* layout = nullptr;
  const RecordData::Source& source = impl_->SourceOf(field, &local, &layout);
  const std::string_view stored = source.blobs[static_cast<size_t>(layout->blob_slot[local])].data();
  MediaValueView view;
  const Status parsed = ParseMediaValue(stored, "field '" + schema().field(field).name + "'", &view);
  if (!parsed.ok()) {  // named by the file holding the field: the shard or a column file
    const Dataset::Impl& d = *impl_->dataset;
    const size_t s = d.ShardOf(impl_->id);
    const shard::ShardReader& file = d.SourceFrame(s, impl_->fields->fields[field].source);
    return Status::Corruption(file.RowContext(impl_->id - d.first_ids[s]) + ": " + parsed.message());
  }
  return view;
}

#define UREC_RECORD_BY_NAME(Type, Method)                                      \
  Result<Type> Record::Method(std::string_view field) const {                  \
    UREC_ASSIGN_OR_RETURN(size_t index, impl_->dataset->schema.FindField(field)); \
    return Method(index);                                                      \
  }
UREC_RECORD_BY_NAME(std::string_view, GetBytes)
UREC_RECORD_BY_NAME(int32_t, GetInt32)
UREC_RECORD_BY_NAME(int64_t, GetInt64)
UREC_RECORD_BY_NAME(float, GetFloat32)
UREC_RECORD_BY_NAME(double, GetFloat64)
UREC_RECORD_BY_NAME(std::string_view, GetString)
UREC_RECORD_BY_NAME(ArrayView, GetArray)
UREC_RECORD_BY_NAME(MediaValueView, GetMedia)
#undef UREC_RECORD_BY_NAME

}  // namespace unirecord
