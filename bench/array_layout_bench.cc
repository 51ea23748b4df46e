// Where should variable-shape arrays live (issue 17)? The two candidates the
// format already had, measured with the same encoded bytes (shape prefix +
// little-endian elements) per record:
//   - column: a variable-length column of zstd scalar pages (stored as a
//     `string` field here: u32 offsets + bytes, exactly that layout);
//   - blob:   a blob in a blob page, located by the record table (`bytes`).
// Workloads: COCO-like boxes (0..20 float32 boxes of 4 + int64 category ids,
// mean ~7 boxes) and token sequences (128..2048 int32 from a 32k vocabulary,
// Zipf-like). Reported: stored bytes per record (shard + index, counter
// "bytes_per_record") and random whole-field reads per second.
//
//   build/bench/array_layout_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

constexpr uint64_t kRecords = 20000;

enum Workload { kBoxes = 0, kTokens = 1 };

std::string Encode(Workload w, std::mt19937_64& rng) {
  std::string out;
  auto put = [&out](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  if (w == kBoxes) {
    const uint32_t n = static_cast<uint32_t>(std::min<int>(20, std::poisson_distribution<int>(7)(rng)));
    const uint64_t prefix = n;
    put(&prefix, 8);
    std::uniform_real_distribution<float> coord(0, 640);
    for (uint32_t i = 0; i < 4 * n; ++i) {
      const float v = std::round(coord(rng) * 100) / 100;  // COCO boxes have 2 decimals
      put(&v, 4);
    }
    for (uint32_t i = 0; i < n; ++i) {
      const int64_t category = static_cast<int64_t>(rng() % 80) + 1;
      put(&category, 8);
    }
  } else {
    const uint32_t n = 128 + static_cast<uint32_t>(rng() % (2048 - 128 + 1));
    const uint64_t prefix = n;
    put(&prefix, 8);
    std::uniform_real_distribution<double> u(0, 1);
    for (uint32_t i = 0; i < n; ++i) {
      const int32_t token = static_cast<int32_t>(std::pow(32000.0, u(rng)));  // log-uniform ids
      put(&token, 4);
    }
  }
  return out;
}

std::string Dir(Workload w, bool blob) {
  const char* base = std::getenv("UREC_BENCH_DIR");
  return std::string(base != nullptr ? base : "/tmp/urec_array_layout_bench") + (w == kBoxes ? "/boxes" : "/tokens") +
         (blob ? "_blob" : "_column");
}

std::shared_ptr<Dataset> Prepare(Workload w, bool blob, double* bytes_per_record) {
  const std::string dir = Dir(w, blob);
  if (!std::filesystem::exists(dir + "/bench.uset")) {
    std::filesystem::create_directories(dir);
    Schema schema = Schema::Make({blob ? Field::Bytes("values") : Field::String("values")}).value();
    WriterOptions options;
    options.sync = false;
    auto writer = Writer::Create(dir, "bench", schema, options).value();
    RecordBuilder record(schema);
    std::mt19937_64 rng(17);
    for (uint64_t i = 0; i < kRecords; ++i) {
      const std::string v = Encode(w, rng);
      if (!(blob ? record.SetBytesOwned(0, v) : record.SetString(0, v)).ok()) std::abort();
      if (!writer->Write(record).ok()) std::abort();
    }
    if (!writer->Finish().ok()) std::abort();
  }
  auto ds = Dataset::Open(dir).value();
  uint64_t bytes = 0;
  for (const ShardInfo& s : ds->shards()) bytes += s.file_bytes + s.index_bytes;
  *bytes_per_record = static_cast<double>(bytes) / static_cast<double>(ds->size());
  return ds;
}

void BM_RandomRead(benchmark::State& state) {
  const Workload w = static_cast<Workload>(state.range(0));
  const bool blob = state.range(1) != 0;
  double bytes_per_record = 0;
  auto ds = Prepare(w, blob, &bytes_per_record);
  std::mt19937_64 rng(1);
  uint64_t sum = 0;
  for (auto _ : state) {
    const uint64_t id = rng() % ds->size();
    if (blob) {
      sum += ds->GetBlob(id, 0).value().size();
    } else {
      sum += ds->Get(id).value().GetString(0).value().size();
    }
  }
  benchmark::DoNotOptimize(sum);
  state.counters["bytes_per_record"] = bytes_per_record;
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetLabel(std::string(w == kBoxes ? "boxes" : "tokens") + (blob ? "/blob" : "/column"));
}
BENCHMARK(BM_RandomRead)->ArgsProduct({{kBoxes, kTokens}, {0, 1}});

}  // namespace
}  // namespace unirecord

BENCHMARK_MAIN();
