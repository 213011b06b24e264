// The promise of LoadedGraph::execute_into (include/redflow/runtime.hpp):
// warm, without a trace and without fault injection, an execution performs no
// heap allocation. This binary replaces glibc's malloc family (malloc,
// calloc, realloc and the aligned ones; operator new and every library call
// into them) with one that counts while a flag is set, in every thread (the
// tile runners too), and runs graphs that take every part of the fast path:
// slots, tile-to-tile and in-place reads, 0-byte nodes, write-backs, split and
// collect on the driver, a collect whose inputs are written straight into the
// caller's buffer.
// Its own binary: a replaced malloc would count for every test.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "redflow/redflow.hpp"
#include "stream/token_queue.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<std::uint64_t> allocations{0};
void count_one() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

// glibc's own entry points: this executable's malloc family interposes on
// every library's calls (libstdc++'s operator new, libredflow, libc itself),
// and forwards to them. free() stays glibc's.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);

void* malloc(std::size_t n) noexcept {
  count_one();
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) noexcept {
  count_one();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) noexcept {
  count_one();
  return __libc_realloc(p, n);
}
void* memalign(std::size_t align, std::size_t n) noexcept {
  count_one();
  return __libc_memalign(align, n);
}
void* aligned_alloc(std::size_t align, std::size_t n) noexcept {
  count_one();
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, std::size_t align, std::size_t n) noexcept {
  count_one();
  void* p = __libc_memalign(align, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace redflow {
namespace {

constexpr std::size_t kWords = 16;  // 64-byte data nodes

// Adds 1 to every int32 of its first input (plus the others' first words).
void inc(ActorContext& ctx) {
  auto out = ctx.output<std::int32_t>();
  auto in = ctx.input<std::int32_t>(0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = in[i] + 1;
  for (std::size_t p = 1; p < ctx.num_inputs(); ++p)
    if (!ctx.input_bytes(p).empty()) out[0] += ctx.input<std::int32_t>(p)[0];
}

// X -> chain of 20 -> fan-out of 8 (64-byte and 0-byte branches) -> a
// collect into output Y; a split of the chain's end feeds a second output Z.
Graph test_graph() {
  Graph g("warm");
  DataId prev = g.input("X", kWords * 4);
  for (int i = 0; i < 20; ++i) {
    DataId next = g.inner("c" + std::to_string(i), kWords * 4);
    g.actor("chain" + std::to_string(i), "inc", {prev}, next);
    prev = next;
  }
  std::vector<DataId> parts;
  for (int i = 0; i < 8; ++i) {
    DataId zero = g.inner("z" + std::to_string(i), 0);
    g.actor("zero" + std::to_string(i), "nothing", {prev}, zero);
    DataId part = g.inner("p" + std::to_string(i), kWords * 4);
    g.actor("part" + std::to_string(i), "inc", {prev, zero}, part);
    parts.push_back(part);
  }
  g.actor("join", "rf.collect", parts, g.output("Y", 8 * kWords * 4));
  DataId half = g.inner("half", kWords * 2);
  g.actor("cut", "rf.split", {prev}, half).args("offset=0");
  g.actor("last", "inc", {half}, g.output("Z", kWords * 2));
  return g;
}

std::vector<std::int32_t> as_ints(std::span<const std::byte> b) {
  std::vector<std::int32_t> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

TEST(WarmExecuteTest, ExecuteIntoDoesNotAllocate) {
  Registry reg = Registry::with_builtins();
  reg.add("inc", inc);
  reg.add("nothing", [](ActorContext&) {});
  for (Scheduler sched : {Scheduler::kSteal, Scheduler::kHeft}) {
    Runtime rt(RuntimeOptions{.tiles = 2, .slots = 8, .slot_bytes = 4096, .scheduler = sched});
    auto loaded = rt.load(test_graph(), reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    std::vector<std::int32_t> x(kWords), y(8 * kWords), z(kWords / 2);
    const Inputs inputs{{"X", std::as_bytes(std::span<const std::int32_t>(x))}};
    const OutputBuffers outputs{{"Y", std::as_writable_bytes(std::span<std::int32_t>(y))},
                                {"Z", std::as_writable_bytes(std::span<std::int32_t>(z))}};
    for (int warm = 0; warm < 2; ++warm) ASSERT_TRUE(loaded->execute_into(inputs, outputs).ok());
    for (int run = 0; run < 20; ++run) {
      x[0] = run;
      allocations.store(0);
      counting.store(true);
      const Status s = loaded->execute_into(inputs, outputs);
      counting.store(false);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(allocations.load(), 0u) << to_string(sched) << " run " << run;
      // The outputs are right: the chain adds 20, each part 1 more, Z 21.
      for (std::size_t p = 0; p < 8; ++p) ASSERT_EQ(y[p * kWords], run + 21) << to_string(sched);
      ASSERT_EQ(z[0], run + 21) << to_string(sched);
      ASSERT_EQ(z[1], 21) << to_string(sched);
    }
    // The counter counts: execute() builds its result map, which allocates.
    allocations.store(0);
    counting.store(true);
    auto out = loaded->execute(inputs);
    counting.store(false);
    ASSERT_TRUE(out.ok());
    EXPECT_GT(allocations.load(), 0u);
    EXPECT_EQ(as_ints(out->at("Y"))[0], 19 + 21);
  }
}

// Where an allocation is kept from being optimised away (a malloc and its free can be).
std::atomic<void*> sink{nullptr};

// The promise covers what execute_into() promises, not more: a trace records
// per actor, so it allocates; the test proves the counter sees tile threads
// and every kind of allocation.
TEST(WarmExecuteTest, CounterSeesTheTileThreads) {
  Registry reg;
  reg.add("grab", [](ActorContext& ctx) {
    std::vector<int> v(100);  // allocations inside an actor, on a tile thread: operator new,
    sink = std::calloc(25, 4);  // calloc,
    sink = std::realloc(sink.load(), 800);  // realloc,
    std::free(sink.load());
    void* aligned = nullptr;  // and posix_memalign
    if (posix_memalign(&aligned, 64, 64) == 0) sink = aligned;
    std::free(sink.load());
    ctx.output<std::int32_t>()[0] = static_cast<std::int32_t>(v.size());
  });
  Graph g("grab");
  g.actor("a", "grab", {g.input("X", 4)}, g.output("Y", 4));
  Runtime rt(RuntimeOptions{.tiles = 1, .scheduler = Scheduler::kSteal});
  auto loaded = rt.load(g, reg);
  ASSERT_TRUE(loaded.ok());
  std::int32_t x = 0, y = 0;
  const Inputs inputs{{"X", std::as_bytes(std::span<const std::int32_t>(&x, 1))}};
  const OutputBuffers outputs{{"Y", std::as_writable_bytes(std::span<std::int32_t>(&y, 1))}};
  ASSERT_TRUE(loaded->execute_into(inputs, outputs).ok());
  allocations.store(0);
  counting.store(true);
  ASSERT_TRUE(loaded->execute_into(inputs, outputs).ok());
  counting.store(false);
  EXPECT_EQ(allocations.load(), 4u);
  EXPECT_EQ(y, 100);
}

// docs/streams.md: an emptied block goes back to the writer, so a steady
// stream (a reader that keeps up) allocates nothing once it runs.
TEST(StreamQueueAlloc, ASteadyStreamAllocatesNothing) {
  stream::TokenQueue q(8);
  std::vector<std::uint64_t> batch(4096), got(4096);
  std::uint64_t next = 0, sum = 0, want = 0;
  auto round = [&] {
    for (auto& v : batch) want += (v = next++);
    q.push_many(batch.data(), batch.size());
    for (std::size_t n; (n = q.pop_many(got.data(), got.size())) > 0;)
      for (std::size_t i = 0; i < n; ++i) sum += got[i];
  };
  for (int warm = 0; warm < 8; ++warm) round();
  allocations.store(0);
  counting.store(true);
  for (int r = 0; r < 1000; ++r) round();  // 4 M tokens, ~1,000 blocks of 32 KiB
  counting.store(false);
  EXPECT_EQ(allocations.load(), 0u);
  EXPECT_EQ(sum, want);
}

}  // namespace
}  // namespace redflow
