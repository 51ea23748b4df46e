#include "pipeline/clip_sampling.h"

#include <algorithm>
#include <cmath>

#include "util/splitmix64.h"

namespace unirecord::pipeline {
namespace {

// Draw numbers of the clips' starts in the sample's keyed stream, past the
// crop's (image/crop_plan.cc uses 0..22 of the same key).
constexpr uint64_t kDrawClipStart = 64;

// Where clip k starts, as a fraction of the room the clips have: drawn
// uniformly in [0, 1), or centred (one clip: the middle; K: evenly spaced
// from the first place to the last).
double StartFraction(const ClipOptions& o, const KeyedRandom& random, int k) {
  if (!o.centre) return random.Uniform(kDrawClipStart + static_cast<uint64_t>(k));
  return o.clips_per_video == 1 ? 0.5 : static_cast<double>(k) / (o.clips_per_video - 1);
}

}  // namespace

void PlanClips(const std::vector<int64_t>& pts, double time_base, int64_t start_pts, const ClipOptions& o,
               uint64_t seed, uint64_t epoch, uint64_t record, ClipPlan* plan) {
  const KeyedRandom random(seed, epoch, record);
  const int64_t n = static_cast<int64_t>(pts.size());
  plan->pts.clear();
  plan->starts.clear();
  for (int k = 0; k < o.clips_per_video; ++k) {
    if (o.fps > 0) {
      // Times from the first frame's; the frame shown at t is the last one
      // whose timestamp is not after it (a tolerance of a millionth of a unit
      // absorbs the rounding of t / time_base).
      const double last = static_cast<double>(pts.back() - pts.front()) * time_base;
      const double room = std::max(0.0, last - (o.frames - 1) / o.fps);
      const double t0 = StartFraction(o, random, k) * room;
      for (int i = 0; i < o.frames; ++i) {
        const double target = static_cast<double>(pts.front()) + (t0 + i / o.fps) / time_base + 1e-6;
        // At or past the last frame's time (a very low fps): the last frame,
        // without converting a time beyond any int64 timestamp.
        auto after = target >= static_cast<double>(pts.back())
                         ? pts.end()
                         : std::upper_bound(pts.begin(), pts.end(), static_cast<int64_t>(std::floor(target)));
        plan->pts.push_back(after == pts.begin() ? pts.front() : *(after - 1));
      }
    } else {
      const int64_t span = int64_t{o.frames - 1} * o.stride + 1;
      const int64_t positions = std::max<int64_t>(n - span, 0) + 1;
      // Random: one of the `positions` starts; centred: the nearest to the fraction.
      const double fraction = StartFraction(o, random, k);
      const int64_t first = o.centre ? std::llround(fraction * static_cast<double>(positions - 1))
                                     : std::min<int64_t>(positions - 1, static_cast<int64_t>(fraction * positions));
      for (int i = 0; i < o.frames; ++i) {
        plan->pts.push_back(pts[static_cast<size_t>(std::min<int64_t>(first + int64_t{i} * o.stride, n - 1))]);
      }
    }
    plan->starts.push_back(static_cast<double>(plan->pts[size_t(k) * size_t(o.frames)] - start_pts) * time_base);
  }
}

}  // namespace unirecord::pipeline
