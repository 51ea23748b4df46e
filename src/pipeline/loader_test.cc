#include "unirecord/loader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "convert/synthetic_images.h"
#include "pipeline/loader_test_data.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using namespace loader_testing;

std::unique_ptr<Loader> MakeLoader(std::shared_ptr<const Dataset> ds, const LoaderOptions& options) {
  Result<std::unique_ptr<Loader>> loader = Loader::Create(std::move(ds), options);
  EXPECT_TRUE(loader.ok()) << loader.status().ToString();
  return loader.ok() ? std::move(loader).value() : nullptr;
}

// Checks every batch of one epoch against the sampler and the decode layer;
// returns the ids in order.
std::vector<uint64_t> CheckEpoch(Loader& loader, const TestDataset& data, uint64_t epoch) {
  const LoaderOptions& options = loader.options();
  Result<Sampler> sampler = Sampler::Create(kRecords, options.sampler);
  EXPECT_TRUE(sampler.ok());
  sampler->SetEpoch(epoch);
  std::vector<uint64_t> ids;
  const size_t image_bytes = size_t(options.image_size) * options.image_size * 3;
  uint64_t batches = 0;
  for (;;) {
    Result<Batch> batch = loader.Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || batch->empty()) break;
    EXPECT_EQ(batch->index(), batches);
    EXPECT_EQ(batch->epoch(), epoch);
    for (size_t i = 0; i < batch->size(); ++i) {
      const uint64_t id = sampler->At(batches * options.batch_size + i);
      EXPECT_EQ(batch->record_ids()[i], id);
      EXPECT_EQ(batch->labels()[i], int64_t(id % 5));
      const std::vector<uint8_t> expected = ExpectedPixels(data.jpegs[id], id, epoch, options);
      EXPECT_EQ(0, std::memcmp(batch->images() + i * image_bytes, expected.data(), image_bytes))
          << "epoch " << epoch << " batch " << batches << " sample " << i << " record " << id;
      ids.push_back(id);
    }
    ++batches;
  }
  EXPECT_EQ(batches, loader.batches_per_epoch());
  return ids;
}

class LoaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { data_ = new TestDataset(WriteDataset("good")); }
  static void TearDownTestSuite() {
    fs::remove_all(data_->dir);
    delete data_;
  }
  static TestDataset* data_;
};
TestDataset* LoaderTest::data_ = nullptr;

TEST_F(LoaderTest, BatchesEqualSamplerOrderAndDecoderOutput) {
  for (int threads : {1, 4}) {
    for (ImageLayout layout : {ImageLayout::kNHWC, ImageLayout::kNCHW}) {
      SCOPED_TRACE("threads=" + std::to_string(threads) + " nchw=" + std::to_string(layout == ImageLayout::kNCHW));
      LoaderOptions options = SmallOptions();
      options.threads = threads;
      options.layout = layout;
      std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
      ASSERT_NE(loader, nullptr);
      EXPECT_EQ(loader->threads(), threads);
      for (uint64_t epoch : {0, 1}) {
        loader->SetEpoch(epoch);
        const std::vector<uint64_t> ids = CheckEpoch(*loader, *data_, epoch);
        EXPECT_EQ(std::set<uint64_t>(ids.begin(), ids.end()).size(), size_t(kRecords));
      }
      const LoaderStats stats = loader->stats();
      EXPECT_EQ(stats.samples, 2u * kRecords);
      EXPECT_EQ(stats.batches, 2u * loader->batches_per_epoch());
      EXPECT_EQ(stats.skipped, 0u);
      EXPECT_GT(stats.decode_s, 0);
    }
  }
}

TEST_F(LoaderTest, CenterCropSequential) {
  LoaderOptions options = SmallOptions();
  options.transform = LoaderTransform::kCenterCrop;
  options.sampler.order = SampleOrder::kSequential;
  options.threads = 3;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  const std::vector<uint64_t> ids = CheckEpoch(*loader, *data_, 0);
  ASSERT_EQ(ids.size(), size_t(kRecords));
  for (int i = 0; i < kRecords; ++i) EXPECT_EQ(ids[i], uint64_t(i));
}

TEST_F(LoaderTest, RanksGetEqualBatchCountsAndCoverTheDataset) {
  std::set<uint64_t> seen;
  uint64_t batches = 0;
  for (uint32_t rank = 0; rank < 3; ++rank) {
    LoaderOptions options = SmallOptions();
    options.sampler.num_shards = 3;
    options.sampler.shard_id = rank;
    options.threads = 2;
    std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
    ASSERT_NE(loader, nullptr);
    if (rank == 0) batches = loader->batches_per_epoch();
    EXPECT_EQ(loader->batches_per_epoch(), batches);
    uint64_t got = 0;
    for (uint64_t id : CheckEpoch(*loader, *data_, 0)) {
      seen.insert(id);
      ++got;
    }
    EXPECT_EQ(got, 13u);  // ceil(37 / 3), padded by wrapping around
  }
  EXPECT_EQ(seen.size(), size_t(kRecords));
}

TEST_F(LoaderTest, DropLastAndSubset) {
  LoaderOptions options = SmallOptions();
  options.drop_last = true;
  options.subset = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31};
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->batches_per_epoch(), 1u);
  Result<Batch> batch = loader->Next();
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->size(), 8u);
  for (size_t i = 0; i < batch->size(); ++i) {
    EXPECT_NE(std::find(options.subset.begin(), options.subset.end(), batch->record_ids()[i]),
              options.subset.end());
  }
  batch->Release();
  Result<Batch> end = loader->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->empty());
}

// Pixels and ids of the rest of an epoch, batch by batch.
std::vector<std::vector<uint8_t>> Drain(Loader& loader) {
  std::vector<std::vector<uint8_t>> out;
  for (;;) {
    Result<Batch> batch = loader.Next();
    EXPECT_TRUE(batch.ok());
    if (!batch.ok() || batch->empty()) break;
    const size_t bytes = batch->size() * 3 * batch->height() * batch->width();
    std::vector<uint8_t> flat(batch->images(), batch->images() + bytes);
    const uint8_t* ids = reinterpret_cast<const uint8_t*>(batch->record_ids());
    flat.insert(flat.end(), ids, ids + batch->size() * sizeof(uint64_t));
    out.push_back(std::move(flat));
  }
  return out;
}

TEST_F(LoaderTest, SaveAndRestoreMidEpoch) {
  for (SampleOrder order : {SampleOrder::kShuffle, SampleOrder::kBlockShuffle}) {
    LoaderOptions options = SmallOptions();
    options.sampler.order = order;
    options.sampler.block_size = 4;
    options.sampler.window = 8;
    options.threads = 2;
    std::unique_ptr<Loader> original = MakeLoader(OpenDataset(data_->dir), options);
    ASSERT_NE(original, nullptr);
    original->SetEpoch(3);
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(original->Next().ok());
    const std::string saved = original->state().Serialize();
    const std::vector<std::vector<uint8_t>> rest = Drain(*original);
    ASSERT_EQ(rest.size(), 3u);  // 5 batches of 8 cover 37 records

    std::unique_ptr<Loader> resumed = MakeLoader(OpenDataset(data_->dir), options);
    ASSERT_NE(resumed, nullptr);
    Result<SamplerState> state = SamplerState::Parse(saved);
    ASSERT_TRUE(state.ok());
    ASSERT_TRUE(resumed->Restore(*state).ok());
    EXPECT_EQ(resumed->epoch(), 3u);
    EXPECT_EQ(Drain(*resumed), rest);
    EXPECT_EQ(resumed->state().position, uint64_t(kRecords));
  }
}

TEST_F(LoaderTest, RestoreRefusesOtherOptions) {
  LoaderOptions options = SmallOptions();
  std::unique_ptr<Loader> a = MakeLoader(OpenDataset(data_->dir), options);
  options.sampler.num_shards = 2;
  std::unique_ptr<Loader> b = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->Restore(a->state()).code(), StatusCode::kInvalidArgument);
}

TEST_F(LoaderTest, HoldingEveryBufferIsAnErrorNotADeadlock) {
  LoaderOptions options = SmallOptions();
  options.prefetch = 1;  // two buffers
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  Result<Batch> first = loader->Next();
  Result<Batch> second = loader->Next();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(loader->Next().status().code(), StatusCode::kFailedPrecondition);
  first->Release();
  Result<Batch> third = loader->Next();
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->index(), 2u);
}

TEST_F(LoaderTest, SetEpochWhileBatchesAreHeld) {
  LoaderOptions options = SmallOptions();
  options.threads = 2;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  Result<Batch> old = loader->Next();
  ASSERT_TRUE(old.ok());
  const uint64_t old_first = old->record_ids()[0];
  loader->SetEpoch(5);
  EXPECT_EQ(old->record_ids()[0], old_first);  // still valid
  old->Release();
  CheckEpoch(*loader, *data_, 5);
}

TEST_F(LoaderTest, InvalidOptionsAreErrors) {
  std::shared_ptr<const Dataset> ds = OpenDataset(data_->dir);
  LoaderOptions options = SmallOptions();
  options.image_field = "missing";
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kNotFound);
  options = SmallOptions();
  options.image_field = "path";
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
  options = SmallOptions();
  options.label_field = "path";
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
  options = SmallOptions();
  options.batch_size = 0;
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
  options = SmallOptions();
  options.subset = {kRecords};
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kOutOfRange);
  options = SmallOptions();
  options.sampler.shard_id = 4;
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Loader::Create(nullptr, SmallOptions()).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LoaderTest, CpuBatchesRefuseWaitOn) {
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), SmallOptions());
  ASSERT_NE(loader, nullptr);
  Result<Batch> batch = loader->Next();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->device_images(), nullptr);
  EXPECT_EQ(batch->WaitOn(nullptr).code(), StatusCode::kFailedPrecondition);
}

// --- bad records ---------------------------------------------------------

const std::vector<uint64_t> kBadIds = {4, 20};

TEST(LoaderBadRecordTest, RaiseNamesTheRecordAndItsPath) {
  TestDataset data = WriteDataset("raise", kBadIds, EncodeSyntheticPng(16, 16));
  LoaderOptions options = SmallOptions();
  options.sampler.order = SampleOrder::kSequential;
  options.threads = 2;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data.dir), options);
  ASSERT_NE(loader, nullptr);
  Result<Batch> first = loader->Next();  // ids 0..7 hold record 4
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.status().message().find("record 4 (class4/img4.jpg)"), std::string::npos)
      << first.status().message();
  EXPECT_NE(first.status().message().find("PNG"), std::string::npos) << first.status().message();
  EXPECT_FALSE(loader->Next().ok());  // sticky until SetEpoch
  loader->SetEpoch(1);
  EXPECT_FALSE(loader->Next().ok());
  fs::remove_all(data.dir);
}

TEST(LoaderBadRecordTest, SkipReplacesWithTheNextSampleAndCounts) {
  TestDataset data = WriteDataset("skip", kBadIds, "not an image at all");
  LoaderOptions options = SmallOptions();
  options.on_bad_record = OnBadRecord::kSkip;
  options.threads = 3;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data.dir), options);
  ASSERT_NE(loader, nullptr);
  Result<Sampler> sampler = Sampler::Create(kRecords, options.sampler);
  ASSERT_TRUE(sampler.ok());
  uint64_t position = 0, samples = 0;
  for (;;) {
    Result<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (batch->empty()) break;
    for (size_t i = 0; i < batch->size(); ++i, ++position) {
      uint64_t expected = sampler->At(position);
      for (uint64_t next = position + 1; expected == kBadIds[0] || expected == kBadIds[1]; ++next) {
        expected = sampler->At(next % kRecords);
      }
      EXPECT_EQ(batch->record_ids()[i], expected);
      const std::vector<uint8_t> pixels = ExpectedPixels(data.jpegs[expected], expected, 0, options);
      EXPECT_EQ(0, std::memcmp(batch->images() + i * pixels.size(), pixels.data(), pixels.size()));
      ++samples;
    }
  }
  EXPECT_EQ(samples, uint64_t(kRecords));
  const LoaderStats stats = loader->stats();
  EXPECT_EQ(stats.skipped, kBadIds.size());
  EXPECT_NE(stats.last_bad_record.find("record "), std::string::npos);
  fs::remove_all(data.dir);
}

TEST(LoaderBadRecordTest, ChecksumMismatchIsCaught) {
  TestDataset data = WriteDataset("checksum");
  // Flip one byte inside record 9's JPEG data in its shard file.
  const std::string& jpeg = data.jpegs[9];
  bool flipped = false;
  for (const auto& entry : fs::directory_iterator(data.dir)) {
    if (entry.path().extension() != ".urec") continue;
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const size_t at = bytes.find(jpeg);
    if (at == std::string::npos) continue;
    file.seekp(static_cast<std::streamoff>(at + jpeg.size() / 2));
    const char flipped_byte = static_cast<char>(bytes[at + jpeg.size() / 2] ^ 0x5a);
    file.write(&flipped_byte, 1);
    flipped = true;
  }
  ASSERT_TRUE(flipped);
  LoaderOptions options = SmallOptions();
  options.sampler.order = SampleOrder::kSequential;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data.dir), options);
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(loader->Next().ok());  // ids 0..7
  Result<Batch> second = loader->Next();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kCorruption) << second.status().ToString();
  EXPECT_NE(second.status().message().find("record 9"), std::string::npos) << second.status().message();

  options.on_bad_record = OnBadRecord::kSkip;
  std::unique_ptr<Loader> skipping = MakeLoader(OpenDataset(data.dir), options);
  ASSERT_NE(skipping, nullptr);
  ASSERT_TRUE(skipping->Next().ok());
  Result<Batch> replaced = skipping->Next();
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(replaced->record_ids()[1], 10u);  // 9 replaced by the next id
  EXPECT_EQ(replaced->record_ids()[2], 10u);
  fs::remove_all(data.dir);
}

TEST(LoaderBadRecordTest, AllBadIsAnErrorNotAHang) {
  std::vector<uint64_t> all;
  for (int i = 0; i < kRecords; ++i) all.push_back(i);
  TestDataset data = WriteDataset("allbad", all, "garbage");
  LoaderOptions options = SmallOptions();
  options.on_bad_record = OnBadRecord::kSkip;
  options.max_consecutive_bad = 5;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data.dir), options);
  ASSERT_NE(loader, nullptr);
  Result<Batch> batch = loader->Next();
  ASSERT_FALSE(batch.ok());
  EXPECT_NE(batch.status().message().find("5 bad records in a row"), std::string::npos);
  fs::remove_all(data.dir);
}

}  // namespace
}  // namespace unirecord
