// The viewer's first answer: what the dataset is, from its headers, index
// sizes and manifests alone (no record is read): fields (type, shape,
// indexed, role), records, shards, segments and bytes on disk, the kept
// versions with what each added or dropped, the class names, the metadata.
#ifndef UNIRECORD_SRC_SERVE_OVERVIEW_H_
#define UNIRECORD_SRC_SERVE_OVERVIEW_H_

#include <string>

#include "serve/json.h"
#include "serve/record_json.h"
#include "unirecord/dataset.h"
#include "unirecord/serve.h"

namespace unirecord::serve {

// The kept versions listed and compared (newest first) at most.
inline constexpr size_t kMaxVersionsCompared = 20;

Json OverviewJson(const Dataset& dataset, const std::string& path, const FieldRoles& roles,
                  const ServeOptions& options);

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_OVERVIEW_H_
