// Thread counts: the one meaning of "0 = all usable cores" and the one upper
// bound every `threads` option is checked against.
#ifndef UNIRECORD_SRC_UTIL_THREADS_H_
#define UNIRECORD_SRC_UTIL_THREADS_H_

#include <string>

#include "unirecord/status.h"

namespace unirecord {

// More threads than this is a typo, not a machine: refused before any starts
// (each costs a stack, and thousands only add contention).
inline constexpr int kMaxThreads = 1024;

// CPUs this process may run on (its affinity mask, as a container or
// taskset limits it); at least 1.
int UsableCores();

// `requested` threads, or UsableCores() (capped at kMaxThreads) for 0.
// InvalidArgument naming `option` when negative or over kMaxThreads.
Result<int> ResolveThreadCount(int requested, const std::string& option);

}  // namespace unirecord

#endif  // UNIRECORD_SRC_UTIL_THREADS_H_
