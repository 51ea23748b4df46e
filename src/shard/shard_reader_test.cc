// ShardReader's own checks, one test per kind of damage it detects (the
// frame, header and footer codecs are the format layer's and tested there):
// each edit keeps every other checksum valid, so that the check under test is
// the one that must catch it, and the error must name the file at fault.
#include "shard/shard_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "shard/shard_testing.h"

namespace unirecord::shard {
namespace {

using testing::EditEntry;
using testing::EditPages;
using testing::FlipByte;
using testing::ResealIndex;
using testing::ShardSpec;
using unirecord::testing::ReadBytes;
using unirecord::testing::WriteBytes;

void ExpectError(const Status& status, StatusCode code, const std::string& file, const std::string& words) {
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(io::BaseName(file)), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find(words), std::string::npos) << "want '" << words << "': " << status.ToString();
}

class ShardReaderTest : public ::testing::Test {
 protected:
  void Write(ShardSpec spec = {}) {
    spec_ = spec;
    auto written = testing::WriteTestShard(dir_.path(), spec_);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    shard_ = written->shard_path;
    index_ = written->index_path;
    layout_ = index::FieldLayout::For(spec_.schema, spec_.record_table);
  }
  void SetUp() override { Write(); }

  std::unique_ptr<ShardReader> OpenOk(bool verify_index = false) {
    auto reader = ShardReader::Open(shard_, verify_index);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    return reader.ok() ? std::move(reader).value() : nullptr;
  }
  void ExpectOpenFails(StatusCode code, const std::string& file, const std::string& words) {
    auto reader = ShardReader::Open(shard_, /*verify_index=*/true);
    ASSERT_FALSE(reader.ok()) << "opened despite the damage";
    ExpectError(reader.status(), code, file, words);
  }

  size_t BlobSlot(const std::string& name) const {
    for (size_t f = 0; f < spec_.schema.num_fields(); ++f) {
      if (spec_.schema.field(f).name == name) return static_cast<size_t>(layout_.blob_slot[f]);
    }
    ADD_FAILURE() << name;
    return 0;
  }
  index::BlobLocator Locator(uint64_t row, const std::string& name) {
    auto reader = OpenOk();
    return index::LoadBlobLocator(layout_, *reader->Entry(row, true), BlobSlot(name));
  }
  void EditLocator(uint64_t row, const std::string& name, const std::function<void(index::BlobLocator&)>& edit) {
    const size_t slot = BlobSlot(name);
    EditEntry(index_, layout_, row, [&](uint8_t* entry) {
      index::BlobLocator b = index::LoadBlobLocator(layout_, entry, slot);
      edit(b);
      index::StoreBlobLocator(layout_, entry, slot, b);
    });
  }
  Status ReadBlob(uint64_t row, const std::string& name, bool verify) {
    auto reader = OpenOk();
    if (reader == nullptr) return Status::Internal("not opened");
    auto entry = reader->Entry(row, false);
    if (!entry.ok()) return entry.status();
    return reader->ReadBlob(*entry, row, BlobSlot(name), verify ? BlobCheck::kWhole : BlobCheck::kNone).status();
  }
  Status ScalarPage(uint64_t row, bool verify) {
    auto reader = OpenOk();
    if (reader == nullptr) return Status::Internal("not opened");
    auto entry = reader->Entry(row, false);
    if (!entry.ok()) return entry.status();
    uint32_t row_in_page = 0;
    return reader->ScalarPage(*entry, row, verify, &row_in_page).status();
  }
  Status Verify() {
    auto reader = OpenOk();
    return reader == nullptr ? Status::Internal("not opened") : reader->Verify();
  }
  std::vector<fb::PageEntry> Pages() {
    auto reader = OpenOk();
    std::vector<fb::PageEntry> pages;
    for (const fb::PageEntry* p : *reader->footer().pages()) pages.push_back(*p);
    return pages;
  }
  // The number of the first page of `kind`, and of the scalar page of `row`.
  uint32_t FirstPage(fb::PageKind kind) {
    const auto pages = Pages();
    for (uint32_t p = 0; p < pages.size(); ++p) {
      if (pages[p].kind() == kind) return p;
    }
    ADD_FAILURE() << "no such page";
    return 0;
  }
  static fb::PageEntry With(const fb::PageEntry& p, uint64_t offset, uint64_t stored, uint64_t raw, uint32_t first_row,
                            uint32_t rows, fb::PageKind kind, fb::Codec codec) {
    return fb::PageEntry(offset, stored, raw, p.checksum(), first_row, rows, kind, codec);
  }

  unirecord::testing::ScratchDir dir_;
  ShardSpec spec_;
  std::string shard_, index_;
  index::FieldLayout layout_;
};

TEST_F(ShardReaderTest, IntactShardOpensAndVerifies) {
  auto reader = OpenOk(/*verify_index=*/true);
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->Verify().ok()) << reader->Verify().ToString();
  EXPECT_EQ(reader->path(), shard_);
  EXPECT_EQ(reader->index_path(), index_);
  EXPECT_EQ(reader->RowContext(3), shard_ + ": row 3");
}

// --- Open: the two files and their agreement --------------------------------

TEST_F(ShardReaderTest, DamagedFrameIsCorruptionNamingTheShard) {
  const std::string intact = ReadBytes(shard_);
  WriteBytes(shard_, intact.substr(0, intact.size() - 1));
  ExpectOpenFails(StatusCode::kCorruption, shard_, "truncated");
  WriteBytes(shard_, intact);
  FlipByte(shard_, format::kHeaderOffset + 2);  // the header, under the preamble's checksum
  ExpectOpenFails(StatusCode::kCorruption, shard_, "header");
}

TEST_F(ShardReaderTest, ShardNumberNotBelowShardCount) {
  spec_.edit = [](format::ShardHeaderValues& h, format::IndexHeaderValues& i) {
    h.shard_number = i.shard_number = 2;
    h.shard_count = i.shard_count = 2;
  };
  Write(spec_);
  ExpectOpenFails(StatusCode::kCorruption, shard_, "shard number 2 of 2");
}

TEST_F(ShardReaderTest, HeaderAndFooterDisagreeOnTheRecordCount) {
  spec_.edit = [](format::ShardHeaderValues& h, format::IndexHeaderValues&) { h.record_count += 1; };
  Write(spec_);
  ExpectOpenFails(StatusCode::kCorruption, shard_, "footer and header disagree on the record count");
}

TEST_F(ShardReaderTest, MissingIndexIsNotFound) {
  io::RemoveFileIfExists(index_);
  ExpectOpenFails(StatusCode::kNotFound, index_, "index of shard");
}

TEST_F(ShardReaderTest, IndexOfAnotherDataset) {
  spec_.edit = [](format::ShardHeaderValues&, format::IndexHeaderValues& i) { i.uuid = testing::TestUuid(9); };
  Write(spec_);
  ExpectOpenFails(StatusCode::kCorruption, index_, "belongs to dataset");
}

TEST_F(ShardReaderTest, IndexOfAnotherShardNumber) {
  spec_.edit = [](format::ShardHeaderValues& h, format::IndexHeaderValues& i) {
    h.shard_count = i.shard_count = 3;
    i.shard_number = 1;
  };
  Write(spec_);
  ExpectOpenFails(StatusCode::kCorruption, index_, "index of shard 1 of 3");
}

TEST_F(ShardReaderTest, IndexWrittenForAnotherVersionOfTheShard) {
  ResealIndex(index_, [](format::IndexHeaderValues& v) { v.shard_file_length += format::kPageAlignment; });
  ExpectOpenFails(StatusCode::kCorruption, index_, "written for another version of it");
  Write();
  ResealIndex(index_, [](format::IndexHeaderValues& v) { v.shard_footer_checksum ^= 1; });
  ExpectOpenFails(StatusCode::kCorruption, index_, "written for another version of it");
}

TEST_F(ShardReaderTest, IndexRecordCountDiffers) {
  ResealIndex(index_, [](format::IndexHeaderValues& v) { v.dataset_record_count = v.record_count += 1; });
  auto reader = ShardReader::Open(shard_, true);
  ASSERT_FALSE(reader.ok());
  // The index reader may already find its record table too short for the count.
  EXPECT_EQ(reader.status().code(), StatusCode::kCorruption) << reader.status().ToString();
  EXPECT_NE(reader.status().message().find(io::BaseName(index_)), std::string::npos) << reader.status().ToString();
}

TEST_F(ShardReaderTest, RecordTableLayoutOfAnotherSchema) {
  ResealIndex(index_, [](format::IndexHeaderValues& v) { std::swap(v.blob_fields[0], v.blob_fields[1]); });
  ExpectOpenFails(StatusCode::kCorruption, index_, "record table layout does not match the shard's schema");
}

// --- Entries and blobs ---------------------------------------------------------

TEST_F(ShardReaderTest, EntryChecksumMismatch) {
  const fb::IndexSection table = testing::IndexSections(index_).at(0);
  FlipByte(index_, table.offset() + 5 * layout_.entry_stride + 1);
  auto reader = OpenOk(/*verify_index=*/false);
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->Entry(5, false).ok());
  ExpectError(reader->Entry(5, true).status(), StatusCode::kCorruption, index_,
              "record table entry of row 5 checksum mismatch");
  EXPECT_TRUE(reader->Entry(4, true).ok());
}

TEST_F(ShardReaderTest, BlobOutOfBounds) {
  EditLocator(3, "image", [&](index::BlobLocator& b) { b.offset = ReadBytes(shard_).size(); });
  ExpectError(ReadBlob(3, "image", false), StatusCode::kCorruption, shard_, "row 3: blob 'image' out of bounds");
  Write();
  EditLocator(3, "image", [](index::BlobLocator& b) { b.offset = 0; });  // inside the preamble
  ExpectError(ReadBlob(3, "image", false), StatusCode::kCorruption, shard_, "row 3: blob 'image' out of bounds");
}

TEST_F(ShardReaderTest, BlobChecksumMismatch) {
  FlipByte(shard_, Locator(4, "image").offset + 7);
  EXPECT_TRUE(ReadBlob(4, "image", false).ok());
  ExpectError(ReadBlob(4, "image", true), StatusCode::kCorruption, shard_, "row 4: blob 'image' checksum mismatch");
}

TEST_F(ShardReaderTest, UncompressedBlobLengthsDisagree) {
  EditLocator(2, "image", [](index::BlobLocator& b) { b.raw_length = b.stored_length + 1; });
  ExpectError(ReadBlob(2, "image", true), StatusCode::kCorruption, shard_, "row 2: blob 'image' lengths disagree");
}

TEST_F(ShardReaderTest, CompressedBlobIsNotOneFrameOfItsRawLength) {
  EditLocator(2, "text", [](index::BlobLocator& b) { b.raw_length += 1; });
  ExpectError(ReadBlob(2, "text", false), StatusCode::kCorruption, shard_,
              "row 2: blob 'text' is not one zstd frame of its raw_length");
  Write();
  EditLocator(2, "text", [](index::BlobLocator& b) { b.stored_length -= 1; });
  ExpectError(ReadBlob(2, "text", false), StatusCode::kCorruption, shard_,
              "row 2: blob 'text' is not one zstd frame of its raw_length");
}

TEST_F(ShardReaderTest, CompressedBlobThatDoesNotInflate) {
  // The frame header and block headers stay; the coded bytes after the
  // first block header become garbage (an unverified read: the checksum
  // would catch it first).
  const index::BlobLocator b = Locator(6, "text");
  std::string bytes = ReadBytes(shard_);
  // The zstd frame (RFC 8878 section 3.1.1): magic, frame header descriptor,
  // window descriptor unless single-segment, dictionary id, content size.
  const auto* frame = reinterpret_cast<const uint8_t*>(bytes.data()) + b.offset;
  const uint8_t descriptor = frame[4];
  const bool single_segment = descriptor & 0x20;
  const uint64_t fcs_bytes[] = {single_segment ? 1u : 0u, 2, 4, 8};
  const uint64_t dict_bytes[] = {0, 1, 2, 4};
  const uint64_t block = 5 + (single_segment ? 0 : 1) + dict_bytes[descriptor & 3] + fcs_bytes[descriptor >> 6];
  ASSERT_EQ((frame[block] >> 1) & 3, 2) << "the first block is not a compressed block";
  const uint64_t block_header = format::LoadLE<uint32_t>(frame + block) & 0xFFFFFF;
  ASSERT_GE(block_header >> 3, 4u);  // the block's size
  for (uint64_t i = 0; i < 4; ++i) bytes[b.offset + block + 3 + i] = static_cast<char>(0xFF);
  WriteBytes(shard_, bytes);
  ExpectError(ReadBlob(6, "text", false), StatusCode::kCorruption, shard_, "row 6: blob 'text' does not inflate");
}

// --- Pages -------------------------------------------------------------------

TEST_F(ShardReaderTest, PageOutOfBounds) {
  const uint32_t p = FirstPage(fb::PageKind::Scalar);
  EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& pages) {
    const fb::PageEntry& e = pages[p];
    pages[p] = With(e, e.offset() + (uint64_t{1} << 30), e.stored_length(), e.raw_length(), e.first_row(), e.row_count(),
                    e.kind(), e.codec());
  });
  ExpectError(ScalarPage(0, false), StatusCode::kCorruption, shard_, "page " + std::to_string(p) + " out of bounds");
  ExpectError(Verify(), StatusCode::kCorruption, shard_, "out of bounds");
}

TEST_F(ShardReaderTest, PageOfUnknownKindOrCodec) {
  const uint32_t p = FirstPage(fb::PageKind::Scalar);
  auto edit = [&](fb::PageKind kind, fb::Codec codec) {
    Write();
    EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& pages) {
      const fb::PageEntry& e = pages[p];
      pages[p] = With(e, e.offset(), e.stored_length(), e.raw_length(), e.first_row(), e.row_count(), kind, codec);
    });
  };
  edit(static_cast<fb::PageKind>(7), fb::Codec::Zstd);
  ExpectError(ScalarPage(0, false), StatusCode::kCorruption, shard_, "has unknown kind 7");
  edit(fb::PageKind::Scalar, static_cast<fb::Codec>(9));
  ExpectError(ScalarPage(0, false), StatusCode::kCorruption, shard_, "has unknown codec");
}

TEST_F(ShardReaderTest, PageWithAnImpossibleRawLength) {
  const uint32_t p = FirstPage(fb::PageKind::Scalar);
  EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& pages) {
    const fb::PageEntry& e = pages[p];  // stored as is, yet longer raw than stored
    pages[p] = With(e, e.offset(), e.stored_length(), e.stored_length() + 1, e.first_row(), e.row_count(), e.kind(),
                    fb::Codec::None);
  });
  ExpectError(ScalarPage(0, false), StatusCode::kCorruption, shard_, "has an impossible raw length");
  Write();
  EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& pages) {
    const fb::PageEntry& e = pages[p];
    pages[p] = With(e, e.offset(), e.stored_length(), format::kMaxScalarPageBytes + 1, e.first_row(), e.row_count(),
                    e.kind(), e.codec());
  });
  ExpectError(ScalarPage(0, false), StatusCode::kCorruption, shard_, "has an impossible raw length");
}

TEST_F(ShardReaderTest, ScalarLocatorOfAPageThatDoesNotExist) {
  EditEntry(index_, layout_, 1, [](uint8_t* entry) { format::StoreLE<uint32_t>(entry + format::kEntryScalarPageOffset, 999); });
  ExpectError(ScalarPage(1, false), StatusCode::kCorruption, shard_, "page 999 does not exist");
}

TEST_F(ShardReaderTest, ScalarLocatorOfABlobPage) {
  const uint32_t blob_page = FirstPage(fb::PageKind::Blob);
  EditEntry(index_, layout_, 1, [&](uint8_t* entry) {
    format::StoreLE<uint32_t>(entry + format::kEntryScalarPageOffset, blob_page);
  });
  ExpectError(ScalarPage(1, false), StatusCode::kCorruption, shard_, "is not a scalar page");
}

// KeepDecodedPages: a page decoded by one thread is the page every other
// thread reads, as long as the budget holds it; the budget is given back
// when the reader goes; a damaged page is never kept.
TEST_F(ShardReaderTest, KeptPagesAreSharedByThreadsWithinTheBudget) {
  const size_t score = static_cast<size_t>(layout_.column_slot[3]);  // TestSchema's field 3
  // Every row's page read on a thread of its own (whose recent pages are
  // empty), the score checked: the pages it got, by row (held, so that no
  // other page can take a freed one's address).
  auto read_all = [&](const ShardReader& reader) {
    std::vector<std::shared_ptr<const DecodedPage>> pages(spec_.records);
    std::thread([&] {
      for (uint64_t row = 0; row < spec_.records; ++row) {
        uint32_t row_in_page = 0;
        auto page = reader.ScalarPage(*reader.Entry(row, true), row, true, &row_in_page);
        ASSERT_TRUE(page.ok()) << page.status().ToString();
        float value = 0;
        std::memcpy(&value, (*page)->view.Value(score, row_in_page).data(), 4);
        EXPECT_EQ(value, testing::TestRecord(row).score) << row;
        pages[row] = *page;
      }
    }).join();
    return pages;
  };
  auto reader = OpenOk();
  ASSERT_NE(reader, nullptr);
  const auto budget = std::make_shared<PageBudget>(1 << 20);
  reader->KeepDecodedPages(budget);
  const auto first = read_all(*reader);
  EXPECT_TRUE(read_all(*reader) == first) << "a second thread reads the pages the first one decoded";
  EXPECT_GT(budget->used(), 0u);
  reader.reset();
  EXPECT_EQ(budget->used(), 0u);
  // A budget of one inflated page keeps one: the other pages are decoded again.
  reader = OpenOk();
  const uint64_t one_page = sizeof(DecodedPage) + Pages()[FirstPage(fb::PageKind::Scalar)].raw_length();
  const auto small = std::make_shared<PageBudget>(one_page);
  reader->KeepDecodedPages(small);
  const auto a = read_all(*reader);
  const auto b = read_all(*reader);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_NE(a.back(), b.back());
  EXPECT_EQ(small->used(), one_page);
  // A damaged page fails every read: nothing of it was kept.
  reader.reset();
  const fb::PageEntry page = Pages()[FirstPage(fb::PageKind::Scalar)];
  FlipByte(shard_, page.offset() + page.stored_length() / 2);
  reader = OpenOk();
  reader->KeepDecodedPages(budget);
  uint32_t row_in_page = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ExpectError(reader->ScalarPage(*reader->Entry(0, true), 0, true, &row_in_page).status(), StatusCode::kCorruption,
                shard_, "checksum mismatch");
  }
  EXPECT_EQ(budget->used(), 0u);
}

TEST_F(ShardReaderTest, ScalarPageChecksumMismatch) {
  const fb::PageEntry page = Pages()[FirstPage(fb::PageKind::Scalar)];
  FlipByte(shard_, page.offset() + page.stored_length() / 2);
  ExpectError(ScalarPage(0, true), StatusCode::kCorruption, shard_, "checksum mismatch");
  ExpectError(Verify(), StatusCode::kCorruption, shard_, "checksum mismatch");
}

TEST_F(ShardReaderTest, ScalarPageThatDoesNotInflate) {
  const fb::PageEntry page = Pages()[FirstPage(fb::PageKind::Scalar)];
  std::string bytes = ReadBytes(shard_);
  for (uint64_t i = 0; i < 4; ++i) bytes[page.offset() + i] = 0;  // no zstd magic
  WriteBytes(shard_, bytes);
  ExpectError(ScalarPage(0, false), StatusCode::kCorruption, shard_, "does not inflate");
}

TEST_F(ShardReaderTest, ScalarLocatorPointsAtTheWrongRow) {
  EditEntry(index_, layout_, 2, [](uint8_t* entry) {
    format::StoreLE<uint32_t>(entry + format::kEntryScalarRowOffset,
                              format::LoadLE<uint32_t>(entry + format::kEntryScalarRowOffset) + 1);
  });
  ExpectError(ScalarPage(2, false), StatusCode::kCorruption, shard_, "row 2: scalar locator points at the wrong row");
}

TEST_F(ShardReaderTest, FrameOnlyShardRefusesPageReads) {
  auto reader = ShardReader::Open(shard_, true, ShardFiles{"", "", "", /*frame_only=*/true});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto entry = (*reader)->Entry(0, true);
  ASSERT_TRUE(entry.ok());
  ExpectError((*reader)->ReadBlob(*entry, 0, BlobSlot("image"), BlobCheck::kWhole).status(), StatusCode::kInternal, shard_,
              "not downloaded");
  ExpectError((*reader)->Verify(), StatusCode::kInternal, shard_, "not downloaded");
}

// --- Verify: the deep check ------------------------------------------------------

TEST_F(ShardReaderTest, VerifyFindsOverlappingPages) {
  const auto pages = Pages();
  ASSERT_GE(pages.size(), 2u);
  EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& p) {
    const fb::PageEntry& e = p[1];
    p[1] = With(e, p[0].offset(), e.stored_length(), e.raw_length(), e.first_row(), e.row_count(), e.kind(), e.codec());
  });
  ExpectError(Verify(), StatusCode::kCorruption, shard_, "page 1 overlaps the previous page");
}

TEST_F(ShardReaderTest, VerifyFindsNonzeroPadding) {
  const auto pages = Pages();
  const uint64_t end = pages[0].offset() + pages[0].stored_length();
  ASSERT_LT(end, pages[1].offset()) << "no padding after page 0";
  FlipByte(shard_, end);
  EXPECT_TRUE(ScalarPage(0, true).ok());
  ExpectError(Verify(), StatusCode::kCorruption, shard_, "nonzero padding byte at offset " + std::to_string(end));
}

TEST_F(ShardReaderTest, VerifyFindsABlobPageChecksumMismatch) {
  // Under the blob's own checksum too: Verify reads every page whole first.
  const uint32_t p = FirstPage(fb::PageKind::Blob);
  FlipByte(shard_, Pages()[p].offset() + 3);
  ExpectError(Verify(), StatusCode::kCorruption, shard_, "page " + std::to_string(p) + " checksum mismatch");
}

TEST_F(ShardReaderTest, VerifyFindsScalarPagesThatDoNotContinue) {
  const uint32_t p = FirstPage(fb::PageKind::Scalar);
  EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& pages) {
    const fb::PageEntry& e = pages[p];
    pages[p] = With(e, e.offset(), e.stored_length(), e.raw_length(), e.first_row() + 1, e.row_count(), e.kind(),
                    e.codec());
  });
  ExpectError(Verify(), StatusCode::kCorruption, shard_,
              "scalar page " + std::to_string(p) + " does not continue the previous one");
}

TEST_F(ShardReaderTest, VerifyFindsRowsNoScalarPageCovers) {
  // The directory calls the last scalar page a blob page: the scalar pages
  // left hold fewer rows than the shard.
  const auto pages = Pages();
  uint32_t last = 0;
  for (uint32_t p = 0; p < pages.size(); ++p) {
    if (pages[p].kind() == fb::PageKind::Scalar) last = p;
  }
  EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& p) {
    const fb::PageEntry& e = p[last];
    p[last] = With(e, e.offset(), e.stored_length(), e.raw_length(), e.first_row(), e.row_count(), fb::PageKind::Blob,
                   e.codec());
  });
  ExpectError(Verify(), StatusCode::kCorruption, shard_,
              "scalar pages cover " + std::to_string(pages[last].first_row()) + " of " +
                  std::to_string(spec_.records) + " rows");
}

TEST_F(ShardReaderTest, VerifyFindsAVariableShapeArrayWithABadShape) {
  // The tokens blob's shape prefix says more elements than it holds; the
  // blob, its page and the entry keep valid checksums.
  uint64_t row = 1;
  while (testing::TestRecord(row).tokens.size() < 2) ++row;
  const index::BlobLocator b = Locator(row, "tokens");
  std::string bytes = ReadBytes(shard_);
  format::StoreLE<int64_t>(reinterpret_cast<uint8_t*>(bytes.data()) + b.offset,
                           format::LoadLE<int64_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + b.offset) + 5);
  WriteBytes(shard_, bytes);
  const uint64_t checksum = format::Checksum(bytes.data() + b.offset, b.stored_length);
  EditLocator(row, "tokens", [&](index::BlobLocator& locator) { locator.checksum = checksum; });
  EditPages(shard_, index_, [&](std::vector<fb::PageEntry>& pages) {
    for (fb::PageEntry& e : pages) {
      if (e.offset() <= b.offset && b.offset < e.offset() + e.stored_length()) {
        e = fb::PageEntry(e.offset(), e.stored_length(), e.raw_length(),
                          format::Checksum(bytes.data() + e.offset(), e.stored_length()), e.first_row(), e.row_count(),
                          e.kind(), e.codec());
      }
    }
  });
  EXPECT_TRUE(ReadBlob(row, "tokens", true).ok());
  ExpectError(Verify(), StatusCode::kCorruption, shard_, "row " + std::to_string(row) + ": array 'tokens'");
}

TEST_F(ShardReaderTest, VerifyFindsAScalarLocatorWithoutColumns) {
  ShardSpec blobs;
  blobs.schema = testing::NoColumnSchema();
  Write(blobs);
  EditEntry(index_, layout_, 3, [](uint8_t* entry) { format::StoreLE<uint32_t>(entry + format::kEntryScalarPageOffset, 0); });
  ExpectError(Verify(), StatusCode::kCorruption, shard_,
              "row 3: scalar locator set but the schema has no scalar columns");
}

// The sorted index of `label` (slot 0), edited in place and resealed.
void EditSortedIndex(const std::string& index_path, const std::function<void(uint8_t*)>& edit) {
  std::string bytes = ReadBytes(index_path);
  const fb::IndexSection sorted = testing::IndexSections(index_path).at(1);
  edit(reinterpret_cast<uint8_t*>(bytes.data()) + sorted.offset());
  WriteBytes(index_path, bytes);
  ResealIndex(index_path);
}

TEST_F(ShardReaderTest, VerifyFindsASortedIndexNamingABadRow) {
  EditSortedIndex(index_, [&](uint8_t* sorted) { format::StoreLE<uint32_t>(sorted + format::kSortedEntrySize, 9999); });
  ExpectError(Verify(), StatusCode::kCorruption, index_, "sorted index 0: bad row 9999");
  Write();
  EditSortedIndex(index_, [&](uint8_t* sorted) {  // a row twice
    format::StoreLE<uint32_t>(sorted + format::kSortedEntrySize, format::LoadLE<uint32_t>(sorted));
  });
  ExpectError(Verify(), StatusCode::kCorruption, index_, "sorted index 0: bad row");
}

TEST_F(ShardReaderTest, VerifyFindsASortedIndexOutOfOrder) {
  // The first and last entries hold the smallest and largest label: swapped.
  EditSortedIndex(index_, [&](uint8_t* sorted) {
    const uint64_t last = (spec_.records - 1) * format::kSortedEntrySize;
    const uint32_t first_row = format::LoadLE<uint32_t>(sorted);
    format::StoreLE<uint32_t>(sorted, format::LoadLE<uint32_t>(sorted + last));
    format::StoreLE<uint32_t>(sorted + last, first_row);
  });
  ExpectError(Verify(), StatusCode::kCorruption, index_, "sorted index 0: not sorted at entry 1");
}


// --- Shards without a record table (SPEC.md 8.5) -------------------------------

ShardSpec ColumnOnly() {
  ShardSpec spec;
  spec.schema = testing::ColumnOnlySchema();
  spec.record_table = false;
  return spec;
}

TEST_F(ShardReaderTest, WithoutARecordTableRowsAreFoundThroughTheDirectory) {
  Write(ColumnOnly());
  ASSERT_EQ(layout_.entry_stride, 0u);
  const auto sections = testing::IndexSections(index_);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].length(), 0u);
  EXPECT_EQ(format::LoadLE<uint16_t>(reinterpret_cast<const uint8_t*>(ReadBytes(index_).data()) +
                                     format::kPreambleMinorOffset),
            format::kFormatMinorNoRecordTable);
  EXPECT_EQ(format::LoadLE<uint16_t>(reinterpret_cast<const uint8_t*>(ReadBytes(shard_).data()) +
                                     format::kPreambleMinorOffset),
            0);  // the shard file is an ordinary one
  auto reader = OpenOk(/*verify_index=*/true);
  ASSERT_NE(reader, nullptr);
  ASSERT_GT(reader->footer().pages()->size(), 3u);  // small pages: a binary search has work
  for (uint64_t row = 0; row < spec_.records; ++row) {
    auto entry = reader->Entry(row, true);
    ASSERT_TRUE(entry.ok()) << entry.status().ToString();
    EXPECT_EQ(*entry, nullptr);
    uint32_t in_page = 0;
    auto page = reader->ScalarPage(*entry, row, true, &in_page);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    const testing::TestValues v = testing::TestRecord(row);
    EXPECT_EQ((*page)->view.Value(0, in_page), v.path);
    float score = 0;
    std::memcpy(&score, (*page)->view.Value(1, in_page).data(), sizeof(score));
    EXPECT_EQ(score, v.score);
  }
  EXPECT_TRUE(reader->Verify().ok()) << reader->Verify().ToString();
}

TEST_F(ShardReaderTest, WithoutARecordTableTheTableSectionMustBeEmpty) {
  Write(ColumnOnly());
  // Zeros before the trailer, so that a table of 8 bytes lies inside the file.
  std::string bytes = ReadBytes(index_);
  bytes.insert(bytes.size() - format::kTrailerSize, 64, '\0');
  WriteBytes(index_, bytes);
  ResealIndex(index_, [](format::IndexHeaderValues& v) {
    v.sections[0] = fb::IndexSection(v.sections[0].offset(), 8, 0, -1, fb::SectionKind::RecordTable);
  });
  ExpectOpenFails(StatusCode::kCorruption, index_, "index section 0 length does not match");
}

TEST_F(ShardReaderTest, WithoutARecordTableNoBlobOrIndexedFieldIsListed) {
  // TestSchema's index with its stride set to 0 and its table emptied.
  ResealIndex(index_, [](format::IndexHeaderValues& v) {
    v.entry_stride = 0;
    v.sections[0] = fb::IndexSection(v.sections[0].offset(), 0, 0, -1, fb::SectionKind::RecordTable);
  });
  ExpectOpenFails(StatusCode::kCorruption, index_, "no record table (entry stride 0) but blob or indexed fields");
}

TEST_F(ShardReaderTest, AnIndexWithoutARecordTableBesideAShardThatNeedsOne) {
  // A column-only index, stamped as the index of a shard with blobs.
  ShardSpec blobs;
  blobs.schema = Schema::Make({Field::Bytes("image"), Field::String("path")}).value();
  Write(blobs);
  const std::string shard_bytes = ReadBytes(shard_);
  const auto shard_index = index::IndexReader::Open(index_, false);
  ASSERT_TRUE(shard_index.ok());
  const format::IndexHeaderValues wanted = index::IndexHeaderValuesOf(shard_index->header());
  Write(ColumnOnly());
  WriteBytes(shard_, shard_bytes);
  ResealIndex(index_, [&](format::IndexHeaderValues& v) {
    v.shard_file_length = wanted.shard_file_length;
    v.shard_footer_checksum = wanted.shard_footer_checksum;
  });
  ExpectOpenFails(StatusCode::kCorruption, index_, "record table layout does not match the shard's schema");
}

TEST_F(ShardReaderTest, WithoutARecordTableTheDirectoryMustCoverTheRowsInOrder) {
  auto expect_refused = [&](const std::function<void(std::vector<fb::PageEntry>&)>& edit) {
    Write(ColumnOnly());
    EditPages(shard_, index_, edit);
    ExpectOpenFails(StatusCode::kCorruption, shard_, "page directory does not cover the rows in order");
  };
  expect_refused([](std::vector<fb::PageEntry>& pages) {  // the first page starts past row 0
    const fb::PageEntry& e = pages[0];
    pages[0] = With(e, e.offset(), e.stored_length(), e.raw_length(), 1, e.row_count(), e.kind(), e.codec());
  });
  expect_refused([](std::vector<fb::PageEntry>& pages) {  // a gap between pages
    const fb::PageEntry& e = pages[1];
    pages[1] = With(e, e.offset(), e.stored_length(), e.raw_length(), e.first_row() + 1, e.row_count() - 1, e.kind(),
                    e.codec());
  });
  expect_refused([](std::vector<fb::PageEntry>& pages) {  // a page of no rows
    const fb::PageEntry& e = pages[1];
    pages[1] = With(e, e.offset(), e.stored_length(), e.raw_length(), e.first_row(), 0, e.kind(), e.codec());
  });
  expect_refused([](std::vector<fb::PageEntry>& pages) {  // rows past the record count
    const fb::PageEntry& e = pages.back();
    pages.back() = With(e, e.offset(), e.stored_length(), e.raw_length(), e.first_row(), e.row_count() + 1, e.kind(),
                        e.codec());
  });
  expect_refused([](std::vector<fb::PageEntry>& pages) {  // a blob page
    const fb::PageEntry& e = pages[1];
    pages[1] = With(e, e.offset(), e.stored_length(), e.raw_length(), e.first_row(), e.row_count(), fb::PageKind::Blob,
                    e.codec());
  });
}

TEST_F(ShardReaderTest, WithoutARecordTableAFlippedPageFailsItsRowsAndVerify) {
  Write(ColumnOnly());
  const fb::PageEntry page = Pages().at(1);
  FlipByte(shard_, page.offset() + 3);
  ExpectError(ScalarPage(page.first_row(), true), StatusCode::kCorruption, shard_, "page 1 checksum mismatch");
  ExpectError(Verify(), StatusCode::kCorruption, shard_, "page 1 checksum mismatch");
}

}  // namespace
}  // namespace unirecord::shard
