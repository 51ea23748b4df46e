// Our baseline Huffman entropy decoder (jpeg_huffman.h; its tables are in
// jpeg_huffman_tables.cc, its place in libjpeg in jpeg_huffman_libjpeg.cc).
// Every rule below mirrors libjpeg-turbo 2.1's jdhuff.c (decode_mcu_slow)
// for the data it accepts, and rejects what libjpeg would warn about, fail
// on or recover from.
#include "image/jpeg_huffman.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <jpeglib.h>

#include "image/jpeg_huffman_tables.h"

namespace unirecord::image_internal {
namespace {

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
// Zig-zag position -> natural (row-major) index.
constexpr uint8_t kNaturalOrder[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48,
    41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23,
    30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

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

// The Huffman tables a scan's components use, built once per image.
struct ScanTables {
  DecodeTable dc[NUM_HUFF_TBLS];
  AcTable ac[NUM_HUFF_TBLS];
  bool built[2][NUM_HUFF_TBLS] = {};
};

// Builds the tables of each component of the scan and sizes its
// coefficients in *out (comps[i] points at them). kRejected, before
// allocating, when they would take more than max_bytes or a table is
// missing or bogus.
OwnHuffmanResult SetUpComponents(const jpeg_decompress_struct& cinfo, size_t max_bytes, ScanTables* tables,
                                 ScanComponent* comps, JpegCoefficients* out) {
  const int n = cinfo.num_components;
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
    if (!tables->built[0][dc]) {
      if (!BuildTable(*cinfo.dc_huff_tbl_ptrs[dc], true, &tables->dc[dc])) return OwnHuffmanResult::kRejected;
      tables->built[0][dc] = true;
    }
    if (!tables->built[1][ac]) {
      if (!BuildAcTable(*cinfo.ac_huff_tbl_ptrs[ac], &tables->ac[ac])) return OwnHuffmanResult::kRejected;
      tables->built[1][ac] = true;
    }
    JpegCoefficients::Component& o = out->components[c.component_index];
    o.blocks_wide = RoundedBlocks(c.width_in_blocks, c.h_samp_factor);
    o.blocks_high = RoundedBlocks(c.height_in_blocks, c.v_samp_factor);
    bytes += size_t(o.blocks_wide) * o.blocks_high * sizeof(JBLOCK);
    const bool single = n == 1;  // a single-component scan codes blocks one by one
    comps[i] = {&tables->dc[dc], &tables->ac[ac], single ? 1 : c.h_samp_factor,
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
  return OwnHuffmanResult::kDecoded;
}

// Un-stuffs the `segments` restart segments of data[0, size) one after
// another into scratch->segment (a lane may read into the next one's bytes,
// or the slack, before its overrun check), each ended by the restart marker
// due there, the last by EOI. *eoi: where that EOI starts in `data`.
bool UnstuffSegments(const uint8_t* data, size_t size, int64_t segments, OwnHuffmanScratch* scratch, size_t* eoi) {
  scratch->segment.resize(std::max(scratch->segment.size(), size + kSegmentSlack));
  scratch->segment_ends.resize(size_t(segments));
  uint8_t* unstuffed = scratch->segment.data();
  size_t pos = 0, written = 0;
  for (int64_t index = 0; index < segments; ++index) {
    size_t length = 0, next = 0;
    const int marker = Unstuff(data, size, pos, unstuffed + written, &length, &next);
    const int expected = index + 1 == segments ? 0xD9 : 0xD0 + static_cast<int>(index % 8);
    if (marker != expected) return false;
    written += length;
    scratch->segment_ends[size_t(index)] = written;
    pos = next;
  }
  *eoi = pos - 2;  // the marker's 0xFF, after any fill bytes
  return true;
}

// The blocks of one MCU, component by component, and (order, when not
// null) where each MCU's blocks lie in the coefficients.
ScanLayout LayOutMcu(const ScanComponent* comps, int n, int mcus_per_row, int mcu_rows, McuOrder* order) {
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
  return layout;
}

// Decodes the un-stuffed segments (UnstuffSegments) of `total` MCUs,
// `interval` MCUs each: kLanes lanes take the segments in turn; once there
// are none left, each lane still busy finishes alone. The decoder's inner
// loop, whole.
OwnHuffmanResult DecodeSegments(const ScanLayout& layout, const OwnHuffmanScratch& scratch, int64_t segments,
                                int64_t interval, int64_t total) {
  const uint8_t* unstuffed = scratch.segment.data();
  int64_t next_segment = 0;
  auto start_next = [&](Lane* lane) {
    const int64_t j = next_segment++;
    const size_t begin = j == 0 ? 0 : scratch.segment_ends[size_t(j - 1)];
    return StartSegment(layout, unstuffed + begin, scratch.segment_ends[size_t(j)] - begin, j * interval,
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

}  // namespace

int RoundedBlocks(unsigned int blocks, int sampling) {
  return CeilDiv(static_cast<int>(blocks), sampling) * sampling;
}

OwnHuffmanResult DecodeScan(const jpeg_decompress_struct& cinfo, const uint8_t* data, size_t size,
                            size_t max_bytes, OwnHuffmanScratch* scratch, JpegCoefficients* out,
                            size_t* eoi, McuOrder* order) {
  const int n = cinfo.num_components;
  if (cinfo.progressive_mode || cinfo.arith_code || cinfo.data_precision != 8 || n < 1 ||
      n > MAX_COMPS_IN_SCAN || cinfo.comps_in_scan != n || cinfo.Ss != 0 || cinfo.Se != 63 ||
      cinfo.Ah != 0 || cinfo.Al != 0) {
    return OwnHuffmanResult::kNotBaseline;
  }
  ScanTables tables;
  ScanComponent comps[MAX_COMPS_IN_SCAN];
  const OwnHuffmanResult set_up = SetUpComponents(cinfo, max_bytes, &tables, comps, out);
  if (set_up != OwnHuffmanResult::kDecoded) return set_up;
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
  if (total == 0) return OwnHuffmanResult::kRejected;  // libjpeg stops at such a header first
  const int64_t segments = (total + interval - 1) / interval;
  if (!UnstuffSegments(data, size, segments, scratch, eoi)) return OwnHuffmanResult::kRejected;
  const ScanLayout layout = LayOutMcu(comps, n, mcus_per_row, mcu_rows, order);
  return DecodeSegments(layout, *scratch, segments, interval, total);
}

}  // namespace unirecord::image_internal
