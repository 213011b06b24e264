// The engine's orchestration: starting the tile runners, one execute() from
// reset to report, and how a job ends. Each other part of the paper has its
// own file: main_memory, slot_directory, tile_queues, steal_loop, heft_loop,
// driver, tile_dispatch, readiness, replica_placement, voting, quarantine,
// execution_report (docs/architecture.md).
#include "runtime/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "fault/injector.hpp"
#include "runtime/engine_job.hpp"

namespace redflow::runtime {

namespace {
// RuntimeOptions::tile_transport, which REDFLOW_TILE_TRANSPORT overrides
// (start() names a value it does not know).
bool wire_transport(const RuntimeOptions& o) {
  if (const char* env = std::getenv("REDFLOW_TILE_TRANSPORT"); env != nullptr && *env != '\0') return std::string_view(env) == "wire";
  return o.tile_transport == TileTransport::kWire;
}

// Wire mode without `listen`: every tile is a remote tile whose worker is a
// thread of this process (serve_tiles_in_process()), all of them waited
// for on a loopback endpoint, no place kept for a join. No speculative
// copies: workers that share the driver's cores straggle only when the
// machine is loaded, and a copy would make how often an actor ran depend on
// the load (worker processes test them: tests/net_speculation_test.cpp).
bool in_process_tiles(const RuntimeOptions& o) { return wire_transport(o) && o.cluster.listen.empty(); }
RuntimeOptions served(const RuntimeOptions& o) {
  if (!in_process_tiles(o)) return o;
  RuntimeOptions w = o;
  w.cluster.listen = "tcp://127.0.0.1:*";
  w.cluster.min_workers = w.cluster.max_workers = o.tiles;
  w.speculate_after_s = 0;
  return w;
}
}  // namespace

Engine::Engine(const RuntimeOptions& options, RemoteTilesFactory remote_tiles)
    : options_(served(options)),
      remote_factory_(in_process_tiles(options) ? RemoteTilesFactory(serve_tiles_in_process) : std::move(remote_tiles)),
      in_process_tiles_(in_process_tiles(options)),
      places_(options_.tiles + options_.join_places(), options_.quarantine_after, options_.probation_rounds) {}  // the tiles, and the places kept for joins


Status Engine::start() {
  if (!threads_.empty()) return Status::Ok();
  if (const char* env = std::getenv("REDFLOW_TILE_TRANSPORT"); env != nullptr && *env != '\0') {
    const std::string_view v(env);
    if (v != "wire" && v != "direct")
      return Status::InvalidArgument("REDFLOW_TILE_TRANSPORT='" + std::string(v) + "': expected wire or direct");
  }
  // Remote workers take the wire already; the local tiles beside them have no worker to run them.
  if (wire_transport(options_) && !in_process_tiles_)
    return Status::InvalidArgument("tile transport 'wire' (--tile-transport, REDFLOW_TILE_TRANSPORT) serves every tile by a worker in this "
                                   "process and cannot be combined with listen '" + options_.cluster.listen + "' (remote workers)");
  if (!options_.cluster.listen.empty()) REDFLOW_RETURN_IF_ERROR(options_.cluster.validate());
  if (!options_.cluster.listen.empty() && options_.cluster.min_workers > options_.tiles)
    return Status::InvalidArgument(std::to_string(options_.cluster.min_workers) + " remote tiles, but only " +
                                   std::to_string(options_.tiles) + " tiles in all (RuntimeOptions::tiles counts local and remote tiles)");
  // Tile memory is reserved here, not in the constructor, so that a slot
  // budget the machine cannot reserve is an error the caller sees.
  try {
    for (unsigned t = 0; t < options_.local_tiles(); ++t) {
      auto tile = std::make_unique<LocalTile>(options_.slots, options_.slot_bytes, options_.cores_per_tile, t);
      LocalTile* local = tile.get();
      tiles_.push_back(std::move(tile));
      auto r = std::make_unique<Runner>();
      r->index = t;
      r->tile = tiles_.back().get();
      r->local = local;
      runners_.push_back(std::move(r));
    }
  } catch (const std::bad_alloc&) {
    tiles_.clear();
    runners_.clear();
    return Status::ResourceExhausted("cannot reserve tile memory: " + std::to_string(options_.tiles) + " tiles x " +
                                     std::to_string(options_.slots) + " slots x " + std::to_string(options_.slot_bytes) +
                                     " bytes (lower --tiles, --slots or --slot-bytes)");
  }
  if (!options_.cluster.listen.empty()) {
    if (Status s = start_remote_tiles(); !s.ok()) {
      tiles_.clear();
      runners_.clear();
      worker_tiles_.clear();
      remote_.reset();
      return s;
    }
  }
  all_local_ = options_.cluster.listen.empty();
  // A transfer names its source by tile id; the transport reaches the peer.
  for (auto& t : tiles_) tile_ptrs_.push_back(t.get());
  for (auto& t : tiles_) t->set_peers(tile_ptrs_);
  for (WorkerTile* t : worker_tiles_) t->set_peer_transfers(options_.peer_transfers);
  configuration_.reset(tiles());
  for (unsigned t = 0; t < tiles(); ++t) threads_.emplace_back([this, t] { runner_main(t); });
  runners_ready_.store(true, std::memory_order_release);
  return Status::Ok();
}

// Remote tiles (the factory's; in a Runtime, src/net's tile server): they
// bind, and the engine waits for their workers; they become tiles
// local_tiles()..tiles-1, each with a runner.
// Places for workers that join later follow, each with its runner, out of
// service until a worker fills it (joins.cpp).
Status Engine::start_remote_tiles() {
  const unsigned remote = options_.cluster.min_workers;
  if (remote == 0) return Status::InvalidArgument("--listen " + options_.cluster.listen + " needs --min-workers >= 1 (how many workers to wait for)");
  RemoteTilesOptions ro;
  ro.cluster = options_.cluster;
  ro.capacity = remote + options_.join_places();
  ro.on_join = [this](unsigned w) { note_join(w); };
  ro.first_tile = options_.local_tiles();
  ro.slots = options_.slots;
  ro.slot_bytes = options_.slot_bytes;
  ro.cores = options_.cores_per_tile;
  auto source = remote_factory_(ro);
  if (!source.ok()) return source.status();
  remote_ = std::move(*source);
  spdlog::log(in_process_tiles_ ? spdlog::level::debug : spdlog::level::info, "redflow: listening on {}; waiting for {} remote tile(s)",
              remote_->endpoint(), remote);
  if (options_.cluster.on_listening && !in_process_tiles_) options_.cluster.on_listening(remote_->endpoint());
  REDFLOW_RETURN_IF_ERROR(remote_->wait_for_workers(options_.cluster.wait_s));
  for (unsigned w = 0; w < ro.capacity; ++w) {
    const unsigned t = ro.first_tile + w;
    std::unique_ptr<WorkerTile> tile = remote_->make_tile(w, t, options_.pipeline_depth);
    worker_tiles_.push_back(tile.get());
    tiles_.push_back(std::move(tile));
    auto r = std::make_unique<Runner>();
    r->index = t;
    r->tile = tiles_.back().get();
    r->depth = r->tile->pipeline_depth();
    r->local = nullptr;
    runners_.push_back(std::move(r));
    if (w >= remote) places_.keep_for_join(t);  // out of service until a worker comes
  }
  return Status::Ok();
}

Status Engine::check_remote_functions(const Graph& graph, const Registry& registry) {
  if (!remote_) return Status::Ok();
  for (unsigned w = 0; w < remote_->welcomed(); ++w) {
    if (remote_->lost(w)) continue;
    const RemoteWorker hello = remote_->worker(w);
    if (hello.driver_registry) continue;  // it resolves the graph's functions where the driver does
    const std::set<std::string_view> has(hello.functions.begin(), hello.functions.end());
    for (ActorId a = 0; a < graph.actors().size(); ++a) {
      const ActorNode& actor = graph.actor(a);
      const ActorSpec* spec = registry.find(actor.function);
      if (spec != nullptr && spec->on_driver) continue;  // runs on the driver, never on a tile
      if (!has.contains(actor.function)) {
        // The worker is told too (it exits naming the function), not only this driver's caller.
        remote_->refuse(w, "it lacks actor function '" + actor.function + "', which actor '" + actor.name + "' of graph '" + graph.name() +
                               "' needs (start it with the same --lib plugins as the driver)");
        return Status::NotFound("actor '" + actor.name + "' needs actor function '" + actor.function + "', which worker '" + hello.name +
                                "' (tile " + std::to_string(options_.local_tiles() + w) + ", host " + hello.host +
                                ") does not have (start it with the same --lib plugins as the driver)");
      }
    }
  }
  return Status::Ok();
}

void Engine::report_remote(Job& job, ExecutionStats& stats, std::vector<std::string>* hosts) {
  if (hosts) hosts->assign(tiles_in_view(), std::string());
  if (!remote_) return;
  const RemoteCounts c = remote_->counts();
  stats.late_messages = c.late_messages;
  stats.refused_messages = c.refused_messages;
  stats.batched_messages = c.batched_messages;
  const unsigned first = options_.local_tiles();
  traffic_seen_.resize(tiles() - first);
  for (unsigned w = 0; first + w < stats.tiles.size(); ++w) {
    TileStats& t = stats.tiles[first + w];
    const RemoteWorker hello = remote_->worker(w);
    const RemoteTraffic traffic = remote_->traffic(w);
    t.worker = hello.name;
    t.host = hello.host;
    t.lost = remote_->lost(w);
    t.bytes_sent = traffic.bytes_sent - traffic_seen_[w].first;
    t.bytes_received = traffic.bytes_received - traffic_seen_[w].second;
    traffic_seen_[w] = {traffic.bytes_sent, traffic.bytes_received};
    WorkerTile& remote = *worker_tiles_[w];
    t.peer_bytes_in = remote.take_peer_bytes_in();
    const std::vector<WorkerTile::Corrupted> corrupted = remote.take_corrupted();
    t.corrupted_transfers = corrupted.size();
    stats.corrupted_transfers += corrupted.size();
    for (const WorkerTile::Corrupted& c : corrupted) {
      if (!job.tracing) break;
      const double at = std::chrono::duration<double>(c.when - job.t0).count();
      job.marks.push_back(TracedMark{"corrupted-transfer", job.plan->graph->data(c.data).name, static_cast<int>(first + w), at});
    }
    if (hosts) (*hosts)[first + w] = hello.name + " on " + hello.host;
  }
}

MachineModel Engine::machine() const {
  MachineModel m;
  m.tiles = options_.tiles;
  m.cores_per_tile = options_.cores_per_tile;
  m.slots = options_.slots;
  m.slot_bytes = options_.slot_bytes;
  m.actor_overhead_s = options_.actor_overhead_s;
  m.transfer_latency_s = options_.transfer_latency_s;
  if (!options_.cluster.listen.empty()) m.first_remote_tile = options_.local_tiles();
  return m;
}

Engine::~Engine() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

// The actor table goes to a tile once per plan (again only when another
// plan ran since); the fault configuration when it changed.
Status Engine::configure_tiles(const Plan& plan, const ExecutionRequest& request) {
  for (unsigned t = 0; t < tiles(); ++t) {
    // Out of service for good (lost, quarantined, a joiner that could not
    // take the graph) or not filled yet: it gets no work, so no table either.
    if (places_.lost(t) || places_.absent(t) || !places_.healthy(t)) continue;
    REDFLOW_RETURN_IF_ERROR(configuration_.configure(t, *tiles_[t], plan, request.fault_spec));
  }
  return Status::Ok();
}

Status Engine::execute(const Plan& plan, GraphState& state, const ExecutionRequest& request,
                       std::span<const std::span<const std::byte>> given, std::span<std::byte* const> output_to,
                       ExecutionStats& stats) {
  if (given.size() != state.given.size() || (!output_to.empty() && output_to.size() != state.outputs.size()))
    return Status::Internal("internal error: execute() was given " + std::to_string(given.size()) + " inputs and constants and " +
                            std::to_string(output_to.size()) + " output buffers for a graph of " + std::to_string(state.given.size()) +
                            " and " + std::to_string(state.outputs.size()));
  configuration_.build(plan);
  std::uint32_t joined_before = 0;  // workers that came since the last execution
  for (unsigned t = 0; t < tiles(); ++t) joined_before += places_.join_pending(t) && admit_joined(t, plan, request, nullptr);
  REDFLOW_RETURN_IF_ERROR(configure_tiles(plan, request));
  Job job;
  job.joins.set_joins(joined_before);
  job.plan = &plan;
  job.state = &state;
  job.scheduler = request.scheduler;
  job.request = &request;
  job.execution = ++execution_counter_;
  job.tracing = request.trace != nullptr;
  job.timed = job.tracing || request.time_actors;
  // Not in wire mode (every message must go through its bytes there), and not
  // once a tile was lost: the lost-tile path needs the messages' answers.
  job.plain = !plan.redundant && request.faults == nullptr && all_local_ && !any_tile_lost();
  job.in_place = job.plain && !job.tracing;
  job.speculation.set_on(state.booked != nullptr && remote_ != nullptr && !plan.redundant);
  job.remaining_actors.store(static_cast<std::uint32_t>(plan.actors.size()));
  places_.reset_votes(static_cast<unsigned>(runners_.size()));
  bool has_replicas = false;
  if (plan.redundant)
    for (const PlanActor& pa : plan.actors) has_replicas = has_replicas || pa.replica != 0;
  job.min_healthy = has_replicas ? std::min(2u, tiles()) : 1u;
  job.require_protection = options_.require_protection;

  if (job.plain && state.clean) {
    // Per-execution state resets itself on the fast path (GraphState::clean):
    // only the given nodes are set here, O(inputs), not O(actors).
    for (DataId d : state.given) {
      state.remaining[d].store(plan.data[d].consumer_count, std::memory_order_relaxed);
      state.home_state[d].store(home_word(0, kHomeValid), std::memory_order_relaxed);
    }
  } else {
    for (ActorId a = 0; a < plan.actors.size(); ++a) state.pending[a].store(plan.hot[a].initial_pending, std::memory_order_relaxed);
    for (DataId d = 0; d < plan.data.size(); ++d) {
      const PlanData& pd = plan.data[d];
      state.remaining[d].store(pd.consumer_count, std::memory_order_relaxed);
      state.location[d].store(kNowhere, std::memory_order_relaxed);
      const bool is_given = pd.kind == DataKind::kInput || pd.kind == DataKind::kConstant;
      state.home_state[d].store(home_word(0, is_given ? kHomeValid : kHomeInvalid), std::memory_order_relaxed);
    }
  }
  for (std::size_t i = 0; i < given.size(); ++i) state.home[state.given[i]] = given[i];
  state.clean = false;  // until this execution ends well
  MainMemory::place_outputs(state, output_to);
  if (plan.redundant) {
    for (DataId d = 0; d < plan.data.size(); ++d) {
      state.alias[d] = d;
      state.producer_tile[d] = -1;
      state.round[d].store(0, std::memory_order_relaxed);
    }
    for (ActorId a = 0; a < plan.actors.size(); ++a) {
      // HEFT placed replicas on distinct tiles; a tile that forwards one must know where its siblings are.
      const bool heft = job.scheduler == Scheduler::kHeft && plan.actors[a].replica != 0;
      state.replica_tile[a].store(heft ? plan.hot[a].heft_tile : -1, std::memory_order_relaxed);
      state.skipped[a].store(0, std::memory_order_relaxed);
    }
    for (ActorId v : state.voted) {
      state.vote_round[v] = 0;
      state.vote_history[v].clear();
    }
    state.voted.clear();
  }
  // Values of earlier executions are never read again: every slot starts free.
  for (auto& dir : state.dirs) std::fill(dir.occupied_bits.begin(), dir.occupied_bits.end(), 0);
  driver_.stats = TileStats{};
  driver_.trace.clear();
  driver_.counts = RedundancyCounts{};
  driver_.rng = (options_.seed ^ 0x5DEECE66DULL) + job.execution;
  memory_.take_transfer_bytes();
  driver_.queue.clear();
  driver_.queue.reserve(plan.actors.size());
  for (auto& r : runners_) {
    r->stats = TileStats{};
    r->counts = RedundancyCounts{};
    r->transfer_bytes = 0;
    r->unconfirmed.clear();
    r->flight.clear();
    r->walk_at.store(0, std::memory_order_relaxed);
    r->running_since_ns.store(0, std::memory_order_relaxed);
    r->pace.store(1, std::memory_order_relaxed);
    r->straggled.store(0, std::memory_order_relaxed);
    r->straggler_marked.store(false, std::memory_order_relaxed);
    r->late_seen.clear();
    r->measured_sum.store(0, std::memory_order_relaxed);
    r->measured_count.store(0, std::memory_order_relaxed);
    r->trace.clear();
    r->deque.reserve(plan.actors.size());
    r->deque.clear();  // a failed execution may have left work queued
    r->inbox.clear();
    // Left by an execution that ended with actors of them unplaced (or taken by thieves).
    r->relay_only.clear();
    r->emptied.clear();
    r->inbox.reserve(plan.actors.size());
    r->inbox_size.store(0);
    r->input_slots.reserve(plan.max_inputs);
    r->input_bytes.resize(plan.max_inputs);  // written by index: every actor has at most max_inputs
    r->output_slots.reserve(plan.max_runs);
    r->rng = (options_.seed + 0x9E3779B97F4A7C15ULL * (r->index + 1)) ^ job.execution;
    if (r->rng == 0) r->rng = 1;
  }
  // Tiles still on probation from an earlier execution are tested again
  // before this one is scheduled: one that passes takes part in it.
  job.t0 = std::chrono::steady_clock::now();
  if (!plan.actors.empty()) test_probation(job);
  if (replannable(job) || adapting(job)) job.joins.use_claims(state.claim.get(), job.execution);
  if (replannable(job)) {
    // The plan's schedule is for the tiles in service at load: made again
    // when a worker has joined or a tile is out of service since.
    job.joins.start_with(start_schedule(job));
  }
  job.t0 = std::chrono::steady_clock::now();
  if (job.scheduler == Scheduler::kSteal) {
    // Section 4.2: at the start, ready actors go to random queues (driver actors to the driver).
    std::uint64_t rng = options_.seed ^ (0xA5A5A5A5ULL + job.execution);
    if (rng == 0) rng = 1;
    for (ActorId a : plan.initially_ready) {
      if (plan.actors[a].on_driver) {
        driver_.queue.push_back(a);
      } else if (plan.actors[a].replica != 0) {
        // The runners are parked until the generation bump below, so pushing into their queues is safe here.
        placement_.place(job, a, nullptr, false);
      } else if (int t = placement_.pick_healthy_tile(rng, -1); t >= 0) {
        runners_[static_cast<unsigned>(t)]->deque.push(a);
      }
    }
  }

  if (plan.actors.empty()) {
    stats = ExecutionStats{};
  } else if (!job.aborted.load()) {
    active_.store(static_cast<std::uint32_t>(runners_.size()));
    job_.store(&job, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    driver_loop(job);
    for (std::uint32_t n; (n = active_.load(std::memory_order_acquire)) != 0;) active_.wait(n, std::memory_order_acquire);
    job_.store(nullptr);
    // An output's write-back may have failed because its tile was lost right
    // after the actor completed (a worker killed between the completion and
    // the read): recompute it now, so no output is left unwritten.
    if (!job.aborted.load() && any_tile_lost())
      for (DataId d : state.outputs)
        if (!memory_.ensure(job, d)) fail(job, "internal error: output '" + plan.graph->data(d).name + "' is nowhere after a lost tile");
  }
  // Tiles suspected during this execution: tested now, so that one hit by a
  // transient fault serves again before the caller looks.
  if (!plan.actors.empty()) test_probation(job);
  state.clean = job.plain && !job.aborted.load();
  report(job, stats);
  if (job.aborted.load()) {
    if (job.error_code == Status::Code::kActorFailed) return Status::ActorFailed(job.error);
    if (job.error_code == Status::Code::kGaveUp) return Status::GaveUp(job.error);
    return Status::Internal(job.error);
  }
  return Status::Ok();
}

void Engine::runner_main(unsigned t) {
  Runner& r = *runners_[t];
  std::uint32_t seen = 0;
  for (;;) {
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    Job* job = job_.load(std::memory_order_acquire);
    if (job != nullptr) {
      if (job->scheduler == Scheduler::kSteal) {
        steal_loop(r, *job);
      } else {
        heft_loop(r, *job);
      }
    }
    if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) active_.notify_all();
  }
}

bool Engine::finished(const Job& job) const {
  return job.remaining_actors.load(std::memory_order_acquire) == 0 || job.aborted.load(std::memory_order_acquire);
}

void Engine::fail(Job& job, std::string message, Status::Code code) {
  {
    std::lock_guard<std::mutex> lock(job.error_mutex);
    if (job.error.empty()) job.error = std::move(message), job.error_code = code;
  }
  job.aborted.store(true, std::memory_order_release);
  wake_all(job);
}

void Engine::flush_completed(Runner& r, Job& job) {
  if (r.unflushed == 0) return;
  const std::uint32_t n = r.unflushed;
  r.unflushed = 0;
  if (job.remaining_actors.fetch_sub(n, std::memory_order_acq_rel) == n) wake_all(job);
}

void Engine::wake_all(Job&) {
  steal_notifier_.notify_all();
  driver_.notifier.notify_all();
  for (auto& r : runners_) r->notifier.notify_all();
}

std::unique_ptr<GraphState> Engine::prepare(const Plan& plan) {
  auto s = std::make_unique<GraphState>();
  const std::size_t actors = plan.actors.size(), data = plan.data.size();
  s->pending = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
  s->remaining = make_huge_page_array<std::atomic<std::uint32_t>>(data);
  s->home_state = make_huge_page_array<std::atomic<std::uint32_t>>(data);
  s->location = make_huge_page_array<std::atomic<std::uint64_t>>(data);
  s->home.resize(data);
  s->home_write.assign(data, nullptr);
  s->driver_inputs.reserve(plan.max_inputs);
  s->alias.resize(data);
  for (DataId d = 0; d < data; ++d) s->alias[d] = d;
  if (plan.redundant) {
    // Only a redundant plan votes, places replicas or bumps rounds: 49 bytes
    // per actor that a plan without redundancy (the default) does not hold.
    s->checksum.assign(data, 0);
    s->producer_tile.assign(data, -1);
    s->round = make_huge_page_array<std::atomic<std::uint32_t>>(data);
    s->replica_tile = make_huge_page_array<std::atomic<int>>(actors);
    s->skipped = make_huge_page_array<std::atomic<std::uint8_t>>(actors);
    s->vote_round.assign(actors, 0);
    s->vote_history.resize(actors);
  }
  if (checks_values()) {
    if (!plan.redundant) s->checksum.assign(data, 0);
    s->checksum_of.assign(data, 0);
  }
  // HEFT walkers claim actors only where a join can make a new schedule
  // mid-run, or where an idle tile may take over a late tile's actors.
  if ((options_.join_places() > 0 || (plan.adapts() && options_.heft_adapts)) && !plan.redundant) s->claim = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
  if (!options_.cluster.listen.empty() && options_.speculate_after_s > 0 && !plan.redundant) {
    s->copied = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
    s->booked = make_huge_page_array<std::atomic<std::uint32_t>>(actors);
    s->measured_s = make_huge_page_array<std::atomic<float>>(actors);
  }
  MainMemory::assign(plan, *s);
  SlotDirectory::prepare(*s, tiles_.size(), options_.slots);
  return s;
}

bool Engine::checks_values() const {
  for (const auto& t : tiles_)
    if (t->checks_values()) return true;
  return !options_.cluster.listen.empty();  // workers may join later
}

std::span<const std::byte> Engine::output(const GraphState& state, DataId d) const { return state.home[d]; }


}  // namespace redflow::runtime
