#include "convert/manifest.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "unirecord/convert.h"
#include "unirecord/dataset.h"
#include "util/files_testing.h"

namespace unirecord::convert_internal {
namespace {

ManifestSchema MakeSchema(const std::string& text) {
  auto schema = ParseManifestSchema(text, "s.json");
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return schema.ok() ? *schema : ManifestSchema{};
}

const char* kTokens = R"({"fields": [{"name": "tokens", "type": "int32", "shape": [-1]},
                                     {"name": "text", "type": "string"},
                                     {"name": "boxes", "type": "float32", "shape": [-1, 2]},
                                     {"name": "ok", "type": "bool"},
                                     {"name": "label", "type": "uint8", "indexed": true}]})";

template <typename T>
std::vector<T> Elements(const ManifestLine::Value& v) {
  std::vector<T> out(v.data.size() / sizeof(T));
  std::memcpy(out.data(), v.data.data(), v.data.size());
  return out;
}

TEST(ManifestSchema, ImageAddsItsFieldsAndBadSchemasAreErrors) {
  ManifestSchema s = MakeSchema(R"({"fields": [{"name": "img", "type": "image"}, {"name": "caption", "type": "string"}]})");
  EXPECT_EQ(s.image, 0);
  EXPECT_EQ(s.schema.FieldNames(), "img, caption, path, width, height, jpeg_layout, source_size, source_xxh3");
  for (const char* bad : {R"({"fields": []})", R"([1])", R"({"fields": [{"name": "a", "type": "complex"}]})",
                          R"({"fields": [{"name": "a", "type": "float16"}]})",
                          R"({"fields": [{"name": "a", "type": "image"}, {"name": "b", "type": "image"}]})",
                          R"({"fields": [{"name": "a", "type": "image"}, {"name": "width", "type": "int32"}]})",
                          R"({"fields": [{"name": "a", "type": "int32", "shape": [0]}]})",
                          R"({"fields": [{"name": "a", "type": "string", "indexed": true}]})", "{"}) {
    auto r = ParseManifestSchema(bad, "s.json");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("s.json"), std::string::npos) << r.status().message();
  }
}

TEST(JsonlManifest, ValuesAndShapes) {
  const ManifestSchema s = MakeSchema(kTokens);
  auto lines = ParseJsonlManifest(
      "{\"tokens\": [1, -2, 3], \"text\": \"a\", \"boxes\": [[1.5, 2], [3, 4]], \"ok\": true, \"label\": 255}\n"
      "\n"
      "{\"tokens\": [], \"text\": \"\", \"boxes\": [], \"ok\": 0, \"label\": 0}\n",
      s);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].reason, "");
  EXPECT_EQ(lines[0].line, 1u);
  EXPECT_EQ(Elements<int32_t>(lines[0].values[0]), std::vector<int32_t>({1, -2, 3}));
  EXPECT_EQ(lines[0].values[0].shape, std::vector<int64_t>({3}));
  EXPECT_EQ(lines[0].values[1].text, "a");
  EXPECT_EQ(Elements<float>(lines[0].values[2]), std::vector<float>({1.5f, 2, 3, 4}));
  EXPECT_EQ(lines[0].values[2].shape, std::vector<int64_t>({2, 2}));
  EXPECT_EQ(lines[0].values[3].data, std::vector<uint8_t>({1}));
  EXPECT_EQ(lines[0].values[4].data, std::vector<uint8_t>({255}));
  EXPECT_EQ(lines[1].line, 3u);  // the blank line is no sample
  EXPECT_EQ(lines[1].reason, "");
  EXPECT_EQ(lines[1].values[2].shape, std::vector<int64_t>({0, 2}));
}

TEST(JsonlManifest, EachBadLineSaysWhy) {
  const ManifestSchema s = MakeSchema(kTokens);
  const std::string good = R"("text": "t", "boxes": [[1, 2]], "ok": false, "label": 1)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"tokens\": [1, 2.5], " + good + "}", "field 'tokens': 2.5 is not an integer"},
      {"{\"tokens\": [1, 3000000000], " + good + "}", "field 'tokens': 3000000000 is out of int32's range"},
      {"{\"tokens\": 7, " + good + "}", "field 'tokens': expected an array of rank 1, found 7"},
      {"{\"tokens\": [[1]], " + good + "}", "field 'tokens': [1] is not an integer"},
      {R"({"tokens": [1], "text": "t", "boxes": [[1, 2, 3]], "ok": false, "label": 1})",
       "field 'boxes': dimension 1 has 3 values where 2 are expected"},
      {R"({"tokens": [1], "text": "t", "boxes": [[1, 2]], "ok": false, "label": 256})",
       "field 'label': 256 is out of uint8's range"},
      {R"({"tokens": [1], "text": 5, "boxes": [[1, 2]], "ok": false, "label": 1})", "field 'text': 5 is not a string"},
      {R"({"tokens": [1], "text": "t", "boxes": [[1, 2]], "ok": 2, "label": 1})", "field 'ok': 2 is not a bool"},
      {R"({"tokens": [1], "text": "t", "boxes": [[1, 1e39]], "ok": true, "label": 1})",
       "field 'boxes': 1e+39 is out of float32's range"},
      {"{" + good + "}", "missing field 'tokens'"},
      {"{\"tokens\": [], \"extra\": 1, " + good + "}", "key 'extra' is not a field of the schema"},
      {"[1, 2]", "not a JSON object: [1,2]"},
      {"{\"tokens\": [1,, 2]}", "not valid JSON: parse error at line 1, column 15"},
      {std::string(50, '['), "nest deeper than 32 levels"},
      {"{\"tokens\": [1], \"tokens\": [2], " + good + "}", "key 'tokens' appears twice in one object"},
  };
  for (const auto& [line, why] : cases) {
    auto lines = ParseJsonlManifest(line, s);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].reason.find(why), std::string::npos) << line << " -> " << lines[0].reason;
  }
}

TEST(CsvManifest, QuotedCellsJsonCellsAndLineNumbers) {
  const ManifestSchema s = MakeSchema(kTokens);
  auto lines = ParseCsvManifest(
      "label,text,tokens,boxes,ok\r\n"
      "3,\"a, \"\"quoted\"\"\nline\",\"[1, 2]\",[],true\r\n"
      "4,plain,[5],\"[[1,2]]\",0\n"
      "5,short\n"
      "x,t,[1],[],1\n",
      s, "m.csv");
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  ASSERT_EQ(lines->size(), 4u);
  const ManifestLine& first = (*lines)[0];
  EXPECT_EQ(first.reason, "");
  EXPECT_EQ(first.line, 2u);
  EXPECT_EQ(first.values[1].text, "a, \"quoted\"\nline");
  EXPECT_EQ(Elements<int32_t>(first.values[0]), std::vector<int32_t>({1, 2}));
  EXPECT_EQ(first.values[4].data, std::vector<uint8_t>({3}));
  EXPECT_EQ((*lines)[1].line, 4u);  // the quoted newline counts
  EXPECT_EQ((*lines)[1].reason, "");
  EXPECT_EQ((*lines)[2].reason, "2 cells where the header has 5");
  EXPECT_NE((*lines)[3].reason.find("field 'label': not valid JSON"), std::string::npos) << (*lines)[3].reason;
}

TEST(CsvManifest, HeaderAndQuoteErrorsNameTheFile) {
  const ManifestSchema s = MakeSchema(kTokens);
  for (const char* bad : {"label,text,tokens,boxes\n", "label,text,tokens,boxes,ok,more\n",
                          "label,text,tokens,boxes,ok,ok\n", "label,text,tokens,boxes,ok\n1,\"open,[],[],1\n", ""}) {
    auto r = ParseCsvManifest(bad, s, "m.csv");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("m.csv"), std::string::npos) << r.status().message();
  }
}

// fuzz_manifest found both: an extent under an empty one stayed -1, and a
// CSV row's cell was read after the vector of cells had grown (ASan).
TEST(JsonlManifest, ExtentsUnderAnEmptyOneAreZero) {
  const ManifestSchema s = MakeSchema(R"({"fields": [{"name": "m", "type": "uint8", "shape": [-1, -1, 2]}]})");
  const std::vector<ManifestLine> lines = ParseJsonlManifest("{\"m\": []}\n{\"m\": [[]]}\n", s);
  ASSERT_EQ(lines.size(), 2u);
  for (const ManifestLine& line : lines) EXPECT_EQ(line.reason, "") << line.line;
  EXPECT_EQ(lines[0].values[0].shape, (std::vector<int64_t>{0, 0, 2}));
  EXPECT_EQ(lines[1].values[0].shape, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_TRUE(lines[0].values[0].data.empty() && lines[1].values[0].data.empty());
}

TEST(CsvManifest, ManyCellsAndCrlfLineEnds) {
  const ManifestSchema s = MakeSchema(R"({"fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"},
                                                     {"name": "c", "type": "string"}, {"name": "d", "type": "string"},
                                                     {"name": "e", "type": "string"}, {"name": "f", "type": "int32"}]})");
  auto lines = ParseCsvManifest("a,b,c,d,e,f\r\nx,\"y\",,z,w\r,7\r\n", s, "m.csv");
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  ASSERT_EQ(lines->size(), 1u);
  const ManifestLine& line = (*lines)[0];
  ASSERT_EQ(line.reason, "");
  EXPECT_EQ(line.values[0].text, "x");
  EXPECT_EQ(line.values[1].text, "y");
  EXPECT_EQ(line.values[2].text, "");
  EXPECT_EQ(line.values[4].text, "w\r");  // a CR inside the row is the cell's
  EXPECT_EQ(Elements<int32_t>(line.values[5]), (std::vector<int32_t>{7}));
}

// Before: "../secret.jpg" and "imgs/../../secret.jpg" were read and stored,
// a NUL read one file and recorded another name, and with two "image" keys
// the last won (issue 36).
TEST(JsonlManifest, ImagePathsFollowThePathPolicyAndAKeyTwiceIsRefused) {
  const ManifestSchema s = MakeSchema(R"({"fields": [{"name": "image", "type": "image"}, {"name": "n", "type": "int32"}]})");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"image": "../secret.jpg", "n": 1})",
       "field 'image': the image path '../secret.jpg' leaves the manifest's folder ('..')"},
      {R"({"image": "imgs/../../secret.jpg", "n": 1})",
       "field 'image': the image path 'imgs/../../secret.jpg' leaves the manifest's folder ('..')"},
      {R"({"image": "a\u0000.jpg", "n": 1})",
       "field 'image': the image path 'a\\x00.jpg' holds the control character 0x00 at byte 1 (a NUL: the file read "
       "would not be the one named)"},
      {R"({"image": "a\tb.jpg", "n": 1})", "field 'image': the image path 'a\\x09b.jpg' holds the control character 0x09 at byte 1"},
      {R"({"image": "/etc/passwd", "n": 1})",
       "field 'image': the image path '/etc/passwd' is absolute: it must be relative to the manifest's folder"},
      {R"({"image": "a.jpg", "n": 1, "image": "b.jpg"})", "key 'image' appears twice in one object (at the top level)"},
      {R"({"image": "a.jpg", "n": 1e39})", "field 'n': 1e+39 is not an integer"},
      {R"({"image": "imgs/../a.jpg", "n": 1})", ""},
  };
  for (const auto& [line, why] : cases) {
    auto lines = ParseJsonlManifest(line, s);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].reason, why) << line;
  }
}

// Before: a CSV starting with a byte-order mark had no column 'image'.
TEST(CsvManifest, AByteOrderMarkIsSkippedAndPathsFollowThePolicy) {
  const ManifestSchema s = MakeSchema(R"({"fields": [{"name": "image", "type": "image"}, {"name": "n", "type": "int32"}]})");
  auto lines = ParseCsvManifest("\xEF\xBB\xBFimage,n\na.jpg,1\n../b.jpg,2\n\"c\nd.jpg\",3\n", s, "m.csv");
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[0].reason, "");
  EXPECT_EQ((*lines)[0].image_path, "a.jpg");
  EXPECT_EQ((*lines)[1].reason, "field 'image': the image path '../b.jpg' leaves the manifest's folder ('..')");
  EXPECT_EQ((*lines)[2].reason, "field 'image': the image path 'c\\x0Ad.jpg' holds the control character 0x0A at byte 1");
}

// Before: nlohmann skipped a byte-order mark at the start of every line and
// every CSV cell; an integer past 64 bits was "-9.223372036854776e+18 is not
// an integer" (issue 47).
TEST(JsonlManifest, AByteOrderMarkStartsTheFileOnlyAndHugeIntegersAreOutOfRange) {
  const ManifestSchema s = MakeSchema("\xEF\xBB\xBF" R"({"fields": [{"name": "n", "type": "int64"},
                                           {"name": "x", "type": "float64", "shape": [-1]}]})");
  const std::string bom = "\xEF\xBB\xBF";
  const std::vector<ManifestLine> lines = ParseJsonlManifest(
      bom + R"({"n": 1, "x": []})" "\n" + bom + R"({"n": 2, "x": []})" "\n"
      R"({"n": -9223372036854775809, "x": []})" "\n" R"({"n": 3, "x": [1, 100000000000000000000]})" "\n",
      s);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].reason, "");
  EXPECT_EQ(lines[1].line, 2u);
  EXPECT_EQ(lines[1].reason, "a UTF-8 byte-order mark starts the value (only a file's first bytes may hold one)");
  EXPECT_EQ(lines[2].reason, "field 'n': -9223372036854775809 is out of int64's range");
  EXPECT_EQ(lines[3].reason, "");
  EXPECT_EQ(Elements<double>(lines[3].values[1]), (std::vector<double>{1, 1e20}));
  auto csv = ParseCsvManifest(bom + "n,x\n" + bom + "4,[]\n18446744073709551616,[]\n", s, "m.csv");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  ASSERT_EQ(csv->size(), 2u);
  EXPECT_EQ((*csv)[0].reason,
            "field 'n': a UTF-8 byte-order mark starts the value (only a file's first bytes may hold one)");
  EXPECT_EQ((*csv)[1].reason, "field 'n': 18446744073709551616 is out of int64's range");
}

TEST(JsonFieldDefaults, SetExactlyTheFieldsAskedForWithTheManifestsValuesOrSayWhy) {
  const FieldDefaults defaults = JsonFieldDefaults(R"({"score": 0.5, "tag": "none", "emb": [1, -2, 3]})");
  const Schema lacking = *Schema::Make({Field::Float32("score", /*indexed=*/true), Field::String("tag"),
                                        Field::Array("emb", FieldType::kInt32, {3})});
  // The values written are the object's (through a Writer and back).
  testing::ScratchDir dir;
  WriterOptions options;
  options.sync = false;
  auto writer = Writer::Create(dir.path(), "d", lacking, options);
  ASSERT_TRUE(writer.ok());
  RecordBuilder out(lacking);
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(defaults(out).ok());
    ASSERT_TRUE((*writer)->Write(out).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  auto record = (*Dataset::Open(dir.path()))->Get(1);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(*record->GetFloat32("score"), 0.5f);
  EXPECT_EQ(*record->GetString("tag"), "none");
  EXPECT_EQ(record->GetArray("emb")->as<int32_t>()[1], -2);
  // Asked for other fields: each is read again, and refused saying why.
  auto why = [&](std::vector<Field> fields, const std::string& object = "") {
    RecordBuilder b(fields.empty() ? Schema() : *Schema::Make(fields));
    return (object.empty() ? defaults : JsonFieldDefaults(object))(b).message();
  };
  EXPECT_EQ(why({Field::Float32("score"), Field::String("tag")}), "key 'emb' is not a field of the schema");
  EXPECT_EQ(why({}), "key 'emb' is not a field of the schema");  // (keys in sorted order)
  EXPECT_EQ(why({Field::Float32("score"), Field::String("tag"), Field::Array("emb", FieldType::kInt32, {3}),
                 Field::Int64("n")}),
            "missing field 'n'");
  EXPECT_NE(why({Field::Float32("score")}, R"({"score": 1e39})").find("out of float32's range"), std::string::npos);
  EXPECT_NE(why({Field::Float32("score")}, "[1]").find("not a JSON object"), std::string::npos);
  EXPECT_EQ(why({Field::Bytes("thumb")}, R"({"thumb": ""})"),
            "field 'thumb' is bytes, whose values JSON does not give (give them from Python or C++)");
  EXPECT_NE(why({Field::Array("h", FieldType::kFloat16, {})}, R"({"h": 1})").find("'h' is float16"), std::string::npos);
  RecordBuilder nothing{Schema()};
  EXPECT_TRUE(JsonFieldDefaults("{}")(nothing).ok());
}

}  // namespace
}  // namespace unirecord::convert_internal
