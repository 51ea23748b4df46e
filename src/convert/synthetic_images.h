// Deterministic, ImageNet-like image folders for demos, tests and benchmarks
// (in the internal unirecord_testing library, not in the installed one).
//
// The same options always give byte-identical files on every platform: all
// randomness comes from a portable generator seeded by (seed, class, index),
// never from std:: distributions whose output is implementation-defined.
#ifndef UNIRECORD_SRC_CONVERT_SYNTHETIC_IMAGES_H_
#define UNIRECORD_SRC_CONVERT_SYNTHETIC_IMAGES_H_

#include <cstdint>
#include <string>

#include "unirecord/status.h"

namespace unirecord {

struct SyntheticFolderOptions {
  int classes = 10;
  int per_class = 20;
  uint64_t seed = 0;
  // Typical size; each image varies around it, some are portrait.
  int width = 500;
  int height = 375;
  // Also write the awkward files real folders hold: a CMYK JPEG, a PNG
  // named .JPEG, a truncated JPEG, an empty .JPEG and a README.txt.
  bool mix = false;
  int threads = 0;  // 0: every core this process may run on
};

struct SyntheticFolderReport {
  int64_t jpegs = 0;   // decodable JPEGs written (the CMYK one included)
  int64_t pngs = 0;    // --mix: the PNG named .JPEG (decodable)
  int64_t extras = 0;  // --mix files that are not decodable images
  int64_t bytes = 0;   // total size of everything written
};

// Creates `out` (which must not exist or be empty) holding one sub-folder per
// class, named like ImageNet synsets, with per_class JPEGs each.
Result<SyntheticFolderReport> WriteSyntheticImageFolder(const std::string& out,
                                                        const SyntheticFolderOptions& options);

// One synthetic photo-like JPEG (as written by WriteSyntheticImageFolder).
struct SyntheticJpegSpec {
  int width = 500;
  int height = 375;
  int quality = 90;
  enum class Sampling { k420, k422, k444, kGray } sampling = Sampling::k420;
  bool progressive = false;
  bool cmyk = false;  // encoded from CMYK pixels (an Adobe YCCK JPEG); decodes
                      // to the same picture as the RGB one. Not with kGray.
  uint64_t seed = 0;  // picks the picture
};
Result<std::string> EncodeSyntheticJpeg(const SyntheticJpegSpec& spec);

// A small valid 8-bit RGB PNG file (a gradient), written with libpng.
std::string EncodeSyntheticPng(int width, int height);

}  // namespace unirecord

#endif  // UNIRECORD_SRC_CONVERT_SYNTHETIC_IMAGES_H_
