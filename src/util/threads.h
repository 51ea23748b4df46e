// Thread counts: the one meaning of "0 = all usable cores" and the one upper
// bound every `threads` option is checked against.
#ifndef UNIRECORD_SRC_UTIL_THREADS_H_
#define UNIRECORD_SRC_UTIL_THREADS_H_

#include <cstddef>
#include <functional>
#include <string>

#include "unirecord/status.h"
#include "unirecord/threads.h"  // kMaxThreads

namespace unirecord {

// CPUs this process may run on (its affinity mask, as a container or
// taskset limits it); at least 1.
int UsableCores();

// `requested` threads, or UsableCores() (capped at kMaxThreads) for 0.
// InvalidArgument naming `option` when negative or over kMaxThreads.
Result<int> ResolveThreadCount(int requested, const std::string& option);

// Runs work(i) for every i in [0, n) on ResolveThreadCount(threads, option)
// threads, the calling thread among them (fewer when n is smaller or the
// system refuses more). Once an item fails no new one starts, and the result
// is the failure of the lowest i: every item below a failing one started
// before it, so that is the same error a serial loop would stop at.
Status ParallelFor(size_t n, int threads, const std::string& option, const std::function<Status(size_t)>& work);

}  // namespace unirecord

#endif  // UNIRECORD_SRC_UTIL_THREADS_H_
