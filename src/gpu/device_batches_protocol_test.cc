// The DeviceBatches protocol on every device this build has: the host device
// always (so CI runs these), CUDA when a device is visible (skipped without
// one, failed when UNIRECORD_REQUIRE_GPU=1: bench/run_gpu.sh). What only CUDA
// streams can show (a consumer stream's copy ordered before the refill) stays
// in device_batches_test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device_batches.h"
#include "gpu/device_testing.h"
#include "gpu/host_convert.h"

namespace unirecord::gpu {
namespace {

enum class Device { kHost, kCuda };

std::string DeviceName(const testing::TestParamInfo<Device>& info) {
  return info.param == Device::kHost ? "HostDevice" : "Cuda";
}

class DeviceBatchesProtocolTest : public testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() != Device::kCuda || DeviceCount() > 0) return;
    const char* require = std::getenv("UNIRECORD_REQUIRE_GPU");
    if (require != nullptr && std::string(require) == "1") FAIL() << "UNIRECORD_REQUIRE_GPU=1 but no CUDA device is visible";
    GTEST_SKIP() << "no CUDA device visible";
  }

  CudaOptions Options() const {
    CudaOptions o;
    o.device = 0;
    o.host_emulation = GetParam() == Device::kHost;
    return o;
  }
};

// The slot's converted images as floats, copied off the device.
std::vector<float> OutputValues(const CudaOptions& o, const DeviceBatches& db, size_t slot, size_t values) {
  std::vector<uint8_t> bytes(values * DTypeBytes(o.dtype));
  EXPECT_TRUE(CopyDeviceToHost(o, db.device_output(slot), bytes.data(), bytes.size()).ok());
  std::vector<float> out(values);
  for (size_t i = 0; i < values; ++i) out[i] = ConvertedValue(bytes.data(), i, o.dtype);
  return out;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * std::fabs(want[i]) + 1e-5f) << "at " << i;
}

// Upload -> the consumer waits and reads the output -> slot recycled,
// refilled and uploaded again: what the consumer read is the first batch's,
// and the slot then holds the second's.
TEST_P(DeviceBatchesProtocolTest, RecycledSlotTakesTheNextBatch) {
  const CudaOptions o = Options();
  const size_t count = 8;
  const int h = 16, w = 24;
  Result<std::unique_ptr<DeviceBatches>> batches = DeviceBatches::Create(o, 2, count, h, w);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  DeviceBatches& db = **batches;
  const size_t values = count * h * w * 3;
  const std::vector<uint8_t> first = TestPattern(values, 1), second = TestPattern(values, 2);

  std::memcpy(db.host(0), first.data(), values);
  ASSERT_TRUE(db.Upload(0, count).ok());
  ASSERT_TRUE(db.WaitOn(0, nullptr).ok());
  ASSERT_TRUE(db.Synchronize(0).ok());
  const std::vector<float> consumed = OutputValues(o, db, 0, values);
  ASSERT_TRUE(db.Recycle(0).ok());  // the host buffer is free again
  std::memcpy(db.host(0), second.data(), values);
  ASSERT_TRUE(db.Upload(0, count).ok());
  ASSERT_TRUE(db.Synchronize(0).ok());

  ExpectClose(consumed, ReferenceConversion(first, count, h, w, o));
  ExpectClose(OutputValues(o, db, 0, values), ReferenceConversion(second, count, h, w, o));
}

// Fields ride with the images: each range lands on the device 256-byte
// aligned and intact; a later, 1000x larger batch grows the slot's buffers.
TEST_P(DeviceBatchesProtocolTest, FieldsUploadWithTheImagesAndGrow) {
  CudaOptions o = Options();
  o.dtype = DeviceDType::kUint8;
  o.layout = ImageLayout::kNHWC;
  const size_t count = 4;
  const int h = 8, w = 8;
  Result<std::unique_ptr<DeviceBatches>> batches = DeviceBatches::Create(o, 1, count, h, w);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  DeviceBatches& db = **batches;
  for (size_t scale : {size_t{1}, size_t{1000}}) {
    SCOPED_TRACE(testing::Message() << "scale " << scale);
    const std::vector<std::vector<uint8_t>> ranges = {TestPattern(13 * scale, 3), {}, TestPattern(8 * scale, 4),
                                                      TestPattern(300 * scale, 5)};
    std::vector<DeviceBatches::FieldUpload> uploads;
    for (const std::vector<uint8_t>& r : ranges) uploads.push_back({r.data(), r.size(), nullptr});
    const std::vector<uint8_t> pixels = TestPattern(count * h * w * 3, 6);
    std::memcpy(db.host(0), pixels.data(), pixels.size());
    ASSERT_TRUE(db.Upload(0, count, &uploads).ok());
    ASSERT_TRUE(db.Synchronize(0).ok());
    for (size_t i = 0; i < ranges.size(); ++i) {
      ASSERT_NE(uploads[i].device, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(uploads[i].device) % 256, 0u);
      std::vector<uint8_t> back(ranges[i].size());
      ASSERT_TRUE(CopyDeviceToHost(o, uploads[i].device, back.data(), back.size()).ok());
      EXPECT_TRUE(back == ranges[i]) << "range " << i;
    }
    std::vector<uint8_t> images(pixels.size());
    ASSERT_TRUE(CopyDeviceToHost(o, db.device_output(0), images.data(), images.size()).ok());
    EXPECT_TRUE(images == pixels);
    ASSERT_TRUE(db.Recycle(0).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceBatchesProtocolTest, testing::Values(Device::kHost, Device::kCuda),
                         DeviceName);

}  // namespace
}  // namespace unirecord::gpu
