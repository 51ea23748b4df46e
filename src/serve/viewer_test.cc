// The viewer's answers (viewer.h) on a small dataset with images, boxes,
// hostile strings and a damaged record, and the server's HTTP checks
// (token, Host, methods, headers). The page itself is tested in a real
// browser (python/tests/test_viewer.py).
#include "serve/viewer.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>

#include "image/image_testing.h"
#include "serve/assets.h"
#include "serve/byte_cache.h"
#include "util/files_testing.h"
#include "unirecord/serve.h"
#include "unirecord/writer.h"

namespace unirecord::serve {
namespace {

constexpr int kRecords = 12;
const std::vector<std::string> kClasses = {"<script>alert(1)</script>", "\"><img src=x onerror=alert(2)>", "cat"};

std::string Jpeg(int k) {
  testing::EncodeSpec spec;
  spec.width = 40 + 8 * k;
  spec.height = 30 + 2 * k;
  return *testing::EncodeJpeg(testing::SyntheticRgb(spec.width, spec.height), spec);
}

std::string Path(int k) { return k == 3 ? "</script><script>alert(3)</script>" : "img_" + std::to_string(k) + ".jpg"; }

// 12 records in 2 shards: image, label (indexed), score, path, boxes (two
// a record) with category_id, and a 2-D array.
std::string WriteDataset() {
  const std::string dir = testing::MakeTempDir();
  Schema schema = *Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::Float64("score"),
                                 Field::String("path"), Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}),
                                 Field::Array("category_id", FieldType::kInt64, {kVariableDim}),
                                 Field::Array("heat", FieldType::kFloat32, {3, 4})});
  WriterOptions options;
  options.num_shards = 2;
  options.expected_records = kRecords;  // a contiguous split: record k is id k
  auto writer = Writer::Create(dir, "v", schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_TRUE((*writer)->SetMetadata(kClassesMetadataKey, *EncodeNameList(kClasses)).ok());
  RecordBuilder record(schema);
  for (int k = 0; k < kRecords; ++k) {
    const float boxes[8] = {1, 2, 10, 8, 5.5f, 4, 20, 12};
    const int64_t categories[2] = {k % 3, 2};
    float heat[12];
    for (int i = 0; i < 12; ++i) heat[i] = static_cast<float>(i * k);
    EXPECT_TRUE(record.SetBytesOwned(0, Jpeg(k)).ok());
    EXPECT_TRUE(record.SetInt64(1, k % 3).ok());
    EXPECT_TRUE(record.SetFloat64(2, k * 0.5).ok());
    EXPECT_TRUE(record.SetString(3, Path(k)).ok());
    EXPECT_TRUE(record.SetValues(4, FieldType::kFloat32, boxes, {2, 4}).ok());
    EXPECT_TRUE(record.SetValues(5, FieldType::kInt64, categories, {2}).ok());
    EXPECT_TRUE(record.SetValues(6, FieldType::kFloat32, heat, {3, 4}).ok());
    EXPECT_TRUE((*writer)->Write(record).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

class ViewerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = WriteDataset();
    dataset_ = *Dataset::Open(dir_);
    viewer_ = std::make_unique<Viewer>(dataset_, dir_, ServeOptions{});
    viewer_->set_distribution_wait(std::chrono::seconds(60));
  }

  Json Get(const std::string& path, const Params& params = {}, int status = 200) {
    const Reply reply = viewer_->Answer(path, params);
    EXPECT_EQ(reply.status, status) << path << ": " << reply.body;
    EXPECT_EQ(reply.content_type, "application/json");
    return Json::parse(reply.body);
  }

  std::string dir_;
  std::shared_ptr<Dataset> dataset_;
  std::unique_ptr<Viewer> viewer_;
};

TEST_F(ViewerTest, OverviewDescribesTheDataset) {
  const Json overview = Get("/api/overview");
  EXPECT_EQ(overview["records"], kRecords);
  EXPECT_EQ(overview["path"], dir_);
  ASSERT_EQ(overview["fields"].size(), 7u);
  EXPECT_EQ(overview["fields"][1]["name"], "label");
  EXPECT_EQ(overview["fields"][1]["indexed"], true);
  EXPECT_EQ(overview["fields"][1]["role"], "label");
  EXPECT_EQ(overview["fields"][4]["role"], "boxes");
  EXPECT_EQ(overview["fields"][5]["role"], "box labels");
  EXPECT_EQ(overview["classes"].get<std::vector<std::string>>(), kClasses);  // strings stay data
  EXPECT_EQ(overview["segments"].size(), 1u);
  ASSERT_EQ(overview["versions"].size(), 1u);
  EXPECT_EQ(overview["versions"][0]["opened"], true);
  EXPECT_EQ(overview["versions"][0]["records"], kRecords);
}

TEST_F(ViewerTest, GridPagesAndFilters) {
  Json grid = Get("/api/grid", {{"size", "5"}, {"page", "2"}});
  EXPECT_EQ(grid["total"], kRecords);
  ASSERT_EQ(grid["records"].size(), 2u);
  EXPECT_EQ(grid["records"][0]["id"], 10);
  const Json& cells = grid["records"][0]["fields"];
  EXPECT_EQ(cells[0]["format"], "JPEG");
  EXPECT_EQ(cells[0]["width"], 40 + 80);
  EXPECT_EQ(cells[1]["v"], 1);
  EXPECT_EQ(cells[1]["name"], kClasses[1]);
  EXPECT_EQ(cells[2]["v"], 5.0);
  EXPECT_EQ(cells[6]["shape"], (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(cells[6]["max"], 110.0);
  EXPECT_EQ(cells[6]["heat"]["cells"].size(), 12u);
  ASSERT_EQ(grid["records"][0]["boxes"].size(), 2u);
  EXPECT_EQ(grid["records"][0]["boxes"][1]["b"], (std::vector<double>{5.5, 4, 20, 12}));
  EXPECT_EQ(grid["records"][0]["boxes"][0]["name"], kClasses[1]) << grid["records"][0].dump();

  grid = Get("/api/grid", {{"q", "label == 2 and score >= 2"}});
  EXPECT_EQ(grid["total"], 3);  // 5, 8, 11
  EXPECT_EQ(grid["records"][0]["id"], 5);

  // A mistake is answered with its column, for the page to point at.
  const Json error = Get("/api/grid", {{"q", "label == 1 and sore > 3"}}, 400);
  EXPECT_EQ(error["column"], 16);
  EXPECT_NE(error["error"].get<std::string>().find("unknown field 'sore'"), std::string::npos);
  Get("/api/grid", {{"size", "201"}}, 400);
  Get("/api/grid", {{"page", "-1"}}, 400);
  Get("/api/grid", {{"q", std::string(kMaxQueryBytes + 1, ' ')}}, 400);
}

TEST_F(ViewerTest, RecordPageHasEveryValueAndTheCatCommand) {
  const Json record = Get("/api/record", {{"id", "3"}});
  EXPECT_EQ(record["fields"][3]["v"], Path(3));
  EXPECT_EQ(record["fields"][6]["v"][2][3], 33.0);
  EXPECT_EQ(record["fields"][0]["head"].get<std::string>().substr(0, 4), "ffd8");
  EXPECT_EQ(record["cat"], "urec cat " + dir_ + " 3");
  Get("/api/record", {{"id", "12"}}, 404);
  Get("/api/record", {{"id", "x"}}, 400);
  Get("/api/record", {}, 400);
}

TEST_F(ViewerTest, ThumbnailIsTheDecoderOutputAtThatSize) {
  const Reply reply = viewer_->Answer("/api/thumb", {{"id", "7"}, {"field", "image"}, {"size", "64"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.content_type, "image/png");
  ImageDecoder decoder;
  Result<RgbImage> shown = decoder.Decode(reply.body);
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  int width = 0, height = 0;
  FitInSquare(40 + 56, 30 + 14, 64, &width, &height);
  ASSERT_EQ(shown->width, width);
  ASSERT_EQ(shown->height, height);
  std::vector<uint8_t> expected(size_t(width) * height * 3);
  ASSERT_TRUE(decoder.DecodeCropResized(Jpeg(7), CropWindow{0, 0, 96, 44, false}, width, height, expected.data(),
                                        expected.size()).ok());
  EXPECT_EQ(shown->pixels, expected);
  EXPECT_EQ(viewer_->Answer("/api/thumb", {{"id", "7"}, {"field", "label"}}).status, 400);
  EXPECT_EQ(viewer_->Answer("/api/thumb", {{"id", "7"}, {"field", "nope"}}).status, 404);
  EXPECT_EQ(viewer_->Answer("/api/thumb", {{"id", "7"}, {"size", "4096"}}).status, 400);
}

// Decodes a PNG answer.
RgbImage DecodePng(const Reply& reply) {
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.content_type, "image/png");
  ImageDecoder decoder;
  Result<RgbImage> image = decoder.Decode(reply.body);
  EXPECT_TRUE(image.ok()) << image.status().ToString();
  return image.ok() ? *image : RgbImage{};
}

TEST_F(ViewerTest, AtlasHoldsEachThumbnailInItsCell) {
  const std::vector<uint64_t> ids = {7, 2, 11, 0, 1, 3, 4, 5, 6};  // 8 cells a row: two rows
  std::string list;
  for (uint64_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  const Params params{{"ids", list}, {"field", "image"}, {"size", "64"}};
  // Every cell is as wide as the widest thumbnail, as high as the highest.
  int cell_width = 0, cell_height = 0;
  for (uint64_t id : ids) {
    int width = 0, height = 0;
    FitInSquare(40 + 8 * int(id), 30 + 2 * int(id), 64, &width, &height);
    cell_width = std::max(cell_width, width);
    cell_height = std::max(cell_height, height);
  }
  ASSERT_EQ(cell_width, 64);  // record 7's and 11's were reduced
  ASSERT_LT(cell_height, 64);
  const Json layout = Get("/api/thumbs", params);
  EXPECT_EQ(layout["columns"], 8);
  EXPECT_EQ(layout["cell_width"], cell_width);
  EXPECT_EQ(layout["cell_height"], cell_height);
  EXPECT_EQ(layout["width"], 8 * cell_width);
  EXPECT_EQ(layout["height"], 2 * cell_height);
  const RgbImage atlas = DecodePng(viewer_->Answer("/api/thumbs.png", params));
  ASSERT_EQ(atlas.width, 8 * cell_width);
  ASSERT_EQ(atlas.height, 2 * cell_height);
  ASSERT_EQ(layout["cells"].size(), ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    const Json& cell = layout["cells"][k];
    EXPECT_EQ(cell["id"], ids[k]);
    EXPECT_FALSE(cell.contains("error")) << cell.dump();
    const int x = cell["x"], y = cell["y"], width = cell["width"], height = cell["height"];
    EXPECT_EQ(x, static_cast<int>(k % 8) * cell_width);
    EXPECT_EQ(y, static_cast<int>(k / 8) * cell_height);
    // Its pixels are /api/thumb's for that record, exactly; the rest of the cell is black.
    const RgbImage thumb = DecodePng(
        viewer_->Answer("/api/thumb", {{"id", std::to_string(ids[k])}, {"field", "image"}, {"size", "64"}}));
    ASSERT_EQ(thumb.width, width);
    ASSERT_EQ(thumb.height, height);
    for (int row = 0; row < cell_height; ++row) {
      const uint8_t* at = atlas.pixels.data() + (size_t(y + row) * atlas.width + x) * 3;
      if (row < height) {
        EXPECT_TRUE(std::equal(at, at + width * 3, thumb.pixels.data() + size_t(row) * width * 3)) << k << " " << row;
      }
      const int blank_from = row < height ? width : 0;
      EXPECT_TRUE(std::all_of(at + blank_from * 3, at + cell_width * 3, [](uint8_t v) { return v == 0; }))
          << k << " " << row;
    }
  }
  // One row when it fits in one; never enlarged at the server's thumbnail size (160).
  const Json one = Get("/api/thumbs", {{"ids", "3,3"}});
  EXPECT_EQ(one["width"], 2 * 64);
  EXPECT_EQ(one["height"], 36);
  EXPECT_EQ(one["cells"][1]["x"], 64);
}

TEST_F(ViewerTest, AtlasRefusesBadIdsAndTooManyPixels) {
  for (const char* ids : {"", "1,,2", "1,", ",1", "1,x", "-1", "1 2", "99999999999999999999999"}) {
    Get("/api/thumbs", {{"ids", ids}}, 400);
    EXPECT_EQ(viewer_->Answer("/api/thumbs.png", {{"ids", ids}}).status, 400) << ids;
  }
  Get("/api/thumbs", {}, 400);
  Get("/api/thumbs", {{"ids", "1,12"}}, 404);  // the dataset has 12 records
  std::string many;
  for (uint64_t i = 0; i <= kMaxPageSize; ++i) many += (i ? "," : "") + std::to_string(i % kRecords);
  Get("/api/thumbs", {{"ids", many}}, 400);
  // 33 cells of 512 x 512 are over kMaxAtlasPixels; 32 are not.
  std::string cells;
  for (int i = 0; i < 33; ++i) cells += (i ? "," : "") + std::to_string(i % kRecords);
  static_assert(32 * 512 * 512 <= kMaxAtlasPixels && 33 * 512 * 512 > kMaxAtlasPixels);
  const Json refused = Get("/api/thumbs", {{"ids", cells}, {"size", "512"}}, 400);
  EXPECT_NE(refused["error"].get<std::string>().find("1 to 32 thumbnails"), std::string::npos) << refused.dump();
  Get("/api/thumbs", {{"ids", "1"}, {"field", "label"}}, 400);
  Get("/api/thumbs", {{"ids", "1"}, {"size", "4096"}}, 400);
}

TEST_F(ViewerTest, CropsAreTheLoadersCropsWithTheirBoxes) {
  const Params params{{"id", "4"}, {"seed", "9"}, {"epoch", "2"}, {"size", "48"}, {"transform", "train"}};
  const Reply png = viewer_->Answer("/api/crop", params);
  ASSERT_EQ(png.status, 200) << png.body;
  SampleDecoderOptions options;
  options.image_size = 48;
  std::unique_ptr<SampleDecoder> decoder = SampleDecoder::Create(options).value();
  std::vector<uint8_t> expected(options.output_bytes());
  CropWindow window;
  ASSERT_TRUE(decoder->Decode(Jpeg(4), 9, 2, 4, expected.data(), expected.size(), &window).ok());
  ImageDecoder png_decoder;
  EXPECT_EQ(png_decoder.Decode(png.body)->pixels, expected);

  Params json_params = params;
  json_params["count"] = "2";
  const Json crops = Get("/api/crops", json_params);
  ASSERT_EQ(crops["crops"].size(), 2u);
  const Json& first = crops["crops"][0];
  EXPECT_EQ(first["epoch"], 2);
  EXPECT_EQ(first["window"]["x"], window.x);
  EXPECT_EQ(first["window"]["width"], window.width);
  const float boxes[8] = {1, 2, 10, 8, 5.5f, 4, 20, 12};
  float mapped[8];
  uint8_t keep[2];
  const size_t kept = MapBoxes(window, 48, 48, BoxFormat::kXYWH, boxes, 2, mapped, keep);
  ASSERT_EQ(first["boxes"].size(), kept);
  for (size_t b = 0; b < kept; ++b) {
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(first["boxes"][b]["b"][i].get<float>(), mapped[4 * b + i]);
  }
}

TEST_F(ViewerTest, DistributionBarsFilterToTheirCounts) {
  const Json labels = Get("/api/distribution", {{"field", "label"}});
  ASSERT_EQ(labels["state"], "done") << labels.dump();
  EXPECT_EQ(labels["source"], "index");
  const Json& bars = labels["charts"][0]["bars"];
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_EQ(bars[1]["name"], kClasses[1]);
  EXPECT_EQ(bars[1]["n"], 4);
  EXPECT_EQ(bars[1]["filter"], "label == 1");
  for (const char* field : {"label", "score", "path"}) {
    const Json d = Get("/api/distribution", {{"field", field}, {"q", "score < 5"}});
    ASSERT_EQ(d["state"], "done") << d.dump();
    for (const Json& bar : d["charts"][0]["bars"]) {
      if (!bar.contains("filter")) continue;  // string lengths: no query selects them
      Result<Query> query = Query::Parse("(" + bar["filter"].get<std::string>() + ") and score < 5", *dataset_);
      ASSERT_TRUE(query.ok()) << query.status().ToString();
      EXPECT_EQ(*query->Count(*dataset_), bar["n"].get<uint64_t>()) << bar.dump();
    }
  }
  EXPECT_EQ(Get("/api/distribution", {{"field", "image"}})["state"], "scan_needed");
  const Json images = Get("/api/distribution", {{"field", "image"}, {"scan", "1"}});
  ASSERT_EQ(images["state"], "done") << images.dump();
  EXPECT_EQ(images["charts"][0]["bars"][0]["name"], "JPEG");
  EXPECT_EQ(images["charts"][0]["bars"][0]["n"], kRecords);
  const Json lengths = Get("/api/distribution", {{"field", "boxes"}, {"scan", "1"}});
  EXPECT_EQ(lengths["charts"][0]["bars"][0]["filter"], "len(boxes) between 2 and 2");
}

TEST_F(ViewerTest, DamagedRecordIsAnErrorInItsCell) {
  // Damage record 9's JPEG (in shard 1) inside its blob page.
  std::string shard_path;
  for (const ShardInfo& s : dataset_->shards()) shard_path = s.path;
  std::string shard = testing::ReadBytes(shard_path);
  const std::string jpeg = Jpeg(9);
  const size_t at = shard.find(jpeg.substr(jpeg.size() / 2, 32));
  ASSERT_NE(at, std::string::npos);
  shard[at] = static_cast<char>(shard[at] ^ 0x55);
  testing::WriteBytes(shard_path, shard);
  auto damaged = *Dataset::Open(dir_);
  Viewer viewer(damaged, dir_, ServeOptions{});
  const Json grid = Json::parse(viewer.Answer("/api/grid", {{"page", "1"}, {"size", "6"}}).body);
  ASSERT_EQ(grid["records"].size(), 6u);
  for (const Json& cell : grid["records"]) {
    if (cell["id"] == 9) {
      EXPECT_NE(cell["error"].get<std::string>().find("Corruption"), std::string::npos) << cell.dump();
    } else {
      EXPECT_FALSE(cell.contains("error")) << cell.dump();
    }
  }
  EXPECT_EQ(viewer.Answer("/api/thumb", {{"id", "9"}}).status, 500);
  EXPECT_EQ(viewer.Answer("/api/thumb", {{"id", "8"}}).status, 200);
  // In an atlas, its cell carries the error and the others their thumbnails.
  const Json atlas = Json::parse(viewer.Answer("/api/thumbs", {{"ids", "8,9,10"}}).body);
  ASSERT_EQ(atlas["cells"].size(), 3u) << atlas.dump();
  EXPECT_NE(atlas["cells"][1]["error"].get<std::string>().find("Corruption"), std::string::npos) << atlas.dump();
  EXPECT_FALSE(atlas["cells"][1].contains("x"));
  for (int k : {0, 2}) EXPECT_GT(atlas["cells"][k]["width"].get<int>(), 0) << atlas.dump();
  EXPECT_EQ(viewer.Answer("/api/thumbs.png", {{"ids", "8,9,10"}}).status, 200);
}

TEST_F(ViewerTest, NothingOutsideTheDatasetIsServed) {
  for (const char* path : {"/../../../../etc/passwd", "/etc/passwd", "//etc/passwd", "/api/../index.html",
                           "/viewer.js/../../../etc/passwd", "/.", "/api/thumb/../../x", "/assets/viewer.js"}) {
    const Reply reply = viewer_->Answer(path, {});
    EXPECT_EQ(reply.status, 404) << path;
    EXPECT_EQ(reply.body.find("root:"), std::string::npos);
  }
  const Reply page = viewer_->Answer("/", {});
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(FindAsset("viewer.js"), nullptr);
}

TEST(ByteCacheTest, KeepsItsBudget) {
  ByteCache cache(800);
  for (int i = 0; i < 20; ++i) cache.Put("k" + std::to_string(i), std::make_shared<const std::string>("x"), 90);
  EXPECT_LE(cache.bytes(), 800u);
  EXPECT_EQ(cache.Get<std::string>("k0"), nullptr);  // the oldest went first
  EXPECT_NE(cache.Get<std::string>("k19"), nullptr);
  cache.Put("big", std::make_shared<const std::string>("x"), 101);  // over an eighth: not kept
  EXPECT_EQ(cache.Get<std::string>("big"), nullptr);
}

TEST(QueryTextTest, NamesAndStringsAreQuotedWhenNeeded) {
  EXPECT_EQ(QueryFieldName("label"), "label");
  EXPECT_EQ(QueryFieldName("a.b_2"), "a.b_2");
  EXPECT_EQ(QueryFieldName("and"), "`and`");
  EXPECT_EQ(QueryFieldName("my `field`\\"), "`my \\`field\\`\\\\`");
  EXPECT_EQ(QueryString("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
}

TEST_F(ViewerTest, ServerRefusesOtherHostsMissingTokensAndWrites) {
  ServeOptions options;
  options.token = "0123456789abcdefXYZ";
  auto server = Server::Start(dataset_, dir_, options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client client("127.0.0.1", (*server)->port());
  EXPECT_EQ(client.Get("/api/overview")->status, 401);
  auto ok = client.Get("/api/overview?token=0123456789abcdefXYZ");
  EXPECT_EQ(ok->status, 200);
  EXPECT_NE(ok->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(ok->get_header_value("X-Content-Type-Options"), "nosniff");
  auto page = client.Get("/?token=0123456789abcdefXYZ");
  EXPECT_NE(page->get_header_value("Set-Cookie").find("HttpOnly"), std::string::npos);
  EXPECT_EQ(client.Get("/api/overview", {{"Cookie", "urec_token=0123456789abcdefXYZ"}})->status, 200);
  EXPECT_EQ(client.Get("/api/overview", {{"Host", "evil.example:80"}, {"Cookie", "urec_token=0123456789abcdefXYZ"}})->status,
            403);
  EXPECT_EQ(client.Post("/api/overview?token=0123456789abcdefXYZ", "x", "text/plain")->status, 405);
  // Answers go as they are, whatever the browser accepts (no brotli or gzip
  // made for each request).
  for (const char* path : {"/viewer.js", "/api/overview", "/"}) {
    auto plain = client.Get(std::string(path) + "?token=0123456789abcdefXYZ", {{"Accept-Encoding", "gzip, deflate, br"}});
    ASSERT_TRUE(plain) << path;
    EXPECT_EQ(plain->status, 200) << path;
    EXPECT_FALSE(plain->has_header("Content-Encoding")) << path << ": " << plain->get_header_value("Content-Encoding");
    if (std::string(path) == "/viewer.js") EXPECT_EQ(plain->body, FindAsset("viewer.js")->data);
  }
  (*server)->Stop();
  (*server)->Wait();

  options.token = "short";
  EXPECT_EQ(Server::Start(dataset_, dir_, options).status().code(), StatusCode::kInvalidArgument);
  options.token = "";
  options.bind = "0.0.0.0";
  auto open = Server::Start(dataset_, dir_, options);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  EXPECT_EQ((*open)->token().size(), 32u);  // another bind gets a token
  EXPECT_NE((*open)->url().find("?token=" + (*open)->token()), std::string::npos);
}

}  // namespace
}  // namespace unirecord::serve
