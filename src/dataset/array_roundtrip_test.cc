// Issue 17: every element type in every shape pattern (scalar, indexed
// scalar, fixed array, variable-shape arrays) written and read back, with
// empty, 1 x N and large values; and one test per forged stored shape.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "dataset/dataset_testing.h"
#include "format/checksum.h"
#include "format/endian.h"
#include "index/index_file.h"
#include "index/record_table.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

using testing::ReadBytes;
using testing::WriteBytes;

// Element bytes of `count` values of `type`, deterministic from `seed`
// (bool: 0/1; float16: finite bit patterns).
std::string Elements(FieldType type, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t width = NumericWidth(type);
  std::string out(count * width, '\0');
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = rng();
    if (type == FieldType::kBool) v &= 1;
    if (type == FieldType::kFloat16) v &= 0x3bff;  // exponent below 31: finite
    if (type == FieldType::kFloat32) {
      const float f = static_cast<float>(static_cast<int64_t>(v % 2000001) - 1000000) / 64.0f;
      std::memcpy(&v, &f, 4);
    }
    if (type == FieldType::kFloat64) {
      const double d = static_cast<double>(static_cast<int64_t>(v % 2000001) - 1000000) / 3.0;
      std::memcpy(&v, &d, 8);
    }
    std::memcpy(out.data() + i * width, &v, width);  // little-endian host
  }
  return out;
}

struct Value {
  std::vector<int64_t> shape;
  std::string bytes;
};

// The shapes record k gets for each pattern: empty, 1 x N, large and more.
std::vector<int64_t> ShapeFor(const Field& f, uint64_t k) {
  if (!f.has_variable_shape()) return f.shape;
  static const int64_t kExtents[] = {0, 1, 5, 70000, 3, 0, 2};
  std::vector<int64_t> shape = f.shape;
  int v = 0;
  for (int64_t& d : shape) {
    if (d != kVariableDim) continue;
    int64_t e = kExtents[(k + 3 * static_cast<uint64_t>(v++)) % 7];
    if (shape.size() > 1 && e > 1000) e = 300;  // large in total, not per dimension
    d = e;
  }
  return shape;
}

class ArrayRoundTripTest : public ::testing::Test {
 protected:
  static std::vector<Field> Fields() {
    std::vector<Field> fields;
    for (const TypeInfo& t : AllTypes()) {
      if (t.width == 0) continue;
      const std::string n = t.name;
      fields.push_back(Field::Array(n + "_scalar", t.type, {}));
      if (t.indexable) {
        Field indexed = Field::Array(n + "_indexed", t.type, {});
        indexed.indexed = true;
        fields.push_back(indexed);
      }
      fields.push_back(Field::Array(n + "_fixed", t.type, {2, 3}));
      fields.push_back(Field::Array(n + "_tokens", t.type, {kVariableDim}));
      fields.push_back(Field::Array(n + "_boxes", t.type, {kVariableDim, 4}));
      fields.push_back(Field::Array(n + "_mask", t.type, {kVariableDim, kVariableDim}));
    }
    fields.push_back(Field::Bytes("image"));
    return fields;
  }

  // Writes `n` records; returns the values set, [record][field].
  std::vector<std::vector<Value>> Write(const std::string& dir, uint64_t n, uint32_t shards) {
    Schema schema = Schema::Make(Fields()).value();
    WriterOptions options = testing::SmallPages(shards);
    options.expected_records = n;  // ids in write order
    options.sync = false;
    auto writer = Writer::Create(dir, "arrays", schema, options).value();
    RecordBuilder record(schema);
    std::vector<std::vector<Value>> values(n);
    for (uint64_t k = 0; k < n; ++k) {
      for (size_t i = 0; i < schema.num_fields(); ++i) {
        const Field& f = schema.field(i);
        if (f.type == FieldType::kBytes) {
          EXPECT_TRUE(record.SetBytesOwned(i, std::string(k % 3, 'x')).ok());
          values[k].push_back({});
          continue;
        }
        Value v{ShapeFor(f, k), {}};
        size_t count = 1;
        for (int64_t d : v.shape) count *= static_cast<size_t>(d);
        v.bytes = Elements(f.type, count, k * 1000 + i);
        const Status st = record.SetValues(i, f.type, v.bytes.data(), v.shape);
        EXPECT_TRUE(st.ok()) << f.name << ": " << st.ToString();
        values[k].push_back(std::move(v));
      }
      EXPECT_TRUE(writer->Write(record).ok());
    }
    EXPECT_TRUE(writer->Finish().ok());
    return values;
  }
};

TEST_F(ArrayRoundTripTest, EveryTypeAndShapePatternReadsBack) {
  const std::string dir = testing::MakeTempDir();
  const auto written = Write(dir, 21, 2);
  auto ds = Dataset::Open(dir).value();
  ASSERT_TRUE(ds->Verify().ok());
  for (const ShardInfo& s : ds->shards()) EXPECT_EQ(s.format_minor, 1u);  // 1.1 types are in use
  const Schema& schema = ds->schema();
  for (uint64_t id = 0; id < ds->size(); ++id) {
    auto record = ds->Get(id);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    for (size_t i = 0; i < schema.num_fields(); ++i) {
      const Field& f = schema.field(i);
      if (f.type == FieldType::kBytes) continue;
      const Value& want = written[id][i];
      SCOPED_TRACE("record " + std::to_string(id) + " field " + f.name);
      if (!f.is_array()) {
        if (IsIntegral(f.type)) {
          EXPECT_EQ(*record->GetInt64(i), ElementToInt64(f.type, want.bytes.data()));
        } else {
          const double got = *record->GetFloat64(i);
          EXPECT_EQ(got, ElementToDouble(f.type, want.bytes.data()));
        }
        if (f.indexed) {
          if (IsIntegral(f.type)) {
            EXPECT_EQ(*ds->GetIndexedInt64(id, i), ElementToInt64(f.type, want.bytes.data()));
          } else {
            EXPECT_EQ(*ds->GetIndexedFloat64(id, i), ElementToDouble(f.type, want.bytes.data()));
          }
        }
        continue;
      }
      auto array = record->GetArray(i);
      ASSERT_TRUE(array.ok()) << array.status().ToString();
      EXPECT_EQ(array->type, f.type);
      EXPECT_EQ(array->shape.ToVector(), want.shape);
      ASSERT_EQ(array->bytes(), want.bytes.size());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(array->data) % NumericWidth(f.type), 0u) << "misaligned view";
      EXPECT_EQ(std::memcmp(array->data, want.bytes.data(), want.bytes.size()), 0);
    }
  }
}

TEST_F(ArrayRoundTripTest, TypedViewsAndSettersByCount) {
  const std::string dir = testing::MakeTempDir();
  Schema schema = Schema::Make({Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}),
                                Field::Array("ids", FieldType::kInt64, {kVariableDim}),
                                Field::Array("mask", FieldType::kBool, {kVariableDim, kVariableDim})})
                      .value();
  WriterOptions options;
  options.sync = false;
  auto writer = Writer::Create(dir, "typed", schema, options).value();
  RecordBuilder record(schema);
  const float boxes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t ids[2] = {17, -3};
  const bool mask[6] = {true, false, true, true, false, false};
  ASSERT_TRUE(record.SetArray("boxes", boxes, 8).ok());  // 2 boxes, by count
  ASSERT_TRUE(record.SetArray("ids", ids, 2).ok());
  ASSERT_TRUE(record.SetValues("mask", FieldType::kBool, mask, {2, 3}).ok());
  ASSERT_TRUE(writer->Write(record).ok());
  // Wrong counts, ranks, fixed dimensions and types are refused, naming the field.
  const Status not_multiple = record.SetArray("boxes", boxes, 7);
  EXPECT_EQ(not_multiple.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_multiple.message().find("'boxes'"), std::string::npos) << not_multiple.ToString();
  EXPECT_FALSE(record.SetValues("boxes", FieldType::kFloat32, boxes, {2, 3}).ok());
  EXPECT_FALSE(record.SetValues("boxes", FieldType::kFloat32, boxes, {8}).ok());
  EXPECT_FALSE(record.SetValues("boxes", FieldType::kFloat64, boxes, {1, 4}).ok());
  const float flat[6] = {};
  EXPECT_FALSE(record.SetArray("boxes", flat, 6).ok());  // not whole boxes
  const uint8_t two = 2;
  EXPECT_FALSE(record.SetValues("mask", FieldType::kBool, &two, {1, 1}).ok());
  ASSERT_TRUE(record.SetArray("boxes", boxes, 0).ok());  // 0 boxes
  ASSERT_TRUE(record.SetArray("ids", ids, 0).ok());
  ASSERT_TRUE(record.SetValues("mask", FieldType::kBool, mask, {0, 5}).ok());
  ASSERT_TRUE(writer->Write(record).ok());
  ASSERT_TRUE(writer->Finish().ok());

  auto ds = Dataset::Open(dir).value();
  auto r0 = ds->Get(0).value();
  const ArrayView b = r0.GetArray("boxes").value();
  EXPECT_EQ(b.shape.ToVector(), (std::vector<int64_t>{2, 4}));
  ASSERT_NE(b.as<float>(), nullptr);
  EXPECT_EQ(b.as<double>(), nullptr);
  EXPECT_EQ(b.as<float>()[7], 8.0f);
  EXPECT_EQ(r0.GetArray("ids")->as<int64_t>()[1], -3);
  const ArrayView m = r0.GetArray("mask").value();
  EXPECT_EQ(m.shape.ToVector(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(m.as<bool>(), mask, 6), 0);
  auto r1 = ds->Get(1).value();
  EXPECT_EQ(r1.GetArray("boxes")->shape.ToVector(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(r1.GetArray("boxes")->count, 0u);
  EXPECT_EQ(r1.GetArray("mask")->shape.ToVector(), (std::vector<int64_t>{0, 5}));
  EXPECT_FALSE(r1.GetInt64("ids").ok());  // an array, not a scalar
}

TEST_F(ArrayRoundTripTest, FilesWithoutNewTypesStayVersion10) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(testing::WriteSample(dir, "old", 5, testing::SmallPages(1)).ok());
  auto ds = Dataset::Open(dir).value();
  EXPECT_EQ(ds->shards()[0].format_minor, 0u);
}

// One test per forged stored shape in a file: the value's checksum is
// recomputed so that only the shape check can catch it.
class ForgedShapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    schema_ = Schema::Make({Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4})}).value();
    WriterOptions options;
    options.sync = false;
    auto writer = Writer::Create(dir_, "forged", schema_, options).value();
    RecordBuilder record(schema_);
    const float boxes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_TRUE(record.SetArray(0, boxes, 8).ok());
    ASSERT_TRUE(writer->Write(record).ok());
    ASSERT_TRUE(writer->Finish().ok());
    shard_ = writer->summary().shard_paths[0];
    index_ = writer->summary().index_paths[0];
  }

  // Replaces 4 bytes of the stored value at `offset` and re-seals the blob
  // checksum and record-table entry, as a forger would.
  void Forge(size_t offset, uint32_t value) {
    const index::FieldLayout layout = index::FieldLayout::For(schema_);
    std::string index_bytes = ReadBytes(index_);
    auto reader = index::IndexReader::Open(index_, true).value();
    const size_t entry_offset = EntryOffset(reader);
    ASSERT_NE(entry_offset, std::string::npos);
    index::BlobLocator blob = index::LoadBlobLocator(layout, reader.entry(0), 0);
    std::string shard_bytes = ReadBytes(shard_);
    format::StoreLE<uint32_t>(reinterpret_cast<uint8_t*>(shard_bytes.data()) + blob.offset + offset, value);
    WriteBytes(shard_, shard_bytes);
    blob.checksum = format::Checksum(shard_bytes.data() + blob.offset, blob.stored_length);
    auto* entry = reinterpret_cast<uint8_t*>(index_bytes.data()) + entry_offset;
    index::StoreBlobLocator(layout, entry, 0, blob);
    index::SealEntry(layout, entry, 0);
    WriteBytes(index_, index_bytes);
  }

  // Byte offset of record 0's entry in the index file.
  size_t EntryOffset(const index::IndexReader& reader) {
    const std::string bytes = ReadBytes(index_);
    const std::string entry(reinterpret_cast<const char*>(reader.entry(0)), reader.stride());
    return bytes.find(entry);
  }

  void ExpectCorrupt(const std::string& words) {
    for (bool verify : {true, false}) {
      DatasetOptions options;
      options.verify_checksums = verify;
      auto ds = Dataset::Open(dir_, options).value();
      auto record = ds->Get(0);
      ASSERT_TRUE(record.ok()) << record.status().ToString();
      const Status st = record->GetArray(0).status();
      EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
      EXPECT_NE(st.message().find(io::BaseName(shard_) + ": row 0: array 'boxes'"), std::string::npos) << st.ToString();
      EXPECT_NE(st.message().find(words), std::string::npos) << st.ToString();
      const Status deep = ds->Verify();
      EXPECT_EQ(deep.code(), StatusCode::kCorruption) << deep.ToString();
    }
  }

  std::string dir_, shard_, index_;
  Schema schema_;
};

TEST_F(ForgedShapeTest, HugeExtent) { Forge(0, 0xffffffffu), ExpectCorrupt("impossible shape"); }
TEST_F(ForgedShapeTest, ExtentLargerThanTheValue) { Forge(0, 3), ExpectCorrupt("bytes of elements"); }
TEST_F(ForgedShapeTest, ExtentSmallerThanTheValue) { Forge(0, 1), ExpectCorrupt("bytes of elements"); }
TEST_F(ForgedShapeTest, NonzeroPrefixPadding) { Forge(4, 1), ExpectCorrupt("nonzero padding"); }

}  // namespace
}  // namespace unirecord
