// urec cat: one record by global id, so it can be checked from a shell.
//
//   urec cat out/ 17 --field image > 17.jpg    (a bytes field, raw)
//   urec cat out/ 17                           (every field as JSON)
//   urec cat out/ 17 --field video -o 17.mp4   (a video or audio field: a playable file)
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "convert/tool_files.h"
#include "dataset_json.h"
#include "unirecord/media.h"

namespace unirecord::cli {
namespace {

struct CatArgs {
  VersionChoice version;
  std::string path;
  RemoteOptions remote;
  uint64_t id = 0;
  std::string field;
  std::string output;
  bool json = false;
};

// Bytes for a binary field: to `output` when given, else to standard
// output unless it is a terminal.
Status WriteBinary(const CatArgs& args, std::string_view bytes) {
  if (!args.output.empty()) return WriteWholeFile(args.output, {bytes});
  if (isatty(STDOUT_FILENO)) {
    return Status::InvalidArgument("field '" + args.field +
                                   "' is binary; give -o FILE or redirect standard output to a file (> record.bin)");
  }
  return WriteStdout(bytes);
}

Status RunCat(const CatArgs& args) {
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, OpenForReading(args.path, args.remote, args.version));
  if (args.id >= dataset->size()) {
    return Status::OutOfRange("record " + std::to_string(args.id) + " does not exist: " + args.path + " has " +
                              std::to_string(dataset->size()) + " records (ids 0.." +
                              std::to_string(dataset->size()) + "-1)");
  }
  const Schema& schema = dataset->schema();
  if (!args.field.empty()) {
    UREC_ASSIGN_OR_RETURN(size_t field, FindDatasetField(args.path, *dataset, args.field));
    if (schema.field(field).type == FieldType::kBytes && !args.json) {
      UREC_ASSIGN_OR_RETURN(Blob blob, dataset->GetBlob(args.id, field));
      return WriteBinary(args, blob.data());
    }
    UREC_ASSIGN_OR_RETURN(Record record, dataset->Get(args.id));
    MediaKind kind;
    if (MediaKindOf(schema.field(field).type, &kind) && !args.json) {  // its packets, remuxed: a playable file
      UREC_ASSIGN_OR_RETURN(MediaValueView media, record.GetMedia(field));
      UREC_ASSIGN_OR_RETURN(media::RemuxedFile file,
                            media::Remux(media, "record " + std::to_string(args.id) + " field '" + args.field + "'"));
      return WriteBinary(args, file.bytes);
    }
    UREC_ASSIGN_OR_RETURN(Json value, FieldToJson(record, field));
    if (args.json) return WriteStdout(DumpJson(Json{{args.field, value}}) + "\n");
    // A plain value: strings as they are, numbers and arrays as JSON text.
    return WriteStdout((value.is_string() ? value.get<std::string>() : DumpJson(value)) + "\n");
  }
  UREC_ASSIGN_OR_RETURN(Record record, dataset->Get(args.id));
  std::vector<size_t> fields(schema.num_fields());
  for (size_t f = 0; f < fields.size(); ++f) fields[f] = f;
  UREC_ASSIGN_OR_RETURN(Json out, RecordToJson(record, fields));
  return WriteStdout(DumpJson(out) + "\n");
}

CommandRunner SetupCat(CLI::App* cmd) {
  auto args = std::make_shared<CatArgs>();
  cmd->add_option("PATH", args->path, "Dataset folder, one .urec shard, a glob, or an http(s):// or s3:// location")->required();
  AddRemoteOptions(cmd, &args->remote);
  AddVersionOptions(cmd, &args->version);
  cmd->add_option("ID", args->id, "Global record id (0-based)")->required()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--field", args->field,
                  "Print only this field: a bytes field raw, a video or audio field as a playable file (its packets "
                  "remuxed: mp4, webm, flac, wav or mkv by codec), other fields as text");
  cmd->add_option("-o,--output", args->output, "Write a bytes, video or audio field to this file");
  cmd->add_flag("--json", args->json, "JSON output (the default without --field); bytes fields show their size");
  return [args] { return RunCat(*args); };
}

}  // namespace

UREC_REGISTER_COMMAND("cat", "Print one record: a bytes field raw, or the fields as JSON", SetupCat);

}  // namespace unirecord::cli
