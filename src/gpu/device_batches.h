// The Loader's device stage: the one interface through which it reaches a
// device (batch buffers, upload, ready/consumed ordering, release), with two
// implementations chosen at Create:
//  - CUDA (device_batches.cu when CMake finds nvcc; device_batches_stub.cc,
//    which refuses with NotSupported, otherwise);
//  - the host device (host_device_batches.cc, every build), which emulates
//    CUDA in ordinary memory so that every machine, CI's included, runs the
//    device path: separate "device" buffers per slot, the conversion
//    kernel's CPU reference (host_convert.h), uploads completed in order on a
//    thread of its own, and released buffers poisoned. Tests select it with
//    CudaOptions::host_emulation; it is no user feature.
// Not public API.
#ifndef UNIRECORD_SRC_GPU_DEVICE_BATCHES_H_
#define UNIRECORD_SRC_GPU_DEVICE_BATCHES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "unirecord/cuda.h"
#include "unirecord/status.h"

namespace unirecord::gpu {

// Devices the CUDA runtime sees; 0 when there is none, no driver, or no CUDA
// in this build.
int DeviceCount();

// Bytes of one converted value.
inline size_t DTypeBytes(DeviceDType dtype) {
  switch (dtype) {
    case DeviceDType::kUint8: return 1;
    case DeviceDType::kFloat16: return 2;
    case DeviceDType::kFloat32: return 4;
  }
  return 4;
}

// Whether the conversion kernel runs: any other dtype or layout than the
// uint8 NHWC the host batch holds (else the converted images are the copy).
inline bool ConvertsImages(const CudaOptions& options) {
  return !(options.dtype == DeviceDType::kUint8 && options.layout == ImageLayout::kNHWC);
}

// Per slot: a host buffer of max_batch uint8 NHWC images (pinned on CUDA),
// a device copy of it, a device buffer of the converted images, a host
// staging buffer and a device buffer for the batch's fields (both grown to
// the largest batch seen: padded fields vary in size), and three events:
// `copied` (host buffers reusable), `ready` (converted images and fields on
// the device) and `consumed` (the consumer is done with the slot).
class DeviceBatches {
 public:
  // A host range uploaded with the images; Upload sets `device` to its copy
  // (in the slot's device buffer, valid until the slot is uploaded again).
  struct FieldUpload {
    const void* host = nullptr;
    size_t bytes = 0;
    const void* device = nullptr;
  };

  // The host device when options.host_emulation, else CUDA's.
  // height = width = 0: no images (a loader without an image field uploads
  // its fields alone).
  static Result<std::unique_ptr<DeviceBatches>> Create(const CudaOptions& options, size_t slots,
                                                       size_t max_batch, int height, int width);
  virtual ~DeviceBatches() = default;  // implementations wait for queued work, then free everything

  virtual uint8_t* host(size_t slot) const = 0;
  virtual const void* device_output(size_t slot) const = 0;
  // The slot's `ready` event: a cudaEvent_t on CUDA, an opaque handle on the
  // host device.
  virtual void* ready_event(size_t slot) const = 0;

  // Queues on the loader's stream: wait until the consumer is done with the
  // slot's previous batch, copy `count` images and the `fields` ranges
  // (staged in the slot's host buffer, FieldStaging) up, convert, record
  // `ready`. Thread-safe for distinct slots.
  virtual Status Upload(size_t slot, size_t count, std::vector<FieldUpload>* fields = nullptr) = 0;
  // The consumer gave the slot back: marks `consumed` on the consumer stream
  // and waits (host) until the slot's upload has left the host buffer.
  virtual Status Recycle(size_t slot) = 0;
  // Makes `stream` (the consumer's; nullptr: the default stream) wait for
  // the slot's `ready` without blocking the host (the host device has no
  // streams: it blocks).
  virtual Status WaitOn(size_t slot, void* stream) const = 0;
  // Blocks the host until the slot's `ready`.
  virtual Status Synchronize(size_t slot) const = 0;
};

// Copies `bytes` of the device memory of DeviceBatches made with `options`
// to the host (tests and tools that check what arrived; the batch must be
// ready: Batch::Synchronize).
Status CopyDeviceToHost(const CudaOptions& options, const void* device, void* host, size_t bytes);

// The byte layout of a batch's field ranges in the slot's field buffers,
// shared by both devices: each range at a 256-byte boundary, as cudaMalloc
// aligns, so that any element type is aligned on the device.
class FieldStaging {
 public:
  explicit FieldStaging(const std::vector<DeviceBatches::FieldUpload>& fields);
  size_t bytes() const { return bytes_; }
  // Copies each range to its place in `staging` (bytes() long) and points its
  // `device` at the same place in `device_buffer`.
  void Stage(std::vector<DeviceBatches::FieldUpload>* fields, uint8_t* staging, const uint8_t* device_buffer) const;
  // The capacity a slot's field buffers grow to for `needed` bytes (doubling:
  // padded fields grow with a batch's longest sample, and each growth costs
  // an allocation of pinned memory).
  static size_t GrownCapacity(size_t capacity, size_t needed);

 private:
  std::vector<size_t> offsets_;
  size_t bytes_ = 0;
};

// The two implementations (Create chooses).
Result<std::unique_ptr<DeviceBatches>> CreateCudaBatches(const CudaOptions& options, size_t slots, size_t max_batch,
                                                         int height, int width);
Result<std::unique_ptr<DeviceBatches>> CreateHostBatches(const CudaOptions& options, size_t slots, size_t max_batch,
                                                         int height, int width);

// cudaMemcpy to the host (CopyDeviceToHost on CUDA).
Status CudaCopyToHost(int device, const void* source, void* host, size_t bytes);

// Converts `count` uint8 NHWC images on the CUDA device as DeviceBatches does
// (exposed for tests and benchmarks); queued on `stream`.
Status LaunchConvert(const uint8_t* input, void* output, size_t count, int height, int width,
                     const CudaOptions& options, void* stream);

}  // namespace unirecord::gpu

#endif  // UNIRECORD_SRC_GPU_DEVICE_BATCHES_H_
