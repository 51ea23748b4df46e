// The fixed-size preamble and trailer shared by shard and index files
// (format/SPEC.md sections 3 and 4): encoding, and the validation a reader
// runs before trusting anything else in a file.
#ifndef UNIRECORD_FORMAT_FIXED_PARTS_H_
#define UNIRECORD_FORMAT_FIXED_PARTS_H_

#include <cstdint>
#include <string>

#include "format/format_constants.h"
#include "unirecord/status.h"

namespace unirecord::format {

enum class FileKind { kShard, kIndex };

struct PreambleFields {
  uint16_t major = kFormatMajor;
  uint16_t minor = 0;  // writers: the schema's RequiredMinorVersion()
  uint64_t header_offset = kHeaderOffset;
  uint64_t header_length = 0;
  uint64_t header_checksum = 0;
};

struct TrailerFields {
  uint64_t directory_offset = 0;
  uint64_t directory_length = 0;
  uint64_t directory_checksum = 0;
  uint16_t major = kFormatMajor;
  uint16_t minor = 0;  // equal to the preamble's
};

void EncodePreamble(FileKind kind, const PreambleFields& fields, uint8_t out[kPreambleSize]);
void EncodeTrailer(FileKind kind, const TrailerFields& fields, uint8_t out[kTrailerSize]);

// The validated frame of a file: where its header and its directory (the
// footer of a shard, the header of an index) are. Pointers are into `data`.
struct FileFrame {
  uint16_t major = 0;
  uint16_t minor = 0;
  const uint8_t* header = nullptr;
  uint64_t header_offset = 0;
  uint64_t header_length = 0;
  const uint8_t* directory = nullptr;
  uint64_t directory_offset = 0;
  uint64_t directory_length = 0;
  uint64_t directory_checksum = 0;
};

// Checks size, magic, major version, preamble, trailer, header bounds and
// checksum, directory bounds and checksum, in that order (SPEC.md 3, 4).
// `path` is used in messages only. Corruption, or NotSupported for an
// unknown major version.
Result<FileFrame> ReadFrame(FileKind kind, const uint8_t* data, uint64_t size,
                            const std::string& path);

// Corruption unless bytes [begin, end) of `data` are all zero (padding).
Status CheckZeroPadding(const uint8_t* data, uint64_t begin, uint64_t end, const std::string& path);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_FIXED_PARTS_H_
