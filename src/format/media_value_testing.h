// Test and fuzz helper: a media value (format/SPEC.md 6.4) sealed again
// after a damage, as a writer with that mistake would have sealed it, so a
// damaged field reaches the check it is for instead of stopping at a
// checksum. Not library code.
#ifndef UNIRECORD_SRC_FORMAT_MEDIA_VALUE_TESTING_H_
#define UNIRECORD_SRC_FORMAT_MEDIA_VALUE_TESTING_H_

#include <cstdint>
#include <string>

#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"

namespace unirecord::format::testing {

// Recomputes each packet's checksum (those whose bytes lie in the packet
// area) and the table checksum, when the header's counts keep the table and
// extradata within `value`; leaves it alone otherwise.
inline void ResealMediaValue(std::string& value) {
  if (value.size() < kMediaHeaderSize) return;
  auto* p = reinterpret_cast<uint8_t*>(value.data());
  const uint64_t count = LoadLE<uint64_t>(p + kMediaPacketCountOffset);
  const uint32_t extra = LoadLE<uint32_t>(p + kMediaExtradataSizeOffset);
  if (count > kMaxMediaPackets) return;
  const uint64_t area = kMediaHeaderSize + count * kMediaPacketEntrySize + extra;
  if (area > value.size()) return;
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t* e = p + kMediaHeaderSize + i * kMediaPacketEntrySize;
    const uint64_t offset = LoadLE<uint64_t>(e + kMediaPacketDataOffset);
    const uint32_t size = LoadLE<uint32_t>(e + kMediaPacketSizeOffset);
    if (RangeWithin(offset, size, value.size() - area)) {
      StoreLE<uint64_t>(e + kMediaPacketChecksumOffset, Checksum(p + area + offset, size));
    }
  }
  StreamingChecksum sum;
  sum.Update(p, kMediaTableChecksumOffset);
  sum.Update(p + kMediaHeaderSize, area - kMediaHeaderSize);
  StoreLE<uint64_t>(p + kMediaTableChecksumOffset, sum.Digest());
}

}  // namespace unirecord::format::testing

#endif  // UNIRECORD_SRC_FORMAT_MEDIA_VALUE_TESTING_H_
