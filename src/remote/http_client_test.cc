// TransferWatch: when an attempt has made too little progress. Times are
// given, not measured: the verdicts at each second are exact.
#include "remote/http_client.h"

#include <gtest/gtest.h>

namespace unirecord::remote {
namespace {

using Verdict = TransferWatch::Verdict;

RemoteOptions Options(int timeout_s, int min_rate, int window_s) {
  RemoteOptions options;
  options.timeout_s = timeout_s;
  options.min_rate_bytes_per_s = min_rate;
  options.min_rate_window_s = window_s;
  return options;
}

TEST(TransferWatchTest, StallAfterBytesEndsTimeoutAfterTheLastByte) {
  // libcurl's low speed check saw this ~6 s late: its speed is an average
  // over its last 5 s.
  TransferWatch watch(Options(2, 0, 30));
  EXPECT_EQ(watch.Observe(0.5, 100000), Verdict::kGoOn);
  EXPECT_EQ(watch.Observe(1.0, 200000), Verdict::kGoOn);
  EXPECT_EQ(watch.Observe(2.0, 200000), Verdict::kGoOn);
  EXPECT_EQ(watch.Observe(2.9, 200000), Verdict::kGoOn);
  EXPECT_EQ(watch.Observe(3.0, 200000), Verdict::kIdle);
  EXPECT_NE(watch.Describe(Verdict::kIdle).find("no byte received for 2 s (timeout_s)"), std::string::npos);
}

TEST(TransferWatchTest, NoByteAtAllEndsAtTimeout) {
  TransferWatch watch(Options(3, 0, 30));
  EXPECT_EQ(watch.Observe(1.0, 0), Verdict::kGoOn);
  EXPECT_EQ(watch.Observe(2.99, 0), Verdict::kGoOn);
  EXPECT_EQ(watch.Observe(3.0, 0), Verdict::kIdle);
}

TEST(TransferWatchTest, TrickleEndsOnceAWholeWindowIsTooSlow) {
  // 128 bytes/s against a minimum of 1024 over 4 s: never idle, too slow
  // once 4 s have passed.
  TransferWatch watch(Options(30, 1024, 4));
  for (int quarter = 1; quarter < 16; ++quarter) {
    EXPECT_EQ(watch.Observe(quarter / 4.0, 32 * quarter), Verdict::kGoOn) << quarter;
  }
  EXPECT_EQ(watch.Observe(4.0, 512), Verdict::kSlow);
  EXPECT_NE(watch.Describe(Verdict::kSlow).find("512 bytes received in 4 s, fewer than 4096 (min_rate_bytes_per_s 1024"), std::string::npos);
}

TEST(TransferWatchTest, FastThenSlowIsJudgedOnTheLastWindowOnly) {
  TransferWatch watch(Options(30, 1000, 2));
  uint64_t received = 0;
  for (int tenth = 1; tenth <= 50; ++tenth) {  // 5 s at 10 kB/s
    received += 1000;
    ASSERT_EQ(watch.Observe(tenth / 10.0, received), Verdict::kGoOn) << tenth;
  }
  // Then 100 bytes/s: the first 5 s would average well above the minimum,
  // but the last 2 s hold 200 bytes.
  Verdict verdict = Verdict::kGoOn;
  double t = 5.0;
  while (verdict == Verdict::kGoOn && t < 10) {
    t += 0.25;
    received += 25;
    verdict = watch.Observe(t, received);
  }
  EXPECT_EQ(verdict, Verdict::kSlow);
  EXPECT_LE(t, 7.0 + 0.25);  // within the window (plus one sample's spacing)
}

TEST(TransferWatchTest, SteadyRateAtTheMinimumGoesOnAndZeroMeansNoMinimum) {
  TransferWatch steady(Options(30, 1000, 2));
  TransferWatch unlimited(Options(30, 0, 2));
  for (int tenth = 1; tenth <= 200; ++tenth) {
    ASSERT_EQ(steady.Observe(tenth / 10.0, 100 * tenth), Verdict::kGoOn) << tenth;
    ASSERT_EQ(unlimited.Observe(tenth / 10.0, tenth), Verdict::kGoOn) << tenth;
  }
}

}  // namespace
}  // namespace unirecord::remote
