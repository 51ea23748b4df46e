// The CUDA side of the Loader: pinned host batch buffers, their device
// copies, the conversion kernel and the events that order it all. Built only
// when CMake finds nvcc (UNIRECORD_WITH_CUDA); nothing here is public API.
#ifndef UNIRECORD_SRC_GPU_DEVICE_BATCHES_H_
#define UNIRECORD_SRC_GPU_DEVICE_BATCHES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "unirecord/loader.h"
#include "unirecord/status.h"

namespace unirecord::gpu {

// Devices the CUDA runtime sees; 0 when there is none or no driver.
int DeviceCount();

// Per slot: a pinned host buffer of max_batch uint8 NHWC images, a device
// copy of it, a device buffer of the converted images and three events:
// `copied` (host buffer reusable), `ready` (converted images on the device)
// and `consumed` (the consumer's stream is done with the slot).
class DeviceBatches {
 public:
  static Result<std::unique_ptr<DeviceBatches>> Create(const CudaOptions& options, size_t slots,
                                                       size_t max_batch, int height, int width);
  ~DeviceBatches();  // waits for queued work, then frees everything
  DeviceBatches(const DeviceBatches&) = delete;
  DeviceBatches& operator=(const DeviceBatches&) = delete;

  uint8_t* host(size_t slot) const { return slots_[slot].host; }
  const void* device_output(size_t slot) const { return slots_[slot].output; }
  void* ready_event(size_t slot) const { return slots_[slot].ready; }

  // Queues on the loader's stream: wait until the consumer is done with the
  // slot's previous batch, copy `count` images up, convert, record `ready`.
  // Thread-safe for distinct slots.
  Status Upload(size_t slot, size_t count);
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
  };
  DeviceBatches(const CudaOptions& options, size_t max_batch, int height, int width);

  CudaOptions options_;
  size_t max_batch_;
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

// Bandwidths measured on `device` for `bytes` per transfer, best of `repeats`:
// pinned host -> device cudaMemcpy, and device -> device cudaMemcpy counting
// bytes read plus written (the yardstick for the conversion kernel).
struct CopyBandwidth {
  double host_to_device_gbps = 0;
  double device_to_device_gbps = 0;
};
Result<CopyBandwidth> MeasureCopyBandwidth(int device, size_t bytes, int repeats);

}  // namespace unirecord::gpu

#endif  // UNIRECORD_SRC_GPU_DEVICE_BATCHES_H_
