#include "format/checksum.h"

#if UNIRECORD_XXH3_DISPATCH
#include <xxh_x86dispatch.h>
#endif

namespace unirecord::format {

// libxxhash's plain entry points run the SSE2 code it was compiled for; its
// _dispatch ones (x86-64 builds with DISPATCH=1, as Debian's) pick AVX2 or
// AVX-512 at run time: the hash of a 4 KiB token row takes half the time
// (bench/README.md, "Batches of any field"). CMakeLists.txt sets
// UNIRECORD_XXH3_DISPATCH when the library has them.
uint64_t Checksum(const void* data, size_t size, uint64_t seed) {
#if UNIRECORD_XXH3_DISPATCH
  return seed == 0 ? XXH3_64bits_dispatch(data, size) : XXH3_64bits_withSeed_dispatch(data, size, seed);
#else
  return seed == 0 ? XXH3_64bits(data, size) : XXH3_64bits_withSeed(data, size, seed);
#endif
}

void StreamingChecksum::Update(const void* data, size_t size) {
#if UNIRECORD_XXH3_DISPATCH
  XXH3_64bits_update_dispatch(state_, data, size);
#else
  XXH3_64bits_update(state_, data, size);
#endif
}

}  // namespace unirecord::format
