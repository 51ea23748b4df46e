// Helpers shared by the format tests: a sample dataset with every field
// type (temporary directories and file I/O come from util/files_testing.h).
#ifndef UNIRECORD_DATASET_DATASET_TESTING_H_
#define UNIRECORD_DATASET_DATASET_TESTING_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "format/checksum.h"
#include "format/file_names.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord::testing {

// Fields: 0 image bytes, 1 label int64 (indexed), 2 path string, 3 width
// int32 (indexed), 4 score float32 (indexed), 5 mean float32[3],
// 6 big int64, 7 ratio float64, 8 mask bytes (zstd), 9 grid int32[2,2],
// 10 weights float64[2].
inline Schema SampleSchema() {
  return Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::String("path"),
                       Field::Int32("width", true), Field::Float32("score", true),
                       Field::Array("mean", FieldType::kFloat32, {3}), Field::Int64("big"),
                       Field::Float64("ratio"), Field::Bytes("mask", BlobCompression::kZstd),
                       Field::Array("grid", FieldType::kInt32, {2, 2}),
                       Field::Array("weights", FieldType::kFloat64, {2})})
      .value();
}

// Record k's values, a pure function of k. Every 7th record has an empty
// image and path; blobs vary in length.
struct SampleValues {
  std::string image;
  int64_t label;
  std::string path;
  int32_t width;
  float score;
  float mean[3];
  int64_t big;
  double ratio;
  std::string mask;
  int32_t grid[4];
  double weights[2];
};

inline SampleValues SampleRecord(uint64_t k) {
  SampleValues v;
  if (k % 7 != 0) {
    v.image.resize(100 + (k * 977) % 3000);
    for (size_t i = 0; i < v.image.size(); ++i) v.image[i] = static_cast<char>((k * 31 + i * 7) & 0xFF);
    v.path = "class" + std::to_string(k % 5) + "/img_" + std::to_string(k) + ".jpg";
  }
  v.label = static_cast<int64_t>(k % 5) - 2;
  v.width = static_cast<int32_t>(k * 3);
  v.score = static_cast<float>(k) * 0.25f;
  v.mean[0] = 0.5f;
  v.mean[1] = static_cast<float>(k);
  v.mean[2] = -static_cast<float>(k);
  v.big = static_cast<int64_t>(k) * 1000000007LL - (int64_t{1} << 40);
  v.ratio = 1.0 / static_cast<double>(k + 1);
  v.mask = std::string(k % 4 == 0 ? 0 : 500, static_cast<char>('a' + k % 26));
  for (int i = 0; i < 4; ++i) v.grid[i] = static_cast<int32_t>(k) * 10 + i;
  v.weights[0] = static_cast<double>(k);
  v.weights[1] = -0.5;
  return v;
}

inline Status FillSample(RecordBuilder& record, const SampleValues& v) {
  UREC_RETURN_IF_ERROR(record.SetBytes(0, v.image));
  UREC_RETURN_IF_ERROR(record.SetInt64(1, v.label));
  UREC_RETURN_IF_ERROR(record.SetString(2, v.path));
  UREC_RETURN_IF_ERROR(record.SetInt32(3, v.width));
  UREC_RETURN_IF_ERROR(record.SetFloat32(4, v.score));
  UREC_RETURN_IF_ERROR(record.SetArray(5, v.mean, 3));
  UREC_RETURN_IF_ERROR(record.SetInt64("big", v.big));
  UREC_RETURN_IF_ERROR(record.SetFloat64("ratio", v.ratio));
  UREC_RETURN_IF_ERROR(record.SetBytesOwned("mask", v.mask));
  UREC_RETURN_IF_ERROR(record.SetArray("grid", v.grid, 4));
  return record.SetArray("weights", v.weights, 2);
}

// Writes records 0..n-1 of the sample dataset.
inline Result<WriterSummary> WriteSample(const std::string& dir, const std::string& name, uint64_t n,
                                         WriterOptions options) {
  options.sync = false;
  Schema schema = SampleSchema();
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, name, schema, options));
  UREC_RETURN_IF_ERROR(writer->SetMetadata("classes", "a\nb\nc\nd\ne"));
  UREC_RETURN_IF_ERROR(writer->SetMetadata("source", name));
  RecordBuilder record(schema);
  for (uint64_t k = 0; k < n; ++k) {
    SampleValues v = SampleRecord(k);
    UREC_RETURN_IF_ERROR(FillSample(record, v));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return writer->summary();
}

// Moves the dataset `summary` committed in `dir` into the layout of the
// writers before manifests (generation 0 names; no manifest, no kept
// manifest): what the golden folders v1/, v1_1/, v1_2/ and bad/ hold.
inline Status ToPreManifestLayout(const std::string& dir, const std::string& name, const WriterSummary& summary) {
  for (uint32_t s = 0; s < summary.shards; ++s) {
    const std::string shard = io::JoinPath(dir, format::ShardFileName(name, 0, s, summary.shards));
    UREC_RETURN_IF_ERROR(io::RenameFile(summary.shard_paths[s], shard));
    UREC_RETURN_IF_ERROR(io::RenameFile(summary.index_paths[s], format::IndexPathFor(shard)));
  }
  io::RemoveFileIfExists(summary.manifest_path);
  io::RemoveFileIfExists(io::JoinPath(dir, format::VersionFileName(name, summary.generation)));
  return Status::OK();
}

// Every field of every record of `d` as bytes (values and shapes; floats
// printed and by their bits): datasets of equal dumps hold the same records.
// The first error of a read, naming the record.
inline Result<std::vector<std::string>> DumpRecords(const Dataset& d) {
  std::vector<std::string> out;
  for (uint64_t id = 0; id < d.size(); ++id) {
    UREC_ASSIGN_OR_RETURN(const Record record, d.Get(id));
    std::string row;
    for (size_t i = 0; i < d.schema().num_fields(); ++i) {
      const Field& f = d.schema().field(i);
      if (f.type == FieldType::kBytes) {
        UREC_ASSIGN_OR_RETURN(const std::string_view bytes, record.GetBytes(i));
        row += std::string(bytes);
      } else if (f.type == FieldType::kString) {
        UREC_ASSIGN_OR_RETURN(const std::string_view text, record.GetString(i));
        row += std::string(text);
      } else if (f.is_array()) {
        UREC_ASSIGN_OR_RETURN(const ArrayView v, record.GetArray(i));
        row += std::string(static_cast<const char*>(v.data), v.bytes());
        for (size_t j = 0; j < v.shape.ndim; ++j) row += "," + std::to_string(v.shape[j]);
      } else if (IsIntegral(f.type)) {
        UREC_ASSIGN_OR_RETURN(const int64_t v, record.GetInt64(i));
        row += std::to_string(v);
      } else {
        UREC_ASSIGN_OR_RETURN(const double v, record.GetFloat64(i));
        row += std::isnan(v) ? (std::signbit(v) ? "-nan" : "nan") : std::to_string(v);
        char bits[8];
        if (!std::isnan(v)) std::memcpy(bits, &v, 8), row.append(bits, 8);
      }
      row += '|';
    }
    out.push_back(std::move(row));
  }
  return out;
}

// Small pages so that a few dozen records span many pages of each kind.
inline WriterOptions SmallPages(uint32_t shards) {
  WriterOptions options;
  options.num_shards = shards;
  options.blob_page_bytes = 8 << 10;
  options.scalar_page_bytes = 512;
  return options;
}

// `body` with the checksum line that ends a manifest or tags file
// (format/SPEC.md section 1.1): a damaged file that still passes the checksum.
inline std::string Signed(const std::string& body) {
  uint64_t sum = format::Checksum(body.data(), body.size());
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, sum >>= 4) hex[i] = "0123456789abcdef"[sum & 15];
  return body + "checksum " + hex + "\n";
}

}  // namespace unirecord::testing

#endif  // UNIRECORD_DATASET_DATASET_TESTING_H_
