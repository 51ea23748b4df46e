// urec add-field / drop-field: fields added, replaced and dropped without
// rewriting the shards (unirecord/fields.h; format/SPEC.md section 1.4).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "unirecord/convert.h"
#include "unirecord/fields.h"

namespace unirecord::cli {
namespace {

void PrintCommitted(const char* what, const WriterSummary& summary) {
  std::printf("%s: %llu records, %.1f MB written -> %s (version %llu)\n", what,
              static_cast<unsigned long long>(summary.records), static_cast<double>(summary.bytes_written) / 1e6,
              summary.manifest_path.c_str(), static_cast<unsigned long long>(summary.generation));
}

struct AddFieldArgs {
  std::string path;
  std::string values;
  std::string schema;
  std::vector<std::string> defaults;  // FIELD=VALUE
};

CommandRunner SetupAddField(CLI::App* cmd) {
  auto args = std::make_shared<AddFieldArgs>();
  cmd->add_option("DATASET", args->path, "Dataset folder, DIR/NAME or DIR/NAME.uset")->required();
  cmd->add_option("FILE", args->values,
                  "JSON Lines, one line per record: {\"id\": RECORD_ID, \"FIELD\": value, ...}")
      ->required();
  cmd->add_option("--schema", args->schema, "The new fields' schema file, as for convert jsonl")->required();
  AddDefaultOption(cmd, &args->defaults,
                   "the value of the records of segments FILE has no line for (lines for new data only)");
  return [args]() -> Status {
    // {"FIELD": VALUE, ...}, parsed as a line of FILE.
    UREC_ASSIGN_OR_RETURN(const std::string defaults, DefaultsObject(args->defaults));
    UREC_ASSIGN_OR_RETURN(const WriterSummary summary,
                          AddFieldsFromJsonl(args->path, args->values, args->schema, {}, defaults));
    PrintCommitted("added fields", summary);
    return Status::OK();
  };
}

struct DropFieldArgs {
  std::string path;
  std::vector<std::string> fields;
};

CommandRunner SetupDropField(CLI::App* cmd) {
  auto args = std::make_shared<DropFieldArgs>();
  cmd->add_option("DATASET", args->path, "Dataset folder, DIR/NAME or DIR/NAME.uset")->required();
  cmd->add_option("FIELD", args->fields, "Fields to hide from the next version")->required();
  return [args]() -> Status {
    UREC_ASSIGN_OR_RETURN(const WriterSummary summary, DropFields(args->path, args->fields));
    PrintCommitted("dropped fields", summary);
    return Status::OK();
  };
}

}  // namespace

UREC_REGISTER_COMMAND("add-field",
                      "Add or replace fields from JSON Lines (--schema as for convert jsonl) as a new version, "
                      "without rewriting the shards",
                      SetupAddField);
UREC_REGISTER_COMMAND("drop-field", "Hide fields from the next version (their bytes go with urec gc)",
                      SetupDropField);

}  // namespace unirecord::cli
