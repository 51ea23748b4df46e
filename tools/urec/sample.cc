// `urec sample`: prints the record ids one rank (and worker) reads in one
// epoch, one per line — to check the sampler against other implementations.
// Several --records sizes are a weighted mixture (ids numbered one source
// after another), as Loader's over several datasets. With --check, plans
// every rank's coverage digest of the epoch instead (a stop and a resume on
// another number of ranks too) and checks that together they read it exactly.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "unirecord/coverage.h"
#include "unirecord/sampler.h"

namespace unirecord::cli {
namespace {

struct SampleCommandOptions {
  std::vector<uint64_t> records;  // one size per source
  std::string order = "shuffle";
  uint64_t epoch = 0;
  uint64_t start = 0;
  SamplerOptions sampler;
  // --check and the run it plans.
  bool check = false;
  bool ids = false;
  uint64_t stop = 0;
  uint32_t resume_shards = 0;
  uint64_t resume_at = 0;
  std::optional<uint64_t> resume_position;  // resume_at, when given
};

// The planned run's digests, checked: the check's one line on stdout, or
// its failure as the error.
Status CheckPlannedRun(const SampleCommandOptions& opts, const SamplerOptions& options) {
  if (opts.start != 0) return Status::InvalidArgument("--start: the whole epoch is checked (with --stop, from 0)");
  if ((opts.stop != 0 || opts.resume_position) && opts.resume_shards == 0) {
    return Status::InvalidArgument("--stop and --resume-position plan a resume: give --resume-shards");
  }
  CoveragePlan plan;
  plan.source_sizes = opts.records;
  plan.sampler = options;
  plan.epoch = opts.epoch;
  plan.detail = opts.ids ? CoverageDetail::kIds : CoverageDetail::kDigest;
  plan.stop = opts.stop;
  plan.resume_shards = opts.resume_shards;
  plan.resume_position = opts.resume_position;
  UREC_ASSIGN_OR_RETURN(std::vector<CoverageDigest> digests, PlanCoverage(plan));
  UREC_ASSIGN_OR_RETURN(CoverageCheck check, CheckCoverage(digests));
  if (!check.ok) return Status::FailedPrecondition("coverage check failed: " + check.message);
  std::printf("ok: %s\n", check.message.c_str());
  if (std::fflush(stdout) != 0) return Status::IOError("cannot write to stdout");
  return Status::OK();
}

Status RunSample(const SampleCommandOptions& opts) {
  SamplerOptions options = opts.sampler;
  UREC_ASSIGN_OR_RETURN(options.order, ParseSampleOrder(opts.order));
  if (opts.check) return CheckPlannedRun(opts, options);
  if (opts.ids || opts.stop != 0 || opts.resume_shards != 0 || opts.resume_position) {
    return Status::InvalidArgument("--ids, --stop, --resume-shards and --resume-position go with --check");
  }
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
  cmd->add_flag("--check", opts->check,
                "Instead of ids: check that every rank of --num-shards together reads the epoch exactly (coverage)");
  cmd->add_flag("--ids", opts->ids, "--check: name each missing or repeated id (bitmaps)");
  cmd->add_option("--stop", opts->stop, "--check: each rank stops after this many ids, then the run resumes")
      ->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--resume-shards", opts->resume_shards, "--check: the ranks of the resumed run")
      ->check(IntegerIn(1, UINT32_MAX));
  CLI::Option* resume_at =
      cmd->add_option("--resume-position", opts->resume_at,
                      "--check: resume from this position of the epoch (default: where the ranks stopped)")
          ->check(IntegerIn(0, UINT64_MAX));
  return [opts, resume_at] {
    if (resume_at->count() > 0) opts->resume_position = opts->resume_at;
    return RunSample(*opts);
  };
}

UREC_REGISTER_COMMAND("sample", "Print the record ids a rank reads in one epoch (sampler debugging)", SetupSample);

}  // namespace
}  // namespace unirecord::cli
