// ConvertJsonl and ConvertCsv: a manifest of samples, one a line, into a
// unirecord dataset in the manifest's order, through the converters' shared
// machinery (convert/file_records.h): the image field's files are read,
// checked and transcoded as ConvertImageFolder's are.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "convert/file_records.h"
#include "convert/manifest.h"
#include "unirecord/convert.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using convert_internal::ManifestLine;
using convert_internal::ManifestSchema;

Result<ConvertReport> ConvertManifest(const std::string& manifest, const std::string& schema_path,
                                      const std::string& out, const ConvertOptions& options, bool csv) {
  const auto start = std::chrono::steady_clock::now();
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "threads").status());
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("give a shard count or a shard size, not both");
  }
  std::string schema_text, text;
  UREC_RETURN_IF_ERROR(ReadConverterInput("schema file", schema_path, &schema_text));
  UREC_ASSIGN_OR_RETURN(const ManifestSchema schema, convert_internal::ParseManifestSchema(schema_text, schema_path));
  UREC_RETURN_IF_ERROR(ReadConverterInput("manifest", manifest, &text));
  std::vector<ManifestLine> lines;
  if (csv) {
    UREC_ASSIGN_OR_RETURN(lines, convert_internal::ParseCsvManifest(text, schema, manifest));
  } else {
    lines = convert_internal::ParseJsonlManifest(text, schema);
  }
  text.clear();
  if (lines.empty()) return Status::InvalidArgument(manifest + ": no sample line");
  if (options.num_shards > lines.size()) {
    return Status::InvalidArgument("num_shards " + std::to_string(options.num_shards) + " is more than the " +
                                   std::to_string(lines.size()) + " samples: some shards would be empty");
  }
  // Every line is a candidate; without an image field nothing is read.
  std::vector<ImageFolderFile> files;
  for (size_t i = 0; i < lines.size(); ++i) {
    // The rejects report's path: the image's, else the line's.
    const bool by_image = schema.image >= 0 && lines[i].reason.empty();
    files.push_back({by_image ? lines[i].image_path : "line " + std::to_string(lines[i].line),
                     static_cast<int64_t>(i), /*is_candidate=*/true});
  }
  const std::vector<size_t> shard_starts =
      options.num_shards > 0 ? convert_internal::ShardStarts(files, files.size(), options.num_shards)
                             : std::vector<size_t>();
  const fs::path manifest_path(manifest);
  std::string name = options.name.empty() ? manifest_path.stem().string() : options.name;
  if (name.empty()) name = "data";
  const std::string root = manifest_path.has_parent_path() ? manifest_path.parent_path().string() : ".";

  convert_internal::ImageRecordHooks hooks;
  hooks.image_field = schema.image >= 0 ? schema.fields[static_cast<size_t>(schema.image)].name : "";
  hooks.invalid = [&](size_t i) { return lines[i].reason; };
  hooks.skip_reason = [](size_t) { return std::string(); };  // every line is a candidate
  hooks.strict_name = [&](size_t i) {
    const std::string line = manifest + " line " + std::to_string(lines[i].line);
    return files[i].path.rfind("line ", 0) == 0 ? line : root + "/" + files[i].path + " (" + line + ")";
  };
  size_t path_field = 0;
  if (schema.image >= 0) {
    UREC_ASSIGN_OR_RETURN(path_field, schema.schema.FindField("path"));
  }
  hooks.fill = [&](size_t i, RecordBuilder& record) {
    const ManifestLine& line = lines[i];
    for (size_t k = 0; k < schema.fields.size(); ++k) {
      const Field& field = schema.fields[k];
      if (static_cast<int>(k) == schema.image) continue;
      const ManifestLine::Value& value = line.values[k];
      if (field.type == FieldType::kString) {
        UREC_RETURN_IF_ERROR(record.SetString(k, value.text));
      } else {
        UREC_RETURN_IF_ERROR(record.SetValues(k, field.type, value.data.data(), value.shape));
      }
    }
    if (schema.image >= 0) UREC_RETURN_IF_ERROR(record.SetString(path_field, line.image_path));
    return Status::OK();
  };
  ConvertReport head;
  head.name = name;
  UREC_ASSIGN_OR_RETURN(ConvertReport report, convert_internal::ConvertLocally(
      out, name, options, files.size(), head,
      [&](const std::string& token, uint32_t part, uint32_t num_parts, const ConvertOptions& o) -> Result<ConvertReport> {
        std::vector<size_t> starts = shard_starts;
        if (!starts.empty()) starts.pop_back();  // a part lists where its shards start
        return convert_internal::WriteImagePart({out, name, token, part, num_parts, schema.schema, {}}, root, files,
                                                starts, o, hooks);
      }));
  report.seconds = convert_internal::SecondsSince(start);
  return report;
}

}  // namespace

Result<ConvertReport> ConvertJsonl(const std::string& manifest, const std::string& schema, const std::string& out,
                                   const ConvertOptions& options) {
  return ConvertManifest(manifest, schema, out, options, /*csv=*/false);
}

Result<ConvertReport> ConvertCsv(const std::string& manifest, const std::string& schema, const std::string& out,
                                 const ConvertOptions& options) {
  return ConvertManifest(manifest, schema, out, options, /*csv=*/true);
}

}  // namespace unirecord
