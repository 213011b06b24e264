// The engine's remote tiles come from the factory it is given
// (runtime/remote_tiles.hpp), not from src/net: here a source in this
// process whose WorkerTiles are WireTiles (every message through its
// bytes, as a worker process gets them) stands for the tile server, and
// the engine binds, waits, checks functions, runs graphs and reports per
// worker through that seam alone, without a socket.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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
    if (wrap_) return wrap_(w, std::make_unique<InProcessWorkerTile>(index, runtime_, "fake-" + std::to_string(w), std::vector<WorkerTile::Corrupted>{}));
    auto tile = std::make_unique<InProcessWorkerTile>(index, runtime_, "fake-" + std::to_string(w),
                                                      std::vector<WorkerTile::Corrupted>{{0, std::chrono::steady_clock::now()}});
    tiles.push_back(tile.get());
    return tile;
  }

  bool drop_from_second_ = false;  // worker 1 lacks the last of `functions`
  // When set: worker w's tile is what this makes of a plain one.
  std::function<std::unique_ptr<WorkerTile>(unsigned, std::unique_ptr<InProcessWorkerTile>)> wrap_;
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

// Runs `g` once on `engine` under `scheduler` and checks its outputs against `want`.
void execute_and_compare(Engine& engine, const Graph& g, const Registry& registry, const Inputs& inputs, const Outputs& want, Scheduler scheduler,
                         ExecutionStats& stats) {
  const MachineModel m = engine.machine();
  const Plan plan = make_plan(g, registry, m, heft_schedule(g, m, registry));
  std::unique_ptr<GraphState> state = engine.prepare(plan);
  std::vector<std::span<const std::byte>> given;
  for (DataId d : state->given) {
    const DataNode& node = g.data(d);
    given.push_back(node.kind == DataKind::kConstant ? std::span<const std::byte>(node.contents) : inputs.at(node.name));
  }
  ExecutionRequest request;
  request.scheduler = scheduler;
  const Status s = engine.execute(plan, *state, request, given, {}, stats);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (DataId d : state->outputs) {
    const std::span<const std::byte> got = engine.output(*state, d);
    EXPECT_EQ(std::vector<std::byte>(got.begin(), got.end()), want.at(g.data(d).name)) << g.data(d).name;
  }
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
  std::uint64_t remote_actors = 0;  // run on the factory's tiles, by both schedulers
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    SCOPED_TRACE(to_string(scheduler));
    ExecutionStats stats;
    execute_and_compare(engine, g, registry, inputs, want, scheduler, stats);
    if (HasFatalFailure()) return;
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

// A worker tile that keeps actor messages on the wire and runs them as a
// worker process's frame gate may: the message it holds (as if its input
// were still being fetched from a peer) waits, the next one runs ahead of
// it, and then the tile dies. Its answers come in the order sent: `lost`
// for the held one, the completion of the one that ran, `lost` after.
class DiesAfterRunningAheadTile final : public WorkerTile {
 public:
  DiesAfterRunningAheadTile(std::unique_ptr<InProcessWorkerTile> inner, unsigned hold_from) : inner_(std::move(inner)), hold_from_(hold_from) {}

  unsigned pipeline_depth() const override { return 4; }
  void send_actor(const ActorMessage& m) override {
    if (dead_) return answered_.push_back(Answer{lost_completion(m.actor)});
    if (!held_ && ++sent_ >= hold_from_) {
      held_ = Owned{m, {m.input_slots.begin(), m.input_slots.end()}, {m.extra_output_slots.begin(), m.extra_output_slots.end()}};
      return answered_.push_back(Answer{std::nullopt});
    }
    if (held_) {
      // The held message still waits: this one runs first, and then the tile dies.
      Completion ran = inner_->actor(m);
      ran_ahead_ += ran.ok;
      ran_ += ran.ok;
      dead_ = true;
      answered_.push_back(Answer{std::move(ran)});
      return;
    }
    Completion c = inner_->actor(m);
    ran_ += c.ok;
    answered_.push_back(Answer{std::move(c)});
  }
  Completion next_completion() override {
    Answer a = std::move(answered_.front());
    answered_.pop_front();
    if (a.done) return std::move(*a.done);
    Owned held = std::move(*held_);
    held_.reset();
    if (dead_) return lost_completion(held.message.actor);
    // Nothing overtook it: it runs now, as the gate lets it once its input is in.
    held.message.input_slots = held.inputs;
    held.message.extra_output_slots = held.extra;
    Completion c = inner_->actor(held.message);
    ran_ += c.ok;
    return c;
  }
  Completion actor(const ActorMessage& m) override {
    send_actor(m);
    return next_completion();
  }
  void abandon_completion() override { (void)next_completion(); }

  unsigned index() const override { return inner_->index(); }
  void set_peers(std::span<Tile* const> peers) override { inner_->set_peers(peers); }
  Status load_actors(const ActorTableMessage& table, const Registry& registry) override { return inner_->load_actors(table, registry); }
  Status configure_faults(const FaultConfigMessage& faults) override { return inner_->configure_faults(faults); }
  Status data_node(const DataNodeMessage& m) override { return dead_ ? Status::Internal("lost") : inner_->data_node(m); }
  void clear_slot(SlotId slot) override {
    if (!dead_) inner_->clear_slot(slot);
  }
  void clear_all() override {
    if (!dead_) inner_->clear_all();
  }
  bool read_slot(const ReadSlotMessage& m, std::span<std::byte> out) override { return !dead_ && inner_->read_slot(m, out); }
  bool lost() const override { return dead_; }
  bool checks_values() const override { return inner_->checks_values(); }
  void attach() override {}
  const std::string& name() const override { return inner_->name(); }
  void set_peer_transfers(bool on) override { inner_->set_peer_transfers(on); }
  std::uint64_t take_peer_bytes_in() override { return 0; }
  std::vector<Corrupted> take_corrupted() override { return {}; }

  bool dead_ = false;
  unsigned ran_ = 0;        // actors it ran and answered as done
  unsigned ran_ahead_ = 0;  // of those, run ahead of the held one

 private:
  static Completion lost_completion(ActorId a) {
    Completion c;
    c.actor = a;
    c.ok = false;
    c.lost = true;
    return c;
  }
  struct Owned {
    ActorMessage message;
    std::vector<SlotId> inputs, extra;
  };
  struct Answer {
    std::optional<Completion> done;  // empty: the held message's
  };
  std::unique_ptr<InProcessWorkerTile> inner_;
  unsigned hold_from_;
  unsigned sent_ = 0;
  std::optional<Owned> held_;
  std::deque<Answer> answered_;
};

// An actor that ran on a pipelined tile ahead of the one the tile died on
// is booked there, not run again uncounted: every actor runs once, except
// values only the lost tile held, each recomputed once and counted, and the
// outputs are what one process gives.
TEST(EngineRemoteTiles, AnActorAnsweredBeforeItsTileDiedIsBookedAndRunsAgainOnlyAsACountedRecompute) {
  RuntimeOptions o = in_process_remote_options();
  o.slots = 32;  // room for several actors on the wire
  const Registry builtins = Registry::with_builtins();
  std::mutex runs_mutex;
  std::map<std::string, int> runs;  // by actor name, on every tile and the driver
  Registry registry;
  for (const char* name : {"i32.add", "i32.mul"})
    registry.add(name, [&, f = builtins.find(name)->function](ActorContext& ctx) {
      {
        std::lock_guard<std::mutex> lock(runs_mutex);
        ++runs[std::string(ctx.actor_name())];
      }
      f(ctx);
    });
  // Wide, so a tile has several actors on the wire: a_i = X0 + K_i, then b_i = a_i * X1, each b_i an output.
  Graph g("two_layers");
  const DataId x0_node = g.input("X0", testing::kNetBytes), x1_node = g.input("X1", testing::kNetBytes);
  for (int i = 0; i < 24; ++i) {
    const std::string n = std::to_string(i);
    const DataId k = g.constant("K" + n, testing::seeded_bytes(testing::kNetBytes, 100 + static_cast<std::uint32_t>(i)));
    const DataId a = g.inner("a" + n, testing::kNetBytes);
    g.actor("add" + n, "i32.add", {x0_node, k}, a);
    g.actor("mul" + n, "i32.mul", {a, x1_node}, g.output("b" + n, testing::kNetBytes));
  }
  const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 2), x1 = testing::seeded_bytes(testing::kNetBytes, 5);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);
  unsigned recomputing = 0;
  for (unsigned hold_from : {2u, 3u, 5u, 8u}) {
    SCOPED_TRACE("the tile holds its message " + std::to_string(hold_from));
    DiesAfterRunningAheadTile* dying = nullptr;
    Engine engine(o, [&](const RemoteTilesOptions& ro) -> Result<std::unique_ptr<RemoteTiles>> {
      auto s = std::make_unique<InProcessTiles>(ro, o, std::vector<std::string>{"i32.add", "i32.mul"});
      s->wrap_ = [&](unsigned w, std::unique_ptr<InProcessWorkerTile> plain) -> std::unique_ptr<WorkerTile> {
        if (w != 0) return plain;
        auto t = std::make_unique<DiesAfterRunningAheadTile>(std::move(plain), hold_from);
        dying = t.get();
        return t;
      };
      return std::unique_ptr<RemoteTiles>(std::move(s));
    });
    ASSERT_TRUE(engine.start().ok());
    ASSERT_NE(dying, nullptr);
    ASSERT_TRUE(engine.check_remote_functions(g, registry).ok());
    runs.clear();
    ExecutionStats stats;
    // HEFT: the tile walks its order, several actors on the wire at once.
    execute_and_compare(engine, g, registry, inputs, want, Scheduler::kHeft, stats);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(dying->dead_) << "the tile never had a message run ahead of the held one";
    EXPECT_EQ(dying->ran_ahead_, 1u);
    EXPECT_EQ(stats.lost_tiles, 1u);
    EXPECT_EQ(stats.tiles[dying->index()].actors, dying->ran_) << "every actor the lost tile answered as done is booked there";
    int total = 0, twice = 0;
    for (ActorId a = 0; a < g.actors().size(); ++a) {
      const int n = runs[g.actor(a).name];
      EXPECT_GE(n, 1) << g.actor(a).name << " never ran";
      EXPECT_LE(n, 2) << g.actor(a).name << " ran " << n << " times";
      total += n;
      twice += n == 2;
    }
    EXPECT_EQ(static_cast<std::uint64_t>(twice), stats.recomputed_actors);
    EXPECT_EQ(static_cast<std::uint64_t>(total), g.actors().size() + stats.recomputed_actors);
    recomputing += stats.recomputed_actors > 0;
  }
  EXPECT_GT(recomputing, 0u) << "no execution recomputed a value of the lost tile";
}

// A worker tile in front of an in-process one that keeps actor messages on
// the wire (depth 4) and answers them in order: the doubles below decide
// what data_node() and send_actor() do, everything else goes to the inner tile.
class PipelinedTileDouble : public WorkerTile {
 public:
  explicit PipelinedTileDouble(std::unique_ptr<InProcessWorkerTile> inner) : inner_(std::move(inner)) {}

  unsigned pipeline_depth() const override { return 4; }
  Status data_node(const DataNodeMessage& m) override { return inner_->data_node(m); }
  void send_actor(const ActorMessage& m) override { answered_.push_back(inner_->actor(m)); }
  Completion next_completion() override {
    Completion c = std::move(answered_.front());
    answered_.pop_front();
    return c;
  }
  Completion actor(const ActorMessage& m) override {
    send_actor(m);
    return next_completion();
  }
  void abandon_completion() override { answered_.pop_front(); }

  unsigned index() const override { return inner_->index(); }
  void set_peers(std::span<Tile* const> peers) override { inner_->set_peers(peers); }
  Status load_actors(const ActorTableMessage& table, const Registry& registry) override { return inner_->load_actors(table, registry); }
  Status configure_faults(const FaultConfigMessage& faults) override { return inner_->configure_faults(faults); }
  void clear_slot(SlotId slot) override { inner_->clear_slot(slot); }
  void clear_all() override { inner_->clear_all(); }
  bool read_slot(const ReadSlotMessage& m, std::span<std::byte> out) override { return inner_->read_slot(m, out); }
  bool lost() const override { return false; }
  bool checks_values() const override { return inner_->checks_values(); }
  void attach() override {}
  const std::string& name() const override { return inner_->name(); }
  void set_peer_transfers(bool on) override { inner_->set_peer_transfers(on); }
  std::uint64_t take_peer_bytes_in() override { return 0; }
  std::vector<Corrupted> take_corrupted() override { return {}; }

 protected:
  // An actor answered without running: the input in `slot` was not there.
  void answer_missing(const ActorMessage& m, SlotId slot) {
    inner_->clear_slot(slot);
    Completion c;
    c.actor = m.actor;
    c.ok = false;
    c.error = "an input fetched from another worker was not there";
    c.missing_inputs = {slot};
    answered_.push_back(std::move(c));
  }

  std::unique_ptr<InProcessWorkerTile> inner_;
  std::deque<Completion> answered_;
};

// Runs `g` (its one input "A" = `a`) once under HEFT in `order` (actor,
// tile) on tile 0 here and one worker tile of 4 slots, as wrapped by `wrap`,
// and checks every output against a one-process run.
void run_once_on_a_double(const Graph& g, const std::vector<std::byte>& a, std::initializer_list<std::pair<ActorId, int>> order,
                          const std::function<std::unique_ptr<WorkerTile>(std::unique_ptr<InProcessWorkerTile>)>& wrap,
                          ExecutionStats& stats) {
  RuntimeOptions o = in_process_remote_options();
  o.tiles = 2;  // tile 0 here, tile 1 the worker
  o.slots = 4;
  o.cluster.min_workers = 1;
  o.cluster.max_workers = 1;
  const Registry registry = Registry::with_builtins();
  const Inputs inputs{{"A", a}};
  const Outputs want = testing::local_reference(g, inputs);
  Engine engine(o, [&](const RemoteTilesOptions& ro) -> Result<std::unique_ptr<RemoteTiles>> {
    auto s = std::make_unique<InProcessTiles>(ro, o, std::vector<std::string>{"i32.add", "i32.mul", "i32.sort"});
    s->wrap_ = [&](unsigned, std::unique_ptr<InProcessWorkerTile> plain) { return wrap(std::move(plain)); };
    return std::unique_ptr<RemoteTiles>(std::move(s));
  });
  ASSERT_TRUE(engine.start().ok());
  ASSERT_TRUE(engine.check_remote_functions(g, registry).ok());
  const MachineModel m = engine.machine();
  Schedule schedule = heft_schedule(g, m, registry);
  schedule.tile_order.assign(m.tiles, {});
  schedule.driver_order.clear();
  double t = 0;
  for (auto [actor, tile] : order) {
    schedule.actors[actor] = ScheduledActor{actor, tile, t, t + 1};
    schedule.tile_order[static_cast<std::size_t>(tile)].push_back(actor);
    t += 1;
  }
  const Plan plan = make_plan(g, registry, m, std::move(schedule));
  std::unique_ptr<GraphState> state = engine.prepare(plan);
  std::vector<std::span<const std::byte>> given;
  for (DataId n : state->given) given.push_back(g.data(n).kind == DataKind::kConstant ? std::span<const std::byte>(g.data(n).contents) : std::span<const std::byte>(a));
  ExecutionRequest request;
  request.scheduler = Scheduler::kHeft;
  const Status s = engine.execute(plan, *state, request, given, {}, stats);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (DataId n : state->outputs) {
    const std::span<const std::byte> got = engine.output(*state, n);
    EXPECT_EQ(std::vector<std::byte>(got.begin(), got.end()), want.at(g.data(n).name)) << g.data(n).name;
  }
}

// A worker tile that keeps actor messages on the wire and, once, finds the
// value it fetched from a peer gone (the peer displaced it after the driver
// read its directory): it empties that slot, runs nothing and answers that
// the input was not there, as a worker process does. Every other message
// runs as sent, so one that reads the emptied slot fails with "holds no value".
class MissesAFetchTile final : public PipelinedTileDouble {
 public:
  // `missed` is the test's: the engine owns (and outlives the test's look at) this tile.
  MissesAFetchTile(std::unique_ptr<InProcessWorkerTile> inner, bool& missed) : PipelinedTileDouble(std::move(inner)), missed_(missed) {}

  Status data_node(const DataNodeMessage& m) override {
    if (m.source_tile >= 0 && !fetched_) fetched_ = m.slot;
    return inner_->data_node(m);
  }
  void send_actor(const ActorMessage& m) override {
    if (fetched_ && !missed_ && std::find(m.input_slots.begin(), m.input_slots.end(), *fetched_) != m.input_slots.end()) {
      missed_ = true;
      answer_missing(m, *fetched_);
      return;
    }
    answered_.push_back(inner_->actor(m));
  }


 private:
  bool& missed_;
  std::optional<SlotId> fetched_;
};

// Three readers of one value fetched from another tile, on a worker tile of
// four slots: x = d + d and y = d * d are on the wire when z = d + A waits
// for room, and x's answer says d's fetch found nothing. The slot holding d
// is emptied, so z needs a slot more than when it began to wait (for d
// again): it must wait for y's answer too (y read the emptied slot) rather
// than be placed short of a slot ("needs more slots than tile 1 has").
// Then x and y run again from main memory, and the outputs are right.
TEST(EngineRemoteTiles, AFetchThatFoundNothingWhileAnotherActorWaitsForRoomCostsItNoSlot) {
  Graph g("three_readers");
  const std::size_t n = testing::kNetBytes;
  const DataId in = g.input("A", n);
  const DataId k = g.constant("K", testing::seeded_bytes(n, 7));
  const DataId d = g.inner("d", n);
  const ActorId p = g.actor("p", "i32.add", {in, k}, d);
  const ActorId x = g.actor("x", "i32.add", {d, d}, g.output("X", n));
  const ActorId y = g.actor("y", "i32.mul", {d, d}, g.output("Y", n));
  const ActorId z = g.actor("z", "i32.add", {d, in}, g.output("Z", n));
  bool missed = false;
  ExecutionStats stats;
  // p on tile 0; x, y, z in that order on the worker.
  run_once_on_a_double(g, testing::seeded_bytes(n, 3), {{p, 0}, {x, 1}, {y, 1}, {z, 1}},
                       [&](std::unique_ptr<InProcessWorkerTile> plain) { return std::make_unique<MissesAFetchTile>(std::move(plain), missed); },
                       stats);
  EXPECT_TRUE(missed) << "no fetch to the worker found its value gone";
}

// A worker tile whose fetches for the actors `a1` and `a2` both find
// nothing (their source, say, lost the value): it empties the slot of each,
// runs nothing and answers the input missing, as a worker process does. It
// counts every value placed in its slots by data node.
class EmptiesTwoFetchesTile final : public PipelinedTileDouble {
 public:
  // Values placed in this tile's slots, by data node: how many times, and
  // where first. The test's: the engine owns (and outlives the test's look at) this tile.
  struct Placed {
    std::map<DataId, int> times;
    std::map<DataId, SlotId> first_slot;
  };
  EmptiesTwoFetchesTile(std::unique_ptr<InProcessWorkerTile> inner, ActorId a1, ActorId a2, Placed& placed)
      : PipelinedTileDouble(std::move(inner)), victims_{a1, a2}, placed_(placed) {}

  Status data_node(const DataNodeMessage& m) override {
    Status s = inner_->data_node(m);
    if (s.ok()) {  // a copy from a tile that no longer holds the value is refused, then sent from main memory
      ++placed_.times[m.tag.data];
      placed_.first_slot.emplace(m.tag.data, m.slot);
    }
    return s;
  }
  void send_actor(const ActorMessage& m) override {
    if (std::find(victims_.begin(), victims_.end(), m.actor) != victims_.end() && !m.input_slots.empty()) {
      answer_missing(m, m.input_slots.front());
      std::erase(victims_, m.actor);  // once each: placed again, it runs
      return;
    }
    answered_.push_back(inner_->actor(m));
  }

 private:
  std::vector<ActorId> victims_;
  Placed& placed_;
};

// The worker (4 slots) runs a1(e1), a2(e2) and c(e2, v) in that order, every
// input made on tile 0. a1's and a2's fetches find nothing. c waits for
// room, so a1's answer is taken first: its input slot is emptied and
// handed to v. Then a2's answer empties e2's slot, and c, which read it, is
// refused. Only e2's slot was emptied under c: v, placed after a1's slot was
// emptied and reused, is still on the worker and must not be forgotten. A
// directory that forgot it placed it a second time, read back from tile 0;
// where no tile or main memory had it any more, the execution failed with
// "data node 'v' is in no memory".
TEST(EngineRemoteTiles, ASlotEmptiedByAnEarlierFetchAndReusedKeepsItsNewValue) {
  Graph g("emptied_and_reused");
  const std::size_t n = testing::kNetBytes;
  const DataId in = g.input("A", n);
  const DataId k = g.constant("K", testing::seeded_bytes(n, 7));
  const DataId e1 = g.inner("e1", n), e2 = g.inner("e2", n), v = g.inner("v", n);
  const ActorId p1 = g.actor("p1", "i32.add", {in, k}, e1);
  const ActorId p2 = g.actor("p2", "i32.mul", {in, k}, e2);
  const ActorId pv = g.actor("pv", "i32.add", {in, in}, v);
  // One input each: an actor reading a value twice counts it twice when it waits for room.
  const ActorId a1 = g.actor("a1", "i32.sort", {e1}, g.output("X", n));
  const ActorId a2 = g.actor("a2", "i32.sort", {e2}, g.output("Y", n));
  const ActorId c = g.actor("c", "i32.add", {e2, v}, g.output("Z", n));
  EmptiesTwoFetchesTile::Placed placed;
  ExecutionStats stats;
  // e1 is made last, so that when a1 is ready to go, a2 and c are too: the
  // worker's runner sends a1 and a2, then waits for room to place c.
  run_once_on_a_double(g, testing::seeded_bytes(n, 3), {{pv, 0}, {p2, 0}, {p1, 0}, {a1, 1}, {a2, 1}, {c, 1}},
                       [&](std::unique_ptr<InProcessWorkerTile> plain) {
                         return std::make_unique<EmptiesTwoFetchesTile>(std::move(plain), a1, a2, placed);
                       },
                       stats);
  // The interleaving happened: v went into the slot a1's fetch had emptied.
  ASSERT_TRUE(placed.first_slot.count(e1) && placed.first_slot.count(v));
  EXPECT_EQ(placed.first_slot[v], placed.first_slot[e1]) << "e2 " << placed.first_slot[e2];
  EXPECT_EQ(placed.times[e1], 2) << "a1's input placed again after its fetch found nothing";
  EXPECT_EQ(placed.times[e2], 2) << "e2 placed again after a2's fetch found nothing";
  EXPECT_EQ(placed.times[v], 1) << "v was forgotten on the worker and placed a second time";
  EXPECT_EQ(stats.recomputed_actors, 0u);
}

}  // namespace
}  // namespace redflow::runtime
