#include "format/fixed_parts.h"

#include <cstring>

#include "format/checksum.h"
#include "format/endian.h"

namespace unirecord::format {
namespace {

const char* Magic(FileKind kind) { return kind == FileKind::kShard ? kShardMagic : kIndexMagic; }
const char* TrailerMagic(FileKind kind) {
  return kind == FileKind::kShard ? kShardTrailerMagic : kIndexTrailerMagic;
}
const char* Noun(FileKind kind) { return kind == FileKind::kShard ? "shard" : "index"; }

bool AllZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

}  // namespace

void EncodePreamble(FileKind kind, const PreambleFields& f, uint8_t out[kPreambleSize]) {
  std::memset(out, 0, kPreambleSize);
  std::memcpy(out + kPreambleMagicOffset, Magic(kind), kMagicSize);
  StoreLE<uint16_t>(out + kPreambleMajorOffset, f.major);
  StoreLE<uint16_t>(out + kPreambleMinorOffset, f.minor);
  StoreLE<uint32_t>(out + kPreambleFlagsOffset, 0);
  StoreLE<uint64_t>(out + kPreambleHeaderOffsetOffset, f.header_offset);
  StoreLE<uint64_t>(out + kPreambleHeaderLengthOffset, f.header_length);
  StoreLE<uint64_t>(out + kPreambleHeaderChecksumOffset, f.header_checksum);
  StoreLE<uint64_t>(out + kPreambleChecksumOffset, Checksum(out, kPreambleChecksumOffset));
}

void EncodeTrailer(FileKind kind, const TrailerFields& f, uint8_t out[kTrailerSize]) {
  std::memset(out, 0, kTrailerSize);
  StoreLE<uint64_t>(out + kTrailerDirectoryOffsetOffset, f.directory_offset);
  StoreLE<uint64_t>(out + kTrailerDirectoryLengthOffset, f.directory_length);
  StoreLE<uint64_t>(out + kTrailerDirectoryChecksumOffset, f.directory_checksum);
  StoreLE<uint16_t>(out + kTrailerMajorOffset, f.major);
  StoreLE<uint16_t>(out + kTrailerMinorOffset, f.minor);
  StoreLE<uint32_t>(out + kTrailerFlagsOffset, 0);
  StoreLE<uint64_t>(out + kTrailerChecksumOffset, Checksum(out, kTrailerChecksumOffset));
  std::memcpy(out + kTrailerMagicOffset, TrailerMagic(kind), kMagicSize);
}

Status CheckZeroPadding(const uint8_t* data, uint64_t begin, uint64_t end, const std::string& path) {
  for (uint64_t i = begin; i < end; ++i) {
    if (data[i] != 0) return Status::Corruption(path + ": nonzero padding byte at offset " + std::to_string(i));
  }
  return Status::OK();
}

Result<FileFrame> ReadFrame(FileKind kind, const uint8_t* data, uint64_t size,
                            const std::string& path) {
  const std::string noun = Noun(kind);
  auto corrupt = [&](const std::string& what) { return Status::Corruption(path + ": " + what); };

  if (size < kPreambleSize + kTrailerSize) {
    return corrupt("file is " + std::to_string(size) + " bytes, too short for " +
                   (kind == FileKind::kShard ? "a " : "an ") + noun +
                   " (truncated or incomplete " + noun + ")");
  }
  if (std::memcmp(data, Magic(kind), kMagicSize) != 0) {
    const char* other = kind == FileKind::kShard ? kIndexMagic : kShardMagic;
    if (std::memcmp(data, other, kMagicSize) == 0) {
      return corrupt(std::string("is a unirecord ") + (kind == FileKind::kShard ? "index" : "shard") +
                     " file, not a " + noun);
    }
    if (AllZero(data, kPreambleSize)) {
      return corrupt("preamble is zero: incomplete " + noun + " (the writer did not finish)");
    }
    return corrupt("bad magic: not a unirecord " + noun + " file");
  }
  FileFrame frame;
  frame.major = LoadLE<uint16_t>(data + kPreambleMajorOffset);
  frame.minor = LoadLE<uint16_t>(data + kPreambleMinorOffset);
  if (frame.major != kFormatMajor) {
    return Status::NotSupported(path + ": format version " + std::to_string(frame.major) + "." +
                                std::to_string(frame.minor) + " is not supported (this reader reads " +
                                std::to_string(kFormatMajor) + ".x)");
  }
  if (LoadLE<uint64_t>(data + kPreambleChecksumOffset) != Checksum(data, kPreambleChecksumOffset)) {
    return corrupt("preamble checksum mismatch");
  }
  if (LoadLE<uint32_t>(data + kPreambleFlagsOffset) != 0) return corrupt("unknown preamble flags");

  const uint8_t* trailer = data + size - kTrailerSize;
  if (std::memcmp(trailer + kTrailerMagicOffset, TrailerMagic(kind), kMagicSize) != 0) {
    // An intact trailer whose magic alone differs was damaged in place; the
    // last bytes of a file cut short are not a trailer at all.
    if (LoadLE<uint64_t>(trailer + kTrailerChecksumOffset) == Checksum(trailer, kTrailerChecksumOffset)) {
      return corrupt("bad trailer magic (the trailer is otherwise intact: a damaged " + noun + ", not a cut one)");
    }
    return corrupt("no valid trailer: truncated or incomplete " + noun);
  }
  if (LoadLE<uint64_t>(trailer + kTrailerChecksumOffset) != Checksum(trailer, kTrailerChecksumOffset)) {
    return corrupt("trailer checksum mismatch");
  }
  if (LoadLE<uint16_t>(trailer + kTrailerMajorOffset) != frame.major ||
      LoadLE<uint16_t>(trailer + kTrailerMinorOffset) != frame.minor ||
      LoadLE<uint32_t>(trailer + kTrailerFlagsOffset) != 0) {
    return corrupt("trailer version or flags differ from the preamble's");
  }

  const uint64_t body_end = size - kTrailerSize;
  frame.header_offset = LoadLE<uint64_t>(data + kPreambleHeaderOffsetOffset);
  frame.header_length = LoadLE<uint64_t>(data + kPreambleHeaderLengthOffset);
  if (frame.header_offset != kHeaderOffset || frame.header_length == 0 ||
      !RangeWithin(frame.header_offset, frame.header_length, body_end)) {
    return corrupt("header offset/length out of bounds");
  }
  frame.header = data + frame.header_offset;
  if (LoadLE<uint64_t>(data + kPreambleHeaderChecksumOffset) !=
      Checksum(frame.header, frame.header_length)) {
    return corrupt("header checksum mismatch");
  }

  frame.directory_offset = LoadLE<uint64_t>(trailer + kTrailerDirectoryOffsetOffset);
  frame.directory_length = LoadLE<uint64_t>(trailer + kTrailerDirectoryLengthOffset);
  frame.directory_checksum = LoadLE<uint64_t>(trailer + kTrailerDirectoryChecksumOffset);
  const char* directory_name = kind == FileKind::kShard ? "footer" : "index header";
  if (frame.directory_length == 0 || !RangeWithin(frame.directory_offset, frame.directory_length, body_end) ||
      frame.directory_offset % kFlatBufferAlignment != 0) {
    return corrupt(std::string(directory_name) + " offset/length out of bounds");
  }
  if (kind == FileKind::kShard && frame.directory_offset < frame.header_offset + frame.header_length) {
    return corrupt("footer overlaps the header");
  }
  if (kind == FileKind::kIndex && (frame.directory_offset != frame.header_offset ||
                                   frame.directory_length != frame.header_length)) {
    return corrupt("trailer does not point at the index header");
  }
  frame.directory = data + frame.directory_offset;
  if (frame.directory_checksum != Checksum(frame.directory, frame.directory_length)) {
    return corrupt(std::string(directory_name) + " checksum mismatch");
  }
  return frame;
}

}  // namespace unirecord::format
