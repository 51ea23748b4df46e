#include "image/libjpeg_errors.h"

namespace unirecord::image_internal {
namespace {

void OnFatalError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<LibjpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

// Level -1 is a warning (corrupt data libjpeg can recover from); higher
// levels are trace messages, ignored.
void OnMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  auto* err = reinterpret_cast<LibjpegErrors*>(cinfo->err);
  if (err->warnings++ == 0) (*cinfo->err->format_message)(cinfo, err->first_warning);
  if (err->strict) {
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
  }
}

}  // namespace

jpeg_error_mgr* InitLibjpegErrors(LibjpegErrors* err, bool strict) {
  jpeg_error_mgr* pub = jpeg_std_error(&err->pub);
  pub->error_exit = OnFatalError;
  pub->emit_message = OnMessage;
  err->strict = strict;
  err->warnings = 0;
  err->first_warning[0] = '\0';
  err->message[0] = '\0';
  return pub;
}

}  // namespace unirecord::image_internal
