// CompactDataset: a dataset of several segments (and a grown class list)
// rewritten as one segment holds the same records, value for value, in a
// new version, while the version before stays readable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "dataset/dataset_testing.h"
#include "unirecord/dataset.h"
#include "unirecord/fields.h"
#include "unirecord/versions.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

Schema EveryTypeSchema() {
  std::vector<Field> fields = {Field::Bytes("image"), Field::Bytes("mask", BlobCompression::kZstd),
                               Field::String("path"), Field::Int64("label", /*indexed=*/true),
                               Field::Int32("width"), Field::Float32("score", /*indexed=*/true),
                               Field::Float64("ratio")};
  for (FieldType t : {FieldType::kUint8, FieldType::kInt8, FieldType::kUint16, FieldType::kInt16, FieldType::kUint32,
                      FieldType::kFloat16, FieldType::kBool}) {
    fields.push_back(Field::Array(std::string("scalar_") + FieldTypeName(t), t, {}));
  }
  fields.push_back(Field::Array("grid", FieldType::kInt32, {2, 2}));
  fields.push_back(Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}));
  Field tags = Field::Array("tags", FieldType::kInt64, {kVariableDim});
  tags.indexed = true;
  fields.push_back(tags);
  return Schema::Make(fields).value();
}

// Writes records [begin, end) (values a pure function of the id) to `name`.
Status WriteRange(const std::string& dir, uint64_t begin, uint64_t end, bool append, const std::string& classes) {
  WriterOptions options = testing::SmallPages(0);
  options.append = append;
  options.sync = false;
  options.target_shard_bytes = 4096;  // several shards per segment
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, "train", EveryTypeSchema(), options));
  UREC_RETURN_IF_ERROR(writer->SetMetadata("classes", classes));
  RecordBuilder r(writer->schema());
  for (uint64_t k = begin; k < end; ++k) {
    std::mt19937_64 rng(k);
    const std::string image(k % 5 == 0 ? 0 : 50 + rng() % 400, static_cast<char>(k));
    UREC_RETURN_IF_ERROR(r.SetBytes("image", image));
    UREC_RETURN_IF_ERROR(r.SetBytes("mask", std::string(100 + k % 50, static_cast<char>('a' + k % 3))));
    UREC_RETURN_IF_ERROR(r.SetString("path", "img_" + std::to_string(k)));
    UREC_RETURN_IF_ERROR(r.SetInt64("label", static_cast<int64_t>(rng() % 7) - 3));
    UREC_RETURN_IF_ERROR(r.SetInt32("width", static_cast<int32_t>(rng())));
    UREC_RETURN_IF_ERROR(r.SetFloat32("score", k == 3 ? -NAN : static_cast<float>(rng() % 1000) / 7.0f));
    UREC_RETURN_IF_ERROR(r.SetFloat64("ratio", std::ldexp(static_cast<double>(rng()), -70)));
    for (FieldType t : {FieldType::kUint8, FieldType::kInt8, FieldType::kUint16, FieldType::kInt16,
                        FieldType::kUint32, FieldType::kFloat16, FieldType::kBool}) {
      uint64_t bits = rng();
      if (t == FieldType::kBool) bits &= 1;
      if (t == FieldType::kFloat16) bits = k == 4 ? 0xfe00 : (bits & 0xbbff);  // a -NaN, else finite
      UREC_RETURN_IF_ERROR(r.SetValues(std::string("scalar_") + FieldTypeName(t), t, &bits, {}));
    }
    const int32_t grid[4] = {static_cast<int32_t>(k), -1, 2, static_cast<int32_t>(rng())};
    UREC_RETURN_IF_ERROR(r.SetArray("grid", grid, 4));
    std::vector<float> boxes(4 * (k % 4));
    for (float& b : boxes) b = static_cast<float>(rng() % 100);
    UREC_RETURN_IF_ERROR(r.SetValues("boxes", FieldType::kFloat32, boxes.data(), {static_cast<int64_t>(k % 4), 4}));
    std::vector<int64_t> tags(k % 3);
    for (int64_t& t : tags) t = static_cast<int64_t>(rng() % 5);
    UREC_RETURN_IF_ERROR(r.SetValues("tags", FieldType::kInt64, tags.data(), {static_cast<int64_t>(tags.size())}));
    UREC_RETURN_IF_ERROR(writer->Write(r));
  }
  return writer->Finish();
}

TEST(CompactTest, SeveralSegmentsBecomeOneWithTheSameRecords) {
  testing::ScratchDir dir;
  ASSERT_TRUE(WriteRange(dir.path(), 0, 40, false, "a\nb").ok());
  ASSERT_TRUE(WriteRange(dir.path(), 40, 55, true, "a\nb").ok());
  ASSERT_TRUE(WriteRange(dir.path(), 55, 90, true, "a\nb\nc").ok());
  auto before = Dataset::Open(dir.path());
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_EQ((*before)->segments().size(), 3u);
  ASSERT_GT((*before)->num_files(), 3u);
  const std::vector<std::string> expected = *testing::DumpRecords(**before);
  ASSERT_EQ(expected.size(), 90u);

  CompactOptions options;
  options.num_shards = 2;
  options.sync = false;
  auto compacted = CompactDataset(dir / "train", options);
  ASSERT_TRUE(compacted.ok()) << compacted.status().ToString();
  EXPECT_EQ(compacted->records, 90u);
  auto after = Dataset::Open(dir.path());
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ((*after)->segments().size(), 1u);
  EXPECT_EQ((*after)->num_files(), 2u);
  EXPECT_EQ((*after)->version(), 4u);
  EXPECT_EQ((*after)->schema(), (*before)->schema());
  EXPECT_EQ((*after)->metadata(), (*before)->metadata());  // the grown class list
  EXPECT_EQ(*testing::DumpRecords(**after), expected);
  EXPECT_EQ(*(*after)->GetIndexedInt64(17, *(*after)->schema().FindField("label")),
            *(*before)->GetIndexedInt64(17, *(*before)->schema().FindField("label")));
  // The version before is kept and reads as it did, until collected.
  DatasetOptions v3;
  v3.version = 3;
  auto kept = Dataset::Open(dir.path(), v3);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(*testing::DumpRecords(**kept), expected);
  GcOptions gc;
  gc.keep_last = 1;
  ASSERT_TRUE(CollectGarbage(dir / "train", gc).ok());
  EXPECT_EQ(*testing::DumpRecords(**Dataset::Open(dir.path())), expected);

  // By size (the default cut) it is the same records again.
  CompactOptions by_size;
  by_size.target_shard_bytes = 2048;
  by_size.sync = false;
  ASSERT_TRUE(CompactDataset(dir / "train", by_size).ok());
  auto again = Dataset::Open(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_GT((*again)->num_files(), 2u);
  EXPECT_EQ(*testing::DumpRecords(**again), expected);
}

TEST(CompactTest, FieldGroupsAndDropsAreFoldedIntoTheShards) {
  testing::ScratchDir dir;
  ASSERT_TRUE(WriteRange(dir.path(), 0, 30, false, "a").ok());
  ASSERT_TRUE(WriteRange(dir.path(), 30, 50, true, "a").ok());
  const Schema added = Schema::Make({Field::Float32("quality", /*indexed=*/true), Field::String("caption")}).value();
  auto add = AddFields(dir / "train", added, [](const Dataset&, uint64_t id, RecordBuilder& out) -> Status {
    UREC_RETURN_IF_ERROR(out.SetFloat32(0, static_cast<float>(id) / 4));
    return out.SetString(1, "caption " + std::to_string(id));
  });
  ASSERT_TRUE(add.ok()) << add.status().ToString();
  ASSERT_TRUE(DropFields(dir / "train", {"path", "grid"}).ok());
  auto before = Dataset::Open(dir.path());
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_FALSE((*before)->segments()[0].field_groups.empty());
  const std::vector<std::string> expected = *testing::DumpRecords(**before);
  CompactOptions options;
  options.sync = false;
  ASSERT_TRUE(CompactDataset(dir / "train", options).ok());
  auto after = Dataset::Open(dir.path());
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ((*after)->segments().size(), 1u);
  EXPECT_TRUE((*after)->segments()[0].field_groups.empty());
  EXPECT_TRUE((*after)->segments()[0].dropped_fields.empty());
  EXPECT_EQ((*after)->schema(), (*before)->schema());  // without path and grid, with quality and caption
  EXPECT_FALSE((*after)->schema().FindField("path").ok());
  EXPECT_EQ(*testing::DumpRecords(**after), expected);
}

TEST(CompactTest, RefusesWhatItCannotDo) {
  testing::ScratchDir dir;
  CompactOptions both;
  both.num_shards = 2;
  both.target_shard_bytes = 1 << 20;
  EXPECT_EQ(CompactDataset(dir / "train", both).status().code(), StatusCode::kInvalidArgument);
  auto missing = CompactDataset(dir / "train");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("compact: "), std::string::npos) << missing.status().message();
}

}  // namespace
}  // namespace unirecord
