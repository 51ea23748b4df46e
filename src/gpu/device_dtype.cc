// The names of DeviceDType (cuda.h), in every build, with CUDA or without.
#include <string>

#include "unirecord/cuda.h"

namespace unirecord {

const char* DeviceDTypeName(DeviceDType dtype) {
  switch (dtype) {
    case DeviceDType::kUint8: return "uint8";
    case DeviceDType::kFloat16: return "float16";
    case DeviceDType::kFloat32: return "float32";
  }
  return "unknown";
}

Result<DeviceDType> ParseDeviceDType(std::string_view name) {
  for (DeviceDType t : {DeviceDType::kUint8, DeviceDType::kFloat16, DeviceDType::kFloat32}) {
    if (name == DeviceDTypeName(t)) return t;
  }
  return Status::InvalidArgument("unknown device dtype '" + std::string(name) +
                                 "' (expected 'uint8', 'float16' or 'float32')");
}

}  // namespace unirecord
