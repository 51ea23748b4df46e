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
#include "convert/media_cut.h"
#include "unirecord/convert.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace convert_internal {
namespace {

// A line is named by its image when it has a usable one, else by its number
// (the rejects report's path, and strict mode's).
bool NamedByImage(const ManifestSchema& schema, const ManifestLine& line) {
  return schema.image >= 0 && line.reason.empty();
}

}  // namespace

Result<PreparedConversion> PrepareManifest(const std::string& manifest, const std::string& schema_path,
                                           const ConvertOptions& options, bool csv) {
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "threads").status());
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("give a shard count or a shard size, not both");
  }
  // What the hooks read, kept with the conversion.
  struct Input {
    ManifestSchema schema;
    std::vector<ManifestLine> lines;
    size_t path_field = 0;
  };
  auto input = std::make_shared<Input>();
  std::string schema_text, text;
  UREC_RETURN_IF_ERROR(ReadConverterInput("schema file", schema_path, &schema_text));
  UREC_ASSIGN_OR_RETURN(input->schema, ParseManifestSchema(schema_text, schema_path));
  const ManifestSchema& schema = input->schema;
  std::vector<ManifestLine>& lines = input->lines;
  UREC_RETURN_IF_ERROR(ReadConverterInput("manifest", manifest, &text));
  if (csv) {
    UREC_ASSIGN_OR_RETURN(lines, ParseCsvManifest(text, schema, manifest));
  } else {
    lines = ParseJsonlManifest(text, schema);
  }
  text.clear();
  if (lines.empty()) return Status::InvalidArgument(manifest + ": no sample line");
  if (options.num_shards > lines.size()) {
    return Status::InvalidArgument("num_shards " + std::to_string(options.num_shards) + " is more than the " +
                                   std::to_string(lines.size()) + " samples: some shards would be empty");
  }
  PreparedConversion c;
  // Every line is a candidate; without an image field nothing is read.
  for (size_t i = 0; i < lines.size(); ++i) {
    c.files.push_back({NamedByImage(schema, lines[i]) ? lines[i].image_path : "line " + std::to_string(lines[i].line),
                       static_cast<int64_t>(i), /*is_candidate=*/true});
  }
  if (options.num_shards > 0) c.shard_starts = ShardStarts(c.files, c.files.size(), options.num_shards);
  const std::filesystem::path manifest_path(manifest);
  c.name = options.name.empty() ? manifest_path.stem().string() : options.name;
  if (c.name.empty()) c.name = "data";
  c.root = manifest_path.has_parent_path() ? manifest_path.parent_path().string() : ".";
  c.schema = schema.schema;
  if (schema.image >= 0) {
    UREC_ASSIGN_OR_RETURN(input->path_field, schema.schema.FindField("path"));
  }
  const Input* in = input.get();
  c.hooks.image_field = schema.image >= 0 ? schema.fields[static_cast<size_t>(schema.image)].name : "";
  c.hooks.media = schema.media;
  if (schema.start >= 0 || schema.end >= 0) {
    c.hooks.prepare_media = [in, manifest](size_t i, std::string* value) -> Status {
      const ManifestSchema& s = in->schema;
      const ManifestLine& line = in->lines[i];
      const auto seconds = [&](int k, double absent) {
        if (k < 0) return absent;
        return ElementToDouble(s.fields[static_cast<size_t>(k)].type, line.values[static_cast<size_t>(k)].data.data());
      };
      UREC_ASSIGN_OR_RETURN(*value, CutMediaValue(*value, seconds(s.start, 0), seconds(s.end, -1),
                                                  manifest + " line " + std::to_string(line.line)));
      return Status::OK();
    };
  }
  c.hooks.invalid = [in](size_t i) { return in->lines[i].reason; };
  c.hooks.skip_reason = [](size_t) { return std::string(); };  // every line is a candidate
  c.hooks.strict_name = [in, manifest, root = c.root](size_t i) {
    const ManifestLine& line = in->lines[i];
    const std::string where = manifest + " line " + std::to_string(line.line);
    return NamedByImage(in->schema, line) ? root + "/" + line.image_path + " (" + where + ")" : where;
  };
  c.hooks.fill = [in](size_t i, RecordBuilder& record) {
    const ManifestLine& line = in->lines[i];
    const ManifestSchema& s = in->schema;
    UREC_RETURN_IF_ERROR(SetManifestValues(s, line, 0, record));
    if (s.image >= 0) UREC_RETURN_IF_ERROR(record.SetString(in->path_field, line.image_path));
    return Status::OK();
  };
  c.head.name = c.name;
  c.input = std::move(input);
  return c;
}

}  // namespace convert_internal

namespace {

Result<ConvertReport> ConvertManifest(const std::string& manifest, const std::string& schema_path,
                                      const std::string& out, const ConvertOptions& options, bool csv) {
  const auto start = std::chrono::steady_clock::now();
  UREC_ASSIGN_OR_RETURN(const convert_internal::PreparedConversion c,
                        convert_internal::PrepareManifest(manifest, schema_path, options, csv));
  UREC_ASSIGN_OR_RETURN(ConvertReport report, convert_internal::ConvertPrepared(c, out, options));
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
