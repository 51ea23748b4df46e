// A temporary folder for the converter's tests, removed with its content.
#ifndef UNIRECORD_SRC_CONVERT_SCRATCH_DIR_FOR_TEST_H_
#define UNIRECORD_SRC_CONVERT_SCRATCH_DIR_FOR_TEST_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace unirecord {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "urec_convert_XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

  // Writes `bytes` to path()/rel, creating parent folders.
  void Write(const std::string& rel, const std::string& bytes) const {
    const std::filesystem::path file = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << bytes;
  }

 private:
  std::string path_;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace unirecord

#endif  // UNIRECORD_SRC_CONVERT_SCRATCH_DIR_FOR_TEST_H_
