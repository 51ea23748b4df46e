// Where the Loader's batches go on a CUDA device (LoaderOptions::cuda,
// loader.h), and whether this build can put them there. Implemented by the
// GPU layer: with CUDA when CMake found nvcc, as refusals otherwise.
#ifndef UNIRECORD_CUDA_H_
#define UNIRECORD_CUDA_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "unirecord/image.h"
#include "unirecord/status.h"

namespace unirecord {

enum class DeviceDType : uint8_t { kUint8, kFloat16, kFloat32 };

// "uint8" | "float16" | "float32"; parse returns InvalidArgument for another name.
const char* DeviceDTypeName(DeviceDType dtype);
Result<DeviceDType> ParseDeviceDType(std::string_view name);

// Where batches go when device >= 0 (needs a build with CUDA). The host
// buffers are then pinned; each finished batch is copied as uint8 NHWC on the
// loader's own stream, and one kernel writes `dtype` in `layout`, normalised
// as (x - mean) / std when `normalize`. Batch::ready_event() is recorded after
// the kernel: the consumer's stream waits on it (Batch::WaitOn), not the host.
struct CudaOptions {
  int device = -1;  // -1: batches stay on the CPU
  DeviceDType dtype = DeviceDType::kFloat32;
  ImageLayout layout = ImageLayout::kNCHW;
  bool normalize = true;
  // On the 0..255 scale: ImageNet's mean/std times 255.
  std::array<float, 3> mean = {123.675f, 116.28f, 103.53f};
  std::array<float, 3> std = {58.395f, 57.12f, 57.375f};
  // The stream that consumes batches (a cudaStream_t; nullptr: the legacy
  // default stream). A released batch's device buffer is rewritten only after
  // the work queued on this stream before the release.
  void* consumer_stream = nullptr;
  // Testing only: the device path runs against the host device, an
  // emulation of CUDA in ordinary memory (src/gpu/device_batches.h) that
  // every build has, instead of a GPU; device must be 0. The "device"
  // buffers are then host memory, Batch::WaitOn blocks, and released
  // buffers are poisoned. CI tests the device path with it.
  bool host_emulation = false;
};

// Whether this build of unirecord has the CUDA path (CMake found nvcc and
// UNIRECORD_ENABLE_CUDA was on). Without it, CudaOptions::device >= 0 makes
// Loader::Create fail with NotSupported (but with host_emulation).
bool BuiltWithCuda();

}  // namespace unirecord

#endif  // UNIRECORD_CUDA_H_
