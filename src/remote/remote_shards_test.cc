// PrefetchWindow: which shards a remote dataset holds and downloads ahead of
// the reads, given the planned visits and the shards the reads have open.
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

}  // namespace
}  // namespace unirecord::remote
