// Fuzz target for the dataset readers (shard + index files).
//
// Input layout (inputs under 5 bytes are ignored):
//   byte 0          option flags: bit 0 = verify_checksums,
//                   bit 1 = verify_index_at_open
//   bytes 1..4      N, little-endian uint32: length of the shard bytes
//   next N bytes    the .urec file  (clamped to what is left)
//   the rest        the .uidx file
// The two files are written as f-00000-of-00001.{urec,uidx} into a per-process
// temp directory and opened with allow_partial (so a shard taken from a
// several-shard dataset opens too). Then every record (first 1000) is read
// with Get, every bytes field with GetBlob, every other field with the typed
// getter of its type and, when indexed, GetIndexed*, and Verify() runs.
// Every call must return a Status; none may crash or trip a sanitizer.
//
// Seeds: fuzz/corpus/dataset/, made from tests/data/golden/ by
// fuzz/make_dataset_seeds.sh (plus regress-* inputs that fuzzing found).
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "fuzz_dir.h"
#include "unirecord/dataset.h"

namespace {

using unirecord::Dataset;
using unirecord::DatasetOptions;
using unirecord::FieldType;
using unirecord::fuzz::FuzzDir;

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::perror(path.c_str());
    std::abort();
  }
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

void Exercise(const Dataset& ds) {
  const auto& fields = ds.schema().fields();
  const uint64_t n = ds.size() < 1000 ? ds.size() : 1000;
  for (uint64_t id = 0; id < n; ++id) {
    auto record = ds.Get(id);
    for (size_t f = 0; f < fields.size(); ++f) {
      const auto& field = fields[f];
      if (field.type == FieldType::kBytes) {
        auto blob = ds.GetBlob(id, f);
        if (blob.ok() && blob->size() > 0) {
          volatile uint8_t touch = static_cast<uint8_t>(blob->data()[0] ^ blob->data()[blob->size() - 1]);
          (void)touch;
        }
      }
      if (field.indexed) {
        (void)ds.GetIndexedInt64(id, f);
        (void)ds.GetIndexedFloat64(id, f);
      }
      if (!record.ok()) continue;
      const auto& r = *record;
      if (field.is_array()) {
        auto a = r.GetArray(f);
        if (a.ok() && a->count > 0) {
          const size_t width = unirecord::NumericWidth(a->type);
          volatile uint8_t touch = static_cast<const uint8_t*>(a->data)[a->count * width - 1];
          (void)touch;
        }
        continue;
      }
      switch (field.type) {
        case FieldType::kInt32: (void)r.GetInt32(f); (void)r.GetInt64(f); break;
        case FieldType::kInt64: (void)r.GetInt64(f); break;
        case FieldType::kFloat32: (void)r.GetFloat32(f); (void)r.GetFloat64(f); break;
        case FieldType::kFloat64: (void)r.GetFloat64(f); break;
        case FieldType::kString:
        case FieldType::kBytes: {
          auto s = field.type == FieldType::kString ? r.GetString(f) : r.GetBytes(f);
          if (s.ok() && !s->empty()) {
            volatile char touch = s->back();
            (void)touch;
          }
          break;
        }
        default:  // the 1.1 element types (schema.h's TypeInfo table)
          (void)r.GetInt64(f);
          (void)r.GetFloat64(f);
          break;
      }
    }
    if (record.ok()) (void)record->GetInt64(fields.size());  // out of range field
  }
  (void)ds.Get(ds.size());  // out of range id
  (void)ds.Verify();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzDir dir;
  if (size < 5) return 0;
  DatasetOptions options;
  options.verify_checksums = (data[0] & 1) != 0;
  options.verify_index_at_open = (data[0] & 2) != 0;
  options.allow_partial = true;
  size_t shard_size = static_cast<size_t>(data[1]) | static_cast<size_t>(data[2]) << 8 |
                      static_cast<size_t>(data[3]) << 16 | static_cast<size_t>(data[4]) << 24;
  data += 5;
  size -= 5;
  if (shard_size > size) shard_size = size;
  const std::string shard = dir.path() + "/f-00000-of-00001.urec";
  WriteFile(shard, data, shard_size);
  WriteFile(dir.path() + "/f-00000-of-00001.uidx", data + shard_size, size - shard_size);

  auto ds = Dataset::Open(dir.path(), options);
  if (ds.ok()) Exercise(**ds);
  return 0;
}
