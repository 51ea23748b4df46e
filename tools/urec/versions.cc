// urec versions / tag / gc: the kept versions of a dataset
// (unirecord/versions.h; format/SPEC.md section 1.3).
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "command.h"
#include "dataset_json.h"
#include "unirecord/dataset.h"
#include "unirecord/threads.h"
#include "unirecord/versions.h"

namespace unirecord::cli {
namespace {

std::string UtcTime(int64_t unix_s) {
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

struct VersionsArgs {
  std::string path;
  bool json = false;
  bool verify = false;
};

// --verify: every checksum of every file of version `generation`.
Status VerifyVersion(const std::string& path, uint64_t generation) {
  DatasetOptions options;
  options.version = generation;
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, Dataset::Open(path, options));
  return dataset->Verify();
}

Status RunVersions(const VersionsArgs& args) {
  UREC_ASSIGN_OR_RETURN(VersionList listed, ListVersions(args.path));
  for (const std::string& problem : listed.tag_problems) {
    std::fprintf(stderr, "urec versions: warning: %s\n", problem.c_str());
  }
  const std::vector<VersionInfo>& versions = listed.versions;
  std::vector<Status> verified(versions.size());
  Status first_problem;
  for (size_t i = 0; i < versions.size() && args.verify; ++i) {
    verified[i] = VerifyVersion(args.path, versions[i].generation);
    if (first_problem.ok() && !verified[i].ok()) {
      first_problem = Status(verified[i].code(), "version " + std::to_string(versions[i].generation) + ": " +
                                                     verified[i].message());
    }
  }
  if (args.json) {
    Json out = Json::array();
    for (size_t i = 0; i < versions.size(); ++i) {
      const VersionInfo& v = versions[i];
      Json row{{"version", v.generation}, {"latest", v.latest}, {"tags", v.tags},
               {"committed", UtcTime(v.committed_unix_s)}, {"segments", v.segments},
               {"shards", v.shards}, {"uuid", v.uuid}};
      if (args.verify) row["verified"] = verified[i].ok() ? Json("ok") : Json(verified[i].message());
      out.push_back(row);
    }
    // Every string is checked text (uuids, tags): the replacement only keeps
    // a wrong byte from aborting the dump.
    std::printf("%s\n", out.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    return first_problem;
  }
  std::printf("version  committed             segments  shards  uuid                                  %stags\n",
              args.verify ? "verified  " : "");
  for (size_t i = 0; i < versions.size(); ++i) {
    const VersionInfo& v = versions[i];
    std::string tags;
    for (const std::string& tag : v.tags) tags += (tags.empty() ? "" : ",") + tag;
    if (v.latest) tags += std::string(tags.empty() ? "" : " ") + "(latest)";
    std::printf("%-8llu %s  %8u  %6u  %s  %s%s\n", static_cast<unsigned long long>(v.generation),
                UtcTime(v.committed_unix_s).c_str(), v.segments, v.shards, v.uuid.c_str(),
                args.verify ? (verified[i].ok() ? "ok        " : "FAILED    ") : "", tags.c_str());
  }
  return first_problem;
}

CommandRunner SetupVersions(CLI::App* cmd) {
  auto args = std::make_shared<VersionsArgs>();
  cmd->add_option("PATH", args->path, "Dataset folder, DIR/NAME or DIR/NAME.uset")->required();
  cmd->add_flag("--json", args->json, "Machine-readable output");
  cmd->add_flag("--verify", args->verify,
                "Also check every checksum of every kept version (reads everything; exit 1 naming the first problem)");
  return [args] { return RunVersions(*args); };
}

struct TagArgs {
  std::string path;
  std::string tag;
  uint64_t version = 0;
  bool remove = false;
};

Status RunTag(const TagArgs& args) {
  if (args.remove) {
    UREC_RETURN_IF_ERROR(UntagVersion(args.path, args.tag, args.version));
    std::printf("removed tag %s\n", args.tag.c_str());
    return Status::OK();
  }
  UREC_RETURN_IF_ERROR(TagVersion(args.path, args.tag, args.version));
  UREC_ASSIGN_OR_RETURN(VersionList listed, ListVersions(args.path));
  for (const VersionInfo& v : listed.versions) {
    for (const std::string& tag : v.tags) {
      if (tag == args.tag) std::printf("%s -> version %llu\n", tag.c_str(), static_cast<unsigned long long>(v.generation));
    }
  }
  return Status::OK();
}

CommandRunner SetupTag(CLI::App* cmd) {
  auto args = std::make_shared<TagArgs>();
  cmd->add_option("PATH", args->path, "Dataset folder, DIR/NAME or DIR/NAME.uset")->required();
  cmd->add_option("TAG", args->tag, "Tag: 1 to 64 of a-z 0-9 . _ -, starting with a letter")->required();
  cmd->add_option("--version", args->version,
                  "The version to tag (default: the latest); with --delete, remove the tag only if it names this one")
      ->check(IntegerIn(1, UINT64_MAX));
  cmd->add_flag("--delete", args->remove, "Remove the tag instead");
  return [args] { return RunTag(*args); };
}

struct GcArgs {
  std::string path;
  GcOptions options;
};

Status RunGc(const GcArgs& args) {
  if (args.options.keep_last == 0 && args.options.keep_newer_than_s < 0) {
    return Status::InvalidArgument("say which versions to keep: --keep N (the newest N) and/or --keep-newer-than-s S");
  }
  UREC_ASSIGN_OR_RETURN(GcSummary summary, CollectGarbage(args.path, args.options));
  std::string removed, kept;
  for (uint64_t g : summary.removed) removed += (removed.empty() ? "" : " ") + std::to_string(g);
  for (uint64_t g : summary.kept) kept += (kept.empty() ? "" : " ") + std::to_string(g);
  std::printf("%s versions: %s\nkept: %s\n", args.options.dry_run ? "would remove" : "removed",
              removed.empty() ? "none" : removed.c_str(), kept.c_str());
  if (!args.options.dry_run) {
    std::printf("%llu files removed, %.1f MB freed\n", static_cast<unsigned long long>(summary.files_removed),
                static_cast<double>(summary.bytes_freed) / 1e6);
  }
  return Status::OK();
}

CommandRunner SetupGc(CLI::App* cmd) {
  auto args = std::make_shared<GcArgs>();
  cmd->add_option("PATH", args->path, "Dataset folder, DIR/NAME or DIR/NAME.uset")->required();
  cmd->add_option("--keep", args->options.keep_last, "Keep the newest N versions (and the tagged ones)")
      ->check(IntegerIn(1, UINT32_MAX));
  cmd->add_option("--keep-newer-than-s", args->options.keep_newer_than_s,
                  "Keep the versions committed less than S seconds ago")
      ->check(IntegerIn(0, INT64_MAX));
  cmd->add_flag("--dry-run", args->options.dry_run, "Say what would go; remove nothing");
  return [args] { return RunGc(*args); };
}

struct CompactArgs {
  std::string path;
  std::string shard_size;
  CompactOptions options;
};

Status RunCompact(CompactArgs& args) {
  if (!args.shard_size.empty()) {
    UREC_ASSIGN_OR_RETURN(args.options.target_shard_bytes, ParseByteSize(args.shard_size));
  }
  UREC_ASSIGN_OR_RETURN(WriterSummary summary, CompactDataset(args.path, args.options));
  std::printf("%llu records, %u shards in one segment, %.1f MB -> %s (version %llu; the versions before stay "
              "until urec gc)\n",
              static_cast<unsigned long long>(summary.records), summary.shards,
              static_cast<double>(summary.bytes) / 1e6, summary.manifest_path.c_str(),
              static_cast<unsigned long long>(summary.generation));
  return Status::OK();
}

CommandRunner SetupCompact(CLI::App* cmd) {
  auto args = std::make_shared<CompactArgs>();
  cmd->add_option("PATH", args->path, "Dataset folder, DIR/NAME or DIR/NAME.uset")->required();
  CLI::Option* shards = cmd->add_option("--shards", args->options.num_shards, "Number of shards (contiguous, in id order)")
                            ->check(IntegerIn(1, kMaxDatasetShards));
  cmd->add_option("--shard-size", args->shard_size, "Target shard size, e.g. 512M or 1G (default 1G)")->excludes(shards);
  cmd->add_option("--threads", args->options.threads, "Threads closing the new shards (0: one per core)")
      ->capture_default_str()
      ->check(IntegerIn(0, kMaxThreads));
  return [args] { return RunCompact(*args); };
}

}  // namespace

UREC_REGISTER_COMMAND("versions", "List the kept versions of a dataset (generation, time, tags)", SetupVersions);
UREC_REGISTER_COMMAND("tag", "Name a kept version (urec tag PATH TAG [--version G]; --delete removes)", SetupTag);
UREC_REGISTER_COMMAND("gc", "Remove old versions and the files only they use (--keep N, --keep-newer-than-s S)",
                      SetupGc);
UREC_REGISTER_COMMAND("compact", "Rewrite the latest version as one segment (a new version; after many appends)",
                      SetupCompact);

}  // namespace unirecord::cli
