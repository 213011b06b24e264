// Notifier: lets idle workers sleep instead of spinning, without a syscall on
// the producer's side when nobody sleeps. A sleeper announces itself, re-checks
// for work, then waits on an epoch; a producer that published work bumps the
// epoch and wakes only if someone announced. The seq_cst fences make the
// "publish, then look for sleepers" / "announce, then look for work" pair safe
// against lost wake-ups.
#pragma once

#include <atomic>
#include <cstdint>

#include "runtime/fence.hpp"

namespace redflow::runtime {

class Notifier {
 public:
  // Sleeper side: call prepare(), re-check for work, then either cancel() or wait(token).
  std::uint32_t prepare() {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    return epoch_.load(std::memory_order_seq_cst);
  }
  void cancel() { sleepers_.fetch_sub(1, std::memory_order_seq_cst); }
  void wait(std::uint32_t token) {
    epoch_.wait(token, std::memory_order_seq_cst);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }

  // Producer side, after publishing work.
  void notify_one() {
    thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    epoch_.notify_one();
  }
  void notify_all() {
    thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    epoch_.notify_all();
  }

 private:
  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  alignas(64) std::atomic<std::uint32_t> sleepers_{0};
};

}  // namespace redflow::runtime
