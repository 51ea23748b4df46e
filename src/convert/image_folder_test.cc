#include <gtest/gtest.h>

#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

#include "unirecord/convert_parts.h"
#include "util/files_testing.h"
#include "convert/synthetic_images.h"
#include "unirecord/convert.h"
#include "unirecord/dataset.h"
#include "unirecord/versions.h"
#include "unirecord/writer.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

// A small --mix folder: 3 classes x 5 JPEGs, plus a CMYK JPEG, a PNG named
// .JPEG (written: the format comes from the bytes), a truncated and an empty
// .JPEG and a README.txt.
class ConvertImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticFolderOptions synth;
    synth.classes = 3;
    synth.per_class = 5;
    synth.width = 80;
    synth.height = 60;
    synth.mix = true;
    ASSERT_TRUE(WriteSyntheticImageFolder(src_, synth).ok());
  }

  ConvertOptions Options(int threads = 2) {
    ConvertOptions options;
    options.name = "train";
    options.threads = threads;
    options.sync = false;
    return options;
  }

  // Every file the conversion wrote, by name.
  std::map<std::string, std::string> Output(const std::string& dir) {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename()] = testing::ReadBytes(e.path());
    return files;
  }

  // The first ordinary photo of the folder (synthetic names start "n0").
  std::string ListedJpeg() {
    std::vector<std::string> photos;
    for (const auto& e : fs::recursive_directory_iterator(src_)) {
      if (e.path().filename().string().rfind("n0", 0) == 0 && e.is_regular_file()) {
        photos.push_back(fs::relative(e.path(), src_).string());
      }
    }
    std::sort(photos.begin(), photos.end());
    return photos.empty() ? "" : photos[0];
  }

  testing::ScratchDir scratch_;
  const std::string src_ = scratch_ / "src";
};

TEST_F(ConvertImageFolderTest, EveryFileIsWrittenOrListed) {
  auto report = ConvertImageFolder(src_, scratch_ / "out", Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->written, 17u);  // 15 + CMYK + the PNG named .JPEG
  EXPECT_EQ(report->png, 1u);
  EXPECT_EQ(report->rejected, 2u);  // truncated, empty
  EXPECT_EQ(report->skipped, 1u);   // README.txt
  ASSERT_EQ(report->not_written.size(), 3u);
  EXPECT_EQ(report->not_written[0].path, "README.txt");
  EXPECT_EQ(report->not_written[0].reason, "skipped: not inside a class folder");
  std::map<std::string, std::string> reasons;
  for (const ConvertRejection& r : report->not_written) reasons[fs::path(r.path).filename()] = r.reason;
  EXPECT_EQ(reasons.count("png_named_jpeg.JPEG"), 0u);
  EXPECT_EQ(reasons["truncated.JPEG"], "truncated: the file ends without an EOI marker");
  EXPECT_EQ(reasons["empty.JPEG"], "empty file");

  EXPECT_EQ(report->rejects_path, scratch_ / "out/train.rejects.g000001.tsv");
  const std::string tsv = testing::ReadBytes(report->rejects_path);
  EXPECT_EQ(tsv.rfind("path\treason\nREADME.txt\tskipped: not inside a class folder\n", 0), 0u) << tsv;
  EXPECT_NE(tsv.find("/empty.JPEG\tempty file\n"), std::string::npos) << tsv;
}

// Issue 22: a class folder whose name holds a newline (the class list stores
// one name a line) is listed in the rejects report with its files; the other
// classes convert, with labels numbered over them alone.
TEST_F(ConvertImageFolderTest, AClassFolderNamedWithANewlineIsReportedAndTheRestConverts) {
  std::vector<std::string> classes;
  for (const auto& e : fs::directory_iterator(src_)) {
    if (e.is_directory()) classes.push_back(e.path().filename());
  }
  std::sort(classes.begin(), classes.end());
  ASSERT_EQ(classes.size(), 3u);
  fs::rename(fs::path(src_) / classes[1], fs::path(src_) / "b\nc");
  testing::WriteBytes(scratch_ / "src/b\nc/notes.txt", "x");
  fs::create_directory(scratch_ / "src/e\nf");
  size_t images = 0;
  for (const auto& e : fs::directory_iterator(scratch_ / "src/b\nc")) images += e.path().extension() == ".JPEG";
  ASSERT_GT(images, 0u);

  auto report = ConvertImageFolder(src_, scratch_ / "out", Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->classes, (std::vector<std::string>{classes[0], classes[2]}));
  const std::string why = "class folder name holds a newline, which the class list (one name a line) cannot store";
  std::map<std::string, std::string> reasons;
  for (const ConvertRejection& r : report->not_written) reasons[r.path] = r.reason;
  size_t listed = 0;
  for (const auto& [path, reason] : reasons) {
    if (path.rfind("b\nc/", 0) == 0 && fs::path(path).extension() == ".JPEG") {
      EXPECT_EQ(reason, why) << path;
      ++listed;
    }
  }
  EXPECT_EQ(listed, images);
  EXPECT_EQ(reasons["b\nc/notes.txt"], "skipped: " + why);
  EXPECT_EQ(reasons["e\nf/"], "skipped: an empty " + why);
  const std::string tsv = testing::ReadBytes(report->rejects_path);
  EXPECT_NE(tsv.find("\nb\\nc/notes.txt\tskipped: " + why + "\n"), std::string::npos) << tsv;

  auto ds = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->size(), report->written);
  EXPECT_GT(report->written, 0u);
  for (uint64_t id = 0; id < (*ds)->size(); ++id) {
    auto record = (*ds)->Get(id);
    ASSERT_TRUE(record.ok());
    const std::string path(*record->GetString("path"));
    EXPECT_EQ(path.substr(0, path.find('/')), report->classes[static_cast<size_t>(*record->GetInt64("label"))]);
  }
}

TEST_F(ConvertImageFolderTest, KeepOriginalRecordsReadBackByteExactInFolderOrder) {
  ConvertOptions options = Options();
  options.keep_original = true;
  auto report = ConvertImageFolder(src_, scratch_ / "out", options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto ds = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_EQ((*ds)->size(), 17u);
  EXPECT_EQ(DecodeNameList((*ds)->metadata().at(kClassesMetadataKey)), report->classes);
  ASSERT_EQ(report->classes.size(), 3u);
  std::string previous_path;
  int64_t previous_label = 0;
  ImageDecoder decoder;
  for (uint64_t id = 0; id < (*ds)->size(); ++id) {
    auto record = (*ds)->Get(id);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    const std::string path(*record->GetString("path"));
    const int64_t label = *record->GetInt64("label");
    EXPECT_EQ(*record->GetBytes("image"), testing::ReadBytes(src_ + "/" + path)) << path;
    EXPECT_EQ(*record->GetInt64("jpeg_layout"), 0) << path;
    EXPECT_EQ(path.substr(0, path.find('/')), report->classes[label]);
    // Class-major, then by name within the (flat) class folder.
    EXPECT_TRUE(label > previous_label || (label == previous_label && path > previous_path)) << path;
    previous_path = path;
    previous_label = label;
    // The size the decoder decodes the source to.
    Result<RgbImage> decoded = decoder.Decode(testing::ReadBytes(src_ + "/" + path));
    ASSERT_TRUE(decoded.ok()) << path << ": " << decoded.status().ToString();
    EXPECT_EQ(*record->GetInt64("width"), decoded->width) << path;
    EXPECT_EQ(*record->GetInt64("height"), decoded->height) << path;
  }
}

// The default: every record holds the fast-layout rewrite of its source,
// which decodes to the source's pixels, and the source's size and XXH3.
TEST_F(ConvertImageFolderTest, RecordsAreTranscodedLosslesslyWithTheirProvenance) {
  auto report = ConvertImageFolder(src_, scratch_ / "out", Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->transcoded, 16u);
  EXPECT_EQ(report->kept_original, 0u);
  EXPECT_EQ(report->png, 1u);
  EXPECT_TRUE(report->kept_original_reasons.empty());
  auto ds = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ImageDecoder decoder;
  uint64_t image_bytes = 0, source_bytes = 0;
  for (uint64_t id = 0; id < (*ds)->size(); ++id) {
    auto record = (*ds)->Get(id);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    const std::string path(*record->GetString("path"));
    const std::string source = testing::ReadBytes(src_ + "/" + path);
    const std::string_view image = *record->GetBytes("image");
    const bool png = SniffImageFormat(source) == ImageFormat::kPng;  // stored as it is
    EXPECT_EQ(png, image == source) << path;
    EXPECT_EQ(*record->GetInt64("jpeg_layout"), png ? 0 : 1) << path;
    EXPECT_EQ(*record->GetInt64("source_size"), static_cast<int64_t>(source.size())) << path;
    EXPECT_EQ(static_cast<uint64_t>(*record->GetInt64("source_xxh3")), XXH3_64bits(source.data(), source.size()))
        << path;
    if (!png) {
      Result<JpegInfo> info = ProbeJpeg(image);
      ASSERT_TRUE(info.ok()) << path;
      EXPECT_TRUE(info->has_restart_markers && !info->progressive) << path;
    }
    Result<RgbImage> expected = decoder.Decode(source), got = decoder.Decode(image);
    ASSERT_TRUE(expected.ok() && got.ok()) << path;
    EXPECT_TRUE(got->pixels == expected->pixels) << path;
    image_bytes += image.size();
    source_bytes += source.size();
  }
  EXPECT_EQ(report->image_bytes, image_bytes);
  EXPECT_EQ(report->source_bytes, source_bytes);
}

// JPEGs that pass the header check but that the rewrite cannot reproduce
// exactly are stored as they were, and counted.
TEST_F(ConvertImageFolderTest, FilesTheTranscodeRefusesAreKeptAndCounted) {
  const std::string jpeg = testing::ReadBytes(src_ + "/" + ListedJpeg());
  const std::string cut = jpeg.substr(0, jpeg.size() * 3 / 4) + "\xFF\xD9";  // premature end, with EOI
  const std::string trailer = jpeg + std::string(40, 'x');                    // data after EOI
  const std::string class_dir = fs::path(src_ + "/" + ListedJpeg()).parent_path();
  testing::WriteBytes(class_dir + "/zz_cut.jpg", cut);
  testing::WriteBytes(class_dir + "/zz_trailer.jpg", trailer);
  auto report = ConvertImageFolder(src_, scratch_ / "out", Options());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->written, 19u);
  EXPECT_EQ(report->transcoded, 16u);
  EXPECT_EQ(report->kept_original, 2u);
  const std::map<std::string, uint64_t> reasons = {{"data after EOI", 1}, {"libjpeg warning", 1}};
  EXPECT_EQ(report->kept_original_reasons, reasons);
  auto ds = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(ds.ok());
  int kept = 0;
  for (uint64_t id = 0; id < (*ds)->size(); ++id) {
    auto record = (*ds)->Get(id);
    const std::string path(*record->GetString("path"));
    if (path.find("zz_") == std::string::npos) continue;
    ++kept;
    EXPECT_EQ(*record->GetInt64("jpeg_layout"), 0);
    EXPECT_EQ(*record->GetBytes("image"), testing::ReadBytes(src_ + "/" + path));
  }
  EXPECT_EQ(kept, 2);
}

TEST_F(ConvertImageFolderTest, OutputIsByteIdenticalAcrossRunsAndThreadCounts) {
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "one", Options(1)).ok());
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "again", Options(1)).ok());
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "four", Options(4)).ok());
  const auto one = Output(scratch_ / "one");
  EXPECT_GE(one.size(), 3u);  // shard, index, rejects
  EXPECT_EQ(one, Output(scratch_ / "again"));
  EXPECT_EQ(one, Output(scratch_ / "four"));
}

TEST_F(ConvertImageFolderTest, ShardCountKeepsFolderOrder) {
  ConvertOptions options = Options();
  options.num_shards = 3;
  auto report = ConvertImageFolder(src_, scratch_ / "out", options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->shards, 3u);
  auto sharded = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "single", Options()).ok());
  auto single = Dataset::Open(scratch_ / "single");
  ASSERT_TRUE(sharded.ok() && single.ok());
  ASSERT_EQ((*sharded)->size(), (*single)->size());
  for (uint64_t id = 0; id < (*single)->size(); ++id) {
    EXPECT_EQ(*(*sharded)->Get(id)->GetString("path"), *(*single)->Get(id)->GetString("path"));
  }
}

TEST_F(ConvertImageFolderTest, ConvertingAgainCommitsANewVersionAndKeepsTheOld) {
  ConvertOptions options = Options();
  options.num_shards = 3;
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "out", options).ok());
  scratch_.Write("out/other-00000-of-00001.urec", "another dataset: left alone");
  options.num_shards = 2;
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "out", options).ok());
  std::vector<std::string> names;
  for (const auto& [name, bytes] : Output(scratch_ / "out")) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "other-00000-of-00001.urec", "train-00000-of-00002.g000002.uidx",
                       "train-00000-of-00002.g000002.urec", "train-00000-of-00003.g000001.uidx",
                       "train-00000-of-00003.g000001.urec", "train-00001-of-00002.g000002.uidx",
                       "train-00001-of-00002.g000002.urec", "train-00001-of-00003.g000001.uidx",
                       "train-00001-of-00003.g000001.urec", "train-00002-of-00003.g000001.uidx",
                       "train-00002-of-00003.g000001.urec", "train.g000001.uver", "train.g000002.uver",
                       "train.rejects.g000001.tsv", "train.rejects.g000002.tsv", "train.uset"}));
  // Until `urec gc` drops version 1 and with it the files only it uses.
  GcOptions gc;
  gc.keep_last = 1;
  auto collected = CollectGarbage(scratch_ / "out/train", gc);
  ASSERT_TRUE(collected.ok()) << collected.status().ToString();
  EXPECT_EQ(collected->removed, std::vector<uint64_t>{1});
  EXPECT_EQ(collected->files_removed, 8u);  // 3 shards, 3 indexes, the kept manifest, the report
  names.clear();
  for (const auto& [name, bytes] : Output(scratch_ / "out")) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"other-00000-of-00001.urec", "train-00000-of-00002.g000002.uidx",
                                             "train-00000-of-00002.g000002.urec", "train-00001-of-00002.g000002.uidx",
                                             "train-00001-of-00002.g000002.urec", "train.g000002.uver",
                                             "train.rejects.g000002.tsv", "train.uset"}));
}

// Issue 35: a folder holding new images of only some classes appends with
// the dataset's labels for them; a class the dataset lacks is refused by name.
TEST_F(ConvertImageFolderTest, AppendingMapsClassFoldersOntoTheDatasetsClassesByName) {
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "out", Options()).ok());
  auto before = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(before.ok());
  const std::vector<std::string> classes = DecodeNameList((*before)->metadata().at(kClassesMetadataKey));
  ASSERT_EQ(classes.size(), 3u);
  // Only the last class, under its own name.
  fs::create_directories(scratch_ / "more");
  fs::copy(src_ + "/" + classes[2], scratch_ / "more/" + classes[2], fs::copy_options::recursive);
  ConvertOptions options = Options();
  options.append = true;
  auto appended = ConvertImageFolder(scratch_ / "more", scratch_ / "out", options);
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  ASSERT_GT(appended->written, 0u);
  auto after = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ((*after)->size(), (*before)->size() + appended->written);
  EXPECT_EQ((*after)->segments().size(), 2u);
  for (uint64_t id = (*before)->size(); id < (*after)->size(); ++id) {
    EXPECT_EQ(*(*after)->GetIndexedInt64(id, *(*after)->schema().FindField("label")), 2) << id;
  }
  // A class the dataset lacks.
  fs::create_directories(scratch_ / "new_class");
  fs::copy(src_ + "/" + classes[0], scratch_ / "new_class/zebra", fs::copy_options::recursive);
  auto refused = ConvertImageFolder(scratch_ / "new_class", scratch_ / "out", options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("class 'zebra'"), std::string::npos) << refused.status().message();
  EXPECT_EQ((*Dataset::Open(scratch_ / "out"))->size(), (*after)->size());
}

TEST_F(ConvertImageFolderTest, ExtendClassesAddsNewClassesAtTheEndAndKeepsEveryEarlierLabel) {
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "out", Options()).ok());
  auto before = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(before.ok());
  const std::vector<std::string> classes = DecodeNameList((*before)->metadata().at(kClassesMetadataKey));
  ASSERT_EQ(classes.size(), 3u);
  // Two new classes (sorted: "aardvark" before "zebra", though both sort apart
  // from the old ones) and one old class.
  fs::create_directories(scratch_ / "more");
  fs::copy(src_ + "/" + classes[0], scratch_ / "more/zebra", fs::copy_options::recursive);
  fs::copy(src_ + "/" + classes[1], scratch_ / "more/aardvark", fs::copy_options::recursive);
  fs::copy(src_ + "/" + classes[2], scratch_ / "more/" + classes[2], fs::copy_options::recursive);
  ConvertOptions options = Options();
  options.extend_classes = true;
  auto without_append = ConvertImageFolder(scratch_ / "more", scratch_ / "out", options);
  EXPECT_EQ(without_append.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(without_append.status().message().find("needs append"), std::string::npos);
  options.append = true;
  auto appended = ConvertImageFolder(scratch_ / "more", scratch_ / "out", options);
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  auto after = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  std::vector<std::string> extended = classes;
  extended.push_back("aardvark");
  extended.push_back("zebra");
  EXPECT_EQ(DecodeNameList((*after)->metadata().at(kClassesMetadataKey)), extended);
  const size_t label = *(*after)->schema().FindField("label");
  const size_t path = *(*after)->schema().FindField("path");
  for (uint64_t id = 0; id < (*after)->size(); ++id) {
    const int64_t l = *(*after)->GetIndexedInt64(id, label);
    const std::string p(*(*after)->Get(id)->GetString(path));
    if (id < (*before)->size()) {
      EXPECT_EQ(l, *(*before)->GetIndexedInt64(id, label)) << id;  // an earlier label keeps its meaning
    } else {
      EXPECT_EQ(p.substr(0, p.find('/')), extended.at(static_cast<size_t>(l))) << id << " " << p;
    }
  }
  // The first version keeps its own class list.
  DatasetOptions first_version;
  first_version.version = 1;
  auto v1 = Dataset::Open(scratch_ / "out", first_version);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(DecodeNameList((*v1)->metadata().at(kClassesMetadataKey)), classes);
  // Another append without the flag maps onto the extended list.
  fs::create_directories(scratch_ / "again");
  fs::copy(src_ + "/" + classes[0], scratch_ / "again/zebra", fs::copy_options::recursive);
  options.extend_classes = false;
  auto again = ConvertImageFolder(scratch_ / "again", scratch_ / "out", options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto last = Dataset::Open(scratch_ / "out");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ((*last)->segments().size(), 3u);
  EXPECT_EQ(*(*last)->GetIndexedInt64((*last)->size() - 1, label), 4);
  // Merged, segments follow one another as they did: a three-class dataset
  // then the extended one merges; the extended one then itself (its first
  // segment has three classes after five) is refused.
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "plain", Options()).ok());
  const std::string out = scratch_ / "out";
  auto merged = MergeDatasets(scratch_ / "merged", "m", {scratch_ / "plain", out}, StagedWriteOptions());
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  auto m = Dataset::Open(scratch_ / "merged");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->metadata(), (*last)->metadata());
  auto refused = MergeDatasets(scratch_ / "merged2", "m", {out, out}, StagedWriteOptions());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("a class list may only gain names at its end"), std::string::npos)
      << refused.status().message();
}

TEST_F(ConvertImageFolderTest, StrictStopsAtTheFirstRejectAndLeavesNoDataset) {
  ConvertOptions options = Options();
  options.strict = true;
  auto report = ConvertImageFolder(src_, scratch_ / "out", options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kCorruption);
  EXPECT_NE(report.status().message().find(".JPEG: "), std::string::npos) << report.status().message();
  EXPECT_NE(report.status().message().find("strict"), std::string::npos);
  std::error_code ec;  // the folder may not even exist
  for (const auto& e : fs::directory_iterator(scratch_ / "out", ec)) ADD_FAILURE() << "left behind: " << e.path();
}

TEST_F(ConvertImageFolderTest, ClearErrorsForBadArguments) {
  EXPECT_EQ(ConvertImageFolder(scratch_ / "missing", scratch_ / "out", Options()).status().code(),
            StatusCode::kNotFound);
  auto inside = ConvertImageFolder(src_, src_ + "/records", Options());
  EXPECT_EQ(inside.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(inside.status().message().find("inside the source folder"), std::string::npos);
  scratch_.Write("flat/a.jpg", "x");
  EXPECT_EQ(ConvertImageFolder(scratch_ / "flat", scratch_ / "out", Options()).status().code(),
            StatusCode::kInvalidArgument);  // a.jpg is not in a class folder: no candidates
  ConvertOptions both = Options();
  both.num_shards = 2;
  both.target_shard_bytes = 1 << 20;
  EXPECT_EQ(ConvertImageFolder(src_, scratch_ / "out", both).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ConvertImageFolderTest, ReportsProgressFromTheCallingThread) {
  ConvertOptions options = Options();
  ConvertProgress last;
  int calls = 0;
  options.on_progress = [&](const ConvertProgress& p) {
    last = p;
    ++calls;
  };
  ASSERT_TRUE(ConvertImageFolder(src_, scratch_ / "out", options).ok());
  EXPECT_GE(calls, 1);
  EXPECT_EQ(last.files_total, 19u);
  EXPECT_EQ(last.files_done, 19u);
  EXPECT_EQ(last.written, 17u);
  EXPECT_EQ(last.rejected, 2u);
}

}  // namespace
}  // namespace unirecord

namespace unirecord {
namespace {

// The --mix folder has 19 candidates (2 rejected). With 4 shards, shard s
// holds the written files among candidates [s*19/4, (s+1)*19/4): 4, 5, 5, 5
// candidates, less the rejected ones in each range.
TEST_F(ConvertImageFolderTest, PartsRunAnywhereCommitTheBytesOfALocalConversion) {
  ConvertOptions options = Options();
  options.num_shards = 4;
  auto local = ConvertImageFolder(src_, scratch_ / "local", options);
  ASSERT_TRUE(local.ok()) << local.status().ToString();

  auto plan = PlanImageFolder(src_, scratch_ / "parts", options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->shard_starts.size(), 5u);
  StagedWriteOptions staged_options;
  staged_options.sync = false;
  auto staged = StagedWrite::Begin(scratch_ / "parts", plan->name, 3, staged_options);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  // Parts: shard 0, shards 1-2, shard 3; run last to first, the middle one twice.
  const std::vector<std::pair<uint32_t, uint32_t>> ranges = {{0, 1}, {1, 3}, {3, 4}};
  std::vector<ConvertReport> reports(3);
  for (int k : {2, 1, 0, 1}) {
    ImageFolderPart part = PartOfPlan(*plan, ranges[k].first, ranges[k].second, k, 3);
    auto report = ConvertImageFolderPart(src_, part, scratch_ / "parts", plan->name, (*staged)->token(), Options(1));
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    reports[k] = *report;
  }
  auto merged = CommitImageFolder(**staged, *plan, reports);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(Output(scratch_ / "parts"), Output(scratch_ / "local"));
  EXPECT_EQ(merged->written, local->written);
  EXPECT_EQ(merged->rejected, local->rejected);
  EXPECT_EQ(merged->skipped, local->skipped);
  EXPECT_EQ(merged->not_written.size(), local->not_written.size());

  // Each shard holds what was written of its candidate range.
  auto dataset = Dataset::Open(scratch_ / "local");
  ASSERT_TRUE(dataset.ok());
  ASSERT_EQ((*dataset)->shards().size(), 4u);
  uint64_t candidates_before = 0;
  for (uint32_t s = 0; s < 4; ++s) {
    uint64_t written = 0;
    for (size_t i = plan->shard_starts[s]; i < plan->shard_starts[s + 1]; ++i) {
      if (!plan->files[i].is_candidate) continue;
      ++candidates_before;
      const std::string& path = plan->files[i].path;
      const bool rejected = std::any_of(local->not_written.begin(), local->not_written.end(),
                                        [&](const ConvertRejection& r) { return r.path == path; });
      written += rejected ? 0 : 1;
    }
    EXPECT_EQ(candidates_before, plan->candidates * (s + 1) / 4) << "shard " << s;
    EXPECT_EQ((*dataset)->shards()[s].records, written) << "shard " << s;
  }
}

}  // namespace
}  // namespace unirecord

namespace unirecord {
namespace {

TEST_F(ConvertImageFolderTest, AppendAddsASegmentWithIdsThatContinue) {
  SyntheticFolderOptions synth;
  synth.classes = 3;
  synth.per_class = 2;
  synth.width = 64;
  synth.height = 48;
  synth.seed = 0;  // the class names come from the seed: the same three classes
  const std::string more = scratch_ / "more";
  ASSERT_TRUE(WriteSyntheticImageFolder(more, synth).ok());
  const std::string out = scratch_ / "out";
  ConvertOptions options = Options();
  options.num_shards = 2;
  auto first = ConvertImageFolder(src_, out, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto old = Dataset::Open(out);
  ASSERT_TRUE(old.ok());
  options.append = true;
  auto appended = ConvertImageFolder(more, out, options);
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ(appended->shards, 4u);
  auto now = Dataset::Open(out);
  ASSERT_TRUE(now.ok());
  ASSERT_EQ((*now)->size(), first->written + 6);
  for (uint64_t id = 0; id < (*now)->size(); ++id) {
    auto record = (*now)->Get(id);
    ASSERT_TRUE(record.ok());
    if (id < first->written) {
      // The old generation, still open, reads as before; the new one holds the same records first.
      EXPECT_EQ(*record->GetString(2), *(*old)->Get(id)->GetString(2)) << id;
      EXPECT_EQ(*record->GetBytes(0), *(*old)->Get(id)->GetBytes(0)) << id;
    }
  }
  EXPECT_TRUE((*now)->Verify().ok());
  EXPECT_TRUE((*old)->Verify().ok());
  // Appending a folder of other classes is refused, naming a class the dataset lacks.
  synth.classes = 2;
  synth.seed = 7;  // other class names
  const std::string other = scratch_ / "other";
  ASSERT_TRUE(WriteSyntheticImageFolder(other, synth).ok());
  options.num_shards = 1;
  auto refused = ConvertImageFolder(other, out, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("is not among the dataset's 3 classes"), std::string::npos)
      << refused.status().message();
  auto still = Dataset::Open(out);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ((*still)->size(), first->written + 6);
}

}  // namespace
}  // namespace unirecord
