// Writes one shard file and its index (format/SPEC.md sections 2-8) to
// temporary paths; the Writer decides which records go to which shard and
// commits the files.
#ifndef UNIRECORD_SHARD_SHARD_WRITER_H_
#define UNIRECORD_SHARD_SHARD_WRITER_H_

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fb/unirecord_generated.h"
#include "format/checksum.h"
#include "format/header_codec.h"
#include "format/record_values.h"
#include "format/scalar_page.h"
#include "index/index_file.h"
#include "index/record_table.h"
#include "io/file.h"
#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord::shard {

// How pages are cut and compressed: WriterOptions' fields of the same names,
// recorded in every shard header.
struct PageSettings {
  uint32_t blob_page_bytes = 0;
  uint32_t scalar_page_bytes = 0;
  int zstd_level = 0;
};

// What every shard of one dataset shares.
struct ShardContext {
  Schema schema;
  index::FieldLayout layout;
  PageSettings pages;
  format::Metadata metadata;
};

// Writes the header (`values` with schema and metadata) and preamble of the
// closed shard file at `path`, whose header space is `header_length` bytes
// (Internal when the built header's size differs); fsyncs it when `sync`.
Status WriteShardHeader(const std::string& path, const Schema& schema, const format::Metadata& metadata,
                        const format::ShardHeaderValues& values, uint64_t header_length, bool sync);

class ShardWriter {
 public:
  // Creates the temporary files and reserves the header space.
  static Result<std::unique_ptr<ShardWriter>> Create(const ShardContext& context, uint32_t shard_number,
                                                     std::string shard_temp_path,
                                                     std::string index_temp_path);
  ~ShardWriter();

  // Appends one record (all fields set, checked by the caller).
  Status Add(const format::RecordValues& record);

  // Whether AddColumns takes the rows of `context`'s shards: every field is
  // a numeric scalar-page column of fixed shape, so a row is its columns'
  // bytes and nothing goes to blob pages or the record table's values.
  static bool TakesColumns(const ShardContext& context);
  // Appends rows straight from columns (TakesColumns): `columns[c]` holds
  // the values of column c (of layout.column_fields) of up to `count` rows
  // back to back. Adds rows until the scalar page being filled is full
  // (and writes it) or `count`, and returns how many: the files equal those
  // of Add row by row, so a caller that cuts shards checks between calls.
  Result<uint64_t> AddColumns(const std::vector<std::string_view>& columns, uint64_t count);

  uint64_t records() const { return index_.rows(); }
  uint64_t file_bytes() const { return file_.offset(); }

  // Writes the last pages, the footer and trailer, and the index file, then
  // closes both files.
  Status Close();

  bool closed() const { return shard_file_length_ > 0; }

  // Valid after Close().
  uint64_t footer_checksum() const { return footer_checksum_; }
  uint64_t record_table_checksum() const { return index_.record_table_checksum(); }
  uint64_t shard_file_length() const { return shard_file_length_; }
  uint64_t index_file_length() const { return index_file_length_; }

  // Writes the final headers and preambles into both closed files and fsyncs
  // them when `sync`.
  Status Finalize(const format::ShardHeaderValues& shard_values, const format::IndexHeaderValues& index_values, bool sync);

  const std::string& shard_temp_path() const { return shard_temp_path_; }
  const std::string& index_temp_path() const { return index_temp_path_; }

 private:
  ShardWriter(const ShardContext& context, uint32_t shard_number);

  // `alignment`: the blob's offset is a multiple of it (zero padding before).
  Status AddBlob(const std::string_view& data, BlobCompression compression, uint64_t alignment,
                 index::BlobLocator* locator);
  Status CloseBlobPage();
  Status FlushScalarPage();
  // Refuses a row of `row_bytes` of scalar-page values, or any row once
  // the shard is full; writes the page first if the row would overflow it.
  Status BeforeRow(uint64_t row_bytes);

  const ShardContext& context_;
  const uint32_t shard_number_;
  std::string shard_temp_path_;
  std::string index_temp_path_;
  io::WritableFile file_;
  uint64_t header_length_ = 0;
  index::IndexBuilder index_;

  std::vector<fb::PageEntry> pages_;
  format::FooterStats stats_;

  // The open blob page, if any.
  bool blob_page_open_ = false;
  uint64_t blob_page_start_ = 0;
  uint64_t blob_page_first_row_ = 0;
  uint32_t blob_page_rows_ = 0;
  uint64_t blob_page_last_row_ = UINT64_MAX;
  format::StreamingChecksum blob_page_checksum_;

  // The scalar page being filled and the rows it holds.
  format::ScalarPageBuilder scalar_page_;
  uint64_t scalar_page_first_row_ = 0;
  std::vector<std::string_view> column_values_;
  std::vector<int64_t> list_values_;  // one list field's elements, widened (SPEC.md 8.4)
  std::string compressed_;
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> zstd_;

  uint64_t footer_checksum_ = 0;
  uint64_t shard_file_length_ = 0;
  uint64_t index_file_length_ = 0;
};

}  // namespace unirecord::shard

#endif  // UNIRECORD_SHARD_SHARD_WRITER_H_
