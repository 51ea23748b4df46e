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
#if UNIRECORD_XXH3_DISPATCH
namespace {

// The dispatched AVX2 / AVX-512 code returns with the upper halves of the
// vector registers dirty (no vzeroupper on its way out), and every legacy
// SSE instruction after it then pays the SSE/AVX transition penalty until
// they are cleared: FFmpeg's FLAC decoder (SSE4 LPC) decoded an audio window
// 1.8x slower right after the packets' checks (bench/README.md, "Video clips
// and audio windows"). Cleared after each dispatched call. The library's own
// code here is compiled without AVX, so no live value sits in those halves.
void ClearUpperVectorHalves() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has_avx = __builtin_cpu_supports("avx");
  if (has_avx) __asm__ volatile("vzeroupper");
#endif
}

}  // namespace
#endif

uint64_t Checksum(const void* data, size_t size, uint64_t seed) {
#if UNIRECORD_XXH3_DISPATCH
  const uint64_t sum = seed == 0 ? XXH3_64bits_dispatch(data, size) : XXH3_64bits_withSeed_dispatch(data, size, seed);
  ClearUpperVectorHalves();
  return sum;
#else
  return seed == 0 ? XXH3_64bits(data, size) : XXH3_64bits_withSeed(data, size, seed);
#endif
}

void StreamingChecksum::Update(const void* data, size_t size) {
#if UNIRECORD_XXH3_DISPATCH
  XXH3_64bits_update_dispatch(state_, data, size);
  ClearUpperVectorHalves();
#else
  XXH3_64bits_update(state_, data, size);
#endif
}

}  // namespace unirecord::format
