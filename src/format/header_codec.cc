#include "format/header_codec.h"

#include <flatbuffers/flatbuffers.h>

namespace unirecord::format {
namespace {

constexpr size_t kInitialBuilderBytes = 1024;

fb::Uuid ToFb(const Uuid& uuid) {
  return fb::Uuid(flatbuffers::span<const uint8_t, 16>(uuid.data(), 16));
}

Uuid FromFb(const fb::Uuid& uuid) {
  Uuid out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = uuid.bytes()->Get(static_cast<flatbuffers::uoffset_t>(i));
  return out;
}

std::string Finish(flatbuffers::FlatBufferBuilder& builder) {
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

template <typename Table>
Result<const Table*> VerifyRoot(const uint8_t* data, uint64_t size, const std::string& path,
                                const char* what) {
  if (size > FLATBUFFERS_MAX_BUFFER_SIZE) {
    return Status::Corruption(path + ": " + what + " is too large");
  }
  flatbuffers::Verifier verifier(data, static_cast<size_t>(size));
  if (!verifier.VerifyBuffer<Table>(nullptr)) {
    return Status::Corruption(path + ": " + what + " fails FlatBuffers verification");
  }
  return flatbuffers::GetRoot<Table>(data);
}

}  // namespace

std::string UuidToString(const Uuid& uuid) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[uuid[i] >> 4];
    out += kHex[uuid[i] & 15];
  }
  return out;
}

bool UuidFromString(const std::string& text, Uuid* uuid) {
  if (text.size() != 36) return false;
  size_t at = 0;
  for (size_t i = 0; i < uuid->size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      if (text[at++] != '-') return false;
    }
    int digits[2];
    for (int& d : digits) {
      const char c = text[at++];
      d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
    }
    (*uuid)[i] = static_cast<uint8_t>(digits[0] << 4 | digits[1]);
  }
  return true;
}

std::string BuildShardHeader(const Schema& schema, const Metadata& metadata,
                             const ShardHeaderValues& v) {
  flatbuffers::FlatBufferBuilder builder(kInitialBuilderBytes);
  builder.ForceDefaults(true);
  std::vector<flatbuffers::Offset<fb::Field>> fields;
  for (const Field& f : schema.fields()) {
    auto name = builder.CreateString(f.name);
    auto shape = builder.CreateVector(f.shape);
    fields.push_back(fb::CreateField(builder, name, static_cast<fb::FieldType>(f.type), shape,
                                     f.indexed, static_cast<fb::Codec>(f.compression)));
  }
  auto fb_schema = fb::CreateSchema(builder, builder.CreateVector(fields));
  std::vector<flatbuffers::Offset<fb::KeyValue>> entries;
  for (const auto& [key, value] : metadata) {  // std::map: sorted by key
    auto k = builder.CreateString(key);
    auto val = builder.CreateString(value);
    entries.push_back(fb::CreateKeyValue(builder, k, val));
  }
  auto fb_metadata = builder.CreateVector(entries);
  fb::Uuid uuid = ToFb(v.uuid);
  auto header = fb::CreateShardHeader(builder, &uuid, v.shard_number, v.shard_count, v.record_count,
                                      fb_schema, v.blob_page_bytes, v.scalar_page_bytes,
                                      fb::Codec::Zstd, v.zstd_level, fb_metadata);
  builder.Finish(header);
  return Finish(builder);
}

Result<ShardHeaderContents> ParseShardHeader(const uint8_t* data, uint64_t size,
                                             const std::string& path) {
  UREC_ASSIGN_OR_RETURN(const fb::ShardHeader* header,
                        VerifyRoot<fb::ShardHeader>(data, size, path, "shard header"));
  ShardHeaderContents out;
  out.values.uuid = FromFb(*header->dataset_uuid());
  out.values.shard_number = header->shard_number();
  out.values.shard_count = header->shard_count();
  out.values.record_count = header->record_count();
  out.values.blob_page_bytes = header->blob_page_bytes();
  out.values.scalar_page_bytes = header->scalar_page_bytes();
  out.values.zstd_level = header->zstd_level();
  if (header->scalar_codec() != fb::Codec::Zstd && header->scalar_codec() != fb::Codec::None) {
    return Status::Corruption(path + ": unknown scalar page codec");
  }
  std::vector<Field> fields;
  for (const fb::Field* f : *header->schema()->fields()) {
    Field field;
    field.name = f->name()->str();
    field.type = static_cast<FieldType>(f->type());
    if (FindType(field.type) == nullptr) {
      return Status::NotSupported(path + ": field '" + field.name + "' has type " +
                                  std::to_string(static_cast<int>(f->type())) +
                                  ", which this reader does not know (written by a newer unirecord?)");
    }
    if (f->shape() != nullptr) field.shape.assign(f->shape()->begin(), f->shape()->end());
    field.indexed = f->indexed();
    field.compression = static_cast<BlobCompression>(f->compression());
    fields.push_back(std::move(field));
  }
  auto schema = Schema::Make(std::move(fields));
  if (!schema.ok()) {
    return Status::Corruption(path + ": invalid schema in header: " + schema.status().message());
  }
  out.schema = std::move(schema).value();
  if (header->metadata() != nullptr) {
    for (const fb::KeyValue* kv : *header->metadata()) {
      if (!out.metadata.emplace(kv->key()->str(), kv->value()->str()).second) {
        return Status::Corruption(path + ": metadata key '" + kv->key()->str() + "' repeats");
      }
    }
  }
  return out;
}

std::string BuildShardFooter(const std::vector<fb::PageEntry>& pages, const FooterStats& s) {
  flatbuffers::FlatBufferBuilder builder(kInitialBuilderBytes + pages.size() * sizeof(fb::PageEntry));
  builder.ForceDefaults(true);
  auto fb_pages = builder.CreateVectorOfStructs(pages);
  auto footer = fb::CreateShardFooter(builder, fb_pages, s.record_count, s.blob_page_count,
                                      s.scalar_page_count, s.blob_bytes, s.scalar_raw_bytes,
                                      s.scalar_stored_bytes);
  builder.Finish(footer);
  return Finish(builder);
}

Result<const fb::ShardFooter*> VerifyShardFooter(const uint8_t* data, uint64_t size,
                                                 const std::string& path) {
  return VerifyRoot<fb::ShardFooter>(data, size, path, "footer");
}

std::string BuildIndexHeader(const IndexHeaderValues& v) {
  flatbuffers::FlatBufferBuilder builder(kInitialBuilderBytes);
  builder.ForceDefaults(true);
  auto blob_fields = builder.CreateVector(v.blob_fields);
  auto indexed_fields = builder.CreateVector(v.indexed_fields);
  auto sections = builder.CreateVectorOfStructs(v.sections);
  fb::Uuid uuid = ToFb(v.uuid);
  auto header = fb::CreateIndexHeader(builder, &uuid, v.shard_number, v.shard_count, v.record_count,
                                      v.first_id, v.dataset_record_count, v.shard_file_length,
                                      v.shard_footer_checksum, v.entry_stride, blob_fields,
                                      indexed_fields, sections);
  builder.Finish(header);
  return Finish(builder);
}

Result<const fb::IndexHeader*> VerifyIndexHeader(const uint8_t* data, uint64_t size,
                                                 const std::string& path) {
  return VerifyRoot<fb::IndexHeader>(data, size, path, "index header");
}

}  // namespace unirecord::format
