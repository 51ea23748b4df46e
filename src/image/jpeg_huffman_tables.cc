// Building the baseline decoder's Huffman tables (jpeg_huffman_tables.h).
#include "image/jpeg_huffman_tables.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace unirecord::image_internal {

bool BuildTable(const JHUFF_TBL& table, bool dc, DecodeTable* d) {
  uint8_t size_of[257];
  uint32_t code_of[257];
  int count = 0;
  for (int len = 1; len <= 16; ++len) {
    const int n = table.bits[len];
    if (count + n > 256) return false;
    for (int i = 0; i < n; ++i) size_of[count++] = static_cast<uint8_t>(len);
  }
  size_of[count] = 0;
  uint32_t code = 0;
  int len = size_of[0];
  for (int p = 0; size_of[p] != 0;) {
    while (size_of[p] == len) code_of[p++] = code++;
    if (code >= (1u << len)) return false;
    code <<= 1;
    ++len;
  }
  int p = 0;
  for (int l = 1; l <= 16; ++l) {
    if (table.bits[l] != 0) {
      d->valoffset[l] = p - static_cast<int32_t>(code_of[p]);
      p += table.bits[l];
      d->maxcode[l] = static_cast<int32_t>(code_of[p - 1]);
    } else {
      d->valoffset[l] = 0;
      d->maxcode[l] = -1;
    }
  }
  d->valoffset[17] = 0;
  d->maxcode[17] = INT32_MAX;
  std::memcpy(d->huffval, table.huffval, sizeof d->huffval);
  if (dc) {
    for (int i = 0; i < count; ++i) {
      if (table.huffval[i] > 15) return false;
    }
  }
  std::memset(d->fast, 0, sizeof d->fast);
  for (int i = 0; i < count; ++i) {
    const int l = size_of[i];
    if (l > kFastBits) break;
    const int first = static_cast<int>(code_of[i] << (kFastBits - l));
    const uint16_t entry = static_cast<uint16_t>((l << 8) | table.huffval[i]);
    std::fill(d->fast + first, d->fast + first + (1 << (kFastBits - l)), entry);
  }
  return true;
}

bool BuildAcTable(const JHUFF_TBL& table, AcTable* t) {
  if (!BuildTable(table, false, &t->codes)) return false;
  uint64_t single[kFastSize] = {};
  for (int first = 0; first < kFastSize;) {
    const uint16_t code = t->codes.fast[first];
    const int l = code >> 8, run = (code >> 4) & 15, s = code & 15;
    if (l == 0) break;  // longer codes from here on
    const int end = first + (1 << (kFastBits - l));
    if (s == 0 && run != 15) {
      std::fill(single + first, single + end, uint64_t(l) | kEndsBlock);  // libjpeg: any run but 15 ends the block
    } else if (s != 0 && l + s <= kFastBits) {
      // Each value of the s bits after the code covers a run of entries.
      const int per_value = 1 << (kFastBits - l - s);
      for (int bits = 0; bits < (1 << s); ++bits) {
        const uint64_t value = static_cast<uint16_t>(static_cast<int16_t>(Extend(bits, s)));
        const uint64_t entry = uint64_t(l + s) | uint64_t(run) << 8 | value << 32 | value << 48;
        std::fill(single + first + bits * per_value, single + first + (bits + 1) * per_value, entry);
      }
    }  // else a run of 16 zeros, or a value past the look-up: DecodeSymbol's
    first = end;
  }
  // A coefficient's entry takes the symbol that follows it when that one's
  // code and value fit in the bits left: its own entry, read at the bits
  // after the first symbol, says how many bits it needs.
  for (int index = 0; index < kFastSize; ++index) {
    const uint64_t entry = single[index];
    t->fast[index] = entry;
    if (entry == 0 || (entry & kEndsBlock) != 0) continue;
    const int used = static_cast<int>(entry & 15);
    const uint64_t next = single[(index << used) & (kFastSize - 1)];
    const int needs = static_cast<int>(next & 15);
    if (next == 0 || used + needs > kFastBits) continue;
    // The next value's position, past the first; an end of block has run and
    // value 0, so it writes a zero where the block is still clear.
    const uint64_t step = ((next >> 8) & 15) + 1;
    t->fast[index] = (entry & 0x0000FFFF00000FFFull) + needs + (next & kEndsBlock) + (step << 12) +
                     (next >> 32 << 48);
  }
  return true;
}

}  // namespace unirecord::image_internal
