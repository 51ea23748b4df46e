// CUDA runtime errors as Status, for the .cu files of this directory.
#ifndef UNIRECORD_SRC_GPU_CUDA_STATUS_H_
#define UNIRECORD_SRC_GPU_CUDA_STATUS_H_

#include <cuda_runtime.h>

#include <string>

#include "unirecord/status.h"

namespace unirecord::gpu {

inline Status CudaError(cudaError_t err, const char* what) {
  return Status::Internal(std::string("CUDA ") + what + ": " + cudaGetErrorString(err));
}

}  // namespace unirecord::gpu

// Returns CudaError(..., what) from the enclosing function when `expr` fails.
#define UREC_CUDA_RETURN(expr, what)                                                         \
  do {                                                                                       \
    cudaError_t urec_cuda_err_ = (expr);                                                     \
    if (urec_cuda_err_ != cudaSuccess) return ::unirecord::gpu::CudaError(urec_cuda_err_, what); \
  } while (0)

#endif  // UNIRECORD_SRC_GPU_CUDA_STATUS_H_
