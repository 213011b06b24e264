// The promise of LoadedGraph::execute_into (include/redflow/runtime.hpp):
// warm, without a trace and without fault injection, an execution performs no
// heap allocation. This binary replaces the global operator new with one that
// counts while a flag is set, in every thread (the tile runners too), and runs
// graphs that take every part of the fast path: slots, tile-to-tile and
// in-place reads, 0-byte nodes, write-backs, split and collect on the driver,
// a collect whose inputs are written straight into the caller's buffer.
// Its own binary: a replaced operator new would count for every test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "redflow/redflow.hpp"
#include "stream/token_queue.hpp"

// GCC cannot see that the replaced operator new below is malloc.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> counting{false};
std::atomic<std::uint64_t> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return ::operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

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

// The promise covers what execute_into() promises, not more: a trace records
// per actor, so it allocates; the test proves the counter sees tile threads.
TEST(WarmExecuteTest, CounterSeesTheTileThreads) {
  Registry reg;
  reg.add("grab", [](ActorContext& ctx) {
    std::vector<int> v(100);  // an allocation inside an actor, on a tile thread
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
  EXPECT_EQ(allocations.load(), 1u);
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
