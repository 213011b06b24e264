// HugePageAllocator: large per-actor arrays are their own 2 MiB-aligned
// mappings advised for huge pages, and filling one costs a few page faults
// where 4 KiB pages cost one per page (docs/performance.md, "Load under 1 s,
// large arrays on huge pages": the load figures rest on it); small arrays
// stay malloc's.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "redflow/graph.hpp"
#include "redflow/huge_page_allocator.hpp"
#include "redflow/schedule.hpp"

namespace redflow {
namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// The kernel's transparent huge page mode: "always", "madvise" or "never".
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string all;
  std::getline(in, all);
  const auto open = all.find('['), close = all.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : all.substr(open + 1, close - open - 1);
}

// The smaps field (kB) of the mapping that holds `p`.
long smaps_kb(const void* p, const std::string& field) {
  std::ifstream in("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

TEST(HugePageAllocator, LargeArraysAreAlignedAndFilledWithFewFaults) {
  constexpr std::size_t kCount = 4u << 20;  // 32 MiB of doubles
  const long before = minor_faults();
  HugePageVector<double> v(kCount, 1.0);
  const long faults = minor_faults() - before;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % (2u << 20), 0u) << "not 2 MiB aligned";
  const std::string mode = thp_mode();
  if (mode == "never" || mode.empty()) GTEST_SKIP() << "transparent huge pages are off here (" << mode << ")";
  // 16 huge pages; 4 KiB pages would take 8,192 faults. AddressSanitizer
  // adds its shadow's (an eighth of the array, in 4 KiB pages: 1,024), so
  // the bound is a quarter of what 4 KiB pages would take.
  EXPECT_LT(faults, 2048) << "filling 32 MiB took " << faults << " page faults";
  EXPECT_GT(smaps_kb(v.data(), "AnonHugePages"), 0) << "the array's mapping has no huge pages";
}

TEST(HugePageAllocator, SmallArraysAndAtomicsWork) {
  HugePageVector<int> small(100, 7);
  for (int x : small) EXPECT_EQ(x, 7);
  small.push_back(8);
  EXPECT_EQ(small.back(), 8);
  // A large array of atomics starts at zero, as make_unique<T[]>() would.
  auto counters = make_huge_page_array<std::atomic<std::uint32_t>>(3u << 20);
  for (std::size_t i = 0; i < (3u << 20); i += 4099) EXPECT_EQ(counters[i].load(), 0u);
  counters[5].fetch_add(2);
  EXPECT_EQ(counters[5].load(), 2u);
  auto none = make_huge_page_array<std::atomic<std::uint64_t>>(0);
  EXPECT_NE(none.get(), nullptr);
}

TEST(HugePageAllocator, ComparesWithAPlainVector) {
  HugePageVector<ActorId> order{3, 1, 2};
  EXPECT_EQ(order, (std::vector<ActorId>{3, 1, 2}));
  EXPECT_NE(order, (std::vector<ActorId>{3, 1}));
  EXPECT_NE(order, (std::vector<ActorId>{3, 1, 4}));
}

TEST(HugePageAllocator, AGraphsNodeArraysUseIt) {
  // Building a large graph must not fault page by page: its node arrays are
  // the largest a load walks.
  Graph g("big");
  DataId prev = g.input("X", 0);
  for (int i = 0; i < 100000; ++i) {
    const DataId next = g.inner("d" + std::to_string(i), 0);
    g.actor("a" + std::to_string(i), "noop", {prev}, next);
    prev = next;
  }
  const std::string mode = thp_mode();
  if (mode == "never" || mode.empty()) GTEST_SKIP() << "transparent huge pages are off here (" << mode << ")";
  EXPECT_GT(smaps_kb(g.actors().data(), "AnonHugePages"), 0);
  EXPECT_GT(smaps_kb(g.data().data(), "AnonHugePages"), 0);
}

// What the redflow command does at start: an 8 MB block freed and asked
// for again is the same memory, not 2,048 fresh page faults.
TEST(ReuseFreedBuffers, AFreedLargeBlockComesBackWithoutPageFaults) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Their allocators are not glibc's (ThreadSanitizer's answers yes and ignores it).
  GTEST_SKIP() << "a sanitizer's allocator";
#endif
#if defined(__GLIBC__)
  ASSERT_TRUE(reuse_freed_buffers()) << "glibc's malloc refused the mmap and trim thresholds";
#else
  if (!reuse_freed_buffers()) GTEST_SKIP() << "this malloc is not glibc's and does not take the settings";
#endif
  constexpr std::size_t kBytes = 8u << 20;
  auto fill = [](std::size_t bytes) {
    auto* p = static_cast<volatile char*>(std::malloc(bytes));
    for (std::size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    std::free(const_cast<char*>(p));
  };
  fill(kBytes);  // the heap grows to hold it once
  const long before = minor_faults();
  for (int round = 0; round < 4; ++round) fill(kBytes);
  const long faults = minor_faults() - before;
  EXPECT_LT(faults, 200) << "4 rounds of an 8 MB block took " << faults << " page faults (a fresh one each: 8,192)";
}

}  // namespace
}  // namespace redflow
