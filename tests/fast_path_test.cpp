// The lean per-actor path and bytes that move once (docs/performance.md):
// execute_into() writes outputs into the caller's buffers and refuses bad
// ones before running; 0-byte data nodes and main-memory inputs read in place
// are not transfers; per-tile transfers_in counts only copies into the tile
// (write-backs are transfers_out); waiting for a busy word sleeps instead of
// spinning.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "redflow/redflow.hpp"
#include "runtime/engine_job.hpp"

namespace redflow {
namespace {

void add1(ActorContext& ctx) {
  auto out = ctx.output<std::int32_t>();
  auto in = ctx.input<std::int32_t>(0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = in[i] + 1;
}

Registry registry() {
  Registry reg = Registry::with_builtins();
  reg.add("add1", add1);
  reg.add("nothing", [](ActorContext&) {});
  return reg;
}

// X -> a -> b -> Y, 16-byte nodes.
Graph chain3() {
  Graph g("chain3");
  DataId x = g.input("X", 16), m = g.inner("M", 16), n = g.inner("N", 16);
  g.actor("a", "add1", {x}, m);
  g.actor("b", "add1", {m}, n);
  g.actor("c", "add1", {n}, g.output("Y", 16));
  return g;
}

TEST(ExecuteIntoTest, WritesOutputsIntoTheCallersBuffer) {
  const Registry reg = registry();
  for (Scheduler sched : {Scheduler::kSteal, Scheduler::kHeft}) {
    Runtime rt(RuntimeOptions{.tiles = 2, .scheduler = sched});
    auto loaded = rt.load(chain3(), reg);
    ASSERT_TRUE(loaded.ok());
    std::vector<std::int32_t> x{1, 2, 3, 4}, y(4, -1);
    ASSERT_TRUE(loaded->execute_into({{"X", std::as_bytes(std::span<const std::int32_t>(x))}},
                                     {{"Y", std::as_writable_bytes(std::span<std::int32_t>(y))}})
                    .ok());
    EXPECT_EQ(y, (std::vector<std::int32_t>{4, 5, 6, 7})) << to_string(sched);
    // execute() returns the same bytes.
    auto out = loaded->execute({{"X", std::as_bytes(std::span<const std::int32_t>(x))}});
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(0, std::memcmp(out->at("Y").data(), y.data(), 16));
  }
}

TEST(ExecuteIntoTest, RefusesBadBuffersBeforeRunning) {
  const Registry reg = registry();
  Runtime rt(RuntimeOptions{.tiles = 2, .scheduler = Scheduler::kSteal});
  auto loaded = rt.load(chain3(), reg);
  ASSERT_TRUE(loaded.ok());
  std::vector<std::byte> x(16), y(16, std::byte{0x5A}), small(8, std::byte{0x5A});
  const Inputs in{{"X", x}};
  auto untouched = [&] { return std::all_of(y.begin(), y.end(), [](std::byte b) { return b == std::byte{0x5A}; }); };

  Status s = loaded->execute_into(in, {});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("no buffer was given for output data node 'Y'"), std::string::npos) << s.message();

  s = loaded->execute_into(in, {{"Y", std::span<std::byte>(small)}});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("has 8 bytes, its data node declares 16"), std::string::npos) << s.message();

  s = loaded->execute_into(in, {{"Y", std::span<std::byte>(y)}, {"Q", std::span<std::byte>(small)}});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("no output data node 'Q'"), std::string::npos) << s.message();
  EXPECT_TRUE(untouched());

  // The output may not overlap an input: the actors would read what they write.
  s = loaded->execute_into({{"X", std::span<const std::byte>(y)}}, {{"Y", std::span<std::byte>(y)}});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("overlaps input 'X'"), std::string::npos) << s.message();
  EXPECT_TRUE(untouched());
}

// A collect's zero-copy inputs follow the output into the caller's buffer:
// the tiles write them there, and the collect moves nothing.
TEST(ExecuteIntoTest, CollectInputsLandInTheCallersBuffer) {
  const Registry reg = registry();
  Graph g("collect");
  DataId x = g.input("X", 16);
  std::vector<DataId> parts;
  for (int i = 0; i < 4; ++i) {
    parts.push_back(g.inner("p" + std::to_string(i), 16));
    g.actor("a" + std::to_string(i), "add1", {x}, parts.back());
  }
  g.actor("join", "rf.collect", parts, g.output("Y", 64));
  for (Scheduler sched : {Scheduler::kSteal, Scheduler::kHeft}) {
    Runtime rt(RuntimeOptions{.tiles = 2, .scheduler = sched, .trace = true});
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok());
    std::vector<std::int32_t> in{7, 8, 9, 10}, y(16);
    ASSERT_TRUE(loaded->execute_into({{"X", std::as_bytes(std::span<const std::int32_t>(in))}},
                                     {{"Y", std::as_writable_bytes(std::span<std::int32_t>(y))}})
                    .ok());
    for (int p = 0; p < 4; ++p)
      for (int i = 0; i < 4; ++i) ASSERT_EQ(y[p * 4 + i], in[i] + 1) << to_string(sched);
    // Each part moved once: written back by its tile into Y (transfers_out), X read in place.
    const ExecutionStats& st = loaded->last_stats();
    std::uint64_t out = 0, in_tiles = 0;
    for (const TileStats& t : st.tiles) out += t.transfers_out, in_tiles += t.transfers_in;
    EXPECT_EQ(out, 4u) << to_string(sched);
    EXPECT_EQ(in_tiles, 0u) << to_string(sched);
    EXPECT_EQ(st.driver.transfers_in, 0u) << to_string(sched);
    EXPECT_EQ(st.transfers, 4u) << to_string(sched);
  }
}

// 0-byte nodes are ordering only: no slot, no transfer; inputs in main
// memory are read in place. One tile, so no tile-to-tile copies: the only
// transfer is the write-back of Y, counted as the tile's transfers_out.
TEST(TransferCountTest, ZeroByteNodesAndInPlaceReadsAreNotTransfers) {
  const Registry reg = registry();
  Graph g("zero");
  DataId x = g.input("X", 16);
  DataId prev = g.inner("z0", 0);
  g.actor("s", "nothing", {x}, prev);
  for (int i = 1; i < 10; ++i) {
    DataId next = g.inner("z" + std::to_string(i), 0);
    g.actor("n" + std::to_string(i), "nothing", {prev}, next);
    prev = next;
  }
  DataId y = g.output("Y", 16);
  g.actor("last", "add1", {x, prev}, y);
  for (Scheduler sched : {Scheduler::kSteal, Scheduler::kHeft}) {
    Runtime rt(RuntimeOptions{.tiles = 1, .slots = 4, .scheduler = sched});
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok());
    std::vector<std::int32_t> in{1, 2, 3, 4};
    auto out = loaded->execute({{"X", std::as_bytes(std::span<const std::int32_t>(in))}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const ExecutionStats& st = loaded->last_stats();
    EXPECT_EQ(st.tiles[0].transfers_in, 0u) << to_string(sched);
    EXPECT_EQ(st.tiles[0].transfers_out, 1u) << to_string(sched);
    EXPECT_EQ(st.transfers, 1u) << to_string(sched);
    EXPECT_EQ(st.transfer_bytes, 16u) << to_string(sched);
    std::int32_t first;
    std::memcpy(&first, out->at("Y").data(), 4);
    EXPECT_EQ(first, 2);
  }
}

double thread_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Waiting for a main-memory writer (wait_for_home_writer, MainMemory::write)
// must not yield in a loop: with more tiles than cores that burns the core the
// writer needs. It spins briefly, then sleeps until the word changes.
TEST(SpinWaitTest, WaitingForABusyWordSleeps) {
  std::atomic<std::uint32_t> word{runtime::kHomeWriting};
  std::atomic<double> waiter_cpu{-1};
  std::thread waiter([&] {
    const double c0 = thread_cpu_seconds();
    runtime::wait_while(word, runtime::kHomeWriting);
    waiter_cpu.store(thread_cpu_seconds() - c0);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  word.store(runtime::kHomeValid);
  word.notify_all();
  waiter.join();
  EXPECT_GE(waiter_cpu.load(), 0.0);
  EXPECT_LT(waiter_cpu.load(), 0.05) << "the waiter burned CPU while the word stayed busy for 300 ms";
}

}  // namespace
}  // namespace redflow
