#include "unirecord/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace unirecord {
namespace {

Sampler MakeSampler(uint64_t n, SamplerOptions options) {
  Result<Sampler> sampler = Sampler::Create(n, options);
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  return std::move(sampler).value();
}

std::vector<uint64_t> Epoch(Sampler& sampler) {
  std::vector<uint64_t> ids;
  uint64_t id;
  while (sampler.Next(&id)) ids.push_back(id);
  return ids;
}

std::vector<uint64_t> GlobalOrder(uint64_t n, SamplerOptions options, uint64_t epoch) {
  options.num_shards = 1;
  options.shard_id = 0;
  options.num_workers = 1;
  options.worker_id = 0;
  options.drop_last = false;
  Sampler sampler = MakeSampler(n, options);
  sampler.SetEpoch(epoch);
  return Epoch(sampler);
}

void ExpectPermutation(const std::vector<uint64_t>& ids, uint64_t n) {
  ASSERT_EQ(ids.size(), n);
  std::vector<uint8_t> seen(n, 0);
  for (uint64_t id : ids) {
    ASSERT_LT(id, n);
    ASSERT_EQ(seen[id], 0) << "id " << id << " appears twice";
    seen[id] = 1;
  }
}

const uint64_t kSizes[] = {1, 2, 3, 5, 7, 13, 97, 1009, 4096, 65537, 1000000};

TEST(PermutationTest, BijectionWithInverse) {
  for (uint64_t n : kSizes) {
    Permutation perm(n, 0x1234 + n);
    std::vector<uint64_t> ids(n);
    for (uint64_t x = 0; x < n; ++x) {
      ids[x] = perm(x);
      ASSERT_EQ(perm.Inverse(ids[x]), x) << "n=" << n;
    }
    ExpectPermutation(ids, n);
  }
}

TEST(SamplerTest, ShuffleIsAPermutationForManySizes) {
  SamplerOptions options;
  options.seed = 7;
  for (uint64_t n : kSizes) ExpectPermutation(GlobalOrder(n, options, 3), n);
}

TEST(SamplerTest, BlockShuffleIsAPermutationForManySizes) {
  SamplerOptions options;
  options.order = SampleOrder::kBlockShuffle;
  options.seed = 11;
  for (uint64_t block : {1, 3, 16, 256}) {
    for (uint64_t window : {0, 1, 5, 64, 1024}) {
      options.block_size = block;
      options.window = window;
      for (uint64_t n : kSizes) {
        if (n == 1000000 && block != 256) continue;  // keeps the test quick
        SCOPED_TRACE("n=" + std::to_string(n) + " block=" + std::to_string(block) +
                     " window=" + std::to_string(window));
        ExpectPermutation(GlobalOrder(n, options, 1), n);
      }
    }
  }
}

TEST(SamplerTest, BlockShuffleKeepsRunsTogetherWithoutWindow) {
  SamplerOptions options;
  options.order = SampleOrder::kBlockShuffle;
  options.block_size = 10;
  options.window = 0;
  const std::vector<uint64_t> ids = GlobalOrder(95, options, 0);
  // Every run of consecutive ids is a whole block: breaks happen only where a
  // block ends, so there are exactly (number of blocks - 1) breaks at most.
  int breaks = 0;
  for (size_t i = 1; i < ids.size(); ++i) breaks += ids[i] != ids[i - 1] + 1;
  EXPECT_LE(breaks, 9);
  EXPECT_NE(ids, GlobalOrder(95, SamplerOptions{SampleOrder::kSequential}, 0));
}

TEST(SamplerTest, BlockShuffleWindowTouchesFewBlocks) {
  SamplerOptions options;
  options.order = SampleOrder::kBlockShuffle;
  options.block_size = 64;
  options.window = 256;
  const std::vector<uint64_t> ids = GlobalOrder(10000, options, 2);
  for (size_t start = 0; start + 256 <= ids.size(); start += 256) {
    std::vector<uint64_t> blocks;
    for (size_t i = start; i < start + 256; ++i) blocks.push_back(ids[i] / 64);
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    EXPECT_LE(blocks.size(), 6u) << "window at " << start;  // 4 full blocks, plus the short one
  }
}

TEST(SamplerTest, SequentialIsIdentityEveryEpoch) {
  SamplerOptions options;
  options.order = SampleOrder::kSequential;
  std::vector<uint64_t> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(GlobalOrder(50, options, 0), expected);
  EXPECT_EQ(GlobalOrder(50, options, 9), expected);
}

// Checked-in first ids: any change of the permutation on any platform or
// compiler fails here, because saved states and cross-rank agreement rely on it.
TEST(SamplerTest, GoldenOrders) {
  SamplerOptions shuffle;
  shuffle.seed = 0;
  EXPECT_EQ(GlobalOrder(10, shuffle, 0), (std::vector<uint64_t>{3, 9, 6, 7, 1, 8, 4, 2, 5, 0}));
  shuffle.seed = 42;
  std::vector<uint64_t> first = GlobalOrder(1000000, shuffle, 3);
  first.resize(8);
  EXPECT_EQ(first, (std::vector<uint64_t>{466815, 918912, 338345, 484250, 368615, 397685, 43866, 100854}));
  SamplerOptions block;
  block.order = SampleOrder::kBlockShuffle;
  block.seed = 5;
  block.block_size = 16;
  block.window = 32;
  first = GlobalOrder(1000, block, 1);
  first.resize(8);
  EXPECT_EQ(first, (std::vector<uint64_t>{965, 971, 960, 256, 972, 961, 967, 270}));
}

TEST(SamplerTest, SameInputsSameOrderOtherEpochOrSeedDiffers) {
  SamplerOptions options;
  options.seed = 3;
  const std::vector<uint64_t> a = GlobalOrder(1000, options, 4);
  EXPECT_EQ(a, GlobalOrder(1000, options, 4));
  EXPECT_NE(a, GlobalOrder(1000, options, 5));
  options.seed = 4;
  EXPECT_NE(a, GlobalOrder(1000, options, 4));
}

// torch.utils.data.DistributedSampler over a given base order.
std::vector<uint64_t> ReferenceRank(const std::vector<uint64_t>& order, uint64_t replicas,
                                    uint64_t rank, bool drop_last) {
  const uint64_t n = order.size();
  std::vector<uint64_t> indices = order;
  uint64_t total;
  if (drop_last && n % replicas != 0) {
    total = ((n - replicas) + replicas - 1) / replicas * replicas;  // ceil((n - R) / R) * R
  } else {
    total = (n + replicas - 1) / replicas * replicas;
  }
  if (total > n) {
    const uint64_t padding = total - n;
    if (padding <= n) {
      indices.insert(indices.end(), order.begin(), order.begin() + padding);
    } else {
      while (indices.size() < total) indices.insert(indices.end(), order.begin(), order.end());
    }
  }
  indices.resize(total);
  std::vector<uint64_t> mine;
  for (uint64_t i = rank; i < total; i += replicas) mine.push_back(indices[i]);
  return mine;
}

TEST(SamplerTest, PartitionMatchesDistributedSampler) {
  for (SampleOrder order : {SampleOrder::kSequential, SampleOrder::kShuffle, SampleOrder::kBlockShuffle}) {
    for (uint64_t n : {1, 2, 3, 7, 10, 97, 1000}) {
      for (uint32_t replicas : {1, 2, 3, 4, 8, 13}) {
        for (bool drop_last : {false, true}) {
          SamplerOptions options;
          options.order = order;
          options.seed = 99;
          options.block_size = 4;
          options.window = 6;
          options.num_shards = replicas;
          options.drop_last = drop_last;
          const std::vector<uint64_t> base = GlobalOrder(n, options, 2);
          uint64_t size = 0;
          for (uint32_t rank = 0; rank < replicas; ++rank) {
            options.shard_id = rank;
            Sampler sampler = MakeSampler(n, options);
            sampler.SetEpoch(2);
            SCOPED_TRACE("n=" + std::to_string(n) + " R=" + std::to_string(replicas) +
                         " r=" + std::to_string(rank) + " drop_last=" + std::to_string(drop_last));
            EXPECT_EQ(Epoch(sampler), ReferenceRank(base, replicas, rank, drop_last));
            if (rank == 0) size = sampler.size();
            EXPECT_EQ(sampler.size(), size) << "ranks must get equal counts";
          }
        }
      }
    }
  }
}

TEST(SamplerTest, RanksCoverEveryIdWithoutDropLast) {
  SamplerOptions options;
  options.seed = 1;
  options.num_shards = 7;
  std::vector<uint8_t> seen(1000, 0);
  for (uint32_t rank = 0; rank < 7; ++rank) {
    options.shard_id = rank;
    Sampler sampler = MakeSampler(1000, options);
    for (uint64_t id : Epoch(sampler)) seen[id] = 1;
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 1000);
}

TEST(SamplerTest, WorkersSplitTheirRankStrided) {
  SamplerOptions options;
  options.seed = 8;
  options.num_shards = 3;
  options.shard_id = 1;
  Sampler whole_rank = MakeSampler(101, options);
  const std::vector<uint64_t> rank = Epoch(whole_rank);
  options.num_workers = 4;
  std::vector<uint64_t> rebuilt(rank.size());
  uint64_t total = 0;
  for (uint32_t w = 0; w < 4; ++w) {
    options.worker_id = w;
    Sampler sampler = MakeSampler(101, options);
    const std::vector<uint64_t> mine = Epoch(sampler);
    total += mine.size();
    for (size_t k = 0; k < mine.size(); ++k) rebuilt[w + 4 * k] = mine[k];
  }
  EXPECT_EQ(total, rank.size());
  EXPECT_EQ(rebuilt, rank);
}

TEST(SamplerTest, ResumeRestoresTheRemainingSequence) {
  for (SampleOrder order : {SampleOrder::kShuffle, SampleOrder::kBlockShuffle}) {
    SamplerOptions options;
    options.order = order;
    options.seed = 1234;
    options.num_shards = 2;
    options.shard_id = 1;
    Sampler original = MakeSampler(5000, options);
    original.SetEpoch(6);
    std::vector<uint64_t> ids(1000);
    ASSERT_EQ(original.NextBatch(ids.data(), ids.size()), ids.size());
    const std::string saved = original.state().Serialize();
    ASSERT_EQ(saved.size(), 40u);
    const std::vector<uint64_t> rest = Epoch(original);

    SamplerOptions fresh_options = options;
    fresh_options.seed = 0;  // the state brings its own seed
    Sampler resumed = MakeSampler(5000, fresh_options);
    Result<SamplerState> state = SamplerState::Parse(saved);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    ASSERT_TRUE(resumed.Restore(*state).ok());
    EXPECT_EQ(resumed.epoch(), 6u);
    EXPECT_EQ(resumed.position(), 1000u);
    EXPECT_EQ(Epoch(resumed), rest);
  }
}

TEST(SamplerTest, RestoreRefusesAStateOfOtherOptions) {
  SamplerOptions options;
  Sampler a = MakeSampler(100, options);
  options.num_shards = 2;
  Sampler b = MakeSampler(100, options);
  EXPECT_EQ(b.Restore(a.state()).code(), StatusCode::kInvalidArgument);
  Sampler c = MakeSampler(101, SamplerOptions{});
  EXPECT_EQ(c.Restore(a.state()).code(), StatusCode::kInvalidArgument);
  SamplerOptions other_block_size;
  other_block_size.block_size = 7;  // unused by kShuffle: the state still fits
  EXPECT_TRUE(MakeSampler(100, other_block_size).Restore(a.state()).ok());
  SamplerState beyond = a.state();
  beyond.position = 101;
  EXPECT_EQ(a.Restore(beyond).code(), StatusCode::kOutOfRange);
}

// The bytes of format/SPEC.md section 13, written out by hand from its table.
TEST(SamplerTest, SerializedStateIsTheSpecifiedBytes) {
  SamplerState state;
  state.seed = 0x0102030405060708ULL;
  state.epoch = 3;
  state.position = 1000;
  state.fingerprint = 0xF0E1D2C3B4A59687ULL;
  const std::string expected(
      "URSS" "\x01\x00\x00\x00"
      "\x08\x07\x06\x05\x04\x03\x02\x01"
      "\x03\x00\x00\x00\x00\x00\x00\x00"
      "\xE8\x03\x00\x00\x00\x00\x00\x00"
      "\x87\x96\xA5\xB4\xC3\xD2\xE1\xF0",
      40);
  EXPECT_EQ(state.Serialize(), expected);
  Result<SamplerState> parsed = SamplerState::Parse(expected);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->seed, state.seed);
  EXPECT_EQ(parsed->epoch, state.epoch);
  EXPECT_EQ(parsed->position, state.position);
  EXPECT_EQ(parsed->fingerprint, state.fingerprint);
}

// The fingerprint as section 13 defines it, field by field.
TEST(SamplerTest, FingerprintFollowsTheSpec) {
  auto spec_fingerprint = [](std::initializer_list<uint64_t> fields) {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (uint64_t f : fields) {
      uint64_t z = h + f;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      h = z ^ (z >> 31);
    }
    return h;
  };
  SamplerOptions shuffle;
  shuffle.order = SampleOrder::kShuffle;
  shuffle.num_shards = 4;
  shuffle.shard_id = 3;
  shuffle.drop_last = true;
  shuffle.block_size = 7;  // unused by kShuffle: fingerprinted as 0
  shuffle.num_workers = 2;
  shuffle.worker_id = 1;
  EXPECT_EQ(MakeSampler(1000, shuffle).state().fingerprint, spec_fingerprint({1000, 1, 4, 3, 1, 0, 0, 2, 1}));
  SamplerOptions block;
  block.order = SampleOrder::kBlockShuffle;
  block.block_size = 16;
  block.window = 64;
  EXPECT_EQ(MakeSampler(500, block).state().fingerprint, spec_fingerprint({500, 2, 1, 0, 0, 16, 64, 1, 0}));
}

TEST(SamplerTest, ParseRefusesGarbage) {
  EXPECT_FALSE(SamplerState::Parse("").ok());
  EXPECT_FALSE(SamplerState::Parse(std::string(40, 'x')).ok());
  std::string future = SamplerState{}.Serialize();
  future[4] = 9;
  EXPECT_EQ(SamplerState::Parse(future).status().code(), StatusCode::kNotSupported);
}

TEST(SamplerTest, InvalidOptionsAreErrors) {
  SamplerOptions options;
  options.num_shards = 0;
  EXPECT_FALSE(Sampler::Create(10, options).ok());
  options.num_shards = 2;
  options.shard_id = 2;
  EXPECT_FALSE(Sampler::Create(10, options).ok());
  options.shard_id = 0;
  options.num_workers = 0;
  EXPECT_FALSE(Sampler::Create(10, options).ok());
  options.num_workers = 1;
  options.order = SampleOrder::kBlockShuffle;
  options.block_size = 0;
  EXPECT_FALSE(Sampler::Create(10, options).ok());
  EXPECT_FALSE(ParseSampleOrder("random").ok());
  EXPECT_EQ(*ParseSampleOrder("block"), SampleOrder::kBlockShuffle);
}

TEST(SamplerTest, EmptyDatasetAndMoreRanksThanRecords) {
  EXPECT_EQ(MakeSampler(0, SamplerOptions{}).size(), 0u);
  SamplerOptions options;
  options.num_shards = 8;
  options.shard_id = 7;
  Sampler padded = MakeSampler(3, options);
  EXPECT_EQ(padded.size(), 1u);
  options.drop_last = true;
  EXPECT_EQ(MakeSampler(3, options).size(), 0u);
}

TEST(SamplerTest, SeekAndEndOfEpoch) {
  Sampler sampler = MakeSampler(10, SamplerOptions{});
  EXPECT_TRUE(sampler.Seek(10).ok());
  uint64_t id;
  EXPECT_FALSE(sampler.Next(&id));
  EXPECT_EQ(sampler.Seek(11).code(), StatusCode::kOutOfRange);
  ASSERT_TRUE(sampler.Seek(9).ok());
  ASSERT_TRUE(sampler.Next(&id));
  EXPECT_EQ(id, sampler.At(9));
}

}  // namespace
}  // namespace unirecord
