// What the fuzz targets share: a temp directory per process, Require.
#ifndef UNIRECORD_FUZZ_FUZZ_DIR_H_
#define UNIRECORD_FUZZ_FUZZ_DIR_H_

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace unirecord::fuzz {

// Aborts (a finding) when `condition` is false.
inline void Require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz: %s\n", what);
    std::abort();
  }
}

// One temp directory per process, removed at exit.
class FuzzDir {
 public:
  FuzzDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "urec_fuzz_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~FuzzDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace unirecord::fuzz

#endif  // UNIRECORD_FUZZ_FUZZ_DIR_H_
