#include "pipeline/loader_testing.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "convert/synthetic_images.h"
#include "util/files_testing.h"
#include "unirecord/writer.h"

namespace unirecord::loader_testing {

TestDataset WriteDataset(const std::string& name, const std::vector<uint64_t>& bad,
                         const std::string& replacement) {
  TestDataset data;
  // A directory of this process's own: CTest runs test cases in parallel.
  data.dir = unirecord::testing::MakeTempDir() + "/" + name;
  Result<Schema> schema = Schema::Make(
      {Field::Bytes("image"), Field::Int64("label", /*indexed=*/true), Field::String("path")});
  EXPECT_TRUE(schema.ok());
  WriterOptions options;
  options.num_shards = 2;
  options.expected_records = kRecords;
  options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(data.dir, "test", *schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  if (!writer.ok()) return data;
  RecordBuilder record(*schema);
  for (int i = 0; i < kRecords; ++i) {
    SyntheticJpegSpec spec;
    spec.width = 40 + (i * 13) % 90;
    spec.height = 36 + (i * 29) % 80;
    spec.seed = static_cast<uint64_t>(i);
    spec.sampling = i % 3 == 0 ? SyntheticJpegSpec::Sampling::k444 : SyntheticJpegSpec::Sampling::k420;
    Result<std::string> jpeg = EncodeSyntheticJpeg(spec);
    EXPECT_TRUE(jpeg.ok()) << jpeg.status().ToString();
    const bool is_bad = std::find(bad.begin(), bad.end(), uint64_t(i)) != bad.end();
    data.jpegs.push_back(is_bad || !jpeg.ok() ? replacement : *jpeg);
    EXPECT_TRUE(record.SetBytes(0, data.jpegs.back()).ok());
    EXPECT_TRUE(record.SetInt64(1, i % 5).ok());
    EXPECT_TRUE(record.SetString(2, "class" + std::to_string(i % 5) + "/img" + std::to_string(i) + ".jpg").ok());
    Status written = (*writer)->Write(record);
    EXPECT_TRUE(written.ok()) << written.ToString();
  }
  Status finished = (*writer)->Finish();
  EXPECT_TRUE(finished.ok()) << finished.ToString();
  return data;
}

std::shared_ptr<const Dataset> OpenDataset(const std::string& dir) {
  Result<std::shared_ptr<Dataset>> ds = Dataset::Open(dir);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return ds.ok() ? *ds : nullptr;
}

LoaderOptions SmallOptions() {
  LoaderOptions options;
  options.batch_size = 8;
  options.image_size = kImageSize;
  options.resize_shorter = 40;
  options.sampler.seed = 77;
  options.threads = 1;
  options.prefetch = 2;
  return options;
}

std::vector<uint8_t> ExpectedPixels(const std::string& jpeg, uint64_t id, uint64_t epoch,
                                    const LoaderOptions& options) {
  Result<ImageInfo> info = ProbeImage(jpeg);
  EXPECT_TRUE(info.ok()) << info.status().ToString();
  if (!info.ok()) return {};
  const size_t pixels = size_t(options.image_size) * size_t(options.image_size);
  std::vector<uint8_t> hwc(pixels * 3);
  DecodeOptions packed = options.decode;  // a loader's options carry its batch layout here
  packed.layout = ImageLayout::kNHWC;
  ImageDecoder decoder(packed);
  const int width = info->window_width(options.decode.apply_exif);
  const int height = info->window_height(options.decode.apply_exif);
  const int size = options.image_size;
  Status decoded;
  if (options.transform == LoaderTransform::kRandomResizedCrop) {
    const CropWindow window = PlanRandomResizedCrop(width, height, options.crop, options.sampler.seed, epoch, id);
    decoded = decoder.DecodeCropResized(jpeg, window, size, size, hwc.data(), hwc.size());
  } else if (options.resize_shorter > 0) {
    decoded = decoder.DecodeCenterCrop(jpeg, size, options.resize_shorter, hwc.data(), hwc.size());
  } else {  // CenterCrop alone: a size x size window unless the image is smaller
    const CropWindow window = PlanCenterCrop(width, height, size, std::max(std::min(width, height), size));
    decoded = decoder.DecodeCropResized(jpeg, window, size, size, hwc.data(), hwc.size());
  }
  EXPECT_TRUE(decoded.ok()) << decoded.ToString();
  if (options.layout == ImageLayout::kNHWC) return hwc;
  std::vector<uint8_t> chw(hwc.size());
  for (size_t p = 0; p < pixels; ++p) {
    for (int c = 0; c < 3; ++c) chw[c * pixels + p] = hwc[p * 3 + c];
  }
  return chw;
}

}  // namespace unirecord::loader_testing
