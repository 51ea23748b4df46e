// The names of DeviceDType (cuda.h), in every build, with CUDA or without.
#include "unirecord/cuda.h"
#include "util/enum_names.h"

namespace unirecord {

constexpr EnumName<DeviceDType> kDeviceDTypeNames[] = {
    {DeviceDType::kUint8, "uint8"}, {DeviceDType::kFloat16, "float16"}, {DeviceDType::kFloat32, "float32"}};

const char* DeviceDTypeName(DeviceDType dtype) { return EnumNameOf(kDeviceDTypeNames, dtype); }

Result<DeviceDType> ParseDeviceDType(std::string_view name) {
  return ParseEnumName(kDeviceDTypeNames, name, "device dtype");
}

}  // namespace unirecord
