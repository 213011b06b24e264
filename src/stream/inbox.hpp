// Inbox: a stream whose producer runs on another node, as its consumer sees
// it. The process's I/O thread is the one producer: it delivers the tokens of
// each message that arrives; the consuming operator reads them.
//
// SCORE's two-level buffering ("SCORE on Millennium", section 3): with it, the
// I/O thread appends a whole message's tokens under one lock, and the reader
// takes everything delivered so far under one lock (a swap) and then reads
// from its own buffer without locking, so the two threads meet once per
// batch. Without it (for the ablation, bench/stream_cluster.sh), every token
// is put and taken under the lock, so they contend on every token.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

namespace redflow::stream {

class Inbox {
 public:
  Inbox(std::size_t token_bytes, bool two_level) : bytes_(token_bytes == 0 ? 1 : token_bytes), two_level_(two_level) {}
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  std::size_t token_bytes() const { return bytes_; }

  // I/O thread: `n` tokens, back to back.
  void deliver(const void* tokens, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(tokens);
    if (two_level_) {
      std::lock_guard lock(mutex_);
      shared_.insert(shared_.end(), p, p + n * bytes_);
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        std::lock_guard lock(mutex_);
        shared_.insert(shared_.end(), p + i * bytes_, p + (i + 1) * bytes_);
      }
    }
    delivered_.fetch_add(n, std::memory_order_release);
  }
  void close() { closed_.store(true, std::memory_order_release); }

  // Consumer.
  std::size_t pop_many(void* tokens, std::size_t max) {
    auto* p = static_cast<unsigned char*>(tokens);
    std::size_t n = 0;
    if (two_level_) {
      while (n < max && size() > 0) {
        if (local_at_ == local_.size()) {
          local_.clear();
          local_at_ = 0;
          std::lock_guard lock(mutex_);
          local_.swap(shared_);
        }
        const std::size_t k = std::min(max - n, (local_.size() - local_at_) / bytes_);
        std::memcpy(p + n * bytes_, local_.data() + local_at_, k * bytes_);
        local_at_ += k * bytes_;
        n += k;
        taken_.fetch_add(k, std::memory_order_release);
      }
      return n;
    }
    while (n < max && pop(p + n * bytes_)) ++n;
    return n;
  }
  bool pop(void* token) {
    if (taken_.load(std::memory_order_relaxed) == delivered_.load(std::memory_order_acquire)) return false;
    if (two_level_) {
      if (local_at_ == local_.size()) {
        local_.clear();
        local_at_ = 0;
        std::lock_guard lock(mutex_);
        local_.swap(shared_);
      }
      std::memcpy(token, local_.data() + local_at_, bytes_);
      local_at_ += bytes_;
    } else {
      std::lock_guard lock(mutex_);
      std::memcpy(token, shared_.data() + shared_at_, bytes_);
      shared_at_ += bytes_;
      if (shared_at_ == shared_.size()) shared_.clear(), shared_at_ = 0;
    }
    taken_.fetch_add(1, std::memory_order_release);
    return true;
  }
  // Consumer: the next `n` tokens copied, not taken (n <= size()).
  void peek(void* tokens, std::size_t n) {
    auto* p = static_cast<unsigned char*>(tokens);
    std::size_t want = n * bytes_;
    if (two_level_) {
      const std::size_t k = std::min(want, local_.size() - local_at_);
      if (k != 0) std::memcpy(p, local_.data() + local_at_, k);
      p += k;
      want -= k;
    }
    if (want == 0) return;
    std::lock_guard lock(mutex_);
    const std::size_t from = two_level_ ? 0 : shared_at_;
    std::memcpy(p, shared_.data() + from, want);
  }
  std::size_t size() const { return delivered_.load(std::memory_order_acquire) - taken_.load(std::memory_order_acquire); }
  bool drained() const { return closed_.load(std::memory_order_acquire) && size() == 0; }
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  std::uint64_t delivered() const { return delivered_.load(std::memory_order_acquire); }

 private:
  const std::size_t bytes_;
  const bool two_level_;
  std::mutex mutex_;
  std::vector<unsigned char> shared_;  // under mutex_
  std::size_t shared_at_ = 0;          // under mutex_ (one level only)
  std::vector<unsigned char> local_;   // the consumer's (two levels)
  std::size_t local_at_ = 0;
  std::atomic<std::uint64_t> delivered_{0}, taken_{0};
  std::atomic<bool> closed_{false};
};

}  // namespace redflow::stream
