// Which metadata a later segment may carry (format/SPEC.md section 1.2): the
// earlier segment's, except that the class list may gain names at its end,
// so that appending images of new classes keeps every earlier label.
#ifndef UNIRECORD_FORMAT_SEGMENT_METADATA_H_
#define UNIRECORD_FORMAT_SEGMENT_METADATA_H_

#include <string>

#include "format/header_codec.h"

namespace unirecord::format {

enum class ClassList : bool {
  kEqual,     // within a segment, and where nothing may grow
  kMayGrow,   // a later segment's class list may extend the earlier one's
};

// Empty when `metadata` may follow `earlier`; else what differs, for an error
// message: "metadata 'a', 'b' (values differ or are missing)", or for a class
// list that is neither equal nor an extension, "metadata 'classes' (...)".
std::string MetadataDifference(const Metadata& metadata, const Metadata& earlier, ClassList classes);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_SEGMENT_METADATA_H_
