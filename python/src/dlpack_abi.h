// The DLPack exchange structures, used when dlpack/dlpack.h (Debian's
// libdlpack-dev) is not installed. Layout of DLPack v0.6, the version
// PyTorch 1.13 consumes: a DLManagedTensor capsule named "dltensor".
#ifndef UNIRECORD_PYTHON_DLPACK_ABI_H_
#define UNIRECORD_PYTHON_DLPACK_ABI_H_

#if defined(UNIRECORD_HAVE_DLPACK_H)
#include <dlpack/dlpack.h>
#else
#include <cstdint>

extern "C" {
typedef enum { kDLCPU = 1, kDLCUDA = 2 } DLDeviceType;
typedef struct {
  DLDeviceType device_type;
  int device_id;
} DLDevice;
typedef enum { kDLInt = 0U, kDLUInt = 1U, kDLFloat = 2U, kDLBool = 6U } DLDataTypeCode;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void* data;
  DLDevice device;
  int ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;
}
#endif

#endif  // UNIRECORD_PYTHON_DLPACK_ABI_H_
