// urec merge OUT IN... --name N: datasets with one schema and class list into one.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "unirecord/convert.h"
#include "unirecord/writer.h"

namespace unirecord::cli {
namespace {

struct MergeArgs {
  std::string out;
  std::vector<std::string> inputs;
  std::string name;
  std::vector<std::string> defaults;  // FIELD=VALUE
};

Status RunMerge(const MergeArgs& args) {
  StagedWriteOptions options;
  UREC_ASSIGN_OR_RETURN(const std::string defaults, DefaultsObject(args.defaults));
  if (!defaults.empty()) options.defaults = JsonFieldDefaults(defaults);
  UREC_ASSIGN_OR_RETURN(WriterSummary summary, MergeDatasets(args.out, args.name, args.inputs, options));
  std::printf("%zu datasets: %llu records, %u shards, %.1f MB -> %s (generation %llu)\n", args.inputs.size(),
              static_cast<unsigned long long>(summary.records), summary.shards,
              static_cast<double>(summary.bytes) / 1e6, summary.manifest_path.c_str(),
              static_cast<unsigned long long>(summary.generation));
  return Status::OK();
}

CommandRunner SetupMerge(CLI::App* cmd) {
  auto args = std::make_shared<MergeArgs>();
  cmd->add_option("OUT", args->out, "Output folder (created if missing)")->required();
  cmd->add_option("IN", args->inputs, "Datasets to merge, in id order (folders, OUT/NAME or .urec paths)")
      ->required();
  cmd->add_option("--name", args->name, "Name of the merged dataset")->required();
  AddDefaultOption(cmd, &args->defaults,
                   "the value of the records of inputs that lack fields the others added later");
  return [args] { return RunMerge(*args); };
}

UREC_REGISTER_COMMAND("merge",
                      "Merge datasets of one schema and class list into one (ids in argument order; shards linked, not rewritten; "
                      "--default for fields some lack)",
                      SetupMerge);

}  // namespace
}  // namespace unirecord::cli
