// Format 1.2's growing datasets (format/SPEC.md sections 1.2 and 1.3):
// manifests of segments, kept versions, tags and their collection; every
// corruption of a manifest 2 refused (tags files: tags_test.cc).
#include "unirecord/versions.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "dataset/dataset_testing.h"
#include "format/dataset_uuid.h"
#include "format/file_names.h"
#include "format/manifest.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

// Appends SampleRecord(k) for k in [begin, end) to dataset `name` of `dir`
// (WriteSample's classes, or `classes`).
Result<WriterSummary> AppendSample(const std::string& dir, const std::string& name, uint64_t begin, uint64_t end,
                                   const std::string& classes = "a\nb\nc\nd\ne") {
  WriterOptions options = testing::SmallPages(0);
  options.append = true;
  options.sync = false;
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, name, testing::SampleSchema(), options));
  UREC_RETURN_IF_ERROR(writer->SetMetadata("classes", classes));
  UREC_RETURN_IF_ERROR(writer->SetMetadata("source", name));
  RecordBuilder record(writer->schema());
  for (uint64_t k = begin; k < end; ++k) {
    const testing::SampleValues v = testing::SampleRecord(k);
    UREC_RETURN_IF_ERROR(testing::FillSample(record, v));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return writer->summary();
}

Result<std::shared_ptr<Dataset>> OpenVersion(const std::string& path, uint64_t version, const std::string& tag = "") {
  DatasetOptions options;
  options.version = version;
  options.tag = tag;
  return Dataset::Open(path, options);
}

// Every record's image and big value: what must not change in a version.
std::vector<std::string> Content(const Dataset& dataset) {
  std::vector<std::string> content;
  for (uint64_t id = 0; id < dataset.size(); ++id) {
    auto record = dataset.Get(id);
    EXPECT_TRUE(record.ok()) << record.status().ToString();
    if (!record.ok()) break;
    content.push_back(std::string(*record->GetBytes("image")) + "|" + std::to_string(*record->GetInt64("big")));
  }
  return content;
}

std::vector<std::string> SampleContent(uint64_t begin, uint64_t end) {
  std::vector<std::string> content;
  for (uint64_t k = begin; k < end; ++k) {
    const testing::SampleValues v = testing::SampleRecord(k);
    content.push_back(v.image + "|" + std::to_string(v.big));
  }
  return content;
}

using testing::Signed;

const std::string kUuidA = "25661647-a09f-8738-832b-a9cd1a5612e2";
const std::string kUuidB = "92bb11e6-5989-8bd0-a0c6-6b0b514a456f";

TEST(ManifestTest, OneSegmentOfItsOwnGenerationIsManifest1AndMoreAreManifest2) {
  format::Manifest one = format::Manifest::OneSegment(4, 2, kUuidA);
  EXPECT_EQ(format::EncodeManifest(one).rfind("unirecord-manifest 1\n", 0), 0u);
  format::Manifest two = one;
  two.segments = {format::Segment{2, 1, 0, kUuidA, {}, {}}, format::Segment{4, 3, 10, kUuidB, {}, {}}};
  two.shard_count = 4;
  const std::string text = format::EncodeManifest(two);
  EXPECT_EQ(text, Signed("unirecord-manifest 2\ngeneration 4\nshards 4\nuuid " + kUuidA + "\nsegment 2 1 0 " + kUuidA +
                         "\nsegment 4 3 10 " + kUuidB + "\n"));
  auto decoded = format::DecodeManifest(text, "m.uset");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->segments, two.segments);
  // Manifest 1 implies one segment.
  auto implied = format::DecodeManifest(format::EncodeManifest(one), "m.uset");
  ASSERT_TRUE(implied.ok());
  EXPECT_EQ(implied->segments, (std::vector<format::Segment>{{4, 2, 0, kUuidA}}));
  // A segment line in a manifest 1 is a key a reader of version 1 ignores.
  const std::string head = "unirecord-manifest 1\ngeneration 4\nshards 2\nuuid " + kUuidA + "\n";
  auto ignored = format::DecodeManifest(Signed(head + "segment 2 1 0 " + kUuidA + "\n"), "m.uset");
  ASSERT_TRUE(ignored.ok());
  EXPECT_EQ(ignored->segments.size(), 1u);
}

// One case per way a manifest 2 can be wrong.
TEST(ManifestTest, EveryDamagedManifest2IsRefusedNamingTheProblem) {
  const std::string head = "unirecord-manifest 2\ngeneration 4\nshards 4\nuuid " + kUuidA + "\n";
  const std::string a = "segment 2 1 0 " + kUuidA + "\n";
  const std::string b = "segment 4 3 10 " + kUuidB + "\n";
  ASSERT_TRUE(format::DecodeManifest(Signed(head + a + b), "m.uset").ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Signed(head), "lists no segment"},
      {Signed(head + a + "segment 4 2 10 " + kUuidB + "\n"), "segments hold 3 shards, 'shards' says 4"},
      {Signed(head + "segment 2 1 5 " + kUuidA + "\n" + b), "segment 0 starts at id 5"},
      {Signed(head + a + "segment 4 3 0 " + kUuidB + "\n" + "segment 3 0 0 " + kUuidB + "\n"), "bad segment"},
      {Signed(head + "segment 5 1 0 " + kUuidA + "\n" + b), "segment 0 has generation 5, after the manifest's"},
      {Signed(head + "segment 4 1 0 " + kUuidA + "\n" + b), "segment 1 repeats generation 4"},
      {Signed(head + a + "segment 4 3 10 not-a-uuid\n"), "bad segment"},
      {Signed(head + a + "segment 4 3 010 " + kUuidB + "\n"), "bad segment"},
      {Signed(head + a + "segment 4 3 10 " + kUuidB + " extra\n"), "bad segment"},
      {Signed("unirecord-manifest 3\ngeneration 4\n"), "does not start with"},
      {(head + a + b + "checksum 0000000000000000\n"), "checksum mismatch"},
  };
  for (const auto& [text, problem] : cases) {
    SCOPED_TRACE(text);
    auto refused = format::DecodeManifest(text, "m.uset");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
    EXPECT_NE(refused.status().message().find("m.uset: manifest"), std::string::npos) << refused.status().message();
    EXPECT_NE(refused.status().message().find(problem), std::string::npos) << refused.status().message();
  }
}

// The uuid of a manifest is read as its text form (format/SPEC.md section
// 9): any other 36 bytes, such as a byte that is not UTF-8, are refused,
// shown escaped, never passed on to a JSON printer or Python string.
TEST(ManifestTest, AUuidOfAnotherFormIsRefusedNamingTheFile) {
  std::string non_utf8 = kUuidA;
  non_utf8[3] = '\xff';
  std::string upper = kUuidA;
  upper[0] = 'A';
  std::string no_dashes = kUuidA;
  no_dashes[8] = '0';
  for (const std::string& uuid : {non_utf8, upper, no_dashes, kUuidA.substr(0, 35) + " "}) {
    SCOPED_TRACE(uuid);
    auto refused = format::DecodeManifest(
        Signed("unirecord-manifest 1\ngeneration 4\nshards 2\nuuid " + uuid + "\n"), "t.g000004.uver");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
    EXPECT_NE(refused.status().message().find("t.g000004.uver: manifest bad uuid"), std::string::npos)
        << refused.status().message();
  }
  auto shown = format::DecodeManifest(
      Signed("unirecord-manifest 1\ngeneration 4\nshards 2\nuuid " + non_utf8 + "\n"), "t.uset");
  EXPECT_NE(shown.status().message().find("uuid '256\\xFF1647-"), std::string::npos) << shown.status().message();
  EXPECT_EQ(shown.status().message().find('\xff'), std::string::npos);
}

TEST(VersionsTest, AKeptManifestWithAMalformedUuidIsNamedNotListed) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 5, testing::SmallPages(1)).ok());
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 6, testing::SmallPages(1)).ok());
  auto kept = format::ReadVersionManifest(dir.path(), "train", 1);
  ASSERT_TRUE(kept.ok());
  std::string uuid = kept->uuid;
  uuid[0] = '\xc3';  // a valid checksum over a byte that is not UTF-8 on its own
  testing::WriteBytes(dir / "train.g000001.uver",
                      Signed("unirecord-manifest 1\ngeneration 1\nshards 1\nuuid " + uuid + "\n"));
  auto listed = ListVersions(dir.path());
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), StatusCode::kCorruption);
  EXPECT_NE(listed.status().message().find("train.g000001.uver: manifest bad uuid '\\xC3"), std::string::npos)
      << listed.status().message();
  EXPECT_EQ(OpenVersion(dir.path(), 1).status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(OpenVersion(dir.path(), 2).ok());
}

TEST(VersionsTest, EveryCommitIsKeptAndOpensByVersionOrTag) {
  testing::ScratchDir dir;
  WriterOptions contiguous = testing::SmallPages(2);
  contiguous.expected_records = 20;  // ids in k order
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 20, contiguous).ok());
  ASSERT_TRUE(AppendSample(dir.path(), "train", 20, 30).ok());
  ASSERT_TRUE(AppendSample(dir.path(), "train", 30, 35).ok());
  auto listed = ListVersions(dir / "train");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  const std::vector<VersionInfo>& versions = listed->versions;
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_EQ(versions[0].generation, 1u);
  EXPECT_EQ(versions[2].segments, 3u);
  EXPECT_TRUE(versions[2].latest);
  EXPECT_TRUE(listed->tag_problems.empty());
  for (uint64_t g : {1, 2, 3}) {
    auto opened = OpenVersion(dir.path(), g);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_EQ((*opened)->version(), g);
    EXPECT_TRUE(Content(**opened) == SampleContent(0, g == 1 ? 20 : g == 2 ? 30 : 35)) << "version " << g;
    EXPECT_EQ((*opened)->uuid(), versions[g - 1].uuid);
    EXPECT_TRUE((*opened)->Verify().ok());
  }
  ASSERT_TRUE(TagVersion(dir.path(), "baseline", 1).ok());
  auto tagged = OpenVersion(dir.path(), 0, "baseline");
  ASSERT_TRUE(tagged.ok()) << tagged.status().ToString();
  EXPECT_EQ((*tagged)->size(), 20u);
  EXPECT_TRUE(OpenVersion(dir.path(), 1, "baseline").ok());

  // Errors name the dataset and the problem.
  auto missing = OpenVersion(dir.path(), 7);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("version 7 is not kept"), std::string::npos) << missing.status().message();
  auto no_tag = OpenVersion(dir.path(), 0, "nope");
  EXPECT_EQ(no_tag.status().code(), StatusCode::kNotFound);
  EXPECT_NE(no_tag.status().message().find("no tag 'nope' (tags: baseline)"), std::string::npos)
      << no_tag.status().message();
  EXPECT_EQ(OpenVersion(dir.path(), 2, "baseline").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenVersion(dir / "train-*.urec", 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TagVersion(dir.path(), "x", 9).code(), StatusCode::kNotFound);
  EXPECT_EQ(TagVersion(dir.path(), "9x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(UntagVersion(dir.path(), "nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(ListVersions(dir / "absent").status().code(), StatusCode::kNotFound);
}

TEST(VersionsTest, AReaderKeepsItsVersionWhileNewerOnesCommitAndOldOnesAreCollected) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 20, testing::SmallPages(2)).ok());
  auto reader = Dataset::Open(dir.path());
  ASSERT_TRUE(reader.ok());
  const std::vector<std::string> before = Content(**reader);
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 7, testing::SmallPages(1)).ok());  // replaced
  ASSERT_TRUE(AppendSample(dir.path(), "train", 7, 9).ok());
  GcOptions gc;
  gc.keep_last = 1;
  auto collected = CollectGarbage(dir.path(), gc);
  ASSERT_TRUE(collected.ok()) << collected.status().ToString();
  // Version 2's segment is version 3's first: its files stay, its kept
  // manifest goes.
  EXPECT_EQ(collected->removed, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(collected->kept, (std::vector<uint64_t>{3}));
  EXPECT_TRUE(fs::exists(dir / "train-00000-of-00001.g000002.urec"));
  EXPECT_FALSE(fs::exists(dir / "train-00000-of-00002.g000001.urec"));
  EXPECT_GT(collected->bytes_freed, 0u);
  EXPECT_TRUE(Content(**reader) == before);  // unlinked, still mapped
  EXPECT_TRUE((*reader)->Verify().ok());
  EXPECT_EQ(OpenVersion(dir.path(), 1).status().code(), StatusCode::kNotFound);
}

TEST(VersionsTest, CollectionKeepsTheLatestTheTaggedAndWhatTheRulesSay) {
  testing::ScratchDir dir;
  for (uint64_t n : {5, 6, 7, 8, 9}) ASSERT_TRUE(testing::WriteSample(dir.path(), "train", n, testing::SmallPages(1)).ok());
  ASSERT_TRUE(TagVersion(dir.path(), "first", 1).ok());
  GcOptions none;
  const Status no_rule = CollectGarbage(dir.path(), none).status();
  EXPECT_EQ(no_rule.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_rule.message().find("GcOptions::keep_last >= 1, or keep_newer_than_s >= 0"), std::string::npos)
      << no_rule.message();
  GcOptions dry;
  dry.keep_last = 2;
  dry.dry_run = true;
  auto would = CollectGarbage(dir.path(), dry);
  ASSERT_TRUE(would.ok());
  EXPECT_EQ(would->removed, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(would->kept, (std::vector<uint64_t>{1, 4, 5}));
  EXPECT_EQ(ListVersions(dir.path())->versions.size(), 5u);  // nothing removed
  GcOptions recent;
  recent.keep_newer_than_s = 3600;  // every version is seconds old
  auto young = CollectGarbage(dir.path(), recent);
  ASSERT_TRUE(young.ok());
  EXPECT_TRUE(young->removed.empty());
  GcOptions old;
  old.keep_newer_than_s = 0;
  auto aged = CollectGarbage(dir.path(), old);
  ASSERT_TRUE(aged.ok());
  EXPECT_EQ(aged->removed, (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(aged->files_removed, 9u);  // each: shard, index, kept manifest
  auto left = ListVersions(dir.path());
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->versions.size(), 2u);
  EXPECT_EQ(left->versions[0].tags, (std::vector<std::string>{"first"}));
  auto first = OpenVersion(dir.path(), 0, "first");
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(Content(**first) == SampleContent(0, 5));
  ASSERT_TRUE(UntagVersion(dir.path(), "first").ok());
  GcOptions one;
  one.keep_last = 1;
  ASSERT_TRUE(CollectGarbage(dir.path(), one).ok());
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir.path())) files.insert(entry.path().filename());
  EXPECT_EQ(files, (std::set<std::string>{"train-00000-of-00001.g000005.uidx", "train-00000-of-00001.g000005.urec",
                                          "train.g000005.uver", "train.uset", "train.utag"}));
}

TEST(VersionsTest, ADamagedKeptManifestKeepsEveryFileAndIsNamedWhenOpened) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 5, testing::SmallPages(1)).ok());
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 6, testing::SmallPages(1)).ok());
  testing::WriteBytes(dir / "train.g000001.uver", "unirecord-manifest 1\ngarbage\n");
  auto opened = OpenVersion(dir.path(), 1);
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  EXPECT_NE(opened.status().message().find("train.g000001.uver: manifest checksum mismatch"), std::string::npos)
      << opened.status().message();
  // The next commit cannot tell what version 1 used: it removes none of its files.
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 7, testing::SmallPages(1)).ok());
  EXPECT_TRUE(fs::exists(dir / "train-00000-of-00001.g000001.urec"));
  EXPECT_TRUE(fs::exists(dir / "train-00000-of-00001.g000002.urec"));
  auto latest = Dataset::Open(dir.path());
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->size(), 7u);
}

TEST(VersionsTest, AManifestNamingAnotherSegmentIsCorruption) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 5, testing::SmallPages(1)).ok());
  ASSERT_TRUE(AppendSample(dir.path(), "train", 5, 8).ok());
  auto manifest = format::ReadManifest(dir.path(), "train");
  ASSERT_TRUE(manifest.ok());
  ASSERT_EQ(manifest->segments.size(), 2u);
  format::Manifest wrong = *manifest;
  wrong.segments[1].uuid = kUuidB;
  testing::WriteBytes(dir / "train.uset", format::EncodeManifest(wrong));
  auto refused = Dataset::Open(dir.path());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("train.uset: names segment 1 of dataset " + kUuidB), std::string::npos)
      << refused.status().message();
  wrong = *manifest;
  wrong.segments[1].first_id = 4;
  testing::WriteBytes(dir / "train.uset", format::EncodeManifest(wrong));
  refused = Dataset::Open(dir.path());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("from id 4"), std::string::npos) << refused.status().message();
  wrong = *manifest;
  wrong.uuid = kUuidA;
  testing::WriteBytes(dir / "train.uset", format::EncodeManifest(wrong));
  refused = Dataset::Open(dir.path());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("names dataset " + kUuidA), std::string::npos) << refused.status().message();
  fs::remove(dir / "train-00000-of-00001.g000002.urec");
  testing::WriteBytes(dir / "train.uset", format::EncodeManifest(*manifest));
  refused = Dataset::Open(dir.path());
  EXPECT_EQ(refused.status().code(), StatusCode::kNotFound);
  EXPECT_NE(refused.status().message().find("train-00000-of-00001.g000002.urec: shard missing"), std::string::npos)
      << refused.status().message();
}

TEST(VersionsTest, ALaterSegmentMayOnlyExtendTheClassList) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 5, testing::SmallPages(1)).ok());
  for (const std::string& refused_list : {"a\nb\nc\nd", "b\na\nc\nd\ne\nf", "a\nb\nc\nd\nef"}) {
    auto refused = AppendSample(dir.path(), "train", 5, 8, refused_list);
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused_list;
    EXPECT_NE(refused.status().message().find("metadata 'classes' (values differ or are missing; a class list may only "
                                              "gain names at its end)"),
              std::string::npos)
        << refused.status().message();
  }
  ASSERT_TRUE(AppendSample(dir.path(), "train", 5, 8, "a\nb\nc\nd\ne\nf").ok());
  auto grown = Dataset::Open(dir.path());
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  EXPECT_EQ((*grown)->metadata().at("classes"), "a\nb\nc\nd\ne\nf");  // the last segment's
  EXPECT_EQ((*OpenVersion(dir.path(), 1))->metadata().at("classes"), "a\nb\nc\nd\ne");
  // The same segments in the other order: the class list would shrink.
  auto manifest = format::ReadManifest(dir.path(), "train");
  ASSERT_TRUE(manifest.ok());
  ASSERT_EQ(manifest->segments.size(), 2u);
  format::Manifest swapped = *manifest;
  swapped.segments = {manifest->segments[1], manifest->segments[0]};
  swapped.segments[0].first_id = 0;
  swapped.segments[1].first_id = 3;
  std::vector<format::SegmentDigest> digests;
  for (const format::Segment& segment : swapped.segments) {
    format::SegmentDigest digest;
    ASSERT_TRUE(format::UuidFromString(segment.uuid, &digest.uuid));
    digest.shard_count = segment.shard_count;
    digest.first_id = segment.first_id;
    digests.push_back(digest);
  }
  swapped.uuid = format::UuidToString(format::DeriveSegmentsUuid(digests));
  testing::WriteBytes(dir / "train.uset", format::EncodeManifest(swapped));
  auto refused = Dataset::Open(dir.path());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("train-00000-of-00001.g000001.urec: segment 1 has another metadata 'classes'"),
            std::string::npos)
      << refused.status().message();
}

TEST(VersionsTest, AnAppendOfNothingAddsNoSegmentAndOfAnotherSchemaIsRefused) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 5, testing::SmallPages(1)).ok());
  auto empty = AppendSample(dir.path(), "train", 5, 5);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->records, 5u);
  auto opened = Dataset::Open(dir.path());
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ((*opened)->segments().size(), 1u);
  EXPECT_EQ((*opened)->version(), 2u);
  WriterOptions options;
  options.append = true;
  options.sync = false;
  auto other = Writer::Create(dir.path(), "train", *Schema::Make({Field{"x", FieldType::kInt64}}), options);
  ASSERT_TRUE(other.ok());
  RecordBuilder record((*other)->schema());
  ASSERT_TRUE(record.SetInt64(0, 1).ok());
  ASSERT_TRUE((*other)->Write(record).ok());
  Status refused = (*other)->Finish();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("the new records have another schema"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace unirecord
