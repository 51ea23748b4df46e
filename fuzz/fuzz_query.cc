// Fuzz target for the query language: the input is an expression.
//
// It is parsed against a small dataset written once per process (2 shards,
// indexed int/float fields holding int64 and float extremes, NaN, -0.0,
// unindexed int32/float32/string fields, class names); when it parses, it
// runs: Ids, Count, CountBy and Explain. Every call must return a Status;
// none may crash, hang or trip a sanitizer, and a successful run must agree
// with itself (ids ascending and in range, Count == number of ids, CountBy
// summing to it), or the target aborts.
//
// Seeds: fuzz/corpus/query/ (one expression a file).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "fuzz_dir.h"
#include "unirecord/dataset.h"
#include "unirecord/query.h"
#include "unirecord/writer.h"

namespace {

using namespace unirecord;

void Require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_query: %s\n", what);
    std::abort();
  }
}

std::shared_ptr<Dataset> WriteDataset(const std::string& dir) {
  auto schema = Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::Int32("width", true),
                              Field::Float64("score", true), Field::Int32("height"), Field::Float32("ratio"),
                              Field::String("path"), Field::Array("mean", FieldType::kFloat32, {2})});
  Require(schema.ok(), "schema");
  WriterOptions options;
  options.num_shards = 2;
  options.sync = false;
  auto writer = Writer::Create(dir, "q", *schema, options);
  Require(writer.ok(), "writer");
  Require((*writer)->SetMetadata(kClassesMetadataKey, "tench\ngoldfish\nshark").ok(), "metadata");
  const double kSpecial[] = {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             0.0, -0.0, 0.5, -1e300};
  const int64_t kInts[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 0, 1, 2, -1};
  RecordBuilder record(*schema);
  for (int k = 0; k < 40; ++k) {
    const float mean[2] = {0.5f, static_cast<float>(k)};
    const std::string path = k % 5 == 0 ? "" : "dir" + std::to_string(k % 3) + "/" + std::to_string(k);
    Require(record.SetBytes("image", "") .ok() && record.SetInt64("label", kInts[k % 6]).ok() &&
                record.SetInt32("width", k * 7 % 11).ok() && record.SetFloat64("score", kSpecial[k % 8]).ok() &&
                record.SetInt32("height", k % 4 - 2).ok() &&
                record.SetFloat32("ratio", static_cast<float>(kSpecial[(k + 3) % 8])).ok() &&
                record.SetString("path", path).ok() && record.SetArray("mean", mean, 2).ok(),
            "record");
    Require((*writer)->Write(record).ok(), "write");
  }
  Require((*writer)->Finish().ok(), "finish");
  auto ds = Dataset::Open(dir);
  Require(ds.ok(), "open");
  return *ds;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzDir dir;
  static std::shared_ptr<Dataset> dataset = WriteDataset(dir.path());
  auto query = Query::Parse(std::string_view(reinterpret_cast<const char*>(data), size), *dataset);
  if (!query.ok()) {
    Require(query.status().code() == StatusCode::kInvalidArgument, "a parse error that is not InvalidArgument");
    Require(query.status().message().find("column ") != std::string::npos, "a parse error without a column");
    return 0;
  }
  (void)query->Explain();
  auto ids = query->Ids(*dataset);
  Require(ids.ok(), "Ids failed on a sound dataset");
  for (size_t i = 0; i < ids->size(); ++i) {
    Require((*ids)[i] < dataset->size() && (i == 0 || (*ids)[i - 1] < (*ids)[i]), "ids not ascending or out of range");
  }
  auto count = query->Count(*dataset);
  Require(count.ok() && *count == ids->size(), "Count differs from the number of ids");
  for (const char* field : {"label", "score", "ratio", "path"}) {
    auto groups = query->CountBy(*dataset, field);
    Require(groups.ok(), "CountBy failed");
    uint64_t total = 0;
    for (const ValueCount& g : *groups) total += g.count;
    Require(total == ids->size(), "CountBy does not sum to the count");
  }
  return 0;
}
