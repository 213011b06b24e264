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
//
// Credits (docs/streams.md, "Back-pressure"): a stream with a credit window
// of W tokens holds at most W here, because its producer's node sends only
// what this node has granted. The consumer asks for a grant (credit_due())
// once it has taken half a window since the last; the I/O thread then sends
// what take_credit() hands it. When nothing here can fire and the producer
// is out of credit (out_of_credit()), Parks' rule doubles W (grow(), from
// Room::make_room) and the difference goes with the next grant.
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
    const std::uint64_t now = delivered_.fetch_add(n, std::memory_order_release) + n;
    const std::uint64_t waiting = now - taken_.load(std::memory_order_acquire);
    if (waiting > most_) most_ = waiting;
  }
  void close() { closed_.store(true, std::memory_order_release); }

  // Credits, 0: none (the producer sends what it has). Before the run.
  void set_credit_window(std::uint64_t tokens) { window_.store(tokens); }
  std::uint64_t credit_window() const { return window_.load(); }
  // The producer's node has sent all the credit this inbox gave (the
  // window beyond what was granted back), whether or not its reader took
  // any: it sends nothing more until more is granted.
  bool out_of_credit() const {
    const std::uint64_t w = window_.load();
    return w > 0 && !released_.load() && delivered_.load(std::memory_order_acquire) - granted_.load() >= w;
  }
  // Parks' rule across nodes (Room::make_room): nothing on this node can
  // fire and the producer is out of credit, so the window doubles and the
  // I/O thread grants the difference at once (take_credit()).
  void grow() {
    const std::uint64_t w = window_.load();
    if (w == 0 || w > kReleased / 4) return;
    window_.store(2 * w);
    extra_.fetch_add(w);
  }
  // Tokens put here not through the network (a checkpoint's channel):
  // taking them grants nothing.
  void forgive(std::uint64_t tokens) { granted_.fetch_add(tokens); }
  // Consumer, after taking tokens: whether to ring the I/O thread for a
  // grant (true once until it takes the credit).
  bool credit_due() {
    const std::uint64_t w = window_.load();
    if (w == 0) return false;
    if (!released_.load() && taken_.load(std::memory_order_relaxed) - granted_.load() < std::max<std::uint64_t>(1, w / 2)) return false;
    return !credit_rung_.exchange(true);
  }
  // Consumer: its reader finished; whatever else comes is granted at once
  // (nothing reads it, so nothing holds the producer back).
  void release() { released_.store(true); }
  // I/O thread: the tokens taken since the last grant, now granted, and
  // what the window grew by (once released: as many as anyone could send).
  std::uint64_t take_credit() {
    credit_rung_.store(false);
    if (released_.load()) {
      if (released_sent_) return 0;
      released_sent_ = true;
      return kReleased;
    }
    const std::uint64_t extra = extra_.exchange(0);
    const std::uint64_t taken = taken_.load(std::memory_order_acquire);
    const std::uint64_t granted = granted_.load();
    if (taken <= granted) return extra;
    granted_.store(taken);
    return taken - granted + extra;
  }
  // I/O thread: the most tokens that waited here at once (at a delivery).
  std::uint64_t most_waiting() const { return most_; }

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
  // Consumer, in place: up to `max` waiting tokens, `n` of them (nullptr
  // and 0 when none wait), valid until skip(n) takes them. With two levels
  // they lie in the reader's own buffer; with one, where every token is
  // read under the lock, this copies them out.
  const unsigned char* look(std::size_t max, std::size_t& n) {
    n = std::min<std::uint64_t>(max, size());
    if (n == 0) return nullptr;
    if (!two_level_) {
      copy_.resize(n * bytes_);
      peek(copy_.data(), n);
      return copy_.data();
    }
    if (local_at_ == local_.size()) {
      local_.clear();
      local_at_ = 0;
      std::lock_guard lock(mutex_);
      local_.swap(shared_);
    }
    n = std::min(n, (local_.size() - local_at_) / bytes_);
    return local_.data() + local_at_;
  }
  void skip(std::size_t n) {
    if (two_level_) {
      local_at_ += n * bytes_;
    } else {
      std::lock_guard lock(mutex_);
      shared_at_ += n * bytes_;
      if (shared_at_ == shared_.size()) shared_.clear(), shared_at_ = 0;
    }
    taken_.fetch_add(n, std::memory_order_release);
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
  std::vector<unsigned char> copy_;    // the consumer's: look()'s copy (one level)
  std::atomic<std::uint64_t> delivered_{0}, taken_{0};
  std::atomic<bool> closed_{false};
  std::atomic<std::uint64_t> window_{0};  // credits: set before the run, doubled by grow()
  std::atomic<std::uint64_t> extra_{0};   // what grow() added, not yet granted
  std::uint64_t most_ = 0;               // the delivering thread's
  std::atomic<std::uint64_t> granted_{0};  // taken tokens granted back (plus forgiven ones)
  std::atomic<bool> credit_rung_{false};
  std::atomic<bool> released_{false};
  bool released_sent_ = false;  // the I/O thread's
  static constexpr std::uint64_t kReleased = std::uint64_t{1} << 62;
};

}  // namespace redflow::stream
