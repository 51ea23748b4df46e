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
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_dir.h"
#include "fuzz_query_dataset.h"
#include "unirecord/dataset.h"
#include "unirecord/query.h"

using namespace unirecord;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzDir dir;
  static std::shared_ptr<Dataset> dataset = fuzz::WriteQueryDataset(dir.path());
  auto query = Query::Parse(std::string_view(reinterpret_cast<const char*>(data), size), *dataset);
  if (!query.ok()) {
    fuzz::Require(query.status().code() == StatusCode::kInvalidArgument, "a parse error that is not InvalidArgument");
    fuzz::Require(query.status().message().find("column ") != std::string::npos, "a parse error without a column");
    return 0;
  }
  (void)query->Explain();
  auto ids = query->Ids(*dataset);
  fuzz::Require(ids.ok(), "Ids failed on a sound dataset");
  for (size_t i = 0; i < ids->size(); ++i) {
    fuzz::Require((*ids)[i] < dataset->size() && (i == 0 || (*ids)[i - 1] < (*ids)[i]), "ids not ascending or out of range");
  }
  auto count = query->Count(*dataset);
  fuzz::Require(count.ok() && *count == ids->size(), "Count differs from the number of ids");
  for (const char* field : {"label", "score", "ratio", "path"}) {
    auto groups = query->CountBy(*dataset, field);
    fuzz::Require(groups.ok(), "CountBy failed");
    uint64_t total = 0;
    for (const ValueCount& g : *groups) total += g.count;
    fuzz::Require(total == ids->size(), "CountBy does not sum to the count");
  }
  return 0;
}
