// Thread counts: the one bound on every `threads` option of the API.
//
// Every `threads` option (WriterOptions, StagedWriteOptions, ConvertOptions,
// LoaderOptions, ...) takes 0 for every core this process may run on (its
// affinity mask, as a container or taskset limits it, capped at kMaxThreads)
// or a count from 1 to kMaxThreads. A negative count or one over the bound
// is refused with InvalidArgument naming the option, before any thread
// starts.
#ifndef UNIRECORD_THREADS_H_
#define UNIRECORD_THREADS_H_

namespace unirecord {

// More threads than this is a typo, not a machine (each costs a stack, and
// thousands only add contention).
inline constexpr int kMaxThreads = 1024;

}  // namespace unirecord

#endif  // UNIRECORD_THREADS_H_
