#include "util/threads.h"

#include <sched.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

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

TEST(ParallelForTest, RunsEveryItemOnce) {
  for (int threads : {0, 1, 3, 64}) {
    std::vector<std::atomic<int>> runs(1000);
    ASSERT_TRUE(ParallelFor(runs.size(), threads, "threads", [&](size_t i) {
                  ++runs[i];
                  return Status::OK();
                }).ok());
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "item " << i << ", " << threads << " threads";
  }
  EXPECT_TRUE(ParallelFor(0, 4, "threads", [](size_t) { return Status::Internal("no items, no calls"); }).ok());
}

TEST(ParallelForTest, RunsTheThreadsItWasGivenAtOnce) {
  constexpr int kThreads = 4;
  std::atomic<int> arrived{0};
  std::atomic<int> saw_all{0};
  ASSERT_TRUE(ParallelFor(kThreads, kThreads, "threads", [&](size_t) {
                ++arrived;
                const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
                while (arrived.load() < kThreads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
                if (arrived.load() == kThreads) ++saw_all;
                return Status::OK();
              }).ok());
  EXPECT_EQ(saw_all.load(), kThreads);
}

TEST(ParallelForTest, ReturnsTheFailureOfTheLowestItem) {
  for (int threads : {1, 2, 8}) {
    Status status = ParallelFor(1000, threads, "threads", [](size_t i) {
      return i == 300 || i == 301 || i == 700 ? Status::Corruption("item " + std::to_string(i)) : Status::OK();
    });
    EXPECT_EQ(status.code(), StatusCode::kCorruption);
    EXPECT_EQ(status.message(), "item 300") << threads << " threads";
  }
}

TEST(ParallelForTest, StartsNoItemAfterAFailure) {
  std::atomic<size_t> started{0};
  Status status = ParallelFor(1000, 1, "threads", [&](size_t i) {
    ++started;
    return i == 10 ? Status::IOError("item 10") : Status::OK();
  });
  EXPECT_EQ(status.message(), "item 10");
  EXPECT_EQ(started.load(), 11u);
}

TEST(ParallelForTest, RefusesABadThreadCountBeforeRunningAnything) {
  bool ran = false;
  Status status = ParallelFor(10, -1, "writer: threads", [&](size_t) {
    ran = true;
    return Status::OK();
  });
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("writer: threads -1"), std::string::npos) << status.message();
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace unirecord
