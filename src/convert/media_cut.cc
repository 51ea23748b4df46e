#include "convert/media_cut.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "unirecord/media_value.h"

namespace unirecord::convert_internal {
namespace {

int64_t PresentedAt(const MediaPacket& p) { return p.pts != kNoTimestamp ? p.pts : p.dts; }

std::string Seconds(double s) {
  std::string text = std::to_string(s);
  return text.substr(0, text.find('.') + 4);
}

}  // namespace

Result<std::string> CutMediaValue(std::string_view stored, double start_s, double end_s, const std::string& what) {
  MediaValueView v;
  UREC_RETURN_IF_ERROR(ParseMediaValue(stored, what, &v));
  if (!(start_s >= 0) || (end_s >= 0 && end_s < start_s)) {
    return Status::InvalidArgument(what + ": start " + Seconds(start_s) + " s and end " + Seconds(end_s) +
                                   " s are not a range (0 <= start <= end)");
  }
  if (v.packets.empty()) return Status::InvalidArgument(what + ": no packets");
  const double unit = v.params.time_base();
  const bool video = v.params.kind == MediaKind::kVideo;
  const double from = static_cast<double>(v.params.start_pts) + (start_s - (video ? 0 : kAudioPreRollSeconds)) / unit;
  const double to = end_s < 0 ? std::numeric_limits<double>::infinity()
                              : static_cast<double>(v.params.start_pts) + end_s / unit;
  int64_t latest = std::numeric_limits<int64_t>::min();
  for (const MediaPacket& p : v.packets) latest = std::max(latest, PresentedAt(p));
  if (static_cast<double>(v.params.start_pts) + start_s / unit > static_cast<double>(latest) + 1e-6) {
    return Status::InvalidArgument(what + ": no packet in [" + Seconds(start_s) + ", " + Seconds(end_s) +
                                   "] s: start is past the stream's last (" + Seconds(v.seconds()) + " s)");
  }
  size_t first = v.packets.size(), last = 0;
  bool any = false;
  for (size_t i = 0; i < v.packets.size(); ++i) {
    const MediaPacket& p = v.packets[i];
    const double t = static_cast<double>(PresentedAt(p));
    if (video) {
      if (p.keyframe && (t <= from + 1e-6 || first == v.packets.size())) first = i;
    } else if (first == v.packets.size() && t + static_cast<double>(p.duration) > from) {
      first = i;
    }
    if (t <= to + 1e-6) {
      last = i;
      any = true;
    }
  }
  if (!any || first == v.packets.size() || last < first) {
    return Status::InvalidArgument(what + ": no packet in [" + Seconds(start_s) + ", " + Seconds(end_s) +
                                   "] s of a stream of " + Seconds(v.seconds()) + " s");
  }
  std::vector<MediaPacket> packets(v.packets.begin() + static_cast<std::ptrdiff_t>(first),
                                   v.packets.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  const uint64_t base = packets.front().offset;
  int64_t begin = std::numeric_limits<int64_t>::max(), finish = std::numeric_limits<int64_t>::min();
  for (MediaPacket& p : packets) {
    p.offset -= base;
    begin = std::min(begin, PresentedAt(p));
    finish = std::max(finish, PresentedAt(p) + p.duration);
  }
  MediaParams params = v.params;
  params.start_pts = begin;
  params.duration = finish - begin;
  const MediaPacket& back = packets.back();
  const std::string_view area = v.packet_area.substr(base, back.offset + back.size);
  return EncodeMediaValue(params, packets, v.extradata, area, what);
}

}  // namespace unirecord::convert_internal
