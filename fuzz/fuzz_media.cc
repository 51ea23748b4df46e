// Fuzz target for media values (format/SPEC.md section 6.4): bytes ->
// ParseMediaValue; a value that parses and whose packets match their
// checksums must encode back to the same bytes (a damaged packet parses: it
// is refused when used), and its first frames or first window go through
// the decoders, which check each packet they are given (one of each,
// reused across inputs as a loader thread does). Every call must return a
// Status: the packet table reader checks every offset, count and name before
// use, and FFmpeg's decoders get only packets inside the value.
//
// Seeds: fuzz/corpus/media/ (tiny H.264, MPEG-4 and Opus values as
// unirecord.demux stores them, and damaged copies: tests/data/golden/v1_3-media/).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "format/media_value_testing.h"
#include "unirecord/media.h"

namespace {

void Run(std::string_view bytes) {
  static unirecord::media::VideoDecoder video;
  static unirecord::media::AudioDecoder audio;
  unirecord::MediaValueView value;
  if (!unirecord::ParseMediaValue(bytes, "fuzz", &value).ok()) return;
  bool packets_sound = true;
  for (size_t i = 0; i < value.packets.size(); ++i) packets_sound = packets_sound && value.CheckPacket(i, "fuzz").ok();
  auto again = unirecord::EncodeMediaValue(value.params, value.packets, value.extradata, value.packet_area, "fuzz");
  if (!again.ok() || (packets_sound && *again != bytes)) std::abort();  // what parses is what encodes
  // Decoding is bounded: small frames and few packets only, so each run stays fast.
  if (value.packets.size() > 64) return;
  if (value.params.kind == unirecord::MediaKind::kVideo) {
    if (static_cast<int64_t>(value.params.width) * value.params.height > 256 * 256) return;
    (void)video.FramesAt(value, {0, value.frames() - 1}, "fuzz");
  } else {
    unirecord::media::AudioWindowOptions options;
    options.rate = 8000;
    (void)audio.Window(value, 0.0, 0.05, options, "fuzz");
  }
}

}  // namespace

// The input as it is (the checksums refuse most mutations), then sealed
// again, so that mutations reach the table's checks and the decoders.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Run(bytes);
  std::string sealed(bytes);
  unirecord::format::testing::ResealMediaValue(sealed);
  if (sealed != bytes) Run(sealed);
  return 0;
}
