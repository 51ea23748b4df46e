#include "util/threads.h"

#include <sched.h>

#include <gtest/gtest.h>

namespace unirecord {
namespace {

TEST(ThreadsTest, ZeroMeansTheCoresOfTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(UsableCores(), CPU_COUNT(&set));
  Result<int> all = ResolveThreadCount(0, "threads");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, std::min(CPU_COUNT(&set), kMaxThreads));
}

TEST(ThreadsTest, ExplicitCountsUpToTheMaximumAreKept) {
  EXPECT_EQ(*ResolveThreadCount(1, "threads"), 1);
  EXPECT_EQ(*ResolveThreadCount(kMaxThreads, "threads"), kMaxThreads);
}

TEST(ThreadsTest, NegativeAndHugeCountsNameTheOptionAndTheRange) {
  for (int bad : {-1, kMaxThreads + 1, 100000}) {
    Result<int> r = ResolveThreadCount(bad, "--threads");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--threads " + std::to_string(bad)), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(std::to_string(kMaxThreads)), std::string::npos);
  }
}

}  // namespace
}  // namespace unirecord
