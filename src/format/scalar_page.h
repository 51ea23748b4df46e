// Scalar pages (format/SPEC.md section 6.1): the column-class fields of a run
// of rows, columnar. This file handles the raw (uncompressed) bytes; the
// shard writer and reader add zstd and checksums.
#ifndef UNIRECORD_FORMAT_SCALAR_PAGE_H_
#define UNIRECORD_FORMAT_SCALAR_PAGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord::format {

// Accumulates rows; Finish() returns the raw page and starts a new one.
class ScalarPageBuilder {
 public:
  // `column_fields`: schema indexes of the column-class fields, in order.
  ScalarPageBuilder(const Schema& schema, std::vector<int> column_fields);

  // `values[c]` is column c's value for the row: the little-endian element
  // bytes of a numeric field (elements x width bytes) or a string's bytes.
  void AddRow(const std::vector<std::string_view>& values);
  // Adds `rows` rows at once when every column is numeric: `values[c]`
  // holds column c's values of the rows back to back (rows x its width).
  // The page equals that of AddRow row by row.
  void AddRows(const std::vector<std::string_view>& values, uint32_t rows);

  uint32_t rows() const { return rows_; }
  // Size Finish() would return now.
  uint64_t raw_size() const { return raw_size_after(0); }
  // Size Finish() would return after `more` further rows; `more` > 0 only
  // when every column is numeric (a string's length is not known ahead).
  uint64_t raw_size_after(uint64_t more) const;
  std::string Finish();

 private:
  struct Column {
    bool is_string = false;
    uint64_t width = 0;  // numeric: bytes a row (elements x element width)
    std::string data;
    std::vector<uint32_t> offsets;  // strings only: end offset of each row
  };
  std::vector<Column> columns_;
  uint32_t rows_ = 0;
};

// A validated view of a raw scalar page.
class ScalarPageView {
 public:
  ScalarPageView() = default;

  // Checks the page against the schema: counts, column offsets (aligned,
  // increasing, in bounds), numeric column sizes, string offsets. `context`
  // prefixes messages ("x.urec: page 7").
  static Result<ScalarPageView> Parse(const uint8_t* data, uint64_t size, const Schema& schema,
                                      const std::vector<int>& column_fields,
                                      uint32_t expected_rows, const std::string& context);

  uint32_t rows() const { return rows_; }
  // Column c, row r (both already range-checked by the caller): the element
  // bytes of a numeric value, or the string's bytes.
  std::string_view Value(size_t column, uint32_t row) const;

 private:
  struct Column {
    const uint8_t* data = nullptr;     // numeric: elements; string: bytes after offsets
    const uint8_t* offsets = nullptr;  // strings only: rows + 1 u32
    uint64_t value_width = 0;          // numeric only
  };
  std::vector<Column> columns_;
  uint32_t rows_ = 0;
};

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_SCALAR_PAGE_H_
