// Queries against datasets written by the Writer, checked against a plain
// loop over Dataset::Get (the differential test against SQLite is
// tests/cli/test_query.py).
#include "unirecord/query.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <random>

#include "dataset/dataset_testing.h"
#include "index/index_file.h"
#include "io/file.h"
#include "query/query_testing.h"

namespace unirecord {
namespace {

using testing::MakeTempDir;
using testing::SmallPages;
using testing::WriteSample;

constexpr uint64_t kRecords = 150;

std::shared_ptr<Dataset> OpenSample(uint32_t shards) {
  const std::string dir = MakeTempDir();
  EXPECT_TRUE(WriteSample(dir, "q", kRecords, SmallPages(shards)).ok());
  auto ds = Dataset::Open(dir);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return *ds;
}

std::vector<uint64_t> Reference(const Dataset& ds, const std::function<bool(const Record&)>& predicate) {
  std::vector<uint64_t> ids;
  for (uint64_t id = 0; id < ds.size(); ++id) {
    if (predicate(*ds.Get(id))) ids.push_back(id);
  }
  return ids;
}

struct Case {
  const char* expression;
  std::function<bool(const Record&)> predicate;
};

TEST(QueryTest, MatchesALoopOverTheRecords) {
  auto label = [](const Record& r) { return *r.GetInt64("label"); };
  auto width = [](const Record& r) { return *r.GetInt64("width"); };
  auto score = [](const Record& r) { return *r.GetFloat64("score"); };
  auto path = [](const Record& r) { return std::string(*r.GetString("path")); };
  auto ratio = [](const Record& r) { return *r.GetFloat64("ratio"); };
  auto big = [](const Record& r) { return *r.GetInt64("big"); };
  const Case cases[] = {
      {"label == 1", [&](const Record& r) { return label(r) == 1; }},
      {"label != 1", [&](const Record& r) { return label(r) != 1; }},
      {"label == \"c\"", [&](const Record& r) { return label(r) == 2; }},  // classes a..e
      {"label in [-2, 2, 7]", [&](const Record& r) { return label(r) == -2 || label(r) == 2; }},
      {"width >= 300", [&](const Record& r) { return width(r) >= 300; }},
      {"width between 30 and 60 or width < 6", [&](const Record& r) { return (width(r) >= 30 && width(r) <= 60) || width(r) < 6; }},
      {"not (label < 0 and width > 99)", [&](const Record& r) { return !(label(r) < 0 && width(r) > 99); }},
      {"score > 10.25 and score <= 20", [&](const Record& r) { return score(r) > 10.25 && score(r) <= 20; }},
      {"path == \"\"", [&](const Record& r) { return path(r).empty(); }},
      {"path >= 'class3' and label == 1", [&](const Record& r) { return path(r) >= "class3" && label(r) == 1; }},
      {"ratio < 0.02 or big between 0 and 50000000000", [&](const Record& r) { return ratio(r) < 0.02 || (big(r) >= 0 && big(r) <= 50000000000); }},
      {"label == 1 and not path not in ['class3/img_3.jpg', 'class3/img_8.jpg', 'nope']",
       [&](const Record& r) { return label(r) == 1 && (path(r) == "class3/img_3.jpg" || path(r) == "class3/img_8.jpg"); }},
      {"width >= 0 and big > 0 and label == 1 and width < 200",  // runs label first, big last
       [&](const Record& r) { return width(r) >= 0 && big(r) > 0 && label(r) == 1 && width(r) < 200; }},
      {"width > 1000000", [](const Record&) { return false; }},
      {"width >= -9223372036854775808", [](const Record&) { return true; }},
  };
  for (uint32_t shards : {1u, 4u}) {
    auto ds = OpenSample(shards);
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.expression) + " over " + std::to_string(shards) + " shards");
      auto query = Query::Parse(c.expression, *ds);
      ASSERT_TRUE(query.ok()) << query.status().ToString();
      auto ids = query->Ids(*ds);
      ASSERT_TRUE(ids.ok()) << ids.status().ToString();
      EXPECT_EQ(*ids, Reference(*ds, c.predicate));
      auto count = query->Count(*ds);
      ASSERT_TRUE(count.ok());
      EXPECT_EQ(*count, ids->size());
    }
  }
}

TEST(QueryTest, CountByGroupsTheMatches) {
  auto ds = OpenSample(3);
  auto query = Query::Parse("width < 60", *ds);  // records 0..19
  ASSERT_TRUE(query.ok());
  auto by_label = query->CountBy(*ds, "label");
  ASSERT_TRUE(by_label.ok()) << by_label.status().ToString();
  ASSERT_EQ(by_label->size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*by_label)[i].value.int_value, static_cast<int64_t>(i) - 2);
    EXPECT_EQ((*by_label)[i].count, 4u);
  }
  auto by_path = query->CountBy(*ds, "path");
  ASSERT_TRUE(by_path.ok());
  EXPECT_EQ(by_path->front().value.string_value, "");  // records 0, 7, 14
  EXPECT_EQ(by_path->front().count, 3u);
  EXPECT_EQ(by_path->size(), 18u);
  auto by_score = query->CountBy(*ds, "score");
  ASSERT_TRUE(by_score.ok());
  ASSERT_EQ(by_score->size(), 20u);
  EXPECT_EQ((*by_score)[3].value.float_value, 0.75);
  EXPECT_EQ((*by_score)[3].value.ToString(), "0.75");
  EXPECT_FALSE(query->CountBy(*ds, "image").ok());
  EXPECT_FALSE(query->CountBy(*ds, "mean").ok());
  EXPECT_FALSE(query->CountBy(*ds, "nope").ok());
}

TEST(QueryTest, ForEachValueVisitsEveryRecordOrTheMatchesInIdOrder) {
  auto ds = OpenSample(3);
  // Indexed int and float; int, float and string in scalar pages.
  for (const std::string field : {"label", "score", "big", "ratio", "path"}) {
    SCOPED_TRACE(field);
    std::vector<uint64_t> ids;
    std::vector<std::string> values;
    ASSERT_TRUE(Query::ForEachValue(*ds, field, nullptr, [&](uint64_t id, const QueryValue& v) {
                  ids.push_back(id);
                  values.push_back(v.ToString());
                  return Status::OK();
                }).ok());
    ASSERT_EQ(ids.size(), kRecords);
    for (uint64_t id = 0; id < kRecords; ++id) {
      EXPECT_EQ(ids[id], id);
      const Result<Record> got = ds->Get(id);
      ASSERT_TRUE(got.ok());
      const Record& record = *got;
      QueryValue expected;
      const FieldType type = ds->schema().field(*ds->schema().FindField(field)).type;
      if (IsIntegral(type)) {
        expected.int_value = *record.GetInt64(field);
      } else if (type != FieldType::kString) {
        expected.type = FieldType::kFloat64;
        expected.float_value = *record.GetFloat64(field);
      } else {
        expected.type = FieldType::kString;
        expected.string_value = std::string(*record.GetString(field));
      }
      EXPECT_EQ(values[id], expected.ToString()) << "record " << id;
    }
  }
  auto query = Query::Parse("width < 60", *ds);  // records 0..19
  ASSERT_TRUE(query.ok());
  std::vector<uint64_t> ids;
  ASSERT_TRUE(Query::ForEachValue(*ds, "label", &*query, [&](uint64_t id, const QueryValue&) {
                ids.push_back(id);
                return Status::OK();
              }).ok());
  EXPECT_EQ(ids, *query->Ids(*ds));
  // A visit's error stops the scan and is the answer.
  int visits = 0;
  const Status stopped = Query::ForEachValue(*ds, "label", nullptr, [&](uint64_t, const QueryValue&) {
    return ++visits == 3 ? Status::Unavailable("stop") : Status::OK();
  });
  EXPECT_EQ(stopped.code(), StatusCode::kUnavailable);
  EXPECT_EQ(visits, 3);
  EXPECT_EQ(Query::ForEachValue(*ds, "image", nullptr, [](uint64_t, const QueryValue&) { return Status::OK(); }).code(),
            StatusCode::kInvalidArgument);
}

TEST(QueryTest, ExplainNamesThePlanOfEachClause) {
  auto ds = OpenSample(1);
  auto query = Query::Parse("path == 'x' and label in [1, 2] and width > 3", *ds);
  ASSERT_TRUE(query.ok());
  const std::string plan = query->Explain();
  EXPECT_NE(plan.find("label in [1, 2]  ->  sorted index: binary search for 2 ranges"), std::string::npos) << plan;
  EXPECT_NE(plan.find("width > 3  ->  sorted index"), std::string::npos) << plan;
  EXPECT_NE(plan.find("path == 'x'  ->  check of the rows kept so far in the scalar pages"), std::string::npos) << plan;
  // Indexed clauses run first.
  EXPECT_LT(plan.find("label in"), plan.find("path =="));
}

TEST(QueryTest, RefusesADatasetOfAnotherSchema) {
  auto ds = OpenSample(1);
  auto other = Schema::Make({Field::Int64("label", true)});
  auto query = Query::Parse("label == 1", *other);
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(query->Ids(*ds).status().code(), StatusCode::kInvalidArgument);
}

TEST(QueryTest, DamagedSortedIndexIsCorruptionNotACrash) {
  const std::string dir = MakeTempDir();
  ASSERT_TRUE(WriteSample(dir, "q", kRecords, SmallPages(1)).ok());
  std::string index_path;
  {
    auto written = Dataset::Open(dir);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    index_path = (*written)->shards()[0].index_path;
  }
  uint64_t offset = 0;
  {
    auto reader = index::IndexReader::Open(index_path, false);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    offset = reader->header().sections()->Get(1)->offset();  // the sorted index of 'label'
  }
  std::fstream file(index_path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  const std::string garbage(4 * kRecords, '\xff');
  file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  file.close();
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok());
  auto query = Query::Parse("label == 1", **ds);
  ASSERT_TRUE(query.ok());
  auto ids = query->Ids(**ds);
  EXPECT_EQ(ids.status().code(), StatusCode::kCorruption);
  EXPECT_NE(ids.status().message().find(index_path), std::string::npos) << ids.status().message();
  EXPECT_EQ(query->Count(**ds).status().code(), StatusCode::kCorruption);
}

// Issue 22: with checksums on, a query over a damaged sorted index either
// fails naming the index file and the section or answers exactly as over the
// undamaged index. Each of 240 seeded single-byte changes lands inside one of
// the sorted-index sections; the dataset is opened afresh for each.
TEST(QueryTest, DamagedSortedIndexNeverGivesAWrongAnswer) {
  const std::string dir = MakeTempDir();
  ASSERT_TRUE(WriteSample(dir, "q", kRecords, SmallPages(2)).ok());
  const char* const kExpressions[] = {"label == 1", "label in [-2, 2]", "width between 30 and 300",
                                      "width >= 100 and label == 0", "score > 10.25 and score <= 20",
                                      "not (score < 5)", "label == 1 or width < 30", "label != 0"};
  std::vector<std::string> paths;
  std::vector<std::string> expected;
  {
    auto ds = Dataset::Open(dir);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    for (const ShardInfo& shard : (*ds)->shards()) paths.push_back(shard.index_path);
    for (const char* expression : kExpressions) {
      auto answer = testing::QueryAnswers(**ds, expression);
      ASSERT_TRUE(answer.ok()) << answer.status().ToString();
      expected.push_back(*answer);
    }
  }
  // (file, section, offset range) of every sorted-index section.
  struct Section {
    size_t file;
    size_t number;
    uint64_t begin, length;
  };
  std::vector<Section> sections;
  for (size_t f = 0; f < paths.size(); ++f) {
    auto reader = index::IndexReader::Open(paths[f], false);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const auto* list = reader->header().sections();
    for (flatbuffers::uoffset_t i = 1; i < list->size(); ++i) {
      sections.push_back({f, i - 1, list->Get(i)->offset(), list->Get(i)->length()});
    }
  }
  ASSERT_EQ(sections.size(), 6u);  // label, width, score in each of 2 shards
  std::mt19937_64 random(22);
  int errors = 0;
  for (int flip = 0; flip < 240; ++flip) {
    const Section& s = sections[random() % sections.size()];
    const uint64_t offset = s.begin + random() % s.length;
    const auto change = static_cast<char>(1 + random() % 255);  // never 0: the byte changes
    const std::string& path = paths[s.file];
    const std::string original = testing::ReadBytes(path);
    std::string damaged = original;
    damaged[offset] = static_cast<char>(damaged[offset] ^ change);
    testing::WriteBytes(path, damaged);
    auto ds = Dataset::Open(dir);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();  // open does not hash sections
    const std::string section = "sorted index " + std::to_string(s.number);
    for (size_t e = 0; e < std::size(kExpressions); ++e) {
      SCOPED_TRACE(std::string(kExpressions[e]) + " with byte " + std::to_string(offset) + " of " + path +
                   " (" + section + ") changed");
      auto answer = testing::QueryAnswers(**ds, kExpressions[e]);
      if (answer.ok()) {
        EXPECT_EQ(*answer, expected[e]);
        continue;
      }
      ++errors;
      EXPECT_EQ(answer.status().code(), StatusCode::kCorruption);
      EXPECT_NE(answer.status().message().find(path + ": " + section + " checksum mismatch"), std::string::npos)
          << answer.status().message();
    }
    EXPECT_EQ((*ds)->Verify().code(), StatusCode::kCorruption);
    testing::WriteBytes(path, original);
  }
  EXPECT_GT(errors, 240);  // each damaged section is used by several expressions
}

}  // namespace
}  // namespace unirecord
