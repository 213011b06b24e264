// Pipelined dispatch to remote tiles (src/runtime/pipeline.cpp):
// several actor messages on the wire to one worker at once, completions
// booked in order, slots of actors in flight never reused, and the outputs
// those of a one-process run, with many slots or few, under both schedulers.
#include <gtest/gtest.h>

#include <string>

#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

using testing::WorkerProcesses;

// `chains` independent chains of `length` actors over 1 KB nodes; each link
// adds X1 to the value before it. Length 1 is a plain fan-out.
Graph chains(int chains, int length) {
  Graph g("net_pipeline");
  const DataId x0 = g.input("X0", testing::kNetBytes), x1 = g.input("X1", testing::kNetBytes);
  for (int c = 0; c < chains; ++c) {
    DataId prev = x0;
    for (int i = 0; i < length; ++i) {
      const std::string n = std::to_string(c) + "_" + std::to_string(i);
      const DataId out = i + 1 == length ? g.output("y" + n, testing::kNetBytes) : g.inner("d" + n, testing::kNetBytes);
      g.actor("a" + n, i % 2 == 0 ? "i32.add" : "i32.mul", {prev, x1}, out);
      prev = out;
    }
  }
  return g;
}

struct Case {
  Scheduler scheduler;
  unsigned slots;
  unsigned depth;
};

// Runs `g` twice on 2 worker processes; returns the most actors any tile had on the wire at once.
std::uint64_t run_remote(const Graph& g, const Case& c, std::uint64_t* batched = nullptr) {
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 5), x1 = testing::seeded_bytes(testing::kNetBytes, 6);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(0, 2, c.scheduler);
  o.slots = c.slots;
  o.pipeline_depth = c.depth;
  const std::vector<std::string> slots{"--slots", std::to_string(c.slots), "--slot-bytes", std::to_string(o.slot_bytes)};
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(2, endpoint, slots); };
  std::uint64_t most = 0;
  testing::within_seconds(60, "a pipelined run", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    for (int execution = 0; execution < 2; ++execution) {
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want) << "execution " << execution;
      for (const TileStats& t : loaded->last_stats().tiles) {
        EXPECT_LE(t.most_in_flight, c.depth) << "a tile had more actors on the wire than the depth allows";
        most = std::max(most, t.most_in_flight);
      }
      // --stats writes it per tile (docs/runtime.md, "Stats JSON").
      const std::string json = loaded->last_stats().to_json();
      const std::string key = "\"most_in_flight\": " + std::to_string(loaded->last_stats().tiles[0].most_in_flight);
      EXPECT_NE(json.find(key), std::string::npos) << json;
      if (batched != nullptr) *batched = loaded->last_stats().batched_messages;
    }
  });
  return most;
}

class NetPipeline : public ::testing::TestWithParam<Scheduler> {};

TEST_P(NetPipeline, SeveralActorsGoOnTheWireAtOnceAndTheOutputsEqualTheLocalRun) {
  // Steal: 32 chains, so each worker always has independent work to send.
  // HEFT: a fan-out, so the next actor in a tile's order is always ready.
  const Graph g = GetParam() == Scheduler::kSteal ? chains(32, 6) : chains(64, 1);
  std::uint64_t batched = 0;
  const std::uint64_t most = run_remote(g, Case{GetParam(), 64, 16}, &batched);
  EXPECT_GT(most, 2u) << "no tile ever had more than two actors on the wire: dispatch is not pipelined";
  // 2 x 192 actors, 16 at a time: the driver's I/O thread finds several
  // queued for a worker, or the worker several answers ready, and they share
  // a message (REQUESTS, REPLIES).
  EXPECT_GT(batched, 0u) << "no request or reply ever shared a message with another";
}

// Chains under HEFT too: each worker's chains share no edge with the other
// worker, and a depth-first order there (right for a local tile) would put
// every actor right behind its producer, one round trip each.
TEST_P(NetPipeline, IndependentChainsGoOnTheWireSeveralAtOnce) {
  const std::uint64_t most = run_remote(chains(16, 6), Case{GetParam(), 64, 16});
  EXPECT_GT(most, 2u) << "no tile ever had more than two actors of 16 chains on the wire";
}

TEST_P(NetPipeline, DepthOneSendsOneActorAtATime) {
  const std::uint64_t most = run_remote(chains(16, 3), Case{GetParam(), 64, 1});
  EXPECT_EQ(most, 1u);
}

TEST_P(NetPipeline, FewSlotsLimitWhatIsInFlightButNeverReuseAPinnedSlot) {
  // 6 slots and actors of two inputs and an output: X0 and X1 (read by every
  // chain's head) hold two, and each actor in flight needs a slot of its own
  // for its output, so at most four are in flight of the 16 the depth
  // allows; the second's output slot must not be the first's (not yet
  // booked, so only its pin protects it); a reused pinned slot corrupts an output.
  const std::uint64_t most = run_remote(chains(24, 4), Case{GetParam(), 6, 16});
  EXPECT_LE(most, 4u) << "6 slots, two of them X0 and X1, hold the outputs of at most four actors";
  if (GetParam() == Scheduler::kSteal) {
    EXPECT_GE(most, 2u) << "the pins were never put to the test";
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, NetPipeline, ::testing::Values(Scheduler::kSteal, Scheduler::kHeft),
                         [](const auto& info) { return std::string(info.param == Scheduler::kSteal ? "Steal" : "Heft"); });

}  // namespace
}  // namespace redflow
