#include "util/splitmix64.h"

#include <gtest/gtest.h>

namespace unirecord {
namespace {

// The published outputs of the reference generator (Vigna's splitmix64.c, as
// tabulated by Rosetta Code's "Pseudo-random numbers/Splitmix64").
TEST(SplitMix64Test, MatchesReferenceOutputsForSeed1234567) {
  SplitMix64 generator(1234567);
  for (uint64_t expected : {6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
                            4593380528125082431ULL, 16408922859458223821ULL}) {
    EXPECT_EQ(generator.Next(), expected);
  }
}

TEST(SplitMix64Test, MatchesReferenceOutputsForSeed0) {
  SplitMix64 generator(0);
  EXPECT_EQ(generator.Next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(generator.Next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(generator.Next(), 0x06c45d188009454fULL);
}

TEST(SplitMix64Test, NextIsTheMixOfTheAdvancedState) {
  EXPECT_EQ(Mix64(kSplitMix64Gamma), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(Mix64(1234567 + kSplitMix64Gamma), 6457827717110365317ULL);
}

}  // namespace
}  // namespace unirecord
