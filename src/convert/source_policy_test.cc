// The converters' one path policy and their refusal of an empty result,
// through each converter alike (issue 36): an image folder, COCO, JSON Lines
// and CSV whose sources are symbolic links to files and folders outside
// their root, the option that follows them, and inputs that are all rejected.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "convert/synthetic_images.h"
#include "unirecord/convert.h"
#include "unirecord/dataset.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

const char* kSchema = R"({"fields": [{"name": "image", "type": "image"}, {"name": "label", "type": "int64"}]})";

class SourcePolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticJpegSpec spec;
    spec.width = 32;
    spec.height = 24;
    Result<std::string> jpeg = EncodeSyntheticJpeg(spec);
    ASSERT_TRUE(jpeg.ok());
    jpeg_ = *jpeg;
    fs::create_directories(root_ + "/a");
    fs::create_directories(scratch_ / "outside/folder");
    scratch_.Write("root/a/inside.jpg", jpeg_);
    scratch_.Write("outside/secret.jpg", jpeg_);
    scratch_.Write("outside/folder/secret.jpg", jpeg_);
    fs::create_symlink(scratch_ / "outside/secret.jpg", root_ + "/a/link.jpg");
    fs::create_symlink(scratch_ / "outside/folder", root_ + "/b");  // a class folder from elsewhere
    scratch_.Write("schema.json", kSchema);
  }

  ConvertOptions Options() {
    ConvertOptions o;
    o.name = "d";
    o.threads = 2;
    o.sync = false;
    return o;
  }

  // path -> reason of the report's rows.
  static std::map<std::string, std::string> Rows(const ConvertReport& r) {
    std::map<std::string, std::string> rows;
    for (const ConvertRejection& row : r.not_written) rows[row.path] = row.reason;
    return rows;
  }

  // Each converter over the same three files: inside.jpg, a link to a file
  // outside, a file in a class folder that is a link to a folder outside.
  std::map<std::string, std::function<Result<ConvertReport>(const ConvertOptions&)>> Converters() {
    scratch_.Write("root/coco.json",
                   R"({"images": [{"id": 1, "file_name": "a/inside.jpg"}, {"id": 2, "file_name": "a/link.jpg"},)"
                   R"( {"id": 3, "file_name": "b/secret.jpg"}], "annotations": [], "categories": []})");
    scratch_.Write("root/m.jsonl", "{\"image\": \"a/inside.jpg\", \"label\": 0}\n{\"image\": \"a/link.jpg\", "
                                   "\"label\": 0}\n{\"image\": \"b/secret.jpg\", \"label\": 1}\n");
    scratch_.Write("root/m.csv", "image,label\na/inside.jpg,0\na/link.jpg,0\nb/secret.jpg,1\n");
    const std::string out = scratch_ / "out";
    return {
        {"imagefolder", [=](const ConvertOptions& o) { return ConvertImageFolder(root_, out, o); }},
        {"coco", [=](const ConvertOptions& o) { return ConvertCoco(root_ + "/coco.json", root_, out, o); }},
        {"jsonl", [=](const ConvertOptions& o) { return ConvertJsonl(root_ + "/m.jsonl", scratch_ / "schema.json", out, o); }},
        {"csv", [=](const ConvertOptions& o) { return ConvertCsv(root_ + "/m.csv", scratch_ / "schema.json", out, o); }},
    };
  }

  testing::ScratchDir scratch_;
  const std::string root_ = scratch_ / "root";
  std::string jpeg_;
};

// Before: the check was on the path's text, so every converter read both
// links and stored the files outside the folder (issue 36).
TEST_F(SourcePolicyTest, LinksOutOfTheRootAreRejectedByEveryConverterUnlessFollowed) {
  const std::string secret = fs::canonical(scratch_ / "outside/secret.jpg").string();
  const std::string folder_secret = fs::canonical(scratch_ / "outside/folder/secret.jpg").string();
  const std::string real_root = fs::canonical(root_).string();
  for (auto& [kind, convert] : Converters()) {
    Result<ConvertReport> r = convert(Options());
    ASSERT_TRUE(r.ok()) << kind << ": " << r.status().ToString();
    EXPECT_EQ(r->written, 1u) << kind;
    EXPECT_EQ(r->rejected, 2u) << kind;
    const std::string why = ", outside " + real_root + " (a symbolic link; follow_links_outside / "
                            "--follow-links-outside allows it)";
    std::map<std::string, std::string> rows = Rows(*r);
    EXPECT_EQ(rows["a/link.jpg"], "leaves the source folder: resolves to " + secret + why) << kind;
    EXPECT_EQ(rows["b/secret.jpg"], "leaves the source folder: resolves to " + folder_secret + why) << kind;

    ConvertOptions follow = Options();
    follow.follow_links_outside = true;
    Result<ConvertReport> followed = convert(follow);
    ASSERT_TRUE(followed.ok()) << kind << ": " << followed.status().ToString();
    EXPECT_EQ(followed->written, 3u) << kind;
    EXPECT_EQ(followed->rejected, 0u) << kind;
  }
}

// Before: a conversion whose every input was rejected committed an empty
// dataset and reported success (issue 36).
TEST_F(SourcePolicyTest, AConversionThatWritesNothingFailsUnlessAllowed) {
  fs::remove(root_ + "/a/inside.jpg");
  scratch_.Write("root/a/inside.jpg", "not a jpeg");
  const std::string out = scratch_ / "out";
  for (auto& [kind, convert] : Converters()) {
    fs::remove_all(out);
    Result<ConvertReport> r = convert(Options());
    ASSERT_FALSE(r.ok()) << kind;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << kind;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("no record written, every input was rejected"), std::string::npos) << kind << ": " << m;
    EXPECT_NE(m.find("the rejects report is " + out + "/d.rejected.tsv"), std::string::npos) << kind << ": " << m;
    EXPECT_NE(m.find("--allow-empty"), std::string::npos) << m;
    const std::string tsv = testing::ReadBytes(out + "/d.rejected.tsv");
    EXPECT_EQ(tsv.rfind("path\treason\n", 0), 0u) << tsv;
    EXPECT_NE(tsv.find("a/link.jpg\tleaves the source folder"), std::string::npos) << kind << ": " << tsv;
    EXPECT_FALSE(fs::exists(out + "/d.uset")) << kind << ": nothing is committed";
    EXPECT_EQ(Dataset::Open(out + "/d").status().code(), StatusCode::kNotFound) << kind;

    ConvertOptions allow = Options();
    allow.allow_empty = true;
    Result<ConvertReport> empty = convert(allow);
    ASSERT_TRUE(empty.ok()) << kind << ": " << empty.status().ToString();
    EXPECT_EQ(empty->written, 0u);
    EXPECT_FALSE(fs::exists(out + "/d.rejected.tsv")) << kind << ": a committing run removes the failed run's report";
    Result<std::shared_ptr<Dataset>> opened = Dataset::Open(out + "/d");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_EQ((*opened)->size(), 0u);
  }
}

// A failed empty conversion leaves an earlier dataset of the name whole.
TEST_F(SourcePolicyTest, AFailedEmptyConversionKeepsTheOldDataset) {
  const std::string out = scratch_ / "out";
  ASSERT_TRUE(ConvertImageFolder(root_, out, Options()).ok());
  fs::remove(root_ + "/a/inside.jpg");
  scratch_.Write("root/a/inside.jpg", "not a jpeg");
  ASSERT_FALSE(ConvertImageFolder(root_, out, Options()).ok());
  Result<std::shared_ptr<Dataset>> old = Dataset::Open(out + "/d");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ((*old)->size(), 1u);
}

// Before: a CSV that starts with a byte-order mark failed with "the header
// has no column 'image'" (issue 36).
TEST_F(SourcePolicyTest, ACsvByteOrderMarkIsAcceptedAsInJsonLines) {
  scratch_.Write("root/bom.csv", "\xEF\xBB\xBFimage,label\na/inside.jpg,7\n");
  scratch_.Write("root/bom.jsonl", "\xEF\xBB\xBF{\"image\": \"a/inside.jpg\", \"label\": 7}\n");
  for (const char* manifest : {"bom.csv", "bom.jsonl"}) {
    const bool csv = std::string(manifest).find(".csv") != std::string::npos;
    Result<ConvertReport> r = csv ? ConvertCsv(root_ + "/" + manifest, scratch_ / "schema.json", scratch_ / "out", Options())
                                  : ConvertJsonl(root_ + "/" + manifest, scratch_ / "schema.json", scratch_ / "out", Options());
    ASSERT_TRUE(r.ok()) << manifest << ": " << r.status().ToString();
    EXPECT_EQ(r->written, 1u) << manifest;
  }
}

}  // namespace
}  // namespace unirecord
