// The Loader's device path (LoaderOptions::cuda) on both devices behind
// gpu/device_batches.h: the host device in every build, so that CI runs the
// device path on every change, and CUDA where a device is visible (skipped
// without one, failed instead when UNIRECORD_REQUIRE_GPU=1, as
// bench/run_gpu.sh sets it). Each device batch must equal the CPU loader's
// batch converted by the kernel's CPU reference (gpu/host_convert.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "gpu/device_batches.h"
#include "gpu/host_convert.h"
#include "pipeline/loader_testing.h"
#include "unirecord/loader.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

using loader_testing::kImageSize;
using loader_testing::OpenDataset;
using loader_testing::SmallOptions;
using loader_testing::TestDataset;
using loader_testing::WriteDataset;

struct DeviceCase {
  const char* name;
  bool host_emulation;
};

// How gtest (and so CTest's test names) shows a case.
void PrintTo(const DeviceCase& device, std::ostream* out) { *out << device.name; }

class LoaderDeviceTest : public ::testing::TestWithParam<DeviceCase> {
 protected:
  void SetUp() override {
    if (GetParam().host_emulation || gpu::DeviceCount() > 0) return;
    const char* require = std::getenv("UNIRECORD_REQUIRE_GPU");
    if (require != nullptr && std::string(require) == "1") {
      FAIL() << "UNIRECORD_REQUIRE_GPU=1 but no CUDA device is visible (built with CUDA: " << BuiltWithCuda() << ")";
    }
    GTEST_SKIP() << "no CUDA device visible: the CUDA half skipped (the host device ran)";
  }

  // Options of a device loader: `cpu` with the device's.
  LoaderOptions OnDevice(LoaderOptions cpu, DeviceDType dtype, ImageLayout layout) const {
    cpu.cuda.device = 0;
    cpu.cuda.host_emulation = GetParam().host_emulation;
    cpu.cuda.dtype = dtype;
    cpu.cuda.layout = layout;
    cpu.layout = ImageLayout::kNCHW;  // must not reach the host batch: the upload reads NHWC
    return cpu;
  }
};

// `bytes` of device memory of a ready batch, on the host.
std::vector<uint8_t> DeviceBytes(const LoaderOptions& options, const Batch& batch, const void* device, size_t bytes) {
  EXPECT_TRUE(batch.Synchronize().ok());
  std::vector<uint8_t> out(bytes);
  Status copied = gpu::CopyDeviceToHost(options.cuda, device, out.data(), bytes);
  EXPECT_TRUE(copied.ok()) << copied.ToString();
  return out;
}

// The device images a host batch (uint8 NHWC) must become.
std::vector<uint8_t> Converted(const Batch& host, const CudaOptions& cuda) {
  const size_t values = host.size() * 3 * size_t(host.height()) * size_t(host.width());
  std::vector<uint8_t> out(values * gpu::DTypeBytes(cuda.dtype));
  gpu::ConvertOnHost(host.images(), out.data(), host.size(), host.height(), host.width(), cuda);
  return out;
}

// The host device runs the reference itself: equal bytes. The CUDA kernel
// may round differently in the last place.
void ExpectImagesEqual(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, DeviceDType dtype,
                       bool exact) {
  ASSERT_EQ(got.size(), want.size());
  if (exact) {
    EXPECT_TRUE(got == want) << "device images differ from the host batch converted";
    return;
  }
  for (size_t i = 0; i < got.size() / gpu::DTypeBytes(dtype); ++i) {
    const float a = gpu::ConvertedValue(got.data(), i, dtype), b = gpu::ConvertedValue(want.data(), i, dtype);
    const float tolerance = dtype == DeviceDType::kFloat16 ? 2e-3f * std::fabs(b) + 2e-3f : 1e-5f * std::fabs(b) + 1e-5f;
    ASSERT_NEAR(a, b, tolerance) << "value " << i;
  }
}

// Device batch `d` against host batch `h` of the same position: ids,
// labels, and images converted.
void ExpectSameBatch(const LoaderOptions& options, const Batch& h, const Batch& d, bool exact) {
  ASSERT_EQ(h.size(), d.size());
  ASSERT_EQ(0, std::memcmp(h.record_ids(), d.record_ids(), h.size() * sizeof(uint64_t)));
  if (h.labels() != nullptr) EXPECT_EQ(0, std::memcmp(h.labels(), d.labels(), h.size() * sizeof(int64_t)));
  if (h.images() == nullptr) {
    EXPECT_EQ(d.device_images(), nullptr);
    return;
  }
  ASSERT_NE(d.device_images(), nullptr);
  EXPECT_EQ(d.layout(), ImageLayout::kNHWC);  // the host side of a device batch
  const std::vector<uint8_t> want = Converted(h, options.cuda);
  ExpectImagesEqual(DeviceBytes(options, d, d.device_images(), want.size()), want, options.cuda.dtype, exact);
}

// Runs both loaders to the end of the epoch, `check(host_batch,
// device_batch)` on each pair; returns the pairs.
template <typename Check>
uint64_t ForEachPair(Loader& host, Loader& device, Check check) {
  for (uint64_t pairs = 0;; ++pairs) {
    Result<Batch> h = host.Next();
    Result<Batch> d = device.Next();
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (!h.ok() || !d.ok()) return pairs;
    if (h->empty()) {
      EXPECT_TRUE(d->empty());
      return pairs;
    }
    check(*h, *d);
    if (::testing::Test::HasFatalFailure()) return pairs;
  }
}

// The loader of images and labels alone (no batched fields: no Record is
// read) delivers every batch on the device. On 4ce68bf this loader crashed
// on its first batch (FinishBatch released Records it never had).
TEST_P(LoaderDeviceTest, ImageBatchesAreTheHostBatchesConverted) {
  TestDataset data = WriteDataset("device_images");
  struct Output {
    DeviceDType dtype;
    ImageLayout layout;
  };
  for (Output out : {Output{DeviceDType::kFloat32, ImageLayout::kNCHW}, Output{DeviceDType::kFloat16, ImageLayout::kNCHW},
                     Output{DeviceDType::kUint8, ImageLayout::kNHWC}, Output{DeviceDType::kFloat32, ImageLayout::kNHWC},
                     Output{DeviceDType::kUint8, ImageLayout::kNCHW}}) {
    SCOPED_TRACE(::testing::Message() << DeviceDTypeName(out.dtype) << (out.layout == ImageLayout::kNCHW ? " NCHW" : " NHWC"));
    LoaderOptions cpu = SmallOptions();
    cpu.threads = 2;
    cpu.layout = ImageLayout::kNHWC;
    const LoaderOptions device = OnDevice(cpu, out.dtype, out.layout);
    Result<std::unique_ptr<Loader>> host_loader = Loader::Create(OpenDataset(data.dir), cpu);
    Result<std::unique_ptr<Loader>> device_loader = Loader::Create(OpenDataset(data.dir), device);
    ASSERT_TRUE(host_loader.ok()) << host_loader.status().ToString();
    ASSERT_TRUE(device_loader.ok()) << device_loader.status().ToString();
    const uint64_t batches = ForEachPair(**host_loader, **device_loader, [&](const Batch& h, const Batch& d) {
      ExpectSameBatch(device, h, d, GetParam().host_emulation);
    });
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(batches, (*device_loader)->batches_per_epoch());
    EXPECT_GT((*device_loader)->stats().upload_s, 0);
  }
}

// A device batch the consumer holds keeps its buffers while SetEpoch and
// Restore drop the prefetched batches (StartRun recycles their slots, some
// of them already uploaded): its device images stay as they were, and the
// batches after the change are the host loader's, converted.
TEST_P(LoaderDeviceTest, HeldBatchSurvivesSetEpochAndRestore) {
  TestDataset data = WriteDataset("device_held");
  LoaderOptions cpu = SmallOptions();
  cpu.batch_size = 4;  // 10 batches per epoch
  cpu.threads = 2;
  cpu.prefetch = 2;  // 3 buffers: one held, the others circulate
  cpu.layout = ImageLayout::kNHWC;
  const LoaderOptions gpu = OnDevice(cpu, DeviceDType::kFloat32, ImageLayout::kNCHW);
  Result<std::unique_ptr<Loader>> host_loader = Loader::Create(OpenDataset(data.dir), cpu);
  Result<std::unique_ptr<Loader>> device_loader = Loader::Create(OpenDataset(data.dir), gpu);
  ASSERT_TRUE(host_loader.ok()) << host_loader.status().ToString();
  ASSERT_TRUE(device_loader.ok()) << device_loader.status().ToString();
  Loader& host = **host_loader;
  Loader& device = **device_loader;
  const size_t image_bytes = size_t(3) * kImageSize * kImageSize * sizeof(float);
  const bool exact = GetParam().host_emulation;
  auto device_bytes = [&](const Batch& b) { return DeviceBytes(gpu, b, b.device_images(), b.size() * image_bytes); };
  auto next_pair = [&](Batch* d_out, uint64_t epoch, uint64_t index) {
    Result<Batch> h = host.Next();
    Result<Batch> d = device.Next();
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_FALSE(d->empty()) << "epoch " << epoch << " ended before batch " << index;
    EXPECT_EQ(d->epoch(), epoch);
    EXPECT_EQ(d->index(), index);
    ExpectSameBatch(gpu, *h, *d, exact);
    *d_out = std::move(d).value();
  };
  auto rest_of_epoch = [&](uint64_t epoch, uint64_t first) {
    for (uint64_t index = first; index < device.batches_per_epoch(); ++index) {
      SCOPED_TRACE(::testing::Message() << "epoch " << epoch << " batch " << index);
      Batch d;
      next_pair(&d, epoch, index);
      if (::testing::Test::HasFatalFailure()) return;
    }
    Result<Batch> h_end = host.Next();
    Result<Batch> d_end = device.Next();
    ASSERT_TRUE(h_end.ok() && d_end.ok()) << d_end.status().ToString();
    EXPECT_TRUE(h_end->empty());
    EXPECT_TRUE(d_end->empty());
  };
  // Waits until the workers have uploaded a batch into each of the
  // `free_slots` buffers that no held batch occupies, so that the run change
  // drops uploaded slots, not only empty ones. Counts since the last run
  // change (ResetStats just before it): uploads past the batches handed out
  // are ahead.
  auto let_prefetch_fill = [&device](uint64_t free_slots) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    auto ahead = [&] {
      const LoaderStats stats = device.stats();
      return stats.uploads >= stats.batches + free_slots;
    };
    while (!ahead() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(ahead()) << "the batches ahead were never uploaded";
  };

  Batch held;
  next_pair(&held, 0, 0);
  ASSERT_FALSE(HasFatalFailure());
  const std::vector<uint8_t> held_bytes = device_bytes(held);
  Batch second;
  next_pair(&second, 0, 1);
  ASSERT_FALSE(HasFatalFailure());
  second.Release();
  let_prefetch_fill(2);  // 3 buffers, `held` in one
  ASSERT_FALSE(HasFatalFailure());

  host.SetEpoch(1);
  device.SetEpoch(1);
  rest_of_epoch(1, 0);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(device_bytes(held) == held_bytes) << "held batch changed across SetEpoch";

  // Reset while the workers are idle (epoch 1 ended; nothing past an epoch's
  // end is prefetched): reset after SetEpoch, it could zero uploads of
  // epoch 2 already made, and the wait below would never see them ahead.
  device.ResetStats();
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
  let_prefetch_fill(1);  // `held` and `after_save` in two of the 3 buffers
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(host.Restore(host_state).ok());
  ASSERT_TRUE(device.Restore(device_state).ok());
  rest_of_epoch(2, 3);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(device_bytes(held) == held_bytes) << "held batch changed across Restore";
  EXPECT_TRUE(device_bytes(after_save) == after_save_bytes) << "batch held across Restore changed";

  held.Release();
  after_save.Release();
  host.SetEpoch(3);
  device.SetEpoch(3);
  rest_of_epoch(3, 0);
}

// Records i = 0..28: a JPEG (with_image), label i % 3, tokens int32 of
// length i % 7 (values 10 i + j), a float64 score i / 4, a string.
std::string WriteFieldDataset(const std::string& name, bool with_image) {
  const std::string dir = testing::MakeTempDir() + "/" + name;
  std::vector<Field> fields = {Field::Int64("label"), Field::Array("tokens", FieldType::kInt32, {kVariableDim}),
                               Field::Float64("score"), Field::String("path")};
  if (with_image) fields.insert(fields.begin(), Field::Bytes("image"));
  Result<Schema> schema = Schema::Make(fields);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  WriterOptions options;
  options.num_shards = 2;
  options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(dir, "fields", *schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(*schema);
  const TestDataset jpegs = with_image ? WriteDataset(name + "_jpegs") : TestDataset{};
  for (int i = 0; i < 29; ++i) {
    record.Clear();
    if (with_image) EXPECT_TRUE(record.SetBytes("image", jpegs.jpegs[size_t(i)]).ok());
    EXPECT_TRUE(record.SetInt64("label", i % 3).ok());
    std::vector<int32_t> tokens;
    for (int j = 0; j < i % 7; ++j) tokens.push_back(10 * i + j);
    EXPECT_TRUE(record.SetValues("tokens", FieldType::kInt32, tokens.data(), {int64_t(tokens.size())}).ok());
    EXPECT_TRUE(record.SetFloat64("score", i / 4.0).ok());
    EXPECT_TRUE(record.SetString("path", "r" + std::to_string(i)).ok());
    Status written = (*writer)->Write(record);
    EXPECT_TRUE(written.ok()) << written.ToString();
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

size_t Elements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t extent : shape) n *= size_t(extent);
  return n;
}

// Device batch `d`'s fields against host batch `h`'s: each numeric field's
// values, lengths and offsets copied to the device (not aliasing the host
// buffers); strings and bytes left on the host.
void ExpectFieldsOnDevice(const LoaderOptions& device, const Batch& h, const Batch& d) {
  ASSERT_EQ(h.fields().size(), d.fields().size());
  for (size_t k = 0; k < h.fields().size(); ++k) {
    const BatchField& hf = h.fields()[k];
    const BatchField& df = d.fields()[k];
    SCOPED_TRACE(hf.name);
    ASSERT_EQ(hf.shape, df.shape);
    if (hf.data == nullptr) {  // strings and bytes
      EXPECT_EQ(df.device_data, nullptr);
      EXPECT_EQ(hf.values, df.values);
      continue;
    }
    ASSERT_NE(df.device_data, nullptr);
    EXPECT_NE(df.device_data, static_cast<const void*>(df.data)) << "device data is the host buffer";
    const size_t bytes = Elements(hf.shape) * NumericWidth(hf.type);
    const std::vector<uint8_t> want(static_cast<const uint8_t*>(hf.data), static_cast<const uint8_t*>(hf.data) + bytes);
    EXPECT_TRUE(DeviceBytes(device, d, df.device_data, bytes) == want);
    if (hf.lengths != nullptr) {
      const size_t n = Elements(hf.lengths_shape);
      ASSERT_NE(df.device_lengths, nullptr);
      EXPECT_TRUE(DeviceBytes(device, d, df.device_lengths, n * 8) ==
                  std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(hf.lengths),
                                       reinterpret_cast<const uint8_t*>(hf.lengths + n)));
    }
    if (hf.offsets != nullptr) {
      ASSERT_NE(df.device_offsets, nullptr);
      const size_t n = h.size() + 1;
      EXPECT_TRUE(DeviceBytes(device, d, df.device_offsets, n * 8) ==
                  std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(hf.offsets),
                                       reinterpret_cast<const uint8_t*>(hf.offsets + n)));
    }
  }
}

// Numeric fields arrive on the device with the images, padded and jagged,
// with their lengths and offsets, equal to the host loader's; strings stay
// on the host. With and without an image field.
TEST_P(LoaderDeviceTest, FieldsArriveWithTheImages) {
  for (bool with_image : {true, false}) {
    const std::string dir = WriteFieldDataset(with_image ? "device_fields_img" : "device_fields", with_image);
    for (RaggedLayout ragged : {RaggedLayout::kPad, RaggedLayout::kJagged}) {
      SCOPED_TRACE(::testing::Message() << (with_image ? "with" : "without") << " images, " << RaggedLayoutName(ragged));
      LoaderOptions cpu = SmallOptions();
      cpu.batch_size = 6;
      cpu.threads = 2;
      cpu.layout = ImageLayout::kNHWC;
      cpu.fields = {"tokens", "score", "path"};
      cpu.ragged = ragged;
      cpu.pad_value = -1;
      if (!with_image) {
        cpu.image_field.clear();
        cpu.label_field.clear();
      }
      const LoaderOptions device = OnDevice(cpu, DeviceDType::kUint8, ImageLayout::kNHWC);
      Result<std::unique_ptr<Loader>> host_loader = Loader::Create(OpenDataset(dir), cpu);
      Result<std::unique_ptr<Loader>> device_loader = Loader::Create(OpenDataset(dir), device);
      ASSERT_TRUE(host_loader.ok()) << host_loader.status().ToString();
      ASSERT_TRUE(device_loader.ok()) << device_loader.status().ToString();
      size_t samples = 0;
      ForEachPair(**host_loader, **device_loader, [&](const Batch& h, const Batch& d) {
        ExpectSameBatch(device, h, d, true);
        ExpectFieldsOnDevice(device, h, d);
        samples += h.size();
      });
      ASSERT_FALSE(HasFatalFailure());
      EXPECT_EQ(samples, 29u);
    }
  }
}

// A mixture of two datasets goes to the device like one.
TEST_P(LoaderDeviceTest, MixtureBatchesAreTheHostBatchesConverted) {
  const TestDataset a = WriteDataset("device_mix_a");
  const TestDataset b = WriteDataset("device_mix_b");
  LoaderOptions cpu = SmallOptions();
  cpu.threads = 2;
  cpu.layout = ImageLayout::kNHWC;
  cpu.sampler.weights = {0.25, 0.75};
  const LoaderOptions device = OnDevice(cpu, DeviceDType::kFloat16, ImageLayout::kNCHW);
  Result<std::unique_ptr<Loader>> host_loader = Loader::Create({OpenDataset(a.dir), OpenDataset(b.dir)}, cpu);
  Result<std::unique_ptr<Loader>> device_loader = Loader::Create({OpenDataset(a.dir), OpenDataset(b.dir)}, device);
  ASSERT_TRUE(host_loader.ok()) << host_loader.status().ToString();
  ASSERT_TRUE(device_loader.ok()) << device_loader.status().ToString();
  const uint64_t batches = ForEachPair(**host_loader, **device_loader, [&](const Batch& h, const Batch& d) {
    ExpectSameBatch(device, h, d, GetParam().host_emulation);
  });
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_GT(batches, 0u);
}

// A packing loader of WriteFieldDataset's tokens.
LoaderOptions PackingTokens(size_t seq_len) {
  LoaderOptions options = SmallOptions();
  options.image_field.clear();
  options.label_field.clear();
  options.fields = {"tokens"};
  PackOptions pack;
  pack.seq_len = seq_len;
  options.pack = pack;
  return options;
}

// Packed batches (LoaderOptions::pack) go up like any batched fields: every
// output, rows and segment outputs, equal to the host loader's.
TEST_P(LoaderDeviceTest, PackedBatchesAreTheHostBatches) {
  const std::string dir = WriteFieldDataset("device_packed", /*with_image=*/false);
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kBestFit}) {
    SCOPED_TRACE(PackStrategyName(strategy));
    LoaderOptions cpu = PackingTokens(8);
    cpu.batch_size = 3;
    cpu.threads = 2;
    cpu.pack->window = 5;
    cpu.pack->strategy = strategy;
    cpu.pack->eos = -1;
    const LoaderOptions device = OnDevice(cpu, DeviceDType::kUint8, ImageLayout::kNHWC);
    Result<std::unique_ptr<Loader>> host_loader = Loader::Create(OpenDataset(dir), cpu);
    Result<std::unique_ptr<Loader>> device_loader = Loader::Create(OpenDataset(dir), device);
    ASSERT_TRUE(host_loader.ok()) << host_loader.status().ToString();
    ASSERT_TRUE(device_loader.ok()) << device_loader.status().ToString();
    size_t rows = 0;
    ForEachPair(**host_loader, **device_loader, [&](const Batch& h, const Batch& d) {
      ASSERT_EQ(h.size(), d.size());
      ASSERT_NE(d.field("cu_seqlens"), nullptr);
      ExpectFieldsOnDevice(device, h, d);
      rows += h.size();
    });
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_GT(rows, 10u);
  }
}

// A packing loader on a device has prefetch + 1 batch buffers there: the
// consumer holding all of them is told so (as by any loader), not a hang.
TEST(HostDeviceTest, PackedBatchesHeldPastTheBuffersAreAnError) {
  LoaderOptions options = PackingTokens(4);
  options.batch_size = 1;
  options.prefetch = 1;
  options.cuda.device = 0;
  options.cuda.host_emulation = true;
  Result<std::unique_ptr<Loader>> loader =
      Loader::Create(OpenDataset(WriteFieldDataset("device_packed_held", false)), options);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  std::vector<Batch> held;
  for (int i = 0; i < 2; ++i) {
    Result<Batch> next = (*loader)->Next();
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    held.push_back(std::move(next).value());
  }
  Result<Batch> third = (*loader)->Next();
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kFailedPrecondition) << third.status().ToString();
  held.pop_back();  // a buffer back: the loader goes on
  Result<Batch> after = (*loader)->Next();
  EXPECT_TRUE(after.ok()) << after.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Devices, LoaderDeviceTest,
                         ::testing::Values(DeviceCase{"HostDevice", true}, DeviceCase{"Cuda", false}),
                         [](const ::testing::TestParamInfo<DeviceCase>& info) { return std::string(info.param.name); });

// The host device poisons a released batch's buffers, host and device, at
// once (the first 64 bytes of every 4 KiB): a consumer that keeps reading a
// batch it released reads NaNs, not plausible pixels. The last batch of the
// epoch, so that no worker refills the slot meanwhile.
TEST(HostDeviceTest, ReleasedBatchIsPoisoned) {
  TestDataset data = WriteDataset("device_poison");
  LoaderOptions options = SmallOptions();
  options.threads = 2;
  options.cuda.device = 0;
  options.cuda.host_emulation = true;
  Result<std::unique_ptr<Loader>> loader = Loader::Create(OpenDataset(data.dir), options);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  Batch last;
  for (;;) {
    Result<Batch> next = (*loader)->Next();
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    if (next->empty()) break;
    last = std::move(next).value();
  }
  ASSERT_FALSE(last.empty());
  ASSERT_TRUE(last.Synchronize().ok());
  const float* device = static_cast<const float*>(last.device_images());
  const uint8_t* host = last.images();
  const size_t values = last.size() * 3 * kImageSize * kImageSize;
  for (size_t i = 0; i < values; ++i) ASSERT_FALSE(std::isnan(device[i])) << "value " << i << " before release";
  last.Release();
  // Poisoned: 16 floats and 64 bytes at the start of every 4 KiB.
  for (size_t i = 0; i < values; i += 1024) {
    for (size_t k = i; k < std::min(values, i + 16); ++k) {
      ASSERT_TRUE(std::isnan(device[k])) << "device value " << k << " survived the release";
    }
  }
  for (size_t i = 0; i < values; i += 4096) {
    for (size_t k = i; k < std::min(values, i + 64); ++k) ASSERT_EQ(host[k], 0xff) << "host byte " << k << " survived";
  }
}

// What the host device refuses: another device than 0.
TEST(HostDeviceTest, OnlyDeviceZeroExists) {
  TestDataset data = WriteDataset("device_one");
  LoaderOptions options = SmallOptions();
  options.cuda.device = 1;
  options.cuda.host_emulation = true;
  Result<std::unique_ptr<Loader>> loader = Loader::Create(OpenDataset(data.dir), options);
  ASSERT_FALSE(loader.ok());
  EXPECT_EQ(loader.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(loader.status().message().find("the host device is device 0"), std::string::npos)
      << loader.status().ToString();
}

}  // namespace
}  // namespace unirecord
