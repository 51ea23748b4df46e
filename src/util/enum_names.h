// The names of an enum's values, one table per enum, behind its pair of
// public functions (SampleOrderName / ParseSampleOrder, ...): the name of a
// value, the value of a name, and the error for a name that is none, which
// lists the names ("unknown sample order 'zigzag' (expected 'sequential',
// 'shuffle' or 'block')"). A pair is then its table and two one-line calls.
#ifndef UNIRECORD_SRC_UTIL_ENUM_NAMES_H_
#define UNIRECORD_SRC_UTIL_ENUM_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "unirecord/status.h"

namespace unirecord {

template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};

// The name of `value` in `names` ("unknown" for a value the table lacks).
template <typename Enum, size_t N>
const char* EnumNameOf(const EnumName<Enum> (&names)[N], Enum value) {
  for (const EnumName<Enum>& entry : names) {
    if (entry.value == value) return entry.name;
  }
  return "unknown";
}

// The value named `name`, or InvalidArgument "unknown WHAT 'NAME' (expected
// 'a', 'b' or 'c')".
template <typename Enum, size_t N>
Result<Enum> ParseEnumName(const EnumName<Enum> (&names)[N], std::string_view name, const char* what) {
  static_assert(N >= 2, "an enum of one name needs no parsing");
  std::string expected;
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i].name) return names[i].value;
    expected += std::string(i == 0 ? "'" : i + 1 == N ? " or '" : ", '") + names[i].name + "'";
  }
  return Status::InvalidArgument("unknown " + std::string(what) + " '" + MessageText(name) + "' (expected " +
                                 expected + ")");
}

}  // namespace unirecord

#endif  // UNIRECORD_SRC_UTIL_ENUM_NAMES_H_
