// urec synth-imagefolder: writes a deterministic ImageNet-like image folder.
#include <cstdio>
#include <memory>
#include <string>

#include "command.h"
#include "convert/synthetic_images.h"
#include "unirecord/threads.h"

namespace unirecord::cli {
namespace {

struct SynthArgs {
  std::string out;
  SyntheticFolderOptions options;
};

Status RunSynth(const SynthArgs& args) {
  UREC_ASSIGN_OR_RETURN(SyntheticFolderReport report, WriteSyntheticImageFolder(args.out, args.options));
  std::fprintf(stderr, "synth-imagefolder: %s: %d classes, %lld JPEGs, %lld PNGs, %lld other files, %.1f MB\n",
               args.out.c_str(), args.options.classes, static_cast<long long>(report.jpegs),
               static_cast<long long>(report.pngs), static_cast<long long>(report.extras), static_cast<double>(report.bytes) / 1e6);
  return Status::OK();
}

CommandRunner SetupSynth(CLI::App* cmd) {
  auto args = std::make_shared<SynthArgs>();
  SyntheticFolderOptions& o = args->options;
  cmd->add_option("OUT", args->out, "Folder to create (must not exist, or be empty)")->required();
  cmd->add_option("--classes", o.classes, "Number of class sub-folders")->capture_default_str()
      ->check(IntegerIn(1, 100000));
  cmd->add_option("--per-class", o.per_class, "JPEGs per class")->capture_default_str()->check(IntegerIn(0, 1000000));
  cmd->add_option("--seed", o.seed, "Seed: the same seed gives byte-identical files")->capture_default_str()
      ->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--width", o.width, "Typical width; images vary around it")->capture_default_str()
      ->check(IntegerIn(8, 8192));
  cmd->add_option("--height", o.height, "Typical height; some images are portrait")->capture_default_str()
      ->check(IntegerIn(8, 8192));
  cmd->add_flag("--mix", o.mix,
                "Add a CMYK JPEG, a PNG named .JPEG, a truncated and an empty .JPEG, and a README.txt");
  cmd->add_option("--threads", o.threads, "Encoding threads (0: one per core)")->capture_default_str()
      ->check(IntegerIn(0, kMaxThreads));
  return [args] { return RunSynth(*args); };
}

}  // namespace

UREC_REGISTER_COMMAND("synth-imagefolder", "Write a synthetic ImageNet-like image folder", SetupSynth);

}  // namespace unirecord::cli
