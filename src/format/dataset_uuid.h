// The dataset UUID that writers derive from the content (format/SPEC.md
// section 9); readers treat it as an opaque identity.
#ifndef UNIRECORD_FORMAT_DATASET_UUID_H_
#define UNIRECORD_FORMAT_DATASET_UUID_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/header_codec.h"
#include "unirecord/schema.h"

namespace unirecord::format {

// What the UUID covers of one closed shard.
struct ShardDigest {
  uint64_t records = 0;
  uint64_t footer_checksum = 0;
  uint64_t record_table_checksum = 0;
};

// The UUID of a dataset of `shards` (in shard order) with this schema,
// metadata and page settings; the per-shard fields of `page_settings` (UUID,
// shard number and count, record count) are ignored (zero in the hashed header).
Uuid DeriveDatasetUuid(const std::vector<ShardDigest>& shards, const Schema& schema, const Metadata& metadata,
                       const ShardHeaderValues& page_settings);

// The UUID of a dataset of several segments (SPEC section 1.2): of their
// UUIDs, shard counts and first ids, in order. A dataset of one segment has
// that segment's UUID.
struct SegmentDigest {
  Uuid uuid{};
  uint32_t shard_count = 0;
  uint64_t first_id = 0;
};
Uuid DeriveSegmentsUuid(const std::vector<SegmentDigest>& segments);

// The UUID of a dataset whose segments have field groups or whose manifest
// drops fields (SPEC section 1.4): of the segments' UUID (above, or the one
// segment's own) and each segment's groups (UUID and field names) and
// dropped names, so that adding or dropping a field changes it.
struct FieldGroupDigest {
  Uuid uuid{};
  std::vector<std::string> fields;
};
struct FieldsDigest {  // of one segment
  std::vector<FieldGroupDigest> groups;
  std::vector<std::string> dropped;
};
Uuid DeriveFieldGroupsUuid(const Uuid& segments_uuid, const std::vector<FieldsDigest>& segments);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_DATASET_UUID_H_
