// The FlatBuffers parts of shard and index files (format/unirecord.fbs):
// building them (deterministically, with fixed sizes: SPEC.md section 10)
// and verifying + decoding them.
#ifndef UNIRECORD_FORMAT_HEADER_CODEC_H_
#define UNIRECORD_FORMAT_HEADER_CODEC_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fb/unirecord_generated.h"
#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord::format {

using Uuid = std::array<uint8_t, 16>;
using Metadata = std::map<std::string, std::string>;

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string UuidToString(const Uuid& uuid);
// The inverse of UuidToString (lowercase hex only); false otherwise.
bool UuidFromString(const std::string& text, Uuid* uuid);

struct ShardHeaderValues {
  Uuid uuid{};
  uint32_t shard_number = 0;
  uint32_t shard_count = 0;
  uint64_t record_count = 0;
  uint32_t blob_page_bytes = 0;
  uint32_t scalar_page_bytes = 0;
  int32_t zstd_level = 0;
};

// The header bytes; the size depends on schema and metadata only.
std::string BuildShardHeader(const Schema& schema, const Metadata& metadata,
                             const ShardHeaderValues& values);

struct ShardHeaderContents {
  ShardHeaderValues values;
  Schema schema;
  Metadata metadata;
};

// Verifies the FlatBuffer and decodes it (the schema is re-validated).
Result<ShardHeaderContents> ParseShardHeader(const uint8_t* data, uint64_t size,
                                             const std::string& path);

struct FooterStats {
  uint64_t record_count = 0;
  uint64_t blob_page_count = 0;
  uint64_t scalar_page_count = 0;
  uint64_t blob_bytes = 0;
  uint64_t scalar_raw_bytes = 0;
  uint64_t scalar_stored_bytes = 0;
};

std::string BuildShardFooter(const std::vector<fb::PageEntry>& pages, const FooterStats& stats);

// Verifies the footer FlatBuffer; the result points into `data`.
Result<const fb::ShardFooter*> VerifyShardFooter(const uint8_t* data, uint64_t size,
                                                 const std::string& path);

struct IndexHeaderValues {
  Uuid uuid{};
  uint32_t shard_number = 0;
  uint32_t shard_count = 0;
  uint64_t record_count = 0;
  uint64_t first_id = 0;
  uint64_t dataset_record_count = 0;
  uint64_t shard_file_length = 0;
  uint64_t shard_footer_checksum = 0;
  uint32_t entry_stride = 0;
  std::vector<int32_t> blob_fields;
  std::vector<int32_t> indexed_fields;
  std::vector<fb::IndexSection> sections;
};

// The size depends on the field lists and the number of sections only.
std::string BuildIndexHeader(const IndexHeaderValues& values);

// Verifies the index header FlatBuffer; the result points into `data`.
Result<const fb::IndexHeader*> VerifyIndexHeader(const uint8_t* data, uint64_t size,
                                                 const std::string& path);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_HEADER_CODEC_H_
