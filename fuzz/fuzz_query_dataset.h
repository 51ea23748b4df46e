// What the query fuzz targets share: the small dataset they query.
#ifndef UNIRECORD_FUZZ_FUZZ_QUERY_DATASET_H_
#define UNIRECORD_FUZZ_FUZZ_QUERY_DATASET_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "fuzz_dir.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord::fuzz {

// Writes the dataset into `dir` and opens it: 2 shards of 20 records,
// indexed int/float fields holding int64 and float extremes, NaN, -0.0,
// unindexed int32/float32/string fields, class names, and an indexed int64
// list `tags` (a list index, format 1.2: empty lists, repeats, extremes).
inline std::shared_ptr<Dataset> WriteQueryDataset(const std::string& dir) {
  Field tags = Field::Array("tags", FieldType::kInt64, {kVariableDim});
  tags.indexed = true;
  auto schema = Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::Int32("width", true),
                              Field::Float64("score", true), Field::Int32("height"), Field::Float32("ratio"),
                              Field::String("path"), Field::Array("mean", FieldType::kFloat32, {2}), tags});
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
    int64_t tag_values[4];
    for (int j = 0; j < k % 5 && j < 4; ++j) tag_values[j] = kInts[(k + j * j) % 6];  // k % 5 == 4 repeats one
    const int64_t tag_count = k % 5 == 4 ? 4 : k % 5;
    const std::string path = k % 5 == 0 ? "" : "dir" + std::to_string(k % 3) + "/" + std::to_string(k);
    Require(record.SetBytes("image", "") .ok() && record.SetInt64("label", kInts[k % 6]).ok() &&
                record.SetInt32("width", k * 7 % 11).ok() && record.SetFloat64("score", kSpecial[k % 8]).ok() &&
                record.SetInt32("height", k % 4 - 2).ok() &&
                record.SetFloat32("ratio", static_cast<float>(kSpecial[(k + 3) % 8])).ok() &&
                record.SetString("path", path).ok() && record.SetArray("mean", mean, 2).ok() &&
                record.SetValues("tags", FieldType::kInt64, tag_values, {tag_count}).ok(),
            "record");
    Require((*writer)->Write(record).ok(), "write");
  }
  Require((*writer)->Finish().ok(), "finish");
  auto ds = Dataset::Open(dir);
  Require(ds.ok(), "open");
  return *ds;
}


}  // namespace unirecord::fuzz

#endif  // UNIRECORD_FUZZ_FUZZ_QUERY_DATASET_H_
