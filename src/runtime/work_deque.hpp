// WorkDeque: the per-tile double-ended queue of work stealing (section 4.2 of
// Kühbacher et al.), as a Chase–Lev lock-free deque (Lê et al., PPoPP'13
// memory orders). The owning tile pushes and takes at the front (LIFO, so the
// successor it just made ready runs next); thieves take from the back.
// Capacity is fixed when a graph is loaded: every actor is pushed at most once
// per execution, so a deque never holds more than the graph's actor count and
// never allocates while running.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "redflow/huge_page_allocator.hpp"
#include "runtime/fence.hpp"

namespace redflow::runtime {

class WorkDeque {
 public:
  explicit WorkDeque(std::size_t min_capacity = 64) { reserve(min_capacity); }

  // Not thread-safe: only between executions.
  void reserve(std::size_t min_capacity) {
    std::size_t cap = 64;
    while (cap < min_capacity) cap <<= 1;
    if (cap <= mask_ + 1 && buffer_) return;
    buffer_ = make_huge_page_array<std::atomic<std::uint32_t>>(cap);
    mask_ = cap - 1;
    top_.store(0, std::memory_order_relaxed);
    bottom_.store(0, std::memory_order_relaxed);
  }

  // Not thread-safe: only between executions. An execution stopped by an
  // error leaves work behind; the next one must not run it.
  void clear() {
    top_.store(0, std::memory_order_relaxed);
    bottom_.store(0, std::memory_order_relaxed);
  }

  // Owner only.
  void push(std::uint32_t item) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    buffer_[static_cast<std::size_t>(b) & mask_].store(item, std::memory_order_relaxed);
    thread_fence(std::memory_order_release);
    // Release as well as the fence (free on x86): ThreadSanitizer does not
    // model fences, and without a release store a thief's acquire load of
    // bottom synchronised with nothing it could see, so what the owner wrote
    // before pushing (a vote's alias, say) was reported as a race on the
    // thief's reads (wire_difftest_seeds, 1 run in 7).
    bottom_.store(b + 1, std::memory_order_release);
  }

  // Owner only: the most recently pushed item.
  std::optional<std::uint32_t> pop() {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    bottom_.store(b, std::memory_order_relaxed);
    thread_fence(std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return std::nullopt;
    }
    std::uint32_t item = buffer_[static_cast<std::size_t>(b) & mask_].load(std::memory_order_relaxed);
    if (t == b) {
      // Last item: race against thieves for it.
      const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      if (!won) return std::nullopt;
    }
    return item;
  }

  // Any thread: the oldest item.
  std::optional<std::uint32_t> steal() {
    std::int64_t t = top_.load(std::memory_order_acquire);
    thread_fence(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return std::nullopt;
    std::uint32_t item = buffer_[static_cast<std::size_t>(t) & mask_].load(std::memory_order_relaxed);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) return std::nullopt;
    return item;
  }

  bool empty() const {
    return bottom_.load(std::memory_order_relaxed) <= top_.load(std::memory_order_relaxed);
  }
  std::size_t size_estimate() const {
    const auto d = bottom_.load(std::memory_order_relaxed) - top_.load(std::memory_order_relaxed);
    return d > 0 ? static_cast<std::size_t>(d) : 0;
  }

 private:
  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  alignas(64) HugePageArray<std::atomic<std::uint32_t>> buffer_;
  std::size_t mask_ = 0;
};

}  // namespace redflow::runtime
