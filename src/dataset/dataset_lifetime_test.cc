// Records and Blobs keep their Dataset alive: views taken from them stay
// valid after the caller's last reference to the Dataset is gone. Run under
// AddressSanitizer by scripts/test-asan.sh, where a dangling view is an
// error, not a lucky read.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "dataset/dataset_testing.h"
#include "unirecord/dataset.h"

namespace unirecord {
namespace {

using testing::SampleRecord;
using testing::SmallPages;
using testing::WriteSample;

class DatasetLifetimeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(WriteSample(dir_.path(), "life", kRecords, SmallPages(1)).ok()); }

  // The dataset, opened and dropped inside the expression as in
  // `Dataset::Open(dir).value()->GetBlob(...)`.
  std::shared_ptr<Dataset> Open() {
    Result<std::shared_ptr<Dataset>> ds = Dataset::Open(dir_.path());
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }

  static constexpr uint64_t kRecords = 30;
  testing::ScratchDir dir_;
};

TEST_F(DatasetLifetimeTest, BlobOutlivesTheDataset) {
  const uint64_t id = 5;
  Result<Blob> image = Open()->GetBlob(id, 0);  // the only Dataset reference dies here
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  ASSERT_TRUE(image->zero_copy());
  EXPECT_EQ(image->data(), SampleRecord(id).image);
  // The zstd field: an owned buffer, equally valid.
  Result<Blob> mask = Open()->GetBlob(id, 8);
  ASSERT_TRUE(mask.ok()) << mask.status().ToString();
  EXPECT_FALSE(mask->zero_copy());
  EXPECT_EQ(mask->data(), SampleRecord(id).mask);
}

TEST_F(DatasetLifetimeTest, RecordOutlivesTheDataset) {
  const uint64_t id = 11;
  Result<Record> record = Open()->Get(id);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  const testing::SampleValues v = SampleRecord(id);
  EXPECT_EQ(*record->GetBytes("image"), v.image);
  EXPECT_EQ(*record->GetString("path"), v.path);
  EXPECT_EQ(*record->GetInt64("big"), v.big);
  EXPECT_EQ(record->schema().field(2).name, "path");
  Result<ArrayView> mean = record->GetArray("mean");
  ASSERT_TRUE(mean.ok());
  ASSERT_NE(mean->as<float>(), nullptr);
  EXPECT_EQ(mean->as<float>()[1], v.mean[1]);
  EXPECT_EQ(mean->shape[0], 3);
}

TEST_F(DatasetLifetimeTest, MovedViewsKeepTheDatasetAndResetTheSource) {
  std::shared_ptr<Dataset> ds = Open();
  std::weak_ptr<Dataset> watch = ds;
  Result<Blob> blob = ds->GetBlob(3, 0);
  ASSERT_TRUE(blob.ok());
  ds.reset();
  EXPECT_FALSE(watch.expired()) << "the blob holds the dataset";
  Blob moved = std::move(*blob);
  EXPECT_EQ(moved.data(), SampleRecord(3).image);
  moved = Blob();
  blob = Blob();
  EXPECT_TRUE(watch.expired()) << "the last view gone, the dataset is closed";
}

}  // namespace
}  // namespace unirecord
