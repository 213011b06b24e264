// The runtime end to end: every shape, both schedulers, several tile counts and
// slot budgets, compared with the sequential reference.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "test_graphs.hpp"

namespace redflow {
namespace {

using testing::Shape;
using testing::make_inputs;

struct Config {
  Scheduler scheduler;
  unsigned tiles;
  unsigned slots;
  unsigned cores;
};

std::string config_name(const Config& c) {
  return std::string(to_string(c.scheduler)) + "_t" + std::to_string(c.tiles) + "_s" + std::to_string(c.slots) + "_c" + std::to_string(c.cores);
}

class RuntimeShapes : public ::testing::TestWithParam<Config> {};

std::vector<Shape> all_shapes() {
  std::vector<Shape> v;
  v.push_back(testing::chain(20));
  v.push_back(testing::diamond());
  v.push_back(testing::fan_out_fan_in(6));
  for (std::uint32_t seed = 1; seed <= 4; ++seed) v.push_back(testing::random_dag(60, seed));
  return v;
}

TEST_P(RuntimeShapes, OutputsEqualSequentialReference) {
  const Config c = GetParam();
  Registry reg = testing::test_registry();
  RuntimeOptions o;
  o.scheduler = c.scheduler;
  o.tiles = c.tiles;
  o.slots = c.slots;
  o.cores_per_tile = c.cores;
  o.slot_bytes = testing::kBytes;
  Runtime rt(o);
  std::uint64_t displacements = 0;
  for (Shape& s : all_shapes()) {
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok()) << s.name << ": " << loaded.status().ToString();
    for (std::uint32_t round = 0; round < 3; ++round) {
      std::vector<std::vector<std::byte>> storage;
      Inputs in = make_inputs(s, storage, 100 * round + 1);
      auto out = loaded->execute(in);
      ASSERT_TRUE(out.ok()) << s.name << ": " << out.status().ToString();
      Outputs expected = testing::run_sequential(s.graph, reg, in);
      ASSERT_EQ(out->size(), expected.size()) << s.name;
      for (const auto& [name, bytes] : expected) EXPECT_TRUE(out->at(name) == bytes) << s.name << " output " << name << " round " << round;
      const ExecutionStats& st = loaded->last_stats();
      EXPECT_EQ(st.actors_executed, s.graph.actors().size()) << s.name;
      EXPECT_EQ(st.tiles.size(), c.tiles);
      displacements += st.displacements;
    }
  }
  // With three slots, random DAGs with three inputs per actor must displace live data.
  if (c.slots <= 4) {
    EXPECT_GT(displacements, 0u) << "tiny slot budget should force displacement";
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllConfigs, RuntimeShapes,
    ::testing::Values(Config{Scheduler::kHeft, 1, 16, 1}, Config{Scheduler::kHeft, 2, 16, 1}, Config{Scheduler::kHeft, 5, 16, 1},
                      Config{Scheduler::kSteal, 1, 16, 1}, Config{Scheduler::kSteal, 2, 16, 1}, Config{Scheduler::kSteal, 5, 16, 1},
                      Config{Scheduler::kHeft, 2, 4, 1}, Config{Scheduler::kSteal, 2, 4, 1}, Config{Scheduler::kHeft, 5, 4, 1},
                      Config{Scheduler::kSteal, 5, 4, 1}, Config{Scheduler::kSteal, 2, 16, 3}, Config{Scheduler::kHeft, 1, 4, 2}),
    [](const ::testing::TestParamInfo<Config>& info) { return config_name(info.param); });

TEST(RuntimeTest, StealingStealsOnWideGraphs) {
  Registry reg = testing::test_registry();
  RuntimeOptions o;
  o.scheduler = Scheduler::kSteal;
  o.tiles = 4;
  Runtime rt(o);
  Shape s = testing::fan_out_fan_in(64);
  auto loaded = rt.load(s.graph, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::uint64_t steals = 0;
  for (int i = 0; i < 20; ++i) {
    std::vector<std::vector<std::byte>> storage;
    ASSERT_TRUE(loaded->execute(make_inputs(s, storage, i)).ok());
    steals += loaded->last_stats().steals;
    std::uint64_t per_tile = 0;
    for (const auto& t : loaded->last_stats().tiles) per_tile += t.steals;
    EXPECT_EQ(per_tile, loaded->last_stats().steals);
  }
  // Initial work lands on random tiles and the join work is chained, so idle tiles must steal.
  EXPECT_GT(steals, 0u);
}

TEST(RuntimeTest, ActorFailureNamesTheActor) {
  Registry reg = testing::test_registry();
  Graph g;
  DataId x = g.input("X", 8), m = g.inner("M", 8), y = g.output("Y", 8);
  g.actor("fine", "t.mix", {x}, m);
  g.actor("broken", "t.fail_if", {x, m}, y);
  for (Scheduler sch : {Scheduler::kHeft, Scheduler::kSteal}) {
    RuntimeOptions o;
    o.scheduler = sch;
    o.tiles = 2;
    Runtime rt(o);
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok());
    std::vector<std::byte> failing(8), clean(8, std::byte{3});
    std::memcpy(failing.data(), &testing::kFailWord, 4);
    auto out = loaded->execute({{"X", failing}});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("'broken'"), std::string::npos) << out.status().ToString();
    EXPECT_NE(out.status().message().find("asked to fail"), std::string::npos);
    // The loaded graph stays usable: the next, clean execution gives the right output.
    auto again = loaded->execute({{"X", clean}});
    ASSERT_TRUE(again.ok()) << to_string(sch) << ": " << again.status().ToString();
    EXPECT_EQ(*again, testing::run_sequential(g, reg, {{"X", clean}})) << to_string(sch);
  }
}

TEST(RuntimeTest, BadInputsAreRefusedByName) {
  Registry reg = testing::test_registry();
  Shape s = testing::diamond();
  RuntimeOptions o;
  o.tiles = 2;
  Runtime rt(o);
  auto loaded = rt.load(s.graph, reg);
  ASSERT_TRUE(loaded.ok());
  std::vector<std::byte> short_input(3), right(testing::kBytes);
  auto r1 = loaded->execute({{"X", short_input}});
  ASSERT_FALSE(r1.ok());
  EXPECT_NE(r1.status().message().find("'X'"), std::string::npos);
  auto r2 = loaded->execute({});
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("'X'"), std::string::npos);
  auto r3 = loaded->execute({{"X", right}, {"Nope", right}});
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.status().message().find("'Nope'"), std::string::npos);
}

TEST(RuntimeTest, OutputsFeedAnotherGraph) {
  // Algorithm 1: the result of one execution is the input of the next, of another graph.
  Registry reg = testing::test_registry();
  Runtime rt(RuntimeOptions{.tiles = 2});
  Shape a = testing::chain(5), b = testing::diamond();
  auto la = rt.load(a.graph, reg);
  auto lb = rt.load(b.graph, reg);
  ASSERT_TRUE(la.ok() && lb.ok());
  auto x = testing::random_bytes(testing::kBytes, 3);
  auto ya = la->execute({{"X", x}});
  ASSERT_TRUE(ya.ok());
  auto yb = lb->execute({{"X", ya->at("Y")}});
  ASSERT_TRUE(yb.ok());
  auto ref_a = testing::run_sequential(a.graph, reg, {{"X", x}});
  auto ref_b = testing::run_sequential(b.graph, reg, {{"X", ref_a.at("Y")}});
  EXPECT_TRUE(yb->at("Y") == ref_b.at("Y"));
}

TEST(RuntimeTest, StatsJsonHasTheDocumentedKeys) {
  Registry reg = testing::test_registry();
  Runtime rt(RuntimeOptions{.tiles = 2});
  Shape s = testing::diamond();
  auto loaded = rt.load(s.graph, reg);
  ASSERT_TRUE(loaded.ok());
  auto x = testing::random_bytes(testing::kBytes, 3);
  ASSERT_TRUE(loaded->execute({{"X", x}}).ok());
  const std::string json = loaded->last_stats().to_json();
  for (const char* key : {"makespan_s", "actors_executed", "transfers", "transfer_bytes", "steals", "tiles", "busy_s", "actors"})
    EXPECT_NE(json.find(std::string("\"") + key + "\""), std::string::npos) << key;
  EXPECT_GT(loaded->last_stats().transfers, 0u);
}


// busy_s is the time spent inside actor functions (timed with a cheap clock
// where the TSC is trusted): it must agree with what the actors really took.
TEST(RuntimeTest, BusyTimeMeasuresTheActors) {
  Registry reg;
  reg.add("spin2ms", [](ActorContext&) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
  });
  Graph g("busy");
  DataId prev = g.input("X", 4);
  for (int i = 0; i < 10; ++i) {
    DataId next = i == 9 ? g.output("Y", 4) : g.inner(testing::numbered("d", i), 4);
    g.actor(testing::numbered("a", i), "spin2ms", {prev}, next);
    prev = next;
  }
  for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
    Runtime rt(RuntimeOptions{.tiles = 2, .scheduler = sched, .time_actors = true});
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok());
    std::vector<std::byte> x(4);
    ASSERT_TRUE(loaded->execute({{"X", x}}).ok());
    const ExecutionStats& st = loaded->last_stats();
    double busy = st.driver.busy_s;
    for (const TileStats& t : st.tiles) busy += t.busy_s;
    EXPECT_GE(busy, 0.020 * 0.98) << to_string(sched);
    EXPECT_LE(busy, st.makespan_s * 1.02) << to_string(sched);
    // Not asked for: the clock is not read around actors, busy_s stays 0.
    ASSERT_TRUE(loaded->execute({{"X", x}}, ExecuteOptions{.time_actors = false}).ok());
    for (const TileStats& t : loaded->last_stats().tiles) EXPECT_EQ(t.busy_s, 0.0) << to_string(sched);
    EXPECT_EQ(loaded->last_stats().driver.busy_s, 0.0) << to_string(sched);
  }
}

}  // namespace
}  // namespace redflow

namespace redflow {
namespace {

// Split and collect run on the driver by setting pointers where they can
// (docs/runtime.md); every aliasing case must still compute what the plain
// functions compute.
TEST(RuntimeTest, ZeroCopySplitAndCollectMatchTheReference) {
  Registry reg = Registry::with_builtins();
  reg.add("t.mix", testing::mix);
  const std::size_t q = testing::kBytes / 4;  // a quarter
  Graph g("special");
  DataId x = g.input("X", testing::kBytes);
  DataId k = g.constant("K", testing::random_bytes(q, 9));
  // Split an input node into four quarters; one quarter is also a graph output.
  std::vector<DataId> quarters;
  for (int i = 0; i < 4; ++i) {
    DataId part = i == 3 ? g.output("Q3", q) : g.inner(testing::numbered("q", i), q);
    g.actor(testing::numbered("split", i), "rf.split", {x}, part).args(testing::numbered("offset=", i * q));
    quarters.push_back(part);
  }
  // Work on tiles, outputs read only by collects (aliased into them).
  std::vector<DataId> worked;
  for (int i = 0; i < 4; ++i) {
    DataId w = g.inner(testing::numbered("w", i), q);
    g.actor(testing::numbered("work", i), "t.mix", {quarters[i], k}, w).args(testing::numbered("salt=", i));
    worked.push_back(w);
  }
  // Inner collects feeding an outer collect (nested aliasing), one reading a node twice,
  // one reading a split output and a constant directly (no aliasing possible).
  DataId left = g.inner("left", 2 * q), right = g.inner("right", 3 * q), odd = g.inner("odd", 3 * q);
  g.actor("collect_left", "rf.collect", {worked[0], worked[1]}, left);
  g.actor("collect_right", "rf.collect", {worked[2], worked[3], worked[3]}, right);
  g.actor("collect_odd", "rf.collect", {quarters[1], k, quarters[2]}, odd);
  DataId all = g.output("ALL", 8 * q);
  g.actor("collect_all", "rf.collect", {left, right, odd}, all);
  // A tile reads a split of a collect's output.
  DataId tail = g.inner("tail", q), y = g.output("Y", q);
  g.actor("split_tail", "rf.split", {all}, tail).args(testing::numbered("offset=", 7 * q));
  g.actor("last", "t.mix", {tail, quarters[0]}, y).args("salt=99");

  for (Scheduler sch : {Scheduler::kHeft, Scheduler::kSteal}) {
    for (unsigned slots : {3u, 16u}) {
      RuntimeOptions o;
      o.scheduler = sch;
      o.tiles = 2;
      o.slots = slots;
      Runtime rt(o);
      auto loaded = rt.load(g, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      for (std::uint32_t round = 0; round < 3; ++round) {
        auto xs = testing::random_bytes(testing::kBytes, 40 + round);
        auto out = loaded->execute({{"X", xs}});
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        auto ref = testing::run_sequential(g, reg, {{"X", xs}});
        for (const auto& [name, bytes] : ref) EXPECT_TRUE(out->at(name) == bytes) << name << " " << to_string(sch) << " slots " << slots;
        EXPECT_EQ(loaded->last_stats().driver.actors, 9u);  // 5 splits, 4 collects
      }
    }
  }
}

// A split's offset is in bytes, and may be odd: the range is then copied to
// an aligned home, so that an actor's typed view (ctx.input<std::uint32_t>)
// is never misaligned, on the driver (too few slots for the reader) or on a
// tile reading main memory in place.
TEST(RuntimeTest, ASplitAtAnOddOffsetHandsItsReadersAnAlignedValue) {
  static std::atomic<int> misaligned{0};
  static std::atomic<int> reads{0};
  Registry reg = Registry::with_builtins();
  reg.add("t.probe", ActorFunction{[](ActorContext& ctx) {
    for (std::size_t i = 0; i < ctx.num_inputs(); ++i) {
      reads.fetch_add(1);
      if (reinterpret_cast<std::uintptr_t>(ctx.input_bytes(i).data()) % alignof(std::max_align_t) != 0) misaligned.fetch_add(1);
    }
    const auto a = ctx.input<std::uint32_t>(0), b = ctx.input<std::uint32_t>(1);
    auto out = ctx.output<std::uint32_t>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = a[i] * b[i] + 1;
  }});
  Graph g("odd-splits");
  const DataId k = g.constant("K", testing::random_bytes(1012, 5));
  const DataId x = g.input("X", 116);
  for (int i = 0; i < 4; ++i) {
    // Offsets 689, 1, 2 and 16: three misaligned, one aligned (zero-copy).
    const int offset = std::array{689, 1, 2, 16}[i];
    const DataId part = g.inner(testing::numbered("part", i), 116);
    g.actor(testing::numbered("split", i), "rf.split", {k}, part).args(testing::numbered("offset=", offset));
    g.actor(testing::numbered("probe", i), "t.probe", {x, part}, g.output(testing::numbered("Y", i), 116));
  }
  // A graph output at an odd offset, read by a probe, and split again at offset 0: that range is misaligned too.
  const DataId odd = g.output("ODD", 116), again = g.inner("again", 116);
  g.actor("split_odd", "rf.split", {k}, odd).args("offset=3");
  g.actor("split_again", "rf.split", {odd}, again).args("offset=0");
  g.actor("probe_odd", "t.probe", {x, odd}, g.output("Y4", 116));
  g.actor("probe_again", "t.probe", {x, again}, g.output("Y5", 116));
  const auto xs = testing::random_bytes(116, 6);
  const auto ref = testing::run_sequential(g, reg, {{"X", xs}});
  for (Scheduler sch : {Scheduler::kHeft, Scheduler::kSteal}) {
    // 1 tile of 2 slots: the probes run on the driver; 2 tiles of 16: on the tiles.
    for (auto [tiles, slots] : {std::pair{1u, 2u}, std::pair{2u, 16u}}) {
      RuntimeOptions o;
      o.scheduler = sch;
      o.tiles = tiles;
      o.slots = slots;
      o.slot_bytes = 1024;
      Runtime rt(o);
      auto loaded = rt.load(g, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      for (int round = 0; round < 3; ++round) {
        misaligned = 0;
        reads = 0;
        auto out = loaded->execute({{"X", xs}});
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        for (const auto& [name, bytes] : ref) EXPECT_TRUE(out->at(name) == bytes) << name << " " << to_string(sch) << " tiles " << tiles;
        EXPECT_EQ(reads.load(), 12) << "every probe ran once";
        EXPECT_EQ(misaligned.load(), 0) << to_string(sch) << " tiles " << tiles << " slots " << slots;
      }
    }
  }
}

}  // namespace
}  // namespace redflow

namespace redflow {
namespace {

TEST(RuntimeTest, UnreservableTileMemoryIsAnErrorNotACrash) {
  RuntimeOptions o;
  o.tiles = 2;
  o.slots = 1u << 20;
  o.slot_bytes = std::size_t{1} << 40;  // 2^61 bytes per tile: no machine reserves that
  Runtime rt(o);
  Registry reg = testing::test_registry();
  auto loaded = rt.load(testing::diamond().graph, reg);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(loaded.status().message().find("slot"), std::string::npos) << loaded.status().ToString();
}

}  // namespace
}  // namespace redflow
