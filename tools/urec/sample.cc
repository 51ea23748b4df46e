// `urec sample`: prints the record ids one rank (and worker) reads in one
// epoch, one per line — to check the sampler against other implementations.
// Several --records sizes are a weighted mixture (ids numbered one source
// after another), as Loader's over several datasets.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "unirecord/sampler.h"

namespace unirecord::cli {
namespace {

struct SampleCommandOptions {
  std::vector<uint64_t> records;  // one size per source
  std::string order = "shuffle";
  uint64_t epoch = 0;
  uint64_t start = 0;
  SamplerOptions sampler;
};

Status RunSample(const SampleCommandOptions& opts) {
  SamplerOptions options = opts.sampler;
  UREC_ASSIGN_OR_RETURN(options.order, ParseSampleOrder(opts.order));
  UREC_ASSIGN_OR_RETURN(Sampler sampler, Sampler::Create(opts.records, options));
  sampler.SetEpoch(opts.epoch);
  UREC_RETURN_IF_ERROR(sampler.Seek(opts.start));
  uint64_t id;
  while (sampler.Next(&id)) std::printf("%llu\n", static_cast<unsigned long long>(id));
  if (std::fflush(stdout) != 0) return Status::IOError("cannot write to stdout");
  return Status::OK();
}

CommandRunner SetupSample(CLI::App* cmd) {
  auto opts = std::make_shared<SampleCommandOptions>();
  cmd->add_option("--records", opts->records,
                  "Number of records n (ids 0..n-1); several, comma-separated: a mixture's source sizes")
      ->required()
      ->delimiter(',')
      ->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--weights", opts->sampler.weights,
                  "Mixture: each source's share of the epoch, comma-separated (default: by size)")
      ->delimiter(',')
      ->check(RealIn(0, 1e300));
  cmd->add_option("--epoch-size", opts->sampler.epoch_size, "Samples per epoch (0: the sources' total)")
      ->capture_default_str()
      ->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--order", opts->order, "sequential | shuffle | block")->capture_default_str();
  cmd->add_option("--seed", opts->sampler.seed, "Seed")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--epoch", opts->epoch, "Epoch")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--num-shards", opts->sampler.num_shards, "Ranks")->capture_default_str()->check(IntegerIn(1, UINT32_MAX));
  cmd->add_option("--shard-id", opts->sampler.shard_id, "This rank")->capture_default_str()->check(IntegerIn(0, UINT32_MAX));
  cmd->add_flag("--drop-last", opts->sampler.drop_last, "Drop the tail instead of padding");
  cmd->add_option("--block-size", opts->sampler.block_size, "Block shuffle: ids per run")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--window", opts->sampler.window, "Block shuffle: positions shuffled together")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--num-workers", opts->sampler.num_workers, "Workers sharing the rank")->capture_default_str()->check(IntegerIn(1, UINT32_MAX));
  cmd->add_option("--worker-id", opts->sampler.worker_id, "This worker")->capture_default_str()->check(IntegerIn(0, UINT32_MAX));
  cmd->add_option("--start", opts->start, "Position to start from")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  return [opts] { return RunSample(*opts); };
}

UREC_REGISTER_COMMAND("sample", "Print the record ids a rank reads in one epoch (sampler debugging)", SetupSample);

}  // namespace
}  // namespace unirecord::cli
