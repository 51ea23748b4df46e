// Tags that fail closed (format/SPEC.md section 1.3): every line of a tags
// file reads as a tag or is a problem naming the file and the line; every
// writer refuses a dataset whose tags file has one, so that no gc collects
// a version a damaged tag protected; readers open by version and by the
// tags of sound lines, and list the problems as warnings.
#include <gtest/gtest.h>

#include <filesystem>

#include "dataset/dataset_testing.h"
#include "format/manifest.h"
#include "unirecord/dataset.h"
#include "unirecord/fields.h"
#include "unirecord/versions.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using testing::Signed;

const std::string kHead = "unirecord-tags 1\n";

Result<std::shared_ptr<Dataset>> OpenTag(const std::string& path, const std::string& tag) {
  DatasetOptions options;
  options.tag = tag;
  return Dataset::Open(path, options);
}

TEST(TagsFileTest, TagsRoundTrip) {
  const format::Tags tags = {{"best", 3}, {"paper-v1.2_final", 12}};
  const format::TagsFile decoded = format::DecodeTags(format::EncodeTags(tags), "t.utag");
  EXPECT_TRUE(decoded.problems.empty());
  EXPECT_TRUE(decoded.Sound().ok());
  EXPECT_EQ(decoded.tags, tags);
  EXPECT_EQ(decoded.line_of, (std::map<std::string, size_t>{{"best", 2}, {"paper-v1.2_final", 3}}));
  for (const std::string& bad : {std::string("1best"), std::string("Best"), std::string(""), std::string(65, 'a'),
                                 std::string("a b"), std::string("a/b")}) {
    EXPECT_EQ(format::CheckTagName(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
}

// One case per way a line can fail: each is a problem naming the file and
// the line, the good line beside it still reads, the bad line's tag is gone.
TEST(TagsFileTest, EveryLineThatDoesNotReadIsAProblemNamingItsLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ta- keep3 3", "line 3 'ta- keep3 3' is not 'tag NAME VERSION'"},  // a damaged key: once ignored
      {"tag keep3 03", "line 3 'tag keep3 03' names no version"},  // a leading zero
      {"tag keep3 0", "line 3 'tag keep3 0' names no version"},
      {"tag keep3 3x", "names no version"},
      {"tag keep3 3 4", "names no version"},
      {"tag keep3 99999999999999999999", "names no version"},
      {"tag  3", "line 3 'tag  3' names no tag"},  // an empty name
      {"tag Keep3 3", "names no tag"},
      {"tag keep3", "is not 'tag NAME VERSION'"},
      {"tag keep3  3", "names no version"},
      {"tag keep3 3\r", "line 3 'tag keep3 3\\x0D' names no version"},
      {"", "line 3 '' is not 'tag NAME VERSION'"},
      {"tags keep3 3", "is not 'tag NAME VERSION'"},
      {"tag kee\xffp3 3", "line 3 'tag kee\\xFFp3 3' names no tag"},
  };
  for (const auto& [line, problem] : cases) {
    SCOPED_TRACE(line);
    const format::TagsFile file = format::DecodeTags(Signed(kHead + "tag best 1\n" + line + "\n"), "t.utag");
    ASSERT_EQ(file.problems.size(), 1u);
    EXPECT_EQ(file.problems[0].rfind("t.utag: tags file ", 0), 0u) << file.problems[0];
    EXPECT_NE(file.problems[0].find(problem), std::string::npos) << file.problems[0];
    EXPECT_EQ(file.tags, (format::Tags{{"best", 1}}));
    const Status sound = file.Sound();
    EXPECT_EQ(sound.code(), StatusCode::kCorruption);
    EXPECT_NE(sound.message().find(problem), std::string::npos) << sound.message();
    EXPECT_NE(sound.message().find("writers refuse this dataset"), std::string::npos) << sound.message();
  }
}

TEST(TagsFileTest, ATagNamedTwiceKeepsNeitherLine) {
  const format::TagsFile file = format::DecodeTags(Signed(kHead + "tag best 1\ntag keep 2\ntag best 3\n"), "t.utag");
  ASSERT_EQ(file.problems.size(), 1u);
  EXPECT_NE(file.problems[0].find("line 4 'tag best 3' names tag 'best' again (line 2)"), std::string::npos)
      << file.problems[0];
  EXPECT_EQ(file.tags, (format::Tags{{"keep", 2}}));
}

TEST(TagsFileTest, ProblemsBeyondTwentyAreCounted) {
  std::string lines;
  for (int i = 0; i < 30; ++i) lines += "ta- t" + std::to_string(i) + " 1\n";
  const format::TagsFile file = format::DecodeTags(Signed(kHead + lines + "tag best 1\n"), "t.utag");
  ASSERT_EQ(file.problems.size(), 21u);
  EXPECT_EQ(file.problems.back(), "t.utag: tags file: 10 more such lines");
  EXPECT_EQ(file.tags, (format::Tags{{"best", 1}}));
}

TEST(TagsFileTest, AWrongFirstLineOrChecksumLeavesNoTag) {
  for (const std::string& text : {Signed("unirecord-tags 2\ntag best 1\n"), kHead + "tag best 1\nchecksum 0000000000000000\n",
                                  kHead + "tag best 1\n", std::string()}) {
    SCOPED_TRACE(text);
    const format::TagsFile file = format::DecodeTags(text, "t.utag");
    ASSERT_EQ(file.problems.size(), 1u);
    EXPECT_EQ(file.problems[0].rfind("t.utag: tags file ", 0), 0u) << file.problems[0];
    EXPECT_TRUE(file.tags.empty());
  }
}

TEST(TagsFileTest, ATagNamingAVersionThatIsNotKeptIsAProblem) {
  format::TagsFile file = format::DecodeTags(Signed(kHead + "tag best 1\ntag keep3 9\n"), "t.utag");
  ASSERT_TRUE(file.problems.empty());
  format::CheckTagsAgainst({1, 2, 3}, &file);
  ASSERT_EQ(file.problems.size(), 1u);
  EXPECT_EQ(file.problems[0], "t.utag: tags file line 3: tag 'keep3' names version 9, which is not kept");
  EXPECT_EQ(file.tags, (format::Tags{{"best", 1}}));
}

TEST(TagsFileTest, ResolvingATagTheSoundLinesLackNamesTheDamage) {
  const format::TagsFile file = format::DecodeTags(Signed(kHead + "tag best 1\nta- keep3 3\n"), "t.utag");
  EXPECT_EQ(*format::ResolveVersion(file, "best", 0, "d/t"), 1u);
  EXPECT_EQ(*format::ResolveVersion(file, "", 2, "d/t"), 2u);
  const Status damaged = format::ResolveVersion(file, "keep3", 0, "d/t").status();
  EXPECT_EQ(damaged.code(), StatusCode::kCorruption);
  EXPECT_NE(damaged.message().find("d/t: no sound tag 'keep3': t.utag: tags file line 3 'ta- keep3 3'"),
            std::string::npos)
      << damaged.message();
  const format::TagsFile sound = format::DecodeTags(Signed(kHead + "tag best 1\n"), "t.utag");
  EXPECT_EQ(format::ResolveVersion(sound, "keep3", 0, "d/t").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(format::ResolveVersion(sound, "Keep 3", 0, "d/t").status().code(), StatusCode::kInvalidArgument);
}

// A dataset of versions 1..3, version 1 tagged `keep3` (the damaged line)
// and version 2 `best`.
class DamagedTagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (uint64_t n : {5, 6, 7}) ASSERT_TRUE(testing::WriteSample(dir_.path(), "train", n, testing::SmallPages(1)).ok());
    ASSERT_TRUE(TagVersion(dir_.path(), "best", 2).ok());
    ASSERT_TRUE(TagVersion(dir_.path(), "keep3", 1).ok());
  }
  void Damage(const std::string& keep3_line) {
    testing::WriteBytes(dir_ / "train.utag", Signed(kHead + "tag best 2\n" + keep3_line + "\n"));
  }
  std::string Tags() const { return dir_ / "train.utag"; }

  // Every writer refuses, naming the file and `problem`; version 1 stays.
  void ExpectEveryWriterRefuses(const std::string& problem) {
    GcOptions gc;
    gc.keep_last = 1;
    WriterOptions append = testing::SmallPages(0);
    append.append = true;
    const std::vector<std::pair<std::string, Status>> writers = {
        {"gc", CollectGarbage(dir_.path(), gc).status()},
        {"tag", TagVersion(dir_.path(), "other", 3)},
        {"untag", UntagVersion(dir_.path(), "best")},
        {"writer", testing::WriteSample(dir_.path(), "train", 4, testing::SmallPages(1)).status()},
        {"staged write", testing::WriteSample(dir_.path(), "train", 4, append).status()},
        {"drop fields", DropFields(dir_.path(), {"ratio"}).status()},
        {"staged write", AddFields(dir_.path(), *Schema::Make({Field::Int64("extra")}),
                                   [](const Dataset&, uint64_t, RecordBuilder& out) { return out.SetInt64(0, 1); })
                             .status()},
        {"writer", CompactDataset(dir_.path()).status()},
    };
    for (const auto& [who, status] : writers) {
      SCOPED_TRACE(who);
      EXPECT_EQ(status.code(), StatusCode::kCorruption);
      EXPECT_EQ(status.message().rfind(who + ": " + Tags() + ": tags file line 3", 0), 0u) << status.message();
      EXPECT_NE(status.message().find(problem), std::string::npos) << status.message();
    }
    EXPECT_TRUE(fs::exists(dir_ / "train.g000001.uver"));
    auto listed = ListVersions(dir_.path());
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->versions.size(), 3u);
    EXPECT_EQ(listed->versions.back().generation, 3u);  // nothing committed
  }

  testing::ScratchDir dir_;
};

TEST_F(DamagedTagsTest, ADamagedKeyIsRefusedByEveryWriterAndWarnedByReaders) {
  Damage("ta- keep3 1");
  ExpectEveryWriterRefuses("'ta- keep3 1' is not 'tag NAME VERSION'");
  auto listed = ListVersions(dir_.path());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->tag_problems.size(), 1u);
  EXPECT_EQ(listed->tag_problems[0], Tags() + ": tags file line 3 'ta- keep3 1' is not 'tag NAME VERSION' "
                                              "(writers refuse this dataset until the tags file is repaired)");
  EXPECT_TRUE(listed->versions[0].tags.empty());
  EXPECT_EQ(listed->versions[1].tags, (std::vector<std::string>{"best"}));
  // Readers: by number, and by the tag of a sound line; not by the damaged one.
  DatasetOptions first;
  first.version = 1;
  auto by_version = Dataset::Open(dir_.path(), first);
  ASSERT_TRUE(by_version.ok()) << by_version.status().ToString();
  EXPECT_EQ((*by_version)->size(), 5u);
  auto by_best = OpenTag(dir_.path(), "best");
  ASSERT_TRUE(by_best.ok()) << by_best.status().ToString();
  EXPECT_EQ((*by_best)->size(), 6u);
  const Status by_keep3 = OpenTag(dir_.path(), "keep3").status();
  EXPECT_EQ(by_keep3.code(), StatusCode::kCorruption);
  EXPECT_NE(by_keep3.message().find("no sound tag 'keep3': " + Tags() + ": tags file line 3 'ta- keep3 1'"),
            std::string::npos)
      << by_keep3.message();
  // The way out the message gives: remove the file, tag again.
  fs::remove(Tags());
  ASSERT_TRUE(TagVersion(dir_.path(), "keep3", 1).ok());
  GcOptions gc;
  gc.keep_last = 1;
  auto collected = CollectGarbage(dir_.path(), gc);
  ASSERT_TRUE(collected.ok()) << collected.status().ToString();
  EXPECT_EQ(collected->removed, (std::vector<uint64_t>{2}));
}

TEST_F(DamagedTagsTest, AChangedNumberNamingAVersionNotKeptIsRefused) {
  Damage("tag keep3 9");
  ExpectEveryWriterRefuses("tag 'keep3' names version 9, which is not kept");
  auto listed = ListVersions(dir_.path());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->tag_problems.size(), 1u);
  EXPECT_NE(listed->tag_problems[0].find("tag 'keep3' names version 9, which is not kept"), std::string::npos);
}

TEST_F(DamagedTagsTest, ALeadingZeroIsRefused) {
  Damage("tag keep3 01");
  ExpectEveryWriterRefuses("'tag keep3 01' names no version");
  EXPECT_EQ(OpenTag(dir_.path(), "keep3").status().code(), StatusCode::kCorruption);
}

TEST_F(DamagedTagsTest, AnEmptyNameIsRefused) {
  Damage("tag  1");
  ExpectEveryWriterRefuses("'tag  1' names no tag");
}

TEST_F(DamagedTagsTest, AChecksumMismatchIsRefusedAndNoTagOpens) {
  std::string text = testing::ReadBytes(Tags());
  text[text.find("keep3")] = 'K';
  testing::WriteBytes(Tags(), text);
  GcOptions gc;
  gc.keep_last = 1;
  const Status refused = CollectGarbage(dir_.path(), gc).status();
  EXPECT_EQ(refused.code(), StatusCode::kCorruption);
  EXPECT_NE(refused.message().find(Tags() + ": tags file checksum mismatch"), std::string::npos) << refused.message();
  EXPECT_EQ(OpenTag(dir_.path(), "best").status().code(), StatusCode::kCorruption);
  DatasetOptions first;
  first.version = 1;
  EXPECT_TRUE(Dataset::Open(dir_.path(), first).ok());
  auto listed = ListVersions(dir_.path());
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->tag_problems.size(), 1u);
}

TEST_F(DamagedTagsTest, UntagWithAVersionRemovesOnlyATagNamingIt) {
  const Status other = UntagVersion(dir_.path(), "best", 3);
  EXPECT_EQ(other.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.message().find("tag 'best' names version 2, not 3 (kept as it is)"), std::string::npos)
      << other.message();
  EXPECT_EQ(OpenTag(dir_.path(), "best").status().code(), StatusCode::kOk);
  ASSERT_TRUE(UntagVersion(dir_.path(), "best", 2).ok());
  EXPECT_EQ(OpenTag(dir_.path(), "best").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(UntagVersion(dir_.path(), "").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace unirecord
