// PlanClips: which frames a clip takes, by stride and by time (variable
// frame rates), random and centred, on hand-worked timestamps.
#include "pipeline/clip_sampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace unirecord::pipeline {
namespace {

// n frames at pts 0, step, 2 * step, ...
std::vector<int64_t> EvenPts(int n, int64_t step) {
  std::vector<int64_t> pts;
  for (int i = 0; i < n; ++i) pts.push_back(i * step);
  return pts;
}

ClipOptions Clip(int frames, int stride) {
  ClipOptions o;
  o.frames = frames;
  o.stride = stride;
  return o;
}

TEST(ClipSamplingTest, StrideTakesEveryStrideFrameFromADrawnStartThatFits) {
  const std::vector<int64_t> pts = EvenPts(48, 512);
  const ClipOptions o = Clip(4, 3);
  std::set<int64_t> starts;
  for (uint64_t record = 0; record < 200; ++record) {
    ClipPlan plan;
    PlanClips(pts, 1.0 / 12288, 0, o, 7, 0, record, &plan);
    ASSERT_EQ(plan.pts.size(), 4u);
    const int64_t first = plan.pts[0] / 512;
    EXPECT_LE(first + 9, 47);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(plan.pts[i], (first + 3 * i) * 512);
    EXPECT_DOUBLE_EQ(plan.starts[0], first * 512 / 12288.0);
    starts.insert(first);
  }
  // Every start that fits (0 .. 38) is drawn at some record.
  EXPECT_EQ(starts.size(), 39u);
  EXPECT_EQ(*starts.rbegin(), 38);
}

TEST(ClipSamplingTest, TheSameKeyGivesTheSameClipAndTheEpochChangesIt) {
  const std::vector<int64_t> pts = EvenPts(300, 1);
  ClipPlan a, b;
  PlanClips(pts, 1.0 / 30, 0, Clip(16, 2), 1, 3, 5, &a);
  PlanClips(pts, 1.0 / 30, 0, Clip(16, 2), 1, 3, 5, &b);
  EXPECT_EQ(a.pts, b.pts);
  int differ = 0;
  for (uint64_t epoch = 4; epoch < 14; ++epoch) {
    PlanClips(pts, 1.0 / 30, 0, Clip(16, 2), 1, epoch, 5, &b);
    differ += a.pts != b.pts ? 1 : 0;
  }
  EXPECT_GE(differ, 8);
}

TEST(ClipSamplingTest, CentredClipsAreInTheMiddleOrSpreadEvenly) {
  const std::vector<int64_t> pts = EvenPts(21, 1);
  ClipOptions o = Clip(3, 2);  // spans 5 frames: starts 0..16
  o.centre = true;
  ClipPlan plan;
  PlanClips(pts, 0.1, 0, o, 0, 0, 0, &plan);
  EXPECT_EQ(plan.pts, (std::vector<int64_t>{8, 10, 12}));
  o.clips_per_video = 3;
  PlanClips(pts, 0.1, 0, o, 0, 0, 0, &plan);
  EXPECT_EQ(plan.pts, (std::vector<int64_t>{0, 2, 4, 8, 10, 12, 16, 18, 20}));
  EXPECT_EQ(plan.starts, (std::vector<double>{0.0, 0.8, 1.6}));
}

TEST(ClipSamplingTest, AClipLongerThanTheVideoRepeatsItsLastFrame) {
  ClipOptions o = Clip(4, 2);
  ClipPlan plan;
  PlanClips(EvenPts(3, 10), 0.01, 0, o, 0, 0, 0, &plan);
  EXPECT_EQ(plan.pts, (std::vector<int64_t>{0, 20, 20, 20}));
}

TEST(ClipSamplingTest, FpsTakesTheFrameShownAtEachTimeOfAVariableFrameRate) {
  // Frames at 0, 1, 4, 5, 8, 9, ... (units of 1/24 s): alternately 1 and 3 units long.
  std::vector<int64_t> pts;
  for (int i = 0; i < 40; ++i) pts.push_back(i + 2 * (i / 2));
  ClipOptions o = Clip(6, 1);
  o.fps = 12;  // every 2 units
  for (uint64_t record = 0; record < 50; ++record) {
    ClipPlan plan;
    PlanClips(pts, 1.0 / 24, 100, o, 3, 0, record, &plan);
    ASSERT_EQ(plan.pts.size(), 6u);
    EXPECT_DOUBLE_EQ(plan.starts[0], (plan.pts[0] - 100) / 24.0);
    // Some time t0 while the first frame is shown has each frame i the
    // last one not after t0 + i / 12 (found on a grid of 1/2400 s).
    const auto first = std::find(pts.begin(), pts.end(), plan.pts[0]);
    ASSERT_NE(first, pts.end());
    const double shown_until = first + 1 == pts.end() ? *first / 24.0 + 1 : *(first + 1) / 24.0;
    bool found = false;
    for (double t0 = *first / 24.0; t0 < shown_until && !found; t0 += 1 / 2400.0) {
      bool all = true;
      for (int i = 0; i < 6 && all; ++i) {
        const double t = t0 + i / 12.0;
        auto after = std::upper_bound(pts.begin(), pts.end(), static_cast<int64_t>(std::floor(t * 24 + 1e-6)));
        all = *(after - 1) == plan.pts[i];
      }
      found = all;
    }
    EXPECT_TRUE(found) << "record " << record;
    EXPECT_LE(plan.pts.back(), pts.back());
  }
}

}  // namespace
}  // namespace unirecord::pipeline
