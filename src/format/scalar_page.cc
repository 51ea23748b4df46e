#include "format/scalar_page.h"

#include <cstring>

#include "format/array_values.h"
#include "format/endian.h"
#include "format/format_constants.h"

namespace unirecord::format {

ScalarPageBuilder::ScalarPageBuilder(const Schema& schema, std::vector<int> column_fields) {
  for (int f : column_fields) {
    Column column;
    const Field& field = schema.field(static_cast<size_t>(f));
    column.is_string = field.type == FieldType::kString;
    if (!column.is_string) column.width = FixedValueBytes(field);
    columns_.push_back(std::move(column));
  }
}

void ScalarPageBuilder::AddRow(const std::vector<std::string_view>& values) {
  for (size_t c = 0; c < columns_.size(); ++c) {
    Column& column = columns_[c];
    column.data.append(values[c].data(), values[c].size());
    if (column.is_string) column.offsets.push_back(static_cast<uint32_t>(column.data.size()));
  }
  ++rows_;
}

void ScalarPageBuilder::AddRows(const std::vector<std::string_view>& values, uint32_t rows) {
  for (size_t c = 0; c < columns_.size(); ++c) columns_[c].data.append(values[c].data(), columns_[c].width * rows);
  rows_ += rows;
}

uint64_t ScalarPageBuilder::raw_size_after(uint64_t more) const {
  uint64_t size = kScalarPageFixedSize + 8 * columns_.size();
  for (const Column& column : columns_) {
    size = AlignUp(size, kScalarColumnAlignment);
    if (column.is_string) size += 4 * (uint64_t{rows_} + 1);
    size += column.data.size() + more * column.width;
  }
  return size;
}

std::string ScalarPageBuilder::Finish() {
  std::string page(static_cast<size_t>(raw_size()), '\0');
  auto* out = reinterpret_cast<uint8_t*>(page.data());
  StoreLE<uint32_t>(out, rows_);
  StoreLE<uint32_t>(out + 4, static_cast<uint32_t>(columns_.size()));
  uint64_t pos = kScalarPageFixedSize + 8 * columns_.size();
  for (size_t c = 0; c < columns_.size(); ++c) {
    Column& column = columns_[c];
    pos = AlignUp(pos, kScalarColumnAlignment);
    StoreLE<uint64_t>(out + kScalarPageFixedSize + 8 * c, pos);
    if (column.is_string) {
      StoreLE<uint32_t>(out + pos, 0);
      pos += 4;
      for (uint32_t end : column.offsets) {
        StoreLE<uint32_t>(out + pos, end);
        pos += 4;
      }
    }
    std::memcpy(out + pos, column.data.data(), column.data.size());
    pos += column.data.size();
    column.data.clear();
    column.offsets.clear();
  }
  rows_ = 0;
  return page;
}

Result<ScalarPageView> ScalarPageView::Parse(const uint8_t* data, uint64_t size, const Schema& schema,
                                             const std::vector<int>& column_fields,
                                             uint32_t expected_rows, const std::string& context) {
  auto corrupt = [&](const std::string& what) { return Status::Corruption(context + ": " + what); };
  if (size < kScalarPageFixedSize) return corrupt("scalar page too short");
  ScalarPageView view;
  view.rows_ = LoadLE<uint32_t>(data);
  const uint32_t column_count = LoadLE<uint32_t>(data + 4);
  if (view.rows_ != expected_rows) return corrupt("scalar page row count differs from the directory");
  if (column_count != column_fields.size()) return corrupt("scalar page column count differs from the schema");
  const uint64_t table_end = kScalarPageFixedSize + 8 * uint64_t{column_count};
  if (table_end > size) return corrupt("scalar page column table out of bounds");

  uint64_t previous_end = table_end;
  for (uint32_t c = 0; c < column_count; ++c) {
    const uint64_t start = LoadLE<uint64_t>(data + kScalarPageFixedSize + 8 * c);
    const uint64_t end =
        c + 1 < column_count ? LoadLE<uint64_t>(data + kScalarPageFixedSize + 8 * (c + 1)) : size;
    if (start % kScalarColumnAlignment != 0 || start < previous_end || start > end || end > size) {
      return corrupt("scalar page column " + std::to_string(c) + " offset out of bounds");
    }
    previous_end = end;
    const Field& field = schema.field(static_cast<size_t>(column_fields[c]));
    Column column;
    const uint64_t length = end - start;
    if (field.type == FieldType::kString) {
      const uint64_t offsets_bytes = 4 * (uint64_t{view.rows_} + 1);
      if (offsets_bytes > length) return corrupt("scalar page string column '" + field.name + "' truncated");
      column.offsets = data + start;
      column.data = data + start + offsets_bytes;
      const uint64_t data_bytes = length - offsets_bytes;
      uint32_t last = 0;
      for (uint32_t r = 0; r <= view.rows_; ++r) {
        uint32_t offset = LoadLE<uint32_t>(column.offsets + 4 * uint64_t{r});
        if ((r == 0 && offset != 0) || offset < last) {
          return corrupt("scalar page string column '" + field.name + "' has bad offsets");
        }
        last = offset;
      }
      // The column may be followed by alignment padding before the next one.
      if (last > data_bytes || data_bytes - last >= kScalarColumnAlignment) {
        return corrupt("scalar page string column '" + field.name + "' length mismatch");
      }
    } else {
      column.value_width = FixedValueBytes(field);
      column.data = data + start;
      const uint64_t expected = column.value_width * view.rows_;
      if (expected > length || length - expected >= kScalarColumnAlignment) {
        return corrupt("scalar page column '" + field.name + "' has the wrong size");
      }
    }
    view.columns_.push_back(column);
  }
  return view;
}

std::string_view ScalarPageView::Value(size_t column, uint32_t row) const {
  const Column& c = columns_[column];
  if (c.offsets == nullptr) {
    return std::string_view(reinterpret_cast<const char*>(c.data + c.value_width * row), c.value_width);
  }
  uint32_t begin = LoadLE<uint32_t>(c.offsets + 4 * uint64_t{row});
  uint32_t end = LoadLE<uint32_t>(c.offsets + 4 * (uint64_t{row} + 1));
  return std::string_view(reinterpret_cast<const char*>(c.data + begin), end - begin);
}

}  // namespace unirecord::format
