// Read-path benchmarks of the record format (issue 2):
//   - Dataset::Open of a 1.28 M-record dataset: time, and resident memory added;
//   - random index lookups (the label of record i) per second per core;
//   - random whole-record Get (index + scalar page) per second;
//   - random blob reads: bytes per second, with and without checksums.
// Files come from the page cache: the first run generates them under
// $UREC_BENCH_DIR (default /tmp/urec_format_bench) and later runs reuse them.
//
//   build-format/bench/format_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

constexpr uint64_t kIndexRecords = 1'281'167;  // ImageNet-1k train
constexpr uint64_t kBlobRecords = 1024;
constexpr size_t kBlobBytes = 110 << 10;  // a typical ImageNet JPEG

std::string BenchDir() {
  const char* dir = std::getenv("UREC_BENCH_DIR");
  return dir != nullptr ? dir : "/tmp/urec_format_bench";
}

// The ImageNet schema; `blob_bytes` per image (tiny for the index dataset).
Status Generate(const std::string& dir, uint64_t records, size_t blob_bytes, uint32_t shards) {
  Schema schema = Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::String("path"),
                                Field::Int32("width", true), Field::Int32("height", true)})
                      .value();
  WriterOptions options;
  options.num_shards = shards;
  options.expected_records = records;
  options.sync = false;
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, "bench", schema, options));
  RecordBuilder record(schema);
  std::string image(blob_bytes, '\0');
  for (uint64_t i = 0; i < records; ++i) {
    std::memcpy(image.data(), &i, std::min(sizeof(i), image.size()));
    const int64_t label = static_cast<int64_t>(i % 1000);
    char path[64];
    std::snprintf(path, sizeof(path), "n%08lld/n%08lld_%llu.JPEG", static_cast<long long>(label),
                  static_cast<long long>(label), static_cast<unsigned long long>(i));
    UREC_RETURN_IF_ERROR(record.SetBytes(0, image));
    UREC_RETURN_IF_ERROR(record.SetInt64(1, label));
    UREC_RETURN_IF_ERROR(record.SetString(2, path));
    UREC_RETURN_IF_ERROR(record.SetInt32(3, static_cast<int32_t>(300 + i % 200)));
    UREC_RETURN_IF_ERROR(record.SetInt32(4, static_cast<int32_t>(200 + i % 300)));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  return writer->Finish();
}

// The dataset in `name` under BenchDir(), generated on first use.
std::shared_ptr<Dataset> OpenOrGenerate(const std::string& name, uint64_t records, size_t blob_bytes,
                                        uint32_t shards, DatasetOptions options = {}) {
  const std::string dir = BenchDir() + "/" + name;
  auto ds = Dataset::Open(dir, options);
  if (ds.ok() && (*ds)->size() == records) return *ds;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Status status = Generate(dir, records, blob_bytes, shards);
  if (!status.ok()) {
    std::fprintf(stderr, "generate %s: %s\n", dir.c_str(), status.ToString().c_str());
    std::exit(1);
  }
  return Dataset::Open(dir, options).value();
}

// Opened once per process (benchmark threads share it, as loader threads do).
std::shared_ptr<Dataset> IndexDataset(bool verify) {
  static const std::shared_ptr<Dataset> datasets[2] = {
      [] {
        DatasetOptions options;
        options.verify_checksums = false;
        return OpenOrGenerate("index-1.28M", kIndexRecords, 16, 1, options);
      }(),
      OpenOrGenerate("index-1.28M", kIndexRecords, 16, 1, DatasetOptions{})};
  return datasets[verify ? 1 : 0];
}

std::shared_ptr<Dataset> BlobDataset(bool verify) {
  DatasetOptions options;
  options.verify_checksums = verify;
  return OpenOrGenerate("blobs-110KiB", kBlobRecords, kBlobBytes, 1, options);
}

// A cheap, portable pseudo-random id sequence (xorshift64*).
struct RandomIds {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  uint64_t Next(uint64_t n) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (state * 0x2545F4914F6CDD1Dull) % n;
  }
};

// Resident memory in KiB: anonymous (heap, stacks) and file-backed (mapped
// pages of the shard and index files, shared with the page cache).
struct Resident {
  long anon_kib = 0;
  long file_kib = 0;
};

Resident ResidentNow() {
  long size = 0, resident = 0, shared = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return {};
  if (std::fscanf(f, "%ld %ld %ld", &size, &resident, &shared) != 3) resident = shared = 0;
  std::fclose(f);
  const long page_kib = 4;
  return Resident{(resident - shared) * page_kib, shared * page_kib};
}

void BM_Open(benchmark::State& state) {
  const uint32_t shards = static_cast<uint32_t>(state.range(0));
  const std::string name = shards == 1 ? "index-1.28M" : "index-1.28M-" + std::to_string(shards) + "shards";
  OpenOrGenerate(name, kIndexRecords, 16, shards);
  const std::string dir = BenchDir() + "/" + name;
  Resident added;
  for (auto _ : state) {
    const Resident before = ResidentNow();
    auto ds = Dataset::Open(dir);
    const Resident after = ResidentNow();
    added = Resident{after.anon_kib - before.anon_kib, after.file_kib - before.file_kib};
    if (!ds.ok()) state.SkipWithError(ds.status().ToString().c_str());
    benchmark::DoNotOptimize(ds);
  }
  state.counters["records"] = static_cast<double>(kIndexRecords);
  state.counters["anon_KiB"] = static_cast<double>(added.anon_kib);
  state.counters["mapped_KiB"] = static_cast<double>(added.file_kib);
}
BENCHMARK(BM_Open)->Arg(1)->Arg(16)->Unit(benchmark::kMillisecond);

void BM_RandomIndexedLabel(benchmark::State& state) {
  auto ds = IndexDataset(state.range(0) != 0);
  const size_t label = static_cast<size_t>(ds->schema().FieldIndex("label"));
  RandomIds ids;
  ids.state += static_cast<uint64_t>(state.thread_index()) * 0x632BE59BD9B4E019ull;
  int64_t sum = 0;
  for (auto _ : state) {
    auto value = ds->GetIndexedInt64(ids.Next(ds->size()), label);
    sum += *value;
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) ? "verify" : "no-verify");
}
BENCHMARK(BM_RandomIndexedLabel)->Arg(1)->Arg(0);
// Many threads on one Dataset (items/s summed over threads).
BENCHMARK(BM_RandomIndexedLabel)->Arg(1)->Threads(4)->Threads(16)->UseRealTime();

// The index dataset, verified, with no scalar pages kept (each random Get
// inflates its page).
std::shared_ptr<Dataset> IndexDatasetKeepingNoPages() {
  static const std::shared_ptr<Dataset> dataset = [] {
    DatasetOptions options;
    options.page_cache_bytes = 0;
    return OpenOrGenerate("index-1.28M", kIndexRecords, 16, 1, options);
  }();
  return dataset;
}

// Arg: 0 random ids, 1 sequential ids, 2 random ids without kept pages.
void BM_RandomGet(benchmark::State& state) {
  auto ds = state.range(0) == 2 ? IndexDatasetKeepingNoPages() : IndexDataset(true);
  const bool sequential = state.range(0) == 1;
  RandomIds ids;
  uint64_t next = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    const uint64_t id = sequential ? next++ % ds->size() : ids.Next(ds->size());
    auto record = ds->Get(id);
    if (!record.ok()) {
      state.SkipWithError(record.status().ToString().c_str());
      break;
    }
    bytes += record->GetString(2)->size() + static_cast<size_t>(*record->GetInt64(1));
  }
  benchmark::DoNotOptimize(bytes);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(sequential               ? "sequential ids"
                 : state.range(0) == 2 ? "random ids, no kept pages (scalar page inflated per call)"
                                       : "random ids (scalar pages kept, DatasetOptions::page_cache_bytes)");
}
BENCHMARK(BM_RandomGet)->Arg(0)->Arg(1)->Arg(2);

void BM_RandomBlob(benchmark::State& state) {
  const bool verify = state.range(0) != 0;
  auto ds = BlobDataset(verify);
  RandomIds ids;
  uint64_t sum = 0;
  for (auto _ : state) {
    auto blob = ds->GetBlob(ids.Next(ds->size()), 0);
    std::string_view data = blob->data();
    // Touch every cache line, as a consumer (decoder, memcpy) would.
    for (size_t i = 0; i < data.size(); i += 64) sum += static_cast<uint8_t>(data[i]);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBlobBytes));
  state.SetLabel(verify ? "XXH3 verified" : "zero-copy, unverified");
}
BENCHMARK(BM_RandomBlob)->Arg(1)->Arg(0);

}  // namespace
}  // namespace unirecord

BENCHMARK_MAIN();
