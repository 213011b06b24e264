// HugePageAllocator's mappings, and the malloc settings of
// reuse_freed_buffers(): both keep large arrays from being faulted in 4 KiB
// at a time (docs/runtime.md, "Graphs of a million actors").
#include "redflow/huge_page_allocator.hpp"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace redflow::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kPage = 4096;
// Below one huge page an array takes malloc's memory.
constexpr std::size_t kLarge = kHugePage;

// The array's last, partial huge page is a huge page too when it is at
// least half used: the rest of it is resident for nothing (at most 1 MiB),
// and 256 or more 4 KiB page faults are spared. Under half, it stays in
// 4 KiB pages.
std::size_t huge_bytes(std::size_t bytes) {
  const std::size_t whole = bytes / kHugePage * kHugePage;
  return bytes - whole >= kHugePage / 2 ? whole + kHugePage : whole;
}
std::size_t mapped_bytes(std::size_t bytes) { return std::max(huge_bytes(bytes), (bytes + kPage - 1) / kPage * kPage); }
}  // namespace

// A mapping of its own, 2 MiB aligned, so the advice covers exactly this
// array and ends with it: advice on malloc's heap would outlive the array
// and let the kernel fill the heap's later, sparse use with huge pages.
void* allocate_large(std::size_t bytes) {
  if (bytes < kLarge) return ::operator new(bytes);
  const std::size_t size = mapped_bytes(bytes);
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > base) munmap(raw, aligned - base);
  if (const std::uintptr_t tail = base + size + kHugePage - (aligned + size); tail > 0)
    munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* p = reinterpret_cast<void*>(aligned);
  // Advice: where the kernel does not take it, 4 KiB pages work the same.
  madvise(p, huge_bytes(bytes), MADV_HUGEPAGE);
  return p;
}

void deallocate_large(void* p, std::size_t bytes) noexcept {
  if (bytes < kLarge) {
    ::operator delete(p);
    return;
  }
  munmap(p, mapped_bytes(bytes));
}

}  // namespace redflow::detail

namespace redflow {

bool reuse_freed_buffers() {
  // 32 MiB is the largest mmap threshold glibc takes; above it a block is a
  // mapping of its own again. Freed memory at the heap's top is returned to
  // the kernel past 128 MiB, so a burst does not stay resident for good.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 128 << 20) == 1;
  return mmap_ok && trim_ok;
}

}  // namespace redflow
