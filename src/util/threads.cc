#include "util/threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

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

Status ParallelFor(size_t n, int threads, const std::string& option, const std::function<Status(size_t)>& work) {
  UREC_ASSIGN_OR_RETURN(const int workers, ResolveThreadCount(threads, option));
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  size_t failed_at = n;
  Status failure;
  auto drain = [&] {
    for (size_t i = next++; i < n; i = next++) {
      Status status = work(i);
      if (status.ok()) continue;
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (i < failed_at) {
        failed_at = i;
        failure = std::move(status);
      }
      next = n;
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(static_cast<size_t>(workers), n); ++t) {
    try {
      pool.emplace_back(drain);
    } catch (const std::system_error&) {
      break;  // fewer threads than asked: the calling thread does the rest
    }
  }
  drain();
  for (std::thread& thread : pool) thread.join();
  return failure;
}

}  // namespace unirecord
