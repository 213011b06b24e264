// thread_fence: std::atomic_thread_fence, except under ThreadSanitizer, which
// does not model fences (GCC refuses them with -Werror=tsan). There every
// fence becomes a seq_cst read-modify-write of one shared atomic: all fencing
// threads then synchronise through it, which TSan understands, at a cost that
// only sanitizer builds pay.
#pragma once

#include <atomic>

namespace redflow::runtime {

#if defined(__SANITIZE_THREAD__)
inline void thread_fence(std::memory_order) {
  static std::atomic<unsigned> fence_word{0};
  fence_word.fetch_add(0, std::memory_order_seq_cst);
}
#else
inline void thread_fence(std::memory_order order) { std::atomic_thread_fence(order); }
#endif

}  // namespace redflow::runtime
