#include "serve/overview.h"

#include <algorithm>
#include <set>
#include <vector>

#include "unirecord/versions.h"

namespace unirecord::serve {
namespace {

constexpr size_t kMetadataText = 1024;  // of each metadata value shown
constexpr size_t kMaxClassNames = 100000;

Json FieldsJson(const Schema& schema, const FieldRoles& roles) {
  Json fields = Json::array();
  for (size_t i = 0; i < schema.num_fields(); ++i) {
    const Field& f = schema.field(i);
    Json field{{"name", f.name}, {"type", FieldTypeName(f.type)}, {"kind", KindInfoOf(f.kind()).name},
               {"indexed", f.indexed}, {"shape", f.shape}};
    if (f.type == FieldType::kBytes) field["compression"] = BlobCompressionName(f.compression);
    const int index = static_cast<int>(i);
    if (index == roles.label) field["role"] = "label";
    if (index == roles.boxes) field["role"] = "boxes";
    if (index == roles.box_labels) field["role"] = "box labels";
    fields.push_back(std::move(field));
  }
  return fields;
}

Json SegmentsJson(const Dataset& dataset) {
  Json segments = Json::array();
  for (const SegmentInfo& s : dataset.segments()) {
    Json groups = Json::array();
    for (const FieldGroupInfo& g : s.field_groups) groups.push_back(Json{{"version", g.generation}, {"fields", g.fields}});
    segments.push_back(Json{{"version", s.generation}, {"first_id", s.first_id}, {"records", s.records},
                            {"shards", s.shards}, {"field_groups", std::move(groups)},
                            {"dropped_fields", s.dropped_fields}});
  }
  return segments;
}

Json BytesJson(const Dataset& dataset) {
  uint64_t shards = 0, indexes = 0, blobs = 0, scalar_raw = 0, scalar_stored = 0;
  for (const ShardInfo& s : dataset.shards()) {
    shards += s.file_bytes;
    indexes += s.index_bytes;
    blobs += s.blob_bytes;
    scalar_raw += s.scalar_raw_bytes;
    scalar_stored += s.scalar_stored_bytes;
  }
  return Json{{"shards", shards}, {"indexes", indexes}, {"blobs", blobs}, {"scalar_pages_raw", scalar_raw},
              {"scalar_pages_stored", scalar_stored}};
}

// The kept versions, newest first, each compared with the one before it
// (the fields it added and dropped, the records it added) by opening it:
// headers and manifests only, milliseconds each.
Json VersionsJson(const Dataset& dataset, const std::string& path) {
  if (dataset.version() == 0 || dataset.is_remote()) return Json::array();
  Result<VersionList> listed = ListVersions(path);
  if (!listed.ok()) return Json{{"error", listed.status().ToString()}};
  const std::vector<VersionInfo>& versions = listed->versions;
  const size_t first = versions.size() > kMaxVersionsCompared + 1 ? versions.size() - kMaxVersionsCompared - 1 : 0;
  Json out = Json::array();
  std::set<std::string> before;
  uint64_t records_before = 0;
  for (size_t i = first; i < versions.size(); ++i) {
    const VersionInfo& v = versions[i];
    Json row{{"version", v.generation}, {"latest", v.latest}, {"tags", v.tags}, {"segments", v.segments},
             {"shards", v.shards}, {"committed_unix_s", v.committed_unix_s}, {"opened", v.generation == dataset.version()}};
    DatasetOptions options;
    options.version = v.generation;
    options.page_cache_bytes = 0;
    options.remote = dataset.options().remote;
    Result<std::shared_ptr<Dataset>> opened = Dataset::Open(path, options);
    if (!opened.ok()) {
      row["error"] = opened.status().ToString();
    } else {
      std::set<std::string> fields;
      for (const Field& f : (*opened)->schema().fields()) fields.insert(f.name);
      Json added = Json::array(), dropped = Json::array();
      for (const std::string& name : fields) {
        if (i > first && !before.count(name)) added.push_back(name);
      }
      for (const std::string& name : before) {
        if (!fields.count(name)) dropped.push_back(name);
      }
      row["records"] = (*opened)->size();
      if (i > first) {
        row["added_fields"] = std::move(added);
        row["dropped_fields"] = std::move(dropped);
        row["added_records"] = static_cast<int64_t>((*opened)->size()) - static_cast<int64_t>(records_before);
      }
      before = std::move(fields);
      records_before = (*opened)->size();
    }
    if (i > first || first == 0) out.push_back(std::move(row));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

Json OverviewJson(const Dataset& dataset, const std::string& path, const FieldRoles& roles,
                  const ServeOptions& options) {
  Json metadata = Json::array();
  for (const auto& [key, value] : dataset.metadata()) {
    Json entry{{"key", key}, {"bytes", value.size()}, {"text", value.substr(0, kMetadataText)}};
    metadata.push_back(std::move(entry));
  }
  Json classes = Json::array();
  for (size_t i = 0; i < std::min(roles.class_names.size(), kMaxClassNames); ++i) classes.push_back(roles.class_names[i]);
  Json categories = Json::array();
  for (const auto& [id, name] : roles.category_names) categories.push_back(Json{{"id", id}, {"name", name}});
  return Json{{"path", path},
              {"uuid", dataset.uuid()},
              {"records", dataset.size()},
              {"version", dataset.version()},
              {"remote", dataset.is_remote()},
              {"files", dataset.num_files()},
              {"fields", FieldsJson(dataset.schema(), roles)},
              {"bytes", BytesJson(dataset)},
              {"segments", SegmentsJson(dataset)},
              {"versions", VersionsJson(dataset, path)},
              {"classes", std::move(classes)},
              {"categories", std::move(categories)},
              {"metadata", std::move(metadata)},
              {"thumbnail_size", options.thumbnail_size},
              {"box_format", BoxFormatName(options.box_format)}};
}

}  // namespace unirecord::serve
