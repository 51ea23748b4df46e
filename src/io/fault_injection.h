// Test helper over io::SetFaultHook: counts the file-system steps of some
// work and stops it at step N, either by failing that call and every later
// one (an in-process model of a killed process: nothing more reaches the
// disk) or by a real SIGKILL (for forked children).
#ifndef UNIRECORD_IO_FAULT_INJECTION_H_
#define UNIRECORD_IO_FAULT_INJECTION_H_

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "io/file.h"

namespace unirecord::testing {

class CrashAtStep {
 public:
  enum class Mode { kCountOnly, kFailFromStep, kSigkillAtStep };

  CrashAtStep(Mode mode, int64_t step) : mode_(mode), crash_step_(step) {
    io::SetFaultHook([this](io::FileOp op, const std::string& path) {
      const int64_t step = next_++;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        log_.push_back(std::string(io::FileOpName(op)) + " " + path);
      }
      if (mode_ == Mode::kCountOnly || step < crash_step_) return Status::OK();
      if (mode_ == Mode::kSigkillAtStep) ::raise(SIGKILL);
      return Status::IOError(path + ": injected crash at step " + std::to_string(crash_step_));
    });
  }
  ~CrashAtStep() { io::SetFaultHook(nullptr); }
  CrashAtStep(const CrashAtStep&) = delete;
  CrashAtStep& operator=(const CrashAtStep&) = delete;

  int64_t steps() const { return next_; }
  // "rename /tmp/x/train.uset", ... in call order.
  std::vector<std::string> log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
  }

 private:
  const Mode mode_;
  const int64_t crash_step_;
  std::atomic<int64_t> next_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> log_;
};

}  // namespace unirecord::testing

#endif  // UNIRECORD_IO_FAULT_INJECTION_H_
