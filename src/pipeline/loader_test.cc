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
#include "image/image_testing.h"
#include "pipeline/loader_testing.h"
#include "util/files_testing.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using namespace loader_testing;

std::unique_ptr<Loader> MakeLoader(std::shared_ptr<const Dataset> ds, const LoaderOptions& options) {
  Result<std::unique_ptr<Loader>> loader = Loader::Create(std::move(ds), options);
  EXPECT_TRUE(loader.ok()) << loader.status().ToString();
  return loader.ok() ? std::move(loader).value() : nullptr;
}

// Checks the batches of `epoch` from batch `first` to the epoch's end
// against the sampler and the decode layer, releasing each batch before
// asking for the next; returns the ids in order and the batch count.
std::vector<uint64_t> CheckFrom(Loader& loader, const TestDataset& data, uint64_t epoch, uint64_t first,
                                uint64_t* batches) {
  const LoaderOptions& options = loader.options();
  Result<Sampler> sampler = Sampler::Create(kRecords, options.sampler);
  EXPECT_TRUE(sampler.ok());
  sampler->SetEpoch(epoch);
  std::vector<uint64_t> ids;
  const size_t image_bytes = size_t(options.image_size) * options.image_size * 3;
  uint64_t index = first;
  for (;; ++index) {
    Result<Batch> batch = loader.Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || batch->empty()) break;
    EXPECT_EQ(batch->index(), index);
    EXPECT_EQ(batch->epoch(), epoch);
    for (size_t i = 0; i < batch->size(); ++i) {
      const uint64_t id = sampler->At(index * options.batch_size + i);
      EXPECT_EQ(batch->record_ids()[i], id);
      EXPECT_EQ(batch->labels()[i], int64_t(id % 5));
      if (options.transform == LoaderTransform::kRandomResizedCrop) {
        // crops(): the planned window, in the stored image's pixels.
        Result<ImageInfo> info = ProbeImage(data.jpegs[id]);
        EXPECT_TRUE(info.ok());
        const CropWindow w = PlanRandomResizedCrop(info->width, info->height, options.crop, options.sampler.seed,
                                                   epoch, id);
        const int32_t* crop = batch->crops() + 5 * i;
        EXPECT_EQ(std::vector<int32_t>(crop, crop + 5),
                  (std::vector<int32_t>{w.x, w.y, w.width, w.height, w.flip ? 1 : 0}));
      }
      const std::vector<uint8_t> expected = ExpectedPixels(data.jpegs[id], id, epoch, options);
      EXPECT_EQ(0, std::memcmp(batch->images() + i * image_bytes, expected.data(), image_bytes))
          << "epoch " << epoch << " batch " << index << " sample " << i << " record " << id;
      ids.push_back(id);
    }
  }
  *batches = index - first;
  return ids;
}

// A whole epoch (CheckFrom batch 0): every batch, as many as batches_per_epoch().
std::vector<uint64_t> CheckEpoch(Loader& loader, const TestDataset& data, uint64_t epoch) {
  uint64_t batches = 0;
  std::vector<uint64_t> ids = CheckFrom(loader, data, epoch, 0, &batches);
  EXPECT_EQ(batches, loader.batches_per_epoch());
  return ids;
}

// The rest of `epoch` from batch `first`; returns the batch count.
uint64_t CheckRest(Loader& loader, const TestDataset& data, uint64_t epoch, uint64_t first) {
  uint64_t batches = 0;
  CheckFrom(loader, data, epoch, first, &batches);
  return batches;
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

// Each enum of the options parses back from its name, and another name is
// InvalidArgument quoting it.
template <typename Enum, typename NameFn, typename ParseFn>
void ExpectNamesRoundTrip(std::initializer_list<Enum> values, NameFn name, ParseFn parse, const char* bad_name) {
  for (Enum v : values) {
    Result<Enum> parsed = parse(name(v));
    ASSERT_TRUE(parsed.ok()) << name(v);
    EXPECT_EQ(*parsed, v) << name(v);
  }
  Result<Enum> bad = parse(bad_name);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'" + std::string(bad_name) + "'"), std::string::npos);
}

TEST(OptionNames, EveryEnumParsesItsOwnNamesAndRejectsOthers) {
  ExpectNamesRoundTrip({ImageLayout::kNCHW, ImageLayout::kNHWC}, ImageLayoutName, ParseImageLayout, "nchw");
  EXPECT_STREQ(ImageLayoutName(ImageLayout::kNCHW), "NCHW");
  ExpectNamesRoundTrip({OnBadRecord::kRaise, OnBadRecord::kSkip}, OnBadRecordName, ParseOnBadRecord, "ignore");
  ExpectNamesRoundTrip({DeviceDType::kUint8, DeviceDType::kFloat16, DeviceDType::kFloat32}, DeviceDTypeName,
                       ParseDeviceDType, "float64");
  ExpectNamesRoundTrip({SampleTransform::kRandomResizedCrop, SampleTransform::kCenterCrop}, SampleTransformName,
                       ParseSampleTransform, "resize");
  // urec's names of the two transforms.
  EXPECT_EQ(*ParseSampleTransform("train"), SampleTransform::kRandomResizedCrop);
  EXPECT_EQ(*ParseSampleTransform("val"), SampleTransform::kCenterCrop);
  // "none" is in the table of names (urec show), but no transform the loader runs.
  Result<SampleTransform> none = ParseSampleTransform("none");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("random_resized_crop, center_crop, train, val"), std::string::npos)
      << none.status().ToString();
  ExpectNamesRoundTrip({SampleOrder::kSequential, SampleOrder::kShuffle, SampleOrder::kBlockShuffle},
                       SampleOrderName, ParseSampleOrder, "random");
  ExpectNamesRoundTrip({FieldType::kInt32, FieldType::kInt64, FieldType::kFloat32, FieldType::kFloat64,
                        FieldType::kString, FieldType::kBytes, FieldType::kUint8, FieldType::kInt8,
                        FieldType::kUint16, FieldType::kInt16, FieldType::kUint32, FieldType::kFloat16,
                        FieldType::kBool},
                       FieldTypeName, ParseFieldType, "complex64");
  ExpectNamesRoundTrip({BlobCompression::kNone, BlobCompression::kZstd}, BlobCompressionName, ParseBlobCompression,
                       "lz4");
}

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

// EXIF-rotated files, wider than tall as stored (orientations 5-8 show them
// taller than wide), and the corpus's 1x2 file shown 2x1: with apply_exif
// the loader plans its windows on the displayed size, as the decoder checks
// them.
TEST(LoaderExifTest, AppliesOrientationLikeTheDecoder) {
  std::vector<std::string> jpegs;
  std::vector<std::string> names;
  for (int o = 1; o <= 8; ++o) {
    for (uint64_t seed = 0; seed < 3; ++seed) {
      SyntheticJpegSpec spec;
      spec.width = 120 + int(seed) * 7;
      spec.height = 50;
      spec.seed = seed;
      Result<std::string> jpeg = EncodeSyntheticJpeg(spec);
      ASSERT_TRUE(jpeg.ok());
      jpegs.push_back(unirecord::testing::WithOrientation(*jpeg, o));
      names.push_back("orientation " + std::to_string(o) + " seed " + std::to_string(seed));
    }
  }
  jpegs.push_back(unirecord::testing::ReadCorpusFile("pillow__orientation_rectangle.jpg"));
  names.push_back("pillow__orientation_rectangle.jpg");
  const std::string dir = unirecord::testing::MakeTempDir() + "/exif";
  Result<Schema> schema = Schema::Make({Field::Bytes("image"), Field::Int64("label", /*indexed=*/true)});
  ASSERT_TRUE(schema.ok());
  WriterOptions write_options;
  write_options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(dir, "exif", *schema, write_options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(*schema);
  for (size_t i = 0; i < jpegs.size(); ++i) {
    ASSERT_FALSE(jpegs[i].empty()) << names[i];
    ASSERT_TRUE(record.SetBytes(0, jpegs[i]).ok());
    ASSERT_TRUE(record.SetInt64(1, int64_t(i)).ok());
    ASSERT_TRUE((*writer)->Write(record).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  for (LoaderTransform transform : {LoaderTransform::kRandomResizedCrop, LoaderTransform::kCenterCrop}) {
    LoaderOptions options = SmallOptions();
    options.transform = transform;
    options.decode.apply_exif = true;
    options.sampler.order = SampleOrder::kSequential;
    options.batch_size = 3;
    std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(dir), options);
    ASSERT_NE(loader, nullptr);
    const size_t image_bytes = size_t(options.image_size) * options.image_size * 3;
    size_t seen = 0;
    for (;;) {
      Result<Batch> batch = loader->Next();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      if (batch->empty()) break;
      for (size_t i = 0; i < batch->size(); ++i, ++seen) {
        const uint64_t id = batch->record_ids()[i];
        const std::vector<uint8_t> expected = ExpectedPixels(jpegs[id], id, 0, loader->options());
        EXPECT_EQ(0, std::memcmp(batch->images() + i * image_bytes, expected.data(), image_bytes))
            << names[id] << (transform == LoaderTransform::kCenterCrop ? " center crop" : " random-resized crop");
      }
    }
    EXPECT_EQ(seen, names.size());
  }
  fs::remove_all(dir);
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

// The center crop is ImageDecoder::DecodeCenterCrop's (torchvision's Resize +
// CenterCrop byte for byte; ExpectedPixels uses it for kCenterCrop), not the
// planned window resized; with and without DCT scaling, in both layouts.
TEST_F(LoaderTest, CenterCropEqualsDecodeCenterCrop) {
  size_t differs_from_window_resize = 0;
  for (bool dct_scaling : {false, true}) {
    for (ImageLayout layout : {ImageLayout::kNHWC, ImageLayout::kNCHW}) {
      SCOPED_TRACE("dct_scaling=" + std::to_string(dct_scaling) +
                   " nchw=" + std::to_string(layout == ImageLayout::kNCHW));
      LoaderOptions options = SmallOptions();
      options.transform = LoaderTransform::kCenterCrop;
      options.decode.dct_scaling = dct_scaling;
      options.layout = layout;
      options.threads = 2;
      std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
      ASSERT_NE(loader, nullptr);
      const size_t image_bytes = size_t(options.image_size) * options.image_size * 3;
      size_t samples = 0;
      for (;;) {
        Result<Batch> batch = loader->Next();
        ASSERT_TRUE(batch.ok()) << batch.status().ToString();
        if (batch->empty()) break;
        for (size_t i = 0; i < batch->size(); ++i, ++samples) {
          const uint64_t id = batch->record_ids()[i];
          const uint8_t* got = batch->images() + i * image_bytes;
          const std::vector<uint8_t> want = ExpectedPixels(data_->jpegs[id], id, 0, options);
          ASSERT_EQ(want.size(), image_bytes);
          EXPECT_EQ(0, std::memcmp(got, want.data(), image_bytes)) << "record " << id;
          if (!dct_scaling && layout == ImageLayout::kNHWC) {
            // What the loader did before: the planned window resized.
            Result<JpegInfo> info = ProbeJpeg(data_->jpegs[id]);
            ASSERT_TRUE(info.ok());
            std::vector<uint8_t> window_resized(image_bytes);
            ImageDecoder decoder(options.decode);
            ASSERT_TRUE(decoder
                            .DecodeCropResized(data_->jpegs[id],
                                               PlanCenterCrop(*info, options.image_size, options.resize_shorter),
                                               options.image_size, options.image_size, window_resized.data(),
                                               window_resized.size())
                            .ok());
            if (std::memcmp(got, window_resized.data(), image_bytes) != 0) ++differs_from_window_resize;
          }
        }
      }
      EXPECT_EQ(samples, size_t(kRecords));
    }
  }
  // The test tells the two apart: PlanCenterCrop + DecodeCropResized (the
  // old path) differs from torchvision's result on some of these images.
  EXPECT_GT(differs_from_window_resize, 0u);
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
  const std::vector<uint64_t> subset = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31};
  options.subset = subset;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->batches_per_epoch(), 1u);
  Result<Batch> batch = loader->Next();
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->size(), 8u);
  for (size_t i = 0; i < batch->size(); ++i) {
    EXPECT_NE(std::find(subset.begin(), subset.end(), batch->record_ids()[i]), subset.end());
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

TEST_F(LoaderTest, RestoreRefusesAnotherOrderButTakesOtherRanks) {
  LoaderOptions options = SmallOptions();
  std::unique_ptr<Loader> a = MakeLoader(OpenDataset(data_->dir), options);
  LoaderOptions sequential = options;
  sequential.sampler.order = SampleOrder::kSequential;
  LoaderOptions fewer = options;
  fewer.subset = std::vector<uint64_t>{1, 2, 3};
  LoaderOptions ranks = options;
  ranks.sampler.num_shards = 2;
  ranks.batch_size = 5;
  std::unique_ptr<Loader> b = MakeLoader(OpenDataset(data_->dir), sequential);
  std::unique_ptr<Loader> c = MakeLoader(OpenDataset(data_->dir), fewer);
  std::unique_ptr<Loader> d = MakeLoader(OpenDataset(data_->dir), ranks);
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(b->Restore(a->state()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c->Restore(a->state()).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(d->Restore(a->state()).ok());
}

// A W-rank run stops after some batches; its state, taken on any rank, is
// restored into every rank of a W'-rank run with another batch size, which
// reads the rest of the epoch: together every record, none twice beyond the
// padding each run adds at its end, the pixels those of the decode layer.
TEST_F(LoaderTest, ElasticResumeOnAnotherNumberOfRanks) {
  struct Case {
    uint32_t ranks, batch, batches, new_ranks, new_batch;
  };
  for (const Case& c : {Case{4, 3, 2, 3, 4}, Case{2, 4, 1, 3, 2}, Case{3, 2, 4, 2, 8}, Case{2, 8, 1, 4, 3}}) {
    SCOPED_TRACE(std::to_string(c.ranks) + " -> " + std::to_string(c.new_ranks));
    LoaderOptions options = SmallOptions();
    auto rank_loader = [&](uint32_t ranks, uint32_t batch, uint32_t r) {
      options.batch_size = batch;
      options.sampler.num_shards = ranks;
      options.sampler.shard_id = r;
      return MakeLoader(OpenDataset(data_->dir), options);
    };
    std::vector<uint64_t> seen;
    std::vector<std::string> states;
    for (uint32_t r = 0; r < c.ranks; ++r) {
      std::unique_ptr<Loader> loader = rank_loader(c.ranks, c.batch, r);
      ASSERT_NE(loader, nullptr);
      loader->SetEpoch(3);
      for (uint32_t b = 0; b < c.batches; ++b) {
        Result<Batch> batch = loader->Next();
        ASSERT_TRUE(batch.ok() && !batch->empty());
        seen.insert(seen.end(), batch->record_ids(), batch->record_ids() + batch->size());
      }
      states.push_back(loader->state().Serialize());
    }
    for (const std::string& state : states) EXPECT_EQ(state, states[0]);  // the same on every rank
    const SamplerState state = *SamplerState::Parse(states.back());
    EXPECT_EQ(state.position, uint64_t(c.ranks) * c.batch * c.batches);
    const uint64_t consumed = seen.size();
    for (uint32_t r = 0; r < c.new_ranks; ++r) {
      std::unique_ptr<Loader> loader = rank_loader(c.new_ranks, c.new_batch, r);
      ASSERT_NE(loader, nullptr);
      ASSERT_TRUE(loader->Restore(state).ok());
      const uint64_t per_batch = uint64_t(c.new_ranks) * c.new_batch;
      uint64_t index = (state.position + per_batch - 1) / per_batch;
      for (;; ++index) {
        Result<Batch> batch = loader->Next();
        ASSERT_TRUE(batch.ok()) << batch.status().ToString();
        if (batch->empty()) break;
        EXPECT_EQ(batch->index(), index);
        for (size_t i = 0; i < batch->size(); ++i) {
          const uint64_t id = batch->record_ids()[i];
          const std::vector<uint8_t> expected = ExpectedPixels(data_->jpegs[id], id, 3, options);
          EXPECT_EQ(0, std::memcmp(batch->images() + i * expected.size(), expected.data(), expected.size()));
          seen.push_back(id);
        }
      }
      EXPECT_EQ(index, loader->batches_per_epoch());
    }
    std::multiset<uint64_t> counts(seen.begin(), seen.end());
    EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), size_t(kRecords));
    // Padding: only the second run's (the first stopped mid-epoch).
    const uint64_t rest = kRecords - consumed;
    EXPECT_EQ(seen.size() - kRecords, (rest + c.new_ranks - 1) / c.new_ranks * c.new_ranks - rest);
  }
}

// One small dataset of data_'s first records with the label as `label`.
std::string WriteSmallDataset(const TestDataset& data, const std::string& name, const Field& label) {
  const std::string dir = unirecord::testing::MakeTempDir() + "/" + name;
  Result<Schema> schema = Schema::Make({Field::Bytes("image"), label});
  EXPECT_TRUE(schema.ok());
  WriterOptions write_options;
  write_options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(dir, name, *schema, write_options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(*schema);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(record.SetBytes(0, data.jpegs[i]).ok());
    EXPECT_TRUE((label.type == FieldType::kInt32 ? record.SetInt32(1, int32_t(i)) : record.SetInt64(1, int64_t(i))).ok());
    EXPECT_TRUE((*writer)->Write(record).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

// Two datasets mixed 3:1 over an epoch of 40: the sampler's mixture order,
// exact counts, each dataset's records decoded from its own files.
TEST_F(LoaderTest, MixesDatasetsInTheSamplersOrder) {
  LoaderOptions options = SmallOptions();
  options.sampler.weights = {3, 1};
  options.sampler.epoch_size = 40;
  options.threads = 2;
  const std::string small = WriteSmallDataset(*data_, "small", Field::Int64("label"));
  Result<std::unique_ptr<Loader>> loader =
      Loader::Create({OpenDataset(data_->dir), OpenDataset(small)}, options);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  Result<Sampler> sampler = Sampler::Create(std::vector<uint64_t>{kRecords, 3}, options.sampler);
  ASSERT_TRUE(sampler.ok());
  EXPECT_EQ(sampler->source_counts(), (std::vector<uint64_t>{30, 10}));
  for (uint64_t epoch : {0, 1}) {
    (*loader)->SetEpoch(epoch);
    sampler->SetEpoch(epoch);
    uint64_t position = 0, from_small = 0;
    for (;;) {
      Result<Batch> batch = (*loader)->Next();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      if (batch->empty()) break;
      for (size_t i = 0; i < batch->size(); ++i, ++position) {
        const uint64_t id = batch->record_ids()[i];
        ASSERT_EQ(id, sampler->At(position));
        const uint64_t local = id < kRecords ? id : id - kRecords;
        from_small += id >= kRecords;
        EXPECT_EQ(batch->labels()[i], id < kRecords ? int64_t(id % 5) : int64_t(local));
        const std::vector<uint8_t> expected = ExpectedPixels(data_->jpegs[local], local, epoch, options);
        EXPECT_EQ(0, std::memcmp(batch->images() + i * expected.size(), expected.data(), expected.size()));
      }
    }
    EXPECT_EQ(position, 40u);
    EXPECT_EQ(from_small, 10u);
  }
  fs::remove_all(small);
}

TEST_F(LoaderTest, MixtureRefusesDifferentFieldsAndSubsets) {
  const std::string int32_label = WriteSmallDataset(*data_, "int32", Field::Int32("label"));
  LoaderOptions options = SmallOptions();
  Result<std::unique_ptr<Loader>> refused =
      Loader::Create({OpenDataset(data_->dir), OpenDataset(int32_label)}, options);
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  const std::string message = refused.status().message();
  EXPECT_NE(message.find("field 'label'"), std::string::npos) << message;
  EXPECT_NE(message.find("int32"), std::string::npos) << message;
  EXPECT_NE(message.find("dataset 1 ("), std::string::npos) << message;
  options.label_field = "";  // the labels not read: mixing is fine
  options.path_field = "";
  EXPECT_TRUE(Loader::Create({OpenDataset(data_->dir), OpenDataset(int32_label)}, options).ok());
  options.subset = std::vector<uint64_t>{0, 1};
  EXPECT_EQ(Loader::Create({OpenDataset(data_->dir), OpenDataset(int32_label)}, options).status().code(),
            StatusCode::kInvalidArgument);
  options.subset.reset();
  options.sampler.weights = {1, 1, 1};
  EXPECT_EQ(Loader::Create({OpenDataset(data_->dir), OpenDataset(int32_label)}, options).status().code(),
            StatusCode::kInvalidArgument);
  fs::remove_all(int32_label);
}

TEST_F(LoaderTest, HoldingEveryBufferIsAnErrorNotADeadlock) {
  for (int prefetch : {1, 2, 3}) {
    SCOPED_TRACE("prefetch=" + std::to_string(prefetch));
    LoaderOptions options = SmallOptions();
    options.prefetch = prefetch;  // prefetch + 1 buffers
    options.batch_size = 4;       // 10 batches
    options.threads = 2;
    std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
    ASSERT_NE(loader, nullptr);
    std::vector<Batch> held;
    for (int i = 0; i <= prefetch; ++i) {  // holding fewer than all never fails
      Result<Batch> batch = loader->Next();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      ASSERT_EQ(batch->index(), uint64_t(i));
      held.push_back(std::move(batch).value());
    }
    const std::string all = "holds all " + std::to_string(prefetch + 1) + " batch buffers";
    Result<Batch> refused = loader->Next();
    ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find(all), std::string::npos) << refused.status().message();
    EXPECT_EQ(loader->state().position, uint64_t(prefetch + 1) * 4);  // nothing was skipped
    held[1].Release();  // any buffer will do, not only the oldest
    Result<Batch> next = loader->Next();
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_EQ(next->index(), uint64_t(prefetch + 1));
    held[1] = std::move(next).value();

    // Batches of an earlier epoch count too: hold one across SetEpoch, fill
    // the rest with the new epoch's.
    loader->SetEpoch(1);
    held.resize(1);  // keeps epoch 0's batch 0
    for (int i = 0; i < prefetch; ++i) {
      Result<Batch> batch = loader->Next();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      EXPECT_EQ(batch->epoch(), 1u);
      EXPECT_EQ(batch->index(), uint64_t(i));
      held.push_back(std::move(batch).value());
    }
    refused = loader->Next();
    ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find(all), std::string::npos) << refused.status().message();
    held[0].Release();  // the old epoch's batch
    next = loader->Next();
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_EQ(next->epoch(), 1u);
    EXPECT_EQ(next->index(), uint64_t(prefetch));
  }
}

// A copy of a batch's pixels and ids, to check later that it did not change.
std::vector<uint8_t> Snapshot(const Batch& batch) {
  const size_t bytes = batch.size() * 3 * batch.height() * batch.width();
  std::vector<uint8_t> flat(batch.images(), batch.images() + bytes);
  const uint8_t* ids = reinterpret_cast<const uint8_t*>(batch.record_ids());
  flat.insert(flat.end(), ids, ids + batch.size() * sizeof(uint64_t));
  return flat;
}

// One batch kept while many more than prefetch + 1 go through the pool: the
// others circulate through the free buffers, the kept one is untouched.
TEST_F(LoaderTest, HoldingOneBatchWhileConsumingManyMore) {
  for (int prefetch : {1, 2}) {
    for (int threads : {1, 3}) {
      SCOPED_TRACE("prefetch=" + std::to_string(prefetch) + " threads=" + std::to_string(threads));
      LoaderOptions options = SmallOptions();
      options.prefetch = prefetch;
      options.threads = threads;
      options.batch_size = 4;  // 10 batches per epoch
      std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
      ASSERT_NE(loader, nullptr);
      Result<Batch> kept = loader->Next();
      ASSERT_TRUE(kept.ok()) << kept.status().ToString();
      const std::vector<uint8_t> before = Snapshot(*kept);
      EXPECT_EQ(CheckRest(*loader, *data_, 0, 1), 9u);
      loader->SetEpoch(1);
      EXPECT_EQ(CheckRest(*loader, *data_, 1, 0), 10u);
      EXPECT_EQ(Snapshot(*kept), before);
      // And the kept batch is still what the decode layer makes.
      Result<Sampler> sampler = Sampler::Create(kRecords, options.sampler);
      ASSERT_TRUE(sampler.ok());
      for (size_t i = 0; i < kept->size(); ++i) {
        const uint64_t id = sampler->At(i);
        ASSERT_EQ(kept->record_ids()[i], id);
        const std::vector<uint8_t> expected = ExpectedPixels(data_->jpegs[id], id, 0, options);
        EXPECT_EQ(0, std::memcmp(kept->images() + i * expected.size(), expected.data(), expected.size()));
      }
    }
  }
}

// What a Python `for` loop does: the loop variable holds the previous batch
// while the next is asked for, and still holds the epoch's last batch when
// the next epoch starts. Whatever buffer that last batch sits in, the next
// epoch runs, and the held batch's pixels do not change.
TEST_F(LoaderTest, LastBatchOfAnEpochHeldAcrossSetEpoch) {
  for (size_t batch_size : {4, 8, 9, 12}) {  // 10, 5, 5 and 4 batches: last batch in various buffers
    for (int prefetch : {1, 2}) {
      SCOPED_TRACE("batch_size=" + std::to_string(batch_size) + " prefetch=" + std::to_string(prefetch));
      LoaderOptions options = SmallOptions();
      options.batch_size = batch_size;
      options.prefetch = prefetch;
      options.threads = 2;
      std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
      ASSERT_NE(loader, nullptr);
      Batch last;  // the loop variable
      std::vector<uint8_t> last_pixels;
      for (uint64_t epoch = 0; epoch < 4; ++epoch) {
        loader->SetEpoch(epoch);
        const uint64_t previous_epoch = last.empty() ? 0 : last.epoch();
        Result<Sampler> sampler = Sampler::Create(kRecords, options.sampler);
        ASSERT_TRUE(sampler.ok());
        sampler->SetEpoch(epoch);
        uint64_t batches = 0, position = 0;
        for (;;) {
          Result<Batch> batch = loader->Next();  // `last` still holds the previous batch
          ASSERT_TRUE(batch.ok()) << "epoch " << epoch << " batch " << batches << ": "
                                  << batch.status().ToString();
          if (batch->empty()) break;
          if (batches == 0 && epoch > 0) {
            // The previous epoch's last batch is unchanged now that this
            // epoch's first one has been filled.
            EXPECT_EQ(last.epoch(), previous_epoch);
            EXPECT_EQ(Snapshot(last), last_pixels);
          }
          EXPECT_EQ(batch->index(), batches);
          for (size_t i = 0; i < batch->size(); ++i, ++position) {
            EXPECT_EQ(batch->record_ids()[i], sampler->At(position));
          }
          last = std::move(batch).value();
          ++batches;
        }
        EXPECT_EQ(batches, loader->batches_per_epoch());
        last_pixels = Snapshot(last);
        // Its pixels are still what the decode layer makes for its records.
        const size_t image_bytes = size_t(options.image_size) * options.image_size * 3;
        for (size_t i = 0; i < last.size(); ++i) {
          const uint64_t id = last.record_ids()[i];
          const std::vector<uint8_t> expected = ExpectedPixels(data_->jpegs[id], id, epoch, options);
          EXPECT_EQ(0, std::memcmp(last.images() + i * image_bytes, expected.data(), image_bytes));
        }
      }
      // A Restore while it is held works the same way.
      loader->SetEpoch(4);
      Result<Batch> first = loader->Next();
      ASSERT_TRUE(first.ok());
      const SamplerState state = loader->state();
      first->Release();
      ASSERT_TRUE(loader->Restore(state).ok());
      EXPECT_EQ(CheckRest(*loader, *data_, 4, 1), loader->batches_per_epoch() - 1);
      EXPECT_EQ(Snapshot(last), last_pixels);
    }
  }
}

TEST_F(LoaderTest, SetEpochWhileBatchesAreHeld) {
  LoaderOptions options = SmallOptions();
  options.threads = 2;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  Result<Batch> old = loader->Next();
  ASSERT_TRUE(old.ok());
  const uint64_t old_first = old->record_ids()[0];
  const std::vector<uint8_t> old_pixels = Snapshot(*old);
  loader->SetEpoch(5);
  EXPECT_EQ(old->record_ids()[0], old_first);  // still valid
  CheckEpoch(*loader, *data_, 5);  // while `old` keeps its buffer
  EXPECT_EQ(Snapshot(*old), old_pixels);
  old->Release();
  loader->SetEpoch(6);
  CheckEpoch(*loader, *data_, 6);
}

TEST_F(LoaderTest, InvalidOptionsAreErrors) {
  std::shared_ptr<const Dataset> ds = OpenDataset(data_->dir);
  LoaderOptions options = SmallOptions();
  options.image_field = "missing";
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kKeyNotFound);
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
  options.subset = std::vector<uint64_t>{kRecords};
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kOutOfRange);
  options = SmallOptions();
  options.sampler.shard_id = 4;
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Loader::Create(nullptr, SmallOptions()).status().code(), StatusCode::kInvalidArgument);
  // The per-sample options are SampleDecoderOptions::Check's.
  options = SmallOptions();
  options.crop.ratio_min = 0;
  Result<std::unique_ptr<Loader>> bad_ratio = Loader::Create(ds, options);
  ASSERT_FALSE(bad_ratio.ok());
  EXPECT_EQ(bad_ratio.status().message().rfind("loader: random resized crop: ratio", 0), 0u)
      << bad_ratio.status().message();
  options = SmallOptions();
  options.transform = LoaderTransform::kCenterCrop;
  options.resize_shorter = kImageSize - 1;
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
}

// resize_shorter = 0: CenterCrop(image_size) alone (ExpectedPixels: the
// window of that size, resized only when the image is smaller).
TEST_F(LoaderTest, CenterCropWithoutResize) {
  LoaderOptions options = SmallOptions();
  options.transform = LoaderTransform::kCenterCrop;
  options.resize_shorter = 0;
  options.sampler.order = SampleOrder::kSequential;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(CheckEpoch(*loader, *data_, 0).size(), size_t(kRecords));
}

TEST_F(LoaderTest, ThreadCountsAreBounded) {
  std::shared_ptr<const Dataset> ds = OpenDataset(data_->dir);
  for (int threads : {-1, 100000}) {
    LoaderOptions options = SmallOptions();
    options.threads = threads;
    Result<std::unique_ptr<Loader>> loader = Loader::Create(ds, options);
    ASSERT_FALSE(loader.ok());
    EXPECT_EQ(loader.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(loader.status().message().find("threads " + std::to_string(threads)), std::string::npos)
        << loader.status().message();
  }
}

TEST_F(LoaderTest, OutputSizeAndBuffersAreBoundedByTheDecodeLimits) {
  std::shared_ptr<const Dataset> ds = OpenDataset(data_->dir);
  LoaderOptions options = SmallOptions();
  options.decode.limits.max_pixels = 100 * 100;
  options.image_size = 101;  // 101 x 101 output pixels: over the limit
  Result<std::unique_ptr<Loader>> loader = Loader::Create(ds, options);
  ASSERT_FALSE(loader.ok());
  EXPECT_EQ(loader.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loader.status().message().find("image_size: output size 101x101 is over the limit of 10000 pixels"),
            std::string::npos)
      << loader.status().message();
  options.image_size = 100;
  EXPECT_TRUE(Loader::Create(ds, options).ok());

  options = SmallOptions();
  options.batch_size = SIZE_MAX / 2;  // overflows the buffer size
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
  options = SmallOptions();
  options.prefetch = 1 << 30;
  EXPECT_EQ(Loader::Create(ds, options).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LoaderTest, AnEmptySubsetIsAnEmptyEpoch) {
  LoaderOptions options = SmallOptions();
  options.subset = std::vector<uint64_t>();
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->batches_per_epoch(), 0u);
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    loader->SetEpoch(epoch);
    Result<Batch> end = loader->Next();
    ASSERT_TRUE(end.ok()) << end.status().ToString();
    EXPECT_TRUE(end->empty());
  }
}

TEST_F(LoaderTest, CpuBatchesRefuseWaitOn) {
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), SmallOptions());
  ASSERT_NE(loader, nullptr);
  Result<Batch> batch = loader->Next();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->device_images(), nullptr);
  EXPECT_EQ(batch->WaitOn(nullptr).code(), StatusCode::kFailedPrecondition);
}

// A batch shares the loader's buffer pool: it stays readable, and releases
// cleanly, after the Loader and the caller's Dataset are gone (under ASan in
// scripts/test-asan.sh).
TEST_F(LoaderTest, BatchOutlivesTheLoaderAndTheDataset) {
  const LoaderOptions options = SmallOptions();
  Result<Batch> first = Status::Internal("unset");
  Result<Batch> second = Status::Internal("unset");
  {
    std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data_->dir), options);
    ASSERT_NE(loader, nullptr);
    first = loader->Next();
    second = loader->Next();
  }
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  Result<Sampler> sampler = Sampler::Create(kRecords, options.sampler);
  ASSERT_TRUE(sampler.ok());
  const size_t image_bytes = size_t(options.image_size) * options.image_size * 3;
  for (Batch* batch : {&*first, &*second}) {
    ASSERT_EQ(batch->size(), options.batch_size);
    for (size_t i = 0; i < batch->size(); ++i) {
      const uint64_t id = sampler->At(batch->index() * options.batch_size + i);
      ASSERT_EQ(batch->record_ids()[i], id);
      EXPECT_EQ(batch->labels()[i], int64_t(id % 5));
      const std::vector<uint8_t> expected = ExpectedPixels(data_->jpegs[id], id, 0, options);
      EXPECT_EQ(0, std::memcmp(batch->images() + i * image_bytes, expected.data(), image_bytes))
          << "batch " << batch->index() << " sample " << i;
    }
  }
  first->Release();  // back to a pool whose loader is gone
  EXPECT_TRUE(first->empty());
  EXPECT_EQ(second->index(), 1u);
}

// --- bad records ---------------------------------------------------------

const std::vector<uint64_t> kBadIds = {4, 20};

TEST(LoaderBadRecordTest, RaiseNamesTheRecordAndItsPath) {
  TestDataset data = WriteDataset("raise", kBadIds, "GIF89a" + std::string(64, '\0'));
  LoaderOptions options = SmallOptions();
  options.sampler.order = SampleOrder::kSequential;
  options.threads = 2;
  std::unique_ptr<Loader> loader = MakeLoader(OpenDataset(data.dir), options);
  ASSERT_NE(loader, nullptr);
  Result<Batch> first = loader->Next();  // ids 0..7 hold record 4
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.status().message().find("record 4 (class4/img4.jpg)"), std::string::npos)
      << first.status().message();
  EXPECT_NE(first.status().message().find("not a JPEG or PNG: GIF image"), std::string::npos)
      << first.status().message();
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
