// Fuzz target for the JSON Lines / CSV manifest readers (urec convert
// jsonl|csv): the input is "S<schema>\0<manifest>" or "C..." for CSV, where
// <schema> is a schema file; without the \0 the manifest is read against a
// schema of every kind of field (image, string, scalars, a fixed and a
// variable-shape array).
//
// A schema is refused with InvalidArgument naming the file. A manifest gives
// one ManifestLine per sample, in ascending line order; a usable line (no
// reason) holds, for every field, a value of its declared rank, fixed
// extents and type width, and an image path the converters' path policy
// accepts (convert/source_path.h: relative, inside the manifest's folder, no
// control character); CSV errors name the file. Lines are parsed under the
// converters' JSON policy (convert/json_policy.h: nesting, duplicate keys,
// numbers range-checked for their field). Never a crash, a hang or a
// sanitizer report.
//
// Seeds: fuzz/corpus/manifest/.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "convert/manifest.h"
#include "convert/source_path.h"
#include "fuzz_dir.h"

using namespace unirecord;

namespace {

constexpr std::string_view kDefaultSchema =
    R"({"fields": [{"name": "image", "type": "image"}, {"name": "caption", "type": "string"},)"
    R"( {"name": "label", "type": "int64", "indexed": true}, {"name": "score", "type": "float32"},)"
    R"( {"name": "flags", "type": "bool", "shape": [3]}, {"name": "boxes", "type": "float32", "shape": [-1, 4]},)"
    R"( {"name": "tokens", "type": "uint16", "shape": [-1]}]})";

void CheckLines(const std::vector<convert_internal::ManifestLine>& lines,
                const convert_internal::ManifestSchema& schema) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const convert_internal::ManifestLine& line = lines[i];
    fuzz::Require(line.line >= 1 && (i == 0 || lines[i - 1].line < line.line), "lines not in ascending order");
    if (!line.reason.empty()) continue;
    fuzz::Require(line.values.size() == schema.fields.size(), "a usable line without a value per field");
    for (size_t k = 0; k < schema.fields.size(); ++k) {
      const Field& field = schema.fields[k];
      const convert_internal::ManifestLine::Value& value = line.values[k];
      if (static_cast<int>(k) == schema.image) {
        fuzz::Require(!line.image_path.empty(), "a usable line with an empty image path");
        fuzz::Require(convert_internal::CheckSourcePathText(line.image_path, "p", "d").empty(),
                      "a usable line with an image path the path policy refuses");
        continue;
      }
      if (field.type == FieldType::kString) continue;
      fuzz::Require(value.shape.size() == field.shape.size(), "a value of another rank than its field");
      uint64_t elements = 1;
      for (size_t d = 0; d < field.shape.size(); ++d) {
        fuzz::Require(value.shape[d] >= 0, "a negative extent");
        fuzz::Require(field.shape[d] == kVariableDim || value.shape[d] == field.shape[d], "a wrong fixed extent");
        elements *= static_cast<uint64_t>(value.shape[d]);
      }
      fuzz::Require(value.data.size() == elements * NumericWidth(field.type), "values of another size than shape");
      if (field.type == FieldType::kFloat32) {  // numbers range-checked: never an infinity from a finite number
        for (size_t e = 0; e < elements; ++e) {
          float f;
          std::memcpy(&f, value.data.data() + 4 * e, 4);
          fuzz::Require(std::isfinite(f), "a float32 value that is not finite");
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool csv = data[0] == 'C';
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view schema_text = kDefaultSchema;
  const size_t split = rest.find('\0');
  if (split != std::string_view::npos) {
    schema_text = rest.substr(0, split);
    rest.remove_prefix(split + 1);
  }
  Result<convert_internal::ManifestSchema> schema = convert_internal::ParseManifestSchema(schema_text, "schema.json");
  if (!schema.ok()) {
    fuzz::Require(schema.status().code() == StatusCode::kInvalidArgument, "a schema error that is not InvalidArgument");
    fuzz::Require(schema.status().message().rfind("schema file schema.json: ", 0) == 0,
                  "a schema error that does not name the file");
    return 0;
  }
  if (!csv) {
    CheckLines(convert_internal::ParseJsonlManifest(rest, *schema), *schema);
    return 0;
  }
  Result<std::vector<convert_internal::ManifestLine>> lines = convert_internal::ParseCsvManifest(rest, *schema, "m.csv");
  if (!lines.ok()) {
    fuzz::Require(lines.status().code() == StatusCode::kInvalidArgument, "a CSV error that is not InvalidArgument");
    fuzz::Require(lines.status().message().rfind("m.csv", 0) == 0, "a CSV error that does not name the file");
    return 0;
  }
  CheckLines(*lines, *schema);
  return 0;
}
