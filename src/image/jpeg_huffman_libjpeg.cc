// Our decoder and libjpeg-turbo together (jpeg_huffman.h): the decoder in
// libjpeg's place for a started decompressor (OwnEntropyDecoder), the scan
// after libjpeg's header (DecodeCoefficientsOwn), and libjpeg's own
// coefficients, the reference (ReadLibjpegCoefficients).
#include <climits>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include <jpeglib.h>
// (after jpeglib.h) struct jpeg_entropy_decoder, for OwnEntropyDecoder
#include <jpegint.h>

#include "image/jpeg_huffman.h"
#include "image/libjpeg_errors.h"

namespace unirecord::image_internal {
namespace {

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
