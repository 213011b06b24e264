// The engine's remote tiles come from the factory it is given
// (runtime/remote_tiles.hpp), not from src/net: here a source in this
// process whose WorkerTiles are WireTiles (every message through its
// bytes, as a worker process gets them) stands for the tile server, and
// the engine binds, waits, checks functions, runs graphs and reports per
// worker through that seam alone, without a socket.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net_workers.hpp"
#include "runtime/engine.hpp"
#include "runtime/local_tile.hpp"
#include "runtime/plan.hpp"
#include "runtime/remote_tiles.hpp"
#include "runtime/wire_tile.hpp"
#include "schedule/heft.hpp"

namespace redflow::runtime {
namespace {

// A "worker" in this process: a WireTile behind the WorkerTile seam, with
// what the engine reads from a worker set by the test.
class InProcessWorkerTile final : public WorkerTile {
 public:
  InProcessWorkerTile(unsigned index, const RuntimeOptions& o, std::string name, std::vector<Corrupted> corrupted)
      : inner_(std::make_unique<LocalTile>(o.slots, o.slot_bytes, o.cores_per_tile, index)),
        name_(std::move(name)),
        corrupted_(std::move(corrupted)) {}

  unsigned index() const override { return inner_.index(); }
  void set_peers(std::span<Tile* const> peers) override { inner_.set_peers(peers); }
  Status load_actors(const ActorTableMessage& table, const Registry& registry) override { return inner_.load_actors(table, registry); }
  Status configure_faults(const FaultConfigMessage& faults) override { return inner_.configure_faults(faults); }
  Status data_node(const DataNodeMessage& message) override { return inner_.data_node(message); }
  void clear_slot(SlotId slot) override { inner_.clear_slot(slot); }
  void clear_all() override { inner_.clear_all(); }
  Completion actor(const ActorMessage& message) override { return inner_.actor(message); }
  bool read_slot(const ReadSlotMessage& message, std::span<std::byte> out) override { return inner_.read_slot(message, out); }
  bool lost() const override { return inner_.lost(); }
  bool checks_values() const override { return inner_.checks_values(); }

  void attach() override {}
  const std::string& name() const override { return name_; }
  void set_peer_transfers(bool on) override { peer_transfers_ = on; }
  std::uint64_t take_peer_bytes_in() override { return std::exchange(peer_bytes_in_, 0); }
  std::vector<Corrupted> take_corrupted() override { return std::exchange(corrupted_, {}); }

  std::optional<bool> peer_transfers_;
  std::uint64_t peer_bytes_in_ = 7;

 private:
  WireTile inner_;
  std::string name_;
  std::vector<Corrupted> corrupted_;
};

// Every worker the engine waits for is there at once; worker w is named
// "fake-w" on host "here" and has `functions`.
class InProcessTiles final : public RemoteTiles {
 public:
  InProcessTiles(RemoteTilesOptions options, RuntimeOptions runtime, std::vector<std::string> functions)
      : options_(std::move(options)), runtime_(std::move(runtime)), functions_(std::move(functions)) {}

  const std::string& endpoint() const override { return endpoint_; }
  Status wait_for_workers(double) override { return Status::Ok(); }
  unsigned welcomed() const override { return options_.cluster.min_workers; }
  bool lost(unsigned w) const override { return w < refused_.size() && refused_[w]; }
  void refuse(unsigned w, const std::string&) override {
    refused_.resize(std::max<std::size_t>(refused_.size(), w + 1));
    refused_[w] = true;
  }
  RemoteWorker worker(unsigned w) const override {
    RemoteWorker r{"fake-" + std::to_string(w), "here", functions_};
    if (w == 1 && drop_from_second_) r.functions.pop_back();
    return r;
  }
  RemoteTraffic traffic(unsigned w) const override { return RemoteTraffic{100 * (w + 1), 10 * (w + 1)}; }
  RemoteCounts counts() const override { return RemoteCounts{1, 2, 3}; }
  std::unique_ptr<WorkerTile> make_tile(unsigned w, unsigned index, unsigned) override {
    auto tile = std::make_unique<InProcessWorkerTile>(index, runtime_, "fake-" + std::to_string(w),
                                                      std::vector<WorkerTile::Corrupted>{{0, std::chrono::steady_clock::now()}});
    tiles.push_back(tile.get());
    return tile;
  }

  bool drop_from_second_ = false;  // worker 1 lacks the last of `functions`
  std::vector<InProcessWorkerTile*> tiles;

 private:
  std::string endpoint_ = "inproc://engine-test";
  RemoteTilesOptions options_;
  RuntimeOptions runtime_;
  std::vector<std::string> functions_;
  std::vector<bool> refused_;
};

RuntimeOptions in_process_remote_options() {
  RuntimeOptions o;
  o.tiles = 3;  // one local, two remote
  o.cores_per_tile = 1;
  o.slots = 8;
  o.slot_bytes = 64 << 10;
  o.driver_bytes = 64 << 20;
  o.cluster.listen = "inproc://engine-test";
  o.cluster.min_workers = 2;
  o.cluster.max_workers = 2;
  return o;
}

TEST(EngineRemoteTiles, TheFactoryIsGivenTheEnginesOptionsAndItsErrorIsStartsError) {
  RuntimeOptions o = in_process_remote_options();
  o.cluster.max_workers = 3;  // one place kept for a join
  o.cluster.heartbeat_timeout_s = 5;
  o.cluster.key_file = "driver.key";
  o.cluster.authorized_keys_file = "workers.keys";
  std::optional<RemoteTilesOptions> given;
  Engine engine(o, [&](const RemoteTilesOptions& ro) -> Result<std::unique_ptr<RemoteTiles>> {
    given = ro;
    return Status::IOError("no network in this test");
  });
  const Status s = engine.start();
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("no network in this test"), std::string::npos) << s.ToString();
  ASSERT_TRUE(given.has_value());
  EXPECT_EQ(given->cluster.listen, "inproc://engine-test");
  EXPECT_EQ(given->cluster.min_workers, 2u);
  EXPECT_EQ(given->capacity, 3u);
  EXPECT_EQ(given->first_tile, 1u);
  EXPECT_EQ(given->cluster.heartbeat_timeout_s, 5);
  EXPECT_EQ(given->slots, 8u);
  EXPECT_EQ(given->slot_bytes, std::size_t{64} << 10);
  EXPECT_EQ(given->cluster.key_file, "driver.key");
  EXPECT_EQ(given->cluster.authorized_keys_file, "workers.keys");
  EXPECT_TRUE(given->on_join);
}

// The graph runs on the local tile and the factory's two tiles and gives
// what one process gives; the stats name each tile's worker and carry what
// the source and the tiles report.
TEST(EngineRemoteTiles, AGraphRunsOnTheFactorysTilesAndTheStatsNameTheirWorkers) {
  const RuntimeOptions o = in_process_remote_options();
  const Registry registry = Registry::with_builtins();
  InProcessTiles* source = nullptr;
  Engine engine(o, [&](const RemoteTilesOptions& ro) -> Result<std::unique_ptr<RemoteTiles>> {
    auto s = std::make_unique<InProcessTiles>(ro, o, std::vector<std::string>{"i32.add", "i32.mul"});
    source = s.get();
    return std::unique_ptr<RemoteTiles>(std::move(s));
  });
  ASSERT_TRUE(engine.start().ok());
  ASSERT_NE(source, nullptr);
  ASSERT_EQ(source->tiles.size(), 2u);
  for (InProcessWorkerTile* t : source->tiles) EXPECT_EQ(t->peer_transfers_, std::optional<bool>(true));

  const Graph g = testing::random_builtin_dag(40, 801);
  ASSERT_TRUE(engine.check_remote_functions(g, registry).ok());
  const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 4);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);
  const MachineModel m = engine.machine();
  std::uint64_t remote_actors = 0;  // run on the factory's tiles, by both schedulers
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    SCOPED_TRACE(to_string(scheduler));
    const Plan plan = make_plan(g, registry, m, heft_schedule(g, m, registry));
    std::unique_ptr<GraphState> state = engine.prepare(plan);
    std::vector<std::span<const std::byte>> given;
    for (DataId d : state->given) {
      const DataNode& node = g.data(d);
      given.push_back(node.kind == DataKind::kConstant ? std::span<const std::byte>(node.contents) : inputs.at(node.name));
    }
    ExecutionRequest request;
    request.scheduler = scheduler;
    ExecutionStats stats;
    const Status s = engine.execute(plan, *state, request, given, {}, stats);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (DataId d : state->outputs) {
      const std::span<const std::byte> got = engine.output(*state, d);
      EXPECT_EQ(std::vector<std::byte>(got.begin(), got.end()), want.at(g.data(d).name)) << g.data(d).name;
    }
    ASSERT_EQ(stats.tiles.size(), 3u);
    for (unsigned w = 0; w < 2; ++w) {
      const TileStats& t = stats.tiles[1 + w];
      remote_actors += t.actors;
      EXPECT_EQ(t.worker, "fake-" + std::to_string(w));
      EXPECT_EQ(t.host, "here");
      EXPECT_FALSE(t.lost);
      EXPECT_EQ(t.peer_bytes_in, scheduler == Scheduler::kSteal ? 7u : 0u);  // taken by the first report
      EXPECT_EQ(t.corrupted_transfers, scheduler == Scheduler::kSteal ? 1u : 0u);
      EXPECT_EQ(t.bytes_sent, scheduler == Scheduler::kSteal ? 100u * (w + 1) : 0u);  // bytes since the last report
    }
    EXPECT_EQ(stats.late_messages, 1u);
    EXPECT_EQ(stats.refused_messages, 2u);
    EXPECT_EQ(stats.batched_messages, 3u);
    EXPECT_EQ(stats.corrupted_transfers, scheduler == Scheduler::kSteal ? 2u : 0u);
  }
  EXPECT_GT(remote_actors, 0u) << "the factory's tiles ran nothing";
}

// A worker without a function the graph needs is refused through the
// source, and the error names the actor, the function and the worker.
TEST(EngineRemoteTiles, AWorkerLackingAFunctionIsRefusedThroughTheSource) {
  const RuntimeOptions o = in_process_remote_options();
  const Registry registry = Registry::with_builtins();
  InProcessTiles* source = nullptr;
  Engine engine(o, [&](const RemoteTilesOptions& ro) -> Result<std::unique_ptr<RemoteTiles>> {
    auto s = std::make_unique<InProcessTiles>(ro, o, std::vector<std::string>{"i32.add", "i32.mul"});
    s->drop_from_second_ = true;
    source = s.get();
    return std::unique_ptr<RemoteTiles>(std::move(s));
  });
  ASSERT_TRUE(engine.start().ok());
  const Graph g = testing::random_builtin_dag(10, 802);
  const Status s = engine.check_remote_functions(g, registry);
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("'i32.mul'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("worker 'fake-1'"), std::string::npos) << s.ToString();
  EXPECT_FALSE(source->lost(0));
  EXPECT_TRUE(source->lost(1));
}

}  // namespace
}  // namespace redflow::runtime
