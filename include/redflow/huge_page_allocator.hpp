// An allocator for arrays large enough to span many pages: it asks the
// kernel to back them with transparent huge pages (madvise), so that
// filling and walking them costs one page fault and one address-translation
// entry per 2 MiB instead of per 4 KiB. Smaller arrays are plain operator new.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace redflow {

namespace detail {
void* allocate_large(std::size_t bytes);
void deallocate_large(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(detail::allocate_large(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { detail::deallocate_large(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

// A vector whose storage, once large, is backed by huge pages.
template <class T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

// Frees what make_huge_page_array() made.
template <class T>
struct HugePageArrayDeleter {
  std::size_t n = 0;
  void operator()(T* p) const noexcept {
    std::destroy_n(p, n);
    detail::deallocate_large(p, n * sizeof(T));
  }
};

// A fixed array of value-initialised T (atomics too, which a vector cannot
// hold), on huge pages once large.
template <class T>
using HugePageArray = std::unique_ptr<T[], HugePageArrayDeleter<T>>;

template <class T>
HugePageArray<T> make_huge_page_array(std::size_t n) {
  T* p = HugePageAllocator<T>().allocate(n);
  std::uninitialized_value_construct_n(p, n);
  return HugePageArray<T>(p, HugePageArrayDeleter<T>{n});
}

// Tells glibc's malloc to keep freed blocks up to 32 MiB in its heap for
// the next allocation, instead of giving each back to the kernel and
// faulting a fresh one in page by page. Call it first thing in main() of a
// process that moves large values between processes: ZeroMQ receives every
// message into a fresh malloc block, and an 8 MB value's 2,048 page faults
// cost more than its copy where faults are dear (docs/remote.md,
// "Copies"). The `redflow` command calls it; a library does not change its
// host's malloc unasked. Returns false where malloc refused the settings.
bool reuse_freed_buffers();

// Equal to a plain vector of the same elements, so that code comparing a
// schedule's order with a std::vector reads as before.
template <class T>
bool operator==(const HugePageVector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace redflow
