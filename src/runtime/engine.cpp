// The execution of a plan: tile runners (HEFT order or work stealing), the
// driver role, slot management with displacement, and readiness.
#include "runtime/engine.hpp"

#include <chrono>
#include <cstring>

namespace redflow::runtime {

namespace {

constexpr ActorId kNone = ~ActorId{0};
constexpr std::uint64_t kNowhere = ~std::uint64_t{0};
constexpr std::uint8_t kHomeInvalid = 0, kHomeWriting = 1, kHomeValid = 2;

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
  std::uint32_t execution = 0;
  std::atomic<std::uint32_t> remaining_actors{0};
  std::atomic<bool> aborted{false};
  std::mutex error_mutex;
  std::string error;
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
  // Actors this runner completed but has not yet subtracted from
  // Job::remaining_actors: one shared counter written by every tile per actor
  // would bounce its cache line between them. Flushed before the runner idles
  // or leaves, so the count reaches 0 exactly when all work is done.
  std::uint32_t unflushed = 0;
};

Engine::Engine(const RuntimeOptions& options) : options_(options) {}

Status Engine::start() {
  if (!threads_.empty()) return Status::Ok();
  // Tile memory is reserved here, not in the constructor, so that a slot
  // budget the machine cannot reserve is an error the caller sees.
  try {
    for (unsigned t = 0; t < options_.tiles; ++t) {
      tiles_.push_back(std::make_unique<LocalTile>(options_.slots, options_.slot_bytes, options_.cores_per_tile));
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

Status Engine::execute(const Plan& plan, GraphState& state, Scheduler scheduler,
                       std::span<const std::span<const std::byte>> input_homes, ExecutionStats& stats) {
  Job job;
  job.plan = &plan;
  job.state = &state;
  job.scheduler = scheduler;
  job.execution = ++execution_counter_;
  job.remaining_actors.store(static_cast<std::uint32_t>(plan.actors.size()));

  for (ActorId a = 0; a < plan.actors.size(); ++a) state.pending[a].store(plan.actors[a].initial_pending, std::memory_order_relaxed);
  for (DataId d = 0; d < plan.data.size(); ++d) {
    const PlanData& pd = plan.data[d];
    state.remaining[d].store(pd.consumer_count, std::memory_order_relaxed);
    state.location[d].store(kNowhere, std::memory_order_relaxed);
    const bool given = pd.kind == DataKind::kInput || pd.kind == DataKind::kConstant;
    if (given) state.home[d] = input_homes[d];
    state.home_state[d].store(given ? kHomeValid : kHomeInvalid, std::memory_order_relaxed);
  }
  driver_stats_ = TileStats{};
  driver_rng_ = (options_.seed ^ 0x5DEECE66DULL) + job.execution;
  transfer_bytes_.store(0);
  driver_queue_.clear();
  driver_queue_.reserve(plan.actors.size());
  for (auto& r : runners_) {
    r->stats = TileStats{};
    r->deque.reserve(plan.actors.size());
    r->inbox.clear();
    r->inbox.reserve(plan.actors.size());
    r->inbox_size.store(0);
    r->input_slots.reserve(plan.max_inputs);
    r->tile->reserve_inputs(plan.max_inputs);
    r->rng = (options_.seed + 0x9E3779B97F4A7C15ULL * (r->index + 1)) ^ job.execution;
    if (r->rng == 0) r->rng = 1;
  }
  if (scheduler == Scheduler::kSteal) {
    // Section 4.2: at the start, ready actors go to random queues (driver actors to the driver).
    std::uint64_t rng = options_.seed ^ (0xA5A5A5A5ULL + job.execution);
    if (rng == 0) rng = 1;
    for (ActorId a : plan.initially_ready) {
      if (plan.actors[a].on_driver) {
        driver_queue_.push_back(a);
      } else {
        // The runners are parked until the generation bump below, so pushing into their deques is safe here.
        runners_[next_random(rng) % runners_.size()]->deque.push(a);
      }
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  if (plan.actors.empty()) {
    stats = ExecutionStats{};
  } else {
    active_.store(static_cast<std::uint32_t>(runners_.size()));
    job_.store(&job, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    driver_loop(job);
    for (std::uint32_t n; (n = active_.load(std::memory_order_acquire)) != 0;) active_.wait(n, std::memory_order_acquire);
    job_.store(nullptr);
  }
  stats.makespan_s = seconds_since(t0);
  stats.scheduler = to_string(scheduler);
  stats.tiles.clear();
  stats.actors_executed = stats.transfers = stats.transfer_bytes = stats.steals = stats.displacements = 0;
  stats.driver = driver_stats_;
  stats.actors_executed += driver_stats_.actors;
  stats.transfers += driver_stats_.transfers_in;
  for (auto& r : runners_) {
    stats.tiles.push_back(r->stats);
    stats.actors_executed += r->stats.actors;
    stats.transfers += r->stats.transfers_in;
    stats.steals += r->stats.steals;
    stats.displacements += r->stats.displacements;
  }
  stats.transfer_bytes = transfer_bytes_.exchange(0);
  if (job.aborted.load()) return Status::Internal(job.error);
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

void Engine::fail(Job& job, std::string message) {
  {
    std::lock_guard<std::mutex> lock(job.error_mutex);
    if (job.error.empty()) job.error = std::move(message);
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

// ---------------------------------------------------------------- work stealing

void Engine::steal_loop(Runner& r, Job& job) {
  const std::size_t n = runners_.size();
  // A tile's queue is its deque plus its inbox (work the driver handed it);
  // thieves look at both, or work in a sleeping tile's inbox would be stranded.
  auto take_inbox = [](Runner& v) -> ActorId {
    if (v.inbox_size.load(std::memory_order_acquire) == 0) return kNone;
    std::lock_guard<std::mutex> lock(v.inbox_mutex);
    if (v.inbox.empty()) return kNone;
    ActorId a = v.inbox.back();
    v.inbox.pop_back();
    v.inbox_size.fetch_sub(1, std::memory_order_relaxed);
    return a;
  };
  auto steal_from = [&](Runner& victim) -> ActorId {
    if (&victim == &r) return kNone;
    ActorId a = kNone;
    if (auto stolen = victim.deque.steal()) a = *stolen;
    if (a == kNone) a = take_inbox(victim);
    if (a != kNone) ++r.stats.steals;
    return a;
  };
  auto find_work = [&]() -> ActorId {
    if (auto a = r.deque.pop()) return *a;
    if (ActorId a = take_inbox(r); a != kNone) return a;
    if (n == 1) return kNone;
    // Section 4.2: take from the back of a random victim's queue.
    for (std::size_t attempt = 0; attempt < 2 * n; ++attempt)
      if (ActorId a = steal_from(*runners_[next_random(r.rng) % n]); a != kNone) return a;
    // Random victims can miss the one queue that has work; sweep once before idling.
    for (auto& victim : runners_)
      if (ActorId a = steal_from(*victim); a != kNone) return a;
    return kNone;
  };
  auto any_work = [&]() {
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
    while (a != kNone && !job.aborted.load(std::memory_order_relaxed)) a = run_on_tile(r, job, a);
  }
  flush_completed(r, job);
}

// ---------------------------------------------------------------- HEFT order

void Engine::heft_loop(Runner& r, Job& job) {
  const auto& order = job.plan->heft.tile_order;
  if (r.index >= order.size()) return;
  for (ActorId a : order[r.index]) {
    auto ready = [&] { return job.state->pending[a].load(std::memory_order_acquire) == 0 || job.aborted.load(); };
    if (!ready()) flush_completed(r, job);
    for (int spin = 0; spin < 256 && !ready(); ++spin) std::this_thread::yield();
    while (!ready()) {
      const std::uint32_t token = r.notifier.prepare();
      if (ready()) {
        r.notifier.cancel();
        break;
      }
      r.notifier.wait(token);
    }
    if (job.aborted.load()) break;
    run_on_tile(r, job, a);
  }
  flush_completed(r, job);
}

// ---------------------------------------------------------------- driver

void Engine::driver_loop(Job& job) {
  const Plan& plan = *job.plan;
  if (job.scheduler == Scheduler::kHeft) {
    for (ActorId a : plan.heft.driver_order) {
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
    const DataId d = plan.inputs[pa.first_input + i];
    // Transfers from tiles land in main memory; for a collect's aliased input that is already its place in the output.
    if (!ensure_home(job, d)) {
      fail(job, "internal error: input '" + plan.graph->data(d).name + "' of driver actor '" + std::string(pa.name) + "' is nowhere");
      return;
    }
    inputs.push_back(s.home[d]);
  }
  const std::size_t out_bytes = plan.data[pa.output].bytes;
  const auto t0 = std::chrono::steady_clock::now();
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
      fail(job, "actor '" + std::string(pa.name) + "' failed on the driver: " + *ctx.failure());
      return;
    }
  }
  driver_stats_.busy_s += seconds_since(t0);
  ++driver_stats_.actors;
  s.home_state[pa.output].store(kHomeValid, std::memory_order_release);
  complete(job, a, nullptr);
}

// ---------------------------------------------------------------- compute tiles

void Engine::write_home(Job& job, DataId d, LocalTile& tile, SlotId slot, TileStats& stats) {
  GraphState& s = *job.state;
  std::uint8_t expected = kHomeInvalid;
  if (s.home_state[d].compare_exchange_strong(expected, kHomeWriting, std::memory_order_acq_rel)) {
    const std::size_t bytes = job.plan->data[d].bytes;
    const bool ok = tile.read_slot(slot, DataTag{job.execution, d}, std::span<std::byte>(s.home_write[d], bytes));
    s.home_state[d].store(ok ? kHomeValid : kHomeInvalid, std::memory_order_release);
    if (ok) {
      ++stats.transfers_in;
      transfer_bytes_.fetch_add(bytes, std::memory_order_relaxed);
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
    if (dir.stamp[i] == r.clock) continue;  // holds an input of the actor being placed
    int cost;
    if (!dir.occupied[i] || dir.held[i].execution != job.execution) {
      cost = 0;
    } else {
      const DataId d = dir.held[i].data;
      const bool dead = s.remaining[d].load(std::memory_order_acquire) == 0 && data[d].kind == DataKind::kInner;
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
  const std::int32_t held = dir.slot_of[d];
  if (held >= 0 && dir.occupied[held] && dir.held[held] == tag) {
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
  const std::uint64_t loc = s.location[d].load(std::memory_order_acquire);
  if (loc != kNowhere && static_cast<unsigned>(loc >> 32) != r.index) {
    // Tile-to-tile transfer: fetch from the producer's slot.
    m.from_tile = tiles_[loc >> 32].get();
    m.from_slot = static_cast<SlotId>(loc & 0xffffffffu);
    placed = r.tile->data_node(m).ok();
    m.from_tile = nullptr;
  }
  if (!placed) {
    // Driver-to-tile transfer from main memory; the producer's copy was displaced, so main memory has it.
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
  dir.held[slot] = tag;
  dir.occupied[slot] = true;
  dir.slot_of[d] = static_cast<std::int32_t>(slot);
  return true;
}

ActorId Engine::run_on_tile(Runner& r, Job& job, ActorId a) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  if (pa.on_driver) {
    // Only reachable through a schedule that ignored Algorithm 2's rule.
    fail(job, "internal error: driver actor '" + std::string(pa.name) + "' scheduled on tile " + std::to_string(r.index));
    return kNone;
  }
  ++r.clock;
  r.input_slots.clear();
  for (std::uint32_t i = 0; i < pa.input_count; ++i) {
    SlotId slot;
    if (!place_input(r, job, plan.inputs[pa.first_input + i], slot)) {
      if (!job.aborted.load()) fail(job, "actor '" + std::string(pa.name) + "' needs more slots than tile " + std::to_string(r.index) + " has");
      return kNone;
    }
    r.input_slots.push_back(slot);
  }
  SlotId out_slot;
  if (!allocate_slot(r, job, out_slot)) {
    fail(job, "actor '" + std::string(pa.name) + "' needs more slots than tile " + std::to_string(r.index) + " has");
    return kNone;
  }
  ActorMessage m;
  m.actor = a;
  m.execution = job.execution;
  m.function = pa.function;
  m.name = pa.name;
  m.args = pa.args;
  m.input_slots = r.input_slots;
  m.output_slot = out_slot;
  m.output_tag = DataTag{job.execution, pa.output};
  m.output_bytes = plan.data[pa.output].bytes;
  Completion done = r.tile->actor(m);
  r.stats.busy_s += done.seconds;
  if (!done.ok) {
    fail(job, "actor '" + std::string(pa.name) + "' failed on tile " + std::to_string(r.index) + ": " + done.error);
    return kNone;
  }
  ++r.stats.actors;
  auto& dir = s.dirs[r.index];
  const PlanData& out = plan.data[pa.output];
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
    if (out.kind == DataKind::kOutput) write_home(job, pa.output, *r.tile, out_slot, r.stats);
  }
  // Inputs whose last consumer this was are dead: free their slots here.
  for (std::uint32_t i = 0; i < pa.input_count; ++i) {
    const DataId d = plan.inputs[pa.first_input + i];
    if (s.remaining[d].fetch_sub(1, std::memory_order_acq_rel) == 1 && plan.data[d].kind == DataKind::kInner) {
      const SlotId slot = r.input_slots[i];
      if (dir.occupied[slot] && dir.held[slot].data == d) {
        r.tile->clear_slot(slot);
        dir.occupied[slot] = false;
        dir.slot_of[d] = -1;
      }
    }
  }
  return complete(job, a, &r);
}

ActorId Engine::complete(Job& job, ActorId a, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  if (from == nullptr) {
    // Driver actor: its inputs' consumer counts drop here (main memory needs no slot freeing).
    for (std::uint32_t i = 0; i < pa.input_count; ++i)
      s.remaining[plan.inputs[pa.first_input + i]].fetch_sub(1, std::memory_order_acq_rel);
  }
  const PlanData& out = plan.data[pa.output];
  ActorId next = kNone;
  bool pushed_tile = false, pushed_driver = false;
  for (std::uint32_t i = 0; i < out.consumer_count; ++i) {
    const ActorId c = plan.consumers[out.first_consumer + i];
    if (s.pending[c].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
    const PlanActor& pc = plan.actors[c];
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
      Runner& target = *runners_[next_random(driver_rng_) % runners_.size()];
      std::lock_guard<std::mutex> lock(target.inbox_mutex);
      target.inbox.push_back(c);
      target.inbox_size.fetch_add(1, std::memory_order_release);
      pushed_tile = true;
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
