// The host device: DeviceBatches emulated in ordinary memory, so that the
// Loader's device path runs, and is tested, on machines without a GPU (CI's).
// It keeps CUDA's contract where a consumer could get it wrong:
//  - the "device" buffers are separate from the host ones: a consumer that
//    reads the host batch where it should read the device one sees the
//    difference;
//  - uploads complete asynchronously, in order, on a thread of its own (the
//    stream): `ready` means what it means on CUDA, and a consumer that skips
//    WaitOn/Synchronize races;
//  - a released slot's buffers, host and device, are poisoned at once
//    (kPoison bytes, NaN as float16 or float32, in the first 64 bytes of
//    every 4 KiB: a read of a released batch cannot miss them, at 1/64 of the
//    cost of a full fill, which would be a tenth of a 2-core loader's time),
//    so a batch read after its release fails loudly.
// The consumer has no streams here: WaitOn blocks, as Synchronize does, and
// `consumed` is the release itself.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>

#include "gpu/device_batches.h"
#include "gpu/host_convert.h"

namespace unirecord::gpu {
namespace {

constexpr uint8_t kPoison = 0xff;
constexpr size_t kPoisonStride = 4096;
constexpr size_t kPoisonRun = 64;

// Poisons the first kPoisonRun bytes of every kPoisonStride of [p, p + bytes).
void Poison(uint8_t* p, size_t bytes) {
  for (size_t at = 0; at < bytes; at += kPoisonStride) std::memset(p + at, kPoison, std::min(kPoisonRun, bytes - at));
}

// Tasks run in order on one thread; task k (1, 2, ...) has completed once
// completed() >= k. An event is the number of the last task queued before it.
class HostStream {
 public:
  HostStream() : thread_([this] { Run(); }) {}
  ~HostStream() {  // runs what is queued, then stops
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_one();
    thread_.join();
  }

  uint64_t Enqueue(std::function<void()> task) {
    uint64_t number;
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
      number = ++queued_;
    }
    work_cv_.notify_one();
    return number;
  }

  void WaitFor(uint64_t task) const {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return completed_ >= task; });
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and everything ran
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      ++completed_;
      done_cv_.notify_all();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  mutable std::condition_variable done_cv_;
  std::deque<std::function<void()>> tasks_;
  uint64_t queued_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// "Device" memory: 256-byte aligned, as cudaMalloc's.
struct AlignedFree {
  void operator()(uint8_t* p) const { std::free(p); }
};
using DeviceBuffer = std::unique_ptr<uint8_t, AlignedFree>;

Result<DeviceBuffer> Allocate(size_t bytes, const char* what) {
  if (bytes == 0) return DeviceBuffer();
  constexpr size_t kAlign = 256;
  void* p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  if (p == nullptr) {
    return Status::InvalidArgument(std::string("host device: cannot allocate ") + std::to_string(bytes) +
                                   " bytes for " + what);
  }
  return DeviceBuffer(static_cast<uint8_t*>(p));
}

class HostDeviceBatches final : public DeviceBatches {
 public:
  HostDeviceBatches(const CudaOptions& options, int height, int width)
      : options_(options), image_bytes_(size_t(height) * size_t(width) * 3), height_(height), width_(width) {}

  Status Allocate(size_t slots, size_t max_batch) {
    slots_.resize(slots);
    const size_t input_bytes = max_batch * image_bytes_;
    for (Slot& slot : slots_) {
      UREC_ASSIGN_OR_RETURN(slot.host, gpu::Allocate(input_bytes, "a batch buffer"));
      UREC_ASSIGN_OR_RETURN(slot.input, gpu::Allocate(input_bytes, "a device batch"));
      if (ConvertsImages(options_)) {
        UREC_ASSIGN_OR_RETURN(slot.converted,
                              gpu::Allocate(input_bytes * DTypeBytes(options_.dtype), "converted images"));
      }
      slot.output = ConvertsImages(options_) ? slot.converted.get() : slot.input.get();
    }
    return Status::OK();
  }

  uint8_t* host(size_t slot) const override { return slots_[slot].host.get(); }
  const void* device_output(size_t slot) const override { return slots_[slot].output; }
  void* ready_event(size_t slot) const override { return const_cast<uint64_t*>(&slots_[slot].ready); }

  Status Upload(size_t index, size_t count, std::vector<FieldUpload>* fields) override {
    Slot& slot = slots_[index];
    std::vector<FieldUpload> none;
    if (fields == nullptr) fields = &none;
    const FieldStaging staging(*fields);
    if (staging.bytes() > slot.field_capacity) {
      // Recycle waited until the slot's last upload had run: the old
      // buffers are free.
      const size_t capacity = FieldStaging::GrownCapacity(slot.field_capacity, staging.bytes());
      slot.field_capacity = 0;
      UREC_ASSIGN_OR_RETURN(slot.field_host, gpu::Allocate(capacity, "a field buffer"));
      UREC_ASSIGN_OR_RETURN(slot.field_device, gpu::Allocate(capacity, "a device field buffer"));
      slot.field_capacity = capacity;
    }
    staging.Stage(fields, slot.field_host.get(), slot.field_device.get());
    const size_t image_bytes = count * image_bytes_;
    const size_t field_bytes = staging.bytes();
    slot.count = count;
    slot.field_bytes = field_bytes;
    slot.ready = stream_.Enqueue([&slot, image_bytes, field_bytes] {
      if (image_bytes > 0) std::memcpy(slot.input.get(), slot.host.get(), image_bytes);
      if (field_bytes > 0) std::memcpy(slot.field_device.get(), slot.field_host.get(), field_bytes);
    });
    if (ConvertsImages(options_) && count > 0) {
      slot.ready = stream_.Enqueue([this, &slot, count] {
        ConvertOnHost(slot.input.get(), slot.converted.get(), count, height_, width_, options_);
      });
    }
    return Status::OK();
  }

  // Waits for the slot's whole upload (CUDA waits for its copy alone) so
  // that the poison lands after it.
  Status Recycle(size_t index) override {
    Slot& slot = slots_[index];
    stream_.WaitFor(slot.ready);
    const size_t input_bytes = slot.count * image_bytes_;
    Poison(slot.host.get(), input_bytes);
    Poison(slot.input.get(), input_bytes);
    if (ConvertsImages(options_)) Poison(slot.output, input_bytes * DTypeBytes(options_.dtype));
    Poison(slot.field_device.get(), slot.field_bytes);
    return Status::OK();
  }

  Status WaitOn(size_t slot, void* /*stream*/) const override { return Synchronize(slot); }

  Status Synchronize(size_t slot) const override {
    stream_.WaitFor(slots_[slot].ready);
    return Status::OK();
  }

 private:
  struct Slot {
    DeviceBuffer host;
    DeviceBuffer input;      // the device copy of `host`
    DeviceBuffer converted;  // when the kernel runs
    uint8_t* output = nullptr;  // converted, or input
    DeviceBuffer field_host;
    DeviceBuffer field_device;
    size_t field_capacity = 0;
    size_t count = 0;        // images of the last upload
    size_t field_bytes = 0;  // field bytes of the last upload
    uint64_t ready = 0;      // an event: the number of the upload's last stream task
  };

  const CudaOptions options_;
  const size_t image_bytes_;  // one image, uint8 HWC
  const int height_;
  const int width_;
  std::vector<Slot> slots_;
  mutable HostStream stream_;  // last: it runs what is queued and stops before the buffers go
};

}  // namespace

Result<std::unique_ptr<DeviceBatches>> CreateHostBatches(const CudaOptions& options, size_t slots, size_t max_batch,
                                                         int height, int width) {
  if (options.device != 0) {
    return Status::InvalidArgument("host device: device " + std::to_string(options.device) +
                                   " does not exist (the host device is device 0)");
  }
  std::unique_ptr<HostDeviceBatches> batches;
  try {  // the stream's thread
    batches = std::make_unique<HostDeviceBatches>(options, height, width);
  } catch (const std::system_error& e) {
    return Status::IOError(std::string("host device: cannot start its stream thread: ") + e.what());
  }
  UREC_RETURN_IF_ERROR(batches->Allocate(slots, max_batch));
  return std::unique_ptr<DeviceBatches>(std::move(batches));
}

}  // namespace unirecord::gpu
