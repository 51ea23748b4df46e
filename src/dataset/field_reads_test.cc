// Reads of some fields (field_reads.h, through ShardAccess::Get): only
// their sources, blobs and pages are read and verified; a damaged byte of
// another field goes unread, one of a field read is Corruption as before.
#include "dataset/field_reads.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dataset/shard_access.h"
#include "dataset/dataset_testing.h"
#include "unirecord/dataset.h"
#include "unirecord/fields.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

using dataset_internal::FieldReads;
using dataset_internal::ShardAccess;

constexpr uint64_t kRecords = 30;
constexpr uint64_t kDamaged = 9;  // its image blob (in the shard), its thumb (in the column file)

std::string Thumb(uint64_t id) { return "<the thumbnail of record " + std::to_string(id) + ">"; }

// Flips a byte in the middle of the first copy of `value` in `path`.
void Damage(const std::string& path, const std::string& value) {
  std::string bytes = testing::ReadBytes(path);
  const size_t at = bytes.find(value);
  ASSERT_NE(at, std::string::npos) << path;
  ASSERT_EQ(bytes.find(value, at + 1), std::string::npos) << "not unique in " << path;
  bytes[at + value.size() / 2] ^= 0x5a;
  testing::WriteBytes(path, bytes);
}

class FieldReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::WriteSample(dir_.path(), "train", kRecords, testing::SmallPages(1)).ok());
    AddFieldsOptions options;
    options.writer.sync = false;
    options.commit.sync = false;
    const Schema added = *Schema::Make({Field::Bytes("thumb"), Field::Int32("rank")});
    auto written = AddFields(dir_ / "train", added, [](const Dataset&, uint64_t id, RecordBuilder& out) {
      UREC_RETURN_IF_ERROR(out.SetBytesOwned(0, Thumb(id)));
      return out.SetInt32(1, static_cast<int32_t>(id) * 2);
    }, options);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    Open();
  }

  void Open() {
    auto opened = Dataset::Open(dir_ / "train");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    dataset_ = *opened;
  }

  std::shared_ptr<const FieldReads> Reads(const std::vector<std::string>& names) const {
    std::vector<size_t> fields;
    for (const std::string& name : names) fields.push_back(*dataset_->schema().FindField(name));
    auto reads = ShardAccess::Reads(dataset_, fields);
    EXPECT_TRUE(reads.ok()) << reads.status().ToString();
    return *reads;
  }

  // Every record read for `names`: the code of the first failure (kOk: none) and its message.
  Status ReadAll(const std::vector<std::string>& names) const {
    const std::shared_ptr<const FieldReads> reads = Reads(names);
    for (uint64_t id = 0; id < kRecords; ++id) {
      UREC_RETURN_IF_ERROR(ShardAccess::Get(reads, id).status());
    }
    return Status::OK();
  }

  std::string ShardFile() const { return dataset_->shards()[0].path; }
  std::string ColumnFile() const { return dataset_->segments()[0].field_groups[0].paths[0]; }

  testing::ScratchDir dir_;
  std::shared_ptr<Dataset> dataset_;
};

TEST_F(FieldReadsTest, ARecordHoldsTheFieldsReadAndRefusesTheOthers) {
  const std::shared_ptr<const FieldReads> reads = Reads({"label", "path", "rank"});
  for (uint64_t id = 0; id < kRecords; ++id) {
    auto record = ShardAccess::Get(reads, id);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    const testing::SampleValues v = testing::SampleRecord(id);
    EXPECT_EQ(*record->GetInt64("label"), v.label);
    EXPECT_EQ(*record->GetString("path"), v.path);
    EXPECT_EQ(*record->GetInt32("rank"), static_cast<int32_t>(id) * 2);
    // Another field of the shard, of the column file, in a blob, on a page.
    for (const char* other : {"image", "thumb"}) {
      Result<std::string_view> refused = record->GetBytes(other);
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
      EXPECT_NE(refused.status().message().find(std::string("field '") + other + "' was not read"),
                std::string::npos) << refused.status().message();
      EXPECT_NE(refused.status().message().find("'label', 'path', 'rank'"), std::string::npos);
    }
    EXPECT_EQ(record->GetFloat64("ratio").status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(record->GetArray("mean").status().code(), StatusCode::kFailedPrecondition);
  }
}

TEST_F(FieldReadsTest, ADamagedBlobIsNotReadForOtherFields) {
  Damage(ShardFile(), testing::SampleRecord(kDamaged).image);
  Open();
  ASSERT_TRUE(dataset_->options().verify_checksums);
  EXPECT_TRUE(ReadAll({"label"}).ok());  // the record table alone
  EXPECT_TRUE(ReadAll({"label", "path", "mean", "mask", "thumb", "rank"}).ok());
  for (const Status& status : {ReadAll({"image"}), ReadAll({"label", "image"}), dataset_->Get(kDamaged).status()}) {
    EXPECT_EQ(status.code(), StatusCode::kCorruption) << status.ToString();
    EXPECT_NE(status.message().find(ShardFile()), std::string::npos) << status.message();
  }
}

TEST_F(FieldReadsTest, AColumnFileIsReadOnlyForItsFields) {
  Damage(ColumnFile(), Thumb(kDamaged));
  Open();
  EXPECT_TRUE(ReadAll({"image", "label", "path", "mean", "mask"}).ok());
  EXPECT_TRUE(ReadAll({"rank"}).ok());  // the column file's page, not its blob
  for (const Status& status : {ReadAll({"thumb"}), ReadAll({"label", "thumb"}), dataset_->Get(kDamaged).status()}) {
    EXPECT_EQ(status.code(), StatusCode::kCorruption) << status.ToString();
    EXPECT_NE(status.message().find(ColumnFile()), std::string::npos) << status.message();
  }
}

TEST_F(FieldReadsTest, AFieldPastTheSchemaIsRefused) {
  auto reads = ShardAccess::Reads(dataset_, {dataset_->schema().num_fields()});
  ASSERT_FALSE(reads.ok());
  EXPECT_EQ(reads.status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace unirecord
