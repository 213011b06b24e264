// The execution of a plan: tile runners (HEFT order or work stealing), the
// driver role, slot management with displacement, and readiness.
#include "runtime/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "fault/injector.hpp"

namespace redflow::runtime {

namespace {

constexpr ActorId kNone = ~ActorId{0};
constexpr ActorId kRetry = ~ActorId{0} - 1;  // run_actor_message: *-same runs disagreed
constexpr std::uint64_t kNowhere = ~std::uint64_t{0};
constexpr std::uint8_t kHomeInvalid = 0, kHomeWriting = 1, kHomeValid = 2;
// Redundancy limits: a compare actor re-executes its replicas at most this
// many times; a *-same tile gets this many actor messages of kTileRounds
// rounds each before the execution fails.
constexpr std::uint32_t kMaxVoteRounds = 8;
constexpr unsigned kTileRounds = 4;
constexpr unsigned kMaxSameMessages = 8;

std::uint64_t pack_location(unsigned tile, SlotId slot) { return (std::uint64_t{tile} << 32) | slot; }

std::uint64_t next_random(std::uint64_t& s) {  // xorshift64*
  s ^= s >> 12;
  s ^= s << 25;
  s ^= s >> 27;
  return s * 2685821657736338717ULL;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct Engine::Job {
  const Plan* plan = nullptr;
  GraphState* state = nullptr;
  Scheduler scheduler = Scheduler::kSteal;
  const ExecutionRequest* request = nullptr;
  std::uint32_t execution = 0;
  std::atomic<std::uint32_t> remaining_actors{0};
  std::atomic<bool> aborted{false};
  std::mutex error_mutex;
  std::string error;
  Status::Code error_code = Status::Code::kInternal;  // kActorFailed: the actor's own ctx.fail(), not the runtime
  std::chrono::steady_clock::time_point t0;
  bool tracing = false;
  std::unique_ptr<std::atomic<std::uint32_t>[]> lost_votes;  // per tile, this execution
  unsigned min_healthy = 1;   // quarantine never leaves fewer tiles in service
  std::mutex mark_mutex;      // marks are rare: failed votes, quarantines
  std::vector<TracedMark> marks;

  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

namespace {

struct RawActor {
  ActorId actor;
  int tile;
  unsigned replica, attempt;
  double start, end;
  bool stolen, faulty;
};
struct RawTransfer {
  DataId data;
  int from, to;
  std::size_t bytes;
  double start, end;
};
struct RawSlots {
  double time;
  unsigned used;
};

// Per-thread trace buffers, merged into the ExecutionTrace after the run.
struct TraceBuffer {
  std::vector<RawActor> actors;
  std::vector<RawTransfer> transfers;
  std::vector<RawSlots> slots;
  void clear() {
    actors.clear();
    transfers.clear();
    slots.clear();
  }
};

// Counters of the redundancy mechanism, per thread.
struct RedundancyCounts {
  std::uint64_t injected = 0, detected = 0, reexecutions = 0;
};

}  // namespace

struct Engine::DriverTrace {
  TraceBuffer buffer;
  RedundancyCounts counts;
};

struct Engine::Runner {
  unsigned index = 0;
  LocalTile* tile = nullptr;
  WorkDeque deque;
  std::mutex inbox_mutex;                  // pushes from the driver and from start-up only
  std::vector<ActorId> inbox;
  std::atomic<std::uint32_t> inbox_size{0};
  Notifier notifier;                       // HEFT: waiting for the next actor in order
  TileStats stats;
  std::uint64_t rng = 0;
  std::uint64_t clock = 0;
  std::vector<SlotId> input_slots;
  std::vector<SlotId> output_slots;        // *-same: one per run
  std::vector<std::uint64_t> unconfirmed;  // *-same: checksums of messages whose runs never agreed
  bool stolen = false;                     // the actor about to run was taken from another tile
  RedundancyCounts counts;
  TraceBuffer trace;
  // Actors this runner completed but has not yet subtracted from
  // Job::remaining_actors: one shared counter written by every tile per actor
  // would bounce its cache line between them. Flushed before the runner idles
  // or leaves, so the count reaches 0 exactly when all work is done.
  std::uint32_t unflushed = 0;
};

Engine::Engine(const RuntimeOptions& options)
    : options_(options), quarantined_(std::make_unique<std::atomic<bool>[]>(options.tiles)),
      driver_trace_(std::make_unique<DriverTrace>()) {}

std::vector<unsigned> Engine::quarantined_tiles() const {
  std::vector<unsigned> out;
  for (unsigned t = 0; t < options_.tiles; ++t)
    if (!healthy(t)) out.push_back(t);
  return out;
}

Status Engine::start() {
  if (!threads_.empty()) return Status::Ok();
  // Tile memory is reserved here, not in the constructor, so that a slot
  // budget the machine cannot reserve is an error the caller sees.
  try {
    for (unsigned t = 0; t < options_.tiles; ++t) {
      tiles_.push_back(std::make_unique<LocalTile>(options_.slots, options_.slot_bytes, options_.cores_per_tile, t));
      auto r = std::make_unique<Runner>();
      r->index = t;
      r->tile = tiles_.back().get();
      runners_.push_back(std::move(r));
    }
  } catch (const std::bad_alloc&) {
    tiles_.clear();
    runners_.clear();
    return Status::ResourceExhausted("cannot reserve tile memory: " + std::to_string(options_.tiles) + " tiles x " +
                                     std::to_string(options_.slots) + " slots x " + std::to_string(options_.slot_bytes) +
                                     " bytes (lower --tiles, --slots or --slot-bytes)");
  }
  for (unsigned t = 0; t < options_.tiles; ++t) threads_.emplace_back([this, t] { runner_main(t); });
  return Status::Ok();
}

Engine::~Engine() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

std::unique_ptr<GraphState> Engine::prepare(const Plan& plan) {
  auto s = std::make_unique<GraphState>();
  const std::size_t actors = plan.actors.size(), data = plan.data.size();
  s->pending = std::make_unique<std::atomic<std::uint32_t>[]>(actors);
  s->remaining = std::make_unique<std::atomic<std::uint32_t>[]>(data);
  s->home_state = std::make_unique<std::atomic<std::uint8_t>[]>(data);
  s->location = std::make_unique<std::atomic<std::uint64_t>[]>(data);
  s->home_buffer.resize(data);
  s->home.resize(data);
  s->home_write.assign(data, nullptr);
  s->driver_inputs.reserve(plan.max_inputs);
  s->checksum.assign(data, 0);
  s->producer_tile.assign(data, -1);
  s->alias.resize(data);
  for (DataId d = 0; d < data; ++d) s->alias[d] = d;
  s->round = std::make_unique<std::atomic<std::uint32_t>[]>(data);
  s->replica_tile = std::make_unique<std::atomic<int>[]>(actors);
  s->skipped = std::make_unique<std::atomic<std::uint8_t>[]>(actors);
  s->vote_round.assign(actors, 0);
  s->vote_history.resize(actors);
  assign_main_memory(plan, *s);
  s->dirs.resize(tiles_.size());
  for (auto& dir : s->dirs) {
    dir.slot_of.assign(data, -1);
    dir.held_round.assign(options_.slots, 0);
    dir.held.assign(options_.slots, DataTag{});
    dir.occupied.assign(options_.slots, false);
    dir.last_use.assign(options_.slots, 0);
    dir.stamp.assign(options_.slots, 0);
  }
  return s;
}

// Gives every inner and output node its place in main memory. Zero-copy for
// the paper's special actors: an inner node read only by a collect (once) is
// placed inside the collect's output, so writing it back is the collect; a
// split's output gets no buffer, it will be a range of the split's input.
void Engine::assign_main_memory(const Plan& plan, GraphState& s) {
  const std::size_t data = plan.data.size();
  constexpr DataId kNoParent = ~DataId{0};
  std::vector<DataId> parent(data, kNoParent);
  std::vector<std::size_t> offset(data, 0);
  std::vector<bool> split_output(data, false), own(data, false);
  for (const PlanActor& pa : plan.actors)
    if (pa.alias == ActorAlias::kInputRange) split_output[pa.output] = true;
  for (const PlanActor& pa : plan.actors) {
    if (pa.alias != ActorAlias::kConcatenation) continue;
    std::size_t at = 0;
    for (std::uint32_t i = 0; i < pa.input_count; ++i) {
      const DataId d = plan.inputs[pa.first_input + i];
      const PlanData& pd = plan.data[d];
      const bool once = pd.consumer_count == 1;
      if (pd.kind == DataKind::kInner && once && !split_output[d] && parent[d] == kNoParent) {
        parent[d] = pa.output;
        offset[d] = at;
      }
      at += pd.bytes;
    }
  }
  // Resolve chains (a collect feeding a collect) from the outermost buffer in.
  std::vector<std::byte*> base(data, nullptr);
  std::vector<bool> resolved(data, false);
  auto resolve = [&](auto&& self, DataId d) -> std::byte* {
    if (resolved[d]) return base[d];
    resolved[d] = true;
    const PlanData& pd = plan.data[d];
    if (pd.kind != DataKind::kInner && pd.kind != DataKind::kOutput) return base[d] = nullptr;
    if (split_output[d]) return base[d] = nullptr;
    if (parent[d] != kNoParent) {
      std::byte* outer = self(self, parent[d]);
      if (outer != nullptr) return base[d] = outer + offset[d];
    }
    s.home_buffer[d].resize(pd.bytes);
    own[d] = true;
    return base[d] = s.home_buffer[d].data();
  };
  for (DataId d = 0; d < data; ++d) {
    s.home_write[d] = resolve(resolve, d);
    if (s.home_write[d] != nullptr) s.home[d] = {s.home_write[d], plan.data[d].bytes};
  }
}

std::span<const std::byte> Engine::output(const GraphState& state, DataId d) const { return state.home[d]; }

Status Engine::execute(const Plan& plan, GraphState& state, const ExecutionRequest& request,
                       std::span<const std::span<const std::byte>> input_homes, ExecutionStats& stats) {
  Job job;
  job.plan = &plan;
  job.state = &state;
  job.scheduler = request.scheduler;
  job.request = &request;
  job.execution = ++execution_counter_;
  job.tracing = request.trace != nullptr;
  job.remaining_actors.store(static_cast<std::uint32_t>(plan.actors.size()));
  job.lost_votes = std::make_unique<std::atomic<std::uint32_t>[]>(runners_.size());
  bool has_replicas = false;
  for (const PlanActor& pa : plan.actors) has_replicas = has_replicas || pa.replica != 0;
  job.min_healthy = has_replicas ? std::min(2u, tiles()) : 1u;

  for (ActorId a = 0; a < plan.actors.size(); ++a) state.pending[a].store(plan.actors[a].initial_pending, std::memory_order_relaxed);
  for (DataId d = 0; d < plan.data.size(); ++d) {
    const PlanData& pd = plan.data[d];
    state.remaining[d].store(pd.consumer_count, std::memory_order_relaxed);
    state.location[d].store(kNowhere, std::memory_order_relaxed);
    const bool given = pd.kind == DataKind::kInput || pd.kind == DataKind::kConstant;
    if (given) state.home[d] = input_homes[d];
    state.home_state[d].store(given ? kHomeValid : kHomeInvalid, std::memory_order_relaxed);
  }
  if (plan.redundant) {
    for (DataId d = 0; d < plan.data.size(); ++d) {
      state.alias[d] = d;
      state.producer_tile[d] = -1;
      state.round[d].store(0, std::memory_order_relaxed);
    }
    for (ActorId a = 0; a < plan.actors.size(); ++a) {
      // HEFT placed replicas on distinct tiles; a tile that forwards one must know where its siblings are.
      const bool heft = job.scheduler == Scheduler::kHeft && plan.actors[a].replica != 0;
      state.replica_tile[a].store(heft ? plan.actors[a].heft_tile : -1, std::memory_order_relaxed);
      state.skipped[a].store(0, std::memory_order_relaxed);
    }
    for (ActorId v : state.voted) {
      state.vote_round[v] = 0;
      state.vote_history[v].clear();
    }
    state.voted.clear();
  }
  driver_stats_ = TileStats{};
  driver_trace_->buffer.clear();
  driver_trace_->counts = RedundancyCounts{};
  driver_rng_ = (options_.seed ^ 0x5DEECE66DULL) + job.execution;
  transfer_bytes_.store(0);
  driver_queue_.clear();
  driver_queue_.reserve(plan.actors.size());
  for (auto& r : runners_) {
    r->stats = TileStats{};
    r->counts = RedundancyCounts{};
    r->unconfirmed.clear();
    r->trace.clear();
    r->deque.reserve(plan.actors.size());
    r->inbox.clear();
    r->inbox.reserve(plan.actors.size());
    r->inbox_size.store(0);
    r->input_slots.reserve(plan.max_inputs);
    r->output_slots.reserve(plan.max_runs);
    r->tile->reserve_inputs(plan.max_inputs);
    r->rng = (options_.seed + 0x9E3779B97F4A7C15ULL * (r->index + 1)) ^ job.execution;
    if (r->rng == 0) r->rng = 1;
  }
  job.t0 = std::chrono::steady_clock::now();
  if (job.scheduler == Scheduler::kSteal) {
    // Section 4.2: at the start, ready actors go to random queues (driver actors to the driver).
    std::uint64_t rng = options_.seed ^ (0xA5A5A5A5ULL + job.execution);
    if (rng == 0) rng = 1;
    for (ActorId a : plan.initially_ready) {
      if (plan.actors[a].on_driver) {
        driver_queue_.push_back(a);
      } else if (plan.actors[a].replica != 0) {
        // The runners are parked until the generation bump below, so pushing into their queues is safe here.
        place_replica(job, a, nullptr, false);
      } else if (int t = pick_healthy_tile(rng, -1); t >= 0) {
        runners_[static_cast<unsigned>(t)]->deque.push(a);
      }
    }
  }

  const auto t0 = job.t0;
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
  }
  stats.makespan_s = seconds_since(t0);
  stats.scheduler = to_string(job.scheduler);
  stats.redundancy = request.redundancy;
  stats.tiles.clear();
  stats.actors_executed = stats.transfers = stats.transfer_bytes = stats.steals = stats.displacements = 0;
  stats.injected_faults = stats.detected_faults = stats.reexecutions = 0;
  stats.driver = driver_stats_;
  stats.actors_executed += driver_stats_.actors;
  stats.transfers += driver_stats_.transfers_in;
  auto add_counts = [&](const RedundancyCounts& c) {
    stats.injected_faults += c.injected;
    stats.detected_faults += c.detected;
    stats.reexecutions += c.reexecutions;
  };
  add_counts(driver_trace_->counts);
  for (auto& r : runners_) {
    r->stats.lost_votes = job.lost_votes[r->index].load();
    r->stats.quarantined = !healthy(r->index);
    stats.tiles.push_back(r->stats);
    stats.actors_executed += r->stats.actors;
    stats.transfers += r->stats.transfers_in;
    stats.steals += r->stats.steals;
    stats.displacements += r->stats.displacements;
    add_counts(r->counts);
  }
  stats.quarantined_tiles = quarantined_tiles();
  stats.transfer_bytes = transfer_bytes_.exchange(0);

  if (ExecutionTrace* trace = request.trace) {
    *trace = ExecutionTrace{};
    trace->tiles = tiles();
    trace->cores_per_tile = options_.cores_per_tile;
    trace->slots = options_.slots;
    trace->scheduler = stats.scheduler;
    trace->redundancy = request.redundancy;
    trace->makespan_s = stats.makespan_s;
    const Graph& g = *plan.graph;
    auto merge = [&](const TraceBuffer& b, int tile) {
      for (const RawActor& x : b.actors)
        trace->actors.push_back(TracedActor{x.actor, g.actor(x.actor).name, std::string(plan.actors[x.actor].original), x.tile,
                                            x.replica, x.attempt, x.start, x.end, x.stolen, x.faulty});
      for (const RawTransfer& x : b.transfers)
        trace->transfers.push_back(TracedTransfer{g.data(x.data).name, x.from, x.to, x.bytes, x.start, x.end});
      for (const RawSlots& x : b.slots) trace->slot_use.push_back(TracedSlots{tile, x.time, x.used});
    };
    merge(driver_trace_->buffer, kDriverTile);
    for (auto& r : runners_) merge(r->trace, static_cast<int>(r->index));
    auto by_start = [](const auto& a, const auto& b) { return a.start_s < b.start_s; };
    std::stable_sort(trace->actors.begin(), trace->actors.end(), by_start);
    std::stable_sort(trace->transfers.begin(), trace->transfers.end(), by_start);
    std::stable_sort(trace->slot_use.begin(), trace->slot_use.end(), [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
    trace->marks = std::move(job.marks);
  }
  if (job.aborted.load()) return job.error_code == Status::Code::kActorFailed ? Status::ActorFailed(job.error) : Status::Internal(job.error);
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
  driver_notifier_.notify_all();
  for (auto& r : runners_) r->notifier.notify_all();
}

// ---------------------------------------------------------------- queues

void Engine::push_inbox(Runner& target, ActorId a) {
  {
    std::lock_guard<std::mutex> lock(target.inbox_mutex);
    target.inbox.push_back(a);
    target.inbox_size.fetch_add(1, std::memory_order_release);
  }
  // All: the work is meant for `target`, and waking one arbitrary sleeper may
  // wake a tile that cannot take it (a sibling replica's tile) while target sleeps.
  steal_notifier_.notify_all();
  target.notifier.notify_all();
}

// Takes work from `victim`'s inbox for tile `taker`, newest first. A replica
// is taken only by a healthy tile that holds no other replica of its actor
// (section 5.1: a thief never takes a replica of an actor it ran or holds).
ActorId Engine::take_inbox(Runner& victim, Job& job, unsigned taker) {
  if (victim.inbox_size.load(std::memory_order_acquire) == 0) return kNone;
  std::lock_guard<std::mutex> lock(victim.inbox_mutex);
  for (std::size_t i = victim.inbox.size(); i-- > 0;) {
    const ActorId a = victim.inbox[i];
    const PlanActor& pa = job.plan->actors[a];
    if (pa.replica != 0) {
      // Check and claim under the group's lock: two tiles must not claim siblings at once.
      std::lock_guard<std::mutex> claim(placement_lock(pa.vote));
      if (victim.index != taker && !may_take(job, a, taker)) continue;
      job.state->replica_tile[a].store(static_cast<int>(taker), std::memory_order_release);
    } else if (victim.index != taker && !healthy(taker)) {
      continue;
    }
    victim.inbox.erase(victim.inbox.begin() + static_cast<std::ptrdiff_t>(i));
    victim.inbox_size.fetch_sub(1, std::memory_order_relaxed);
    return a;
  }
  return kNone;
}

// ---------------------------------------------------------------- work stealing

void Engine::steal_loop(Runner& r, Job& job) {
  const std::size_t n = runners_.size();
  auto steal_from = [&](Runner& victim) -> ActorId {
    if (&victim == &r) return kNone;
    ActorId a = kNone;
    if (auto stolen = victim.deque.steal()) a = *stolen;
    if (a == kNone) a = take_inbox(victim, job, r.index);
    if (a != kNone) {
      ++r.stats.steals;
      r.stolen = true;
    }
    return a;
  };
  auto find_work = [&]() -> ActorId {
    r.stolen = false;
    if (auto a = r.deque.pop()) return *a;
    if (ActorId a = take_inbox(r, job, r.index); a != kNone) return a;
    // A quarantined tile hands its queue to others and never steals.
    if (n == 1 || !healthy(r.index)) return kNone;
    // Section 4.2: take from the back of a random victim's queue.
    for (std::size_t attempt = 0; attempt < 2 * n; ++attempt)
      if (ActorId a = steal_from(*runners_[next_random(r.rng) % n]); a != kNone) return a;
    // Random victims can miss the one queue that has work; sweep once before idling.
    for (auto& victim : runners_)
      if (ActorId a = steal_from(*victim); a != kNone) return a;
    return kNone;
  };
  auto any_work = [&]() {
    if (!healthy(r.index)) return !r.deque.empty() || r.inbox_size.load(std::memory_order_acquire) != 0;
    for (auto& v : runners_)
      if (!v->deque.empty() || v->inbox_size.load(std::memory_order_acquire) != 0) return true;
    return false;
  };

  while (!finished(job)) {
    ActorId a = find_work();
    if (a == kNone) {
      flush_completed(r, job);
      for (int spin = 0; spin < 64 && a == kNone && !finished(job); ++spin) {
        std::this_thread::yield();
        a = find_work();
      }
    }
    if (a == kNone) {
      const std::uint32_t token = steal_notifier_.prepare();
      if (finished(job) || any_work()) {
        steal_notifier_.cancel();
        continue;
      }
      steal_notifier_.wait(token);
      continue;
    }
    while (a != kNone && !job.aborted.load(std::memory_order_relaxed)) {
      a = run_on_tile(r, job, a);
      r.stolen = false;
    }
  }
  flush_completed(r, job);
}

// ---------------------------------------------------------------- HEFT order

// Walks the tile's HEFT order. While waiting for the next actor's inputs it
// runs what was handed to it (re-executed replicas, work of a quarantined
// tile), and after its order it keeps doing so until the execution ends.
void Engine::heft_loop(Runner& r, Job& job) {
  const auto& order = job.plan->heft.tile_order;
  auto serve_inbox = [&]() {
    const ActorId x = take_inbox(r, job, r.index);
    if (x == kNone) return false;
    run_on_tile(r, job, x);
    return true;
  };
  if (r.index < order.size()) {
    for (ActorId a : order[r.index]) {
      auto ready = [&] { return job.state->pending[a].load(std::memory_order_acquire) == 0 || job.aborted.load(); };
      if (!ready()) flush_completed(r, job);
      for (int spin = 0; spin < 256 && !ready(); ++spin) {
        if (serve_inbox()) continue;
        std::this_thread::yield();
      }
      while (!ready()) {
        if (serve_inbox()) continue;
        flush_completed(r, job);
        const std::uint32_t token = r.notifier.prepare();
        if (ready() || r.inbox_size.load(std::memory_order_acquire) != 0) {
          r.notifier.cancel();
          continue;
        }
        r.notifier.wait(token);
      }
      if (job.aborted.load()) break;
      run_on_tile(r, job, a);
    }
  }
  while (!finished(job)) {
    if (serve_inbox()) continue;
    flush_completed(r, job);
    const std::uint32_t token = r.notifier.prepare();
    if (finished(job) || r.inbox_size.load(std::memory_order_acquire) != 0) {
      r.notifier.cancel();
      continue;
    }
    r.notifier.wait(token);
  }
  flush_completed(r, job);
}

// ---------------------------------------------------------------- driver

void Engine::driver_loop(Job& job) {
  const Plan& plan = *job.plan;
  if (job.scheduler == Scheduler::kHeft) {
    for (ActorId a : plan.heft.driver_order) {
      if (plan.actors[a].is_vote) continue;  // voted where its last replica finishes, not run by the driver
      auto ready = [&] { return job.state->pending[a].load(std::memory_order_acquire) == 0 || job.aborted.load(); };
      while (!ready()) {
        const std::uint32_t token = driver_notifier_.prepare();
        if (ready()) {
          driver_notifier_.cancel();
          break;
        }
        driver_notifier_.wait(token);
      }
      if (job.aborted.load()) break;
      run_on_driver(job, a);
    }
  } else {
    for (;;) {
      ActorId a = kNone;
      {
        std::lock_guard<std::mutex> lock(driver_mutex_);
        if (!driver_queue_.empty()) {
          a = driver_queue_.back();
          driver_queue_.pop_back();
        }
      }
      if (a != kNone) {
        run_on_driver(job, a);
        continue;
      }
      if (finished(job)) break;
      const std::uint32_t token = driver_notifier_.prepare();
      bool has_work;
      {
        std::lock_guard<std::mutex> lock(driver_mutex_);
        has_work = !driver_queue_.empty();
      }
      if (has_work || finished(job)) {
        driver_notifier_.cancel();
        continue;
      }
      driver_notifier_.wait(token);
    }
  }
  // Wait for the tiles to finish the rest.
  while (!finished(job)) {
    const std::uint32_t token = driver_notifier_.prepare();
    if (finished(job)) {
      driver_notifier_.cancel();
      break;
    }
    driver_notifier_.wait(token);
  }
}

bool Engine::ensure_home(Job& job, DataId d) {
  GraphState& s = *job.state;
  if (s.home_state[d].load(std::memory_order_acquire) == kHomeValid) return true;
  const std::uint64_t loc = s.location[d].load(std::memory_order_acquire);
  if (loc == kNowhere) return false;
  const unsigned t = static_cast<unsigned>(loc >> 32);
  write_home(job, d, *tiles_[t], static_cast<SlotId>(loc & 0xffffffffu), driver_stats_);
  return s.home_state[d].load(std::memory_order_acquire) == kHomeValid;
}

void Engine::run_on_driver(Job& job, ActorId a) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  auto& inputs = s.driver_inputs;
  inputs.clear();
  for (std::uint32_t i = 0; i < pa.input_count; ++i) {
    const DataId d = s.alias[plan.inputs[pa.first_input + i]];
    // Transfers from tiles land in main memory; for a collect's aliased input that is already its place in the output.
    if (!ensure_home(job, d)) {
      fail(job, "internal error: input '" + plan.graph->data(d).name + "' of driver actor '" + std::string(pa.name) + "' is nowhere");
      return;
    }
    inputs.push_back(s.home[d]);
  }
  const std::size_t out_bytes = plan.data[pa.output].bytes;
  const auto t0 = std::chrono::steady_clock::now();
  const double trace_start = job.tracing ? job.now() : 0;
  if (pa.alias == ActorAlias::kInputRange) {
    s.home[pa.output] = inputs[0].subspan(pa.alias_offset, out_bytes);  // the shape check guaranteed the range
  } else if (pa.alias == ActorAlias::kConcatenation) {
    std::byte* out = s.home_write[pa.output];
    std::size_t at = 0;
    for (const auto& in : inputs) {
      if (in.data() != out + at && !in.empty()) std::memcpy(out + at, in.data(), in.size());
      at += in.size();
    }
  } else {
    ActorContext ctx(pa.name, pa.args, inputs, std::span<std::byte>(s.home_write[pa.output], out_bytes), nullptr);
    invoke_actor(*pa.function, ctx);
    if (ctx.failure()) {
      fail(job, "actor '" + std::string(pa.name) + "' failed on the driver: " + *ctx.failure(), Status::Code::kActorFailed);
      return;
    }
  }
  driver_stats_.busy_s += seconds_since(t0);
  ++driver_stats_.actors;
  if (job.tracing) driver_trace_->buffer.actors.push_back(RawActor{a, kDriverTile, 0, 0, trace_start, job.now(), false, false});
  s.home_state[pa.output].store(kHomeValid, std::memory_order_release);
  // Main memory needs no slot freeing: the inputs' consumer counts just drop.
  for (std::uint32_t i = 0; i < pa.input_count; ++i)
    s.remaining[s.alias[plan.inputs[pa.first_input + i]]].fetch_sub(1, std::memory_order_acq_rel);
  complete(job, a, nullptr);
}

// ---------------------------------------------------------------- compute tiles

void Engine::write_home(Job& job, DataId d, LocalTile& tile, SlotId slot, TileStats& stats) {
  GraphState& s = *job.state;
  std::uint8_t expected = kHomeInvalid;
  if (s.home_state[d].compare_exchange_strong(expected, kHomeWriting, std::memory_order_acq_rel)) {
    const std::size_t bytes = job.plan->data[d].bytes;
    const double start = job.tracing ? job.now() : 0;
    const bool ok = tile.read_slot(slot, DataTag{job.execution, d}, std::span<std::byte>(s.home_write[d], bytes));
    s.home_state[d].store(ok ? kHomeValid : kHomeInvalid, std::memory_order_release);
    if (ok) {
      ++stats.transfers_in;
      transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
      if (job.tracing) {
        // Recorded by the thread that moved the bytes: the tile's own runner, or the driver.
        TraceBuffer& buffer = &stats == &driver_stats_ ? driver_trace_->buffer : runners_[tile.index()]->trace;
        buffer.transfers.push_back(RawTransfer{d, static_cast<int>(tile.index()), kDriverTile, bytes, start, job.now()});
      }
    }
    return;
  }
  // Someone else is writing the same immutable bytes; wait for them.
  while (s.home_state[d].load(std::memory_order_acquire) == kHomeWriting) std::this_thread::yield();
}

bool Engine::allocate_slot(Runner& r, Job& job, SlotId& slot) {
  GraphState& s = *job.state;
  auto& dir = s.dirs[r.index];
  const auto& data = job.plan->data;
  // Cost of reusing a slot: 0 free or dead, 1 droppable (main memory has it), 2 needs a write-back.
  int best = -1, best_cost = 3;
  std::uint64_t best_use = ~std::uint64_t{0};
  for (SlotId i = 0; i < dir.held.size(); ++i) {
    if (dir.stamp[i] == r.clock) continue;  // holds an input or output of the actor being placed
    int cost;
    if (!dir.occupied[i] || dir.held[i].execution != job.execution) {
      cost = 0;
    } else {
      const DataId d = dir.held[i].data;
      // Dead: no consumer left, or a replica result a re-execution superseded.
      const bool dead = (s.remaining[d].load(std::memory_order_acquire) == 0 && data[d].kind == DataKind::kInner) ||
                        dir.held_round[i] != s.round[d].load(std::memory_order_acquire);
      cost = dead ? 0 : (s.home_state[d].load(std::memory_order_acquire) == kHomeValid ? 1 : 2);
    }
    if (cost < best_cost || (cost == best_cost && dir.last_use[i] < best_use)) {
      best = static_cast<int>(i);
      best_cost = cost;
      best_use = dir.last_use[i];
      if (cost == 0 && !dir.occupied[i]) break;
    }
  }
  if (best < 0) return false;
  slot = static_cast<SlotId>(best);
  if (dir.occupied[slot]) {
    const DataTag old = dir.held[slot];
    if (old.execution == job.execution) {
      if (best_cost == 2) {
        write_home(job, old.data, *r.tile, slot, r.stats);
        ++r.stats.displacements;
      }
      if (dir.slot_of[old.data] == static_cast<std::int32_t>(slot)) dir.slot_of[old.data] = -1;
    } else if (old.data < dir.slot_of.size() && dir.slot_of[old.data] == static_cast<std::int32_t>(slot)) {
      dir.slot_of[old.data] = -1;
    }
    r.tile->clear_slot(slot);
    dir.occupied[slot] = false;
  }
  dir.stamp[slot] = r.clock;
  dir.last_use[slot] = r.clock;
  return true;
}

bool Engine::place_input(Runner& r, Job& job, DataId d, SlotId& slot) {
  GraphState& s = *job.state;
  auto& dir = s.dirs[r.index];
  const DataTag tag{job.execution, d};
  const std::uint32_t round = job.plan->redundant ? s.round[d].load(std::memory_order_acquire) : 0;
  const std::int32_t held = dir.slot_of[d];
  if (held >= 0 && dir.occupied[held] && dir.held[held] == tag && dir.held_round[held] == round) {
    slot = static_cast<SlotId>(held);
    dir.stamp[slot] = r.clock;
    dir.last_use[slot] = r.clock;
    return true;
  }
  if (!allocate_slot(r, job, slot)) return false;
  const std::size_t bytes = job.plan->data[d].bytes;
  DataNodeMessage m;
  m.tag = tag;
  m.slot = slot;
  m.bytes = bytes;
  bool placed = false;
  int from = kDriverTile;
  const double start = job.tracing ? job.now() : 0;
  const std::uint64_t loc = s.location[d].load(std::memory_order_acquire);
  if (loc != kNowhere && static_cast<unsigned>(loc >> 32) != r.index) {
    // Tile-to-tile transfer: fetch from the producer's slot.
    m.from_tile = tiles_[loc >> 32].get();
    m.from_slot = static_cast<SlotId>(loc & 0xffffffffu);
    placed = r.tile->data_node(m).ok();
    m.from_tile = nullptr;
    from = static_cast<int>(loc >> 32);
  }
  if (!placed) {
    // Driver-to-tile transfer from main memory; the producer's copy was displaced, so main memory has it.
    from = kDriverTile;
    while (s.home_state[d].load(std::memory_order_acquire) == kHomeWriting) std::this_thread::yield();
    if (s.home_state[d].load(std::memory_order_acquire) != kHomeValid) {
      fail(job, "internal error: data node '" + job.plan->graph->data(d).name + "' is in no memory");
      return false;
    }
    m.payload = s.home[d];
    if (Status st = r.tile->data_node(m); !st.ok()) {
      fail(job, "transfer of data node '" + job.plan->graph->data(d).name + "' failed: " + st.message());
      return false;
    }
  }
  ++r.stats.transfers_in;
  transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (job.tracing) r.trace.transfers.push_back(RawTransfer{d, from, static_cast<int>(r.index), bytes, start, job.now()});
  dir.held[slot] = tag;
  dir.held_round[slot] = round;
  dir.occupied[slot] = true;
  dir.slot_of[d] = static_cast<std::int32_t>(slot);
  return true;
}

ActorId Engine::run_on_tile(Runner& r, Job& job, ActorId a) {
  const PlanActor& pa = job.plan->actors[a];
  if (pa.on_driver) {
    // Only reachable through a schedule that ignored Algorithm 2's rule.
    fail(job, "internal error: driver actor '" + std::string(pa.name) + "' scheduled on tile " + std::to_string(r.index));
    return kNone;
  }
  if (!healthy(r.index)) {
    forward(job, a, r);
    return kNone;
  }
  // *-same: the tile votes by itself; a message whose rounds all disagree is
  // a lost vote, and the actor goes to another tile if this one is quarantined.
  for (unsigned message = 0;; ++message) {
    ActorId next = run_actor_message(r, job, a, message);
    if (next != kRetry) return next;
    if (!healthy(r.index)) {
      // Another tile starts over; a tile quarantined for its results has every one of them discarded as faulty.
      r.counts.detected += r.unconfirmed.size();
      r.unconfirmed.clear();
      forward(job, a, r);
      return kNone;
    }
    if (message + 1 >= kMaxSameMessages) {
      fail(job, "actor '" + std::string(pa.original) + "': no two of its " + std::to_string(pa.runs) + " runs on tile " +
                    std::to_string(r.index) + " agreed in " + std::to_string(kMaxSameMessages * kTileRounds) + " rounds");
      return kNone;
    }
  }
}

// One actor message to tile r: place inputs, reserve output slots, run, and
// on success resolve successors. Returns kRetry when *-same runs disagreed.
ActorId Engine::run_actor_message(Runner& r, Job& job, ActorId a, unsigned message) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  ++r.clock;
  r.input_slots.clear();
  for (std::uint32_t i = 0; i < pa.input_count; ++i) {
    SlotId slot;
    if (!place_input(r, job, s.alias[plan.inputs[pa.first_input + i]], slot)) {
      if (!job.aborted.load()) fail(job, "actor '" + std::string(pa.name) + "' needs more slots than tile " + std::to_string(r.index) + " has");
      return kNone;
    }
    r.input_slots.push_back(slot);
  }
  // Section 5.2: enough free slots for every run's result before the actor is sent.
  r.output_slots.clear();
  for (unsigned run = 0; run < pa.runs; ++run) {
    SlotId out_slot;
    if (!allocate_slot(r, job, out_slot)) {
      fail(job, "actor '" + std::string(pa.name) + "' needs more slots than tile " + std::to_string(r.index) + " has");
      return kNone;
    }
    r.output_slots.push_back(out_slot);
  }
  ActorMessage m;
  m.actor = a;
  m.execution = job.execution;
  m.function = pa.function;
  m.name = pa.name;
  m.args = pa.args;
  m.input_slots = r.input_slots;
  m.output_slot = r.output_slots[0];
  m.extra_output_slots = std::span<const SlotId>(r.output_slots).subspan(1);
  m.runs = pa.runs;
  m.max_rounds = kTileRounds;
  m.output_tag = DataTag{job.execution, pa.output};
  m.output_bytes = plan.data[pa.output].bytes;
  m.want_checksum = pa.replica != 0;
  m.faults = job.request->faults;
  m.fault_execution = job.request->fault_execution;
  m.replica = pa.replica;
  // Re-executions get fresh fault decisions: a transient fault does not repeat.
  const unsigned attempt = pa.replica != 0 ? s.vote_round[pa.vote] : message;
  m.attempt = attempt;
  const double trace_start = job.tracing ? job.now() : 0;
  Completion done = r.tile->actor(m);
  r.stats.busy_s += done.seconds;
  r.stats.checksum_s += done.checksum_seconds;
  if (pa.replica != 0) s.replica_tile[a].store(static_cast<int>(r.index), std::memory_order_release);
  if (job.tracing)
    r.trace.actors.push_back(RawActor{a, static_cast<int>(r.index), pa.replica, attempt, trace_start, job.now(), r.stolen, done.injected > 0});
  if (!done.ok) {
    fail(job, "actor '" + std::string(pa.name) + "' failed on tile " + std::to_string(r.index) + ": " + done.error,
         done.actor_failed ? Status::Code::kActorFailed : Status::Code::kInternal);
    return kNone;
  }
  r.stats.actors += done.executions;
  r.counts.injected += done.injected;
  if (!done.agreed) {
    r.unconfirmed.insert(r.unconfirmed.end(), done.unconfirmed.begin(), done.unconfirmed.end());
    r.counts.reexecutions += done.executions;
    lose_vote(job, static_cast<int>(r.index));
    mark(job, "vote-failed", std::string(pa.name), static_cast<int>(r.index));
    return kRetry;
  }
  if (pa.runs > 1) {
    // Results of earlier messages that found no agreement count once one is confirmed.
    for (std::uint64_t sum : r.unconfirmed) r.counts.detected += sum != done.checksum;
    r.unconfirmed.clear();
    r.counts.detected += done.rejected;
    r.counts.reexecutions += done.executions - pa.runs;
    if (done.rejected > 0) lose_vote(job, static_cast<int>(r.index));
  }
  auto& dir = s.dirs[r.index];
  const SlotId out_slot = done.output_slot;
  const PlanData& out = plan.data[pa.output];
  if (pa.replica != 0) {
    s.checksum[pa.output] = done.checksum;
    s.producer_tile[pa.output] = static_cast<int>(r.index);
  } else if (plan.redundant) {
    s.producer_tile[pa.output] = static_cast<int>(r.index);
  }
  if (out.kind == DataKind::kInner && out.consumer_count == 0) {
    // Dead at birth: nobody reads it and the driver does not keep it, so its
    // slot is free again at once. (Left occupied, every later allocate_slot
    // would scan the whole directory, finding it dead only by looking.)
    r.tile->clear_slot(out_slot);
  } else {
    dir.held[out_slot] = m.output_tag;
    dir.held_round[out_slot] = plan.redundant ? s.round[pa.output].load(std::memory_order_relaxed) : 0;
    dir.occupied[out_slot] = true;
    dir.slot_of[pa.output] = static_cast<std::int32_t>(out_slot);
    s.location[pa.output].store(pack_location(r.index, out_slot), std::memory_order_release);
    // The driver keeps outputs: copy them to main memory now, while they are hot.
    if (out.kind == DataKind::kOutput) write_home(job, pa.output, *r.tile, out_slot, r.stats);
  }
  // Inputs whose last consumer this was are dead: free their slots here. A
  // replica keeps its inputs until its vote confirms a result: a re-execution
  // needs them (non-speculative rollback, section 5.2).
  if (pa.replica == 0) {
    for (std::uint32_t i = 0; i < pa.input_count; ++i) {
      const DataId d = s.alias[plan.inputs[pa.first_input + i]];
      if (s.remaining[d].fetch_sub(1, std::memory_order_acq_rel) == 1 && plan.data[d].kind == DataKind::kInner) {
        const SlotId slot = r.input_slots[i];
        if (dir.occupied[slot] && dir.held[slot].data == d) {
          r.tile->clear_slot(slot);
          dir.occupied[slot] = false;
          dir.slot_of[d] = -1;
        }
      }
    }
  }
  if (job.tracing) {
    unsigned used = 0;
    for (bool o : dir.occupied) used += o;
    r.trace.slots.push_back(RawSlots{job.now(), used});
  }
  return complete(job, a, &r);
}

ActorId Engine::complete(Job& job, ActorId a, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  const PlanData& out = plan.data[pa.output];
  ActorId next = kNone;
  bool pushed_tile = false, pushed_driver = false;
  // Work another path made ready (a vote's consumers): run it next or queue it here.
  auto adopt = [&](ActorId x) {
    if (x == kNone) return;
    if (next == kNone) {
      next = x;
    } else if (plan.actors[x].replica != 0) {
      push_inbox(*from, x);  // thieves check replicas in inboxes, never in deques
    } else {
      from->deque.push(x);
      pushed_tile = true;
    }
  };
  for (std::uint32_t i = 0; i < out.consumer_count; ++i) {
    const ActorId c = plan.consumers[out.first_consumer + i];
    if (s.pending[c].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
    const PlanActor& pc = plan.actors[c];
    if (pc.is_vote) {
      // Section 5.2: the compare actor runs as soon as its replicas are done.
      adopt(vote(job, c, from));
      continue;
    }
    if (job.scheduler == Scheduler::kHeft) {
      if (pc.heft_tile == kDriverTile) {
        pushed_driver = true;
      } else if (from == nullptr || static_cast<int>(from->index) != pc.heft_tile) {
        runners_[pc.heft_tile]->notifier.notify_all();
      }
      continue;
    }
    if (pc.on_driver) {
      std::lock_guard<std::mutex> lock(driver_mutex_);
      driver_queue_.push_back(c);
      pushed_driver = true;
    } else if (pc.replica != 0) {
      adopt(place_replica(job, c, from, next == kNone));
    } else if (from != nullptr) {
      // Work-first: the first successor runs next on this tile; the others go to the front of its queue.
      if (next == kNone) {
        next = c;
      } else {
        from->deque.push(c);
        pushed_tile = true;
      }
    } else {
      // After a driver actor, ready work goes to a random compute tile (section 4.2).
      const int t = pick_healthy_tile(driver_rng_, -1);
      if (t < 0) {
        fail(job, "no compute tile is in service");
        break;
      }
      push_inbox(*runners_[static_cast<unsigned>(t)], c);
    }
  }
  if (pushed_tile) steal_notifier_.notify_one();
  if (pushed_driver) driver_notifier_.notify_one();
  if (from != nullptr) {
    ++from->unflushed;
  } else if (job.remaining_actors.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    wake_all(job);
  }
  return next;
}

// ---------------------------------------------------------------- redundancy

bool Engine::sibling_on(const Job& job, ActorId a, unsigned tile) const {
  const Plan& plan = *job.plan;
  const PlanActor& pa = plan.actors[a];
  if (pa.replica == 0) return false;
  const PlanActor& v = plan.actors[pa.vote];
  for (std::uint32_t i = 0; i < v.input_count; ++i) {
    const ActorId sib = plan.data[plan.inputs[v.first_input + i]].producer;
    if (sib != a && job.state->replica_tile[sib].load(std::memory_order_acquire) == static_cast<int>(tile)) return true;
  }
  return false;
}

bool Engine::may_take(const Job& job, ActorId a, unsigned tile) const {
  if (!healthy(tile)) return false;
  return job.plan->actors[a].replica == 0 || !sibling_on(job, a, tile);
}

int Engine::pick_healthy_tile(std::uint64_t& rng, int except) {
  const unsigned n = tiles();
  const unsigned start = static_cast<unsigned>(next_random(rng) % n);
  for (unsigned k = 0; k < n; ++k) {
    const unsigned t = (start + k) % n;
    if (healthy(t) && static_cast<int>(t) != except) return static_cast<int>(t);
  }
  return -1;
}

// Section 5.1's insertion rule for the second and third replica: among the
// tiles that may take it, those that computed one of its inputs, then the
// shortest queue, random among equals. After a failed vote, tiles that took
// part in a failed round come last, so a permanently faulty tile is left out.
int Engine::pick_replica_tile(Job& job, ActorId a, std::uint64_t& rng, bool avoid_failed) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  const unsigned n = tiles();
  int best = -1;
  std::uint64_t best_key = ~std::uint64_t{0};
  unsigned ties = 0;
  for (unsigned t = 0; t < n; ++t) {
    if (!may_take(job, a, t)) continue;
    bool computed_input = false;
    for (std::uint32_t i = 0; i < pa.input_count && !computed_input; ++i)
      computed_input = s.producer_tile[s.alias[plan.inputs[pa.first_input + i]]] == static_cast<int>(t);
    bool failed_before = false;
    if (avoid_failed)
      for (const auto& [tile, sum] : s.vote_history[pa.vote]) failed_before = failed_before || tile == static_cast<int>(t);
    const Runner& v = *runners_[t];
    const std::uint64_t queue = v.deque.size_estimate() + v.inbox_size.load(std::memory_order_relaxed);
    const std::uint64_t key = (std::uint64_t{failed_before} << 62) | (std::uint64_t{!computed_input} << 61) | std::min<std::uint64_t>(queue, 1ULL << 60);
    if (key < best_key) {
      best = static_cast<int>(t);
      best_key = key;
      ties = 1;
    } else if (key == best_key && next_random(rng) % ++ties == 0) {
      best = static_cast<int>(t);  // reservoir sampling: uniform among equals
    }
  }
  return best;
}

// A *-diff replica became ready. Runs it here when allowed (work-first),
// otherwise hands it to a tile chosen by pick_replica_tile; returns the
// actor this tile should run next, or kNone.
ActorId Engine::place_replica(Job& job, ActorId c, Runner* from, bool may_run_here) {
  GraphState& s = *job.state;
  const ActorId v = job.plan->actors[c].vote;
  int t = -1;
  {
    std::lock_guard<std::mutex> claim(placement_lock(v));
    if (from != nullptr && may_run_here && may_take(job, c, from->index)) {
      s.replica_tile[c].store(static_cast<int>(from->index), std::memory_order_release);
      return c;
    }
    std::uint64_t& rng = from != nullptr ? from->rng : driver_rng_;
    t = pick_replica_tile(job, c, rng, s.vote_round[v] > 0);
    if (t >= 0) s.replica_tile[c].store(t, std::memory_order_release);
  }
  if (t < 0) return skip_replica(job, c, from);
  push_inbox(*runners_[static_cast<unsigned>(t)], c);
  return kNone;
}

// No tile in service may take this replica (fewer healthy tiles than
// replicas after a quarantine): its actor is voted on the other replicas.
ActorId Engine::skip_replica(Job& job, ActorId c, Runner* from) {
  job.state->replica_tile[c].store(-1, std::memory_order_release);
  job.state->skipped[c].store(1, std::memory_order_release);
  mark(job, "replica-skipped", std::string(job.plan->actors[c].name), -1);
  return complete(job, c, from);
}

// Moves an actor away from a quarantined tile.
void Engine::forward(Job& job, ActorId a, Runner& from) {
  if (job.plan->actors[a].replica != 0) {
    GraphState& s = *job.state;
    const ActorId v = job.plan->actors[a].vote;
    int t = -1;
    {
      std::lock_guard<std::mutex> claim(placement_lock(v));
      s.replica_tile[a].store(-1, std::memory_order_release);
      t = pick_replica_tile(job, a, from.rng, s.vote_round[v] > 0);
      if (t >= 0) s.replica_tile[a].store(t, std::memory_order_release);
    }
    if (t >= 0) {
      push_inbox(*runners_[static_cast<unsigned>(t)], a);
      return;
    }
    const ActorId next = skip_replica(job, a, &from);
    if (const int h = pick_healthy_tile(from.rng, -1); next != kNone && h >= 0) push_inbox(*runners_[static_cast<unsigned>(h)], next);
    return;
  }
  const int t = pick_healthy_tile(from.rng, static_cast<int>(from.index));
  if (t < 0) {
    fail(job, "actor '" + std::string(job.plan->actors[a].name) + "' has no compute tile in service to run on");
    return;
  }
  push_inbox(*runners_[static_cast<unsigned>(t)], a);
}

void Engine::lose_vote(Job& job, int tile) {
  if (tile < 0 || static_cast<unsigned>(tile) >= tiles()) return;
  const std::uint32_t lost = job.lost_votes[tile].fetch_add(1, std::memory_order_acq_rel) + 1;
  if (options_.quarantine_after == 0 || lost < options_.quarantine_after || !healthy(static_cast<unsigned>(tile))) return;
  // Never below the tiles the configuration needs; one quarantine at a time.
  static std::mutex quarantine_mutex;
  std::lock_guard<std::mutex> lock(quarantine_mutex);
  unsigned in_service = 0;
  for (unsigned t = 0; t < tiles(); ++t) in_service += healthy(t);
  if (in_service <= job.min_healthy) return;
  quarantined_[tile].store(true, std::memory_order_release);
  mark(job, "quarantine", "tile " + std::to_string(tile) + " lost " + std::to_string(lost) + " votes", tile);
  // Its queue moves to the others: wake it so it hands its work over.
  runners_[static_cast<unsigned>(tile)]->notifier.notify_all();
  steal_notifier_.notify_all();
}

void Engine::mark(Job& job, std::string what, std::string detail, int tile) {
  if (!job.tracing) return;
  const double t = job.now();
  std::lock_guard<std::mutex> lock(job.mark_mutex);
  job.marks.push_back(TracedMark{std::move(what), std::move(detail), tile, t});
}

// Copies the confirmed replica's bytes to main memory for an output node.
void Engine::copy_voted_home(Job& job, DataId logical, DataId winner, TileStats& stats) {
  GraphState& s = *job.state;
  const std::size_t bytes = job.plan->data[logical].bytes;
  std::span<std::byte> dst(s.home_write[logical], bytes);
  bool ok = false;
  const double start = job.tracing ? job.now() : 0;
  const std::uint64_t loc = s.location[winner].load(std::memory_order_acquire);
  if (loc != kNowhere)
    ok = tiles_[loc >> 32]->read_slot(static_cast<SlotId>(loc & 0xffffffffu), DataTag{job.execution, winner}, dst);
  if (!ok) {
    // Displaced meanwhile, so written back: copy from main memory.
    while (s.home_state[winner].load(std::memory_order_acquire) == kHomeWriting) std::this_thread::yield();
    if (s.home_state[winner].load(std::memory_order_acquire) != kHomeValid) {
      fail(job, "internal error: confirmed data node '" + job.plan->graph->data(winner).name + "' is in no memory");
      return;
    }
    if (bytes != 0) std::memcpy(dst.data(), s.home[winner].data(), bytes);
  }
  ++stats.transfers_in;
  transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  if (job.tracing) {
    // Counted above, so traced too: stats and trace must agree on the transfers. Recorded by the calling thread.
    TraceBuffer* buffer = &driver_trace_->buffer;
    for (auto& r : runners_)
      if (&stats == &r->stats) buffer = &r->trace;
    buffer->transfers.push_back(RawTransfer{logical, ok ? static_cast<int>(loc >> 32) : kDriverTile, kDriverTile, bytes, start, job.now()});
  }
  s.home[logical] = dst;
  s.home_state[logical].store(kHomeValid, std::memory_order_release);
}

// The compare actor (section 5.2): compares the replicas' checksums; with two
// that agree, their data node becomes the actor's output (no copy: the
// output node aliases it) and successors may start; otherwise the replicas
// run again. Tiles whose result differs from the confirmed one lose a vote.
ActorId Engine::vote(Job& job, ActorId v, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pv = plan.actors[v];
  RedundancyCounts& counts = from != nullptr ? from->counts : driver_trace_->counts;
  int winner = -1;
  unsigned present = 0;
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    if (s.skipped[plan.data[di].producer].load(std::memory_order_acquire)) continue;
    ++present;
    for (std::uint32_t j = i + 1; j < pv.input_count && winner < 0; ++j) {
      const DataId dj = plan.inputs[pv.first_input + j];
      if (!s.skipped[plan.data[dj].producer].load(std::memory_order_acquire) && s.checksum[di] == s.checksum[dj])
        winner = static_cast<int>(i);
    }
  }
  if (winner < 0 && present < 2) {
    fail(job, "actor '" + std::string(pv.original) + "' has " + std::to_string(present) +
                  " replica(s) left to vote on: too few compute tiles are in service (quarantined: " +
                  std::to_string(quarantined_tiles().size()) + ")");
    return kNone;
  }
  if (winner < 0) {
    redispatch_replicas(job, v, from);
    return kNone;
  }
  const DataId won = plan.inputs[pv.first_input + static_cast<std::uint32_t>(winner)];
  const std::uint64_t confirmed = s.checksum[won];
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    if (s.skipped[plan.data[di].producer].load(std::memory_order_acquire) || s.checksum[di] == confirmed) continue;
    ++counts.detected;
    lose_vote(job, s.producer_tile[di]);
  }
  for (const auto& [tile, sum] : s.vote_history[v]) {
    if (sum == confirmed) continue;
    ++counts.detected;
    lose_vote(job, tile);
  }
  s.vote_history[v].clear();
  if (job.tracing)
    mark(job, "vote", std::string(pv.original) + ": " + std::to_string(present) + " replicas, winner r" + std::to_string(winner + 1),
         kDriverTile);  // voting is the driver's role, wherever the last replica ran
  // The output node now names the winner's bytes; its consumers count on the winner.
  const DataId o = pv.output;
  s.alias[o] = won;
  s.checksum[o] = confirmed;
  s.producer_tile[o] = s.producer_tile[won];
  s.remaining[won].fetch_add(plan.data[o].consumer_count, std::memory_order_acq_rel);
  if (plan.data[o].kind == DataKind::kOutput) copy_voted_home(job, o, won, from != nullptr ? from->stats : driver_stats_);
  // Only now are the replicas' inputs and the losing results consumed.
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    const PlanActor& pr = plan.actors[plan.data[di].producer];
    for (std::uint32_t k = 0; k < pr.input_count; ++k)
      s.remaining[s.alias[plan.inputs[pr.first_input + k]]].fetch_sub(1, std::memory_order_acq_rel);
    s.remaining[di].fetch_sub(1, std::memory_order_acq_rel);
  }
  return complete(job, v, from);
}

void Engine::redispatch_replicas(Job& job, ActorId v, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pv = plan.actors[v];
  RedundancyCounts& counts = from != nullptr ? from->counts : driver_trace_->counts;
  if (s.vote_round[v] == 0) {
    std::lock_guard<std::mutex> lock(voted_mutex_);  // failed votes of different actors can race here
    s.voted.push_back(v);
  }
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    if (!s.skipped[plan.data[di].producer].load(std::memory_order_acquire)) s.vote_history[v].emplace_back(s.producer_tile[di], s.checksum[di]);
  }
  mark(job, "vote-failed", std::string(pv.original), -1);
  if (++s.vote_round[v] >= kMaxVoteRounds) {
    fail(job, "actor '" + std::string(pv.original) + "': no two of its " + std::to_string(pv.input_count) + " replicas agreed in " +
                  std::to_string(kMaxVoteRounds) + " attempts");
    return;
  }
  // Reset the vote and the replicas' results, then run every replica again.
  s.pending[v].store(pv.input_count, std::memory_order_release);
  job.remaining_actors.fetch_add(pv.input_count, std::memory_order_acq_rel);
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    const ActorId rep = plan.data[di].producer;
    s.remaining[di].store(1, std::memory_order_release);
    s.round[di].fetch_add(1, std::memory_order_acq_rel);
    s.location[di].store(kNowhere, std::memory_order_release);
    s.replica_tile[rep].store(-1, std::memory_order_release);
    s.skipped[rep].store(0, std::memory_order_release);
  }
  counts.reexecutions += pv.input_count;
  std::uint64_t& rng = from != nullptr ? from->rng : driver_rng_;
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const ActorId rep = plan.data[plan.inputs[pv.first_input + i]].producer;
    int t = -1;
    {
      std::lock_guard<std::mutex> claim(placement_lock(v));
      t = pick_replica_tile(job, rep, rng, true);
      if (t >= 0) s.replica_tile[rep].store(t, std::memory_order_release);
    }
    if (t < 0) {
      // Completing a skipped replica may run the vote again (on the others): its result is not ours to run.
      const ActorId next = skip_replica(job, rep, from);
      if (next != kNone) push_inbox(*runners_[static_cast<unsigned>(std::max(0, pick_healthy_tile(rng, -1)))], next);
      continue;
    }
    push_inbox(*runners_[static_cast<unsigned>(t)], rep);
  }
}

}  // namespace redflow::runtime
