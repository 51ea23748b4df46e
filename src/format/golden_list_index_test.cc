// Golden files of format 1.2 (tests/data/golden/README.md): a dataset with
// list indexes (format/SPEC.md section 8.4) that must keep decoding, keep
// answering list queries from its index, and that today's writer reproduces
// byte for byte.
//
// Regenerate (only when the format version changes):
//   UREC_WRITE_GOLDEN=1 build/src/format/golden_list_index_test --gtest_filter=GoldenListIndexTest.Regenerate
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <limits>

#include "dataset/dataset_testing.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/query.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

const std::string kGoldenDir = std::string(UNIRECORD_TEST_DATA_DIR) + "/golden";

Schema ListsSchema() {
  Field tags = Field::Array("tags", FieldType::kInt64, {kVariableDim});
  tags.indexed = true;
  Field small = Field::Array("small", FieldType::kUint8, {kVariableDim});
  small.indexed = true;
  return Schema::Make({Field::Int32("label", /*indexed=*/true), tags, small,
                       Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4})})
      .value();
}

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Row {
  int32_t label;
  std::vector<int64_t> tags;
  std::vector<uint8_t> small;
  size_t boxes;  // number of boxes
};

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      {0, {3, 1, 3}, {255, 0}, 2},  // a repeated value
      {1, {}, {}, 0},               // empty lists
      {2, {kMin, kMax, -5}, {7}, 1},
      {0, {1}, {7, 7, 7}, 3},
      {1, {-5, 3}, {}, 0},
  };
  return rows;
}

Status WriteGolden(const std::string& dir, const std::string& name) {
  const Schema schema = ListsSchema();
  WriterOptions options = testing::SmallPages(1);
  options.sync = false;
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, name, schema, options));
  RecordBuilder record(schema);
  for (const Row& row : Rows()) {
    UREC_RETURN_IF_ERROR(record.SetValues("label", FieldType::kInt32, &row.label, {}));
    UREC_RETURN_IF_ERROR(record.SetValues("tags", FieldType::kInt64, row.tags.data(), {int64_t(row.tags.size())}));
    UREC_RETURN_IF_ERROR(record.SetValues("small", FieldType::kUint8, row.small.data(), {int64_t(row.small.size())}));
    std::vector<float> boxes(row.boxes * 4, 1.5f);
    UREC_RETURN_IF_ERROR(record.SetValues("boxes", FieldType::kFloat32, boxes.data(), {int64_t(row.boxes), 4}));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return testing::ToPreManifestLayout(dir, name, writer->summary());
}

TEST(GoldenListIndexTest, Regenerate) {
  if (std::getenv("UREC_WRITE_GOLDEN") == nullptr) GTEST_SKIP() << "set UREC_WRITE_GOLDEN=1 to rewrite the golden files";
  std::filesystem::remove_all(kGoldenDir + "/v1_2");
  std::filesystem::create_directories(kGoldenDir + "/v1_2");
  ASSERT_TRUE(WriteGolden(kGoldenDir + "/v1_2", "lists").ok());
}

std::vector<uint64_t> Ids(const Dataset& ds, const std::string& expression) {
  auto q = Query::Parse(expression, ds);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  if (!q.ok()) return {};
  auto ids = q->Ids(ds);
  EXPECT_TRUE(ids.ok()) << ids.status().ToString();
  return ids.ok() ? *ids : std::vector<uint64_t>{};
}

TEST(GoldenListIndexTest, Version12DatasetDecodesAndAnswers) {
  auto ds = Dataset::Open(kGoldenDir + "/v1_2");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->schema(), ListsSchema());
  EXPECT_EQ((*ds)->shards()[0].format_minor, format::kFormatMinorListIndex);
  ASSERT_EQ((*ds)->size(), Rows().size());
  for (uint64_t id = 0; id < Rows().size(); ++id) {
    auto r = (*ds)->Get(id);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const ArrayView tags = *r->GetArray("tags");
    const int64_t* p = static_cast<const int64_t*>(tags.data);
    EXPECT_EQ(std::vector<int64_t>(p, p + tags.count), Rows()[id].tags) << id;
  }
  const Dataset& d = **ds;
  EXPECT_EQ(Ids(d, "tags contains 3"), (std::vector<uint64_t>{0, 4}));
  EXPECT_EQ(Ids(d, "any(tags in [1, -5])"), (std::vector<uint64_t>{0, 2, 3, 4}));
  EXPECT_EQ(Ids(d, "tags contains -9223372036854775808"), (std::vector<uint64_t>{2}));
  EXPECT_EQ(Ids(d, "tags contains 9223372036854775807"), (std::vector<uint64_t>{2}));
  EXPECT_EQ(Ids(d, "not tags contains 3"), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Ids(d, "len(tags) == 3"), (std::vector<uint64_t>{0, 2}));
  EXPECT_EQ(Ids(d, "len(small) >= 2"), (std::vector<uint64_t>{0, 3}));
  EXPECT_EQ(Ids(d, "small contains 7 and label == 0"), (std::vector<uint64_t>{3}));
  EXPECT_EQ(Ids(d, "len(boxes) >= 2"), (std::vector<uint64_t>{0, 3}));  // no list index: a scan
  Status verified = (*ds)->Verify();
  EXPECT_TRUE(verified.ok()) << verified.ToString();
}

TEST(GoldenListIndexTest, TodaysWriterReproducesTheGoldenBytes) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(WriteGolden(dir, "lists").ok());
  for (const char* name : {"lists-00000-of-00001.urec", "lists-00000-of-00001.uidx"}) {
    EXPECT_EQ(testing::ReadBytes(dir + "/" + name), testing::ReadBytes(kGoldenDir + "/v1_2/" + name)) << name;
  }
}

}  // namespace
}  // namespace unirecord
