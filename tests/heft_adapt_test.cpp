// HEFT that adapts when a tile falls behind (src/runtime/adaptive_heft.cpp,
// docs/scheduling.md "HEFT under load"). Eight equal 20 ms tasks on two
// local tiles: HEFT plans four on each. Tile 1 made ten times slower
// (slow-tile fault injection) falls behind its plan at its first actor;
// the idle tile 0 takes over tile 1's waiting actors, and the run ends
// near one slowed actor instead of four. Made only twice as slow (no actor
// overruns its plan by more than that), tile 1 falls behind little by
// little; tile 0, done with its order while tile 1 still has ready actors,
// takes them. With adapting off, tile 1 walks its whole order. The outputs equal the sequential interpreter's either way.
#include <gtest/gtest.h>

#include <string>

#include "apps/apps.hpp"
#include "redflow/redflow.hpp"
#include "test_graphs.hpp"

namespace redflow {
namespace {

constexpr int kTasks = 8;
constexpr int kMicros = 20000;

Graph equal_tasks() { return testing::equal_workflow_tasks(kTasks, kMicros, "heft_adapt"); }

struct AdaptRun {
  Outputs out;
  ExecutionStats stats;
  bool marked = false;
  int straggler_marks = 0;  // "straggler" marks naming tile 1
  int other_straggler_marks = 0;
};

AdaptRun run_with_slow_tile(bool adapts, double factor = 10) {
  RuntimeOptions o;
  o.tiles = 2;
  o.scheduler = Scheduler::kHeft;
  o.heft_adapts = adapts;
  Runtime rt(o);
  const Graph g = equal_tasks();
  const Registry reg = apps::app_registry();
  auto loaded = rt.load(g, reg);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  AdaptRun run;
  if (!loaded.ok()) return run;
  ExecuteOptions eo;
  eo.trace = true;
  FaultInjection slow;
  slow.slow_tiles = {{1, factor}};
  eo.faults = slow;
  const std::vector<std::byte> x(8, std::byte{7});
  const Inputs in{{"X", x}};
  auto out = loaded->execute(in, eo);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return run;
  run.out = *out;
  run.stats = loaded->last_stats();
  for (const auto& m : loaded->last_trace().marks) {
    if (m.what == "taken-over") run.marked = true;
    if (m.what == "straggler") ++(m.tile == 1 ? run.straggler_marks : run.other_straggler_marks);
  }
  EXPECT_EQ(run.out, testing::run_sequential(g, reg, in));
  return run;
}

TEST(HeftAdapts, AnIdleTileTakesOverTheActorsOfATileThatFellBehind) {
  const AdaptRun run = run_with_slow_tile(true);
  ASSERT_EQ(run.stats.tiles.size(), 2u);
  // Tile 1's first actor takes 200 ms; past 2 x 20 ms + 1 ms tile 0 may take
  // its waiting ones. Tile 0 runs its own four (80 ms), then tile 1's.
  EXPECT_GE(run.stats.taken_over, 2u) << "the idle tile did not take over the late tile's actors";
  EXPECT_TRUE(run.marked) << "the trace marks each take-over";
  // The late tile is counted and marked a straggler, once an execution.
  EXPECT_EQ(run.stats.tiles[1].straggled, run.stats.taken_over);
  EXPECT_EQ(run.stats.tiles[0].straggled, 0u);
  EXPECT_EQ(run.straggler_marks, 1);
  EXPECT_EQ(run.other_straggler_marks, 0);
  EXPECT_GE(run.stats.tiles[0].actors, 6u);
  EXPECT_LE(run.stats.tiles[1].actors, 2u);
  EXPECT_EQ(run.stats.tiles[0].actors + run.stats.tiles[1].actors, static_cast<std::uint64_t>(kTasks)) << "an actor ran twice";
}

TEST(HeftAdapts, ATileAtHalfSpeedHasItsLastActorsTakenOver) {
  const AdaptRun run = run_with_slow_tile(true, 2);
  ASSERT_EQ(run.stats.tiles.size(), 2u);
  // Tile 0 is done with its four at 80 ms, when tile 1 (40 ms an actor) has
  // run two: tile 0 takes over at least its last.
  EXPECT_GE(run.stats.taken_over, 1u) << "the tile done with its order did not take over the slow tile's ready actors";
  EXPECT_GE(run.stats.tiles[0].actors, 5u);
  EXPECT_LE(run.stats.tiles[1].actors, 3u);
  EXPECT_EQ(run.stats.tiles[0].actors + run.stats.tiles[1].actors, static_cast<std::uint64_t>(kTasks)) << "an actor ran twice";
}

TEST(HeftAdapts, WithAdaptingOffTheLateTileWalksItsWholeOrder) {
  const AdaptRun run = run_with_slow_tile(false);
  ASSERT_EQ(run.stats.tiles.size(), 2u);
  EXPECT_EQ(run.stats.taken_over, 0u);
  EXPECT_FALSE(run.marked);
  EXPECT_EQ(run.stats.tiles[1].straggled, 0u);
  EXPECT_EQ(run.straggler_marks, 0);
  EXPECT_EQ(run.stats.tiles[1].actors, 4u) << "HEFT's plan puts half of the equal tasks on each tile";
}

}  // namespace
}  // namespace redflow
