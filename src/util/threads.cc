#include "util/threads.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace unirecord {

int UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

Result<int> ResolveThreadCount(int requested, const std::string& option) {
  if (requested < 0 || requested > kMaxThreads) {
    return Status::InvalidArgument(option + " " + std::to_string(requested) + " is out of range: 0 (all " +
                                   std::to_string(UsableCores()) + " usable cores) to " +
                                   std::to_string(kMaxThreads));
  }
  return requested > 0 ? requested : std::min(UsableCores(), kMaxThreads);
}

}  // namespace unirecord
