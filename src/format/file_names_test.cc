#include "format/file_names.h"

#include <gtest/gtest.h>

namespace unirecord::format {
namespace {

TEST(FileNamesTest, SpellsEveryFileOfADataset) {
  EXPECT_EQ(ShardFileName("train", 0, 3, 4), "train-00003-of-00004.urec");  // the pre-manifest layout
  EXPECT_EQ(ShardFileName("train", 12, 3, 4), "train-00003-of-00004.g000012.urec");
  EXPECT_EQ(ShardFileName("t", 1234567, 0, 1), "t-00000-of-00001.g1234567.urec");
  EXPECT_EQ(IndexPathFor("out/train-00003-of-00004.g000012.urec"), "out/train-00003-of-00004.g000012.uidx");
  EXPECT_EQ(ReportFileName("train", 0, "rejects"), "train.rejects.tsv");
  EXPECT_EQ(ReportFileName("train", 7, "rejects"), "train.rejects.g000007.tsv");
  EXPECT_EQ(ManifestFileName("train"), "train.uset");
  EXPECT_EQ(LockFileName("train"), ".train.lock");
  EXPECT_EQ(TemporaryShardFileName("train", 42, 1), ".train.tmp-42-00001.urec.partial");
  EXPECT_EQ(TemporaryIndexFileName("train", 42, 99999), ".train.tmp-42-99999.uidx.partial");
  EXPECT_EQ(TemporaryReportFileName("train", 42, "rejects"), ".train.tmp-42-rejects.tsv.partial");
  EXPECT_EQ(TemporaryManifestFileName("train", 42), ".train.tmp-42-uset.partial");
  for (const std::string& temporary :
       {TemporaryShardFileName("train", 42, 1), TemporaryIndexFileName("train", 42, 1),
        TemporaryReportFileName("train", 42, "rejects"), TemporaryManifestFileName("train", 42)}) {
    EXPECT_EQ(ClassifyFile(temporary, "train").role, FileRole::kTemporary) << temporary;
  }
  EXPECT_EQ(ManifestDatasetName("train.uset"), "train");
  EXPECT_FALSE(ManifestDatasetName(".train.uset"));
  EXPECT_FALSE(ManifestDatasetName("train.urec"));
}

TEST(FileNamesTest, ColumnFilesParseWithTheirGroupAndClassifyAsShards) {
  const std::string file = ColumnFileName("train", 3, 7, 1, 2);
  EXPECT_EQ(file, "train-00001-of-00002.g000003.f000007.urec");
  for (bool index : {false, true}) {
    auto parts = ParseShardFileName(index ? IndexPathFor(file) : file);
    ASSERT_TRUE(parts);
    EXPECT_EQ(parts->name, "train");
    EXPECT_EQ(parts->generation, 3u);
    EXPECT_EQ(parts->group_generation, 7u);
    EXPECT_EQ(parts->is_index, index);
  }
  EXPECT_EQ(ParseShardFileName(ShardFileName("train", 3, 1, 2))->group_generation, 0u);
  const FileOfDataset of = ClassifyFile(file, "train");
  EXPECT_EQ(of.role, FileRole::kShard);
  EXPECT_EQ(of.generation, 3u);
  EXPECT_EQ(of.group_generation, 7u);
  EXPECT_EQ(ClassifyFile(file, "train-00001-of-00002.g000003").role, FileRole::kOther);
  for (const char* bad : {"t-00000-of-00001.f000002.urec", "t-00000-of-00001.g000001.f2.urec",
                          "t-00000-of-00001.f000002.g000001.urec", "t-00000-of-00001.g000001.f000000.urec"}) {
    EXPECT_FALSE(ParseShardFileName(bad)) << bad;
  }
}

TEST(FileNamesTest, ParsesShardNamesFromTheEnd) {
  for (const auto& [name, generation] : std::vector<std::pair<std::string, uint64_t>>{
           {"train", 0}, {"train", 5}, {"a.g000001", 0}, {"x-00001-of-00002", 3}, {"v.1", 1234567}}) {
    for (bool index : {false, true}) {
      std::string file = ShardFileName(name, generation, 1, 2);
      if (index) file = IndexPathFor(file);
      SCOPED_TRACE(file);
      auto parts = ParseShardFileName(file);
      ASSERT_TRUE(parts);
      EXPECT_EQ(parts->name, name);
      EXPECT_EQ(parts->generation, generation);
      EXPECT_EQ(parts->shard, 1u);
      EXPECT_EQ(parts->count, 2u);
      EXPECT_EQ(parts->is_index, index);
    }
  }
  for (const char* bad : {"train.urec", "-00000-of-00001.urec", ".t-00000-of-00001.urec", "t-0000-of-00001.urec",
                          "t-00000-of-00001.g1.urec", "t-00000-of-00001.g000000.urec", "t-00000-of-00001.urecx",
                          "t-00000-of-00001.gx.urec"}) {
    EXPECT_FALSE(ParseShardFileName(bad)) << bad;
  }
}

// Cleanup deletes by these answers, so a file of another dataset must never
// be taken for one of "train", however the names are chosen.
TEST(FileNamesTest, ClassifiesOnlyTheFilesOfTheGivenDataset) {
  struct Case {
    const char* file;
    FileRole role;
    uint64_t generation;
  };
  for (const Case& c : std::vector<Case>{
           {"train.uset", FileRole::kManifest, 0},
           {".train.lock", FileRole::kLock, 0},
           {"train-00000-of-00002.urec", FileRole::kShard, 0},
           {"train-00001-of-00002.g000004.uidx", FileRole::kShard, 4},
           {"train.rejects.tsv", FileRole::kReport, 0},
           {"train.rejects.g000004.tsv", FileRole::kReport, 4},
           {".train.tmp-123-00001.urec.partial", FileRole::kTemporary, 0},
           {".train.tmp-123-uset.partial", FileRole::kTemporary, 0},
           {".train-3.4567.urec.partial", FileRole::kTemporary, 0},  // an older writer's
           {"train.rejects.tsv.partial", FileRole::kTemporary, 0},   // an older converter's
           // Other datasets' files, with names made to look alike:
           {"train-1-00000-of-00001.urec", FileRole::kOther, 0},
           {"train.g000004-00000-of-00001.urec", FileRole::kOther, 0},
           {"train.x.uset", FileRole::kOther, 0},
           {".train-1.lock", FileRole::kOther, 0},
           {"train.rejects.rejects.tsv", FileRole::kOther, 0},
           {"train.notes.tsv", FileRole::kOther, 0},  // a user's own file
           {".train.x.tmp-123-uset.partial", FileRole::kOther, 0},
           {".train-1-3.4567.urec.partial", FileRole::kOther, 0},
           {".train.tmp-123-00001.urec.partial.x", FileRole::kOther, 0},
           {"train-00000-of-00001.urec.bak", FileRole::kOther, 0},
       }) {
    const FileOfDataset of = ClassifyFile(c.file, "train");
    EXPECT_EQ(of.role, c.role) << c.file;
    EXPECT_EQ(of.generation, c.generation) << c.file;
  }
  // And the other way round: those look-alikes belong to their own datasets.
  EXPECT_EQ(ClassifyFile("train-1-00000-of-00001.urec", "train-1").role, FileRole::kShard);
  EXPECT_EQ(ClassifyFile(".train.x.tmp-123-uset.partial", "train.x").role, FileRole::kTemporary);
  EXPECT_EQ(ClassifyFile(".train-1-3.4567.urec.partial", "train-1").role, FileRole::kTemporary);
}

}  // namespace
}  // namespace unirecord::format

namespace unirecord::format {
namespace {

// A staged write's files are temporaries of their dataset: the next writer
// under the lock removes what a killed run left (staged_write.h, StagedWrite).
TEST(FileNamesTest, StagedPartsAreTemporariesOfTheirDatasetOnly) {
  const std::string token = "123456789012345678";
  const std::vector<std::string> staged = {
      StagedShardFileName("train", token, 3, 1), StagedIndexFileName("train", token, 3, 1),
      StagedPartFileName("train", token, 3), PartAttemptShardFileName("train", token, 3, "0f1e2d3c4b5a6978", 1),
      PartAttemptIndexFileName("train", token, 3, "0f1e2d3c4b5a6978", 1),
      PartAttemptPartFileName("train", token, 3, "0f1e2d3c4b5a6978")};
  EXPECT_EQ(staged[0], ".train.tmp-123456789012345678-p00003.00001.urec.partial");
  EXPECT_EQ(staged[3], ".train.tmp-123456789012345678-p00003.a0f1e2d3c4b5a6978.00001.urec.partial");
  for (const std::string& file : staged) {
    EXPECT_EQ(ClassifyFile(file, "train").role, FileRole::kTemporary) << file;
    EXPECT_EQ(ClassifyFile(file, "train-1").role, FileRole::kOther) << file;
  }
  EXPECT_TRUE(IsStagingToken(token));
  EXPECT_FALSE(IsStagingToken(""));
  EXPECT_FALSE(IsStagingToken("12a"));
  EXPECT_FALSE(IsStagingToken(std::string(21, '1')));
}

using Names = std::vector<std::string>;

TEST(FolderDatasetsTest, OneManifestIsOneDatasetWhateverElseIsThere) {
  const FolderDatasets found = FindFolderDatasets(
      {"train-00000-of-00002.g000003.urec", "train-00000-of-00002.g000003.uidx", "train.uset", "train.utag",
       "train.g000002.uver", "train-00000-of-00002.g000002.urec", ".train.lock", "train.rejects.g000003.tsv",
       "train-00000-of-00001.urec", "sub"});
  EXPECT_EQ(found.committed, Names{"train"});
  EXPECT_TRUE(found.loose.empty());  // generation 0 shards of a name with a manifest are superseded
  EXPECT_TRUE(found.unfinished);
  EXPECT_TRUE(CheckOneDataset("d", found, true).ok());
}

TEST(FolderDatasetsTest, TwoManifestsAreRefusedNamingBoth) {
  const FolderDatasets found = FindFolderDatasets({"val.uset", "a-00000-of-00001.g000001.urec", "big.uset", "a.uset"});
  EXPECT_EQ(found.committed, (Names{"a", "big", "val"}));
  const Status local = CheckOneDataset("/data/d", found, true);
  EXPECT_EQ(local.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(local.message(), "/data/d: holds more than one dataset (a, big, val); open one as DIR/NAME, or its "
                             "shards with a glob like DIR/NAME-*.urec");
  EXPECT_EQ(CheckOneDataset("s3://b/d/", found, false).message(),
            "s3://b/d/: holds more than one dataset (a, big, val); open one as DIR/NAME");
}

TEST(FolderDatasetsTest, ManifestBesideLooseShardsIsTwoDatasets) {
  const FolderDatasets found =
      FindFolderDatasets({"old-00001-of-00002.urec", "train.uset", "old-00000-of-00002.urec", ".old-x.urec"});
  EXPECT_EQ(found.loose, (Names{"old-00000-of-00002.urec", "old-00001-of-00002.urec"}));
  EXPECT_EQ(CheckOneDataset("d", found, false).message(),
            "d: holds more than one dataset (train, and .urec files without a manifest such as "
            "old-00000-of-00002.urec); open one as DIR/NAME");
}

TEST(FolderDatasetsTest, LooseShardsAloneAreOneDatasetAndNothingIsNone) {
  const FolderDatasets loose = FindFolderDatasets({"x-00000-of-00001.urec", "x-00000-of-00001.uidx", "notes.txt"});
  EXPECT_TRUE(loose.committed.empty());
  EXPECT_EQ(loose.loose, Names{"x-00000-of-00001.urec"});
  EXPECT_TRUE(CheckOneDataset("d", loose, true).ok());
  const FolderDatasets none = FindFolderDatasets({"y-00000-of-00001.g000001.urec", "notes.txt"});
  EXPECT_TRUE(none.committed.empty() && none.loose.empty() && none.unfinished);
  EXPECT_TRUE(CheckOneDataset("d", none, true).ok());
}

}  // namespace
}  // namespace unirecord::format
