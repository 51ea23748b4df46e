// PrefetchWindow: which shards a remote dataset holds and downloads ahead of
// the reads, given the planned visits and the shards the reads have open;
// MoveCursor: where the reads are in the plan.
#include "remote/remote_shards.h"

#include <gtest/gtest.h>

#include <set>

namespace unirecord::remote {
namespace {

std::vector<uint32_t> Window(const std::vector<uint32_t>& visits, size_t cursor, int prefetch,
                             const std::set<uint32_t>& open) {
  return PrefetchWindow(visits, cursor, prefetch, [&](uint32_t s) { return open.count(s) != 0; });
}

using V = std::vector<uint32_t>;

// Block shuffle with a window of 2 shards: pairs (5, 7), (2, 12), (8, 1),
// their records interleaved.
const V kBlockVisits = {5, 7, 5, 7, 7, 5, 2, 12, 2, 12, 12, 2, 8, 1, 8, 1};

TEST(PrefetchWindowTest, NothingOpenTakesTheNextDistinctShards) {
  EXPECT_EQ(Window(kBlockVisits, 0, 3, {}), (V{5, 7, 2}));
  EXPECT_EQ(Window(kBlockVisits, 0, 1, {}), (V{5}));
}

TEST(PrefetchWindowTest, ShardsBeingReadDoNotCountAgainstThePrefetch) {
  // The reads have the pair (5, 7) open: the whole next pair and one more are
  // downloaded ahead, not only the next pair's first shard.
  EXPECT_EQ(Window(kBlockVisits, 1, 3, {5, 7}), (V{7, 5, 2, 12, 8}));
  // Half way into the next pair: 2 is open (12 not yet).
  EXPECT_EQ(Window(kBlockVisits, 6, 3, {5, 7, 2}), (V{2, 12, 8, 1}));
}

TEST(PrefetchWindowTest, EndsWithThePlanAndWithoutPrefetch) {
  EXPECT_EQ(Window(kBlockVisits, 12, 3, {}), (V{8, 1}));
  EXPECT_EQ(Window(kBlockVisits, kBlockVisits.size(), 3, {}), V{});
  EXPECT_EQ(Window(kBlockVisits, 0, 0, {}), V{});
  // Everything open: the rest of the plan (no download needed).
  EXPECT_EQ(Window(kBlockVisits, 3, 2, {5, 7, 2, 12, 8, 1}), (V{7, 5, 2, 12, 8, 1}));
}

TEST(PrefetchWindowTest, FullShuffleRevisitsCountOnce) {
  const V shuffled = {3, 0, 3, 1, 0, 2, 3, 1};
  EXPECT_EQ(Window(shuffled, 0, 2, {}), (V{3, 0}));
  EXPECT_EQ(Window(shuffled, 0, 2, {3}), (V{3, 0, 1}));
}

TEST(MoveCursorTest, FollowsReadsInThePlannedOrder) {
  // Plans have no shard twice in a row (Plan merges them).
  const V visits = {5, 7, 5, 7, 5, 2, 12, 2, 12, 2, 8, 1, 8, 1};
  size_t cursor = 0;
  for (size_t v = 0; v < visits.size(); ++v) {
    cursor = MoveCursor(visits, cursor, visits[v], 256);
    EXPECT_EQ(cursor, v);
  }
}

TEST(MoveCursorTest, AlternatingShardsKeepMovingForward) {
  // Reads of a window of two shards, one after the other: each read's shard
  // is both one visit behind and one ahead; the cursor goes ahead.
  EXPECT_EQ(MoveCursor(kBlockVisits, 1, 5, 256), 2u);
  EXPECT_EQ(MoveCursor(kBlockVisits, 2, 7, 256), 3u);
}

TEST(MoveCursorTest, ALateReadDoesNotJumpToALaterVisit) {
  // Epoch 0 ends with the pair (8, 1); epoch 1 visits 3, 4, 6, then 8. A
  // thread's last read of 8 arrives after another thread read the epoch's
  // last record (of 1): the cursor stays, so the window still holds epoch
  // 1's first shards.
  const V two_epochs = {5, 7, 5, 8, 1, 8, 1, 3, 4, 3, 6, 8};
  EXPECT_EQ(MoveCursor(two_epochs, 6, 8, 256), 6u);
  // The same read in order (the cursor still at 8's visit) stays there too.
  EXPECT_EQ(MoveCursor(two_epochs, 5, 8, 256), 5u);
  // Once the reads are in epoch 1, a read of 8 is its visit there.
  EXPECT_EQ(MoveCursor(two_epochs, 10, 8, 256), 11u);
}

TEST(MoveCursorTest, TheNearerVisitWins) {
  const V visits = {2, 0, 1, 3, 4, 5, 2};
  EXPECT_EQ(MoveCursor(visits, 1, 2, 256), 1u);  // behind by 1, ahead by 5
  EXPECT_EQ(MoveCursor(visits, 5, 2, 256), 6u);  // behind by 5, ahead by 1
}

TEST(MoveCursorTest, AShardOutsideTheSearchLeavesTheCursor) {
  const V visits = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(MoveCursor(visits, 2, 7, 3), 2u);
  EXPECT_EQ(MoveCursor(visits, 2, 5, 3), 5u);
  EXPECT_EQ(MoveCursor(visits, 2, 9, 256), 2u);  // not in the plan
  EXPECT_EQ(MoveCursor(V{}, 0, 1, 256), 0u);
}

}  // namespace
}  // namespace unirecord::remote
