// Loader benchmarks (bench/README.md, "Loader").
//
// Dataset: $UREC_LOADER_BENCH_DATASET (any converted dataset), else an
// ImageNet-like synthetic folder (1024 JPEGs around 500x375) written and
// converted once into $UREC_LOADER_BENCH_DIR (default
// /tmp/unirecord-loader-bench).
//
// Rows, all RandomResizedCrop(224) + flip, batch 256, one epoch per iteration:
//   BM_LoaderCpu/threads:T        images/s into host batches
//   BM_LoaderCuda/threads:T       images/s to the GPU (float32 NCHW normalised),
//                                 each batch waited for on the host
//   BM_LoaderCudaNoSync/threads:T the same without the host wait (the batch is
//                                 released at once; Release still waits for
//                                 the copy out of the pinned buffer)
//   BM_LoaderCudaStep/step_ms:S   the same with a simulated training step of S
//                                 ms per batch: wait_share = the step loop's
//                                 time spent waiting for data
//   BM_GpuTransfers               GB/s of a plain pinned cudaMemcpy vs the
//                                 loader's upload of a 256x224x224x3 batch, and
//                                 of the conversion kernel vs a device copy
//   BM_CoverageCost/images:I      the coverage digest's cost (docs/loader.md,
//                                 "Coverage"): each iteration is a round of one
//                                 epoch with each LoaderOptions::coverage (none,
//                                 digest, ids; coverage() taken at its end), the
//                                 order rotating by round, one thread; counters,
//                                 medians over rounds: digest/none and ids/none
//                                 epoch wall times (*_over_none) and process CPU
//                                 times (*_cpu_over_none); the coverage work alone
//                                 (a tracker fed the epoch's batches, coverage()
//                                 included; thread CPU) over the loader's worker
//                                 thread-seconds for that epoch (*_share); and the
//                                 load average (load1). images:0 is
//                                 the worst case, samples of microseconds: 2^18
//                                 records of an int64 and 8 int32 tokens
//                                 ($UREC_LOADER_BENCH_DIR/numbers); images:1 the
//                                 JPEG dataset above.
// GPU rows report an error (skip) without a CUDA device.
//
// Counters of every loader row, from LoaderStats and the consumer loop:
//   wait_share        consumer blocked in Next() / wall time
//   busy_share        worker thread-seconds in read+decode+layout+upload /
//                     (threads x wall): below 1 = workers idle (no sample
//                     they may start: prefetch window or pool full, epoch tail)
//   decode_us_img     read+decode+layout thread-microseconds per image (the
//                     per-image CPU cost; higher = slower cores, not stalls)
//   upload_ms_batch   worker time in DeviceBatches::Upload per batch
//   sync_ms_batch     consumer time in the per-batch body: Batch::Synchronize
//                     (Step rows: plus the simulated step)
//   release_ms_batch  consumer time in Batch::Release per batch (GPU: records
//                     `consumed`, waits for the copy out of the pinned buffer)
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "convert/synthetic_images.h"
#include "gpu/gpu_bandwidth.h"
#include "sample/coverage.h"
#include "unirecord/convert.h"
#include "unirecord/loader.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

std::string DatasetPath() {
  if (const char* given = std::getenv("UREC_LOADER_BENCH_DATASET")) return given;
  const char* dir = std::getenv("UREC_LOADER_BENCH_DIR");
  const fs::path root = dir != nullptr ? dir : "/tmp/unirecord-loader-bench";
  const fs::path dataset = root / "dataset";
  if (fs::exists(dataset)) return dataset.string();
  SyntheticFolderOptions synth;
  synth.classes = 8;
  synth.per_class = 128;
  Result<SyntheticFolderReport> folder = WriteSyntheticImageFolder((root / "folder").string(), synth);
  if (!folder.ok()) return "";
  ConvertOptions convert;
  convert.sync = false;
  Result<ConvertReport> report = ConvertImageFolder((root / "folder").string(), dataset.string(), convert);
  return report.ok() ? dataset.string() : "";
}

Result<std::shared_ptr<Dataset>> BenchDataset() {
  static const Result<std::shared_ptr<Dataset>> dataset = Dataset::Open(DatasetPath());
  return dataset;
}

// 2^18 small records (an int64 and 8 int32 tokens), written once.
Result<std::shared_ptr<Dataset>> NumbersDataset() {
  const char* dir = std::getenv("UREC_LOADER_BENCH_DIR");
  const fs::path path = fs::path(dir != nullptr ? dir : "/tmp/unirecord-loader-bench") / "numbers";
  if (!fs::exists(path)) {
    UREC_ASSIGN_OR_RETURN(Schema schema, Schema::Make({Field::Int64("x"), Field::Array("tokens", FieldType::kInt32,
                                                                                       {kVariableDim})}));
    WriterOptions options;
    options.sync = false;
    options.num_shards = 4;
    options.expected_records = uint64_t{1} << 18;
    UREC_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer, Writer::Create(path.string(), "numbers", schema, options));
    RecordBuilder record(schema);
    for (int64_t i = 0; i < (int64_t{1} << 18); ++i) {
      record.Clear();
      const int32_t tokens[8] = {int32_t(i), 1, 2, 3, 4, 5, 6, 7};
      UREC_RETURN_IF_ERROR(record.SetInt64(0, i));
      UREC_RETURN_IF_ERROR(record.SetValues(1, FieldType::kInt32, tokens, {8}));
      UREC_RETURN_IF_ERROR(writer->Write(record));
    }
    UREC_RETURN_IF_ERROR(writer->Finish());
  }
  return Dataset::Open(path.string());
}

int Cores() { return UsableCores(); }  // the library's meaning of "all cores" (affinity, cgroup quota)

// One epoch per iteration; `per_batch` runs on every batch.
double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename PerBatch>
void RunEpochs(benchmark::State& state, LoaderOptions options, PerBatch per_batch) {
  Result<std::shared_ptr<Dataset>> dataset = BenchDataset();
  if (!dataset.ok()) return state.SkipWithError(dataset.status().ToString().c_str());
  Result<std::unique_ptr<Loader>> loader = Loader::Create(*dataset, options);
  if (!loader.ok()) return state.SkipWithError(loader.status().ToString().c_str());
  uint64_t epoch = 0, images = 0, batches = 0;
  double wait_s = 0, wall_s = 0, work_s = 0, upload_s = 0, per_batch_s = 0, release_s = 0;
  for (auto _ : state) {
    (*loader)->SetEpoch(epoch++);
    const LoaderStats before = (*loader)->stats();
    for (;;) {
      Result<Batch> batch = (*loader)->Next();
      if (!batch.ok()) return state.SkipWithError(batch.status().ToString().c_str());
      if (batch->empty()) break;
      auto t0 = std::chrono::steady_clock::now();
      per_batch(*batch);
      per_batch_s += SecondsSince(t0);
      t0 = std::chrono::steady_clock::now();
      batch->Release();
      release_s += SecondsSince(t0);
    }
    const LoaderStats after = (*loader)->stats();
    images += after.samples - before.samples;
    batches += after.batches - before.batches;
    wait_s += after.wait_s - before.wait_s;
    wall_s += after.wall_s - before.wall_s;
    work_s += (after.read_s + after.decode_s) - (before.read_s + before.decode_s);
    upload_s += after.upload_s - before.upload_s;
  }
  const int threads = (*loader)->threads();
  state.counters["images_per_s"] = benchmark::Counter(double(images), benchmark::Counter::kIsRate);
  state.counters["wait_share"] = wall_s > 0 ? wait_s / wall_s : 0.0;
  state.counters["threads"] = threads;
  state.counters["busy_share"] = wall_s > 0 ? (work_s + upload_s) / (threads * wall_s) : 0.0;
  state.counters["decode_us_img"] = images > 0 ? work_s / double(images) * 1e6 : 0.0;
  state.counters["upload_ms_batch"] = batches > 0 ? upload_s / double(batches) * 1e3 : 0.0;
  state.counters["sync_ms_batch"] = batches > 0 ? per_batch_s / double(batches) * 1e3 : 0.0;
  state.counters["release_ms_batch"] = batches > 0 ? release_s / double(batches) * 1e3 : 0.0;
}

LoaderOptions TrainOptions(int threads) {
  LoaderOptions options;
  options.batch_size = 256;
  options.threads = threads;
  return options;
}

void BM_LoaderCpu(benchmark::State& state) {
  RunEpochs(state, TrainOptions(static_cast<int>(state.range(0))), [](const Batch&) {});
}
BENCHMARK(BM_LoaderCpu)->ArgName("threads")->DenseRange(1, Cores())->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_LoaderCuda(benchmark::State& state) {
  LoaderOptions options = TrainOptions(static_cast<int>(state.range(0)));
  options.cuda.device = 0;
  RunEpochs(state, options, [&](const Batch& batch) {
    if (!batch.Synchronize().ok()) state.SkipWithError("Batch::Synchronize failed");
  });
}
// 1 thread, half the cores and all of them; each count once on small machines.
void LoaderCudaThreads(benchmark::internal::Benchmark* b) {
  int last = 0;
  for (int threads : {1, Cores() / 2, Cores()}) {
    if (threads > last) b->Arg(threads);
    last = std::max(last, threads);
  }
}
BENCHMARK(BM_LoaderCuda)->ArgName("threads")->Apply(LoaderCudaThreads)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_LoaderCudaNoSync(benchmark::State& state) {
  LoaderOptions options = TrainOptions(static_cast<int>(state.range(0)));
  options.cuda.device = 0;
  RunEpochs(state, options, [](const Batch&) {});
}
BENCHMARK(BM_LoaderCudaNoSync)->ArgName("threads")->Arg(Cores())->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_LoaderCudaStep(benchmark::State& state) {
  LoaderOptions options = TrainOptions(0);
  options.cuda.device = 0;
  const auto step = std::chrono::milliseconds(state.range(0));
  RunEpochs(state, options, [&](const Batch& batch) {
    if (!batch.Synchronize().ok()) state.SkipWithError("Batch::Synchronize failed");
    std::this_thread::sleep_for(step);  // the training step the GPU would run
  });
}
BENCHMARK(BM_LoaderCudaStep)->ArgName("step_ms")->Arg(50)->Arg(100)->Arg(200)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_GpuTransfers(benchmark::State& state) {
  CudaOptions options;
  options.device = 0;
  gpu::GpuBandwidth bw;
  for (auto _ : state) {
    Result<gpu::GpuBandwidth> measured = gpu::MeasureGpuBandwidth(options, 256, 224, 224, 10);
    if (!measured.ok()) return state.SkipWithError(measured.status().ToString().c_str());
    bw = *measured;
  }
  state.counters["memcpy_h2d_GBps"] = bw.memcpy_h2d;
  state.counters["upload_GBps"] = bw.upload;
  state.counters["upload_vs_memcpy"] = bw.upload / bw.memcpy_h2d;
  state.counters["memcpy_d2d_GBps"] = bw.memcpy_d2d;
  state.counters["convert_GBps"] = bw.convert;
  state.counters["convert_vs_d2d"] = bw.convert / bw.memcpy_d2d;
}
BENCHMARK(BM_GpuTransfers)->Iterations(1)->Unit(benchmark::kMillisecond);

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double CpuSeconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// The coverage work of one epoch alone: a tracker fed the batches the
// loader handed out (as Next feeds it), then coverage() (its expected
// multiset included), in thread CPU seconds.
double TrackerSeconds(const LoaderOptions& options, uint64_t records, const std::vector<std::vector<uint64_t>>& batches,
                      uint64_t epoch, CoverageDetail detail) {
  Sampler sampler = Sampler::Create(records, options.sampler).value();
  sampler.SetEpoch(epoch);
  const double t0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  sample::CoverageTracker tracker;
  tracker.Start(sampler, nullptr, detail, sampler.size());
  uint64_t first = 0;
  for (const std::vector<uint64_t>& ids : batches) {
    tracker.Deliver(ids.data(), ids.size(), first);
    first += ids.size();
  }
  benchmark::DoNotOptimize(tracker.Digest());
  return CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - t0;
}

void BM_CoverageCost(benchmark::State& state) {
  const bool images = state.range(0) != 0;
  Result<std::shared_ptr<Dataset>> dataset = images ? BenchDataset() : NumbersDataset();
  if (!dataset.ok()) return state.SkipWithError(dataset.status().ToString().c_str());
  const CoverageDetail details[] = {CoverageDetail::kNone, CoverageDetail::kDigest, CoverageDetail::kIds};
  std::vector<std::unique_ptr<Loader>> loaders;
  for (CoverageDetail detail : details) {
    LoaderOptions options = TrainOptions(1);
    if (!images) {
      options.image_field.clear();
      options.fields = {"x", "tokens"};
    }
    options.coverage = detail;
    Result<std::unique_ptr<Loader>> loader = Loader::Create(*dataset, options);
    if (!loader.ok()) return state.SkipWithError(loader.status().ToString().c_str());
    loaders.push_back(std::move(loader).value());
  }
  std::vector<double> none_s, wall_ratio[2], cpu_ratio[2], hook_share[2];
  std::vector<std::vector<uint64_t>> batches;
  uint64_t epoch = 0, round = 0;
  for (auto _ : state) {
    double wall[3] = {}, cpu[3] = {}, work_s = 0;
    for (size_t turn = 0; turn < 3; ++turn) {
      const size_t d = (turn + round) % 3;
      Loader& loader = *loaders[d];
      loader.SetEpoch(epoch);
      if (d == 0) batches.clear();
      const double cpu0 = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
      const LoaderStats before = loader.stats();
      const auto t0 = std::chrono::steady_clock::now();
      for (;;) {
        Result<Batch> batch = loader.Next();
        if (!batch.ok()) return state.SkipWithError(batch.status().ToString().c_str());
        if (batch->empty()) break;
        if (d == 0) batches.emplace_back(batch->record_ids(), batch->record_ids() + batch->size());
      }
      benchmark::DoNotOptimize(loader.coverage());
      wall[d] = SecondsSince(t0);
      cpu[d] = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
      const LoaderStats after = loader.stats();
      if (d == 0) work_s = (after.read_s + after.decode_s) - (before.read_s + before.decode_s);
    }
    none_s.push_back(wall[0]);
    for (int k = 0; k < 2; ++k) {
      wall_ratio[k].push_back(wall[k + 1] / wall[0]);
      cpu_ratio[k].push_back(cpu[k + 1] / cpu[0]);
      hook_share[k].push_back(
          TrackerSeconds(loaders[0]->options(), (*dataset)->size(), batches, epoch, details[k + 1]) / work_s);
    }
    ++epoch;
    ++round;
  }
  double load[3] = {};
  state.counters["none_ms_epoch"] = Median(none_s) * 1e3;
  state.counters["digest_over_none"] = Median(wall_ratio[0]);
  state.counters["ids_over_none"] = Median(wall_ratio[1]);
  state.counters["digest_cpu_over_none"] = Median(cpu_ratio[0]);
  state.counters["ids_cpu_over_none"] = Median(cpu_ratio[1]);
  state.counters["digest_share"] = Median(hook_share[0]);
  state.counters["ids_share"] = Median(hook_share[1]);
  state.counters["load1"] = getloadavg(load, 3) > 0 ? load[0] : -1;
}
BENCHMARK(BM_CoverageCost)->ArgName("images")->Arg(0)->Arg(1)->Iterations(15)->UseRealTime()->Unit(
    benchmark::kMillisecond);

}  // namespace
}  // namespace unirecord

BENCHMARK_MAIN();
