// Our baseline Huffman entropy decoder and libjpeg-turbo's reference
// coefficients (jpeg_huffman.h). Every rule below mirrors libjpeg-turbo
// 2.1's jdhuff.c (jpeg_make_d_derived_tbl, decode_mcu_slow) for the data it
// accepts, and rejects what libjpeg would warn about, fail on or recover from.
#include "image/jpeg_huffman.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include <jpeglib.h>
// (after jpeglib.h) struct jpeg_entropy_decoder, for OwnEntropyDecoder
#include <jpegint.h>

#include "image/libjpeg_errors.h"

namespace unirecord::image_internal {
namespace {

// Code bits resolved by one table look-up (with two lanes, single runs:
// 10 0.85x, 11 0.81x, 12 0.83x libjpeg-turbo; bench/README.md).
constexpr int kFastBits = 11;
constexpr int kFastSize = 1 << kFastBits;
// Restart segments decoded at once, one lane each.
constexpr int kLanes = 2;
// Bits a refill leaves at least: it loads whole bytes, so 56 + the odd bits
// left before it (Bits::Refill sets them with an OR).
constexpr int kRefilledBits = 56;
static_assert(kRefilledBits == 0b111000, "the OR keeps the odd bits (0-7) and sets 56");
// Look-ups of kFastBits each that one refill provides for.
constexpr int kStepsPerRefill = (kRefilledBits - kFastBits) / kFastBits + 1;
// Bytes readable past a segment's data: one block consumes at most
// 64 symbols of 16 + 15 bits (248 bytes) before the overrun check, and a
// refill loads 8 bytes.
constexpr size_t kSegmentSlack = 512;
// An AcTable::fast entry: bits consumed (0-3), the block ends after it (4),
// zero coefficients before the first value (8-11), positions from the first
// value to the second (12-16; 0: one symbol, and the second value repeats
// the first), the first value (32-47) and the second (48-63). 0: not
// resolved by the look-up.
constexpr uint64_t kEndsBlock = 1u << 4;

// Zig-zag position -> natural (row-major) index.
constexpr uint8_t kNaturalOrder[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

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

// The AC look-up in two passes over whole code ranges (once per image, so
// kept cheap): each entry with its first symbol alone, then the pairs.
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

inline uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

// The bit buffer: `nbits` valid bits at the top of `acc`. Refill keeps
// loading whole bytes from `p` (bits already present are loaded again in
// the same places, so the OR leaves them unchanged).
struct Bits {
  const uint8_t* p;
  uint64_t acc;
  int nbits;
  // Leaves kRefilledBits-63 bits. Always, not only when few bits are left: that
  // data-dependent branch mispredicted often enough to cost 0.80x -> 0.70x
  // of libjpeg-turbo's time (bench/README.md).
  __attribute__((always_inline)) inline void Refill() {
    acc |= LoadBigEndian64(p) >> nbits;
    p += (63 - nbits) >> 3;
    nbits |= kRefilledBits;
  }
  inline void Drop(int n) {
    acc <<= n;
    nbits -= n;
  }
  inline uint32_t Get(int n) {  // 1 <= n <= 31
    const uint32_t v = static_cast<uint32_t>(acc >> (64 - n));
    Drop(n);
    return v;
  }
};

// One Huffman symbol (needs >= 16 bits in the buffer); -1 for a bad code.
__attribute__((always_inline)) inline int DecodeSymbol(const DecodeTable& t, Bits* b) {
  const uint16_t e = t.fast[b->acc >> (64 - kFastBits)];
  if (e != 0) {
    b->Drop(e >> 8);
    return e & 0xFF;
  }
  for (int l = kFastBits + 1; l <= 16; ++l) {
    const int32_t code = static_cast<int32_t>(b->acc >> (64 - l));
    if (code <= t.maxcode[l]) {
      const int32_t index = code + t.valoffset[l];
      if (index < 0 || index > 255) return -1;
      b->Drop(l);
      return t.huffval[index];
    }
  }
  return -1;
}

struct ScanComponent {
  const DecodeTable* dc;
  const AcTable* ac;
  int h, v;               // blocks per MCU across and down
  int blocks_wide;        // the component's row of blocks
  int16_t* coef;
};

// One block of an MCU: its component and where it lies from the
// component's first block of that MCU (in coefficients).
struct McuBlock {
  int comp;
  size_t offset;
};

// The scan's layout, shared by the lanes.
struct ScanLayout {
  const ScanComponent* comps;
  McuBlock blocks[D_MAX_BLOCKS_IN_MCU];
  int blocks_in_mcu;
  int mcus_per_row;
};

// One restart segment being decoded, block by block and, within a block,
// symbol by symbol (Step), so that two lanes on two segments can run in
// one loop and the core overlaps their serial chains (table look-up ->
// code length -> shift).
struct Lane {
  Bits bits;
  const uint8_t* segment;  // its un-stuffed data
  int64_t data_bits;
  int64_t mcu, mcu_end;    // MCU being decoded, end of the segment
  int mx, my;              // that MCU's column and row (no division per block)
  int b;                   // block of the MCU being decoded
  int k;                   // next coefficient (zig-zag) of that block
  int16_t* block;
  const AcTable* ac;
  int predictors[MAX_COMPS_IN_SCAN];
};

enum StepResult { kStepMore = 0, kStepSegmentDone = 1, kStepError = 2 };

// Starts block lane->b of MCU lane->mcu: clears it and decodes its DC
// coefficient. False for a bad code or a DC predictor that would overflow.
__attribute__((always_inline)) inline bool StartBlock(const ScanLayout& layout, Lane* lane) {
  const McuBlock& mb = layout.blocks[lane->b];
  const ScanComponent& c = layout.comps[mb.comp];
  int16_t* block = c.coef + (size_t(lane->my) * c.v * c.blocks_wide + size_t(lane->mx) * c.h) * 64 + mb.offset;
  Bits* b = &lane->bits;
  b->Refill();  // >= kRefilledBits: a code (16) and its value (15)
  const int s = DecodeSymbol(*c.dc, b);
  if (s < 0) return false;
  const int diff = s != 0 ? Extend(b->Get(s), s) : 0;
  int* predictor = &lane->predictors[mb.comp];
  const int64_t dc = int64_t{*predictor} + diff;
  if (dc > INT_MAX || dc < INT_MIN) return false;  // libjpeg: "DCT coefficient out of range"
  *predictor = static_cast<int>(dc);
  std::memset(block, 0, 64 * sizeof(int16_t));
  block[0] = static_cast<int16_t>(dc);
  lane->block = block;
  lane->ac = c.ac;
  lane->k = 1;
  b->Refill();
  return true;
}

// Starts a segment of `count` MCUs from `mcu`, un-stuffed at `segment`.
__attribute__((always_inline)) inline bool StartSegment(const ScanLayout& layout, const uint8_t* segment, size_t length, int64_t mcu,
                         int64_t count, Lane* lane) {
  lane->bits = Bits{segment, 0, 0};
  lane->segment = segment;
  lane->data_bits = int64_t(length) * 8;
  lane->mcu = mcu;
  lane->mcu_end = mcu + count;
  lane->mx = static_cast<int>(mcu % layout.mcus_per_row);
  lane->my = static_cast<int>(mcu / layout.mcus_per_row);
  lane->b = 0;
  std::fill(std::begin(lane->predictors), std::end(lane->predictors), 0);
  return StartBlock(layout, lane);
}

// The current block has ended: checks for bits read past the segment's
// data (libjpeg decodes zeros there), then starts the next block, or at the
// segment's end checks that no whole byte is left before its marker
// (libjpeg reports extraneous data).
__attribute__((always_inline)) inline StepResult EndBlock(const ScanLayout& layout, Lane* lane) {
  const int64_t used = (lane->bits.p - lane->segment) * 8 - lane->bits.nbits;
  if (used > lane->data_bits) return kStepError;
  if (++lane->b == layout.blocks_in_mcu) {
    lane->b = 0;
    if (++lane->mcu == lane->mcu_end) {
      return lane->data_bits - used >= 8 ? kStepError : kStepSegmentDone;
    }
    if (++lane->mx == layout.mcus_per_row) {
      lane->mx = 0;
      ++lane->my;
    }
  }
  return StartBlock(layout, lane) ? kStepMore : kStepError;
}

// One AC symbol of the lane's block, or two (and the next block's DC
// coefficient when this one ends). Errors: a bad code, a coefficient index
// past 63, and EndBlock's. It needs kFastBits bits in the buffer: a
// look-up takes at most that many, and every other path refills after
// itself (>= kRefilledBits), so kStepsPerRefill steps run on one refill, which
// takes the refill's load off the look-ups' serial chain.
__attribute__((always_inline)) inline StepResult Step(const ScanLayout& layout, Lane* lane) {
  Bits* b = &lane->bits;
  const uint64_t f = lane->ac->fast[b->acc >> (64 - kFastBits)];
  if (f != 0) {
    const int k1 = lane->k + static_cast<int>((f >> 8) & 15);
    const int k2 = k1 + static_cast<int>((f >> 12) & 31);
    // Past 63: the second symbol is not this block's (or the data is bad);
    // DecodeSymbol takes one symbol and decides.
    if (__builtin_expect(k2 <= 63, 1)) {
      b->Drop(static_cast<int>(f & 15));
      lane->block[kNaturalOrder[k1]] = static_cast<int16_t>(f >> 32);
      lane->block[kNaturalOrder[k2]] = static_cast<int16_t>(f >> 48);
      lane->k = k2 + 1;
      return ((f & kEndsBlock) != 0) | (k2 == 63) ? EndBlock(layout, lane) : kStepMore;
    }
  }
  b->Refill();  // >= kRefilledBits: a code (16) and its value (15)
  const int symbol = DecodeSymbol(lane->ac->codes, b);
  if (symbol < 0) return kStepError;
  const int run = symbol >> 4, size = symbol & 15;
  if (size != 0) {
    const int k = lane->k + run;
    if (k > 63) return kStepError;
    lane->block[kNaturalOrder[k]] = static_cast<int16_t>(Extend(b->Get(size), size));
    b->Refill();
    lane->k = k + 1;
    return k == 63 ? EndBlock(layout, lane) : kStepMore;
  }
  if (run != 15) return EndBlock(layout, lane);  // end of block (libjpeg takes any run but 15 as one)
  b->Refill();
  lane->k += 16;
  return lane->k >= 64 ? EndBlock(layout, lane) : kStepMore;
}

// The entropy-coded bytes from data[pos] up to the next marker, un-stuffed
// into `out` (0xFF 0x00 -> 0xFF; fill 0xFF bytes before a marker skipped,
// as libjpeg does). Returns the marker's code with *length and *next (the
// byte after the marker), or -1 without a marker or after fill bytes before
// a stuffed zero.
int Unstuff(const uint8_t* data, size_t size, size_t pos, uint8_t* out, size_t* length,
            size_t* next) {
  const uint8_t* b = data + pos;
  const uint8_t* end = data + size;
  uint8_t* o = out;
  for (;;) {
    const auto* ff = static_cast<const uint8_t*>(std::memchr(b, 0xFF, end - b));
    if (ff == nullptr) return -1;
    std::memcpy(o, b, ff - b);
    o += ff - b;
    const uint8_t* q = ff + 1;
    while (q < end && *q == 0xFF) ++q;
    if (q >= end) return -1;
    if (*q == 0) {
      // Fill bytes before a stuffed zero: libjpeg-turbo's fast path (used
      // without restart markers) takes the second 0xFF for a marker, decodes
      // zeros, then redoes the MCU over the blocks it wrote into, so its
      // coefficients are not the data's.
      if (q != ff + 1) return -1;
      *o++ = 0xFF;
      b = q + 1;
      continue;
    }
    *length = o - out;
    *next = q + 1 - data;
    return *q;
  }
}

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// A component's blocks across or down, rounded up to whole MCUs, as
// jpeg_read_coefficients allocates them.
int RoundedBlocks(JDIMENSION blocks, int sampling) {
  return CeilDiv(static_cast<int>(blocks), sampling) * sampling;
}

// The scan described by a decompressor that jpeg_read_header left at SOS
// (data = its first entropy-coded byte). kRejected, before allocating,
// when the coefficients would take more than max_bytes. *eoi: where the EOI
// marker that ends the scan starts in `data`; *order (when not null): where
// each MCU's blocks lie in *out.
OwnHuffmanResult DecodeScan(const jpeg_decompress_struct& cinfo, const uint8_t* data, size_t size,
                            size_t max_bytes, OwnHuffmanScratch* scratch, JpegCoefficients* out,
                            size_t* eoi, McuOrder* order) {
  const int n = cinfo.num_components;
  if (cinfo.progressive_mode || cinfo.arith_code || cinfo.data_precision != 8 || n < 1 ||
      n > MAX_COMPS_IN_SCAN || cinfo.comps_in_scan != n || cinfo.Ss != 0 || cinfo.Se != 63 ||
      cinfo.Ah != 0 || cinfo.Al != 0) {
    return OwnHuffmanResult::kNotBaseline;
  }
  DecodeTable dc_tables[NUM_HUFF_TBLS];
  AcTable ac_tables[NUM_HUFF_TBLS];
  bool built[2][NUM_HUFF_TBLS] = {};
  ScanComponent comps[MAX_COMPS_IN_SCAN];
  int blocks_in_mcu = 0;
  size_t bytes = 0;
  out->components.resize(n);
  for (int i = 0; i < n; ++i) {
    const jpeg_component_info& c = *cinfo.cur_comp_info[i];
    const int dc = c.dc_tbl_no, ac = c.ac_tbl_no;
    // libjpeg fails on a table number past 3 or a missing quantization
    // table, and fills missing Huffman tables with the standard ones: leave
    // all of these to it.
    if (dc < 0 || dc >= NUM_HUFF_TBLS || ac < 0 || ac >= NUM_HUFF_TBLS ||  // SOS takes 0..15
        cinfo.dc_huff_tbl_ptrs[dc] == nullptr || cinfo.ac_huff_tbl_ptrs[ac] == nullptr ||
        c.quant_tbl_no < 0 || c.quant_tbl_no >= NUM_QUANT_TBLS ||
        cinfo.quant_tbl_ptrs[c.quant_tbl_no] == nullptr) {
      return OwnHuffmanResult::kRejected;
    }
    if (!built[0][dc]) {
      if (!BuildTable(*cinfo.dc_huff_tbl_ptrs[dc], true, &dc_tables[dc])) return OwnHuffmanResult::kRejected;
      built[0][dc] = true;
    }
    if (!built[1][ac]) {
      if (!BuildAcTable(*cinfo.ac_huff_tbl_ptrs[ac], &ac_tables[ac])) return OwnHuffmanResult::kRejected;
      built[1][ac] = true;
    }
    JpegCoefficients::Component& o = out->components[c.component_index];
    o.blocks_wide = RoundedBlocks(c.width_in_blocks, c.h_samp_factor);
    o.blocks_high = RoundedBlocks(c.height_in_blocks, c.v_samp_factor);
    bytes += size_t(o.blocks_wide) * o.blocks_high * sizeof(JBLOCK);
    const bool single = n == 1;  // a single-component scan codes blocks one by one
    comps[i] = {&dc_tables[dc], &ac_tables[ac], single ? 1 : c.h_samp_factor,
                single ? 1 : c.v_samp_factor, o.blocks_wide, nullptr};
    blocks_in_mcu += comps[i].h * comps[i].v;
  }
  if (blocks_in_mcu > D_MAX_BLOCKS_IN_MCU || bytes > max_bytes) return OwnHuffmanResult::kRejected;
  for (int i = 0; i < n; ++i) {
    const jpeg_component_info& c = *cinfo.cur_comp_info[i];
    JpegCoefficients::Component& o = out->components[c.component_index];
    // StartBlock clears every block it decodes; a single-component scan
    // leaves the rounding-up blocks alone.
    const size_t values = size_t(o.blocks_wide) * o.blocks_high * 64;
    if (n == 1 && (o.blocks_wide != int(c.width_in_blocks) || o.blocks_high != int(c.height_in_blocks))) {
      o.coef.assign(values, 0);
    } else {
      o.coef.resize(values);
    }
    comps[i].coef = o.coef.data();
  }
  int mcus_per_row, mcu_rows;
  if (n == 1) {
    mcus_per_row = static_cast<int>(cinfo.cur_comp_info[0]->width_in_blocks);
    mcu_rows = static_cast<int>(cinfo.cur_comp_info[0]->height_in_blocks);
  } else {
    mcus_per_row = CeilDiv(static_cast<int>(cinfo.image_width), 8 * cinfo.max_h_samp_factor);
    mcu_rows = CeilDiv(static_cast<int>(cinfo.image_height), 8 * cinfo.max_v_samp_factor);
  }
  const int64_t total = int64_t{mcus_per_row} * mcu_rows;
  const int64_t interval = cinfo.restart_interval != 0 ? cinfo.restart_interval : total;

  // Every segment un-stuffed first, one after another (a lane may read
  // into the next one's bytes, or the slack, before its overrun check).
  if (total == 0) return OwnHuffmanResult::kRejected;  // libjpeg stops at such a header first
  const int64_t segments = (total + interval - 1) / interval;
  scratch->segment.resize(std::max(scratch->segment.size(), size + kSegmentSlack));
  scratch->segment_ends.resize(size_t(segments));
  uint8_t* unstuffed = scratch->segment.data();
  size_t pos = 0, written = 0;
  for (int64_t index = 0; index < segments; ++index) {
    size_t length = 0, next = 0;
    const int marker = Unstuff(data, size, pos, unstuffed + written, &length, &next);
    const int expected = index + 1 == segments ? 0xD9 : 0xD0 + static_cast<int>(index % 8);
    if (marker != expected) return OwnHuffmanResult::kRejected;
    written += length;
    scratch->segment_ends[size_t(index)] = written;
    pos = next;
  }
  *eoi = pos - 2;  // the marker's 0xFF, after any fill bytes
  ScanLayout layout{comps, {}, 0, mcus_per_row};
  for (int i = 0; i < n; ++i) {
    for (int by = 0; by < comps[i].v; ++by) {
      for (int bx = 0; bx < comps[i].h; ++bx) {
        layout.blocks[layout.blocks_in_mcu++] = {i, (size_t(by) * comps[i].blocks_wide + bx) * 64};
      }
    }
  }
  if (order != nullptr) {
    for (int b = 0; b < layout.blocks_in_mcu; ++b) {
      const ScanComponent& c = comps[layout.blocks[b].comp];
      order->blocks[b] = {c.coef + layout.blocks[b].offset, size_t(c.h) * 64, size_t(c.v) * c.blocks_wide * 64};
    }
    order->blocks_in_mcu = layout.blocks_in_mcu;
    order->mcus_per_row = mcus_per_row;
    order->mcu_rows = mcu_rows;
  }
  // kLanes lanes take the segments in turn; once there are none left, each
  // lane still busy finishes alone.
  int64_t next_segment = 0;
  auto start_next = [&](Lane* lane) {
    const int64_t j = next_segment++;
    const size_t begin = j == 0 ? 0 : scratch->segment_ends[size_t(j - 1)];
    return StartSegment(layout, unstuffed + begin, scratch->segment_ends[size_t(j)] - begin, j * interval,
                        std::min(interval, total - j * interval), lane);
  };
  Lane lanes[kLanes];
  bool busy[kLanes] = {};
  int started = 0;
  for (; started < kLanes && next_segment < segments; ++started) {
    if (!start_next(&lanes[started])) return OwnHuffmanResult::kRejected;
    busy[started] = true;
  }
  bool all = started == kLanes;
  while (all) {
    StepResult r[kLanes];
    int any = 0;
#pragma GCC unroll 8
    for (int l = 0; l < kLanes; ++l) lanes[l].bits.Refill();
#pragma GCC unroll 8
    for (int step = 0; step < kStepsPerRefill && any == kStepMore; ++step) {
#pragma GCC unroll 8
      for (int l = 0; l < kLanes; ++l) {
        r[l] = Step(layout, &lanes[l]);
        any |= r[l];
      }
    }
    if (__builtin_expect(any == kStepMore, 1)) continue;
#pragma GCC unroll 8
    for (int l = 0; l < kLanes; ++l) {
      if (r[l] == kStepError) return OwnHuffmanResult::kRejected;
      if (r[l] != kStepSegmentDone) continue;
      if (next_segment < segments) {
        if (!start_next(&lanes[l])) return OwnHuffmanResult::kRejected;
      } else {
        busy[l] = false;
        all = false;
      }
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    while (busy[l]) {
      lanes[l].bits.Refill();
      const StepResult r = Step(layout, &lanes[l]);
      if (r == kStepError) return OwnHuffmanResult::kRejected;
      if (r == kStepSegmentDone) busy[l] = false;
    }
  }
  return OwnHuffmanResult::kDecoded;
}

// setjmp and libjpeg calls in functions with plain-C locals (libjpeg_errors.h).
bool CreateDecompressor(jpeg_decompress_struct* cinfo, LibjpegErrors* err) {
  cinfo->err = InitLibjpegErrors(err, /*strict=*/false);
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  return true;
}

bool ReadHeader(jpeg_decompress_struct* cinfo, LibjpegErrors* err, const unsigned char* data,
                unsigned long size) {
  if (setjmp(err->jump)) return false;
  jpeg_mem_src(cinfo, data, size);
  return jpeg_read_header(cinfo, TRUE) == JPEG_HEADER_OK;
}

bool ReadCoefficients(jpeg_decompress_struct* cinfo, LibjpegErrors* err, const unsigned char* data,
                      unsigned long size, jvirt_barray_ptr** arrays) {
  if (setjmp(err->jump)) return false;
  jpeg_mem_src(cinfo, data, size);
  jpeg_read_header(cinfo, TRUE);
  *arrays = jpeg_read_coefficients(cinfo);
  return true;
}

bool CopyComponent(jpeg_decompress_struct* cinfo, LibjpegErrors* err, jvirt_barray_ptr array,
                   int blocks_wide, int blocks_high, int16_t* out) {
  if (setjmp(err->jump)) return false;
  for (int row = 0; row < blocks_high; ++row) {
    JBLOCKARRAY rows = (*cinfo->mem->access_virt_barray)(reinterpret_cast<j_common_ptr>(cinfo), array,
                                                         static_cast<JDIMENSION>(row), 1, FALSE);
    std::memcpy(out + size_t(row) * blocks_wide * 64, rows[0], size_t(blocks_wide) * sizeof(JBLOCK));
  }
  return true;
}

}  // namespace

OwnHuffmanResult DecodeCoefficientsOwn(std::string_view jpeg, OwnHuffmanScratch* scratch,
                                       JpegCoefficients* out) {
  jpeg_decompress_struct cinfo;
  LibjpegErrors err;
  if (!CreateDecompressor(&cinfo, &err)) return OwnHuffmanResult::kHeaderError;
  OwnHuffmanResult result = OwnHuffmanResult::kHeaderError;
  const auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  if (ReadHeader(&cinfo, &err, data, static_cast<unsigned long>(jpeg.size()))) {
    const uint8_t* scan = cinfo.src->next_input_byte;
    size_t eoi = 0;
    result = DecodeScan(cinfo, scan, cinfo.src->bytes_in_buffer, SIZE_MAX, scratch, out, &eoi, nullptr);
  }
  jpeg_destroy_decompress(&cinfo);
  return result;
}

bool ReadLibjpegCoefficients(std::string_view jpeg, JpegCoefficients* out, int* warnings,
                             std::string* error) {
  jpeg_decompress_struct cinfo;
  LibjpegErrors err;
  if (!CreateDecompressor(&cinfo, &err)) {
    *error = err.message;
    return false;
  }
  jvirt_barray_ptr* arrays = nullptr;
  bool ok = ReadCoefficients(&cinfo, &err, reinterpret_cast<const unsigned char*>(jpeg.data()),
                             static_cast<unsigned long>(jpeg.size()), &arrays);
  if (ok) {
    out->components.resize(cinfo.num_components);
    for (int ci = 0; ci < cinfo.num_components && ok; ++ci) {
      const jpeg_component_info& c = cinfo.comp_info[ci];
      JpegCoefficients::Component& o = out->components[ci];
      o.blocks_wide = RoundedBlocks(c.width_in_blocks, c.h_samp_factor);
      o.blocks_high = RoundedBlocks(c.height_in_blocks, c.v_samp_factor);
      o.coef.assign(size_t(o.blocks_wide) * o.blocks_high * 64, 0);
      ok = CopyComponent(&cinfo, &err, arrays[ci], o.blocks_wide, o.blocks_high, o.coef.data());
    }
  }
  if (!ok) *error = err.message;
  *warnings = err.warnings;
  jpeg_destroy_decompress(&cinfo);
  return ok;
}

// What OwnEntropyDecoder relies on (jpeg_huffman.h).
static_assert(std::is_same_v<decltype(jpeg_entropy_decoder::decode_mcu), boolean (*)(j_decompress_ptr, JBLOCKROW*)>);
static_assert(offsetof(jpeg_entropy_decoder, decode_mcu) == sizeof(void (*)()));
static_assert(std::is_same_v<JCOEF, int16_t> && sizeof(JBLOCK) == 64 * sizeof(int16_t));
static_assert(D_MAX_BLOCKS_IN_MCU == 10);

bool OwnEntropyDecoder::Install(jpeg_decompress_struct* cinfo, size_t max_bytes) {
  installed_ = false;
  if (cinfo->buffered_image || cinfo->entropy == nullptr || cinfo->entropy->decode_mcu == nullptr ||
      cinfo->src == nullptr || cinfo->output_scanline != 0) {
    return false;
  }
  const uint8_t* scan = cinfo->src->next_input_byte;
  const size_t scan_bytes = cinfo->src->bytes_in_buffer;
  size_t eoi = 0;
  if (DecodeScan(*cinfo, scan, scan_bytes, max_bytes, &scratch_, &coefficients_, &eoi, &order_) !=
      OwnHuffmanResult::kDecoded) {
    return false;
  }
  mcu_x_ = mcu_y_ = 0;
  // libjpeg reads nothing more of the scan: the source moves to its EOI
  // marker, which jpeg_finish_decompress then finds as if libjpeg had
  // decoded the scan itself.
  cinfo->src->next_input_byte = scan + eoi;
  cinfo->src->bytes_in_buffer = scan_bytes - eoi;
  cinfo->client_data = this;
  cinfo->entropy->decode_mcu = DecodeMcu;
  installed_ = true;
  return true;
}

int OwnEntropyDecoder::DecodeMcu(jpeg_decompress_struct* cinfo, short (**mcu)[64]) {
  auto* self = static_cast<OwnEntropyDecoder*>(cinfo->client_data);
  // NULL: jpeg_skip_scanlines discards the MCU. libjpeg asks for each MCU
  // once, in order; one past the last would be a libjpeg we do not know, so
  // it gets the zeros libjpeg put there.
  const McuOrder& order = self->order_;
  if (mcu != nullptr && self->mcu_y_ < order.mcu_rows) {
    for (int b = 0; b < order.blocks_in_mcu; ++b) {
      const McuOrder::Block& block = order.blocks[b];
      std::memcpy(mcu[b], block.first + size_t(self->mcu_y_) * block.mcu_row + size_t(self->mcu_x_) * block.mcu_column,
                  sizeof(JBLOCK));
    }
  }
  if (++self->mcu_x_ == order.mcus_per_row) {
    self->mcu_x_ = 0;
    ++self->mcu_y_;
  }
  return TRUE;
}

}  // namespace unirecord::image_internal
