// Test-only helpers for temporary directories and whole-file I/O, shared by
// every layer's tests. Each directory is a fresh mkdtemp one, so test cases
// that CTest runs in parallel processes never share a path.
#ifndef UNIRECORD_UTIL_FILES_TESTING_H_
#define UNIRECORD_UTIL_FILES_TESTING_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace unirecord::testing {

// tests/data: $UNIRECORD_TEST_DATA_DIR when set (a test program run away
// from its source tree, e.g. from bench/gpu_bundle.sh's bundle), else the
// source tree's, compiled in.
inline std::string TestDataDir() {
  const char* dir = std::getenv("UNIRECORD_TEST_DATA_DIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string(UNIRECORD_TEST_DATA_DIR);
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes `bytes` to `path`, replacing it and creating its parent folders.
inline void WriteBytes(const std::string& path, const std::string& bytes) {
  const std::filesystem::path file(path);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A fresh temporary directory, removed with its content when destroyed.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "urec_test_XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }
  // Writes `bytes` to path()/rel, creating parent folders.
  void Write(const std::string& rel, const std::string& bytes) const { WriteBytes(*this / rel, bytes); }

 private:
  std::string path_;
};

// A fresh temporary directory that lives until the test program exits.
inline std::string MakeTempDir() {
  static std::vector<std::unique_ptr<ScratchDir>> dirs;  // destroyed (removed) at exit
  dirs.push_back(std::make_unique<ScratchDir>());
  return dirs.back()->path();
}

}  // namespace unirecord::testing

#endif  // UNIRECORD_UTIL_FILES_TESTING_H_
