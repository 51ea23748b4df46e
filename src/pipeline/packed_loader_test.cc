// The packing loader (LoaderOptions::pack): every token of the epoch once,
// the segment outputs consistent with each other, rows that respect
// document boundaries where the strategy says so, exact resume, ranks that
// partition documents, and clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "unirecord/loader.h"
#include "unirecord/writer.h"
#include "util/test_files.h"

namespace unirecord {
namespace {

constexpr int kDocuments = 120;
constexpr size_t kSeqLen = 16;

// Document i: (i * 37) % 50 tokens (0 .. 49: empty ones, and some longer
// than three rows), token j = 1000 i + j + 1, mask j % 2.
uint64_t LengthOf(int i) { return static_cast<uint64_t>((i * 37) % 50); }

std::string WriteTokens(bool misaligned = false) {
  const std::string dir = testing::MakeTempDir() + "/tokens";
  Result<Schema> schema = Schema::Make({Field::Array("tokens", FieldType::kInt32, {kVariableDim}),
                                        Field::Array("mask", FieldType::kUint8, {kVariableDim}),
                                        Field::Array("grid", FieldType::kInt32, {kVariableDim, 2})});
  EXPECT_TRUE(schema.ok());
  WriterOptions options;
  options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(dir, "docs", *schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(*schema);
  for (int i = 0; i < kDocuments; ++i) {
    record.Clear();
    std::vector<int32_t> tokens;
    std::vector<uint8_t> mask;
    for (uint64_t j = 0; j < LengthOf(i); ++j) {
      tokens.push_back(static_cast<int32_t>(1000 * i + j + 1));
      mask.push_back(static_cast<uint8_t>(j % 2));
    }
    if (misaligned && i == 7) mask.push_back(1);
    EXPECT_TRUE(record.SetValues("tokens", FieldType::kInt32, tokens.data(), {int64_t(tokens.size())}).ok());
    EXPECT_TRUE(record.SetValues("mask", FieldType::kUint8, mask.data(), {int64_t(mask.size())}).ok());
    EXPECT_TRUE(record.SetValues("grid", FieldType::kInt32, tokens.data(), {0, 2}).ok());
    EXPECT_TRUE((*writer)->Write(record).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

const std::string& TokensDir() {
  static const std::string dir = WriteTokens();
  return dir;
}

LoaderOptions PackOptionsFor(PackStrategy strategy) {
  LoaderOptions o;
  o.batch_size = 3;
  o.threads = 2;
  o.image_field.clear();
  o.fields = {"tokens", "mask"};
  o.sampler.seed = 5;
  PackOptions pack;
  pack.seq_len = kSeqLen;
  pack.window = 8;
  pack.strategy = strategy;
  o.pack = pack;
  return o;
}

std::unique_ptr<Loader> Open(const LoaderOptions& options, const std::string& dir = TokensDir()) {
  Result<std::shared_ptr<Dataset>> dataset = Dataset::Open(dir);
  EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
  Result<std::unique_ptr<Loader>> loader = Loader::Create(*dataset, options);
  EXPECT_TRUE(loader.ok()) << loader.status().ToString();
  return loader.ok() ? std::move(loader).value() : nullptr;
}

// A batch's outputs, copied.
struct Packed {
  std::vector<int32_t> tokens, segment_ids, positions, cu_seqlens;
  std::vector<uint8_t> mask;
  std::vector<int64_t> ids;
  int32_t max_seqlen = 0;
  size_t rows = 0;
  bool operator==(const Packed& o) const {
    return tokens == o.tokens && segment_ids == o.segment_ids && positions == o.positions &&
           cu_seqlens == o.cu_seqlens && mask == o.mask && ids == o.ids && max_seqlen == o.max_seqlen &&
           rows == o.rows;
  }
};

template <typename T>
std::vector<T> Copy(const BatchField* f) {
  size_t n = 1;
  for (int64_t d : f->shape) n *= static_cast<size_t>(d);
  const T* data = static_cast<const T*>(f->data);
  return std::vector<T>(data, data + n);
}

Packed CopyBatch(const Batch& b) {
  Packed p;
  p.rows = b.size();
  p.tokens = Copy<int32_t>(b.field("tokens"));
  p.mask = Copy<uint8_t>(b.field("mask"));
  p.segment_ids = Copy<int32_t>(b.field("segment_ids"));
  p.positions = Copy<int32_t>(b.field("positions"));
  p.cu_seqlens = Copy<int32_t>(b.field("cu_seqlens"));
  p.ids = Copy<int64_t>(b.field("id"));
  p.max_seqlen = *static_cast<const int32_t*>(b.field("max_seqlen")->data);
  EXPECT_EQ(b.field("tokens")->shape, (std::vector<int64_t>{int64_t(b.size()), int64_t(kSeqLen)}));
  EXPECT_EQ(b.field("max_seqlen")->shape, std::vector<int64_t>{});
  return p;
}

// The epoch's batches, with the pack state before each.
std::vector<Packed> Epoch(Loader& loader, std::vector<PackState>* states = nullptr) {
  std::vector<Packed> out;
  for (;;) {
    if (states) states->push_back(*loader.pack_state());
    Result<Batch> b = loader.Next();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok() || b->empty()) break;
    out.push_back(CopyBatch(*b));
  }
  return out;
}

// Checks one batch's outputs against each other and returns its segments
// as (record id, first token index, length); every value read from the
// tokens themselves (token = 1000 id + j + 1).
std::vector<std::vector<int64_t>> Segments(const Packed& p, bool eos = false) {
  std::vector<std::vector<int64_t>> segments;
  size_t stream = 0;
  for (size_t r = 0; r < p.rows; ++r) {
    int32_t segment = 0;
    for (size_t t = 0; t < kSeqLen; ++t) {
      const size_t at = r * kSeqLen + t;
      const int32_t s = p.segment_ids[at];
      if (s == 0) {  // padding: to the row's end, pad values
        EXPECT_EQ(p.tokens[at], 0);
        EXPECT_EQ(p.mask[at], 0);
        EXPECT_EQ(p.positions[at], 0);
        continue;
      }
      EXPECT_TRUE(t == 0 || p.segment_ids[at - 1] != 0) << "padding before a segment";
      if (s != segment) {
        EXPECT_EQ(s, segment + 1);
        EXPECT_EQ(p.positions[at], 0);
        segment = s;
        const size_t k = segments.size();
        EXPECT_EQ(static_cast<size_t>(p.cu_seqlens[k]), stream);
        segments.push_back({p.ids[k], -1, 0});
      } else {
        EXPECT_EQ(p.positions[at], p.positions[at - 1] + 1);
      }
      std::vector<int64_t>& seg = segments.back();
      if (eos && p.tokens[at] == -1) {
        EXPECT_EQ(p.mask[at], 0);
      } else {
        const int64_t id = (p.tokens[at] - 1) / 1000, j = (p.tokens[at] - 1) % 1000;
        EXPECT_EQ(id, seg[0]);
        if (seg[1] < 0) seg[1] = j;
        EXPECT_EQ(j, seg[1] + seg[2]) << "tokens of a segment are consecutive";
        EXPECT_EQ(p.mask[at], j % 2);
      }
      ++seg[2];
      ++stream;
    }
  }
  EXPECT_EQ(segments.size(), p.ids.size());
  EXPECT_EQ(static_cast<size_t>(p.cu_seqlens.back()), stream);
  int32_t longest = 0;
  for (const auto& s : segments) longest = std::max<int32_t>(longest, static_cast<int32_t>(s[2]));
  EXPECT_EQ(p.max_seqlen, longest);
  return segments;
}

// Every token of every document once, whatever the strategy (overlong: split).
void ExpectEveryTokenOnce(const std::vector<Packed>& batches, bool whole_documents) {
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> pieces;  // id -> (first token, length)
  for (const Packed& p : batches) {
    for (const auto& s : Segments(p)) pieces[s[0]].push_back({s[1], s[2]});
  }
  for (int i = 0; i < kDocuments; ++i) {
    auto& got = pieces[i];
    std::sort(got.begin(), got.end());
    uint64_t next = 0;
    for (const auto& [first, length] : got) {
      EXPECT_EQ(static_cast<uint64_t>(first), next) << "document " << i;
      next += static_cast<uint64_t>(length);
    }
    EXPECT_EQ(next, LengthOf(i)) << "document " << i;
    if (whole_documents && LengthOf(i) <= kSeqLen) {
      EXPECT_LE(got.size(), 1u) << "document " << i << " was cut though it fits a row";
    }
  }
}

TEST(PackedLoaderTest, EveryStrategyDeliversEveryTokenOnceWithConsistentSegments) {
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kFirstFit, PackStrategy::kBestFit}) {
    SCOPED_TRACE(PackStrategyName(strategy));
    std::unique_ptr<Loader> loader = Open(PackOptionsFor(strategy));
    ASSERT_NE(loader, nullptr);
    std::vector<Packed> batches = Epoch(*loader);
    ASSERT_FALSE(batches.empty());
    for (size_t b = 0; b + 1 < batches.size(); ++b) EXPECT_EQ(batches[b].rows, 3u);
    ExpectEveryTokenOnce(batches, strategy != PackStrategy::kConcat);
    const LoaderStats stats = loader->stats();
    uint64_t tokens = 0, empty = 0;
    for (int i = 0; i < kDocuments; ++i) {
      tokens += LengthOf(i);
      empty += LengthOf(i) == 0;
    }
    EXPECT_EQ(stats.documents, uint64_t(kDocuments));
    EXPECT_EQ(stats.tokens, tokens);
    EXPECT_EQ(stats.empty, empty);
    EXPECT_EQ(stats.tokens + stats.padding, stats.samples * kSeqLen);
    if (strategy == PackStrategy::kConcat) EXPECT_LT(stats.padding, kSeqLen);  // the last row only
    // The next epoch: other rows (another order), the same tokens.
    loader->SetEpoch(1);
    std::vector<Packed> next = Epoch(*loader);
    EXPECT_FALSE(next == batches);
    ExpectEveryTokenOnce(next, strategy != PackStrategy::kConcat);
  }
}

TEST(PackedLoaderTest, BatchIndicesCountFromEachEpochsStart) {
  std::unique_ptr<Loader> loader = Open(PackOptionsFor(PackStrategy::kFirstFit));
  for (uint64_t epoch : {0, 1}) {
    loader->SetEpoch(epoch);
    uint64_t expected = 0;
    for (;;) {
      Result<Batch> b = loader->Next();
      ASSERT_TRUE(b.ok());
      if (b->empty()) break;
      EXPECT_EQ(b->index(), expected++);
      EXPECT_EQ(b->epoch(), epoch);
    }
    EXPECT_GT(expected, 10u);
  }
}

TEST(PackedLoaderTest, RowsDoNotDependOnThreads) {
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kBestFit}) {
    LoaderOptions one = PackOptionsFor(strategy);
    one.threads = 1;
    LoaderOptions two = PackOptionsFor(strategy);
    EXPECT_TRUE(Epoch(*Open(one)) == Epoch(*Open(two))) << PackStrategyName(strategy);
  }
}

TEST(PackedLoaderTest, ResumeFromAnyBatchGivesTheUninterruptedRows) {
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kFirstFit, PackStrategy::kBestFit}) {
    SCOPED_TRACE(PackStrategyName(strategy));
    std::vector<PackState> states;
    std::vector<Packed> whole = Epoch(*Open(PackOptionsFor(strategy)), &states);
    ASSERT_GT(whole.size(), 4u);
    for (size_t k : {size_t{0}, size_t{1}, size_t{2}, whole.size() / 2, whole.size() - 1, whole.size()}) {
      // Through the bytes, as a checkpoint keeps it.
      Result<PackState> state = PackState::Parse(states[k].Serialize());
      ASSERT_TRUE(state.ok()) << state.status().ToString();
      std::unique_ptr<Loader> resumed = Open(PackOptionsFor(strategy));
      ASSERT_TRUE(resumed->Restore(*state).ok());
      std::vector<Packed> rest = Epoch(*resumed);
      ASSERT_EQ(rest.size(), whole.size() - k) << "from batch " << k;
      for (size_t b = 0; b < rest.size(); ++b) EXPECT_TRUE(rest[b] == whole[k + b]) << "batch " << k + b;
    }
  }
}

TEST(PackedLoaderTest, RanksPartitionDocuments) {
  std::set<int64_t> seen;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    LoaderOptions o = PackOptionsFor(PackStrategy::kBestFit);
    o.sampler.num_shards = 2;
    o.sampler.shard_id = rank;
    for (const Packed& p : Epoch(*Open(o))) {
      for (const auto& s : Segments(p)) {
        if (s[1] == 0) EXPECT_TRUE(seen.insert(s[0]).second) << "document " << s[0] << " on two ranks";
      }
    }
  }
  for (int i = 0; i < kDocuments; ++i) EXPECT_EQ(seen.count(i), LengthOf(i) > 0 ? 1u : 0u) << i;
}

TEST(PackedLoaderTest, EosIsAppendedToEachDocument) {
  LoaderOptions o = PackOptionsFor(PackStrategy::kConcat);
  o.pack->eos = -1;
  std::map<int64_t, int> eos_of;
  uint64_t eos_count = 0;
  for (const Packed& p : Epoch(*Open(o))) {
    Segments(p, /*eos=*/true);
    for (int32_t t : p.tokens) eos_count += t == -1;
  }
  EXPECT_EQ(eos_count, uint64_t(kDocuments));
}

TEST(PackedLoaderTest, OverlongDocumentsTruncatedOrDroppedAreCounted) {
  uint64_t overlong = 0, beyond = 0;
  for (int i = 0; i < kDocuments; ++i) {
    if (LengthOf(i) > kSeqLen) {
      ++overlong;
      beyond += LengthOf(i) - kSeqLen;
    }
  }
  LoaderOptions o = PackOptionsFor(PackStrategy::kFirstFit);
  o.pack->overlong = PackOverlong::kTruncate;
  std::unique_ptr<Loader> truncating = Open(o);
  for (const Packed& p : Epoch(*truncating)) {
    for (const auto& s : Segments(p)) EXPECT_EQ(s[1], 0);  // first pieces only
  }
  EXPECT_EQ(truncating->stats().overlong, overlong);
  EXPECT_EQ(truncating->stats().cut_tokens, beyond);
  o.pack->overlong = PackOverlong::kDrop;
  std::unique_ptr<Loader> dropping = Open(o);
  for (const Packed& p : Epoch(*dropping)) {
    for (const auto& s : Segments(p)) EXPECT_LE(LengthOf(static_cast<int>(s[0])), kSeqLen);
  }
  EXPECT_EQ(dropping->stats().dropped, overlong);
}

TEST(PackedLoaderTest, BadOptionsAndMisalignedFieldsAreErrors) {
  Result<std::shared_ptr<Dataset>> dataset = Dataset::Open(TokensDir());
  ASSERT_TRUE(dataset.ok());
  auto refused = [&](LoaderOptions o, const std::string& words) {
    Result<std::unique_ptr<Loader>> loader = Loader::Create(*dataset, o);
    ASSERT_FALSE(loader.ok()) << words;
    EXPECT_NE(loader.status().message().find(words), std::string::npos) << loader.status().ToString();
  };
  LoaderOptions o = PackOptionsFor(PackStrategy::kBestFit);
  o.fields = {"grid"};
  refused(o, "pack: field 'grid' is");
  o = PackOptionsFor(PackStrategy::kBestFit);
  o.pack->seq_len = 0;
  refused(o, "seq_len 0 is out of range");
  o = PackOptionsFor(PackStrategy::kBestFit);
  o.pack->fields = {"tokens"};
  refused(o, "field 'mask' is not packed");
  o = PackOptionsFor(PackStrategy::kBestFit);
  o.pack->eos = 1LL << 40;
  refused(o, "eos");
  o = PackOptionsFor(PackStrategy::kBestFit);
  o.image_field = "image";
  o.fields = {"tokens"};
  o.pack->fields = {"tokens"};
  Result<std::unique_ptr<Loader>> with_default_image = Loader::Create(*dataset, o);
  EXPECT_TRUE(with_default_image.ok()) << "the default image field is ignored when packing";

  // Fields that disagree on a record's length: an error naming the record.
  std::unique_ptr<Loader> misaligned = Open(PackOptionsFor(PackStrategy::kConcat), WriteTokens(/*misaligned=*/true));
  Status failed;
  for (;;) {
    Result<Batch> b = misaligned->Next();
    if (!b.ok()) {
      failed = b.status();
      break;
    }
    if (b->empty()) break;
  }
  EXPECT_NE(failed.message().find("pack: record 7: field 'mask' has"), std::string::npos) << failed.ToString();

  // A state of another rank or other options.
  std::unique_ptr<Loader> loader = Open(PackOptionsFor(PackStrategy::kBestFit));
  PackState state = *loader->pack_state();
  PackState other_rank = state;
  other_rank.shard_id = 1;
  other_rank.num_shards = 2;
  EXPECT_EQ(loader->Restore(other_rank).code(), StatusCode::kInvalidArgument);
  PackState other_options = state;
  other_options.options_fingerprint ^= 1;
  EXPECT_EQ(loader->Restore(other_options).code(), StatusCode::kInvalidArgument);
  PackState past = state;
  past.rows = 1000;
  EXPECT_EQ(loader->Restore(past).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(loader->Restore(loader->state()).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(PackState::Parse(state.Serialize().substr(1)).ok());
}

// A dataset of documents of these lengths (tokens and mask as above).
std::string WriteLengths(const std::string& name, const std::vector<uint64_t>& lengths) {
  const std::string dir = testing::MakeTempDir() + "/" + name;
  Result<Schema> schema = Schema::Make({Field::Array("tokens", FieldType::kInt32, {kVariableDim}),
                                        Field::Array("mask", FieldType::kUint8, {kVariableDim})});
  EXPECT_TRUE(schema.ok());
  WriterOptions options;
  options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(dir, name, *schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(*schema);
  for (uint64_t length : lengths) {
    record.Clear();
    const std::vector<int32_t> tokens(length, 7);
    const std::vector<uint8_t> mask(length, 1);
    EXPECT_TRUE(record.SetValues("tokens", FieldType::kInt32, tokens.data(), {int64_t(length)}).ok());
    EXPECT_TRUE(record.SetValues("mask", FieldType::kUint8, mask.data(), {int64_t(length)}).ok());
    EXPECT_TRUE((*writer)->Write(record).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

std::unique_ptr<Loader> OpenMixture(const LoaderOptions& options, const std::vector<std::string>& dirs) {
  std::vector<std::shared_ptr<const Dataset>> datasets;
  for (const std::string& dir : dirs) {
    Result<std::shared_ptr<Dataset>> dataset = Dataset::Open(dir);
    EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
    if (!dataset.ok()) return nullptr;
    datasets.push_back(*dataset);
  }
  Result<std::unique_ptr<Loader>> loader = Loader::Create(datasets, options);
  EXPECT_TRUE(loader.ok()) << loader.status().ToString();
  return loader.ok() ? std::move(loader).value() : nullptr;
}

// Segments and tokens an epoch delivers from each dataset (ids below
// `first_size` are dataset 0's); a segment is a document when none is
// longer than a row.
struct Delivered {
  uint64_t segments[2] = {0, 0};
  uint64_t tokens[2] = {0, 0};
};
Delivered DeliveredPerDataset(const std::vector<Packed>& batches, uint64_t first_size) {
  Delivered d;
  for (const Packed& p : batches) {
    for (size_t k = 0; k < p.ids.size(); ++k) {
      const size_t source = static_cast<uint64_t>(p.ids[k]) < first_size ? 0 : 1;
      d.tokens[source] += static_cast<uint64_t>(p.cu_seqlens[k + 1] - p.cu_seqlens[k]);
      ++d.segments[source];
    }
  }
  return d;
}

// The sampler's per-dataset counts, written plainly: cumulative quotas of
// `length` by document weights w_i * n_i / T_i, rounded down.
std::vector<uint64_t> ReferenceTokenCounts(const std::vector<double>& token_weights,
                                           const std::vector<std::vector<uint64_t>>& lengths, uint64_t length) {
  std::vector<double> weights;
  double sum = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    uint64_t tokens = 0;
    for (uint64_t l : lengths[i]) tokens += l;
    weights.push_back(token_weights[i] * static_cast<double>(lengths[i].size()) / static_cast<double>(tokens));
    sum += weights.back();
  }
  std::vector<uint64_t> counts;
  double cumulative = 0;
  uint64_t before = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    cumulative += weights[i];
    const uint64_t end = i + 1 == weights.size() ? length : static_cast<uint64_t>(std::floor(length * cumulative / sum));
    counts.push_back(end - before);
    before = end;
  }
  return counts;
}

TEST(PackedLoaderTest, WeightsInTokensGiveTheTokenShares) {
  // Short documents (10 tokens) against long ones (40): 70/30 in documents
  // would be 37/63 in tokens.
  const std::vector<std::vector<uint64_t>> lengths = {std::vector<uint64_t>(60, 10), std::vector<uint64_t>(40, 40)};
  const std::vector<std::string> dirs = {WriteLengths("short", lengths[0]), WriteLengths("long", lengths[1])};
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kBestFit}) {
    SCOPED_TRACE(PackStrategyName(strategy));
    LoaderOptions o = PackOptionsFor(strategy);
    o.sampler.weights = {0.7, 0.3};
    o.pack->weight_unit = WeightUnit::kTokens;
    std::unique_ptr<Loader> loader = OpenMixture(o, dirs);
    ASSERT_NE(loader, nullptr);
    const Delivered d = DeliveredPerDataset(Epoch(*loader), 60);
    const std::vector<uint64_t> counts = ReferenceTokenCounts({0.7, 0.3}, lengths, 100);
    // Constant lengths: the tokens are the counts' exactly, and each share
    // is within K x M tokens of its weight (K = 2 datasets, M = 40 the
    // longest mean document; docs/loader.md "Mixing by tokens").
    EXPECT_EQ(d.tokens[0], counts[0] * 10);
    EXPECT_EQ(d.tokens[1], counts[1] * 40);
    const double total = static_cast<double>(d.tokens[0] + d.tokens[1]);
    EXPECT_LE(std::abs(static_cast<double>(d.tokens[0]) - 0.7 * total), 2 * 40.0);
    EXPECT_LE(std::abs(static_cast<double>(d.tokens[1]) - 0.3 * total), 2 * 40.0);
    // The same weights in documents: far from 70/30 in tokens.
    o.pack->weight_unit = WeightUnit::kDocuments;
    const Delivered by_documents = DeliveredPerDataset(Epoch(*OpenMixture(o, dirs)), 60);
    EXPECT_LT(static_cast<double>(by_documents.tokens[0]) / (by_documents.tokens[0] + by_documents.tokens[1]), 0.5);
  }
}

TEST(PackedLoaderTest, WeightsInTokensOverVaryingLengths) {
  // Spread lengths (none longer than a row with its EOS, so segments are
  // documents), EOS counted as a token of each document: over an epoch of
  // 2,000 documents (several passes of each dataset and a part of one),
  // each dataset's measured token share is within 1 % of its weight.
  std::vector<std::vector<uint64_t>> lengths(2);
  for (uint64_t i = 0; i < 150; ++i) lengths[0].push_back(1 + (i * 7919) % 8);
  for (uint64_t i = 0; i < 90; ++i) lengths[1].push_back(10 + (i * 104729) % 6);
  const std::vector<std::string> dirs = {WriteLengths("a", lengths[0]), WriteLengths("b", lengths[1])};
  LoaderOptions o = PackOptionsFor(PackStrategy::kFirstFit);
  o.sampler.weights = {0.25, 0.75};
  o.sampler.epoch_size = 2000;
  o.pack->weight_unit = WeightUnit::kTokens;
  o.pack->eos = 0;
  std::unique_ptr<Loader> loader = OpenMixture(o, dirs);
  ASSERT_NE(loader, nullptr);
  std::vector<PackState> states;
  const std::vector<Packed> whole = Epoch(*loader, &states);
  const Delivered d = DeliveredPerDataset(whole, 150);
  const double total = static_cast<double>(d.tokens[0] + d.tokens[1]);
  EXPECT_NEAR(d.tokens[0] / total, 0.25, 0.01);
  EXPECT_NEAR(d.tokens[1] / total, 0.75, 0.01);
  // The documents per dataset are the plain reference's counts (EOS adds
  // one token per document).
  for (auto& l : lengths) {
    for (uint64_t& n : l) ++n;
  }
  const std::vector<uint64_t> counts = ReferenceTokenCounts({0.25, 0.75}, lengths, 2000);
  EXPECT_EQ(d.segments[0], counts[0]);
  EXPECT_EQ(d.segments[1], counts[1]);

  // Resume mid-epoch gives the same rows; a state of the mixture in
  // documents is refused (other counts, other order).
  std::unique_ptr<Loader> resumed = OpenMixture(o, dirs);
  ASSERT_TRUE(resumed->Restore(states[states.size() / 2]).ok());
  const std::vector<Packed> rest = Epoch(*resumed);
  ASSERT_EQ(rest.size(), whole.size() - states.size() / 2);
  for (size_t b = 0; b < rest.size(); ++b) EXPECT_TRUE(rest[b] == whole[states.size() / 2 + b]) << b;
  o.pack->weight_unit = WeightUnit::kDocuments;
  std::unique_ptr<Loader> by_documents = OpenMixture(o, dirs);
  EXPECT_EQ(by_documents->Restore(states[states.size() / 2]).code(), StatusCode::kInvalidArgument);
}

TEST(PackedLoaderTest, WeightsInTokensNeedTokens) {
  const std::vector<std::string> dirs = {WriteLengths("some", {3, 4}), WriteLengths("none", {0, 0, 0})};
  LoaderOptions o = PackOptionsFor(PackStrategy::kBestFit);
  o.sampler.weights = {0.5, 0.5};
  o.pack->weight_unit = WeightUnit::kTokens;
  std::vector<std::shared_ptr<const Dataset>> datasets = {*Dataset::Open(dirs[0]), *Dataset::Open(dirs[1])};
  Result<std::unique_ptr<Loader>> loader = Loader::Create(datasets, o);
  ASSERT_FALSE(loader.ok());
  EXPECT_NE(loader.status().message().find("dataset 1 has weight 0.5"), std::string::npos) << loader.status().ToString();
  o.sampler.weights = {1, 0};  // a weight of 0 needs no token
  EXPECT_TRUE(Loader::Create(datasets, o).ok());
  EXPECT_EQ(ParseWeightUnit("tokens").value(), WeightUnit::kTokens);
  EXPECT_FALSE(ParseWeightUnit("bytes").ok());
}

}  // namespace
}  // namespace unirecord
