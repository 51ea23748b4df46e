#include "format/dataset_uuid.h"

#include <xxhash.h>

#include <cstring>
#include <string>

#include "format/endian.h"
#include "format/format_constants.h"

namespace unirecord::format {

namespace {

void AddU64(XXH3_state_t* state, uint64_t v) {
  uint8_t bytes[8];
  StoreLE<uint64_t>(bytes, v);
  XXH3_128bits_update(state, bytes, sizeof(bytes));
}

// The digest as a version-8 UUID (RFC 9562).
Uuid FinishUuid(XXH3_state_t* state) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state));
  XXH3_freeState(state);
  Uuid uuid;
  std::memcpy(uuid.data(), canonical.digest, uuid.size());
  uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0F) | 0x80);  // version 8
  uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3F) | 0x80);  // variant 10
  return uuid;
}

}  // namespace

Uuid DeriveDatasetUuid(const std::vector<ShardDigest>& shards, const Schema& schema, const Metadata& metadata,
                       const ShardHeaderValues& page_settings) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  auto add_u64 = [state](uint64_t v) { AddU64(state, v); };
  XXH3_128bits_update(state, kUuidDomain, std::strlen(kUuidDomain));
  add_u64(shards.size());
  for (const ShardDigest& shard : shards) {
    add_u64(shard.records);
    add_u64(shard.footer_checksum);
    add_u64(shard.record_table_checksum);
  }
  ShardHeaderValues anonymous;
  anonymous.blob_page_bytes = page_settings.blob_page_bytes;
  anonymous.scalar_page_bytes = page_settings.scalar_page_bytes;
  anonymous.zstd_level = page_settings.zstd_level;
  const std::string header = BuildShardHeader(schema, metadata, anonymous);
  XXH3_128bits_update(state, header.data(), header.size());
  return FinishUuid(state);
}

Uuid DeriveSegmentsUuid(const std::vector<SegmentDigest>& segments) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  XXH3_128bits_update(state, kSegmentsUuidDomain, std::strlen(kSegmentsUuidDomain));
  AddU64(state, segments.size());
  for (const SegmentDigest& segment : segments) {
    XXH3_128bits_update(state, segment.uuid.data(), segment.uuid.size());
    AddU64(state, segment.shard_count);
    AddU64(state, segment.first_id);
  }
  return FinishUuid(state);
}

Uuid DeriveFieldGroupsUuid(const Uuid& segments_uuid, const std::vector<FieldsDigest>& segments) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  auto add_names = [state](const std::vector<std::string>& names) {
    AddU64(state, names.size());
    for (const std::string& name : names) {
      AddU64(state, name.size());
      XXH3_128bits_update(state, name.data(), name.size());
    }
  };
  XXH3_128bits_update(state, kFieldGroupsUuidDomain, std::strlen(kFieldGroupsUuidDomain));
  XXH3_128bits_update(state, segments_uuid.data(), segments_uuid.size());
  AddU64(state, segments.size());
  for (const FieldsDigest& segment : segments) {
    AddU64(state, segment.groups.size());
    for (const FieldGroupDigest& group : segment.groups) {
      XXH3_128bits_update(state, group.uuid.data(), group.uuid.size());
      add_names(group.fields);
    }
    add_names(segment.dropped);
  }
  return FinishUuid(state);
}

}  // namespace unirecord::format
