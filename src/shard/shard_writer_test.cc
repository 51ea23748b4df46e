// ShardWriter on its own: what it writes reads back through ShardReader
// field by field, pages are cut by the page settings, and the header it
// finalizes is the one given.
#include "shard/shard_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "shard/shard_testing.h"

namespace unirecord::shard {
namespace {

using testing::ShardSpec;
using testing::TestRecord;
using testing::WriteTestShard;

size_t FieldIndex(const Schema& schema, const std::string& name) {
  for (size_t f = 0; f < schema.num_fields(); ++f) {
    if (schema.field(f).name == name) return f;
  }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

// The stored bytes of field `name` of `row` (inflated when compressed).
std::string Blob(const ShardReader& reader, uint64_t row, const std::string& name) {
  const int blob_slot = reader.layout().blob_slot[FieldIndex(reader.header().schema, name)];
  EXPECT_GE(blob_slot, 0) << name << " is not a blob";
  const size_t slot = static_cast<size_t>(blob_slot);
  Result<const uint8_t*> entry = reader.Entry(row, true);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  Result<BlobBytes> blob = reader.ReadBlob(*entry, row, slot, BlobCheck::kWhole);
  EXPECT_TRUE(blob.ok()) << blob.status().ToString();
  if (!blob.ok()) return "";
  return blob->inflated ? *blob->inflated : std::string(blob->mapped);
}

TEST(ShardWriterTest, EveryFieldReadsBackThroughTheReader) {
  unirecord::testing::ScratchDir dir;
  ShardSpec spec;
  auto written = WriteTestShard(dir.path(), spec);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  auto reader = ShardReader::Open(written->shard_path, /*verify_index=*/true);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const ShardReader& r = **reader;
  EXPECT_TRUE(r.Verify().ok()) << r.Verify().ToString();

  // The header Finalize was given, the schema and metadata of the context.
  const format::ShardHeaderValues& h = r.header().values;
  EXPECT_EQ(h.uuid, testing::TestUuid(1));
  EXPECT_EQ(h.shard_number, 0u);
  EXPECT_EQ(h.shard_count, 1u);
  EXPECT_EQ(h.record_count, spec.records);
  EXPECT_EQ(h.blob_page_bytes, spec.pages.blob_page_bytes);
  EXPECT_EQ(h.scalar_page_bytes, spec.pages.scalar_page_bytes);
  EXPECT_EQ(h.zstd_level, spec.pages.zstd_level);
  EXPECT_EQ(r.header().schema, spec.schema);
  EXPECT_EQ(r.header().metadata, spec.metadata);
  EXPECT_EQ(r.records(), spec.records);
  EXPECT_EQ(r.footer().record_count(), spec.records);
  EXPECT_EQ(r.file_size(), written->shard_file_length);
  EXPECT_EQ(r.index().header().shard_footer_checksum(), written->footer_checksum);
  EXPECT_EQ(r.minor(), spec.schema.RequiredMinorVersion());

  const size_t label = FieldIndex(spec.schema, "label");
  const size_t score = FieldIndex(spec.schema, "score");
  const Field& tokens_field = spec.schema.field(FieldIndex(spec.schema, "tokens"));
  for (uint64_t row = 0; row < r.records(); ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    const testing::TestValues v = TestRecord(row);
    EXPECT_EQ(Blob(r, row, "image"), v.image);
    EXPECT_EQ(Blob(r, row, "text"), v.text);
    format::ParsedArray tokens;
    const std::string stored = Blob(r, row, "tokens");
    ASSERT_TRUE(format::ParseVarArray(tokens_field, stored, &tokens).ok());
    ASSERT_EQ(tokens.dims[0], static_cast<int64_t>(v.tokens.size()));
    ASSERT_EQ(tokens.count, v.tokens.size());
    if (!v.tokens.empty()) EXPECT_EQ(0, std::memcmp(tokens.data, v.tokens.data(), 4 * v.tokens.size()));
    // The indexed label is inline in the record table entry.
    const uint8_t* entry = *r.Entry(row, true);
    uint8_t raw[8];
    format::StoreLE<int64_t>(raw, v.label);
    EXPECT_EQ(format::LoadLE<uint64_t>(entry + r.layout().IndexedValueOffset(
                                                   static_cast<size_t>(r.layout().indexed_slot[label]))),
              format::IndexedBitsOf(FieldType::kInt64, raw));
    // The score is in a scalar page.
    uint32_t row_in_page = 0;
    auto page = r.ScalarPage(entry, row, true, &row_in_page);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    const std::string_view value =
        (*page)->view.Value(static_cast<size_t>(r.layout().column_slot[score]), row_in_page);
    float stored_score = 0;
    ASSERT_EQ(value.size(), 4u);
    std::memcpy(&stored_score, value.data(), 4);
    EXPECT_EQ(stored_score, v.score);
    // So is the (short) string.
    EXPECT_EQ((*page)->view.Value(static_cast<size_t>(r.layout().column_slot[FieldIndex(spec.schema, "path")]),
                                  row_in_page),
              v.path);
  }

  // The sorted index orders the rows by label, ties by row.
  auto sorted = r.index().SortedIndex(0, true);
  ASSERT_TRUE(sorted.ok()) << sorted.status().ToString();
  std::vector<std::pair<int64_t, uint64_t>> expected;
  for (uint64_t row = 0; row < r.records(); ++row) expected.emplace_back(TestRecord(row).label, row);
  std::sort(expected.begin(), expected.end());
  for (uint64_t i = 0; i < r.records(); ++i) {
    EXPECT_EQ(format::LoadLE<uint32_t>(*sorted + i * format::kSortedEntrySize), expected[i].second) << i;
  }
}

TEST(ShardWriterTest, PagesAreCutByThePageSettings) {
  unirecord::testing::ScratchDir small_dir, large_dir;
  ShardSpec small;
  ShardSpec large;
  large.pages = PageSettings{1 << 20, 1 << 20, 3};
  auto a = WriteTestShard(small_dir.path(), small);
  auto b = WriteTestShard(large_dir.path(), large);
  ASSERT_TRUE(a.ok() && b.ok());
  auto count = [](const std::string& path, fb::PageKind kind) {
    auto reader = ShardReader::Open(path, true);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return 0;
    int n = 0;
    for (const fb::PageEntry* p : *(*reader)->footer().pages()) {
      n += p->kind() == kind;
      EXPECT_EQ(p->offset() % format::kPageAlignment, 0u);
    }
    return n;
  };
  // Each scalar page closes the blob page before it, so small scalar pages cut blob pages too.
  EXPECT_GT(count(a->shard_path, fb::PageKind::Scalar), 3);
  EXPECT_GT(count(a->shard_path, fb::PageKind::Blob), 3);
  EXPECT_EQ(count(b->shard_path, fb::PageKind::Scalar), 1);
  EXPECT_EQ(count(b->shard_path, fb::PageKind::Blob), 1);
}

TEST(ShardWriterTest, AnEmptyShardAndAShardWithoutColumnsReadBack) {
  unirecord::testing::ScratchDir empty_dir, blobs_dir;
  ShardSpec empty;
  empty.records = 0;
  auto a = WriteTestShard(empty_dir.path(), empty);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto ra = ShardReader::Open(a->shard_path, true);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_EQ((*ra)->records(), 0u);
  EXPECT_EQ((*ra)->footer().pages()->size(), 0u);
  EXPECT_TRUE((*ra)->Verify().ok());

  ShardSpec blobs;
  blobs.schema = testing::NoColumnSchema();
  auto b = WriteTestShard(blobs_dir.path(), blobs);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto rb = ShardReader::Open(b->shard_path, true);
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  EXPECT_TRUE((*rb)->Verify().ok()) << (*rb)->Verify().ToString();
  for (uint64_t row = 0; row < (*rb)->records(); ++row) {
    EXPECT_EQ(format::LoadLE<uint32_t>(*(*rb)->Entry(row, true) + format::kEntryScalarPageOffset),
              format::kNoScalarPage);
    EXPECT_EQ(Blob(**rb, row, "image"), TestRecord(row).image);
  }
}

// AddColumns writes the bytes Add writes row by row: the same page cuts
// (pages of one row, pages exactly full at 1 and 4 rows of 84 and 136 raw
// bytes, pages that fill on a row's padding, one page), with and without a
// record table, whatever the calls' sizes.
TEST(ShardWriterTest, RowsFromColumnsWriteTheFilesOfRowByRow) {
  for (const uint32_t page_bytes : {1u, 84u, 136u, 256u, 1000u, 1u << 20}) {
    for (const bool record_table : {true, false}) {
      ShardSpec by_row;
      by_row.schema = testing::NumericColumnSchema();
      by_row.records = 700;
      by_row.pages.scalar_page_bytes = page_bytes;
      by_row.record_table = record_table;
      unirecord::testing::ScratchDir row_dir;
      auto expected = WriteTestShard(row_dir.path(), by_row);
      ASSERT_TRUE(expected.ok()) << expected.status().ToString();
      for (const uint64_t chunk : {uint64_t{1}, uint64_t{7}, uint64_t{700}}) {
        SCOPED_TRACE("page bytes " + std::to_string(page_bytes) + ", record table " + std::to_string(record_table) +
                     ", rows a call " + std::to_string(chunk));
        ShardSpec by_column = by_row;
        by_column.column_chunk = chunk;
        unirecord::testing::ScratchDir column_dir;
        auto written = WriteTestShard(column_dir.path(), by_column);
        ASSERT_TRUE(written.ok()) << written.status().ToString();
        EXPECT_TRUE(testing::ReadBytes(written->shard_path) == testing::ReadBytes(expected->shard_path));
        EXPECT_TRUE(testing::ReadBytes(written->index_path) == testing::ReadBytes(expected->index_path));
      }
    }
  }
  // Fields that are not fixed-width scalar-page columns are refused.
  ShardSpec mixed;
  mixed.column_chunk = 10;
  unirecord::testing::ScratchDir mixed_dir;
  EXPECT_FALSE(WriteTestShard(mixed_dir.path(), mixed).ok());
}

TEST(ShardWriterTest, WriteShardHeaderRefusesAHeaderOfAnotherSize) {
  unirecord::testing::ScratchDir dir;
  ShardSpec spec;
  auto written = WriteTestShard(dir.path(), spec);
  ASSERT_TRUE(written.ok());
  auto reader = ShardReader::Open(written->shard_path, true);
  ASSERT_TRUE(reader.ok());
  const uint64_t header_length = (*reader)->header_length();
  format::ShardHeaderValues values = (*reader)->header().values;
  reader->reset();
  // The same schema and metadata: rewritten in place (a staged write stamps its values so).
  values.uuid = testing::TestUuid(2);
  ASSERT_TRUE(WriteShardHeader(written->shard_path, spec.schema, spec.metadata, values, header_length, false).ok());
  // Longer metadata would not fit the header space.
  format::Metadata longer = spec.metadata;
  longer["extra"] = std::string(64, 'x');
  const Status refused = WriteShardHeader(written->shard_path, spec.schema, longer, values, header_length, false);
  EXPECT_EQ(refused.code(), StatusCode::kInternal) << refused.ToString();
  EXPECT_NE(refused.message().find("changed size"), std::string::npos) << refused.ToString();
  // The uuid changed in the shard only: the index still names the old dataset.
  auto reopened = ShardReader::Open(written->shard_path, true);
  ASSERT_FALSE(reopened.ok());
  EXPECT_NE(reopened.status().message().find("belongs to dataset"), std::string::npos)
      << reopened.status().ToString();
}

}  // namespace
}  // namespace unirecord::shard
