// The execution of a plan: tile runners (HEFT order or work stealing), the
// driver role, and readiness. Slots and main memory are in slots.cpp,
// redundancy in voting.cpp.
#include "runtime/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "fault/injector.hpp"
#include "runtime/engine_job.hpp"

namespace redflow::runtime {

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
  s->home_state = std::make_unique<std::atomic<std::uint32_t>[]>(data);
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
    state.home_state[d].store(home_word(0, given ? kHomeValid : kHomeInvalid), std::memory_order_relaxed);
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
    r->deque.clear();  // a failed execution may have left work queued
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
  s.home_state[pa.output].store(home_word(0, kHomeValid), std::memory_order_release);
  // Main memory needs no slot freeing: the inputs' consumer counts just drop.
  for (std::uint32_t i = 0; i < pa.input_count; ++i)
    s.remaining[s.alias[plan.inputs[pa.first_input + i]]].fetch_sub(1, std::memory_order_acq_rel);
  complete(job, a, nullptr);
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
  m.output_tag = DataTag{job.execution, pa.output, job.round_of(pa.output)};
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
    dir.occupied[out_slot] = true;
    dir.slot_of[pa.output] = static_cast<std::int32_t>(out_slot);
    s.location[pa.output].store(pack_location(r.index, out_slot), std::memory_order_release);
    // The driver keeps outputs: copy them to main memory now, while they are hot.
    if (out.kind == DataKind::kOutput) write_home(job, m.output_tag, *r.tile, out_slot, r.stats);
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

}  // namespace redflow::runtime
