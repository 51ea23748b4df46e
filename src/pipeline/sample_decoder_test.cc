#include "unirecord/sample_decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "image/image_testing.h"
#include "util/files_testing.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

SampleDecoderOptions SmallOptions(SampleTransform transform) {
  SampleDecoderOptions options;
  options.transform = transform;
  options.image_size = 24;
  options.resize_shorter = 30;
  return options;
}

std::string Jpeg(int width, int height) {
  testing::EncodeSpec spec{width, height, testing::Sampling::k420, 90, false, false};
  Result<std::string> jpeg = testing::EncodeJpeg(testing::SyntheticRgb(width, height), spec);
  EXPECT_TRUE(jpeg.ok()) << jpeg.status().ToString();
  return jpeg.ok() ? *jpeg : std::string();
}

// Expects `options` to fail Check() (and SampleDecoder::Create) with
// InvalidArgument naming `what`.
void ExpectRefused(const SampleDecoderOptions& options, const std::string& what) {
  const Status status = options.Check();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << what;
  EXPECT_NE(status.message().find(what), std::string::npos) << status.message();
  EXPECT_FALSE(SampleDecoder::Create(options).ok()) << what;
}

TEST(SampleDecoderOptions, DefaultsAndTheNoResizeCenterCropPass) {
  EXPECT_TRUE(SampleDecoderOptions().Check().ok());
  SampleDecoderOptions options = SmallOptions(SampleTransform::kCenterCrop);
  options.resize_shorter = 0;  // CenterCrop alone
  EXPECT_TRUE(options.Check().ok());
  options.resize_shorter = options.image_size;
  EXPECT_TRUE(options.Check().ok());
  EXPECT_EQ(options.output_bytes(), size_t(24 * 24 * 3));
}

TEST(SampleDecoderOptions, EachBadOptionIsNamed) {
  const double nan = std::nan("");
  SampleDecoderOptions o = SmallOptions(SampleTransform::kRandomResizedCrop);
  o.transform = static_cast<SampleTransform>(7);
  ExpectRefused(o, "unknown transform 7");
  o = SmallOptions(SampleTransform::kRandomResizedCrop);
  o.decode.layout = static_cast<ImageLayout>(9);
  ExpectRefused(o, "unknown layout 9");
  for (int size : {0, -3}) {
    o = SmallOptions(SampleTransform::kRandomResizedCrop);
    o.image_size = size;
    ExpectRefused(o, "image_size: output size " + std::to_string(size));
  }
  o = SmallOptions(SampleTransform::kRandomResizedCrop);
  o.decode.limits.max_pixels = 23 * 23;
  ExpectRefused(o, "image_size: output size 24x24 is over the limit of 529 pixels");
  for (int shorter : {23, -1}) {
    o = SmallOptions(SampleTransform::kCenterCrop);
    o.resize_shorter = shorter;
    ExpectRefused(o, "resize_shorter (" + std::to_string(shorter) + ") must be at least image_size (24)");
  }
  for (auto [lo, hi] : {std::pair{0.0, 1.0}, {0.5, 0.4}, {0.5, 1.5}, {nan, 1.0}, {-0.1, 0.5}}) {
    o = SmallOptions(SampleTransform::kRandomResizedCrop);
    o.crop.scale_min = lo;
    o.crop.scale_max = hi;
    ExpectRefused(o, "scale");
  }
  for (auto [lo, hi] : {std::pair{0.0, 1.0}, {2.0, 1.0}, {1.0, HUGE_VAL}, {nan, 1.0}}) {
    o = SmallOptions(SampleTransform::kRandomResizedCrop);
    o.crop.ratio_min = lo;
    o.crop.ratio_max = hi;
    ExpectRefused(o, "ratio");
  }
  for (double p : {-0.5, 1.01, nan}) {
    o = SmallOptions(SampleTransform::kRandomResizedCrop);
    o.crop.flip_probability = p;
    ExpectRefused(o, "flip probability");
  }
  // The random crop's parameters do not matter to a center crop.
  o = SmallOptions(SampleTransform::kCenterCrop);
  o.crop.scale_min = nan;
  EXPECT_TRUE(o.Check().ok());
}

// Plan() is the image layer's planner on the size windows refer to: the
// stored size, or with apply_exif the displayed one (orientations 5..8 swap
// it); the decoder accepts every window it plans (issue 11's EXIF bug).
TEST(SampleDecoder, PlansOnTheDisplayedSizeWithApplyExif) {
  struct Case {
    std::string name, jpeg;
  };
  std::vector<Case> cases;
  const std::string stored = Jpeg(120, 50);
  for (int o = 1; o <= 8; ++o) cases.push_back({"orientation " + std::to_string(o), testing::WithOrientation(stored, o)});
  for (const fs::directory_entry& entry : fs::directory_iterator(UNIRECORD_TEST_DATA_DIR "/jpeg-conformance")) {
    const std::string name = entry.path().filename().string();
    if (name.find("orientation") != std::string::npos) cases.push_back({name, testing::ReadCorpusFile(name)});
  }
  ASSERT_GE(cases.size(), 16u);
  size_t swapped = 0;
  for (SampleTransform transform : {SampleTransform::kRandomResizedCrop, SampleTransform::kCenterCrop}) {
    for (int resize_shorter : {30, 0}) {
      if (transform == SampleTransform::kRandomResizedCrop && resize_shorter == 0) continue;
      for (bool apply_exif : {false, true}) {
        SampleDecoderOptions options = SmallOptions(transform);
        options.resize_shorter = resize_shorter;
        options.decode.apply_exif = apply_exif;
        Result<std::unique_ptr<SampleDecoder>> decoder = SampleDecoder::Create(options);
        ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
        std::vector<uint8_t> out(options.output_bytes());
        for (const Case& c : cases) {
          SCOPED_TRACE(c.name + " exif=" + std::to_string(apply_exif) + " resize=" + std::to_string(resize_shorter));
          Result<ImageInfo> info = ProbeImage(c.jpeg);
          ASSERT_TRUE(info.ok()) << info.status().ToString();
          const bool swap = apply_exif && info->exif_orientation >= 5;
          const int w = swap ? info->height : info->width;
          const int h = swap ? info->width : info->height;
          swapped += swap && w != h;
          for (uint64_t id = 0; id < 4; ++id) {
            const CropWindow got = (*decoder)->Plan(*info, 5, 2, id);
            CropWindow want;
            if (transform == SampleTransform::kRandomResizedCrop) {
              want = PlanRandomResizedCrop(w, h, options.crop, 5, 2, id);
            } else {
              want = PlanCenterCrop(w, h, 24, resize_shorter > 0 ? 30 : std::max(std::min(w, h), 24));
            }
            EXPECT_EQ(got.x, want.x);
            EXPECT_EQ(got.y, want.y);
            EXPECT_EQ(got.width, want.width);
            EXPECT_EQ(got.height, want.height);
            EXPECT_EQ(got.flip, want.flip);
            EXPECT_LE(got.x + got.width, w);
            EXPECT_LE(got.y + got.height, h);
            const Status decoded = (*decoder)->Decode(c.jpeg, 5, 2, id, out.data(), out.size());
            EXPECT_TRUE(decoded.ok()) << decoded.ToString();
          }
        }
      }
    }
  }
  EXPECT_GT(swapped, 0u);  // the cases tell stored and displayed sizes apart
}

// Decode() is the decode layer's output for the planned window (or
// DecodeCenterCrop), written in the layout asked for.
TEST(SampleDecoder, DecodeEqualsTheDecodeLayerInEitherLayout) {
  const std::vector<std::string> jpegs = {Jpeg(97, 61), Jpeg(40, 130), Jpeg(24, 24),
                                          testing::WithOrientation(Jpeg(90, 45), 6)};
  for (SampleTransform transform : {SampleTransform::kRandomResizedCrop, SampleTransform::kCenterCrop}) {
    for (int resize_shorter : {30, 0}) {
      for (bool apply_exif : {false, true}) {
        SampleDecoderOptions options = SmallOptions(transform);
        options.resize_shorter = resize_shorter;
        options.decode.apply_exif = apply_exif;
        ImageDecoder reference(options.decode);
        SampleDecoderOptions planar = options;
        planar.decode.layout = ImageLayout::kNCHW;
        Result<std::unique_ptr<SampleDecoder>> hwc_decoder = SampleDecoder::Create(options);
        Result<std::unique_ptr<SampleDecoder>> chw_decoder = SampleDecoder::Create(planar);
        ASSERT_TRUE(hwc_decoder.ok() && chw_decoder.ok());
        const size_t pixels = 24 * 24;
        std::vector<uint8_t> want(pixels * 3), hwc(want.size()), chw(want.size()), planes(want.size());
        for (size_t k = 0; k < jpegs.size(); ++k) {
          SCOPED_TRACE("image " + std::to_string(k) + " transform " + std::to_string(int(transform)) +
                       " resize " + std::to_string(resize_shorter) + " exif " + std::to_string(apply_exif));
          Result<ImageInfo> info = ProbeImage(jpegs[k]);
          ASSERT_TRUE(info.ok());
          const uint64_t id = 10 + k;
          if (transform == SampleTransform::kCenterCrop && resize_shorter > 0) {
            ASSERT_TRUE(reference.DecodeCenterCrop(jpegs[k], 24, 30, want.data(), want.size()).ok());
          } else {
            const CropWindow window = (*hwc_decoder)->Plan(*info, 3, 1, id);
            ASSERT_TRUE(reference.DecodeCropResized(jpegs[k], window, 24, 24, want.data(), want.size()).ok());
          }
          ASSERT_TRUE((*hwc_decoder)->Decode(jpegs[k], 3, 1, id, hwc.data(), hwc.size()).ok());
          ASSERT_TRUE((*chw_decoder)->Decode(jpegs[k], 3, 1, id, chw.data(), chw.size()).ok());
          EXPECT_EQ(hwc, want);
          for (size_t p = 0; p < pixels; ++p) {
            for (size_t c = 0; c < 3; ++c) planes[c * pixels + p] = want[p * 3 + c];
          }
          EXPECT_EQ(chw, planes);
        }
        // Too small a buffer is an error, not an overrun.
        EXPECT_EQ((*hwc_decoder)->Decode(jpegs[0], 3, 1, 0, hwc.data(), hwc.size() - 1).code(),
                  StatusCode::kInvalidArgument);
      }
    }
  }
}

class SampleSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = unirecord::testing::MakeTempDir() + "/samples";
    Result<Schema> schema =
        Schema::Make({Field::Bytes("image"), Field::Int32("label"), Field::Int64("indexed_label", /*indexed=*/true),
                      Field::String("path"), Field::Int64("size")});
    ASSERT_TRUE(schema.ok());
    WriterOptions options;
    options.sync = false;
    Result<std::unique_ptr<Writer>> writer = Writer::Create(dir_, "samples", *schema, options);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    jpegs_ = {Jpeg(50, 40), "GIF89a0000000000000000", Jpeg(33, 60)};
    RecordBuilder record(*schema);
    for (size_t i = 0; i < jpegs_.size(); ++i) {
      ASSERT_TRUE(record.SetBytes(0, jpegs_[i]).ok());
      ASSERT_TRUE(record.SetInt32(1, int32_t(100 + i)).ok());
      ASSERT_TRUE(record.SetInt64(2, int64_t(200 + i)).ok());
      ASSERT_TRUE(record.SetString(3, "img" + std::to_string(i) + ".jpg").ok());
      ASSERT_TRUE(record.SetInt64(4, 0).ok());
      ASSERT_TRUE((*writer)->Write(record).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
    Result<std::shared_ptr<Dataset>> ds = Dataset::Open(dir_);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = *ds;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
  std::vector<std::string> jpegs_;
  std::shared_ptr<const Dataset> dataset_;
};

TEST_F(SampleSourceTest, FieldsAreCheckedOnce) {
  EXPECT_EQ(SampleSource::Create(dataset_, {"missing", "label", "path"}).status().code(), StatusCode::kKeyNotFound);
  EXPECT_EQ(SampleSource::Create(dataset_, {"image", "missing", "path"}).status().code(), StatusCode::kKeyNotFound);
  Result<SampleSource> not_bytes = SampleSource::Create(dataset_, {"path", "label", "path"});
  ASSERT_FALSE(not_bytes.ok());
  EXPECT_EQ(not_bytes.status().message(), "image field 'path' is not a bytes field");
  Result<SampleSource> not_int = SampleSource::Create(dataset_, {"image", "path", "path"});
  ASSERT_FALSE(not_int.ok());
  EXPECT_EQ(not_int.status().message(), "label field 'path' is not an int32/int64 scalar");
  EXPECT_EQ(SampleSource::Create(nullptr, {}).status().code(), StatusCode::kInvalidArgument);
  // A path field that is absent or not a string is simply not named.
  Result<SampleSource> unnamed = SampleSource::Create(dataset_, {"image", "", "size"});
  ASSERT_TRUE(unnamed.ok());
  EXPECT_FALSE(unnamed->has_labels());
  EXPECT_EQ(unnamed->Describe(1), "record 1");
}

TEST_F(SampleSourceTest, DecodeRecordReadsTheLabelAndNamesTheRecordInErrors) {
  Result<std::unique_ptr<SampleDecoder>> decoder = SampleDecoder::Create(SmallOptions(SampleTransform::kCenterCrop));
  ASSERT_TRUE(decoder.ok());
  std::vector<uint8_t> out(24 * 24 * 3), want(out.size());
  for (const char* label_field : {"label", "indexed_label"}) {
    Result<SampleSource> source = SampleSource::Create(dataset_, {"image", label_field, "path"}, dir_);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_TRUE(source->has_labels());
    SampleTimes times;
    int64_t label = -1;
    ASSERT_TRUE((*decoder)->DecodeRecord(*source, 2, 0, 0, out.data(), out.size(), &label, &times).ok());
    EXPECT_EQ(label, std::string(label_field) == "label" ? 102 : 202);
    ASSERT_TRUE((*decoder)->Decode(jpegs_[2], 0, 0, 2, want.data(), want.size()).ok());
    EXPECT_EQ(out, want);
    EXPECT_GT(times.decode_s, 0);

    const Status bad = (*decoder)->DecodeRecord(*source, 1, 0, 0, out.data(), out.size(), &label);
    EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(bad.message().rfind("dataset " + dir_ + ": record 1 (img1.jpg): not a JPEG or PNG: GIF image", 0), 0u)
        << bad.message();
    const Status missing = (*decoder)->DecodeRecord(*source, 3, 0, 0, out.data(), out.size(), &label);
    EXPECT_FALSE(missing.ok());
    EXPECT_EQ(missing.message().rfind("dataset " + dir_ + ": record 3: ", 0), 0u) << missing.message();
  }
  // Without a label field the label is left alone; unnamed sources start with the record.
  Result<SampleSource> unlabelled = SampleSource::Create(dataset_, {"image", "", "path"});
  ASSERT_TRUE(unlabelled.ok());
  int64_t label = 42;
  ASSERT_TRUE((*decoder)->DecodeRecord(*unlabelled, 0, 0, 0, out.data(), out.size(), &label).ok());
  EXPECT_EQ(label, 42);
  EXPECT_EQ(unlabelled->Describe(1), "record 1 (img1.jpg)");
}

}  // namespace
}  // namespace unirecord
