// Lost tiles (--inject crash-tile): a tile told to die after K actors answers
// `lost`; the execution still produces the reference outputs, every actor
// runs once except those recomputed for values only the lost tile held (each
// of those exactly once more), and the stats count both. 50 seeded trials per
// scheduler, a random tile dying at a random moment.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>

#include "redflow/redflow.hpp"
#include "test_graphs.hpp"

namespace redflow {
namespace {

using testing::kBytes;

constexpr int kActors = 60;

// t.mix and t.mix_driver, counting each actor's executions by its salt (= its index).
struct Counted {
  std::unique_ptr<std::atomic<int>[]> runs = std::make_unique<std::atomic<int>[]>(kActors);
  Registry registry() {
    Registry reg;
    auto counted = [this](ActorContext& ctx) {
      runs[ActorContext::find_arg_u64(ctx.args(), "salt").value_or(0)].fetch_add(1);
      testing::mix(ctx);
    };
    reg.add("t.mix", counted);
    ActorSpec on_driver;
    on_driver.function = counted;
    on_driver.on_driver = true;
    reg.add("t.mix_driver", on_driver);
    return reg;
  }
  void reset() {
    for (int i = 0; i < kActors; ++i) runs[i] = 0;
  }
};

RuntimeOptions options(Scheduler scheduler, unsigned tiles) {
  RuntimeOptions o;
  o.tiles = tiles;
  o.slots = 6;  // few slots: values get displaced to main memory, others live only in a slot
  o.slot_bytes = kBytes;
  o.scheduler = scheduler;
  return o;
}

class CrashTrials : public ::testing::TestWithParam<Scheduler> {};

TEST_P(CrashTrials, OutputsEqualTheReferenceAndEachLostActorRunsOnceMore) {
  const Scheduler scheduler = GetParam();
  int lost_runs = 0, recomputing_runs = 0;
  for (std::uint32_t trial = 0; trial < 50; ++trial) {
    std::mt19937 rng(1000 + trial);
    const testing::Shape shape = testing::random_dag(kActors, 500 + trial % 10);
    std::vector<std::vector<std::byte>> storage;
    const Inputs inputs = testing::make_inputs(shape, storage, trial);
    Counted counted;
    const Registry reg = counted.registry();
    const Outputs reference = testing::run_sequential(shape.graph, reg, inputs);
    counted.reset();

    RuntimeOptions o = options(scheduler, 3);
    const unsigned tile = rng() % 3;
    // Each tile runs about 17 of the ~51 tile actors under HEFT; stealing
    // spreads them unevenly on a graph this small (work-first keeps a chain
    // on one tile), and a tile may get only a few.
    const std::uint64_t after = rng() % (scheduler == Scheduler::kHeft ? 16 : 4);
    o.faults.crash_tiles.emplace_back(tile, after);
    Runtime rt(o);
    auto loaded = rt.load(shape.graph, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    // Two executions: the tile dies in the first, or (if it ran fewer than
    // `after` actors there) in the second; once lost it stays out of service.
    bool lost_before = false;
    for (int execution = 0; execution < 2; ++execution) {
      counted.reset();
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << "trial " << trial << ": " << out.status().ToString();
      EXPECT_EQ(*out, reference) << "trial " << trial << ": tile " << tile << " after " << after;
      const ExecutionStats& st = loaded->last_stats();
      int total = 0, twice = 0;
      for (int a = 0; a < kActors; ++a) {
        const int n = counted.runs[a].load();
        EXPECT_GE(n, 1) << "trial " << trial << ": actor a" << a << " never ran";
        EXPECT_LE(n, 2) << "trial " << trial << ": actor a" << a << " ran " << n << " times";
        total += n;
        twice += n == 2;
      }
      EXPECT_EQ(static_cast<std::uint64_t>(twice), st.recomputed_actors) << "trial " << trial;
      EXPECT_EQ(static_cast<std::uint64_t>(total), kActors + st.recomputed_actors) << "trial " << trial;
      EXPECT_LE(st.lost_tiles, 1u);
      if (lost_before) {
        EXPECT_EQ(st.lost_tiles, 0u) << "trial " << trial;
        EXPECT_EQ(st.tiles[tile].actors, 0u) << "trial " << trial << ": a lost tile ran actors in a later execution";
      }
      if (st.lost_tiles == 1) {
        lost_before = true;
        ++lost_runs;
      }
      recomputing_runs += st.recomputed_actors > 0;
    }
    EXPECT_TRUE(rt.quarantined_tiles().empty()) << "a lost tile is not a quarantined one";
  }
  std::printf("%d of 50 trials lost their tile, %d executions recomputed values\n", lost_runs, recomputing_runs);
  EXPECT_GE(lost_runs, scheduler == Scheduler::kHeft ? 40 : 15) << "too few trials lost their tile";
  EXPECT_GE(recomputing_runs, 10) << "too few executions recomputed a value";
}

INSTANTIATE_TEST_SUITE_P(BothSchedulers, CrashTrials, ::testing::Values(Scheduler::kSteal, Scheduler::kHeft),
                         [](const auto& info) { return info.param == Scheduler::kSteal ? std::string("Steal") : std::string("Heft"); });

TEST(CrashTile, WithThreeDiffAndABitFlipTheOutputIsStillRight) {
  unsigned runs_with_a_loss = 0;
  std::uint64_t injected = 0, detected = 0;
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    for (std::uint32_t trial = 0; trial < 10; ++trial) {
      const testing::Shape shape = testing::random_dag(30, 700 + trial);
      std::vector<std::vector<std::byte>> storage;
      const Inputs inputs = testing::make_inputs(shape, storage, trial);
      const Registry reg = testing::test_registry();
      const Outputs reference = testing::run_sequential(shape.graph, reg, inputs);
      RuntimeOptions o = options(scheduler, 4);
      o.slots = 16;
      o.redundancy = Redundancy::kTripleDiff;
      o.quarantine_after = 0;
      o.faults.bitflip_probability = 0.05;
      o.faults.seed = trial + 1;
      o.faults.crash_tiles.emplace_back(trial % 4, trial % 5);
      Runtime rt(o);
      auto loaded = rt.load(shape.graph, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, reference) << "trial " << trial;
      // The tile dies when asked for actor K+1. Under stealing on a loaded
      // machine the other tiles can take all the work first, so a run without
      // a loss is right only if the crash tile never got past K actors.
      const ExecutionStats& st = loaded->last_stats();
      EXPECT_LE(st.lost_tiles, 1u) << "trial " << trial;
      if (st.lost_tiles == 0) {
        EXPECT_LE(st.tiles[trial % 4].actors, trial % 5) << "trial " << trial << ": no loss, but the crash tile ran past its K";
      }
      runs_with_a_loss += st.lost_tiles;
      // A vote finds wrong only what was flipped.
      EXPECT_LE(st.detected_faults, st.injected_faults) << "trial " << trial;
      injected += st.injected_faults;
      detected += st.detected_faults;
    }
  }
  EXPECT_GE(runs_with_a_loss, 10u) << "of 20 runs, too few lost their crash tile";
  // The right outputs above are the votes' doing only if flips were made and outvoted.
  EXPECT_GT(injected, 0u) << "no bit was flipped: the test proves nothing about 3x-diff";
  EXPECT_GT(detected, 0u) << "bits were flipped but no vote found a replica wrong";
}

TEST(CrashTile, EveryTileLostIsANamedError) {
  const testing::Shape shape = testing::chain(20);
  const Registry reg = testing::test_registry();
  std::vector<std::vector<std::byte>> storage;
  const Inputs inputs = testing::make_inputs(shape, storage, 1);
  RuntimeOptions o = options(Scheduler::kSteal, 1);
  o.faults.crash_tiles.emplace_back(0, 3);
  Runtime rt(o);
  auto loaded = rt.load(shape.graph, reg);
  ASSERT_TRUE(loaded.ok());
  auto out = loaded->execute(inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Status::Code::kGaveUp) << out.status().ToString();
  EXPECT_NE(out.status().message().find("no compute tile in service"), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().message().find("tile 0 lost"), std::string::npos) << out.status().ToString();
}

// RuntimeOptions::on_mark hears a lost tile as it is lost, and the strike
// it counts, with no trace asked for, from the runtime's own threads (a live
// view's source).
TEST(CrashTile, OnMarkHearsTheLossWithoutATrace) {
  const testing::Shape shape = testing::fan_out_fan_in(16);  // HEFT gives each tile some
  const Registry reg = testing::test_registry();
  std::vector<std::vector<std::byte>> storage;
  const Inputs inputs = testing::make_inputs(shape, storage, 1);
  RuntimeOptions o = options(Scheduler::kHeft, 2);
  o.faults.crash_tiles.emplace_back(1, 1);
  std::mutex mutex;
  std::vector<TracedMark> marks;
  o.on_mark = [&](const TracedMark& m) {
    std::lock_guard<std::mutex> lock(mutex);
    marks.push_back(m);
  };
  ASSERT_FALSE(o.trace);
  Runtime rt(o);
  auto loaded = rt.load(shape.graph, reg);
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(loaded->execute(inputs).ok());
  ASSERT_EQ(loaded->last_stats().lost_tiles, 1u) << "the check below needs the crash";
  std::lock_guard<std::mutex> lock(mutex);
  // The loss, then the strike it counts against the actor the tile was running.
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].what, "tile-lost");
  EXPECT_EQ(marks[0].tile, 1);
  EXPECT_EQ(marks[0].detail, "tile 1");
  EXPECT_GE(marks[0].time_s, 0.0);
  EXPECT_LE(marks[0].time_s, loaded->last_stats().makespan_s);
  EXPECT_EQ(marks[1].what, "strike");
  EXPECT_EQ(marks[1].tile, 1);
  EXPECT_TRUE(marks[1].detail.ends_with("': 1 of 3 (tile 1 lost under it)")) << marks[1].detail;
}

TEST(CrashTile, SpecParsesAndNamesItsErrors) {
  FaultInjection f;
  ASSERT_TRUE(parse_fault_spec("crash-tile:2,after=40", f).ok());
  ASSERT_EQ(f.crash_tiles.size(), 1u);
  EXPECT_EQ(f.crash_tiles[0].first, 2u);
  EXPECT_EQ(f.crash_tiles[0].second, 40u);
  EXPECT_TRUE(f.any());
  FaultInjection g;
  ASSERT_TRUE(parse_fault_spec("crash-tile:0", g).ok());
  EXPECT_EQ(g.crash_tiles[0].second, 0u);
  FaultInjection h;
  EXPECT_NE(parse_fault_spec("crash-tile:x", h).message().find("tile index"), std::string::npos);
  EXPECT_NE(parse_fault_spec("crash-tile:1,after=-3", h).message().find("after must be"), std::string::npos);
  EXPECT_NE(parse_fault_spec("crash-tile:1,when=3", h).message().find("unknown field 'when'"), std::string::npos);
  EXPECT_FALSE(h.any());
  EXPECT_NE(check_fault_tiles(f, 2).message().find("crash-tile:2"), std::string::npos);
}

}  // namespace
}  // namespace redflow
