// Queries on lists of integers (docs/query.md: `contains`, `any(f in [...])`,
// `len(f)`): answers from the list index (format/SPEC.md section 8.4) equal
// a plain loop over the records and the scan of a dataset without the index,
// on random data with empty lists, repeats and int64 extremes; a damaged list
// index is an error naming the file, never another answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "dataset/dataset_testing.h"
#include "format/checksum.h"
#include "format/endian.h"
#include "format/file_names.h"
#include "format/fixed_parts.h"
#include "format/header_codec.h"
#include "index/index_file.h"
#include "unirecord/query.h"

namespace unirecord {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const int64_t kPool[] = {kMin, kMin + 1, -1000, -1, 0, 1, 2, 3, 7, 80, 1000, kMax - 1, kMax};

struct Data {
  std::vector<std::vector<int64_t>> tags;
  std::vector<std::vector<int16_t>> small;
  std::vector<int32_t> label;
};

Data RandomData(uint64_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  Data d;
  for (uint64_t i = 0; i < n; ++i) {
    std::vector<int64_t> tags(rng() % 7);  // 0..6, empty lists included
    for (int64_t& t : tags) t = kPool[rng() % std::size(kPool)];  // repeats are frequent
    std::vector<int16_t> small(rng() % 4);
    for (int16_t& s : small) s = static_cast<int16_t>(static_cast<int>(rng() % 9) - 4);
    if (i % 17 == 0) small = {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    d.tags.push_back(std::move(tags));
    d.small.push_back(std::move(small));
    d.label.push_back(static_cast<int32_t>(rng() % 4));
  }
  return d;
}

Schema ListSchema(bool indexed) {
  Field tags = Field::Array("tags", FieldType::kInt64, {kVariableDim});
  Field small = Field::Array("small", FieldType::kInt16, {kVariableDim});
  tags.indexed = small.indexed = indexed;
  return Schema::Make({Field::Int32("label", /*indexed=*/true), tags, small,
                       Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4})})
      .value();
}

std::string Write(const Data& d, bool indexed, uint32_t shards) {
  const std::string dir = testing::MakeTempDir();
  const Schema schema = ListSchema(indexed);
  WriterOptions options = testing::SmallPages(shards);
  options.sync = false;
  options.expected_records = d.tags.size();  // contiguous shards: id i is the i-th record written
  auto writer = Writer::Create(dir, "l", schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder r(schema);
  for (size_t i = 0; i < d.tags.size(); ++i) {
    EXPECT_TRUE(r.SetValues("label", FieldType::kInt32, &d.label[i], {}).ok());
    EXPECT_TRUE(r.SetValues("tags", FieldType::kInt64, d.tags[i].data(), {int64_t(d.tags[i].size())}).ok());
    EXPECT_TRUE(r.SetValues("small", FieldType::kInt16, d.small[i].data(), {int64_t(d.small[i].size())}).ok());
    std::vector<float> boxes(d.tags[i].size() * 4, 0.5f);  // as many boxes as tags
    EXPECT_TRUE(r.SetValues("boxes", FieldType::kFloat32, boxes.data(), {int64_t(d.tags[i].size()), 4}).ok());
    EXPECT_TRUE((*writer)->Write(r).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

std::shared_ptr<Dataset> Open(const std::string& dir) {
  auto ds = Dataset::Open(dir);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return ds.ok() ? *ds : nullptr;
}

Result<std::vector<uint64_t>> Ids(const Dataset& ds, const std::string& expression) {
  UREC_ASSIGN_OR_RETURN(Query q, Query::Parse(expression, ds));
  return q.Ids(ds);
}

template <typename T>
bool Holds(const std::vector<T>& list, int64_t v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

struct Case {
  std::string expression;
  std::function<bool(size_t)> predicate;
};

std::vector<Case> Cases(const Data& d) {
  std::vector<Case> cases;
  for (int64_t v : kPool) {
    cases.push_back({"tags contains " + std::to_string(v), [&d, v](size_t i) { return Holds(d.tags[i], v); }});
    cases.push_back({"not tags contains " + std::to_string(v), [&d, v](size_t i) { return !Holds(d.tags[i], v); }});
  }
  cases.push_back({"tags contains 5", [](size_t) { return false; }});  // in no list
  cases.push_back({"any(tags in [])", [](size_t) { return false; }});
  cases.push_back({"any(tags in [1, 3, 1, -9223372036854775808, 4])", [&d](size_t i) {
                     return Holds(d.tags[i], 1) || Holds(d.tags[i], 3) || Holds(d.tags[i], kMin);
                   }});
  cases.push_back({"any(small in [-4, 32767])", [&d](size_t i) { return Holds(d.small[i], -4) || Holds(d.small[i], 32767); }});
  cases.push_back({"small contains -32768", [&d](size_t i) { return Holds(d.small[i], -32768); }});
  const char* ops[] = {"==", "!=", "<", "<=", ">", ">="};
  for (int n : {-1, 0, 2, 6, 7}) {
    for (const char* op : ops) {
      const std::string o = op;
      auto cmp = [o, n](int64_t len) {
        return o == "==" ? len == n : o == "!=" ? len != n : o == "<" ? len < n : o == "<=" ? len <= n
               : o == ">" ? len > n : len >= n;
      };
      cases.push_back({"len(tags) " + o + " " + std::to_string(n),
                       [&d, cmp](size_t i) { return cmp(int64_t(d.tags[i].size())); }});
      cases.push_back({"len(boxes) " + o + " " + std::to_string(n),  // never indexed: a scan
                       [&d, cmp](size_t i) { return cmp(int64_t(d.tags[i].size())); }});
    }
  }
  cases.push_back({"tags contains 3 and label == 2", [&d](size_t i) { return Holds(d.tags[i], 3) && d.label[i] == 2; }});
  cases.push_back({"label == 2 and len(tags) >= 3", [&d](size_t i) { return d.label[i] == 2 && d.tags[i].size() >= 3; }});
  cases.push_back({"tags contains 0 or len(small) == 0", [&d](size_t i) { return Holds(d.tags[i], 0) || d.small[i].empty(); }});
  cases.push_back({"not (any(tags in [7, 80]) or small contains 1)", [&d](size_t i) {
                     return !(Holds(d.tags[i], 7) || Holds(d.tags[i], 80) || Holds(d.small[i], 1));
                   }});
  cases.push_back({"tags contains 1 and tags contains 2 and not small contains 0", [&d](size_t i) {
                     return Holds(d.tags[i], 1) && Holds(d.tags[i], 2) && !Holds(d.small[i], 0);
                   }});
  return cases;
}

TEST(ListQueryTest, IndexAnswersEqualAPlainLoopAndTheScan) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Data d = RandomData(seed == 3 ? 700 : 240, seed);
    const uint32_t shards = seed;
    auto indexed = Open(Write(d, true, shards));
    auto scanned = Open(Write(d, false, shards));
    ASSERT_TRUE(indexed && scanned);
    for (const Case& c : Cases(d)) {
      SCOPED_TRACE(c.expression + " seed " + std::to_string(seed));
      std::vector<uint64_t> want;
      for (size_t i = 0; i < d.tags.size(); ++i) {
        if (c.predicate(i)) want.push_back(i);
      }
      auto a = Ids(*indexed, c.expression);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      EXPECT_EQ(*a, want);
      auto b = Ids(*scanned, c.expression);
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      EXPECT_EQ(*b, want);
      auto q = Query::Parse(c.expression, *indexed);
      auto n = q->Count(*indexed);
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(*n, want.size());
    }
    EXPECT_TRUE(indexed->Verify().ok());
    EXPECT_TRUE(scanned->Verify().ok());
  }
}

TEST(ListQueryTest, ExplainSaysIndexOrScan) {
  const Data d = RandomData(20, 9);
  auto indexed = Open(Write(d, true, 1));
  auto scanned = Open(Write(d, false, 1));
  auto a = Query::Parse("tags contains 3 and len(tags) > 1", *indexed);
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->Explain().find("tags contains 3  ->  list index: binary search of the distinct values for 1 value"),
            std::string::npos) << a->Explain();
  EXPECT_NE(a->Explain().find("len(tags) > 1  ->  list index: the lengths of the rows kept so far"), std::string::npos)
      << a->Explain();
  auto b = Query::Parse("any(tags in [1, 2]) and len(boxes) > 1", *scanned);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b->Explain().find("any(tags in [1, 2])  ->  scan of every row's blob (field has no list index)"),
            std::string::npos) << b->Explain();
  EXPECT_NE(b->Explain().find("len(boxes) > 1  ->  check of the rows kept so far in their blobs"), std::string::npos)
      << b->Explain();
}

TEST(ListQueryTest, OnlyIntegerListsCanBeListIndexed) {
  Field boxes = Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4});
  boxes.indexed = true;
  EXPECT_FALSE(Schema::Make({boxes}).ok());
  Field floats = Field::Array("f", FieldType::kFloat32, {kVariableDim});
  floats.indexed = true;
  EXPECT_FALSE(Schema::Make({floats}).ok());
  Field fixed = Field::Array("f", FieldType::kInt32, {3});
  fixed.indexed = true;
  EXPECT_FALSE(Schema::Make({fixed}).ok());
  Field tags = Field::Array("t", FieldType::kUint32, {kVariableDim});
  tags.indexed = true;
  auto ok = Schema::Make({tags});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->RequiredMinorVersion(), 2);
  EXPECT_EQ(ListSchema(false).RequiredMinorVersion(), 1);  // a list without an index stays 1.1
}

// --- damage ------------------------------------------------------------------

struct Damaged {
  std::string dir;
  std::string index_path;
  fb::IndexSection section;  // the list index section of field `tags`
};

Damaged WriteOneShard() {
  Damaged out;
  out.dir = Write(RandomData(60, 4), true, 1);
  auto ds = Open(out.dir);
  out.index_path = ds->shards()[0].index_path;
  auto reader = index::IndexReader::Open(out.index_path, true);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  for (const fb::IndexSection* s : *reader->header().sections()) {
    if (s->kind() == fb::SectionKind::ListIndex && s->field() == 1) out.section = *s;
  }
  EXPECT_GT(out.section.length(), 0u);
  return out;
}

// Rewrites the section's checksum in the index header (and the header's own
// checksums), so that only the structural checks can see the damage.
void Reseal(const Damaged& d) {
  std::string bytes = testing::ReadBytes(d.index_path);
  auto* data = reinterpret_cast<uint8_t*>(bytes.data());
  auto frame = format::ReadFrame(format::FileKind::kIndex, data, bytes.size(), d.index_path);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  auto header = format::VerifyIndexHeader(frame->header, frame->header_length, d.index_path);
  ASSERT_TRUE(header.ok());
  format::IndexHeaderValues values = index::IndexHeaderValuesOf(**header);
  for (fb::IndexSection& s : values.sections) {
    if (s.offset() == d.section.offset()) {
      const uint64_t length = d.section.length();
      s = fb::IndexSection(s.offset(), length, format::Checksum(data + s.offset(), length), s.field(), s.kind());
    }
  }
  testing::WriteBytes(d.index_path, bytes);
  ASSERT_TRUE(index::WriteIndexHeader(d.index_path, frame->minor, values, frame->header_length).ok());
}

Status QueryStatus(const std::string& dir, const std::string& expression) {
  auto ds = Dataset::Open(dir);
  if (!ds.ok()) return ds.status();
  return Ids(**ds, expression).status();
}

void Poke(const Damaged& d, uint64_t offset_in_section, uint64_t value, size_t width) {
  std::string bytes = testing::ReadBytes(d.index_path);
  auto* p = reinterpret_cast<uint8_t*>(bytes.data()) + d.section.offset() + offset_in_section;
  if (width == 8) format::StoreLE<uint64_t>(p, value);
  if (width == 4) format::StoreLE<uint32_t>(p, static_cast<uint32_t>(value));
  testing::WriteBytes(d.index_path, bytes);
}

void ExpectCorruption(const Status& s, const std::string& what) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find(what), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(".uidx"), std::string::npos) << s.ToString();
}

TEST(ListIndexDamageTest, ChecksumMismatchFailsTheQuery) {
  const Damaged d = WriteOneShard();
  Poke(d, d.section.length() - 4, 0xFFFF, 4);  // the last row listed, now past the shard's rows
  ExpectCorruption(QueryStatus(d.dir, "tags contains 1"), "list index 0 checksum mismatch");
  ExpectCorruption(QueryStatus(d.dir, "len(tags) == 1"), "list index 0 checksum mismatch");
  // Unverified queries never read out of bounds (their answer may be wrong).
  DatasetOptions options;
  options.verify_checksums = false;
  auto ds = Dataset::Open(d.dir, options);
  ASSERT_TRUE(ds.ok());
  for (const char* e : {"tags contains 1", "tags contains 9223372036854775807", "len(tags) >= 2"}) {
    auto r = Ids(**ds, e);
    EXPECT_TRUE(r.ok() || r.status().code() == StatusCode::kCorruption) << r.status().ToString();
  }
  auto deep = Dataset::Open(d.dir);
  ASSERT_TRUE(deep.ok());
  ExpectCorruption((*deep)->Verify(), "list index 0 checksum mismatch");
}

TEST(ListIndexDamageTest, BadLengthIsRefusedAtOpen) {
  const Damaged d = WriteOneShard();
  Poke(d, format::kListIndexPairCountOffset, 1u << 20, 8);  // counts no longer match the length
  Reseal(d);
  ExpectCorruption(QueryStatus(d.dir, "tags contains 1"), "does not match");
}

TEST(ListIndexDamageTest, BadStartOffsetIsRefused) {
  const Damaged d = WriteOneShard();
  auto view = [&] {
    const std::string bytes = testing::ReadBytes(d.index_path);
    return *index::ListIndexView::Parse(reinterpret_cast<const uint8_t*>(bytes.data()) + d.section.offset(),
                                        d.section.length(), 60, "x");
  };
  const index::ListIndexView v = view();
  const uint64_t starts = format::kListIndexFixedSize + index::ListLengthsBytes(60) + v.value_count() * 8;
  Poke(d, starts + 8, v.pair_count() + 5, 8);
  Reseal(d);
  ExpectCorruption(QueryStatus(d.dir, "tags contains 1"), "starts not ascending");
}

TEST(ListIndexDamageTest, UnsortedValuesAreRefused) {
  const Damaged d = WriteOneShard();
  const uint64_t values = format::kListIndexFixedSize + index::ListLengthsBytes(60);
  Poke(d, values, static_cast<uint64_t>(kMax), 8);  // the smallest value becomes the largest
  Reseal(d);
  ExpectCorruption(QueryStatus(d.dir, "tags contains 1"), "values not sorted");
}

TEST(ListIndexDamageTest, LengthsThatDisagreeWithTheBlobsFailVerify) {
  const Damaged d = WriteOneShard();
  // Row 0's length + 1: structurally fine (a row may list fewer values than its length).
  std::string bytes = testing::ReadBytes(d.index_path);
  const uint32_t len0 = format::LoadLE<uint32_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + d.section.offset() +
                                                 format::kListIndexFixedSize);
  Poke(d, format::kListIndexFixedSize, len0 + 1, 4);
  Reseal(d);
  auto ds = Dataset::Open(d.dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ExpectCorruption((*ds)->Verify(), "row 0 has length " + std::to_string(len0 + 1));
}

TEST(ListIndexDamageTest, PairCountThatDisagreesWithTheBlobsFailsVerify) {
  const Damaged d = WriteOneShard();
  // Drop the last pair: P - 1, the section 4 bytes shorter in the header.
  const std::string before = testing::ReadBytes(d.index_path);
  const uint64_t pairs = format::LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(before.data()) + d.section.offset() +
                                                  format::kListIndexPairCountOffset);
  const uint64_t values_count = format::LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(before.data()) + d.section.offset());
  // The last value's run must keep one row at least: only drop when its run has two.
  const uint64_t starts = format::kListIndexFixedSize + index::ListLengthsBytes(60) + values_count * 8;
  const uint64_t last_start = format::LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(before.data()) +
                                                       d.section.offset() + starts + (values_count - 1) * 8);
  ASSERT_LT(last_start + 1, pairs) << "pick another seed: the last value has one row";
  Poke(d, format::kListIndexPairCountOffset, pairs - 1, 8);
  Poke(d, starts + values_count * 8, pairs - 1, 8);
  Poke(d, d.section.length() - 4, 0, 4);  // the dropped row becomes padding
  Damaged shorter = d;
  shorter.section = fb::IndexSection(d.section.offset(), d.section.length() - 4, 0, d.section.field(), d.section.kind());
  Reseal(shorter);
  auto ds = Dataset::Open(d.dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ExpectCorruption((*ds)->Verify(), "pairs, the values hold " + std::to_string(pairs));
}

}  // namespace
}  // namespace unirecord
