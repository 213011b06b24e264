// Wire mode (RuntimeOptions::tile_transport = kWire) runs what a worker
// process runs: each tile is a remote tile, reached through the tile server
// and its hub, served by a worker session with the tile role on a thread of
// this process (net/loopback_tiles.cpp). These tests see that path in the
// stats only the transport fills (bytes each way per tile, the worker's
// name, a worker the driver declared lost), which direct mode leaves empty.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <span>
#include <utility>
#include <string>

#include "redflow/redflow.hpp"
#include "test_graphs.hpp"

namespace redflow {
namespace {

using testing::kBytes;

RuntimeOptions wire_options(TileTransport transport, unsigned tiles) {
  RuntimeOptions o;
  o.tiles = tiles;
  o.slots = 8;
  o.slot_bytes = kBytes;
  o.tile_transport = transport;
  return o;
}

// The variable overrides RuntimeOptions::tile_transport: these tests set
// the option themselves, so they run without it (wire_runtime_suites sets it).
class WireMode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("REDFLOW_TILE_TRANSPORT"); v != nullptr && *v != '\0') GTEST_SKIP() << "REDFLOW_TILE_TRANSPORT is set";
  }
};

TEST_F(WireMode, EveryTileIsServedThroughTheSessionAndTheHub) {
  const testing::Shape shape = testing::random_dag(40, 11);
  std::vector<std::vector<std::byte>> storage;
  const Inputs inputs = testing::make_inputs(shape, storage, 3);
  const Registry reg = testing::test_registry();
  const Outputs reference = testing::run_sequential(shape.graph, reg, inputs);

  Runtime rt(wire_options(TileTransport::kWire, 3));
  auto loaded = rt.load(shape.graph, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto out = loaded->execute(inputs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, reference);
  const ExecutionStats& st = loaded->last_stats();
  ASSERT_EQ(st.tiles.size(), 3u);
  std::uint64_t actors = 0;
  for (unsigned t = 0; t < 3; ++t) {
    const TileStats& tile = st.tiles[t];
    SCOPED_TRACE("tile " + std::to_string(t));
    // Every tile got its actor table and fault configuration over the wire, and answered.
    EXPECT_GT(tile.bytes_sent, 0u);
    EXPECT_GT(tile.bytes_received, 0u);
    EXPECT_EQ(tile.worker.rfind("in-process-", 0), 0u) << tile.worker;
    EXPECT_FALSE(tile.lost);
    actors += tile.actors;
  }
  EXPECT_GT(actors, 0u);
}

TEST_F(WireMode, DirectModeLeavesTheTransportsStatsEmpty) {
  const testing::Shape shape = testing::random_dag(40, 11);
  std::vector<std::vector<std::byte>> storage;
  const Inputs inputs = testing::make_inputs(shape, storage, 3);
  const Registry reg = testing::test_registry();
  Runtime rt(wire_options(TileTransport::kDirect, 3));
  auto loaded = rt.load(shape.graph, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->execute(inputs).ok());
  const ExecutionStats& st = loaded->last_stats();
  EXPECT_EQ(st.batched_messages, 0u);
  for (const TileStats& tile : st.tiles) {
    EXPECT_EQ(tile.bytes_sent, 0u);
    EXPECT_EQ(tile.bytes_received, 0u);
    EXPECT_TRUE(tile.worker.empty()) << tile.worker;
  }
}

// A tile that dies ends its worker's session: the driver declares the
// worker lost (TileStats::lost, which only the tile server sets; in direct
// mode it stays false) and the runs still give the reference outputs.
TEST_F(WireMode, ATileThatDiesIsAWorkerTheDriverLoses) {
  const testing::Shape shape = testing::fan_out_fan_in(9);
  std::vector<std::vector<std::byte>> storage;
  const Inputs inputs = testing::make_inputs(shape, storage, 5);
  const Registry reg = testing::test_registry();
  const Outputs reference = testing::run_sequential(shape.graph, reg, inputs);
  RuntimeOptions o = wire_options(TileTransport::kWire, 3);
  o.faults.crash_tiles.emplace_back(0, 0);  // at its first actor
  Runtime rt(o);
  auto loaded = rt.load(shape.graph, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::uint64_t lost = 0;
  for (int execution = 0; execution < 2; ++execution) {
    auto out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, reference);
    lost += loaded->last_stats().lost_tiles;
  }
  EXPECT_EQ(lost, 1u) << "HEFT gives each of 3 tiles some of 9 parallel actors";
  const ExecutionStats& st = loaded->last_stats();
  EXPECT_TRUE(st.tiles[0].lost);
  EXPECT_FALSE(st.tiles[1].lost);
  EXPECT_FALSE(st.tiles[2].lost);
}

// Each load's actor table is resolved in that load's registry, as a
// worker process resolves it in its own: two graphs whose registries have
// different functions run on the same in-process workers.
TEST_F(WireMode, EachGraphRunsTheFunctionsOfItsOwnRegistry) {
  Runtime rt(wire_options(TileTransport::kWire, 2));
  auto graph_of = [](const std::string& function) {
    Graph g("g");
    const DataId x = g.input("X", 4);
    g.actor("a", function, {x}, g.output("Y", 4));
    return g;
  };
  auto constant = [](std::uint32_t v) {
    return [v](ActorContext& ctx) { ctx.output<std::uint32_t>()[0] = v + ctx.input<std::uint32_t>(0)[0]; };
  };
  Registry first, second;
  first.add("only.first", constant(100));
  second.add("only.second", constant(200));
  auto a = rt.load(graph_of("only.first"), first);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = rt.load(graph_of("only.second"), second);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const std::uint32_t x = 1;
  const Inputs inputs{{"X", std::as_bytes(std::span<const std::uint32_t>(&x, 1))}};
  for (int round = 0; round < 2; ++round) {
    for (auto [loaded, expect] : {std::pair<LoadedGraph*, std::uint32_t>{&*a, 101}, std::pair<LoadedGraph*, std::uint32_t>{&*b, 201}}) {
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      std::uint32_t y = 0;
      std::memcpy(&y, out->at("Y").data(), 4);
      EXPECT_EQ(y, expect);
    }
  }
}

TEST_F(WireMode, WithListenIsANamedError) {
  RuntimeOptions o = wire_options(TileTransport::kWire, 2);
  o.cluster.listen = "tcp://127.0.0.1:*";
  o.cluster.min_workers = 1;
  Runtime rt(o);
  auto loaded = rt.load(testing::chain(2).graph, testing::test_registry());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("tile transport 'wire'"), std::string::npos) << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find("tcp://127.0.0.1:*"), std::string::npos) << loaded.status().ToString();
}

}  // namespace
}  // namespace redflow
