#include "io/file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "util/files_testing.h"

namespace unirecord::io {
namespace {

TEST(WritableFileTest, AppendPadPatchThenMap) {
  std::string path = JoinPath(testing::MakeTempDir(), "f.bin");
  auto file = WritableFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE(file->Append("abc").ok());
  ASSERT_TRUE(file->PadTo(8).ok());
  EXPECT_EQ(file->offset(), 8u);
  std::string big(3 << 20, 'x');  // larger than the write buffer
  ASSERT_TRUE(file->Append(big).ok());
  ASSERT_TRUE(file->WriteAt(1, "Z", 1).ok());
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Close().ok());

  auto mapped = MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_EQ(mapped->size(), 8u + big.size());
  EXPECT_EQ(std::memcmp(mapped->data(), "aZc\0\0\0\0\0", 8), 0);
  EXPECT_EQ(mapped->data()[mapped->size() - 1], 'x');
}

TEST(MappedFileTest, MissingFileIsNotFoundAndNamesIt) {
  auto mapped = MappedFile::Open("/nonexistent/dir/x.urec");
  ASSERT_FALSE(mapped.ok());
  EXPECT_EQ(mapped.status().code(), StatusCode::kNotFound);
  EXPECT_NE(mapped.status().message().find("/nonexistent/dir/x.urec"), std::string::npos);
}

TEST(MappedFileTest, EmptyFileMapsToNothing) {
  std::string path = JoinPath(testing::MakeTempDir(), "empty");
  ASSERT_TRUE(WritableFile::Create(path)->Close().ok());
  auto mapped = MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(mapped->size(), 0u);
}

TEST(MappedFileTest, TruncationInPlaceIsSeenAndReplacementIsNot) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = JoinPath(dir, "f.bin");
  testing::WriteBytes(path, std::string(8192, 'x'));
  auto mapped = MappedFile::Open(path);
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE(mapped->CheckNotTruncated().ok());
  testing::WriteBytes(JoinPath(dir, "new"), "short");
  ASSERT_TRUE(RenameFile(JoinPath(dir, "new"), path).ok());  // another inode: this mapping is intact
  EXPECT_TRUE(mapped->CheckNotTruncated().ok());
  testing::WriteBytes(JoinPath(dir, "g.bin"), std::string(8192, 'y'));
  auto other = MappedFile::Open(JoinPath(dir, "g.bin"));
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(::truncate(JoinPath(dir, "g.bin").c_str(), 100), 0);
  const Status truncated = other->CheckNotTruncated();
  EXPECT_EQ(truncated.code(), StatusCode::kCorruption);
  EXPECT_NE(truncated.message().find("truncated in place from 8192 to 100 bytes"), std::string::npos)
      << truncated.message();
}

// In a scope, a file found intact is not stat'ed again until the scope ends;
// a truncated one fails every check.
TEST(MappedFileTest, TruncationCheckScopeChecksEachFileOnce) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = JoinPath(dir, "a.bin"), b = JoinPath(dir, "b.bin");
  testing::WriteBytes(a, std::string(8192, 'a'));
  testing::WriteBytes(b, std::string(8192, 'b'));
  auto mapped_a = MappedFile::Open(a);
  auto mapped_b = MappedFile::Open(b);
  ASSERT_TRUE(mapped_a.ok() && mapped_b.ok());
  ASSERT_EQ(::truncate(b.c_str(), 10), 0);
  {
    TruncationCheckScope scope;
    EXPECT_TRUE(mapped_a->CheckNotTruncated().ok());
    EXPECT_EQ(mapped_b->CheckNotTruncated().code(), StatusCode::kCorruption);
    EXPECT_EQ(mapped_b->CheckNotTruncated().code(), StatusCode::kCorruption);  // not remembered
    ASSERT_EQ(::truncate(a.c_str(), 10), 0);
    {
      TruncationCheckScope inner;  // nested: the outer scope's answers stand
      EXPECT_TRUE(mapped_a->CheckNotTruncated().ok());
    }
    EXPECT_TRUE(mapped_a->CheckNotTruncated().ok());  // checked once in this scope
  }
  EXPECT_EQ(mapped_a->CheckNotTruncated().code(), StatusCode::kCorruption);  // a new check
  TruncationCheckScope next;
  EXPECT_EQ(mapped_a->CheckNotTruncated().code(), StatusCode::kCorruption);
}

TEST(ReadFileTest, ReadsRegularFilesWithinTheLimit) {
  const std::string path = JoinPath(testing::MakeTempDir(), "f.bin");
  testing::WriteBytes(path, "0123456789");
  std::string bytes = "stale contents";
  ASSERT_TRUE(ReadFile(path, 10, &bytes).ok());
  EXPECT_EQ(bytes, "0123456789");
  const Status over = ReadFile(path, 9, &bytes);
  EXPECT_EQ(over.code(), StatusCode::kNotSupported);
  EXPECT_EQ(over.message(), path + ": a 10-byte file is over the 9-byte limit");
}

TEST(ReadFileTest, RefusesWhatIsNotARegularFileWithoutReadingIt) {
  const std::string dir = testing::MakeTempDir();
  const std::string fifo = JoinPath(dir, "fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string bytes;
  struct Case {
    std::string path, kind;
  };
  for (const Case& c : {Case{dir, "a directory"}, Case{fifo, "a FIFO"},  // a FIFO must not block
                        Case{"/dev/zero", "a character device"}}) {
    const Status status = ReadFile(c.path, uint64_t{1} << 30, &bytes);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.path;
    EXPECT_EQ(status.message(), c.path + ": not a regular file (" + c.kind + ")");
  }
  const Status missing = ReadFile(JoinPath(dir, "missing"), 100, &bytes);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(JoinPath(dir, "missing")), std::string::npos);
}

TEST(PathTest, Components) {
  EXPECT_EQ(BaseName("a/b.urec"), "b.urec");
  EXPECT_EQ(BaseName("b.urec"), "b.urec");
  EXPECT_EQ(DirName("a/b.urec"), "a");
  EXPECT_EQ(DirName("b.urec"), ".");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
}

TEST(DirectoryTest, ListAndGlob) {
  std::string dir = testing::MakeTempDir();
  for (const char* name : {"b.urec", "a.urec", "c.uidx"}) {
    ASSERT_TRUE(WritableFile::Create(JoinPath(dir, name))->Close().ok());
  }
  auto names = ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"a.urec", "b.urec", "c.uidx"}));
  auto matches = Glob(JoinPath(dir, "*.urec"));
  ASSERT_TRUE(matches.ok());
  EXPECT_EQ(matches->size(), 2u);
  EXPECT_TRUE(Glob(JoinPath(dir, "*.none"))->empty());
}

TEST(DirectoryTest, CreateMakesMissingParentsAndNamesWhatBlocksIt) {
  const std::string dir = testing::MakeTempDir();
  const std::string deep = JoinPath(dir, "a/b/c/");
  ASSERT_TRUE(CreateDirectory(deep).ok());
  EXPECT_TRUE(IsDirectory(JoinPath(dir, "a/b/c")));
  EXPECT_TRUE(CreateDirectory(deep).ok());  // existing: nothing to do

  ASSERT_TRUE(WritableFile::Create(JoinPath(dir, "file"))->Close().ok());
  const Status blocked = CreateDirectory(JoinPath(dir, "file/x/y"));
  EXPECT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.message(), JoinPath(dir, "file/x/y") + ": " + JoinPath(dir, "file") + ": mkdir: Not a directory");
}

}  // namespace
}  // namespace unirecord::io
