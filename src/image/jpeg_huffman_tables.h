// The Huffman tables of the baseline entropy decoder (jpeg_huffman.cc),
// built once per image from a DHT's table as libjpeg-turbo 2.1's
// jpeg_make_d_derived_tbl builds them, with its checks; the decoder's look-ups
// read them in its inner loop.
#ifndef UNIRECORD_IMAGE_JPEG_HUFFMAN_TABLES_H_
#define UNIRECORD_IMAGE_JPEG_HUFFMAN_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t first

#include <jpeglib.h>

namespace unirecord::image_internal {

// Code bits resolved by one table look-up (with two lanes, single runs:
// 10 0.85x, 11 0.81x, 12 0.83x libjpeg-turbo; bench/README.md).
constexpr int kFastBits = 11;
constexpr int kFastSize = 1 << kFastBits;
// An AcTable::fast entry: bits consumed (0-3), the block ends after it (4),
// zero coefficients before the first value (8-11), positions from the first
// value to the second (12-16; 0: one symbol, and the second value repeats
// the first), the first value (32-47) and the second (48-63). 0: not
// resolved by the look-up.
constexpr uint64_t kEndsBlock = 1u << 4;

struct DecodeTable {
  uint16_t fast[kFastSize];    // (code length << 8) | symbol; 0: a longer code, or none
  int32_t maxcode[18];         // largest code of each length, -1 if none; [17] ends the search
  int32_t valoffset[18];       // huffval index of a code of that length = code + valoffset
  uint8_t huffval[256];
};

// An AC table also resolves, in one look-up, a symbol with its value bits
// and, when they fit the look-up too, the next symbol (a coefficient or the
// block's end).
struct AcTable {
  DecodeTable codes;
  uint64_t fast[kFastSize];
};

// HUFF_EXTEND: `bits` (s of them, s >= 1) as a signed value.
inline int Extend(uint32_t bits, int s) {
  return bits < (1u << (s - 1)) ? static_cast<int>(bits) - static_cast<int>((1u << s) - 1)
                                : static_cast<int>(bits);
}

// jpeg_make_d_derived_tbl's canonical codes and its checks: false where
// libjpeg stops with "Bogus Huffman table definition".
bool BuildTable(const JHUFF_TBL& table, bool dc, DecodeTable* d);

// The AC look-up in two passes over whole code ranges (once per image, so
// kept cheap): each entry with its first symbol alone, then the pairs.
bool BuildAcTable(const JHUFF_TBL& table, AcTable* t);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_IMAGE_JPEG_HUFFMAN_TABLES_H_
