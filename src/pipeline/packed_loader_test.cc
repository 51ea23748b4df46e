// The packing loader (LoaderOptions::pack): every token of the epoch once,
// the segment outputs consistent with each other, rows that respect
// document boundaries where the strategy says so, exact resume, ranks that
// partition documents, and clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "unirecord/fields.h"
#include "unirecord/loader.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

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

// A dataset of `count` records of tokens and mask, record i's filled by `fill`.
using FillRecord = std::function<void(int i, std::vector<int32_t>* tokens, std::vector<uint8_t>* mask)>;
std::string WriteTokenRecords(const std::string& name, int count, const FillRecord& fill) {
  const std::string dir = testing::MakeTempDir() + "/" + name;
  Result<Schema> schema = Schema::Make({Field::Array("tokens", FieldType::kInt32, {kVariableDim}),
                                        Field::Array("mask", FieldType::kUint8, {kVariableDim})});
  EXPECT_TRUE(schema.ok());
  WriterOptions options;
  options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(dir, name, *schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(*schema);
  for (int i = 0; i < count; ++i) {
    record.Clear();
    std::vector<int32_t> tokens;
    std::vector<uint8_t> mask;
    fill(i, &tokens, &mask);
    EXPECT_TRUE(record.SetValues("tokens", FieldType::kInt32, tokens.data(), {int64_t(tokens.size())}).ok());
    EXPECT_TRUE(record.SetValues("mask", FieldType::kUint8, mask.data(), {int64_t(mask.size())}).ok());
    EXPECT_TRUE((*writer)->Write(record).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

// A dataset of documents of these lengths (tokens 7, mask 1).
std::string WriteLengths(const std::string& name, const std::vector<uint64_t>& lengths) {
  return WriteTokenRecords(name, static_cast<int>(lengths.size()),
                           [&](int i, std::vector<int32_t>* tokens, std::vector<uint8_t>* mask) {
                             tokens->assign(lengths[i], 7);
                             mask->assign(lengths[i], 1);
                           });
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

// Tokens an epoch of `strategy` delivers from the 70/30 mixture in tokens
// of `dirs` (the first of 60 documents).
Delivered TokenMixtureEpoch(PackStrategy strategy, const std::vector<std::string>& dirs) {
  LoaderOptions o = PackOptionsFor(strategy);
  o.sampler.weights = {0.7, 0.3};
  o.pack->weight_unit = WeightUnit::kTokens;
  std::unique_ptr<Loader> loader = OpenMixture(o, dirs);
  EXPECT_NE(loader, nullptr);
  return loader == nullptr ? Delivered{} : DeliveredPerDataset(Epoch(*loader), 60);
}

TEST(PackedLoaderTest, WeightsInTokensGiveTheTokenShares) {
  // Short documents (10 tokens) against long ones (40): 70/30 in documents
  // would be 37/63 in tokens.
  const std::vector<std::vector<uint64_t>> lengths = {std::vector<uint64_t>(60, 10), std::vector<uint64_t>(40, 40)};
  const std::vector<std::string> dirs = {WriteLengths("short", lengths[0]), WriteLengths("long", lengths[1])};
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kBestFit}) {
    SCOPED_TRACE(PackStrategyName(strategy));
    const Delivered d = TokenMixtureEpoch(strategy, dirs);
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
    LoaderOptions o = PackOptionsFor(strategy);
    o.sampler.weights = {0.7, 0.3};
    o.pack->weight_unit = WeightUnit::kDocuments;
    const Delivered by_documents = DeliveredPerDataset(Epoch(*OpenMixture(o, dirs)), 60);
    EXPECT_LT(static_cast<double>(by_documents.tokens[0]) / (by_documents.tokens[0] + by_documents.tokens[1]), 0.5);
  }
}

TEST(PackedLoaderTest, WeightsInTokensCountAReplacedTokenFieldWhereItIsRead) {
  // The long dataset's documents replaced by 10-token ones in a field group
  // (format/SPEC.md 1.4): its token count is the column file's, as the reads.
  const std::vector<std::vector<uint64_t>> lengths = {std::vector<uint64_t>(60, 10), std::vector<uint64_t>(40, 10)};
  const std::vector<std::string> dirs = {WriteLengths("short", lengths[0]),
                                         WriteLengths("long", std::vector<uint64_t>(40, 40))};
  Result<Schema> replaced = Schema::Make({Field::Array("tokens", FieldType::kInt32, {kVariableDim}),
                                          Field::Array("mask", FieldType::kUint8, {kVariableDim})});
  ASSERT_TRUE(replaced.ok());
  AddFieldsOptions add;
  add.writer.sync = false;
  add.commit.sync = false;
  const auto ten = [](const Dataset&, uint64_t, RecordBuilder& out) {
    const std::vector<int32_t> tokens(10, 7);
    const std::vector<uint8_t> mask(10, 1);
    UREC_RETURN_IF_ERROR(out.SetValues(0, FieldType::kInt32, tokens.data(), {10}));
    return out.SetValues(1, FieldType::kUint8, mask.data(), {10});
  };
  ASSERT_TRUE(AddFields(dirs[1] + "/long", *replaced, ten, add).ok());
  const Delivered d = TokenMixtureEpoch(PackStrategy::kConcat, dirs);
  const std::vector<uint64_t> counts = ReferenceTokenCounts({0.7, 0.3}, lengths, 100);
  EXPECT_EQ(d.tokens[0], counts[0] * 10);
  EXPECT_EQ(d.tokens[1], counts[1] * 10);
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

// --- Elastic resume: the states of W ranks combined and restored on W' ---

// Records first_id .. first_id + count - 1 of the token numbering above
// (tokens 1000 id + j + 1, lengths LengthOf(id)), as a dataset of their own.
std::string WriteDocuments(const std::string& name, int first_id, int count) {
  return WriteTokenRecords(name, count, [&](int i, std::vector<int32_t>* tokens, std::vector<uint8_t>* mask) {
    for (uint64_t j = 0; j < LengthOf(first_id + i); ++j) {
      tokens->push_back(static_cast<int32_t>(1000 * (first_id + i) + j + 1));
      mask->push_back(static_cast<uint8_t>(j % 2));
    }
  });
}

using TokenCounts = std::map<std::pair<int64_t, int64_t>, int>;  // (record id, token index) -> deliveries

// With an EOS, it is token LengthOf(id) of its document.
void CountTokens(const Packed& p, bool eos, TokenCounts* counts) {
  for (const auto& s : Segments(p, eos)) {
    const int64_t first = s[1] < 0 ? static_cast<int64_t>(LengthOf(static_cast<int>(s[0]))) : s[1];  // the EOS alone
    for (int64_t t = 0; t < s[2]; ++t) ++(*counts)[{s[0], first + t}];
  }
}

std::vector<std::shared_ptr<const Dataset>> OpenAll(const std::vector<std::string>& dirs) {
  std::vector<std::shared_ptr<const Dataset>> datasets;
  for (const std::string& dir : dirs) datasets.push_back(*Dataset::Open(dir));
  return datasets;
}

// One loader per rank of `ranks`.
std::vector<std::unique_ptr<Loader>> Ranks(const std::vector<std::string>& dirs, LoaderOptions o, uint32_t ranks) {
  std::vector<std::unique_ptr<Loader>> out;
  o.sampler.num_shards = ranks;
  for (uint32_t r = 0; r < ranks; ++r) {
    o.sampler.shard_id = r;
    Result<std::unique_ptr<Loader>> loader = Loader::Create(OpenAll(dirs), o);
    EXPECT_TRUE(loader.ok()) << loader.status().ToString();
    out.push_back(std::move(loader).value());
  }
  return out;
}

// Up to `batches` batches from every rank (a data-parallel step each), into
// `counts`; then every rank's state, as a checkpoint keeps it.
std::vector<PackState> Step(std::vector<std::unique_ptr<Loader>>& ranks, size_t batches, TokenCounts* counts) {
  for (size_t b = 0; b < batches; ++b) {
    bool any = false;
    for (auto& loader : ranks) {
      Result<Batch> batch = loader->Next();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok() || batch->empty()) continue;
      CountTokens(CopyBatch(*batch), loader->options().pack->eos.has_value(), counts);
      any = true;
    }
    if (!any) break;  // every rank is at the epoch's end
  }
  std::vector<PackState> states;
  for (auto& loader : ranks) states.push_back(*PackState::Parse(loader->pack_state()->Serialize()));
  return states;
}

// The combined state of `states`, through its bytes, restored into every rank of `ranks`.
std::vector<std::unique_ptr<Loader>> Resume(const std::vector<std::string>& dirs, const LoaderOptions& o,
                                            const std::vector<PackState>& states, uint32_t ranks,
                                            PackState* combined) {
  Result<PackState> merged = CombinePackStates(OpenAll(dirs), o, states);
  EXPECT_TRUE(merged.ok()) << merged.status().ToString();
  *combined = *PackState::Parse(merged->Serialize());
  std::vector<std::unique_ptr<Loader>> out = Ranks(dirs, o, ranks);
  for (auto& loader : out) {
    Status restored = loader->Restore(*combined);
    EXPECT_TRUE(restored.ok()) << restored.ToString();
  }
  return out;
}

// Every rank's coverage digest, through its bytes.
std::vector<CoverageDigest> Coverages(const std::vector<std::unique_ptr<Loader>>& ranks) {
  std::vector<CoverageDigest> out;
  for (const auto& loader : ranks) out.push_back(*CoverageDigest::Parse(loader->coverage().Serialize()));
  return out;
}

// What a resume carries into every new rank: the old ranks' digests merged.
void CarryCoverage(const std::vector<CoverageDigest>& before, std::vector<std::unique_ptr<Loader>>& ranks) {
  const CoverageDigest merged = *MergeCoverage(before);
  for (auto& loader : ranks) {
    if (loader->coverage().uncarried == 0) continue;  // restored at the epoch's start: nothing before
    Status carried = loader->ResumeCoverage(merged);
    EXPECT_TRUE(carried.ok()) << carried.ToString();
  }
}

void ExpectCoverageExact(const std::vector<std::unique_ptr<Loader>>& ranks) {
  Result<CoverageCheck> check = CheckCoverage(Coverages(ranks));
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->ok) << check->message;
}

// The tokens an epoch of the order holds: positions [0, end) once each and,
// past the epoch's length L, DistributedSampler's padding (position p reads
// p - L), as the sampler orders them; overlong documents as `o` places them.
TokenCounts EpochTokens(const std::vector<uint64_t>& sizes, const LoaderOptions& o, uint64_t end) {
  Result<Sampler> sampler = Sampler::Create(sizes, o.sampler);
  EXPECT_TRUE(sampler.ok());
  const uint64_t L = sampler->num_records();
  TokenCounts counts;
  for (uint64_t p = 0; p < end; ++p) {
    const auto id = static_cast<int64_t>(sampler->GlobalAt(p % L));
    uint64_t length = LengthOf(static_cast<int>(id)) + (o.pack->eos ? 1 : 0);
    if (length > kSeqLen && o.pack->strategy != PackStrategy::kConcat) {
      if (o.pack->overlong == PackOverlong::kTruncate) length = kSeqLen;
      if (o.pack->overlong == PackOverlong::kDrop) length = 0;
    }
    for (uint64_t j = 0; j < length; ++j) ++counts[{id, static_cast<int64_t>(j)}];
  }
  return counts;
}

// Where the run that partitions the rest of the epoch from `g` over `ranks`
// ends: padded up to a multiple of the ranks, or cut down with drop_last.
uint64_t EndOf(uint64_t L, uint64_t g, uint64_t ranks, bool drop_last) {
  return drop_last ? g + (L - g) / ranks * ranks : g + (L - g + ranks - 1) / ranks * ranks;
}

struct ElasticCase {
  std::vector<std::string> dirs;
  std::vector<uint64_t> sizes;
  LoaderOptions options;
};

// W ranks run `first` steps, W' ranks restored from their combined state run
// `second` steps (then, with W'' > 0, W'' ranks restored from theirs) to the
// epoch's end: the (record, token) pairs delivered are the epoch's exactly.
// Returns the combined states.
std::vector<PackState> ExpectElasticEpoch(const ElasticCase& c, uint32_t w1, size_t first, uint32_t w2,
                                          size_t second, uint32_t w3) {
  TokenCounts got;
  std::vector<std::unique_ptr<Loader>> a = Ranks(c.dirs, c.options, w1);
  std::vector<PackState> combined(1);
  std::vector<std::unique_ptr<Loader>> b = Resume(c.dirs, c.options, Step(a, first, &got), w2, &combined[0]);
  CarryCoverage(Coverages(a), b);
  uint64_t g = combined[0].window.position, ranks = w2;
  if (w3 > 0) {
    combined.emplace_back();
    std::vector<PackState> states = Step(b, second, &got);
    const std::vector<CoverageDigest> before = Coverages(b);
    b = Resume(c.dirs, c.options, states, w3, &combined[1]);
    CarryCoverage(before, b);
    g = combined[1].window.position;
    ranks = w3;
  }
  Step(b, ~size_t{0}, &got);
  ExpectCoverageExact(b);  // the documents' digests agree with the tokens
  Result<Sampler> sampler = Sampler::Create(c.sizes, c.options.sampler);
  const TokenCounts expected =
      EpochTokens(c.sizes, c.options, EndOf(sampler->num_records(), g, ranks, c.options.sampler.drop_last));
  EXPECT_EQ(got.size(), expected.size());
  int wrong = 0;
  for (const auto& [token, n] : expected) {
    auto it = got.find(token);
    const int delivered = it == got.end() ? 0 : it->second;
    if (delivered != n && ++wrong < 5) {
      ADD_FAILURE() << "record " << token.first << " token " << token.second << ": delivered " << delivered
                    << " times, the epoch holds it " << n << " times";
    }
  }
  for (const auto& [token, n] : got) {
    if (expected.count(token) == 0 && ++wrong < 5) {
      ADD_FAILURE() << "record " << token.first << " token " << token.second << " is not the epoch's";
    }
  }
  return combined;
}

ElasticCase OneDataset(PackStrategy strategy) {
  ElasticCase c;
  c.dirs = {WriteDocuments("elastic", 0, kDocuments)};
  c.sizes = {uint64_t(kDocuments)};
  c.options = PackOptionsFor(strategy);
  c.options.threads = 1;
  c.options.coverage = CoverageDetail::kIds;
  return c;
}

TEST(PackedElasticTest, EveryTokenOnceAcrossRankCounts) {
  // 120 documents: no padding for W in 1..4; W' pads the rest of the epoch
  // (or cuts it, drop_last), which the expected epoch says.
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kFirstFit, PackStrategy::kBestFit}) {
    ElasticCase c = OneDataset(strategy);
    bool mid_document = false;
    for (bool drop_last : {false, true}) {
      c.options.sampler.drop_last = drop_last;
      for (uint32_t w1 : {1u, 2u, 3u, 4u}) {
        for (uint32_t w2 : {1u, 2u, 3u, 5u}) {
          for (size_t steps : {0, 1, 3, 7, 100}) {
            SCOPED_TRACE(std::string(PackStrategyName(strategy)) + " W=" + std::to_string(w1) + " W'=" +
                         std::to_string(w2) + " steps=" + std::to_string(steps) +
                         " drop_last=" + std::to_string(drop_last));
            const std::vector<PackState> combined = ExpectElasticEpoch(c, w1, steps, w2, 0, 0);
            mid_document |= !combined[0].remaining.empty();
            if (HasFatalFailure() || HasNonfatalFailure()) return;
          }
        }
      }
    }
    EXPECT_TRUE(mid_document) << PackStrategyName(strategy) << ": no resume point was inside a document";
  }
}

TEST(PackedElasticTest, OverlongTruncatedOrDroppedAcrossRankCounts) {
  for (PackOverlong overlong : {PackOverlong::kTruncate, PackOverlong::kDrop}) {
    ElasticCase c = OneDataset(PackStrategy::kFirstFit);
    c.options.pack->overlong = overlong;
    for (uint32_t w1 : {2u, 3u}) {
      for (uint32_t w2 : {1u, 5u}) {
        for (size_t steps : {1, 4}) {
          SCOPED_TRACE(std::string(PackOverlongName(overlong)) + " W=" + std::to_string(w1) + " W'=" +
                       std::to_string(w2) + " steps=" + std::to_string(steps));
          ExpectElasticEpoch(c, w1, steps, w2, 0, 0);
        }
      }
    }
  }
}

TEST(PackedElasticTest, AnEosIsATokenOfItsDocumentAcrossRankCounts) {
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kFirstFit}) {
    ElasticCase c = OneDataset(strategy);
    c.options.pack->eos = -1;
    for (size_t steps : {1, 4, 6}) {
      SCOPED_TRACE(std::string(PackStrategyName(strategy)) + " steps=" + std::to_string(steps));
      ExpectElasticEpoch(c, 3, steps, 2, 0, 0);
    }
  }
}

TEST(PackedElasticTest, AResumedRunCarriesWhatItWasGivenIntoItsOwnStates) {
  // W -> W' -> W'': the second combine gathers what the W' ranks still
  // carried from the first, and each W' rank's own state resumes exactly.
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kBestFit}) {
    ElasticCase c = OneDataset(strategy);
    for (auto [w1, w2, w3] : {std::array<uint32_t, 3>{4, 2, 3}, {3, 5, 2}, {2, 3, 1}}) {
      for (size_t second : {0, 1, 3}) {
        SCOPED_TRACE(std::string(PackStrategyName(strategy)) + " " + std::to_string(w1) + " -> " +
                     std::to_string(w2) + " -> " + std::to_string(w3) + " after " + std::to_string(second));
        const std::vector<PackState> combined = ExpectElasticEpoch(c, w1, 5, w2, second, w3);
        ASSERT_EQ(combined.size(), 2u);
      }
    }
    // A rank of the resumed run: its own state (carrying its part) gives
    // the rows that followed it.
    TokenCounts ignored;
    std::vector<std::unique_ptr<Loader>> a = Ranks(c.dirs, c.options, 4);
    PackState combined;
    std::vector<std::unique_ptr<Loader>> b = Resume(c.dirs, c.options, Step(a, 5, &ignored), 3, &combined);
    ASSERT_FALSE(combined.consumed.empty() && combined.remaining.empty());
    const std::vector<PackState> states = Step(b, 1, &ignored);
    std::vector<Packed> whole = Epoch(*b[1]);
    std::vector<std::unique_ptr<Loader>> again = Ranks(c.dirs, c.options, 3);
    ASSERT_TRUE(again[1]->Restore(states[1]).ok());
    EXPECT_TRUE(Epoch(*again[1]) == whole);
    // Through the bytes, too.
    EXPECT_EQ(PackState::Parse(states[1].Serialize())->Serialize(), states[1].Serialize());
  }
}

TEST(PackedElasticTest, MixturesResumeElasticallyToo) {
  ElasticCase c;
  c.dirs = {WriteDocuments("mix_a", 0, 70), WriteDocuments("mix_b", 70, 50)};
  c.sizes = {70, 50};
  c.options = PackOptionsFor(PackStrategy::kBestFit);
  c.options.threads = 1;
  c.options.sampler.weights = {0.3, 0.7};
  c.options.sampler.epoch_size = 120;  // dataset b upsampled: its records repeat
  for (auto [w1, w2] : {std::pair<uint32_t, uint32_t>{3, 2}, {2, 5}, {4, 1}}) {
    for (size_t steps : {1, 4}) {
      SCOPED_TRACE("W=" + std::to_string(w1) + " W'=" + std::to_string(w2) + " steps=" + std::to_string(steps));
      ExpectElasticEpoch(c, w1, steps, w2, 0, 0);
    }
  }
  c.options.pack->strategy = PackStrategy::kConcat;
  ExpectElasticEpoch(c, 3, 2, 2, 0, 0);
}

// A combined state that carries documents (serialized: version 2).
PackState CarryingState(const ElasticCase& c) {
  TokenCounts ignored;
  std::vector<std::unique_ptr<Loader>> a = Ranks(c.dirs, c.options, 3);
  Result<PackState> combined = CombinePackStates(OpenAll(c.dirs), c.options, Step(a, 6, &ignored));
  EXPECT_TRUE(combined.ok()) << combined.status().ToString();
  EXPECT_FALSE(combined->consumed.empty());
  EXPECT_FALSE(combined->remaining.empty());
  return *combined;
}

void ExpectParseError(const std::string& bytes, StatusCode code, const std::string& words) {
  Result<PackState> parsed = PackState::Parse(bytes);
  ASSERT_FALSE(parsed.ok()) << words;
  EXPECT_EQ(parsed.status().code(), code) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(words), std::string::npos) << parsed.status().ToString();
}

TEST(PackStateBytesTest, ACarryingStateIsVersionTwoOfItsCountedSize) {
  const PackState state = CarryingState(OneDataset(PackStrategy::kConcat));
  const std::string bytes = state.Serialize();
  EXPECT_EQ(bytes.size(), 112 + 8 * state.consumed.size() + 24 * state.remaining.size());
  EXPECT_EQ(bytes[4], 2);
  Result<PackState> parsed = PackState::Parse(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Serialize(), bytes);
  EXPECT_EQ(parsed->num_shards, 0u);
  // A rank's state that carries nothing stays version 1's 88 bytes.
  std::unique_ptr<Loader> loader = Open(PackOptionsFor(PackStrategy::kConcat));
  EXPECT_EQ(loader->pack_state()->Serialize().size(), 88u);
}

TEST(PackStateBytesTest, TruncatedBytesAreRefused) {
  const std::string bytes = CarryingState(OneDataset(PackStrategy::kConcat)).Serialize();
  ExpectParseError(bytes.substr(0, bytes.size() - 1), StatusCode::kInvalidArgument, "truncated or damaged");
  ExpectParseError(bytes.substr(0, 100), StatusCode::kInvalidArgument, "(truncated)");
  ExpectParseError(bytes.substr(0, 40), StatusCode::kInvalidArgument, "expected at least 88 bytes");
}

TEST(PackStateBytesTest, DamagedBytesAreRefused) {
  std::string bytes = CarryingState(OneDataset(PackStrategy::kConcat)).Serialize();
  bytes[bytes.size() - 20] ^= 0x10;  // inside the last span
  ExpectParseError(bytes, StatusCode::kInvalidArgument, "checksum mismatch");
}

TEST(PackStateBytesTest, CountsThatDisagreeWithTheSizeAreRefused) {
  std::string bytes = CarryingState(OneDataset(PackStrategy::kConcat)).Serialize();
  bytes[88] = static_cast<char>(bytes[88] + 1);  // one consumed position more than the bytes hold
  ExpectParseError(bytes, StatusCode::kInvalidArgument, "do not hold");
  bytes[88 + 7] = static_cast<char>(0xff);  // a count near 2^64 does not overflow the size check
  ExpectParseError(bytes, StatusCode::kInvalidArgument, "do not hold");
}

TEST(PackStateBytesTest, ForeignBytesAreRefused) {
  std::unique_ptr<Loader> plain = [] {
    LoaderOptions o = PackOptionsFor(PackStrategy::kConcat);
    o.pack.reset();
    return Open(o);
  }();
  ExpectParseError(plain->state().Serialize(), StatusCode::kInvalidArgument, "starting with 'URPS'");
  ExpectParseError(std::string(200, 'x'), StatusCode::kInvalidArgument, "starting with 'URPS'");
  std::string bytes = CarryingState(OneDataset(PackStrategy::kConcat)).Serialize();
  bytes[4] = 3;
  ExpectParseError(bytes, StatusCode::kNotSupported, "version 3");
  bytes[4] = 1;  // version 1 is 88 bytes, of ranks
  ExpectParseError(bytes, StatusCode::kInvalidArgument, "version 1 is 88 bytes");
  ExpectParseError(bytes.substr(0, 88), StatusCode::kInvalidArgument, "version 1 of 0 ranks");
}

TEST(PackStateBytesTest, IllFormedCarriedDocumentsAreRefused) {
  const PackState state = CarryingState(OneDataset(PackStrategy::kConcat));
  PackState unordered = state;
  std::swap(unordered.consumed.front(), unordered.consumed.back());
  ExpectParseError(unordered.Serialize(), StatusCode::kInvalidArgument, "out of order");
  PackState empty_span = state;
  empty_span.remaining.front().end = empty_span.remaining.front().begin;
  ExpectParseError(empty_span.Serialize(), StatusCode::kInvalidArgument, "are empty, out of order");
  PackState both = state;
  both.remaining.front().position = both.consumed.back();
  std::sort(both.remaining.begin(), both.remaining.end(),
            [](const PackSpan& a, const PackSpan& b) { return a.position < b.position; });
  ExpectParseError(both.Serialize(), StatusCode::kInvalidArgument, "of a consumed document");
  PackState before = state;
  before.consumed.front() = before.window.position - 1;
  ExpectParseError(before.Serialize(), StatusCode::kInvalidArgument, "before the window's");
  PackState mid_row = state;
  mid_row.rows = 1;
  ExpectParseError(mid_row.Serialize(), StatusCode::kInvalidArgument, "a combined state, of 0 ranks");
}

TEST(PackStateBytesTest, ACarriedStateOfOtherDocumentsIsRefusedOnRestore) {
  const ElasticCase c = OneDataset(PackStrategy::kConcat);
  const PackState state = CarryingState(c);
  std::vector<std::unique_ptr<Loader>> ranks = Ranks(c.dirs, c.options, 2);
  PackState past_epoch = state;
  past_epoch.consumed.push_back(kDocuments);
  EXPECT_EQ(ranks[0]->Restore(past_epoch).code(), StatusCode::kOutOfRange);
  // Tokens past a document's end: found when its window is read.
  PackState long_span = state;
  long_span.remaining.front().end += 1000;
  Status restored = ranks[0]->Restore(long_span);
  for (int i = 0; restored.ok() && i < 1000; ++i) {
    Result<Batch> b = ranks[0]->Next();
    if (!b.ok()) restored = b.status();
    if (b.ok() && b->empty()) break;
  }
  Status other = ranks[1]->Restore(long_span);
  for (int i = 0; other.ok() && i < 1000; ++i) {
    Result<Batch> b = ranks[1]->Next();
    if (!b.ok()) other = b.status();
    if (b.ok() && b->empty()) break;
  }
  const Status& failed = restored.ok() ? other : restored;  // the rank whose document it is
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("a state of other datasets or options"), std::string::npos) << failed.ToString();
}

TEST(PackedElasticTest, CombiningRefusesStatesThatDoNotMakeOneStep) {
  const ElasticCase c = OneDataset(PackStrategy::kFirstFit);
  TokenCounts ignored;
  std::vector<std::unique_ptr<Loader>> a = Ranks(c.dirs, c.options, 3);
  const std::vector<PackState> states = Step(a, 2, &ignored);
  auto refused = [&](const std::vector<PackState>& given, const LoaderOptions& o, const std::string& words) {
    Result<PackState> combined = CombinePackStates(OpenAll(c.dirs), o, given);
    ASSERT_FALSE(combined.ok()) << words;
    EXPECT_EQ(combined.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(combined.status().message().find(words), std::string::npos) << combined.status().ToString();
  };
  refused({states[0], states[1]}, c.options, "2 states of 3 ranks");
  refused({states[0], states[1], states[1]}, c.options, "give each rank's state once");
  refused({}, c.options, "no state");
  std::vector<PackState> other_epoch = states;
  other_epoch[2].window.epoch = 1;
  refused(other_epoch, c.options, "another seed, epoch, order or packing options");
  const PackState combined = *CombinePackStates(OpenAll(c.dirs), c.options, states);
  refused({combined}, c.options, "a combined state restores as it is");
  LoaderOptions other_options = c.options;
  other_options.pack->seq_len = 32;
  refused(states, other_options, "other packing options");
  LoaderOptions plain = c.options;
  plain.pack.reset();
  refused(states, plain, "do not pack");
  // A rank's own state still restores only on its rank; the message says how else.
  std::vector<std::unique_ptr<Loader>> b = Ranks(c.dirs, c.options, 2);
  Status wrong = b[0]->Restore(states[0]);
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.message().find("CombinePackStates"), std::string::npos) << wrong.ToString();
}

// --- Coverage: documents count when their last token goes out ---

TEST(PackedCoverageTest, EveryStrategyOverlongPolicyAndDropLastChecksExactly) {
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kFirstFit, PackStrategy::kBestFit}) {
    for (PackOverlong overlong : {PackOverlong::kSplit, PackOverlong::kTruncate, PackOverlong::kDrop}) {
      for (bool drop_last : {false, true}) {
        for (uint32_t ranks : {1u, 3u}) {
          SCOPED_TRACE(std::string(PackStrategyName(strategy)) + " " + PackOverlongName(overlong) + " drop_last " +
                       std::to_string(drop_last) + " ranks " + std::to_string(ranks));
          LoaderOptions o = PackOptionsFor(strategy);
          o.pack->overlong = overlong;
          o.drop_last = drop_last;
          o.coverage = CoverageDetail::kIds;
          std::vector<std::unique_ptr<Loader>> loaders = Ranks({TokensDir()}, o, ranks);
          TokenCounts counts;
          Step(loaders, ~size_t{0}, &counts);
          ExpectCoverageExact(loaders);
          const CoverageCheck check = *CheckCoverage(Coverages(loaders));
          // Every document whose tokens all went out is delivered; the others dropped.
          std::map<int64_t, uint64_t> tokens;
          for (const auto& [token, n] : counts) tokens[token.first] += static_cast<uint64_t>(n);
          uint64_t whole = 0;
          for (int i = 0; i < kDocuments; ++i) {
            const uint64_t placed = strategy != PackStrategy::kConcat && LengthOf(i) > kSeqLen &&
                                            overlong != PackOverlong::kSplit
                                        ? (overlong == PackOverlong::kTruncate ? kSeqLen : 0)
                                        : LengthOf(i);
            if (tokens[i] == placed && (placed > 0 || overlong != PackOverlong::kDrop || LengthOf(i) == 0)) ++whole;
          }
          EXPECT_EQ(check.deliveries - check.padding, whole);
          if (!drop_last && (overlong != PackOverlong::kDrop || strategy == PackStrategy::kConcat)) {
            EXPECT_EQ(check.dropped, 0u);
          }
        }
      }
    }
  }
}

TEST(PackedCoverageTest, AResumeOnTheSameRanksCarriesEachRanksOwnDigest) {
  for (PackStrategy strategy : {PackStrategy::kConcat, PackStrategy::kBestFit}) {
    LoaderOptions o = PackOptionsFor(strategy);
    o.coverage = CoverageDetail::kIds;
    TokenCounts counts;
    std::vector<std::unique_ptr<Loader>> a = Ranks({TokensDir()}, o, 2);
    const std::vector<PackState> states = Step(a, 8, &counts);  // past the first window (best_fit places
                                                                // the full pieces of split documents first)
    const std::vector<CoverageDigest> before = Coverages(a);
    std::vector<std::unique_ptr<Loader>> b = Ranks({TokensDir()}, o, 2);
    for (size_t r = 0; r < b.size(); ++r) {
      ASSERT_TRUE(b[r]->Restore(states[r]).ok());
      EXPECT_EQ(b[r]->coverage().uncarried, 1u);
      ASSERT_TRUE(b[r]->ResumeCoverage(before[r]).ok());
    }
    Step(b, ~size_t{0}, &counts);
    ExpectCoverageExact(b);
    // Without carrying, the documents before the state are missing.
    std::vector<std::unique_ptr<Loader>> lost = Ranks({TokensDir()}, o, 2);
    for (size_t r = 0; r < lost.size(); ++r) ASSERT_TRUE(lost[r]->Restore(states[r]).ok());
    Step(lost, ~size_t{0}, &counts);
    const CoverageCheck check = *CheckCoverage(Coverages(lost));
    EXPECT_FALSE(check.ok);
    EXPECT_EQ(check.uncarried, 2u);
    IdBitmap earlier;
    for (const CoverageDigest& d : before) ASSERT_TRUE(earlier.Add(*d.delivered.ids));
    EXPECT_GT(earlier.count(), 0u);
    EXPECT_EQ(check.missing_ids, earlier.Ids()) << check.message;
  }
}

}  // namespace
}  // namespace unirecord
