// urec convert imagefolder | videofolder | audiofolder | coco | jsonl | csv: a
// torchvision ImageFolder, class folders of videos or audio files, a COCO
// instances file and its images, or a manifest of samples into a dataset.
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "command.h"
#include "unirecord/convert.h"
#include "unirecord/threads.h"
#include "unirecord/writer.h"

namespace unirecord::cli {
namespace {

struct ConvertArgs {
  std::string kind;         // imagefolder, videofolder, audiofolder, coco, jsonl or csv
  std::string annotations;  // coco
  std::string schema;       // jsonl, csv: the schema file
  std::string src;
  std::string out;
  std::string shard_size;
  std::string scheduler;
  uint32_t shards_per_task = 1;
  std::vector<std::string> defaults;  // --default FIELD=VALUE
  ConvertOptions options;
};

// --scheduler: the conversion runs as unirecord.distributed's command line
// (python -m unirecord.distributed), which this process becomes. The Python
// is $UREC_PYTHON, else python3 on PATH; it must import unirecord and
// distributed (docs/cli.md).
Status RunOnScheduler(const ConvertArgs& args) {
  if (args.options.num_shards == 0) {
    return Status::InvalidArgument("--scheduler needs --shards N: the tasks write whole shards, and the shard count "
                                   "fixes the bytes (the same as a local convert with --shards N)");
  }
  const char* python_env = std::getenv("UREC_PYTHON");
  const std::string python = python_env != nullptr && *python_env != '\0' ? python_env : "python3";
  const ConvertOptions& o = args.options;
  // coco: ANNOTATIONS OUT --images IMAGES; jsonl, csv: MANIFEST OUT --schema S.
  const std::string& input = args.kind == "coco" ? args.annotations : args.src;
  std::vector<std::string> argv = {python, "-m", "unirecord.distributed", input, args.out, "--format", args.kind,
                                   "--scheduler", args.scheduler, "--shards", std::to_string(o.num_shards),
                                   "--shards-per-task", std::to_string(args.shards_per_task),
                                   "--threads", std::to_string(o.threads),
                                   "--max-pixels", std::to_string(o.limits.max_pixels)};
  if (args.kind == "coco") argv.insert(argv.end(), {"--images", args.src});
  if (!args.schema.empty()) argv.insert(argv.end(), {"--schema", args.schema});
  if (!o.name.empty()) argv.insert(argv.end(), {"--name", o.name});
  if (o.strict) argv.push_back("--strict");
  if (o.keep_original) argv.push_back("--keep-original");
  if (o.follow_links_outside) argv.push_back("--follow-links-outside");
  if (o.append) argv.push_back("--append");
  for (const std::string& pair : args.defaults) argv.insert(argv.end(), {"--default", pair});
  if (o.extend_classes) argv.push_back("--extend-classes");
  if (o.allow_empty) argv.push_back("--allow-empty");
  std::vector<char*> c_argv;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(c_argv[0], c_argv.data());
  return Status::NotFound("--scheduler: cannot run " + python + " (set UREC_PYTHON to a Python that imports "
                          "unirecord and distributed): " + std::strerror(errno));
}

// "[#########...........]  1234/5000 files  45.6 MB/s" redrawn in place.
void DrawProgress(const ConvertProgress& p) {
  constexpr int kWidth = 30;
  const double fraction = p.files_total ? static_cast<double>(p.files_done) / p.files_total : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r[%s] %llu/%llu files, %llu rejected, %.1f MB/s ", bar.c_str(),
               static_cast<unsigned long long>(p.files_done), static_cast<unsigned long long>(p.files_total),
               static_cast<unsigned long long>(p.rejected),
               p.seconds > 0 ? static_cast<double>(p.bytes) / 1e6 / p.seconds : 0.0);
  std::fflush(stderr);
}

void PrintReport(const ConvertArgs& args, const ConvertReport& r);

// Runs `convert` with --shard-size parsed and a progress bar on a terminal.
Result<ConvertReport> RunWithProgress(ConvertArgs& args,
                                      const std::function<Result<ConvertReport>(const ConvertOptions&)>& convert) {
  if (!args.shard_size.empty()) {
    UREC_ASSIGN_OR_RETURN(args.options.target_shard_bytes, ParseByteSize(args.shard_size));
  }
  UREC_ASSIGN_OR_RETURN(const std::string defaults, DefaultsObject(args.defaults));
  if (!defaults.empty()) args.options.defaults = JsonFieldDefaults(defaults);
  const bool show_progress = isatty(STDERR_FILENO);
  if (show_progress) args.options.on_progress = DrawProgress;
  Result<ConvertReport> result = convert(args.options);
  if (show_progress) std::fprintf(stderr, "\r\033[K");  // clear the bar
  return result;
}

Status RunConvertImageFolder(ConvertArgs& args) {
  if (!args.scheduler.empty()) return RunOnScheduler(args);
  UREC_ASSIGN_OR_RETURN(const ConvertReport report, RunWithProgress(args, [&](const ConvertOptions& o) {
                          return ConvertImageFolder(args.src, args.out, o);
                        }));
  PrintReport(args, report);
  return Status::OK();
}

Status RunConvertMediaFolder(ConvertArgs& args) {
  if (!args.scheduler.empty()) return RunOnScheduler(args);
  const bool video = args.kind == "videofolder";
  UREC_ASSIGN_OR_RETURN(const ConvertReport report, RunWithProgress(args, [&](const ConvertOptions& o) {
                          return video ? ConvertVideoFolder(args.src, args.out, o)
                                       : ConvertAudioFolder(args.src, args.out, o);
                        }));
  PrintReport(args, report);
  return Status::OK();
}

// convert jsonl / csv: `args.src` is the manifest, `args.schema` its schema.
Status RunConvertManifest(ConvertArgs& args, bool csv) {
  if (!args.scheduler.empty()) {
    args.kind = csv ? "csv" : "jsonl";
    return RunOnScheduler(args);
  }
  UREC_ASSIGN_OR_RETURN(const ConvertReport report, RunWithProgress(args, [&](const ConvertOptions& o) {
                          return csv ? ConvertCsv(args.src, args.schema, args.out, o)
                                     : ConvertJsonl(args.src, args.schema, args.out, o);
                        }));
  PrintReport(args, report);
  return Status::OK();
}

// What RunConvertImageFolder and RunConvertCoco print.
void PrintReport(const ConvertArgs& args, const ConvertReport& r) {
  std::printf("%s: %llu written, %llu rejected, %llu skipped, %.1f MB, %.2f s -> %s/%s (%u shard%s); "
              "not written: %s\n",
              args.src.c_str(), static_cast<unsigned long long>(r.written),
              static_cast<unsigned long long>(r.rejected), static_cast<unsigned long long>(r.skipped),
              static_cast<double>(r.image_bytes) / 1e6, r.seconds, args.out.c_str(), r.name.c_str(), r.shards,
              r.shards == 1 ? "" : "s", r.rejects_path.c_str());
  // "(libjpeg warning: 2, data after EOI: 1)": why transcodes were refused.
  std::string kept = args.options.keep_original ? " (--keep-original)" : "";
  for (const auto& [reason, count] : r.kept_original_reasons) {
    kept += (kept.empty() ? " (" : ", ") + reason + ": " + std::to_string(count);
  }
  if (!r.kept_original_reasons.empty()) kept += ")";
  if (r.transcoded + r.kept_original + r.png == 0 && r.source_bytes == 0) return;  // no images (a token manifest)
  const double change = r.source_bytes ? 100.0 * (static_cast<double>(r.image_bytes) / r.source_bytes - 1) : 0.0;
  std::printf("JPEG layout: %llu transcoded to the fast layout, %llu kept as their source bytes%s; "
              "%llu PNG stored as they are; images %.1f MB from %.1f MB of sources (%+.1f%%)\n",
              static_cast<unsigned long long>(r.transcoded), static_cast<unsigned long long>(r.kept_original),
              kept.c_str(), static_cast<unsigned long long>(r.png), static_cast<double>(r.image_bytes) / 1e6, static_cast<double>(r.source_bytes) / 1e6,
              change);
}

Status RunConvertCoco(ConvertArgs& args) {
  if (!args.scheduler.empty()) return RunOnScheduler(args);
  Result<ConvertReport> result = RunWithProgress(
      args, [&](const ConvertOptions& o) { return ConvertCoco(args.annotations, args.src, args.out, o); });
  if (!result.ok()) return result.status();
  PrintReport(args, *result);
  std::printf("annotations: %llu written, %llu rejected (see the rejects report)\n",
              static_cast<unsigned long long>(result->annotations),
              static_cast<unsigned long long>(result->annotations_rejected));
  return Status::OK();
}

// The options both kinds of input take.
void AddOutputOptions(CLI::App* cmd, ConvertArgs* args, const char* order) {
  ConvertOptions& o = args->options;
  cmd->add_option("OUT", args->out, "Output folder (created if missing)")->required();
  CLI::Option* shards = cmd->add_option("--shards", o.num_shards, std::string("Number of shards (contiguous, in ") + order + ")")
                            ->check(IntegerIn(1, kMaxDatasetShards));
  cmd->add_option("--shard-size", args->shard_size, "Target shard size, e.g. 512M or 1G (default 1G)")
      ->excludes(shards);
  cmd->add_option("--threads", o.threads, "Reading threads (0: one per core)")->capture_default_str()
      ->check(IntegerIn(0, kMaxThreads));
  CLI::Option* append =
      cmd->add_flag("--append", o.append,
                    "Add the records to dataset NAME in OUT (a new generation: a new segment after the old "
                    "shards, which stay as they are; ids continue; the schema and metadata must be equal, but "
                    "for fields added to the dataset later (--default), an image folder's classes are mapped by "
                    "name) instead of replacing it");
  AddDefaultOption(cmd, &args->defaults,
                   "with --append, the value the new records get for a field added to the dataset later")
      ->needs(append);
  cmd->add_flag("--strict", o.strict, "Fail on the first file that is not a usable JPEG or PNG");
  cmd->add_flag("--keep-original", o.keep_original,
                "Store each JPEG's source bytes untouched instead of its lossless rewrite into the fast "
                "layout (baseline, optimized tables, restart markers)");
  cmd->add_flag("--follow-links-outside", o.follow_links_outside,
                "Read source files whose symbolic links lead outside their folder (the image folder, the images "
                "folder, the manifest's folder); without it they are rejected");
  cmd->add_flag("--allow-empty", o.allow_empty,
                "Commit an empty dataset when every input is rejected (without it that fails, exit 2, and "
                "OUT/NAME.rejected.tsv lists why)");
  cmd->add_option("--max-pixels", o.limits.max_pixels, "Reject JPEGs over N pixels (width x height)")
      ->capture_default_str()
      ->check(IntegerIn(1, uint64_t{1} << 40));
  CLI::Option* scheduler =
      cmd->add_option("--scheduler", args->scheduler,
                      "Run the conversion on the workers of a Dask scheduler (tcp://HOST:PORT), through "
                      "python3 -m unirecord.distributed ($UREC_PYTHON); needs --shards; the inputs and OUT must "
                      "be the same paths on every worker")
          ->excludes(cmd->get_option("--shard-size"));
  cmd->add_option("--shards-per-task", args->shards_per_task, "With --scheduler: shards each task writes")
      ->capture_default_str()
      ->check(IntegerIn(1, kMaxDatasetShards))
      ->needs(scheduler);
}

CommandRunner SetupConvert(CLI::App* cmd) {
  cmd->require_subcommand(1);
  CLI::App* folder = cmd->add_subcommand(
      "imagefolder", "A torchvision ImageFolder (SRC/<class>/<image>) into records with fields "
                     "image, label, path, width, height, jpeg_layout, source_size, source_xxh3");
  auto args = std::make_shared<ConvertArgs>();
  ConvertOptions& o = args->options;
  folder->add_option("SRC", args->src, "Folder with one sub-folder per class")->required();
  folder->add_option("--name", o.name, "Dataset name (default: SRC's folder name)");
  AddOutputOptions(folder, args.get(), "folder order");
  folder->add_flag("--extend-classes", o.extend_classes,
                   "With --append: add the folder's classes the dataset lacks at the end of its class list "
                   "(earlier labels keep their meaning; without it such a class is refused)");
  args->kind = "imagefolder";
  CLI::App* coco = cmd->add_subcommand(
      "coco", "A COCO instances file and its images into records with fields image, path, image_id, width, "
              "height, boxes, category_id, iscrowd, area, annotation_id, segmentation (docs/cli.md)");
  auto coco_args = std::make_shared<ConvertArgs>();
  coco->add_option("ANNOTATIONS", coco_args->annotations, "The instances JSON (e.g. instances_val2017.json)")
      ->required();
  coco->add_option("IMAGES", coco_args->src, "The folder its file_name entries are in")->required();
  coco->add_option("--name", coco_args->options.name, "Dataset name (default: ANNOTATIONS' name without .json)");
  AddOutputOptions(coco, coco_args.get(), "image id order");
  coco_args->kind = "coco";
  // videofolder and audiofolder: class folders of media files.
  CLI::App* media_folders[2] = {};
  std::shared_ptr<ConvertArgs> media_args[2];
  for (int k = 0; k < 2; ++k) {
    const bool video = k == 0;
    media_args[k] = std::make_shared<ConvertArgs>();
    media_args[k]->kind = video ? "videofolder" : "audiofolder";
    CLI::App* m = media_folders[k] = cmd->add_subcommand(
        media_args[k]->kind,
        video ? "Class folders of videos (SRC/<class>/<video>, as Kinetics and UCF-101 ship) into records with "
                "fields video (its packets and packet table; docs/video-audio.md), label, path"
              : "Class folders of audio files (SRC/<class>/<file>; LibriSpeech's *.trans.txt read) into records "
                "with fields audio, label, path, transcript");
    m->add_option("SRC", media_args[k]->src, "Folder with one sub-folder per class")->required();
    m->add_option("--name", media_args[k]->options.name, "Dataset name (default: SRC's folder name)");
    AddOutputOptions(m, media_args[k].get(), "folder order");
  }
  // jsonl and csv: a manifest, one sample a line, typed by a schema file.
  auto manifest_args = std::make_shared<ConvertArgs>();
  CLI::App* manifests[2] = {};
  for (int k = 0; k < 2; ++k) {
    const bool csv = k == 1;
    CLI::App* m = manifests[k] = cmd->add_subcommand(
        csv ? "csv" : "jsonl",
        csv ? "A CSV manifest (a header row naming the fields, one sample a row) into records typed by --schema"
            : "A JSON Lines manifest (one object a line) into records typed by --schema");
    m->add_option("MANIFEST", manifest_args->src, "The manifest; image paths are relative to its folder")
        ->required();
    m->add_option("--schema", manifest_args->schema,
                  "JSON file {\"fields\": [{\"name\", \"type\": int32|float32|...|string|image|video|audio, "
                  "\"shape\": [-1, 4], \"indexed\": true}, ...]} (docs/cli.md)")
        ->required();
    m->add_option("--name", manifest_args->options.name, "Dataset name (default: MANIFEST's name without extension)");
    AddOutputOptions(m, manifest_args.get(), "line order");
  }
  return [args, coco_args, manifest_args, media_args, folder, coco, manifests, media_folders]() -> Status {
    if (coco->parsed()) return RunConvertCoco(*coco_args);
    for (int k = 0; k < 2; ++k) {
      if (media_folders[k]->parsed()) return RunConvertMediaFolder(*media_args[k]);
    }
    if (manifests[0]->parsed()) return RunConvertManifest(*manifest_args, /*csv=*/false);
    if (manifests[1]->parsed()) return RunConvertManifest(*manifest_args, /*csv=*/true);
    if (!folder->parsed()) {
      return Status::InvalidArgument("unknown input kind (imagefolder, videofolder, audiofolder, coco, jsonl or csv)");
    }
    return RunConvertImageFolder(*args);
  };
}

}  // namespace

UREC_REGISTER_COMMAND("convert",
                      "Convert an image, video or audio folder, a COCO dataset or a JSON Lines / CSV manifest into a "
                      "unirecord dataset",
                      SetupConvert);

}  // namespace unirecord::cli
