// HEFT's tie-breaking (depth-first) and the per-transfer latency of its
// machine model: zero-cost work is listed a path at a
// time, and a transfer between tiles costs time even when it moves no bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "redflow/graph.hpp"
#include "redflow/registry.hpp"
#include "redflow/schedule.hpp"
#include "schedule/heft.hpp"

namespace redflow {
namespace {

using schedule::HeftProblem;

// Task 0 feeds two chains: 1 -> 2 -> 3 and 4 -> 5 -> 6. Everything costs
// nothing, so every rank is 0 and only the tie-break orders the list.
HeftProblem two_zero_cost_branches(std::size_t procs) {
  HeftProblem p;
  p.processors = procs;
  p.cost.assign(7, std::vector<double>(procs, 0.0));
  p.successors.resize(7);
  p.successors[0] = {{1, 0.0}, {4, 0.0}};
  p.successors[1] = {{2, 0.0}};
  p.successors[2] = {{3, 0.0}};
  p.successors[4] = {{5, 0.0}};
  p.successors[5] = {{6, 0.0}};
  return p;
}

TEST(HeftTies, EqualRanksAreListedDepthFirst) {
  const HeftProblem p = two_zero_cost_branches(1);
  ASSERT_TRUE(schedule::check_heft_problem(p).ok());
  const schedule::HeftResult r = schedule::heft(p);
  // Breadth-first (smallest ready index first) would give 0 1 4 2 5 3 6.
  EXPECT_EQ(r.order, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(HeftTies, SourcesAndSuccessorsInIndexOrder) {
  // Two sources; the second's successor is listed right after it.
  HeftProblem p;
  p.processors = 1;
  p.cost.assign(4, std::vector<double>(1, 0.0));
  p.successors.resize(4);
  p.successors[0] = {{2, 0.0}};
  p.successors[1] = {{3, 0.0}};
  const schedule::HeftResult r = schedule::heft(p);
  EXPECT_EQ(r.order, (std::vector<std::size_t>{0, 2, 1, 3}));
}

Registry noop_registry() {
  Registry reg;
  reg.add("f", [](ActorContext&) {});
  return reg;
}

// X -> s -> {a1 -> b1, a2 -> b2}, 0-byte data nodes, no work hints: a
// zero-cost graph, as the overhead benchmarks build.
struct ZeroCostTree {
  Graph g;
  ActorId s, a1, b1, a2, b2;
};

ZeroCostTree zero_cost_tree() {
  ZeroCostTree t;
  Graph& g = t.g;
  const DataId x = g.input("X", 0);
  const DataId ds = g.inner("ds", 0), d1 = g.inner("d1", 0), d2 = g.inner("d2", 0);
  const DataId y1 = g.output("y1", 0), y2 = g.output("y2", 0);
  t.s = g.actor("s", "f", {x}, ds);
  t.a1 = g.actor("a1", "f", {ds}, d1);
  t.a2 = g.actor("a2", "f", {ds}, d2);
  t.b1 = g.actor("b1", "f", {d1}, y1);
  t.b2 = g.actor("b2", "f", {d2}, y2);
  return t;
}

TEST(HeftTies, ZeroCostGraphRunsAPathAtATimeOnItsProducersTile) {
  const ZeroCostTree t = zero_cost_tree();
  MachineModel m;
  m.tiles = 2;
  ASSERT_GT(m.transfer_latency_s, 0);  // the default models a latency
  const Schedule s = heft_schedule(t.g, m, noop_registry());
  // Moving to the other tile costs a latency and gains nothing: one tile,
  // each branch to its end before the next (not a1 a2 b1 b2).
  const int tile = s.actors[t.s].tile;
  ASSERT_NE(tile, kDriverTile);
  EXPECT_EQ(s.tile_order[static_cast<std::size_t>(tile)], (std::vector<ActorId>{t.s, t.a1, t.b1, t.a2, t.b2}));
  EXPECT_EQ(s.makespan, 0);
}

// A side x side wavefront of 4-byte nodes (the overhead benchmark's shape):
// cell (i, j) reads (i-1, j) and (i, j-1). Actor ids are row-major.
Graph wavefront(std::size_t side) {
  Graph g;
  const DataId x = g.input("X", 4);
  std::vector<DataId> out(side * side);
  for (std::size_t i = 0; i < side; ++i)
    for (std::size_t j = 0; j < side; ++j) {
      const std::string cell = std::to_string(i) + "_" + std::to_string(j);
      out[i * side + j] = i + 1 == side && j + 1 == side ? g.output("Y", 4) : g.inner("w" + cell, 4);
      std::vector<DataId> in;
      if (i > 0) in.push_back(out[(i - 1) * side + j]);
      if (j > 0) in.push_back(out[i * side + j - 1]);
      if (in.empty()) in.push_back(x);
      g.actor("a" + cell, "f", in, out[i * side + j]);
    }
  return g;
}

// The wavefront's actors row after row (its ids are row-major).
std::vector<ActorId> row_after_row(std::size_t side) {
  std::vector<ActorId> rows(side * side);
  for (ActorId a = 0; a < rows.size(); ++a) rows[a] = a;
  return rows;
}

// HEFT's schedule of `g` on 2 tiles of machine `m` (its other fields as given).
Schedule on_two_tiles(const Graph& g, MachineModel m = {}) {
  m.tiles = 2;
  return heft_schedule(g, m, noop_registry());
}

void expect_by_start(const Schedule& s, std::span<const ActorId> order) {
  for (std::size_t k = 1; k < order.size(); ++k) EXPECT_LE(s.actors[order[k - 1]].start, s.actors[order[k]].start);
}

TEST(HeftTies, ATileThatSharesNoEdgeRunsDepthFirstNotByAntiDiagonal) {
  constexpr std::size_t kSide = 8;
  const Schedule s = on_two_tiles(wavefront(kSide));
  // Bytes make every actor cost a little, so ranks fall diagonal by
  // diagonal and start times are all distinct; the latency keeps it all on
  // one tile. That tile shares no edge, so it runs row after row.
  const int tile = s.actors[0].tile;
  ASSERT_NE(tile, kDriverTile);
  for (const ScheduledActor& a : s.actors) ASSERT_EQ(a.tile, tile) << "actor " << a.actor;
  EXPECT_EQ(s.tile_order[static_cast<std::size_t>(tile)], row_after_row(kSide));
  // Its estimated times are HEFT's still: by start, (1, 0) runs before (0, 2).
  EXPECT_LT(s.actors[kSide].start, s.actors[2].start);
}

TEST(HeftTies, AWorkerProcessTileKeepsTheStartOrderEvenWhenItSharesNoEdge) {
  // The same isolated tile as above, but a worker process: an actor right
  // behind its producer would wait a round trip to the driver, so the
  // order stays by estimated start (anti-diagonals), which interleaves
  // independent actors for the pipelined dispatch to send ahead.
  const Graph g = wavefront(8);
  const Schedule s = on_two_tiles(g, {.first_remote_tile = 0});
  const int tile = s.actors[0].tile;
  ASSERT_NE(tile, kDriverTile);
  const auto& order = s.tile_order[static_cast<std::size_t>(tile)];
  ASSERT_EQ(order.size(), g.actors().size());
  expect_by_start(s, order);
  // (1, 0) before (0, 2): not row after row.
  EXPECT_LT(std::find(order.begin(), order.end(), ActorId{8}) - order.begin(),
            std::find(order.begin(), order.end(), ActorId{2}) - order.begin());
  // A local tile below first_remote_tile still runs depth-first.
  const Schedule local = on_two_tiles(g, {.first_remote_tile = 2});
  EXPECT_EQ(local.tile_order[static_cast<std::size_t>(local.actors[0].tile)], row_after_row(8));
}

TEST(HeftTies, TilesThatShareEdgesKeepTheStartOrder) {
  // With no latency HEFT spreads the wavefront over both tiles; each order
  // then stays sorted by estimated start.
  const Schedule s = on_two_tiles(wavefront(8), {.transfer_latency_s = 0});
  ASSERT_FALSE(s.tile_order[0].empty());
  ASSERT_FALSE(s.tile_order[1].empty());
  for (const auto& order : s.tile_order) expect_by_start(s, order);
}

TEST(HeftLatency, ATransferBetweenTilesCostsTheLatencyEvenWithoutBytes) {
  // a and b (1 ms each) run in parallel on two tiles; c reads both, so one
  // of its inputs crosses tiles: it starts at 1 ms + the latency.
  for (double latency : {0.0, 1e-4, 5e-4}) {
    Graph g;
    const DataId x = g.input("X", 0);
    const DataId da = g.inner("da", 0), db = g.inner("db", 0), y = g.output("Y", 0);
    const ActorId a = g.actor("a", "f", {x}, da).work(1e6);
    const ActorId b = g.actor("b", "f", {x}, db).work(1e6);
    const ActorId c = g.actor("c", "f", {da, db}, y).work(1e6);
    MachineModel m;
    m.tiles = 2;
    m.transfer_latency_s = latency;
    const Schedule s = heft_schedule(g, m, noop_registry());
    ASSERT_NE(s.actors[a].tile, s.actors[b].tile) << "latency " << latency;
    EXPECT_NEAR(s.actors[c].start, 1e-3 + latency, 1e-12) << "latency " << latency;
    EXPECT_NEAR(s.makespan, 2e-3 + latency, 1e-12) << "latency " << latency;
  }
}

TEST(HeftLatency, TheEstimateIncludesTheLatencyOfAChoiceThatPaysIt) {
  // Same graph, a crossing dearer than the parallelism gains.
  Graph g;
  const DataId x = g.input("X", 0);
  const DataId da = g.inner("da", 0), db = g.inner("db", 0), y = g.output("Y", 0);
  g.actor("a", "f", {x}, da).work(1e6);
  g.actor("b", "f", {x}, db).work(1e6);
  const ActorId c = g.actor("c", "f", {da, db}, y).work(1e6);
  MachineModel m;
  m.tiles = 2;
  m.transfer_latency_s = 5e-3;
  const schedule::HeftProblem p = heft_problem(g, m, noop_registry());
  const Schedule s = schedule_of(p, schedule::heft(p), g.actors().size(), m.tiles, m.first_remote_tile);
  // b goes across greedily (EFT 1 ms), and c then pays the latency: the
  // estimate says so rather than pretending the move is free.
  EXPECT_GE(s.actors[c].start, 5e-3);
  EXPECT_NEAR(s.makespan, s.actors[c].finish, 1e-12);
  // The refined plan (heft_schedule(): HEFT, then local search) undoes the
  // greedy crossing: all three on one tile, 3 ms.
  const Schedule refined = heft_schedule(g, m, noop_registry());
  EXPECT_NEAR(refined.makespan, 3e-3, 1e-12);
  EXPECT_EQ(refined.tile_order[0].size() + refined.tile_order[1].size(), 3u);
  EXPECT_TRUE(refined.tile_order[0].empty() || refined.tile_order[1].empty()) << "the refined plan still crosses";
}

TEST(HeftLatency, NegativeOrNanLatencyIsTreatedAsNone) {
  const ZeroCostTree t = zero_cost_tree();
  for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN()}) {
    MachineModel m;
    m.tiles = 2;
    m.transfer_latency_s = bad;
    const schedule::HeftProblem p = heft_problem(t.g, m, noop_registry());
    EXPECT_TRUE(schedule::check_heft_problem(p).ok());
  }
}

}  // namespace
}  // namespace redflow

namespace redflow {
namespace {

// The overhead benchmark's wavefront (316 x 316 empty actors, 4-byte values)
// under the default machine model. With a latency of 1 us HEFT dealt the
// columns to the two tiles in alternating pairs, so about a third of all
// edges crossed tiles and each was a wait on the other tile's thread
// (docs/scheduling.md); the default keeps it together. (Smaller wavefronts
// did not show it: at 60 x 60 1 us kept them on one tile too.)
TEST(HeftLatency, DefaultKeepsAZeroCostWavefrontTogether) {
  constexpr std::size_t m = 316;
  const Graph g = wavefront(m);
  auto crossing = [&](const Schedule& s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) {
        const int t = s.actors[i * m + j].tile;
        n += (i > 0 && s.actors[(i - 1) * m + j].tile != t) + (j > 0 && s.actors[i * m + j - 1].tile != t);
      }
    return n;
  };
  MachineModel model;
  model.tiles = 2;
  const std::size_t edges = 2 * m * (m - 1);
  EXPECT_LE(crossing(heft_schedule(g, model, noop_registry())), m) << "of " << edges << " edges";
  model.transfer_latency_s = 1e-6;  // the old default, to show the test can fail
  EXPECT_GT(crossing(heft_schedule(g, model, noop_registry())), edges / 4);
}

}  // namespace
}  // namespace redflow
