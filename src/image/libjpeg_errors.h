// Internal: libjpeg error handling that longjmps back instead of exiting.
//
// libjpeg's error_exit must not return; these handlers longjmp to
// LibjpegErrors::jump. A longjmp over a live C++ object skips its destructor,
// so the setjmp and every libjpeg call belong in a function whose locals are
// plain C data (see jpeg_transcode.cc, jpeg_encoder.cc).
#ifndef UNIRECORD_SRC_IMAGE_LIBJPEG_ERRORS_H_
#define UNIRECORD_SRC_IMAGE_LIBJPEG_ERRORS_H_

#include <csetjmp>
#include <cstdio>

#include <jpeglib.h>

namespace unirecord::image_internal {

struct LibjpegErrors {
  jpeg_error_mgr pub;  // first member: libjpeg sees only this part
  jmp_buf jump;
  bool strict;         // a warning (recoverable corrupt data) longjmps too
  int warnings;
  char first_warning[JMSG_LENGTH_MAX];
  char message[JMSG_LENGTH_MAX];  // the fatal error, or the warning in strict mode
};

// Points `err` at fresh handlers and clears its counters; returns the
// jpeg_error_mgr to store in cinfo->err.
jpeg_error_mgr* InitLibjpegErrors(LibjpegErrors* err, bool strict);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_LIBJPEG_ERRORS_H_
