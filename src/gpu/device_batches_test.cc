// CUDA device tests, built with CUDA only (cuda_interface_test covers both
// builds; device_batches_protocol_test runs the upload protocol and
// pipeline/loader_device_test the Loader on this device and on the host
// device). They need a CUDA device and skip (with a message) without
// one, or fail when UNIRECORD_REQUIRE_GPU=1 (bench/run_gpu.sh).
#include "gpu/device_batches.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/device_testing.h"
#include "gpu/gpu_bandwidth.h"
#include "gpu/host_convert.h"

namespace unirecord::gpu {
namespace {

bool GpuRequired() {
  const char* require = std::getenv("UNIRECORD_REQUIRE_GPU");
  return require != nullptr && std::string(require) == "1";
}

#define SKIP_WITHOUT_DEVICE()                                                                  \
  if (DeviceCount() == 0) {                                                                    \
    if (GpuRequired()) FAIL() << "UNIRECORD_REQUIRE_GPU=1 but no CUDA device is visible";      \
    GTEST_SKIP() << "no CUDA device visible: GPU test skipped";                                \
  }

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

std::vector<float> ToFloats(const void* device, size_t values, DeviceDType dtype) {
  std::vector<float> out(values);
  if (dtype == DeviceDType::kFloat32) {
    cudaMemcpy(out.data(), device, values * 4, cudaMemcpyDeviceToHost);
  } else if (dtype == DeviceDType::kFloat16) {
    std::vector<__half> h(values);
    cudaMemcpy(h.data(), device, values * 2, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < values; ++i) out[i] = __half2float(h[i]);
  } else {
    std::vector<uint8_t> b(values);
    cudaMemcpy(b.data(), device, values, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < values; ++i) out[i] = b[i];
  }
  return out;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, DeviceDType dtype) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const float tolerance = dtype == DeviceDType::kFloat16 ? 2e-3f * std::fabs(want[i]) + 2e-3f
                                                           : 1e-5f * std::fabs(want[i]) + 1e-5f;
    ASSERT_NEAR(got[i], want[i], tolerance) << "at " << i;
  }
}

TEST(ConvertKernelTest, MatchesCpuReference) {
  SKIP_WITHOUT_DEVICE();
  struct Shape { size_t count; int h; int w; };
  for (Shape s : {Shape{3, 8, 8}, Shape{2, 5, 7}, Shape{1, 1, 1}, Shape{4, 33, 17}}) {
    for (DeviceDType dtype : {DeviceDType::kFloat32, DeviceDType::kFloat16, DeviceDType::kUint8}) {
      for (ImageLayout layout : {ImageLayout::kNCHW, ImageLayout::kNHWC}) {
        for (bool normalize : {true, false}) {
          SCOPED_TRACE(testing::Message() << "n=" << s.count << " " << s.h << "x" << s.w << " dtype="
                                          << int(dtype) << " nchw=" << (layout == ImageLayout::kNCHW)
                                          << " normalize=" << normalize);
          CudaOptions o;
          o.device = 0;
          o.dtype = dtype;
          o.layout = layout;
          o.normalize = normalize;
          const size_t bytes = s.count * s.h * s.w * 3;
          const std::vector<uint8_t> input = TestPattern(bytes, uint32_t(bytes));
          uint8_t* d_in = nullptr;
          void* d_out = nullptr;
          ASSERT_CUDA(cudaMalloc(&d_in, bytes));
          ASSERT_CUDA(cudaMalloc(&d_out, bytes * 4));
          ASSERT_CUDA(cudaMemcpy(d_in, input.data(), bytes, cudaMemcpyHostToDevice));
          ASSERT_TRUE(LaunchConvert(d_in, d_out, s.count, s.h, s.w, o, nullptr).ok());
          ASSERT_CUDA(cudaDeviceSynchronize());
          ExpectClose(ToFloats(d_out, bytes, dtype), ReferenceConversion(input, s.count, s.h, s.w, o), dtype);
          cudaFree(d_in);
          cudaFree(d_out);
        }
      }
    }
  }
}

// Upload -> consumer waits on the event -> consumer copies the output away
// -> slot recycled and refilled: the second upload must not overwrite the
// output before the consumer's copy ran (the `consumed` event).
TEST(DeviceBatchesTest, UploadEventsOrderProducerAndConsumer) {
  SKIP_WITHOUT_DEVICE();
  cudaStream_t consumer;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  CudaOptions o;
  o.device = 0;
  o.consumer_stream = consumer;
  const size_t count = 64;
  const int h = 224, w = 224;
  Result<std::unique_ptr<DeviceBatches>> batches = DeviceBatches::Create(o, 2, count, h, w);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  DeviceBatches& db = **batches;
  const size_t bytes = count * h * w * 3;
  const std::vector<uint8_t> first = TestPattern(bytes, 1), second = TestPattern(bytes, 2);

  std::memcpy(db.host(0), first.data(), bytes);
  ASSERT_TRUE(db.Upload(0, count).ok());
  ASSERT_TRUE(db.WaitOn(0, consumer).ok());
  void* snapshot = nullptr;
  ASSERT_CUDA(cudaMalloc(&snapshot, bytes * 4));
  ASSERT_CUDA(cudaMemcpyAsync(snapshot, db.device_output(0), bytes * 4, cudaMemcpyDeviceToDevice, consumer));
  ASSERT_TRUE(db.Recycle(0).ok());  // the host buffer is free again
  std::memcpy(db.host(0), second.data(), bytes);
  ASSERT_TRUE(db.Upload(0, count).ok());
  ASSERT_CUDA(cudaStreamSynchronize(consumer));
  ASSERT_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(db.ready_event(0))));

  ExpectClose(ToFloats(snapshot, bytes, o.dtype), ReferenceConversion(first, count, h, w, o), o.dtype);
  ExpectClose(ToFloats(db.device_output(0), bytes, o.dtype), ReferenceConversion(second, count, h, w, o), o.dtype);
  cudaFree(snapshot);
  batches->reset();
  cudaStreamDestroy(consumer);
}

TEST(GpuBandwidthTest, MeasuresEveryPath) {
  SKIP_WITHOUT_DEVICE();
  CudaOptions o;
  o.device = 0;
  Result<GpuBandwidth> bw = MeasureGpuBandwidth(o, 16, 224, 224, 3);
  ASSERT_TRUE(bw.ok()) << bw.status().ToString();
  EXPECT_GT(bw->memcpy_h2d, 0.5);
  EXPECT_GT(bw->upload, 0.5);
  EXPECT_GT(bw->memcpy_d2d, bw->memcpy_h2d);
  EXPECT_GT(bw->convert, 1.0);
}

}  // namespace
}  // namespace unirecord::gpu
