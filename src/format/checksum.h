// XXH3-64, the one checksum of the format (format/SPEC.md, conventions).
#ifndef UNIRECORD_FORMAT_CHECKSUM_H_
#define UNIRECORD_FORMAT_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

#include <xxhash.h>

namespace unirecord::format {

// With the widest vector unit the CPU has, where libxxhash offers its
// run-time dispatch (checksum.cc): the value is the same on every CPU.
uint64_t Checksum(const void* data, size_t size, uint64_t seed = 0);

// Incremental XXH3-64 (seed 0) for data written in pieces.
class StreamingChecksum {
 public:
  StreamingChecksum() : state_(XXH3_createState()) { Reset(); }
  ~StreamingChecksum() { XXH3_freeState(state_); }
  StreamingChecksum(const StreamingChecksum&) = delete;
  StreamingChecksum& operator=(const StreamingChecksum&) = delete;

  void Reset() { XXH3_64bits_reset(state_); }
  void Update(const void* data, size_t size);
  uint64_t Digest() const { return XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_CHECKSUM_H_
