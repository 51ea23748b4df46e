// The viewer's memory for answers it may be asked again (thumbnails, the ids
// of recent queries, distributions): least recently used first out, within a
// byte budget, thread-safe. What is too large to keep (over an eighth of the
// budget) is not kept, so a few large answers cannot empty it.
#ifndef UNIRECORD_SRC_SERVE_BYTE_CACHE_H_
#define UNIRECORD_SRC_SERVE_BYTE_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace unirecord::serve {

class ByteCache {
 public:
  explicit ByteCache(uint64_t budget) : budget_(budget) {}

  // The value under `key`, or null. Each key holds one type of value: its
  // prefix says which ("thumb:", "ids:", ...), the caller's T must match it.
  template <typename T>
  std::shared_ptr<const T> Get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = entries_.find(key);
    if (found == entries_.end()) return nullptr;
    order_.splice(order_.begin(), order_, found->second.position);
    return std::static_pointer_cast<const T>(found->second.value);
  }

  // Keeps `value` (counted as `bytes`) under `key`, replacing what was there,
  // and drops the least recently used entries until the budget holds.
  void Put(const std::string& key, std::shared_ptr<const void> value, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Erase(key);
    if (bytes > budget_ / 8) return;
    order_.push_front(key);
    entries_.emplace(key, Entry{std::move(value), bytes, order_.begin()});
    used_ += bytes;
    while (used_ > budget_ && !order_.empty()) Erase(order_.back());
  }

  uint64_t bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return used_;
  }
  size_t entries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    std::shared_ptr<const void> value;
    uint64_t bytes;
    std::list<std::string>::iterator position;
  };

  void Erase(const std::string& key) {
    auto found = entries_.find(key);
    if (found == entries_.end()) return;
    used_ -= found->second.bytes;
    order_.erase(found->second.position);
    entries_.erase(found);
  }

  const uint64_t budget_;
  mutable std::mutex mutex_;
  std::list<std::string> order_;  // most recently used first
  std::unordered_map<std::string, Entry> entries_;
  uint64_t used_ = 0;
};

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_BYTE_CACHE_H_
