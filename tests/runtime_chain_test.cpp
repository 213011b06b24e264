// Chains on the fast path: an actor whose one consumer has it as its only
// input hands that consumer on in the same call (Engine::run_in_place under
// Runner::chaining). Whatever the scheduler, every actor runs exactly once
// per execution, the walk of a HEFT order neither skips nor repeats one, and
// a failure or an exception in the middle of a chain stops it there, and
// each actor of a chain sees its own name, args and input.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "redflow/redflow.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

constexpr std::int32_t kFailOn = 1'000'000;   // "inc" fails on this input
constexpr std::int32_t kThrowOn = 2'000'000;  // and throws on this one
std::atomic<int> inc_runs{0}, dec_runs{0};

Registry chain_registry() {
  Registry reg = Registry::with_builtins();
  reg.add("inc", [](ActorContext& ctx) {
    inc_runs.fetch_add(1, std::memory_order_relaxed);
    const std::int32_t v = ctx.input<const std::int32_t>(0)[0];
    if (v == kFailOn) return ctx.fail("asked to fail at " + std::to_string(v));
    if (v == kThrowOn) throw std::runtime_error("asked to throw at " + std::to_string(v));
    ctx.output<std::int32_t>()[0] = v + 1;
  });
  // Checks that it is actor "n<v>" with args "k=<v>" for its input v: in a
  // chain one context moves from actor to actor, and each must see its own.
  reg.add("named", [](ActorContext& ctx) {
    const std::int32_t v = ctx.input<const std::int32_t>(0)[0];
    if (ctx.num_inputs() != 1 || ctx.actor_name() != "n" + std::to_string(v) || ctx.arg("k") != std::to_string(v))
      return ctx.fail("saw itself as '" + std::string(ctx.actor_name()) + "' with args '" + std::string(ctx.args()) + "' on input " +
                      std::to_string(v));
    ctx.output<std::int32_t>()[0] = v + 1;
  });
  reg.add("dec", [](ActorContext& ctx) {
    dec_runs.fetch_add(1, std::memory_order_relaxed);
    ctx.output<std::int32_t>()[0] = ctx.input<const std::int32_t>(0)[0] - 1;
  });
  return reg;
}

// Two chains from X: `up` of "inc" actors to Y, `down` of "dec" actors to Z,
// and every tenth `up` value also read by a "dec" that ends in a dead value
// (an actor with two consumers breaks the chain there).
Graph two_chains(int up, int down) {
  Graph g("chains");
  const DataId x = g.input("X", 4);
  DataId prev = x;
  for (int i = 0; i < up; ++i) {
    const DataId next = i + 1 == up ? g.output("Y", 4) : g.inner("u" + std::to_string(i), 4);
    g.actor("inc" + std::to_string(i), "inc", {prev}, next);
    if (i % 10 == 5 && i + 1 < up) g.actor("side" + std::to_string(i), "dec", {next}, g.inner("s" + std::to_string(i), 4));
    prev = next;
  }
  prev = x;
  for (int i = 0; i < down; ++i) {
    const DataId next = i + 1 == down ? g.output("Z", 4) : g.inner("d" + std::to_string(i), 4);
    g.actor("dec" + std::to_string(i), "dec", {prev}, next);
    prev = next;
  }
  return g;
}

std::int32_t value_of(const std::vector<std::byte>& bytes) {
  std::int32_t v = 0;
  std::memcpy(&v, bytes.data(), 4);
  return v;
}

TEST(RuntimeChains, EveryActorRunsOnceAndTheOutputsAreTheChainsLength) {
  constexpr int kUp = 3000, kDown = 1200;
  const int sides = (kUp - 1 - 5) / 10 + 1;  // i % 10 == 5 below kUp - 1
  const Registry reg = chain_registry();
  const Graph g = two_chains(kUp, kDown);
  for (Scheduler sch : {Scheduler::kHeft, Scheduler::kSteal})
    for (unsigned tiles : {1u, 2u, 3u}) {
      Runtime rt({.tiles = tiles, .scheduler = sch});
      auto loaded = rt.load(g, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      for (int k = 0; k < 4; ++k) {
        inc_runs = 0;
        dec_runs = 0;
        std::vector<std::byte> x(4);
        const std::int32_t start = 100 * k;
        std::memcpy(x.data(), &start, 4);
        // A walk that skipped an actor would wait for it forever.
        auto out = testing::within_seconds(60, "an execution of two chains", [&] { return loaded->execute({{"X", x}}); });
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_EQ(value_of(out->at("Y")), start + kUp) << to_string(sch) << ", " << tiles << " tiles";
        EXPECT_EQ(value_of(out->at("Z")), start - kDown) << to_string(sch) << ", " << tiles << " tiles";
        EXPECT_EQ(inc_runs.load(), kUp) << to_string(sch) << ", " << tiles << " tiles, execution " << k;
        EXPECT_EQ(dec_runs.load(), kDown + sides) << to_string(sch) << ", " << tiles << " tiles, execution " << k;
      }
    }
}

// An actor that fails (ctx.fail) or throws in the middle of a chain: the
// error names it, no actor after it runs, and the next execution runs the
// whole chain again.
TEST(RuntimeChains, AFailureOrAnExceptionInTheMiddleOfAChainStopsItThere) {
  constexpr int kUp = 3000;
  struct Case {
    std::int32_t trigger;  // the input on which "inc" fails or throws
    int at;                // the actor of the chain that reads it
    const char* says;
  };
  const Registry reg = chain_registry();
  const Graph g = two_chains(kUp, 10);
  for (const Case& c : {Case{kFailOn, 1700, "asked to fail at"}, Case{kThrowOn, 900, "threw: asked to throw at"}})
    for (Scheduler sch : {Scheduler::kHeft, Scheduler::kSteal}) {
      Runtime rt({.tiles = 2, .scheduler = sch});
      auto loaded = rt.load(g, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      inc_runs = 0;
      std::vector<std::byte> x(4);
      const std::int32_t start = c.trigger - c.at;  // actor inc<at> reads the trigger
      std::memcpy(x.data(), &start, 4);
      auto out = testing::within_seconds(60, "an execution that fails mid-chain", [&] { return loaded->execute({{"X", x}}); });
      ASSERT_FALSE(out.ok()) << to_string(sch);
      EXPECT_NE(out.status().message().find("'inc" + std::to_string(c.at) + "'"), std::string::npos) << out.status().ToString();
      EXPECT_NE(out.status().message().find(c.says), std::string::npos) << out.status().ToString();
      EXPECT_EQ(inc_runs.load(), c.at + 1) << to_string(sch) << ": no actor after the failed one ran";
      inc_runs = 0;
      const std::int32_t clean = 0;
      std::memcpy(x.data(), &clean, 4);
      auto again = testing::within_seconds(60, "the execution after it", [&] { return loaded->execute({{"X", x}}); });
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_EQ(value_of(again->at("Y")), kUp);
      EXPECT_EQ(inc_runs.load(), kUp);
    }
}

TEST(RuntimeChains, EachActorOfAChainSeesItsOwnNameArgsAndInput) {
  constexpr int kLength = 2500;
  Graph g("named");
  DataId prev = g.input("X", 4);
  for (int i = 0; i < kLength; ++i) {
    const DataId next = i + 1 == kLength ? g.output("Y", 4) : g.inner("v" + std::to_string(i), 4);
    g.actor("n" + std::to_string(i), "named", {prev}, next).args("k=" + std::to_string(i));
    prev = next;
  }
  const Registry reg = chain_registry();
  for (Scheduler sch : {Scheduler::kHeft, Scheduler::kSteal})
    for (unsigned tiles : {1u, 2u}) {
      Runtime rt({.tiles = tiles, .scheduler = sch});
      auto loaded = rt.load(g, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      for (int k = 0; k < 2; ++k) {
        std::vector<std::byte> x(4);
        auto out = testing::within_seconds(60, "a chain of named actors", [&] { return loaded->execute({{"X", x}}); });
        ASSERT_TRUE(out.ok()) << to_string(sch) << ", " << tiles << " tiles: " << out.status().ToString();
        EXPECT_EQ(value_of(out->at("Y")), kLength);
      }
    }
}

}  // namespace
}  // namespace redflow
