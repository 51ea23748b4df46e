// Which frames a clip loader's sample takes (ClipOptions, loader.h): pure
// functions of the stream's timestamps, the options and (seed, epoch,
// record), so a sample's clip is the same on every thread, run and machine.
// The clip decode stage (clip_decode_stage.h) decodes what this plans. Not
// public API.
#ifndef UNIRECORD_SRC_PIPELINE_CLIP_SAMPLING_H_
#define UNIRECORD_SRC_PIPELINE_CLIP_SAMPLING_H_

#include <cstdint>
#include <vector>

#include "unirecord/loader.h"

namespace unirecord::pipeline {

// The frames of a sample's clips.
struct ClipPlan {
  // clips_per_video * frames presentation timestamps (the stream's time
  // base), clip after clip; a clip longer than the video repeats its last
  // frame.
  std::vector<int64_t> pts;
  // Per clip: its first frame's time in seconds from the stream's start.
  std::vector<double> starts;
};

// `pts`: the stream's presentation timestamps in presentation order
// (MediaValueView::PresentationTimestamps, at least one), `time_base` its
// seconds per unit, `start_pts` its first presentation time. Stride: clip
// k starts at frame index s_k, drawn uniformly from the indices where the
// clip fits (or, centred, the middle one; K clips evenly spaced), and takes
// s_k, s_k + stride, ...; fps: at time t_k (drawn or centred likewise among
// the times where the clip fits) and takes the frames shown at t_k, t_k +
// 1/fps, ...
void PlanClips(const std::vector<int64_t>& pts, double time_base, int64_t start_pts, const ClipOptions& options,
               uint64_t seed, uint64_t epoch, uint64_t record, ClipPlan* plan);

}  // namespace unirecord::pipeline

#endif  // UNIRECORD_SRC_PIPELINE_CLIP_SAMPLING_H_
