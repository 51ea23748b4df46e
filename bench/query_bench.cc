// Index search (issue 10): unirecord's Query against SQLite with an index on
// the same columns, in the same run, on the same 1.28 M records.
//
// Dataset: label (1,000 classes), width and height (indexed, 200..699,
// pseudo-random so that index order is not id order), a path string and a
// 16-byte blob per record. SQLite: table t(id INTEGER PRIMARY KEY, label,
// width, height, path) with an index on each of label, width, height.
// Both answer with the same thing: the ascending ids (SQLite's rows are
// collected then sorted, since an index scan yields them in value order),
// or a count.
//
// Queries: selective (one label, ~0.1%), broad (width >= 300, ~80%),
// compound (5 labels and a height range, ~0.1%), and counts of the broad and
// compound ones. Each benchmark is run for both engines; the end of the run
// prints SQLite time / unirecord time per query, and the peak RSS. Built
// with CRoaring (libroaring-dev), it also times the set algebra alone:
// sorted vectors against Roaring bitmaps (BM_Sets*).
// Files are generated on the first run under $UREC_BENCH_DIR (default
// /tmp/urec_query_bench) and reused; UREC_QUERY_BENCH_RECORDS=N generates
// another size (for a quick check).
//
//   build/bench/query_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#ifdef UREC_HAVE_ROARING
#include <roaring/roaring.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/query.h"
#include "unirecord/writer.h"
#include "util/splitmix64.h"

namespace unirecord {
namespace {

uint64_t Records() {
  const char* n = std::getenv("UREC_QUERY_BENCH_RECORDS");
  return n != nullptr ? std::strtoull(n, nullptr, 10) : 1'281'167;  // ImageNet-1k train
}

std::string BenchDir() {
  const char* dir = std::getenv("UREC_BENCH_DIR");
  return std::string(dir != nullptr ? dir : "/tmp/urec_query_bench") + "/" + std::to_string(Records());
}

// The first SplitMix64 output seeded with x: a portable hash of a record number.
uint64_t Mix(uint64_t x) { return SplitMix64(x).Next(); }

struct Values {
  int64_t label;
  int32_t width, height;
  std::string path;
};

Values RecordValues(uint64_t i) {
  Values v;
  v.label = static_cast<int64_t>(Mix(i) % 1000);
  v.width = static_cast<int32_t>(200 + Mix(i ^ 0xA5A5) % 500);
  v.height = static_cast<int32_t>(200 + Mix(i ^ 0x5A5A) % 500);
  char path[64];
  std::snprintf(path, sizeof(path), "n%08lld/%llu.JPEG", static_cast<long long>(v.label),
                static_cast<unsigned long long>(i));
  v.path = path;
  return v;
}

void Die(const std::string& what) {
  std::fprintf(stderr, "query_bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(const Status& s) {
  if (!s.ok()) Die(s.ToString());
}

void GenerateRecords(const std::string& dir, uint64_t n) {
  Schema schema = Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::String("path"),
                                Field::Int32("width", true), Field::Int32("height", true)})
                      .value();
  WriterOptions options;
  options.num_shards = 4;
  options.expected_records = n;
  options.sync = false;
  auto writer = Writer::Create(dir, "bench", schema, options);
  Check(writer.status());
  RecordBuilder record(schema);
  std::string image(16, '\0');
  for (uint64_t i = 0; i < n; ++i) {
    const Values v = RecordValues(i);
    std::memcpy(image.data(), &i, sizeof(i));
    Check(record.SetBytes(0, image));
    Check(record.SetInt64(1, v.label));
    Check(record.SetString(2, v.path));
    Check(record.SetInt32(3, v.width));
    Check(record.SetInt32(4, v.height));
    Check((*writer)->Write(record));
  }
  Check((*writer)->Finish());
}

void Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) Die(std::string(sql) + ": " + error);
}

void GenerateSqlite(const std::string& path, uint64_t n) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die("cannot create " + path);
  Exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
  Exec(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, label INTEGER, width INTEGER, height INTEGER, path TEXT)");
  Exec(db, "BEGIN");
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?, ?, ?, ?)", -1, &insert, nullptr);
  for (uint64_t i = 0; i < n; ++i) {
    const Values v = RecordValues(i);
    sqlite3_bind_int64(insert, 1, static_cast<sqlite3_int64>(i));
    sqlite3_bind_int64(insert, 2, v.label);
    sqlite3_bind_int(insert, 3, v.width);
    sqlite3_bind_int(insert, 4, v.height);
    sqlite3_bind_text(insert, 5, v.path.c_str(), static_cast<int>(v.path.size()), SQLITE_STATIC);
    if (sqlite3_step(insert) != SQLITE_DONE) Die("insert failed");
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  Exec(db, "COMMIT");
  Exec(db, "CREATE INDEX t_label ON t(label); CREATE INDEX t_width ON t(width); CREATE INDEX t_height ON t(height);");
  Exec(db, "ANALYZE");
  sqlite3_close(db);
}

struct Fixture {
  std::shared_ptr<Dataset> dataset;
  sqlite3* db = nullptr;
};

// The unirecord dataset, generated on first use.
std::string RecordsDir() {
  static const std::string records = [] {
    const std::string dir = BenchDir() + "/records";
    if (!std::filesystem::exists(dir + "/bench.uset")) {  // the committed manifest
      std::filesystem::create_directories(dir);
      std::fprintf(stderr, "query_bench: generating %llu records in %s\n",
                   static_cast<unsigned long long>(Records()), dir.c_str());
      GenerateRecords(dir, Records());
    }
    return dir;
  }();
  return records;
}

Fixture& Shared() {
  static Fixture* fixture = [] {
    const std::string records = RecordsDir(), sql = BenchDir() + "/bench.sqlite";
    if (!std::filesystem::exists(sql)) {
      std::fprintf(stderr, "query_bench: loading them into %s\n", sql.c_str());
      GenerateSqlite(sql + ".tmp", Records());
      std::filesystem::rename(sql + ".tmp", sql);
    }
    auto* f = new Fixture;
    auto ds = Dataset::Open(records);
    Check(ds.status());
    f->dataset = *ds;
    if (sqlite3_open_v2(sql.c_str(), &f->db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) Die("cannot open " + sql);
    return f;
  }();
  return *fixture;
}

struct QueryCase {
  const char* name;
  const char* expression;  // unirecord
  const char* sql;         // the WHERE clause for SQLite
};

const QueryCase kCases[] = {
    {"selective", "label == 417", "label = 417"},
    {"broad", "width >= 300", "width >= 300"},
    {"compound", "label in [3, 17, 123, 400, 999] and height between 300 and 400",
     "label IN (3, 17, 123, 400, 999) AND height BETWEEN 300 AND 400"},
};

std::vector<uint64_t> SqliteIds(sqlite3* db, const std::string& where) {
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "SELECT id FROM t WHERE " + where;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) Die(sqlite3_errmsg(db));
  std::vector<uint64_t> ids;
  while (sqlite3_step(stmt) == SQLITE_ROW) ids.push_back(static_cast<uint64_t>(sqlite3_column_int64(stmt, 0)));
  sqlite3_finalize(stmt);
  std::sort(ids.begin(), ids.end());  // the same answer as Query::Ids: ascending ids
  return ids;
}

uint64_t SqliteCount(sqlite3* db, const std::string& where) {
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "SELECT count(*) FROM t WHERE " + where;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) Die(sqlite3_errmsg(db));
  if (sqlite3_step(stmt) != SQLITE_ROW) Die(sqlite3_errmsg(db));
  const uint64_t n = static_cast<uint64_t>(sqlite3_column_int64(stmt, 0));
  sqlite3_finalize(stmt);
  return n;
}

// Both engines agree before anything is timed.
void CheckAgreement(const QueryCase& c) {
  Fixture& f = Shared();
  auto query = Query::Parse(c.expression, *f.dataset);
  Check(query.status());
  auto ids = query->Ids(*f.dataset);
  Check(ids.status());
  if (*ids != SqliteIds(f.db, c.sql)) Die(std::string("engines disagree on ") + c.expression);
}

void BM_UnirecordIds(benchmark::State& state, const QueryCase& c) {
  Fixture& f = Shared();
  CheckAgreement(c);
  size_t matches = 0;
  for (auto _ : state) {
    auto query = Query::Parse(c.expression, *f.dataset);  // parsing is part of a query
    auto ids = query->Ids(*f.dataset);
    matches = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  state.counters["matches"] = static_cast<double>(matches);
}

void BM_SqliteIds(benchmark::State& state, const QueryCase& c) {
  Fixture& f = Shared();
  size_t matches = 0;
  for (auto _ : state) {
    std::vector<uint64_t> ids = SqliteIds(f.db, c.sql);  // prepare + step + sort
    matches = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["matches"] = static_cast<double>(matches);
}

void BM_UnirecordCount(benchmark::State& state, const QueryCase& c) {
  Fixture& f = Shared();
  uint64_t n = 0;
  for (auto _ : state) {
    auto query = Query::Parse(c.expression, *f.dataset);
    n = *query->Count(*f.dataset);
    benchmark::DoNotOptimize(n);
  }
  if (n != SqliteCount(f.db, c.sql)) Die(std::string("counts disagree on ") + c.expression);
  state.counters["matches"] = static_cast<double>(n);
}

void BM_SqliteCount(benchmark::State& state, const QueryCase& c) {
  Fixture& f = Shared();
  uint64_t n = 0;
  for (auto _ : state) {
    n = SqliteCount(f.db, c.sql);
    benchmark::DoNotOptimize(n);
  }
  state.counters["matches"] = static_cast<double>(n);
}

// Issue 22: what checking a sorted index's checksum on its first use adds to
// the first query of a process. Each iteration opens the dataset afresh (so
// the check runs again: once per section per open dataset) and runs the
// selective query, whose one indexed field has a 5 MB sorted index over the 4
// shards (4 bytes a record); "checked" verifies checksums (the default),
// "unchecked" does not (no section check, no entry checks). BM_LaterQuery is
// the same query on a dataset opened once: sections already checked. All read
// the files from the page cache.
void BM_FirstQuery(benchmark::State& state, bool verify) {
  const std::string dir = RecordsDir();
  DatasetOptions options;
  options.verify_checksums = verify;
  size_t matches = 0;
  for (auto _ : state) {
    auto ds = Dataset::Open(dir, options);
    Check(ds.status());
    auto query = Query::Parse(kCases[0].expression, **ds);
    auto ids = query->Ids(**ds);
    Check(ids.status());
    matches = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  state.counters["matches"] = static_cast<double>(matches);
}

void BM_LaterQuery(benchmark::State& state) {
  auto ds = Dataset::Open(RecordsDir());
  Check(ds.status());
  size_t matches = 0;
  for (auto _ : state) {
    auto query = Query::Parse(kCases[0].expression, **ds);
    auto ids = query->Ids(**ds);
    matches = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  state.counters["matches"] = static_cast<double>(matches);
}

#ifdef UREC_HAVE_ROARING
// The set algebra alone, plain sorted vectors against CRoaring (the choice
// docs/query.md explains): from the rows of two clauses of one shard in the
// order a sorted index lists them (value, then row) to their ascending
// intersection or union, as a query needs it.
struct SetCase {
  const char* name;
  bool unite;
  bool (*left)(const Values&);
  bool (*right)(const Values&);
};

const SetCase kSetCases[] = {
    {"and_broad", false, [](const Values& v) { return v.width >= 300; },
     [](const Values& v) { return v.height >= 300 && v.height <= 400; }},
    {"or_broad", true, [](const Values& v) { return v.width >= 300; },
     [](const Values& v) { return v.height >= 300 && v.height <= 400; }},
    {"and_selective", false, [](const Values& v) { return v.label < 5; },
     [](const Values& v) { return v.height >= 300 && v.height <= 400; }},
};

// Rows of one shard (a quarter of the records) matching `keep`, in sorted-index order.
std::vector<uint32_t> IndexOrderRows(bool (*keep)(const Values&), bool by_width) {
  std::vector<std::pair<int64_t, uint32_t>> rows;
  for (uint32_t r = 0; r < Records() / 4; ++r) {
    const Values v = RecordValues(r);
    if (keep(v)) rows.emplace_back(by_width ? v.width : v.height, r);
  }
  std::sort(rows.begin(), rows.end());
  std::vector<uint32_t> out;
  for (const auto& p : rows) out.push_back(p.second);
  return out;
}

void BM_SetsVector(benchmark::State& state, const SetCase& c) {
  const std::vector<uint32_t> left = IndexOrderRows(c.left, true), right = IndexOrderRows(c.right, false);
  size_t n = 0;
  for (auto _ : state) {
    std::vector<uint32_t> a = left, b = right, out;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (c.unite) {
      std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    } else {
      std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    }
    n = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["matches"] = static_cast<double>(n);
}

void BM_SetsRoaring(benchmark::State& state, const SetCase& c) {
  const std::vector<uint32_t> left = IndexOrderRows(c.left, true), right = IndexOrderRows(c.right, false);
  size_t n = 0;
  for (auto _ : state) {
    roaring_bitmap_t* a = roaring_bitmap_create();
    roaring_bitmap_t* b = roaring_bitmap_create();
    roaring_bitmap_add_many(a, left.size(), left.data());
    roaring_bitmap_add_many(b, right.size(), right.data());
    roaring_bitmap_t* r = c.unite ? roaring_bitmap_or(a, b) : roaring_bitmap_and(a, b);
    std::vector<uint32_t> out(roaring_bitmap_get_cardinality(r));
    roaring_bitmap_to_uint32_array(r, out.data());
    n = out.size();
    benchmark::DoNotOptimize(out.data());
    roaring_bitmap_free(a);
    roaring_bitmap_free(b);
    roaring_bitmap_free(r);
  }
  state.counters["matches"] = static_cast<double>(n);
}
#endif

// Remembers each benchmark's time (the median when repetitions are
// aggregated) to print SQLite / unirecord ratios at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      times_[run.run_name.function_name] = run.GetAdjustedRealTime();
    }
  }
  // Each table only when the benchmarks it compares ran (--benchmark_filter).
  void PrintRatios() const {
    auto first = times_.find("BM_FirstQuery/checked");
    auto unchecked = times_.find("BM_FirstQuery/unchecked");
    auto later = times_.find("BM_LaterQuery");
    if (first != times_.end() && unchecked != times_.end() && later != times_.end()) {
      std::printf("\nFirst query of an opened dataset (open + '%s'), same run:\n"
                  "  checked %.0f us, unchecked %.0f us, later queries %.0f us: checksums add "
                  "%.0f us to the first query (checked - unchecked; nearly all the sorted-index hash)\n",
                  kCases[0].expression, first->second, unchecked->second, later->second,
                  first->second - unchecked->second);
    }
    std::vector<std::string> rows;
    char row[256];
    for (const char* kind : {"Ids", "Count"}) {
      for (const QueryCase& c : kCases) {
        auto u = times_.find(std::string("BM_Unirecord") + kind + "/" + c.name);
        auto s = times_.find(std::string("BM_Sqlite") + kind + "/" + c.name);
        if (u == times_.end() || s == times_.end()) continue;
        std::snprintf(row, sizeof(row), "  %-6s %-10s %8.1fx   (%s)\n", kind, c.name, s->second / u->second,
                      c.expression);
        rows.emplace_back(row);
      }
    }
    PrintTable("SQLite time / unirecord time (same run; > 1: unirecord faster)", rows);
#ifdef UREC_HAVE_ROARING
    rows.clear();
    for (const SetCase& c : kSetCases) {
      auto v = times_.find(std::string("BM_SetsVector/") + c.name);
      auto r = times_.find(std::string("BM_SetsRoaring/") + c.name);
      if (v == times_.end() || r == times_.end()) continue;
      std::snprintf(row, sizeof(row), "  %-14s %8.2fx\n", c.name, r->second / v->second);
      rows.emplace_back(row);
    }
    PrintTable("CRoaring time / sorted-vector time, one shard's rows in index order to a sorted result", rows);
#endif
  }

 private:
  static void PrintTable(const char* title, const std::vector<std::string>& rows) {
    if (rows.empty()) return;
    std::printf("\n%s\n", title);
    for (const std::string& row : rows) std::fputs(row.c_str(), stdout);
  }

  std::map<std::string, double> times_;
};

long PeakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

}  // namespace
}  // namespace unirecord

int main(int argc, char** argv) {
  using namespace unirecord;
  for (const QueryCase& c : kCases) {
    benchmark::RegisterBenchmark((std::string("BM_UnirecordIds/") + c.name).c_str(), BM_UnirecordIds, c)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("BM_SqliteIds/") + c.name).c_str(), BM_SqliteIds, c)
        ->Unit(benchmark::kMicrosecond);
  }
  for (const QueryCase& c : {kCases[1], kCases[2]}) {
    benchmark::RegisterBenchmark((std::string("BM_UnirecordCount/") + c.name).c_str(), BM_UnirecordCount, c)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("BM_SqliteCount/") + c.name).c_str(), BM_SqliteCount, c)
        ->Unit(benchmark::kMicrosecond);
  }
#ifdef UREC_HAVE_ROARING
  for (const SetCase& c : kSetCases) {
    benchmark::RegisterBenchmark((std::string("BM_SetsVector/") + c.name).c_str(), BM_SetsVector, c)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("BM_SetsRoaring/") + c.name).c_str(), BM_SetsRoaring, c)
        ->Unit(benchmark::kMicrosecond);
  }
#endif
  benchmark::RegisterBenchmark("BM_FirstQuery/checked", BM_FirstQuery, true)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_FirstQuery/unchecked", BM_FirstQuery, false)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_LaterQuery", BM_LaterQuery)->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  std::printf("peak RSS %.1f MiB (the process: both engines, mapped index pages and SQLite's cache)\n",
              PeakRssKib() / 1024.0);
  benchmark::Shutdown();
  return 0;
}
