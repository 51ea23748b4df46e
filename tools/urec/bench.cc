// `urec bench`: runs the Loader over a dataset and reports images/s (clips/s
// with --clip-frames) with the per-stage breakdown, plus RSS and open
// descriptors after every epoch.
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "command.h"
#include "dataset_json.h"
#include "unirecord/loader.h"
#include "unirecord/threads.h"

namespace unirecord::cli {
namespace {

struct BenchOptions {
  std::string path;
  RemoteOptions remote;
  size_t batch = 256;
  int threads = 0;
  std::string transform = "train";
  uint64_t epochs = 1;
  std::string device = "cpu";
  bool json = false;
  int size = 224;
  int prefetch = 2;
  uint64_t seed = 0;
  std::string order = "shuffle";
  uint64_t block_size = 256;  // SamplerOptions' defaults
  uint64_t window = 1024;
  std::string on_bad_record = "raise";
  bool libjpeg_entropy = false;
  double step_ms = 0;
  uint64_t max_batches = 0;
  std::string dtype = "float32";
  std::string layout = "NCHW";  // the Python Loader's default, and torch's
  int clip_frames = 0;          // > 0: clips of this many frames of clip_field (ClipOptions)
  int clip_stride = ClipOptions().stride;
  std::string clip_field = ClipOptions().field;
};

double ResidentMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

int OpenDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(dir)) count += entry->d_name[0] != '.';
  closedir(dir);
  return count - 1;  // the DIR's own descriptor
}

// User + system CPU seconds of the whole process (all threads) so far.
double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

Result<LoaderOptions> MakeLoaderOptions(const BenchOptions& o) {
  LoaderOptions options;
  options.batch_size = o.batch;
  options.threads = o.threads;
  options.prefetch = o.prefetch;
  options.image_size = o.size;
  options.resize_shorter = o.size * 8 / 7;  // 224 -> 256, as torchvision's evaluation
  options.sampler.seed = o.seed;
  UREC_ASSIGN_OR_RETURN(options.sampler.order, ParseSampleOrder(o.order));
  options.sampler.block_size = o.block_size;
  options.sampler.window = o.window;
  UREC_ASSIGN_OR_RETURN(options.transform, ParseSampleTransform(o.transform));
  UREC_ASSIGN_OR_RETURN(options.layout, ParseImageLayout(o.layout));
  options.cuda.layout = options.layout;  // on a device the kernel makes the layout, as in the Python Loader
  UREC_ASSIGN_OR_RETURN(options.on_bad_record, ParseOnBadRecord(o.on_bad_record));
  if (o.clip_frames > 0) {
    options.clip.emplace();
    options.clip->field = o.clip_field;
    options.clip->frames = o.clip_frames;
    options.clip->stride = o.clip_stride;
  }
  options.decode.own_entropy_decoder = !o.libjpeg_entropy;
  if (o.device.rfind("cuda", 0) == 0 || o.device == "emulated") {
    options.cuda.device = o.device.size() > 5 && o.device[4] == ':' ? std::atoi(o.device.c_str() + 5) : 0;
    options.cuda.host_emulation = o.device == "emulated";
    UREC_ASSIGN_OR_RETURN(options.cuda.dtype, ParseDeviceDType(o.dtype));
  } else if (o.device != "cpu") {
    return Status::InvalidArgument("--device must be cpu, cuda, cuda:N or emulated, not '" + o.device + "'");
  }
  return options;
}

Json StatsToJson(const LoaderStats& s) {
  return Json{{"read_s", s.read_s},     {"decode_s", s.decode_s},
              {"upload_s", s.upload_s}, {"wait_s", s.wait_s},
              {"frames_decoded", s.frames_decoded}};
}

// What an epoch asked of a remote dataset.
Json RemoteJson(const RemoteStats& before, const RemoteStats& after) {
  return Json{{"requests", after.requests - before.requests},
              {"retries", after.retries - before.retries},
              {"bytes_downloaded", after.bytes_downloaded - before.bytes_downloaded},
              {"shard_downloads", after.shard_downloads - before.shard_downloads},
              {"cache_hits", after.cache_hits - before.cache_hits},
              {"prefetched", after.prefetched - before.prefetched},
              {"read_fetches", after.read_fetches - before.read_fetches}};
}

Status RunBench(const BenchOptions& o) {
  UREC_ASSIGN_OR_RETURN(LoaderOptions options, MakeLoaderOptions(o));
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, OpenForReading(o.path, o.remote));
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Create(dataset, options));
  const auto step = std::chrono::duration<double, std::milli>(o.step_ms);
  Json epochs = Json::array();
  uint64_t batches = 0;
  // The consumer's time outside Next(), per part: waiting for the device
  // batch, and giving the batch back (on a device: recording `consumed`,
  // waiting for the copy).
  double sync_s = 0, release_s = 0;
  double epochs_wall_s = 0;  // the rest of the loader's wall is its setup (device buffers, a CUDA context)
  auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (uint64_t epoch = 0; epoch < o.epochs; ++epoch) {
    loader->SetEpoch(epoch);
    const LoaderStats before = loader->stats();
    const RemoteStats remote_before = dataset->remote_stats();
    const double cpu_before = ProcessCpuSeconds();
    uint64_t epoch_batches = 0;
    for (;;) {
      if (o.max_batches != 0 && epoch_batches == o.max_batches) break;
      UREC_ASSIGN_OR_RETURN(Batch batch, loader->Next());
      if (batch.empty()) break;
      if (options.cuda.device >= 0) {
        const auto t0 = std::chrono::steady_clock::now();
        UREC_RETURN_IF_ERROR(batch.Synchronize());
        sync_s += since(t0);
      }
      if (o.step_ms > 0) std::this_thread::sleep_for(step);  // a simulated training step
      const auto t0 = std::chrono::steady_clock::now();
      batch.Release();
      release_s += since(t0);
      ++epoch_batches;
    }
    batches += epoch_batches;
    const LoaderStats after = loader->stats();
    const double cpu = ProcessCpuSeconds() - cpu_before;
    const double wall = after.wall_s - before.wall_s;
    epochs_wall_s += wall;
    const double images = double(after.samples - before.samples);
    epochs.push_back(Json{{"epoch", epoch},
                          {"remote", dataset->is_remote() ? RemoteJson(remote_before, dataset->remote_stats()) : Json()},
                          {"images", images},
                          {"images_per_s", wall > 0 ? images / wall : 0.0},
                          {"wait_s", after.wait_s - before.wait_s},
                          {"cpu_s", cpu},
                          {"rss_mib", ResidentMiB()},
                          {"open_fds", OpenDescriptors()}});
  }
  const LoaderStats stats = loader->stats();
  const double wait_share = stats.wall_s > 0 ? stats.wait_s / stats.wall_s : 0.0;
  const double setup_s = std::max(0.0, stats.wall_s - epochs_wall_s);
  if (o.json) {
    Json out{{"images_per_s", stats.images_per_s},
             {"batches", batches},
             {"samples", stats.samples},
             {"threads", loader->threads()},
             {"batch_size", o.batch},
             {"transform", o.transform},
             {"device", o.device},
             {"image_size", o.size},
             {"layout", o.layout},
             {"wall_s", stats.wall_s},
             {"setup_s", setup_s},
             {"wait_share", wait_share},
             {"consumer", Json{{"sync_s", sync_s}, {"release_s", release_s}}},
             {"skipped", stats.skipped},
             {"stages", StatsToJson(stats)},
             {"epochs", epochs}};
    std::printf("%s\n", DumpJson(out).c_str());
  } else {
    std::printf("urec bench: %llu %s in %llu batches of %zu, %d threads, %s %dx%d %s, %s\n",
                static_cast<unsigned long long>(stats.samples), o.clip_frames > 0 ? "clips" : "images",
                static_cast<unsigned long long>(batches),
                o.batch, loader->threads(), o.transform.c_str(), o.size, o.size, o.layout.c_str(),
                o.device.c_str());
    std::printf("  %s       %10.1f   (batches/s %.2f, wall %.2f s)\n", o.clip_frames > 0 ? "clips/s " : "images/s",
                stats.images_per_s, stats.batches_per_s, stats.wall_s);
    if (o.clip_frames > 0) {
      std::printf("  frames decoded %10llu   (%.1f a clip of %d)\n",
                  static_cast<unsigned long long>(stats.frames_decoded),
                  stats.samples > 0 ? double(stats.frames_decoded) / double(stats.samples) : 0.0, o.clip_frames);
    }
    std::printf("  setup          %8.3f s  (in the wall, before the first epoch: buffers, device context)\n",
                setup_s);
    std::printf("  per stage, thread-seconds (per image):\n");
    const double n = stats.samples > 0 ? double(stats.samples) : 1.0;
    for (auto [name, s] : {std::pair<const char*, double>{"read", stats.read_s},
                           {"decode+resize", stats.decode_s},
                           {"upload", stats.upload_s}}) {
      std::printf("    %-14s %8.3f s  (%.3f ms)\n", name, s, 1e3 * s / n);
    }
    std::printf("  consumer wait  %8.3f s  (%.1f%% of wall)\n", stats.wait_s, 100 * wait_share);
    std::printf("  consumer sync  %8.3f s, release %.3f s\n", sync_s, release_s);
    std::printf("  skipped        %8llu\n", static_cast<unsigned long long>(stats.skipped));
    for (const Json& e : epochs) {
      std::printf("  epoch %llu: %.1f images/s, RSS %.1f MiB, %d open fds",
                  static_cast<unsigned long long>(e["epoch"].get<uint64_t>()),
                  e["images_per_s"].get<double>(), e["rss_mib"].get<double>(), e["open_fds"].get<int>());
      if (!e["remote"].is_null()) {
        std::printf(", %llu requests, %llu shards downloaded, %llu from the cache, %llu prefetched, %llu waited for",
                    static_cast<unsigned long long>(e["remote"]["requests"].get<uint64_t>()),
                    static_cast<unsigned long long>(e["remote"]["shard_downloads"].get<uint64_t>()),
                    static_cast<unsigned long long>(e["remote"]["cache_hits"].get<uint64_t>()),
                    static_cast<unsigned long long>(e["remote"]["prefetched"].get<uint64_t>()),
                    static_cast<unsigned long long>(e["remote"]["read_fetches"].get<uint64_t>()));
      }
      std::printf("\n");
    }
  }
  if (std::fflush(stdout) != 0) return Status::IOError("cannot write to stdout");
  return Status::OK();
}

CommandRunner SetupBench(CLI::App* cmd) {
  auto o = std::make_shared<BenchOptions>();
  cmd->add_option("PATH", o->path, "Dataset: directory, shard, glob, or an http(s):// or s3:// location")->required();
  AddRemoteOptions(cmd, &o->remote);
  cmd->add_option("--batch", o->batch, "Batch size")->capture_default_str()->check(IntegerIn(1, 1 << 20));
  cmd->add_option("--threads", o->threads, "Decode threads (0: all usable cores)")->capture_default_str()
      ->check(IntegerIn(0, kMaxThreads));
  cmd->add_option("--transform", o->transform, "train (RandomResizedCrop+flip) | val (Resize+CenterCrop); also random_resized_crop | center_crop")
      ->capture_default_str();
  cmd->add_option("--epochs", o->epochs, "Epochs to run")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--device", o->device, "cpu | cuda | cuda:N | emulated (testing: the device path on the host device)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_option("--size", o->size, "Output height and width")->capture_default_str()->check(IntegerIn(1, 16384));
  cmd->add_option("--prefetch", o->prefetch, "Batches filled ahead")->capture_default_str()->check(IntegerIn(1, 1024));
  cmd->add_option("--seed", o->seed, "Sampler and crop seed")->capture_default_str()->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--order", o->order, "sequential | shuffle | block")->capture_default_str();
  cmd->add_option("--block-size", o->block_size, "block: consecutive ids per run")
      ->capture_default_str()
      ->check(IntegerIn(1, UINT64_MAX));
  cmd->add_option("--window", o->window, "block: positions shuffled together (0: none)")
      ->capture_default_str()
      ->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--on-bad-record", o->on_bad_record, "raise | skip (replace a bad record by the next id)")
      ->capture_default_str();
  cmd->add_flag("--libjpeg-entropy", o->libjpeg_entropy,
                "Entropy-decode JPEGs with libjpeg-turbo's Huffman decoder, not unirecord's (to compare)");
  cmd->add_option("--step-ms", o->step_ms, "Simulated training step per batch (ms)")->capture_default_str()
      ->check(RealIn(0, 3.6e6));
  cmd->add_option("--max-batches", o->max_batches, "Stop each epoch after this many batches (0: all)")
      ->capture_default_str()
      ->check(IntegerIn(0, UINT64_MAX));
  cmd->add_option("--dtype", o->dtype, "cuda: float32 | float16 | uint8")->capture_default_str();
  cmd->add_option("--layout", o->layout, "Host images: NCHW (as the Python Loader) | NHWC")->capture_default_str();
  cmd->add_option("--clip-frames", o->clip_frames,
                  "Video clips of N frames of --clip-field (docs/video-audio.md); images/s counts clips")
      ->check(IntegerIn(1, 1024));
  cmd->add_option("--clip-stride", o->clip_stride, "Clips: frames between sampled frames")
      ->capture_default_str()
      ->check(IntegerIn(1, 1024));
  cmd->add_option("--clip-field", o->clip_field, "Clips: the video field")->capture_default_str();
  return [o] { return RunBench(*o); };
}

UREC_REGISTER_COMMAND("bench", "Run the native loader over a dataset and report its throughput", SetupBench);

}  // namespace
}  // namespace unirecord::cli
