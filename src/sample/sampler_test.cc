#include "unirecord/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
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

TEST(SamplerTest, RestoreRefusesAStateOfAnotherOrder) {
  SamplerOptions options;
  Sampler a = MakeSampler(100, options);
  ASSERT_TRUE(a.Seek(10).ok());
  // Version 2 fingerprints the order only: other ranks, workers and
  // drop_last restore it; another record count or order does not.
  SamplerOptions ranks = options;
  ranks.num_shards = 3;
  ranks.shard_id = 2;
  ranks.num_workers = 2;
  ranks.drop_last = true;
  EXPECT_TRUE(MakeSampler(100, ranks).Restore(a.state()).ok());
  Sampler c = MakeSampler(101, SamplerOptions{});
  EXPECT_EQ(c.Restore(a.state()).code(), StatusCode::kInvalidArgument);
  SamplerOptions sequential;
  sequential.order = SampleOrder::kSequential;
  EXPECT_EQ(MakeSampler(100, sequential).Restore(a.state()).code(), StatusCode::kInvalidArgument);
  SamplerOptions other_block_size;
  other_block_size.block_size = 7;  // unused by kShuffle: the state still fits
  EXPECT_TRUE(MakeSampler(100, other_block_size).Restore(a.state()).ok());
  SamplerState beyond = a.state();
  beyond.position = 101;
  EXPECT_EQ(a.Restore(beyond).code(), StatusCode::kOutOfRange);
  SamplerState unknown = a.state();
  unknown.version = 3;
  EXPECT_EQ(a.Restore(unknown).code(), StatusCode::kInvalidArgument);
}

// The bytes of format/SPEC.md section 13, written out by hand from its table.
TEST(SamplerTest, SerializedStateIsTheSpecifiedBytes) {
  SamplerState state;
  state.seed = 0x0102030405060708ULL;
  state.epoch = 3;
  state.position = 1000;
  state.fingerprint = 0xF0E1D2C3B4A59687ULL;
  const std::string expected(
      "URSS" "\x02\x00\x00\x00"
      "\x08\x07\x06\x05\x04\x03\x02\x01"
      "\x03\x00\x00\x00\x00\x00\x00\x00"
      "\xE8\x03\x00\x00\x00\x00\x00\x00"
      "\x87\x96\xA5\xB4\xC3\xD2\xE1\xF0",
      40);
  EXPECT_EQ(state.Serialize(), expected);
  for (uint32_t version : {1u, 2u}) {
    std::string bytes = expected;
    bytes[4] = static_cast<char>(version);
    Result<SamplerState> parsed = SamplerState::Parse(bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->version, version);
    EXPECT_EQ(parsed->seed, state.seed);
    EXPECT_EQ(parsed->epoch, state.epoch);
    EXPECT_EQ(parsed->position, state.position);
    EXPECT_EQ(parsed->fingerprint, state.fingerprint);
    EXPECT_EQ(parsed->Serialize(), bytes);  // a version-1 state keeps its version
  }
}

uint64_t SpecFingerprint(std::initializer_list<uint64_t> fields) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (uint64_t f : fields) {
    uint64_t z = h + f;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    h = z ^ (z >> 31);
  }
  return h;
}

// The fingerprints as section 13 defines them, field by field.
TEST(SamplerTest, FingerprintFollowsTheSpec) {
  SamplerOptions shuffle;
  shuffle.order = SampleOrder::kShuffle;
  shuffle.num_shards = 4;
  shuffle.shard_id = 3;
  shuffle.drop_last = true;
  shuffle.block_size = 7;  // unused by kShuffle: fingerprinted as 0
  shuffle.num_workers = 2;
  shuffle.worker_id = 1;
  Sampler s = MakeSampler(1000, shuffle);
  EXPECT_EQ(s.state().version, 2u);
  EXPECT_EQ(s.state().fingerprint, SpecFingerprint({1000, 1, 0, 0}));
  SamplerOptions block;
  block.order = SampleOrder::kBlockShuffle;
  block.block_size = 16;
  block.window = 64;
  EXPECT_EQ(MakeSampler(500, block).state().fingerprint, SpecFingerprint({500, 2, 16, 64}));
  SamplerOptions mix;
  mix.weights = {0.7, 0.3};
  Result<Sampler> mixed = Sampler::Create(std::vector<uint64_t>{50, 30}, mix);
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_EQ(mixed->state().fingerprint, SpecFingerprint({80, 1, 0, 0, 2, 50, 56, 30, 24}));
  // Version 1: every option; restored only by a sampler with the same ones.
  SamplerState v1;
  v1.version = 1;
  v1.epoch = 2;
  v1.position = 5;
  v1.fingerprint = SpecFingerprint({1000, 1, 4, 3, 1, 0, 0, 2, 1});
  ASSERT_TRUE(s.Restore(v1).ok());
  EXPECT_EQ(s.position(), 5u);
  EXPECT_EQ(s.epoch(), 2u);
  shuffle.shard_id = 2;
  EXPECT_EQ(MakeSampler(1000, shuffle).Restore(v1).code(), StatusCode::kInvalidArgument);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A version-1 state written by the sampler of an earlier build
// (tests/data/golden/README.md) still restores: the rest of its rank's epoch.
TEST(SamplerTest, GoldenVersion1StateRestores) {
  const std::string bytes = ReadFile(UNIRECORD_TEST_DATA_DIR "/golden/sampler/sampler_state_v1_n1000.bin");
  Result<SamplerState> state = SamplerState::Parse(bytes);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(state->version, 1u);
  SamplerOptions options;
  options.num_shards = 4;
  options.shard_id = 1;
  Sampler resumed = MakeSampler(1000, options);  // seed 0: the state brings 7
  ASSERT_TRUE(resumed.Restore(*state).ok());
  EXPECT_EQ(resumed.epoch(), 3u);
  EXPECT_EQ(resumed.position(), 40u);
  options.seed = 7;
  Sampler uninterrupted = MakeSampler(1000, options);
  uninterrupted.SetEpoch(3);
  ASSERT_TRUE(uninterrupted.Seek(40).ok());
  const std::vector<uint64_t> rest = Epoch(resumed);
  EXPECT_EQ(rest, Epoch(uninterrupted));
  // The ids the build that wrote the state gave next.
  EXPECT_EQ(std::vector<uint64_t>(rest.begin(), rest.begin() + 5), (std::vector<uint64_t>{56, 205, 255, 606, 572}));
  // It belongs to shard 1 of 4: another partition refuses it.
  options.num_shards = 2;
  EXPECT_EQ(MakeSampler(1000, options).Restore(*state).code(), StatusCode::kInvalidArgument);
}

// A sampler for each rank of a run: options with num_shards/shard_id set.
std::vector<Sampler> Ranks(const std::vector<uint64_t>& sizes, SamplerOptions options, uint32_t world) {
  std::vector<Sampler> ranks;
  for (uint32_t r = 0; r < world; ++r) {
    options.num_shards = world;
    options.shard_id = r;
    Result<Sampler> sampler = Sampler::Create(sizes, options);
    EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
    ranks.push_back(std::move(sampler).value());
  }
  return ranks;
}

// Every rank takes `batches` batches of `batch` ids (fewer at the end of its
// partition), in lockstep; the ids go to `seen` and every rank's state must
// be the same, which is returned.
SamplerState RunInLockstep(std::vector<Sampler>& ranks, uint64_t batches, uint64_t batch,
                           std::vector<uint64_t>* seen) {
  for (Sampler& rank : ranks) {
    uint64_t id;
    for (uint64_t k = 0; k < batches * batch && rank.Next(&id); ++k) seen->push_back(id);
  }
  const std::string state = ranks[0].state().Serialize();
  for (const Sampler& rank : ranks) EXPECT_EQ(rank.state().Serialize(), state);
  return ranks[ranks.size() / 2].state();  // any rank's
}

// A W-rank run stops after some batches; its state is restored into every
// rank of a W'-rank run (other batch size too), which reads the rest of the
// epoch; maybe a third run of W'' ranks takes over again. Together they read
// the epoch's order exactly: positions [0, n) once each, plus only the
// padding each partition adds at its end (fewer than its rank count, ids
// from the start of the epoch), or, with drop_last, minus fewer than the
// last run's rank count at the end.
TEST(SamplerTest, ElasticResumeReadsTheEpochExactly) {
  struct Config {
    std::vector<uint64_t> sizes;
    SampleOrder order;
    std::vector<double> weights;
  };
  const Config configs[] = {
      {{1}, SampleOrder::kShuffle, {}},          {{7}, SampleOrder::kShuffle, {}},
      {{90}, SampleOrder::kShuffle, {}},         {{1001}, SampleOrder::kShuffle, {}},
      {{90}, SampleOrder::kSequential, {}},      {{300}, SampleOrder::kBlockShuffle, {}},
      {{60, 37}, SampleOrder::kShuffle, {0.7, 0.3}},
  };
  const uint32_t worlds[] = {1, 2, 3, 4, 8};
  int cases = 0;
  for (const Config& config : configs) {
    SamplerOptions options;
    options.order = config.order;
    options.seed = 11;
    options.block_size = 16;
    options.window = 64;
    options.weights = config.weights;
    std::vector<Sampler> one = Ranks(config.sizes, options, 1);
    one[0].SetEpoch(5);
    const std::vector<uint64_t> order = Epoch(one[0]);
    const uint64_t n = order.size();
    for (bool drop_last : {false, true}) {
      options.drop_last = drop_last;
      for (uint32_t w1 : worlds) {
        for (uint32_t w2 : worlds) {
          for (uint64_t batch : {1, 3, 8}) {
            std::vector<Sampler> first = Ranks(config.sizes, options, w1);
            const uint64_t per_rank = first[0].size();
            for (uint64_t batches : {uint64_t{0}, uint64_t{1}, per_rank / batch / 2, per_rank / batch,
                                     (per_rank + batch - 1) / batch}) {
              for (uint32_t w3 : {0u, 3u}) {  // 0: no third run
                ++cases;
                std::vector<Sampler> a = Ranks(config.sizes, options, w1);
                for (Sampler& s : a) s.SetEpoch(5);
                std::vector<uint64_t> seen;
                const SamplerState state = RunInLockstep(a, batches, batch, &seen);
                const uint64_t g1 = std::min<uint64_t>(std::min(batches * batch, per_rank) * w1, n);
                ASSERT_EQ(state.position, g1);
                std::vector<Sampler> b = Ranks(config.sizes, options, w2);
                for (Sampler& s : b) {
                  SamplerState from = state;
                  ASSERT_TRUE(s.Restore(from).ok());
                }
                uint64_t end = g1;
                if (w3 == 0) {
                  RunInLockstep(b, ~uint64_t{0} / 64, 1, &seen);
                  end = drop_last ? g1 + (n - g1) / w2 * w2 : n;
                } else {
                  // About half of what is left, in batches of 2.
                  const uint64_t left = b[0].remaining();
                  const SamplerState second = RunInLockstep(b, left / 4 + 1, 2, &seen);
                  const uint64_t g2 = std::min<uint64_t>(g1 + std::min<uint64_t>(left / 4 * 2 + 2, left) * w2, n);
                  ASSERT_EQ(second.position, g2);
                  std::vector<Sampler> c = Ranks(config.sizes, options, w3);
                  for (Sampler& s : c) ASSERT_TRUE(s.Restore(second).ok());
                  RunInLockstep(c, ~uint64_t{0} / 64, 1, &seen);
                  end = drop_last ? g2 + (n - g2) / w3 * w3 : n;
                }
                // The multiset read = order[0, end) + padding from the start of the epoch.
                std::vector<uint64_t> expected(order.begin(), order.begin() + end);
                const uint64_t padding = seen.size() - end;
                ASSERT_GE(seen.size(), end);
                ASSERT_LT(padding, w1 + w2 + w3 + 1);
                if (drop_last) {
                  ASSERT_EQ(padding, 0u);
                  ASSERT_LT(n - end, uint64_t{w3 == 0 ? w2 : w3});
                }
                std::vector<uint64_t> a_sorted = seen, e_sorted = expected;
                std::sort(a_sorted.begin(), a_sorted.end());
                std::sort(e_sorted.begin(), e_sorted.end());
                std::vector<uint64_t> extra;
                std::set_difference(a_sorted.begin(), a_sorted.end(), e_sorted.begin(), e_sorted.end(),
                                    std::back_inserter(extra));
                ASSERT_EQ(extra.size(), padding)
                    << "n=" << n << " W=" << w1 << " W'=" << w2 << " W''=" << w3 << " batch=" << batch
                    << " batches=" << batches << " drop_last=" << drop_last;
                ASSERT_TRUE(std::includes(a_sorted.begin(), a_sorted.end(), e_sorted.begin(), e_sorted.end()));
                std::vector<uint64_t> head(order.begin(), order.begin() + std::min<uint64_t>(n, w1 + w2 + w3));
                for (uint64_t id : extra) ASSERT_NE(std::find(head.begin(), head.end(), id), head.end());
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 5000);
}

// With the ranks (and workers) that took it, a state continues the same
// partition: position() counts from the epoch's start and the ids are those
// of the uninterrupted sampler, workers included.
TEST(SamplerTest, SameRanksResumeKeepsThePartition) {
  SamplerOptions options;
  options.seed = 3;
  options.num_shards = 3;
  options.shard_id = 1;
  options.num_workers = 2;
  options.worker_id = 1;
  for (uint64_t k : {0, 1, 7, 16}) {
    Sampler a = MakeSampler(100, options);
    a.SetEpoch(2);
    ASSERT_TRUE(a.Seek(k).ok());
    Sampler b = MakeSampler(100, options);
    ASSERT_TRUE(b.Restore(a.state()).ok());
    EXPECT_EQ(b.base(), 0u);
    EXPECT_EQ(b.position(), k);
    EXPECT_EQ(Epoch(b), Epoch(a));
  }
}

Result<Sampler> Mixture(std::vector<uint64_t> sizes, std::vector<double> weights, uint64_t epoch_size = 0,
                        SampleOrder order = SampleOrder::kShuffle, uint64_t seed = 1) {
  SamplerOptions options;
  options.order = order;
  options.seed = seed;
  options.weights = std::move(weights);
  options.epoch_size = epoch_size;
  return Sampler::Create(sizes, options);
}

// Portable: these ids are the same on every platform and build (integer
// Feistel arithmetic and IEEE double quotas).
TEST(SamplerTest, MixtureGoldenOrders) {
  Result<Sampler> m = Mixture({5, 3}, {0.7, 0.3}, 10);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source_counts(), (std::vector<uint64_t>{7, 3}));
  std::vector<std::vector<uint64_t>> epochs;
  for (uint64_t e : {0, 1}) {
    m->SetEpoch(e);
    epochs.push_back(Epoch(*m));
  }
  EXPECT_EQ(epochs[0], (std::vector<uint64_t>{0, 4, 3, 2, 4, 7, 5, 1, 6, 3}));
  EXPECT_EQ(epochs[1], (std::vector<uint64_t>{4, 2, 1, 5, 2, 7, 0, 3, 1, 6}));
  Result<Sampler> seq = Mixture({4, 3}, {1, 1}, 0, SampleOrder::kSequential);
  ASSERT_TRUE(seq.ok());
  // Sequential: the quotas one after another, each source's stream in id order.
  EXPECT_EQ(Epoch(*seq), (std::vector<uint64_t>{0, 1, 2, 4, 5, 6, 4}));
  seq->SetEpoch(1);
  EXPECT_EQ(Epoch(*seq), (std::vector<uint64_t>{3, 0, 1, 4, 5, 6, 5}));
}

// Exact counts per source and epoch; no record of a source twice in an epoch
// beyond the source's whole passes (each record floor(count / size) or one
// more times); the part beyond whole passes goes through all of the source
// across epochs before repeating a record.
TEST(SamplerTest, MixtureCountsAndCoverage) {
  Result<Sampler> m = Mixture({100, 3, 0, 50}, {3, 1, 0, 6}, 100);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source_counts(), (std::vector<uint64_t>{30, 10, 0, 60}));
  EXPECT_EQ(m->num_ids(), 153u);
  std::vector<uint64_t> first_source;
  for (uint64_t e = 0; e < 4; ++e) {
    m->SetEpoch(e);
    const std::vector<uint64_t> ids = Epoch(*m);
    ASSERT_EQ(ids.size(), 100u);
    std::vector<int> per_source(4, 0), per_record(153, 0);
    for (uint64_t id : ids) {
      const int source = id < 100 ? 0 : id < 103 ? 1 : 3;
      ++per_source[source];
      ++per_record[id];
      if (source == 0) first_source.push_back(id);
    }
    EXPECT_EQ(per_source, (std::vector<int>{30, 10, 0, 60}));
    for (uint64_t id = 0; id < 100; ++id) EXPECT_LE(per_record[id], 1) << id;
    for (uint64_t id = 100; id < 103; ++id) EXPECT_TRUE(per_record[id] == 3 || per_record[id] == 4) << id;
    for (uint64_t id = 103; id < 153; ++id) EXPECT_TRUE(per_record[id] == 1 || per_record[id] == 2) << id;
  }
  // Source 0 (30 of 100 per epoch): epochs 0..2 and 10 of epoch 3 read each record once.
  std::vector<uint64_t> pass(first_source.begin(), first_source.begin() + 90);
  std::vector<uint64_t> epoch3(first_source.begin() + 90, first_source.end());
  std::sort(epoch3.begin(), epoch3.end());
  for (uint64_t id = 0, k = 0; id < 100; ++id) {
    if (std::find(pass.begin(), pass.end(), id) != pass.end()) continue;
    while (k < epoch3.size() && epoch3[k] < id) ++k;
    ASSERT_TRUE(k < epoch3.size() && epoch3[k] == id) << "record " << id << " not read in epochs 0..3";
  }
  pass.insert(pass.end(), epoch3.begin(), epoch3.end());
  std::sort(pass.begin(), pass.end());
  EXPECT_EQ(std::unique(pass.begin(), pass.end()) - pass.begin(), 100);
  // Other seeds and epochs, other interleavings.
  Result<Sampler> other = Mixture({100, 3, 0, 50}, {3, 1, 0, 6}, 100, SampleOrder::kShuffle, 2);
  m->SetEpoch(0);
  EXPECT_NE(Epoch(*other), Epoch(*m));
}

// A mixture is partitioned across ranks as one dataset: the ranks' union is
// the whole mixed epoch plus the wrap-around padding.
TEST(SamplerTest, MixturePartitionsLikeOneDataset) {
  SamplerOptions options;
  options.seed = 9;
  options.weights = {0.25, 0.75};
  options.epoch_size = 101;
  std::vector<Sampler> one = Ranks({40, 40}, options, 1);
  const std::vector<uint64_t> order = Epoch(one[0]);
  std::vector<Sampler> ranks = Ranks({40, 40}, options, 4);
  std::vector<uint64_t> interleaved(104);
  for (uint32_t r = 0; r < 4; ++r) {
    const std::vector<uint64_t> ids = Epoch(ranks[r]);
    ASSERT_EQ(ids.size(), 26u);
    for (size_t k = 0; k < ids.size(); ++k) interleaved[r + 4 * k] = ids[k];
  }
  for (size_t p = 0; p < interleaved.size(); ++p) EXPECT_EQ(interleaved[p], order[p % 101]) << p;
}

TEST(SamplerTest, MixtureOptionsAreChecked) {
  EXPECT_EQ(Mixture({5, 3}, {1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Mixture({5, 3}, {1, -1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Mixture({5, 3}, {1, std::nan("")}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Mixture({5, 3}, {0, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Mixture({5, 0}, {1, 1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Mixture({}, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Mixture({5, 3}, {1, 1}, 0, SampleOrder::kBlockShuffle).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mixture({5, 0}, {1, 0}).ok());
  // Weights proportional to the sizes (the default) over the total: each source once.
  Result<Sampler> plain = Mixture({5, 3}, {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->source_counts(), (std::vector<uint64_t>{5, 3}));
  std::vector<uint64_t> ids = Epoch(*plain);
  ExpectPermutation(ids, 8);
  // A state of one mixture does not restore into another.
  Result<Sampler> a = Mixture({5, 3}, {0.7, 0.3});
  Result<Sampler> b = Mixture({5, 3}, {0.5, 0.5});
  EXPECT_EQ(b->Restore(a->state()).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mixture({5, 3}, {7, 3})->Restore(a->state()).ok());  // the same counts
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
