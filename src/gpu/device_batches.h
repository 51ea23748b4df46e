// The CUDA side of the Loader: pinned host batch buffers, their device
// copies, the conversion kernel and the events that order it all. Always
// compiled: device_batches.cu implements it when CMake finds nvcc, and
// device_batches_stub.cc otherwise, where there are no devices and every call
// fails with NotSupported (BuiltWithCuda() tells which). Not public API.
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

// Per slot: a pinned host buffer of max_batch uint8 NHWC images, a device
// copy of it, a device buffer of the converted images, a pinned staging
// buffer and a device buffer for the batch's fields (both grown to the
// largest batch seen: padded fields vary in size), and three events:
// `copied` (host buffers reusable), `ready` (converted images and fields on
// the device) and `consumed` (the consumer's stream is done with the slot).
class DeviceBatches {
 public:
  // A host range uploaded with the images; Upload sets `device` to its copy
  // (in the slot's device buffer, valid until the slot is uploaded again).
  struct FieldUpload {
    const void* host = nullptr;
    size_t bytes = 0;
    const void* device = nullptr;
  };

  // height = width = 0: no images (a loader without an image field uploads
  // its fields alone).
  static Result<std::unique_ptr<DeviceBatches>> Create(const CudaOptions& options, size_t slots,
                                                       size_t max_batch, int height, int width);
  ~DeviceBatches();  // waits for queued work, then frees everything
  DeviceBatches(const DeviceBatches&) = delete;
  DeviceBatches& operator=(const DeviceBatches&) = delete;

  uint8_t* host(size_t slot) const { return slots_[slot].host; }
  const void* device_output(size_t slot) const { return slots_[slot].output; }
  void* ready_event(size_t slot) const { return slots_[slot].ready; }

  // Queues on the loader's stream: wait until the consumer is done with the
  // slot's previous batch, copy `count` images and the `fields` ranges
  // (staged in pinned memory) up, convert, record `ready`. Thread-safe for
  // distinct slots.
  Status Upload(size_t slot, size_t count, std::vector<FieldUpload>* fields = nullptr);
  // The consumer gave the slot back: marks `consumed` on the consumer stream
  // and waits (host) until the slot's upload has left the pinned buffer.
  Status Recycle(size_t slot);

 private:
  struct Slot {
    uint8_t* host = nullptr;    // pinned
    uint8_t* input = nullptr;   // device copy of `host`
    void* output = nullptr;     // converted; == input for uint8 NHWC
    void* copied = nullptr;     // cudaEvent_t
    void* ready = nullptr;
    void* consumed = nullptr;
    bool consumed_recorded = false;
    uint8_t* field_host = nullptr;    // pinned staging of the fields
    uint8_t* field_device = nullptr;  // their device copy
    size_t field_capacity = 0;        // bytes of each
  };
  // Grows the slot's field buffers to hold `bytes`.
  Status ReserveFields(Slot& slot, size_t bytes);
  DeviceBatches(const CudaOptions& options, int height, int width);

  CudaOptions options_;
  int height_;
  int width_;
  void* stream_ = nullptr;  // cudaStream_t, the loader's own
  std::vector<Slot> slots_;
};

// Makes `stream` wait for `event` on the device (cudaStreamWaitEvent).
Status StreamWaitEvent(void* stream, void* event);
// Blocks the host until `event` has happened (cudaEventSynchronize).
Status EventSynchronize(void* event);

// Converts `count` uint8 NHWC images on the device as DeviceBatches does
// (exposed for tests and benchmarks); queued on `stream`.
Status LaunchConvert(const uint8_t* input, void* output, size_t count, int height, int width,
                     const CudaOptions& options, void* stream);

}  // namespace unirecord::gpu

#endif  // UNIRECORD_SRC_GPU_DEVICE_BATCHES_H_
