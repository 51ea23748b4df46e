#include "convert/source_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace unirecord::convert_internal {
namespace {

namespace fs = std::filesystem;

std::string Check(const std::string& path) { return CheckSourcePathText(path, "the path", "its folder"); }

TEST(SourcePathText, RelativePathsInsideTheRootAreKept) {
  for (const char* ok : {"a.jpg", "imgs/a.jpg", "./imgs/a.jpg", "imgs/../a.jpg", "a/b/../../c.jpg", "caf\xC3\xA9.jpg"}) {
    EXPECT_EQ(Check(ok), "") << ok;
  }
}

// Before: a manifest's "../secret.jpg" and "imgs/../../secret.jpg" were read
// and stored, and a NUL read one file and recorded another name (issue 36).
TEST(SourcePathText, LeavingTheRootAbsoluteEmptyAndControlCharactersAreRefused) {
  EXPECT_EQ(Check("../secret.jpg"), "the path '../secret.jpg' leaves its folder ('..')");
  EXPECT_EQ(Check("imgs/../../secret.jpg"), "the path 'imgs/../../secret.jpg' leaves its folder ('..')");
  EXPECT_EQ(Check(".."), "the path '..' leaves its folder ('..')");
  EXPECT_EQ(Check("/etc/passwd"), "the path '/etc/passwd' is absolute: it must be relative to its folder");
  EXPECT_EQ(Check(""), "the path is empty");
  EXPECT_EQ(Check(std::string("a.jpg\0.png", 10)),
            "the path 'a.jpg\\x00.png' holds the control character 0x00 at byte 5 (a NUL: the file read would not "
            "be the one named)");
  EXPECT_EQ(Check("a\nb.jpg"), "the path 'a\\x0Ab.jpg' holds the control character 0x0A at byte 1");
  EXPECT_EQ(Check("a\x7F.jpg"), "the path 'a\\x7F.jpg' holds the control character 0x7F at byte 1");
}

class SourceRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("urec_source_path_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root/imgs");
    fs::create_directories(dir_ / "outside");
    std::ofstream(dir_ / "root/imgs/a.jpg") << "a";
    std::ofstream(dir_ / "outside/secret.jpg") << "s";
    fs::create_symlink(dir_ / "outside/secret.jpg", dir_ / "root/imgs/link.jpg");
    fs::create_symlink(dir_ / "outside", dir_ / "root/linked_folder");
    fs::create_symlink("a.jpg", dir_ / "root/imgs/inside_link.jpg");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Before: the check was on the path's text, so links to files and folders
// outside the root were followed silently (issue 36).
TEST_F(SourceRootTest, LinksThatLeaveTheRootAreRefusedUnlessAllowed) {
  const SourceRoot root((dir_ / "root").string(), /*follow_links_outside=*/false);
  const std::string real_root = fs::canonical(dir_ / "root").string();
  EXPECT_EQ(*root.Resolve("imgs/a.jpg"), real_root + "/imgs/a.jpg");
  EXPECT_EQ(*root.Resolve("imgs/inside_link.jpg"), real_root + "/imgs/a.jpg");
  const std::string secret = fs::canonical(dir_ / "outside/secret.jpg").string();
  for (const char* escape : {"imgs/link.jpg", "linked_folder/secret.jpg", "../outside/secret.jpg"}) {
    Result<std::string> r = root.Resolve(escape);
    ASSERT_FALSE(r.ok()) << escape;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "leaves the source folder: resolves to " + secret + ", outside " + real_root +
                                        " (a symbolic link; follow_links_outside / --follow-links-outside allows it)");
  }
  // Missing files are left to the read, which says why.
  EXPECT_EQ(*root.Resolve("imgs/missing.jpg"), (dir_ / "root").string() + "/imgs/missing.jpg");
  const SourceRoot follow((dir_ / "root").string(), /*follow_links_outside=*/true);
  EXPECT_TRUE(follow.Resolve("imgs/link.jpg").ok());
  EXPECT_TRUE(follow.Resolve("linked_folder/secret.jpg").ok());
}

}  // namespace
}  // namespace unirecord::convert_internal
