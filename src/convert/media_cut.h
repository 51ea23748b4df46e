// Internal to the convert layer: a media value cut to a time range (a
// manifest row's start/end), so that several records of one long file each
// keep only the packets their range needs. Records cannot share blobs in
// format 1.3: each keeps its own copy of those packets.
#ifndef UNIRECORD_SRC_CONVERT_MEDIA_CUT_H_
#define UNIRECORD_SRC_CONVERT_MEDIA_CUT_H_

#include <string>
#include <string_view>

#include "unirecord/status.h"

namespace unirecord::convert_internal {

// The packets of `stored` (a media value, SPEC.md 6.4) that decode [start_s,
// end_s] (seconds from the stream's start; end_s < 0: to its end), as a new
// value: a video's from the keyframe at or before start_s to the last packet
// (in decode order) of a frame presented at or before end_s; an audio
// stream's from the packet holding start_s - kAudioPreRollSeconds (the
// decoder's pre-roll) to the last one starting at or before end_s. Its
// start_pts and duration are the kept packets'. InvalidArgument naming
// `what` for a range outside the stream or end_s < start_s.
inline constexpr double kAudioPreRollSeconds = 0.2;
Result<std::string> CutMediaValue(std::string_view stored, double start_s, double end_s, const std::string& what);

}  // namespace unirecord::convert_internal

#endif  // UNIRECORD_SRC_CONVERT_MEDIA_CUT_H_
