// Little-endian loads and stores of fixed-width values at any alignment
// (format/SPEC.md: every fixed-width value on disk is little-endian).
#ifndef UNIRECORD_FORMAT_ENDIAN_H_
#define UNIRECORD_FORMAT_ENDIAN_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace unirecord::format {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "unirecord reads files by mapping them; big-endian hosts are not supported yet"
#endif

template <typename T>
inline T LoadLE(const uint8_t* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T>
inline void StoreLE(uint8_t* p, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::memcpy(p, &value, sizeof(T));
}

inline uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// True when [offset, offset + length) lies inside [0, limit),
// without overflowing.
inline bool RangeWithin(uint64_t offset, uint64_t length, uint64_t limit) {
  return offset <= limit && length <= limit - offset;
}

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_ENDIAN_H_
