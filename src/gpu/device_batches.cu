#include "gpu/device_batches.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "gpu/cuda_status.h"

namespace unirecord {

bool BuiltWithCuda() { return true; }

namespace gpu {
namespace {

cudaStream_t AsStream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t AsEvent(void* e) { return static_cast<cudaEvent_t>(e); }

struct Affine {
  float mean[3];
  float inv_std[3];
};

template <typename T>
struct Out;
template <>
struct Out<float> {
  __device__ static void Store1(float* p, float v) { *p = v; }
  __device__ static void Store4(float* p, float a, float b, float c, float d) {
    *reinterpret_cast<float4*>(p) = make_float4(a, b, c, d);
  }
};
template <>
struct Out<__half> {
  __device__ static void Store1(__half* p, float v) { *p = __float2half_rn(v); }
  __device__ static void Store4(__half* p, float a, float b, float c, float d) {
    __half2 lo = __floats2half2_rn(a, b), hi = __floats2half2_rn(c, d);
    uint2 packed;
    packed.x = *reinterpret_cast<unsigned*>(&lo);
    packed.y = *reinterpret_cast<unsigned*>(&hi);
    *reinterpret_cast<uint2*>(p) = packed;
  }
};
template <>
struct Out<uint8_t> {
  __device__ static void Store1(uint8_t* p, float v) { *p = static_cast<uint8_t>(v); }
  __device__ static void Store4(uint8_t* p, float a, float b, float c, float d) {
    *reinterpret_cast<uchar4*>(p) = make_uchar4(static_cast<unsigned char>(a), static_cast<unsigned char>(b),
                                                static_cast<unsigned char>(c), static_cast<unsigned char>(d));
  }
};

// One thread per group of 4 pixels: three aligned 32-bit loads of 12 input
// bytes, and 4-wide stores per output plane (NCHW) or 12 outputs (NHWC).
// `vector` is false when alignment cannot be guaranteed (H*W not a multiple
// of 4); every pixel then goes through the scalar path.
template <typename T, bool kChw>
__global__ void ConvertKernel(const uint8_t* __restrict__ in, T* __restrict__ out, uint64_t pixels,
                              uint64_t plane, Affine affine, bool normalize, bool vector) {
  const uint64_t groups = (pixels + 3) / 4;
  for (uint64_t g = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; g < groups;
       g += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t p0 = g * 4;
    auto value = [&](unsigned byte, int c) {
      return normalize ? (static_cast<float>(byte) - affine.mean[c]) * affine.inv_std[c]
                       : static_cast<float>(byte);
    };
    if (vector && p0 + 4 <= pixels) {
      const uint32_t* words = reinterpret_cast<const uint32_t*>(in + p0 * 3);
      const uint32_t w0 = words[0], w1 = words[1], w2 = words[2];
      unsigned b[12];
      for (int i = 0; i < 4; ++i) {
        b[i] = (w0 >> (8 * i)) & 0xff;
        b[4 + i] = (w1 >> (8 * i)) & 0xff;
        b[8 + i] = (w2 >> (8 * i)) & 0xff;
      }
      if (kChw) {
        const uint64_t image = p0 / plane, q = p0 % plane;
        T* base = out + image * 3 * plane + q;
        for (int c = 0; c < 3; ++c) {
          Out<T>::Store4(base + c * plane, value(b[c], c), value(b[3 + c], c), value(b[6 + c], c),
                         value(b[9 + c], c));
        }
      } else {
        T* base = out + p0 * 3;
        for (int i = 0; i < 12; i += 4) {
          Out<T>::Store4(base + i, value(b[i], i % 3), value(b[i + 1], (i + 1) % 3),
                         value(b[i + 2], (i + 2) % 3), value(b[i + 3], (i + 3) % 3));
        }
      }
      continue;
    }
    for (uint64_t p = p0; p < p0 + 4 && p < pixels; ++p) {
      for (int c = 0; c < 3; ++c) {
        const float v = value(in[p * 3 + c], c);
        if (kChw) {
          Out<T>::Store1(out + (p / plane) * 3 * plane + c * plane + p % plane, v);
        } else {
          Out<T>::Store1(out + p * 3 + c, v);
        }
      }
    }
  }
}

template <typename T>
void Launch(const uint8_t* in, void* out, uint64_t pixels, uint64_t plane, const CudaOptions& o,
            cudaStream_t stream) {
  Affine affine;
  for (int c = 0; c < 3; ++c) {
    affine.mean[c] = o.mean[c];
    affine.inv_std[c] = 1.0f / o.std[c];
  }
  const bool normalize = o.normalize && o.dtype != DeviceDType::kUint8;
  const bool chw = o.layout == ImageLayout::kNCHW;
  const bool vector = !chw || plane % 4 == 0;
  const uint64_t groups = (pixels + 3) / 4;
  const int threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(groups / threads + 1, 1u << 20));
  if (chw) {
    ConvertKernel<T, true><<<blocks, threads, 0, stream>>>(in, static_cast<T*>(out), pixels, plane, affine,
                                                           normalize, vector);
  } else {
    ConvertKernel<T, false><<<blocks, threads, 0, stream>>>(in, static_cast<T*>(out), pixels, plane, affine,
                                                            normalize, vector);
  }
}

}  // namespace

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

Status LaunchConvert(const uint8_t* input, void* output, size_t count, int height, int width,
                     const CudaOptions& options, void* stream) {
  const uint64_t plane = uint64_t(height) * uint64_t(width);
  const uint64_t pixels = plane * count;
  if (pixels == 0) return Status::OK();
  switch (options.dtype) {
    case DeviceDType::kUint8: Launch<uint8_t>(input, output, pixels, plane, options, AsStream(stream)); break;
    case DeviceDType::kFloat16: Launch<__half>(input, output, pixels, plane, options, AsStream(stream)); break;
    case DeviceDType::kFloat32: Launch<float>(input, output, pixels, plane, options, AsStream(stream)); break;
  }
  UREC_CUDA_RETURN(cudaGetLastError(), "conversion kernel launch");
  return Status::OK();
}

Status CudaCopyToHost(int device, const void* source, void* host, size_t bytes) {
  UREC_CUDA_RETURN(cudaSetDevice(device), "cudaSetDevice");
  UREC_CUDA_RETURN(cudaMemcpy(host, source, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
  return Status::OK();
}

namespace {

class CudaDeviceBatches final : public DeviceBatches {
 public:
  CudaDeviceBatches(const CudaOptions& options, int height, int width)
      : options_(options), height_(height), width_(width) {}

  ~CudaDeviceBatches() override {
    if (stream_ == nullptr) return;  // cudaSetDevice failed: nothing was allocated
    cudaSetDevice(options_.device);
    cudaStreamSynchronize(AsStream(stream_));
    for (Slot& slot : slots_) {
      if (slot.output != slot.input) cudaFree(slot.output);
      cudaFree(slot.input);
      cudaFreeHost(slot.host);
      cudaFree(slot.field_device);
      cudaFreeHost(slot.field_host);
      for (void* event : {slot.copied, slot.ready, slot.consumed}) {
        if (event != nullptr) cudaEventDestroy(AsEvent(event));
      }
    }
    cudaStreamDestroy(AsStream(stream_));
  }

  Status Allocate(size_t slots, size_t max_batch) {
    UREC_CUDA_RETURN(cudaSetDevice(options_.device), "cudaSetDevice");
    cudaStream_t stream;
    UREC_CUDA_RETURN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    stream_ = stream;
    const size_t input_bytes = max_batch * size_t(height_) * size_t(width_) * 3;
    slots_.resize(slots);
    for (Slot& slot : slots_) {
      for (void** event : {&slot.copied, &slot.ready, &slot.consumed}) {
        cudaEvent_t e;
        UREC_CUDA_RETURN(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
        *event = e;
      }
      if (input_bytes == 0) continue;  // no image field: the batch's fields alone
      UREC_CUDA_RETURN(cudaHostAlloc(reinterpret_cast<void**>(&slot.host), input_bytes, cudaHostAllocDefault),
                       "cudaHostAlloc of a batch buffer");
      UREC_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&slot.input), input_bytes), "cudaMalloc");
      if (ConvertsImages(options_)) {
        UREC_CUDA_RETURN(cudaMalloc(&slot.output, input_bytes * DTypeBytes(options_.dtype)), "cudaMalloc");
      } else {
        slot.output = slot.input;
      }
    }
    return Status::OK();
  }

  uint8_t* host(size_t slot) const override { return slots_[slot].host; }
  const void* device_output(size_t slot) const override { return slots_[slot].output; }
  void* ready_event(size_t slot) const override { return slots_[slot].ready; }

  Status Upload(size_t index, size_t count, std::vector<FieldUpload>* fields) override {
    Slot& slot = slots_[index];
    cudaStream_t stream = AsStream(stream_);
    UREC_CUDA_RETURN(cudaSetDevice(options_.device), "cudaSetDevice");
    std::vector<FieldUpload> none;
    if (fields == nullptr) fields = &none;
    const FieldStaging staging(*fields);
    if (staging.bytes() > slot.field_capacity) UREC_RETURN_IF_ERROR(ReserveFields(slot, staging.bytes()));
    staging.Stage(fields, slot.field_host, slot.field_device);
    if (slot.consumed_recorded) {
      UREC_CUDA_RETURN(cudaStreamWaitEvent(stream, AsEvent(slot.consumed), 0), "cudaStreamWaitEvent");
    }
    const size_t bytes = count * size_t(height_) * size_t(width_) * 3;
    if (bytes > 0) {
      UREC_CUDA_RETURN(cudaMemcpyAsync(slot.input, slot.host, bytes, cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync of a batch");
    }
    if (staging.bytes() > 0) {
      UREC_CUDA_RETURN(
          cudaMemcpyAsync(slot.field_device, slot.field_host, staging.bytes(), cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync of a batch's fields");
    }
    UREC_CUDA_RETURN(cudaEventRecord(AsEvent(slot.copied), stream), "cudaEventRecord");
    if (slot.output != slot.input) {
      UREC_RETURN_IF_ERROR(LaunchConvert(slot.input, slot.output, count, height_, width_, options_, stream_));
    }
    UREC_CUDA_RETURN(cudaEventRecord(AsEvent(slot.ready), stream), "cudaEventRecord");
    return Status::OK();
  }

  Status Recycle(size_t index) override {
    Slot& slot = slots_[index];
    UREC_CUDA_RETURN(cudaSetDevice(options_.device), "cudaSetDevice");
    UREC_CUDA_RETURN(cudaEventRecord(AsEvent(slot.consumed), AsStream(options_.consumer_stream)),
                     "cudaEventRecord on the consumer stream");
    slot.consumed_recorded = true;
    UREC_CUDA_RETURN(cudaEventSynchronize(AsEvent(slot.copied)), "cudaEventSynchronize");
    return Status::OK();
  }

  Status WaitOn(size_t slot, void* stream) const override {
    UREC_CUDA_RETURN(cudaStreamWaitEvent(AsStream(stream), AsEvent(slots_[slot].ready), 0), "cudaStreamWaitEvent");
    return Status::OK();
  }

  Status Synchronize(size_t slot) const override {
    UREC_CUDA_RETURN(cudaEventSynchronize(AsEvent(slots_[slot].ready)), "cudaEventSynchronize");
    return Status::OK();
  }

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
  Status ReserveFields(Slot& slot, size_t bytes) {
    const size_t capacity = FieldStaging::GrownCapacity(slot.field_capacity, bytes);
    // The old buffers may go: Recycle waited until the slot's last upload
    // left the pinned one, and the consumer may still read the device one
    // until `consumed`.
    if (slot.consumed_recorded) {
      UREC_CUDA_RETURN(cudaEventSynchronize(AsEvent(slot.consumed)), "cudaEventSynchronize");
    }
    UREC_CUDA_RETURN(cudaFree(slot.field_device), "cudaFree");
    UREC_CUDA_RETURN(cudaFreeHost(slot.field_host), "cudaFreeHost");
    slot.field_device = nullptr;
    slot.field_host = nullptr;
    slot.field_capacity = 0;
    UREC_CUDA_RETURN(cudaHostAlloc(reinterpret_cast<void**>(&slot.field_host), capacity, cudaHostAllocDefault),
                     "cudaHostAlloc of a field buffer");
    UREC_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&slot.field_device), capacity), "cudaMalloc");
    slot.field_capacity = capacity;
    return Status::OK();
  }

  CudaOptions options_;
  int height_;
  int width_;
  void* stream_ = nullptr;  // cudaStream_t, the loader's own
  std::vector<Slot> slots_;
};

}  // namespace

Result<std::unique_ptr<DeviceBatches>> CreateCudaBatches(const CudaOptions& options, size_t slots, size_t max_batch,
                                                         int height, int width) {
  const int devices = DeviceCount();
  if (options.device < 0 || options.device >= devices) {
    return Status::InvalidArgument("CUDA device " + std::to_string(options.device) + " does not exist (" +
                                   std::to_string(devices) + " device(s) visible)");
  }
  auto batches = std::make_unique<CudaDeviceBatches>(options, height, width);
  UREC_RETURN_IF_ERROR(batches->Allocate(slots, max_batch));
  return Result<std::unique_ptr<DeviceBatches>>(std::unique_ptr<DeviceBatches>(std::move(batches)));  // nvcc wants it explicit
}

}  // namespace gpu
}  // namespace unirecord
