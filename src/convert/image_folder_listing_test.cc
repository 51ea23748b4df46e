#include "convert/image_folder_listing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/files_testing.h"

namespace unirecord {
namespace {

std::vector<std::string> Paths(const ImageFolderListing& listing, bool candidates) {
  std::vector<std::string> out;
  for (const ImageFolderFile& f : listing.files) {
    if (f.is_candidate == candidates) out.push_back(f.path);
  }
  return out;
}

TEST(HasImageExtension, TorchvisionExtensionsAnyCase) {
  for (const char* name : {"a.jpg", "a.JPEG", "b.Png", "c.ppm", "d.bmp", "e.pgm", "f.tif", "g.TIFF", "h.webp", ".jpg"}) {
    EXPECT_TRUE(HasImageExtension(name)) << name;
  }
  for (const char* name : {"README.txt", "a.jpg.txt", "jpg", "a.gif", "a.jpe", "a.heic", ""}) {
    EXPECT_FALSE(HasImageExtension(name)) << name;
  }
}

TEST(ListImageFolder, ClassesAreSortedSubfolderNamesInByteOrder) {
  testing::ScratchDir dir;
  for (const char* cls : {"b", "a-b", "a", "B", ".hidden"}) dir.Write(std::string(cls) + "/x.jpg", "x");
  dir.Write("loose.jpg", "x");
  auto listing = ListImageFolder(dir.path());
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  // As sorted(entry.name for entry in os.scandir(root) if entry.is_dir()).
  EXPECT_EQ(listing->classes, (std::vector<std::string>{".hidden", "B", "a", "a-b", "b"}));
  EXPECT_EQ(listing->candidates, 5u);
  ASSERT_EQ(listing->files.size(), 6u);
  EXPECT_EQ(listing->files[0].path, "loose.jpg");  // root files come first, with no class
  EXPECT_EQ(listing->files[0].label, -1);
  EXPECT_FALSE(listing->files[0].is_candidate);
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(listing->files[i].label, static_cast<int64_t>(i - 1));
}

TEST(ListImageFolder, WalksLikeSortedOsWalk) {
  testing::ScratchDir dir;
  for (const char* f : {"a/z.jpg", "a/sub/x.jpg", "a/sub-x/y.jpg", "a/sub/deeper/w.JPG", "a/notes.txt", "a/A.png"}) {
    dir.Write(f, "x");
  }
  auto listing = ListImageFolder(dir.path());
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  // Folders in byte order of their path strings ("a" < "a/sub" < "a/sub-x" <
  // "a/sub/deeper", '-' sorting before '/'), files by name within a folder:
  // what torchvision's make_dataset gives for this tree.
  EXPECT_EQ(Paths(*listing, true),
            (std::vector<std::string>{"a/A.png", "a/z.jpg", "a/sub/x.jpg", "a/sub-x/y.jpg", "a/sub/deeper/w.JPG"}));
  EXPECT_EQ(Paths(*listing, false), (std::vector<std::string>{"a/notes.txt"}));
}

TEST(ListImageFolder, FollowsSymlinksAndStopsLoops) {
  testing::ScratchDir dir;
  dir.Write("data/real/x.jpg", "x");
  ASSERT_EQ(symlink("real", (dir / "data/linked").c_str()), 0);
  auto listing = ListImageFolder(dir / "data");
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  EXPECT_EQ(listing->classes, (std::vector<std::string>{"linked", "real"}));
  EXPECT_EQ(Paths(*listing, true), (std::vector<std::string>{"linked/x.jpg", "real/x.jpg"}));

  ASSERT_EQ(symlink("..", (dir / "data/real/up").c_str()), 0);
  auto looped = ListImageFolder(dir / "data");
  ASSERT_FALSE(looped.ok());
  EXPECT_EQ(looped.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(looped.status().message().find("symlink loop"), std::string::npos) << looped.status().message();
}

TEST(ListImageFolder, BadRoots) {
  testing::ScratchDir dir;
  auto missing = ListImageFolder(dir / "nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  dir.Write("file", "x");
  EXPECT_EQ(ListImageFolder(dir / "file").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace unirecord
