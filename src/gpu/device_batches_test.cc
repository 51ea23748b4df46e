// GPU path tests, built with CUDA only (cuda_interface_test covers both
// builds). They need a CUDA device and skip (with a message) without one.
#include "gpu/device_batches.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu/gpu_bandwidth.h"
#include "pipeline/loader_test_data.h"

namespace unirecord::gpu {
namespace {

#define SKIP_WITHOUT_DEVICE() \
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device visible: GPU test skipped"

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

std::vector<uint8_t> Pattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> v(bytes);
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x);
  }
  return v;
}

// What the kernel must produce, as floats.
std::vector<float> Reference(const std::vector<uint8_t>& nhwc, size_t count, int h, int w,
                             const CudaOptions& o) {
  const size_t plane = size_t(h) * w;
  std::vector<float> out(nhwc.size());
  const bool normalize = o.normalize && o.dtype != DeviceDType::kUint8;
  for (size_t n = 0; n < count; ++n) {
    for (size_t p = 0; p < plane; ++p) {
      for (int c = 0; c < 3; ++c) {
        float v = nhwc[(n * plane + p) * 3 + c];
        if (normalize) v = (v - o.mean[c]) / o.std[c];
        const size_t at = o.layout == ImageLayout::kNCHW ? n * 3 * plane + c * plane + p
                                                         : (n * plane + p) * 3 + c;
        out[at] = v;
      }
    }
  }
  return out;
}

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
          const std::vector<uint8_t> input = Pattern(bytes, uint32_t(bytes));
          uint8_t* d_in = nullptr;
          void* d_out = nullptr;
          ASSERT_CUDA(cudaMalloc(&d_in, bytes));
          ASSERT_CUDA(cudaMalloc(&d_out, bytes * 4));
          ASSERT_CUDA(cudaMemcpy(d_in, input.data(), bytes, cudaMemcpyHostToDevice));
          ASSERT_TRUE(LaunchConvert(d_in, d_out, s.count, s.h, s.w, o, nullptr).ok());
          ASSERT_CUDA(cudaDeviceSynchronize());
          ExpectClose(ToFloats(d_out, bytes, dtype), Reference(input, s.count, s.h, s.w, o), dtype);
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
  const std::vector<uint8_t> first = Pattern(bytes, 1), second = Pattern(bytes, 2);

  std::memcpy(db.host(0), first.data(), bytes);
  ASSERT_TRUE(db.Upload(0, count).ok());
  ASSERT_TRUE(StreamWaitEvent(consumer, db.ready_event(0)).ok());
  void* snapshot = nullptr;
  ASSERT_CUDA(cudaMalloc(&snapshot, bytes * 4));
  ASSERT_CUDA(cudaMemcpyAsync(snapshot, db.device_output(0), bytes * 4, cudaMemcpyDeviceToDevice, consumer));
  ASSERT_TRUE(db.Recycle(0).ok());  // the host buffer is free again
  std::memcpy(db.host(0), second.data(), bytes);
  ASSERT_TRUE(db.Upload(0, count).ok());
  ASSERT_CUDA(cudaStreamSynchronize(consumer));
  ASSERT_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(db.ready_event(0))));

  ExpectClose(ToFloats(snapshot, bytes, o.dtype), Reference(first, count, h, w, o), o.dtype);
  ExpectClose(ToFloats(db.device_output(0), bytes, o.dtype), Reference(second, count, h, w, o), o.dtype);
  cudaFree(snapshot);
  batches->reset();
  cudaStreamDestroy(consumer);
}

// Fields ride with the images: each range lands on the device 256-byte
// aligned and intact; a later, larger batch grows the slot's buffers while
// the consumer holds a copy of the first batch's fields.
TEST(DeviceBatchesTest, FieldsUploadWithTheImagesAndGrow) {
  SKIP_WITHOUT_DEVICE();
  CudaOptions o;
  o.device = 0;
  o.dtype = DeviceDType::kUint8;
  o.layout = ImageLayout::kNHWC;
  const size_t count = 4;
  const int h = 8, w = 8;
  Result<std::unique_ptr<DeviceBatches>> batches = DeviceBatches::Create(o, 1, count, h, w);
  ASSERT_TRUE(batches.ok()) << batches.status().ToString();
  DeviceBatches& db = **batches;
  for (size_t scale : {size_t{1}, size_t{1000}}) {
    SCOPED_TRACE(testing::Message() << "scale " << scale);
    const std::vector<std::vector<uint8_t>> ranges = {Pattern(13 * scale, 3), {}, Pattern(8 * scale, 4),
                                                      Pattern(300 * scale, 5)};
    std::vector<DeviceBatches::FieldUpload> uploads;
    for (const std::vector<uint8_t>& r : ranges) uploads.push_back({r.data(), r.size(), nullptr});
    const std::vector<uint8_t> pixels = Pattern(count * h * w * 3, 6);
    std::memcpy(db.host(0), pixels.data(), pixels.size());
    ASSERT_TRUE(db.Upload(0, count, &uploads).ok());
    ASSERT_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(db.ready_event(0))));
    for (size_t i = 0; i < ranges.size(); ++i) {
      ASSERT_NE(uploads[i].device, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(uploads[i].device) % 256, 0u);
      std::vector<uint8_t> back(ranges[i].size());
      ASSERT_CUDA(cudaMemcpy(back.data(), uploads[i].device, back.size(), cudaMemcpyDeviceToHost));
      EXPECT_TRUE(back == ranges[i]) << "range " << i;
    }
    std::vector<uint8_t> images(pixels.size());
    ASSERT_CUDA(cudaMemcpy(images.data(), db.device_output(0), images.size(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE(images == pixels);
    ASSERT_TRUE(db.Recycle(0).ok());
  }
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

// The Loader with CudaOptions: device batches equal the CPU loader's pixels
// converted on the host, sample by sample.
TEST(GpuLoaderTest, DeviceBatchesEqualNormalisedHostBatches) {
  SKIP_WITHOUT_DEVICE();
  using namespace loader_testing;
  TestDataset data = WriteDataset("gpu");
  for (DeviceDType dtype : {DeviceDType::kFloat32, DeviceDType::kFloat16}) {
    LoaderOptions cpu = SmallOptions();
    cpu.threads = 2;
    LoaderOptions gpu = cpu;
    gpu.layout = ImageLayout::kNCHW;  // must not reach the host batch: the upload reads NHWC
    gpu.cuda.device = 0;
    gpu.cuda.dtype = dtype;
    Result<std::unique_ptr<Loader>> host_loader = Loader::Create(OpenDataset(data.dir), cpu);
    Result<std::unique_ptr<Loader>> device_loader = Loader::Create(OpenDataset(data.dir), gpu);
    ASSERT_TRUE(host_loader.ok() && device_loader.ok()) << device_loader.status().ToString();
    uint64_t batches = 0;
    for (;;) {
      Result<Batch> h = (*host_loader)->Next();
      Result<Batch> d = (*device_loader)->Next();
      ASSERT_TRUE(h.ok() && d.ok()) << d.status().ToString();
      ASSERT_EQ(h->size(), d->size());
      if (h->empty()) break;
      ASSERT_NE(d->device_images(), nullptr);
      EXPECT_EQ(d->layout(), ImageLayout::kNHWC);
      ASSERT_TRUE(d->WaitOn(nullptr).ok());
      ASSERT_CUDA(cudaDeviceSynchronize());
      const std::vector<uint8_t> pixels(h->images(), h->images() + h->size() * 3 * kImageSize * kImageSize);
      ExpectClose(ToFloats(d->device_images(), pixels.size(), dtype),
                  Reference(pixels, h->size(), kImageSize, kImageSize, gpu.cuda), dtype);
      EXPECT_EQ(0, std::memcmp(h->record_ids(), d->record_ids(), h->size() * sizeof(uint64_t)));
      ++batches;
    }
    EXPECT_EQ(batches, (*device_loader)->batches_per_epoch());
    EXPECT_GT((*device_loader)->stats().upload_s, 0);
  }
}

// A device batch the consumer holds keeps its buffers while SetEpoch and
// Restore drop the prefetched batches (StartRun recycles their slots, some of
// them already uploaded): its device images stay as they were when it was
// received, and the batches after the change are the host loader's, converted.
TEST(GpuLoaderTest, HeldDeviceBatchSurvivesSetEpochAndRestore) {
  SKIP_WITHOUT_DEVICE();
  using namespace loader_testing;
  TestDataset data = WriteDataset("gpu_held");
  LoaderOptions cpu = SmallOptions();
  cpu.batch_size = 4;  // 10 batches per epoch
  cpu.threads = 2;
  cpu.prefetch = 2;  // 3 buffers: one held, the others circulate
  LoaderOptions gpu = cpu;
  gpu.cuda.device = 0;
  gpu.cuda.dtype = DeviceDType::kFloat32;
  Result<std::unique_ptr<Loader>> host_loader = Loader::Create(OpenDataset(data.dir), cpu);
  Result<std::unique_ptr<Loader>> device_loader = Loader::Create(OpenDataset(data.dir), gpu);
  ASSERT_TRUE(host_loader.ok()) << host_loader.status().ToString();
  ASSERT_TRUE(device_loader.ok()) << device_loader.status().ToString();
  Loader& host = **host_loader;
  Loader& device = **device_loader;
  const size_t image_values = size_t(3) * kImageSize * kImageSize;

  // The device images' bytes, copied back once the batch is ready.
  auto device_bytes = [&](const Batch& b) {
    std::vector<uint8_t> bytes(b.size() * image_values * sizeof(float));
    EXPECT_TRUE(b.WaitOn(nullptr).ok());
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(bytes.data(), b.device_images(), bytes.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return bytes;
  };
  // Next() of both loaders; the device batch must be the host one converted.
  auto next_pair = [&](Batch* d_out, uint64_t epoch, uint64_t index) {
    Result<Batch> h = host.Next();
    Result<Batch> d = device.Next();
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_EQ(h->size(), d->size());
    ASSERT_FALSE(d->empty()) << "epoch " << epoch << " ended before batch " << index;
    EXPECT_EQ(d->epoch(), epoch);
    EXPECT_EQ(d->index(), index);
    ASSERT_NE(d->device_images(), nullptr);
    EXPECT_EQ(0, std::memcmp(h->record_ids(), d->record_ids(), h->size() * sizeof(uint64_t)));
    const std::vector<uint8_t> pixels(h->images(), h->images() + h->size() * image_values);
    ASSERT_TRUE(d->WaitOn(nullptr).ok());
    ASSERT_CUDA(cudaDeviceSynchronize());
    ExpectClose(ToFloats(d->device_images(), pixels.size(), gpu.cuda.dtype),
                Reference(pixels, h->size(), kImageSize, kImageSize, gpu.cuda), gpu.cuda.dtype);
    *d_out = std::move(d).value();
  };
  // Both loaders to the end of the epoch, batch by batch.
  auto rest_of_epoch = [&](uint64_t epoch, uint64_t first) {
    const uint64_t batches = device.batches_per_epoch();
    for (uint64_t index = first; index < batches; ++index) {
      SCOPED_TRACE(testing::Message() << "epoch " << epoch << " batch " << index);
      Batch d;
      next_pair(&d, epoch, index);
      if (testing::Test::HasFatalFailure()) return;
    }
    Result<Batch> h_end = host.Next();
    Result<Batch> d_end = device.Next();
    ASSERT_TRUE(h_end.ok() && d_end.ok()) << d_end.status().ToString();
    EXPECT_TRUE(h_end->empty());
    EXPECT_TRUE(d_end->empty());
  };
  // Gives the workers time to fill and upload the batches ahead, so that
  // the run change drops uploaded slots, not only empty ones.
  auto let_prefetch_fill = [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); };

  Batch held;
  next_pair(&held, 0, 0);
  ASSERT_FALSE(HasFatalFailure());
  const std::vector<uint8_t> held_bytes = device_bytes(held);
  Batch second;
  next_pair(&second, 0, 1);
  ASSERT_FALSE(HasFatalFailure());
  second.Release();
  let_prefetch_fill();

  // SetEpoch while `held` keeps its buffers.
  host.SetEpoch(1);
  device.SetEpoch(1);
  rest_of_epoch(1, 0);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(device_bytes(held) == held_bytes) << "held batch changed across SetEpoch";

  // Restore to a saved state while `held` and a batch taken after the save
  // are both held.
  host.SetEpoch(2);
  device.SetEpoch(2);
  for (uint64_t index = 0; index < 3; ++index) {
    Batch d;
    next_pair(&d, 2, index);
    ASSERT_FALSE(HasFatalFailure());
  }
  const SamplerState host_state = host.state();
  const SamplerState device_state = device.state();
  EXPECT_EQ(device_state.position, 3u * cpu.batch_size);
  Batch after_save;
  next_pair(&after_save, 2, 3);
  ASSERT_FALSE(HasFatalFailure());
  const std::vector<uint8_t> after_save_bytes = device_bytes(after_save);
  {
    Batch d;
    next_pair(&d, 2, 4);
    ASSERT_FALSE(HasFatalFailure());
  }
  let_prefetch_fill();
  ASSERT_TRUE(host.Restore(host_state).ok());
  ASSERT_TRUE(device.Restore(device_state).ok());
  rest_of_epoch(2, 3);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(device_bytes(held) == held_bytes) << "held batch changed across Restore";
  EXPECT_TRUE(device_bytes(after_save) == after_save_bytes) << "batch held across Restore changed";
  EXPECT_EQ(held.epoch(), 0u);
  EXPECT_EQ(held.index(), 0u);
  EXPECT_EQ(after_save.epoch(), 2u);
  EXPECT_EQ(after_save.index(), 3u);

  // Released, their buffers circulate again: a whole epoch more.
  held.Release();
  after_save.Release();
  host.SetEpoch(3);
  device.SetEpoch(3);
  rest_of_epoch(3, 0);
}

}  // namespace
}  // namespace unirecord::gpu
