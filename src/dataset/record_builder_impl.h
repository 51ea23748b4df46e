// A RecordBuilder's state: the record's values as the shard writer takes
// them (format/record_values.h). Writer::Write hands them on.
#ifndef UNIRECORD_DATASET_RECORD_BUILDER_IMPL_H_
#define UNIRECORD_DATASET_RECORD_BUILDER_IMPL_H_

#include "format/record_values.h"
#include "unirecord/writer.h"

namespace unirecord {

struct RecordBuilder::Impl : format::RecordValues {
  using RecordValues::RecordValues;
};

}  // namespace unirecord

#endif  // UNIRECORD_DATASET_RECORD_BUILDER_IMPL_H_
