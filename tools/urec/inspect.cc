// urec inspect: what a dataset holds, for people (default) or programs (--json).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "dataset_json.h"

namespace unirecord::cli {
namespace {

struct InspectArgs {
  VersionChoice version;
  std::string path;
  RemoteOptions remote;
  bool json = false;
  bool verify = false;
};

struct Totals {
  uint64_t shard_bytes = 0, index_bytes = 0, blob_bytes = 0, blob_pages = 0, scalar_pages = 0;
  uint64_t scalar_raw_bytes = 0, scalar_stored_bytes = 0;
};

Totals SumShards(const std::vector<ShardInfo>& shards) {
  Totals t;
  for (const ShardInfo& s : shards) {
    t.shard_bytes += s.file_bytes;
    t.index_bytes += s.index_bytes;
    t.blob_bytes += s.blob_bytes;
    t.blob_pages += s.blob_pages;
    t.scalar_pages += s.scalar_pages;
    t.scalar_raw_bytes += s.scalar_raw_bytes;
    t.scalar_stored_bytes += s.scalar_stored_bytes;
  }
  return t;
}

struct IndexedStats {
  std::string name;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double mean = 0;
};

// One pass over the index record table per indexed field (no page is read).
Result<std::vector<IndexedStats>> ScanIndexedFields(const Dataset& dataset, std::vector<uint64_t>* label_counts) {
  std::vector<IndexedStats> stats;
  const Schema& schema = dataset.schema();
  for (size_t f = 0; f < schema.num_fields(); ++f) {
    const Field& field = schema.field(f);
    if (field.storage() != StorageClass::kIndexed) continue;  // list indexes have no scalar values
    const bool is_float = FindType(field.type)->kind == 'f';
    const bool is_label = field.name == "label" && !is_float;
    IndexedStats s{field.name};
    double sum = 0;
    for (uint64_t id = 0; id < dataset.size(); ++id) {
      double v;
      if (is_float) {
        UREC_ASSIGN_OR_RETURN(v, dataset.GetIndexedFloat64(id, f));
      } else {
        UREC_ASSIGN_OR_RETURN(int64_t i, dataset.GetIndexedInt64(id, f));
        v = static_cast<double>(i);
        if (is_label && i >= 0 && i < (int64_t{1} << 24)) {
          if (static_cast<uint64_t>(i) >= label_counts->size()) label_counts->resize(i + 1);
          ++(*label_counts)[i];
        }
      }
      s.min = std::min(s.min, v);
      s.max = std::max(s.max, v);
      sum += v;
    }
    s.mean = dataset.size() ? sum / dataset.size() : 0;
    stats.push_back(s);
  }
  return stats;
}

// "512 B", "23.0 KB", "20.2 MB", "1.3 GB" (powers of 1000, as du -h --si).
std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1000 && unit + 1 < std::size(units)) {
    value /= 1000;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

Json ShardToJson(const ShardInfo& s) {
  return Json{{"number", s.number},
              {"segment", s.segment},
              {"path", s.path},
              {"index_path", s.index_path},
              {"first_id", s.first_id},
              {"records", s.records},
              {"file_bytes", s.file_bytes},
              {"index_bytes", s.index_bytes},
              {"blob_pages", s.blob_pages},
              {"scalar_pages", s.scalar_pages},
              {"blob_bytes", s.blob_bytes},
              {"scalar_raw_bytes", s.scalar_raw_bytes},
              {"scalar_stored_bytes", s.scalar_stored_bytes},
              {"blob_page_bytes", s.blob_page_bytes},
              {"scalar_page_bytes", s.scalar_page_bytes},
              {"index_entry_bytes", s.index_entry_bytes},
              {"format_version", std::to_string(s.format_major) + "." + std::to_string(s.format_minor)}};
}

void PrintJson(const InspectArgs& args, const Dataset& ds, const Totals& t, const std::vector<IndexedStats>& stats,
               const std::vector<uint64_t>& label_counts) {
  Json schema = Json::array();
  Json index_fields = Json::array();
  for (const Field& f : ds.schema().fields()) {
    schema.push_back(FieldSchemaToJson(f));
    if (f.indexed) index_fields.push_back(f.name);
  }
  Json metadata = Json::object();
  for (const auto& [key, value] : ds.metadata()) metadata[key] = value;
  Json out{{"path", args.path}, {"uuid", ds.uuid()}, {"records", ds.size()}, {"shards", ds.num_files()},
           {"schema", schema}, {"metadata", metadata}};
  const auto classes = ds.metadata().find(kClassesMetadataKey);
  if (classes != ds.metadata().end()) out["classes"] = DecodeNameList(classes->second);
  out["index_fields"] = index_fields;
  out["media"] = MediaFieldsJson(ds.schema());
  out["version"] = ds.version();
  Json segments = Json::array();
  for (const SegmentInfo& g : ds.segments()) {
    Json groups = Json::array();
    for (const FieldGroupInfo& f : g.field_groups) {
      groups.push_back(Json{{"generation", f.generation}, {"uuid", f.uuid}, {"fields", f.fields}, {"files", f.paths}});
    }
    segments.push_back(Json{{"generation", g.generation}, {"uuid", g.uuid}, {"first_shard", g.first_shard},
                            {"shards", g.shards}, {"first_id", g.first_id}, {"records", g.records},
                            {"field_groups", groups}, {"dropped_fields", g.dropped_fields}});
  }
  out["segments"] = segments;
  Json index_stats = Json::object();
  for (const IndexedStats& s : stats) {
    // No record: no min, max or mean (null); else as `urec cat` prints floats.
    const auto value = [&](double v) { return ds.size() == 0 ? Json(nullptr) : FloatToJson(v); };
    // A computed NaN's sign means nothing (inf + -inf gives -nan on x86).
    const double mean = std::isnan(s.mean) ? std::fabs(s.mean) : s.mean;
    index_stats[s.name] = Json{{"min", value(s.min)}, {"max", value(s.max)}, {"mean", value(mean)}};
  }
  out["index_stats"] = index_stats;
  if (!label_counts.empty()) out["label_counts"] = label_counts;
  out["sizes"] = Json{{"shard_bytes", t.shard_bytes},
                      {"index_bytes", t.index_bytes},
                      {"blob_bytes", t.blob_bytes},
                      {"blob_pages", t.blob_pages},
                      {"scalar_pages", t.scalar_pages},
                      {"scalar_raw_bytes", t.scalar_raw_bytes},
                      {"scalar_stored_bytes", t.scalar_stored_bytes},
                      {"mean_blob_bytes_per_record", ds.size() ? static_cast<double>(t.blob_bytes) / ds.size() : 0.0}};
  Json shards = Json::array();
  for (const ShardInfo& s : ds.shards()) shards.push_back(ShardToJson(s));
  out["shard_files"] = shards;
  if (args.verify) out["verified"] = true;
  std::printf("%s\n", DumpJson(out).c_str());
}

void PrintText(const InspectArgs& args, const Dataset& ds, const Totals& t, const std::vector<IndexedStats>& stats,
               const std::vector<uint64_t>& label_counts) {
  std::printf("dataset   %s (uuid %s)\n", args.path.c_str(), ds.uuid().c_str());
  std::printf("records   %llu in %u shard%s\n", static_cast<unsigned long long>(ds.size()), ds.num_files(),
              ds.num_files() == 1 ? "" : "s");
  std::printf("schema    %s\n", ds.schema().ToString().c_str());
  for (const Json& m : MediaFieldsJson(ds.schema())) {
    std::string params;
    for (const Json& p : m["parameters"]) params += (params.empty() ? "" : ", ") + p.get<std::string>();
    std::printf("media     %s: %s stream, parameter fields %s\n", m["field"].get<std::string>().c_str(),
                m["kind"].get<std::string>().c_str(), params.c_str());
  }
  for (const auto& [key, value] : ds.metadata()) {
    if (key == kClassesMetadataKey) {
      const std::vector<std::string> names = DecodeNameList(value);
      std::string shown;
      for (size_t i = 0; i < names.size() && i < 5; ++i) shown += (i ? ", " : "") + names[i];
      if (names.size() > 5) shown += ", ...";
      std::printf("metadata  %s: %zu names (%s)\n", key.c_str(), names.size(), shown.c_str());
    } else {
      const bool long_value = value.size() > 60 || value.find('\n') != std::string::npos;
      std::printf("metadata  %s: %s\n", key.c_str(),
                  long_value ? (std::to_string(value.size()) + " bytes").c_str() : value.c_str());
    }
  }
  std::printf("sizes     %s in shards, %s in indexes; blobs %s (%.0f B/record mean)",
              HumanBytes(t.shard_bytes).c_str(), HumanBytes(t.index_bytes).c_str(), HumanBytes(t.blob_bytes).c_str(),
              ds.size() ? static_cast<double>(t.blob_bytes) / ds.size() : 0.0);
  if (t.scalar_stored_bytes > 0) {
    std::printf("; scalars %s raw, %s stored (%.1fx)", HumanBytes(t.scalar_raw_bytes).c_str(),
                HumanBytes(t.scalar_stored_bytes).c_str(),
                static_cast<double>(t.scalar_raw_bytes) / t.scalar_stored_bytes);
  }
  std::printf("\npages     %llu blob, %llu scalar\n", static_cast<unsigned long long>(t.blob_pages),
              static_cast<unsigned long long>(t.scalar_pages));
  for (const IndexedStats& s : stats) {
    std::printf("index     %s: min %s, max %s, mean %s\n", s.name.c_str(), Num(s.min).c_str(), Num(s.max).c_str(),
                Num(s.mean).c_str());
  }
  if (!label_counts.empty()) {
    const auto [fewest, most] = std::minmax_element(label_counts.begin(), label_counts.end());
    std::printf("labels    %zu labels, %llu..%llu records each\n", label_counts.size(),
                static_cast<unsigned long long>(*fewest), static_cast<unsigned long long>(*most));
  }
  if (ds.version() > 0) {
    std::printf("version   %llu (urec versions lists the kept ones)\n", static_cast<unsigned long long>(ds.version()));
  }
  if (ds.segments().size() > 1) {
    for (size_t k = 0; k < ds.segments().size(); ++k) {
      const SegmentInfo& g = ds.segments()[k];
      std::printf("segment %zu ids %llu.. (%llu), shards %u..%u, generation %llu, dataset %s\n", k,
                  static_cast<unsigned long long>(g.first_id), static_cast<unsigned long long>(g.records),
                  g.first_shard, g.first_shard + g.shards - 1, static_cast<unsigned long long>(g.generation),
                  g.uuid.c_str());
    }
  }
  // Fields added later (format/SPEC.md section 1.4), and those dropped.
  for (size_t k = 0; k < ds.segments().size(); ++k) {
    const SegmentInfo& g = ds.segments()[k];
    for (const FieldGroupInfo& f : g.field_groups) {
      std::string names;
      for (const std::string& n : f.fields) names += (names.empty() ? "" : ", ") + n;
      std::printf("fields    segment %zu, added in version %llu: %s (%zu column files like %s)\n", k,
                  static_cast<unsigned long long>(f.generation), names.c_str(), f.paths.size(),
                  f.paths.empty() ? "" : f.paths[0].c_str());
    }
    if (!g.dropped_fields.empty()) {
      std::string names;
      for (const std::string& n : g.dropped_fields) names += (names.empty() ? "" : ", ") + n;
      std::printf("dropped   segment %zu: %s\n", k, names.c_str());
    }
  }
  for (const ShardInfo& s : ds.shards()) {
    std::printf("shard %u   %s: ids %llu..%llu (%llu), %s, index %s, pages %llu blob + %llu scalar, format %u.%u\n",
                s.number, s.path.c_str(), static_cast<unsigned long long>(s.first_id),
                static_cast<unsigned long long>(s.first_id + s.records) - (s.records ? 1 : 0),
                static_cast<unsigned long long>(s.records), HumanBytes(s.file_bytes).c_str(),
                HumanBytes(s.index_bytes).c_str(), static_cast<unsigned long long>(s.blob_pages),
                static_cast<unsigned long long>(s.scalar_pages), s.format_major, s.format_minor);
  }
  if (args.verify) std::printf("verified  every checksum and the index of every shard and column file\n");
}

Status RunInspect(const InspectArgs& args) {
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, OpenForReading(args.path, args.remote, args.version));
  if (args.verify) UREC_RETURN_IF_ERROR(dataset->Verify());
  std::vector<uint64_t> label_counts;
  UREC_ASSIGN_OR_RETURN(std::vector<IndexedStats> stats, ScanIndexedFields(*dataset, &label_counts));
  const Totals totals = SumShards(dataset->shards());
  if (args.json) {
    PrintJson(args, *dataset, totals, stats, label_counts);
  } else {
    PrintText(args, *dataset, totals, stats, label_counts);
  }
  return Status::OK();
}

CommandRunner SetupInspect(CLI::App* cmd) {
  auto args = std::make_shared<InspectArgs>();
  cmd->add_option("PATH", args->path, "Dataset folder, one .urec shard, a glob, or an http(s):// or s3:// location")->required();
  AddRemoteOptions(cmd, &args->remote);
  AddVersionOptions(cmd, &args->version);
  cmd->add_flag("--json", args->json, "Machine-readable output");
  cmd->add_flag("--verify", args->verify, "Also check every checksum (reads everything)");
  return [args] { return RunInspect(*args); };
}

}  // namespace

UREC_REGISTER_COMMAND("inspect", "Describe a dataset: shards, records, schema, metadata, sizes", SetupInspect);

}  // namespace unirecord::cli
