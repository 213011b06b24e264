// Load: configurations other than the runtime's
// are built on first use unless eager_schedules asks for all at load; the
// accessors of a configuration that cannot run say why instead of answering
// for another; execute() from two threads keeps each its own inputs; checked
// Result::value(); Registry::add refuses a second function under one name.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "redflow/redflow.hpp"
#include "test_graphs.hpp"

namespace redflow {
namespace {

// x -> a -> b -> y, all t.mix on kBytes.
Graph small_chain() {
  Graph g("chain");
  const DataId x = g.input("x", testing::kBytes);
  const DataId m = g.inner("m", testing::kBytes);
  const DataId y = g.output("y", testing::kBytes);
  g.actor("a", "t.mix", {x}, m).args("salt=1");
  g.actor("b", "t.mix", {m}, y).args("salt=2");
  return g;
}

RuntimeOptions two_tiles(bool eager = false) {
  RuntimeOptions o;
  o.tiles = 2;
  o.slots = 4;
  o.slot_bytes = 1024;
  o.eager_schedules = eager;
  return o;
}

constexpr Redundancy kOthers[] = {Redundancy::kDoubleSame, Redundancy::kTripleSame, Redundancy::kDoubleDiff,
                                  Redundancy::kTripleDiff};

TEST(LazyConfigurations, OnlyTheRuntimesConfigurationIsBuiltAtLoad) {
  Runtime rt(two_tiles());
  auto loaded = rt.load(small_chain(), testing::test_registry());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->scheduled(Redundancy::kNone));
  EXPECT_TRUE(loaded->prepared(Redundancy::kNone));
  for (Redundancy r : kOthers) {
    EXPECT_FALSE(loaded->scheduled(r)) << to_string(r);
    EXPECT_FALSE(loaded->prepared(r)) << to_string(r);
  }
  // A query builds the schedule, not the state; an execution both.
  auto sched = loaded->heft_schedule(Redundancy::kDoubleDiff);
  ASSERT_TRUE(sched.ok()) << sched.status().ToString();
  EXPECT_EQ((*sched)->actors.size(), 6u);  // a and b twice each, and a compare actor for each
  EXPECT_TRUE(loaded->scheduled(Redundancy::kDoubleDiff));
  EXPECT_FALSE(loaded->prepared(Redundancy::kDoubleDiff));
  EXPECT_FALSE(loaded->scheduled(Redundancy::kTripleSame));

  std::vector<std::uint32_t> x(testing::kElems, 7);
  ExecuteOptions eo;
  eo.redundancy = Redundancy::kTripleSame;
  auto same = loaded->execute({{"x", as_bytes_of(x)}}, eo);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_TRUE(loaded->prepared(Redundancy::kTripleSame));
  auto plain = loaded->execute({{"x", as_bytes_of(x)}});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(same->at("y"), plain->at("y"));  // built late, runs the same
}

TEST(LazyConfigurations, EagerBuildsEveryConfigurationAtLoad) {
  Runtime rt(two_tiles(/*eager=*/true));
  auto loaded = rt.load(small_chain(), testing::test_registry());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  for (Redundancy r : kAllRedundancies) {
    EXPECT_TRUE(loaded->scheduled(r)) << to_string(r);
    // Every configuration that can run here has its state; 3x-diff needs a third tile.
    EXPECT_EQ(loaded->prepared(r), r != Redundancy::kTripleDiff) << to_string(r);
  }
}

TEST(LazyConfigurations, EagerRecordsAConfigurationThatCannotRunWithoutFailingLoad) {
  RuntimeOptions o = two_tiles(/*eager=*/true);
  Runtime rt(o);
  auto loaded = rt.load(small_chain(), testing::test_registry());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  // 3x-diff needs three tiles: scheduled (its status is known) but no state.
  EXPECT_TRUE(loaded->scheduled(Redundancy::kTripleDiff));
  EXPECT_FALSE(loaded->usable(Redundancy::kTripleDiff).ok());
  EXPECT_FALSE(loaded->prepared(Redundancy::kTripleDiff));
}

// executed_graph(r) and heft_schedule(r) must not answer with the runtime's
// configuration when r cannot run.
TEST(LazyConfigurations, UnusableConfigurationIsANamedErrorNotAFallback) {
  Runtime rt(two_tiles());
  auto loaded = rt.load(small_chain(), testing::test_registry());
  ASSERT_TRUE(loaded.ok());
  auto g = loaded->executed_graph(Redundancy::kTripleDiff);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("3 compute tiles"), std::string::npos) << g.status().message();
  auto s = loaded->heft_schedule(Redundancy::kTripleDiff);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), g.status().message());
  EXPECT_EQ(s.status().message(), loaded->usable(Redundancy::kTripleDiff).message());
  auto ok = loaded->executed_graph(Redundancy::kDoubleDiff);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->actors().size(), 6u);
}

// Item 7: execute() wrote the homes (which input bytes the execution reads)
// before it took the execution mutex, so a second thread could swap its
// inputs into a running execution.
TEST(ConcurrentExecute, EachExecutionComputesFromItsOwnInputs) {
  Runtime rt(two_tiles());
  auto loaded = rt.load(small_chain(), testing::test_registry());
  ASSERT_TRUE(loaded.ok());
  // The reference: y as a function of a constant-filled x.
  auto expected = [&](std::uint32_t fill) {
    const std::uint32_t m = 1 + fill;   // salt 1 + 1 * x
    return 2 + m;                       // salt 2 + 1 * m
  };
  std::atomic<int> wrong{0}, failed{0};
  auto worker = [&](std::uint32_t fill) {
    std::vector<std::uint32_t> x(testing::kElems, fill);
    for (int i = 0; i < 300; ++i) {
      auto out = loaded->execute({{"x", as_bytes_of(x)}});
      if (!out.ok()) {
        ++failed;
        continue;
      }
      for (std::uint32_t v : testing::from_bytes<std::uint32_t>(out->at("y")))
        if (v != expected(fill)) {
          ++wrong;
          break;
        }
      x.assign(x.size(), fill);  // the caller may reuse its buffer after execute() returns
    }
  };
  std::thread a(worker, 100), b(worker, 200);
  a.join();
  b.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CheckedResult, ValueOfAnErrorAbortsNamingTheError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> r = Status::NotFound("no such node 'q'");
  EXPECT_DEATH((void)r.value(), "Result::value\\(\\) on an error: not found: no such node 'q'");
  EXPECT_DEATH((void)*r, "no such node 'q'");
  Result<std::string> s = Status::InvalidArgument("bad");
  EXPECT_DEATH((void)s->size(), "invalid argument: bad");
  Result<int> fine = 3;
  EXPECT_EQ(fine.value(), 3);
}

TEST(RegistryAdd, ASecondFunctionUnderOneNameIsRefused) {
  Registry reg;
  reg.add("f", [](ActorContext& ctx) { ctx.output<std::uint8_t>()[0] = 1; });
  EXPECT_TRUE(reg.status().ok());
  reg.add("f", [](ActorContext& ctx) { ctx.output<std::uint8_t>()[0] = 2; });
  ASSERT_FALSE(reg.status().ok());
  EXPECT_NE(reg.status().message().find("'f' is registered twice"), std::string::npos) << reg.status().message();
  // The first stays, and a runtime refuses the registry, naming the function.
  Graph g;
  const DataId x = g.input("x", 1);
  const DataId y = g.output("y", 1);
  g.actor("a", "f", {x}, y);
  Runtime rt(two_tiles());
  EXPECT_FALSE(rt.check(g, reg).ok());
  auto loaded = rt.load(g, reg);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("'f' is registered twice"), std::string::npos);
}

TEST(RegistryAdd, BuiltinsCannotBeReplacedSilently) {
  Registry reg = Registry::with_builtins();
  ASSERT_TRUE(reg.status().ok());
  reg.add("rf.split", [](ActorContext&) {});
  EXPECT_FALSE(reg.status().ok());
  EXPECT_TRUE(reg.find("rf.split")->on_driver);  // still the built-in split
}

}  // namespace
}  // namespace redflow
