// Golden files of format 1.1 (tests/data/golden/README.md): a dataset using
// the 1.1 element types and variable-shape arrays that must keep decoding to
// the values below, and one whose schema names a type this reader does not
// know, which must keep failing as not supported, naming the field.
//
// Regenerate (only when the format version changes):
//   UREC_WRITE_GOLDEN=1 build/src/format/golden_arrays_test --gtest_filter=GoldenArraysTest.Regenerate
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "dataset/test_util.h"
#include "format/checksum.h"
#include "format/endian.h"
#include "format/file_names.h"
#include "format/fixed_parts.h"
#include "format/format_constants.h"
#include "format/header_codec.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

const std::string kGoldenDir = std::string(UNIRECORD_TEST_DATA_DIR) + "/golden";

Schema ArraysSchema(FieldType u8_type = FieldType::kUint8) {
  Field u8 = Field::Array("u8", u8_type, {});
  u8.indexed = true;
  return Schema::Make({Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}),
                       Field::Array("tokens", FieldType::kInt32, {kVariableDim}),
                       Field::Array("mask", FieldType::kBool, {kVariableDim, kVariableDim}),
                       Field::Array("ids", FieldType::kUint16, {kVariableDim}),
                       Field::Array("half", FieldType::kFloat16, {2}), u8,
                       Field::Array("i8", FieldType::kInt8, {}), Field::Array("u32", FieldType::kUint32, {}),
                       Field::Array("i16", FieldType::kInt16, {kVariableDim, 2})})
      .value();
}

struct Row {
  std::vector<float> boxes;  // x 4
  std::vector<int32_t> tokens;
  std::vector<int64_t> mask_shape;
  std::vector<uint8_t> mask;
  std::vector<uint16_t> ids;
  uint16_t half[2];  // binary16 bits
  uint8_t u8;
  int8_t i8;
  uint32_t u32;
  std::vector<int16_t> i16;  // x 2
};

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      {{10.5f, 20.25f, 30, 40, 0, 0, 1, 1}, {101, 7, -5}, {2, 3}, {1, 0, 1, 0, 0, 1}, {65535, 0, 7},
       {0x3c00, 0xc000}, 255, -128, 4294967295u, {-32768, 32767}},
      {{}, {}, {0, 4}, {}, {}, {0x7bff, 0x8000}, 0, 0, 0, {}},  // empty arrays everywhere
      {{-1.5f, 2, 3, 4.75f}, {2147483647}, {1, 1}, {1}, {1}, {0x0001, 0x3555}, 17, 127, 123456789u,
       {1, -1, 2, -2, 3, -3}},
  };
  return rows;
}

Status Fill(RecordBuilder& r, const Row& row) {
  UREC_RETURN_IF_ERROR(r.SetArray("boxes", row.boxes.data(), row.boxes.size()));
  UREC_RETURN_IF_ERROR(r.SetArray("tokens", row.tokens.data(), row.tokens.size()));
  UREC_RETURN_IF_ERROR(r.SetValues("mask", FieldType::kBool, row.mask.data(), row.mask_shape));
  UREC_RETURN_IF_ERROR(r.SetValues("ids", FieldType::kUint16, row.ids.data(), {int64_t(row.ids.size())}));
  UREC_RETURN_IF_ERROR(r.SetValues("half", FieldType::kFloat16, row.half, {2}));
  UREC_RETURN_IF_ERROR(r.SetValues("u8", FieldType::kUint8, &row.u8, {}));
  UREC_RETURN_IF_ERROR(r.SetValues("i8", FieldType::kInt8, &row.i8, {}));
  UREC_RETURN_IF_ERROR(r.SetValues("u32", FieldType::kUint32, &row.u32, {}));
  return r.SetValues("i16", FieldType::kInt16, row.i16.data(), {int64_t(row.i16.size() / 2), 2});
}

// A one-shard dataset in the generation-0 layout, as the v1 golden files.
Status WriteGolden(const std::string& dir, const std::string& name) {
  const Schema schema = ArraysSchema();
  WriterOptions options = testing::SmallPages(1);
  options.sync = false;
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, name, schema, options));
  RecordBuilder record(schema);
  for (const Row& row : Rows()) {
    UREC_RETURN_IF_ERROR(Fill(record, row));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return testing::ToPreManifestLayout(dir, name, writer->summary());
}

// Where field 'u8''s type byte is in a shard header: the one byte in which
// the headers of two schemas differing only in that type differ.
size_t TypeByteOffset() {
  const std::string a = format::BuildShardHeader(ArraysSchema(FieldType::kUint8), {}, {});
  const std::string b = format::BuildShardHeader(ArraysSchema(FieldType::kInt8), {}, {});
  size_t found = std::string::npos;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      EXPECT_EQ(found, std::string::npos) << "more than one byte differs";
      found = i;
    }
  }
  return found;
}

// Gives field 'u8' type 255, unknown to this reader (14 was until format 1.3
// made it `video`), and re-seals the header.
void MakeTypeUnknown(const std::string& shard) {
  std::string s = testing::ReadBytes(shard);
  auto* d = reinterpret_cast<uint8_t*>(s.data());
  auto frame = format::ReadFrame(format::FileKind::kShard, d, s.size(), shard);
  ASSERT_TRUE(frame.ok());
  const size_t offset = TypeByteOffset();
  ASSERT_NE(offset, std::string::npos);
  ASSERT_EQ(d[format::kHeaderOffset + offset], static_cast<uint8_t>(FieldType::kUint8));
  d[format::kHeaderOffset + offset] = 255;
  format::StoreLE<uint64_t>(d + format::kPreambleHeaderChecksumOffset,
                            format::Checksum(d + format::kHeaderOffset, frame->header_length));
  format::StoreLE<uint64_t>(d + format::kPreambleChecksumOffset, format::Checksum(d, format::kPreambleChecksumOffset));
  testing::WriteBytes(shard, s);
}

TEST(GoldenArraysTest, Regenerate) {
  if (std::getenv("UREC_WRITE_GOLDEN") == nullptr) GTEST_SKIP() << "set UREC_WRITE_GOLDEN=1 to rewrite the golden files";
  for (const char* sub : {"/v1_1", "/v1_1-bad/unknown-type"}) {
    std::filesystem::remove_all(kGoldenDir + sub);
    std::filesystem::create_directories(kGoldenDir + sub);
  }
  ASSERT_TRUE(WriteGolden(kGoldenDir + "/v1_1", "arrays").ok());
  ASSERT_TRUE(WriteGolden(kGoldenDir + "/v1_1-bad/unknown-type", "bad").ok());
  MakeTypeUnknown(kGoldenDir + "/v1_1-bad/unknown-type/bad-00000-of-00001.urec");
}

template <typename T>
std::vector<T> Values(const ArrayView& a) {
  const T* p = static_cast<const T*>(a.data);
  return std::vector<T>(p, p + a.count);
}

TEST(GoldenArraysTest, Version11DatasetDecodes) {
  auto ds = Dataset::Open(kGoldenDir + "/v1_1");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->schema(), ArraysSchema());
  EXPECT_EQ((*ds)->shards()[0].format_minor, 1u);
  ASSERT_EQ((*ds)->size(), Rows().size());
  for (uint64_t id = 0; id < Rows().size(); ++id) {
    SCOPED_TRACE("id " + std::to_string(id));
    const Row& row = Rows()[id];
    auto r = (*ds)->Get(id);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const ArrayView boxes = *r->GetArray("boxes");
    EXPECT_EQ(boxes.shape.ToVector(), (std::vector<int64_t>{int64_t(row.boxes.size() / 4), 4}));
    EXPECT_EQ(Values<float>(boxes), row.boxes);
    EXPECT_EQ(Values<int32_t>(*r->GetArray("tokens")), row.tokens);
    const ArrayView mask = *r->GetArray("mask");
    EXPECT_EQ(mask.shape.ToVector(), row.mask_shape);
    EXPECT_EQ(Values<uint8_t>(mask), row.mask);
    EXPECT_EQ(Values<uint16_t>(*r->GetArray("ids")), row.ids);
    EXPECT_EQ(Values<uint16_t>(*r->GetArray("half")), std::vector<uint16_t>(row.half, row.half + 2));
    EXPECT_EQ(*r->GetInt64("u8"), row.u8);
    EXPECT_EQ(*(*ds)->GetIndexedInt64(id, 5), row.u8);
    EXPECT_EQ(*r->GetInt64("i8"), row.i8);
    EXPECT_EQ(*r->GetInt64("u32"), int64_t{row.u32});
    const ArrayView i16 = *r->GetArray("i16");
    EXPECT_EQ(i16.shape.ToVector(), (std::vector<int64_t>{int64_t(row.i16.size() / 2), 2}));
    EXPECT_EQ(Values<int16_t>(i16), row.i16);
  }
  EXPECT_EQ(HalfToFloat(Rows()[0].half[1]), -2.0f);
  Status verified = (*ds)->Verify();
  EXPECT_TRUE(verified.ok()) << verified.ToString();
}

TEST(GoldenArraysTest, TodaysWriterReproducesTheGoldenBytes) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(WriteGolden(dir, "arrays").ok());
  for (const char* name : {"arrays-00000-of-00001.urec", "arrays-00000-of-00001.uidx"}) {
    EXPECT_EQ(testing::ReadBytes(dir + "/" + name), testing::ReadBytes(kGoldenDir + "/v1_1/" + name)) << name;
  }
}

TEST(GoldenArraysTest, UnknownTypeIsNotSupportedNamingTheField) {
  auto ds = Dataset::Open(kGoldenDir + "/v1_1-bad/unknown-type");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), StatusCode::kNotSupported) << ds.status().ToString();
  EXPECT_NE(ds.status().message().find("bad-00000-of-00001.urec: field 'u8' has type 255"), std::string::npos)
      << ds.status().ToString();
}

}  // namespace
}  // namespace unirecord
