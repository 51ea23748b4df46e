// The CUDA interface in both builds: with CUDA (where device_batches_test
// covers a real device) and without, where every call must refuse cleanly
// and the Loader must keep its batches on the host.
#include <gtest/gtest.h>

#include <string>

#include "gpu/device_batches.h"
#include "gpu/gpu_bandwidth.h"
#include "pipeline/loader_testing.h"

namespace unirecord::gpu {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CudaInterfaceTest, BuildHasTheImplementationCMakeChose) {
  EXPECT_EQ(BuiltWithCuda(), UNIRECORD_EXPECT_CUDA != 0);
  if (!BuiltWithCuda()) EXPECT_EQ(DeviceCount(), 0);
}

// One past the last device: an InvalidArgument naming it with CUDA,
// NotSupported without.
TEST(CudaInterfaceTest, MissingDeviceIsAnError) {
  CudaOptions o;
  o.device = DeviceCount();
  Result<std::unique_ptr<DeviceBatches>> batches = DeviceBatches::Create(o, 2, 4, 8, 8);
  ASSERT_FALSE(batches.ok());
  Result<GpuBandwidth> bandwidth = MeasureGpuBandwidth(o, 1, 8, 8, 1);
  ASSERT_FALSE(bandwidth.ok());
  for (const Status& status : {batches.status(), bandwidth.status()}) {
    SCOPED_TRACE(status.ToString());
    if (BuiltWithCuda()) {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_TRUE(Contains(status.message(), "CUDA device " + std::to_string(o.device) + " does not exist"));
    } else {
      EXPECT_EQ(status.code(), StatusCode::kNotSupported);
      EXPECT_TRUE(Contains(status.message(), "built without CUDA"));
    }
  }
}

TEST(CudaInterfaceTest, WithoutCudaEveryCallIsNotSupported) {
  if (BuiltWithCuda()) GTEST_SKIP() << "built with CUDA: device_batches_test covers these calls";
  uint8_t input[3] = {1, 2, 3};
  float output[3] = {};
  const CudaOptions o;
  for (const Status& status : {CudaCopyToHost(0, input, output, 1), LaunchConvert(input, output, 1, 1, 1, o, nullptr)}) {
    SCOPED_TRACE(status.ToString());
    EXPECT_EQ(status.code(), StatusCode::kNotSupported);
    EXPECT_TRUE(Contains(status.message(), "built without CUDA"));
  }
  EXPECT_EQ(output[0], 0.0f);
}

// The Loader asked for a missing device fails at Create: NotSupported
// without CUDA, the device's InvalidArgument with it.
TEST(CudaInterfaceTest, LoaderRefusesAMissingDevice) {
  using namespace loader_testing;
  TestDataset data = WriteDataset("cuda_missing");
  LoaderOptions options = SmallOptions();
  options.cuda.device = DeviceCount();
  Result<std::unique_ptr<Loader>> loader = Loader::Create(OpenDataset(data.dir), options);
  ASSERT_FALSE(loader.ok());
  if (BuiltWithCuda()) {
    EXPECT_EQ(loader.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(loader.status().message(), "does not exist")) << loader.status().ToString();
  } else {
    EXPECT_EQ(loader.status().code(), StatusCode::kNotSupported);
    EXPECT_EQ(loader.status().message(),
              "loader: CUDA device 0 requested, but unirecord was built without CUDA");
  }
}

// Host batches in either build: no device images, and no event to wait on.
TEST(CudaInterfaceTest, HostBatchesRefuseWaitOnAndSynchronize) {
  using namespace loader_testing;
  TestDataset data = WriteDataset("cuda_host");
  Result<std::unique_ptr<Loader>> loader = Loader::Create(OpenDataset(data.dir), SmallOptions());
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  Result<Batch> batch = (*loader)->Next();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_FALSE(batch->empty());
  EXPECT_EQ(batch->device_images(), nullptr);
  EXPECT_EQ(batch->ready_event(), nullptr);
  EXPECT_EQ(batch->WaitOn(nullptr).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(batch->Synchronize().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*loader)->stats().upload_s, 0);
}

}  // namespace
}  // namespace unirecord::gpu
