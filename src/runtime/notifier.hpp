// Notifier: lets idle workers sleep instead of spinning, without a syscall on
// the producer's side when nobody sleeps. A sleeper announces itself, re-checks
// for work, then waits on an epoch; a producer that published work bumps the
// epoch and wakes only if someone announced. The seq_cst fences make the
// "publish, then look for sleepers" / "announce, then look for work" pair safe
// against lost wake-ups. The epoch is a Linux futex word: a sleeper may
// also wait with a timeout (wait_for), which std::atomic::wait cannot.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
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
    while (epoch_.load(std::memory_order_seq_cst) == token) futex_wait(token, nullptr);
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
  // wait(), but for at most `timeout`: a sleeper that must look again later
  // even when nobody notifies it (HEFT's idle tiles watching for a tile
  // that fell behind).
  void wait_for(std::uint32_t token, std::chrono::nanoseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (epoch_.load(std::memory_order_seq_cst) == token) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds(0)) break;
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      const timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      futex_wait(token, &ts);
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }

  // Producer side, after publishing work.
  void notify_one() {
    thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(1);
  }
  void notify_all() {
    thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(INT_MAX);
  }

 private:
  // Sleeps while the epoch still holds `token` (returns at once otherwise,
  // on a signal, or after `timeout`); the callers look at the epoch again.
  void futex_wait(std::uint32_t token, const timespec* timeout) {
    (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&epoch_), FUTEX_WAIT_PRIVATE, token, timeout, nullptr, 0);
  }
  void futex_wake(int count) { (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&epoch_), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0); }

  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) && std::atomic<std::uint32_t>::is_always_lock_free);
  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  alignas(64) std::atomic<std::uint32_t> sleepers_{0};
};

}  // namespace redflow::runtime
