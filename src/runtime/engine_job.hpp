// The state of one execution that the engine's parts share (one file per
// part, docs/architecture.md: the scheduler loops, readiness, slot directory,
// main memory, tile dispatch, lost tiles, voting...): the Job, with the
// per-execution parts it holds (JoinSchedule, SpeculativeCopies,
// TileLosses), each tile's Runner, the engine's constants, and the inline
// EngineCalls through which Voting, ReplicaPlacement, MainMemory and
// SlotDirectory call the engine.
// Internal to src/runtime.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/engine.hpp"
#include "runtime/engine_calls.hpp"
#include "runtime/join_schedule.hpp"
#include "runtime/speculative_copies.hpp"
#include "runtime/tile_losses.hpp"

namespace redflow::runtime {

inline constexpr ActorId kNone = ~ActorId{0};
inline constexpr ActorId kRetry = ~ActorId{0} - 1;  // run_actor_message: *-same runs disagreed
inline constexpr std::uint64_t kNowhere = ~std::uint64_t{0};
// Main memory's copy of a data node, one atomic word per node: (round << 2) |
// state. A copy is valid only for the voting round it was written in: after
// a failed vote the round moves on, and a copy of a rejected result (written
// back when its slot was displaced) is stale without anyone clearing it.
inline constexpr std::uint32_t kHomeInvalid = 0, kHomeWriting = 1, kHomeValid = 2;
inline constexpr std::uint32_t home_word(std::uint32_t round, std::uint32_t state) { return round << 2 | state; }
inline constexpr std::uint32_t home_round(std::uint32_t word) { return word >> 2; }
inline constexpr std::uint32_t home_state_of(std::uint32_t word) { return word & 3; }
// Redundancy limits: a compare actor re-executes its replicas at most this
// many times; a *-same tile gets this many actor messages of kTileRounds
// rounds each before the execution fails.
inline constexpr std::uint32_t kMaxVoteRounds = 8;
inline constexpr unsigned kTileRounds = 4;
inline constexpr unsigned kMaxSameMessages = 8;

// Spins a little, then sleeps until `word` changes from `busy` (the writer
// notifies). A bounded spin: with more tiles than cores the thread we wait
// for may be descheduled, and yielding forever would burn the core it needs.
inline std::uint32_t wait_while(const std::atomic<std::uint32_t>& word, std::uint32_t busy) {
  std::uint32_t w = word.load(std::memory_order_acquire);
  for (int spin = 0; spin < 64 && w == busy; ++spin) w = word.load(std::memory_order_acquire);
  while (w == busy) {
    word.wait(busy, std::memory_order_acquire);
    w = word.load(std::memory_order_acquire);
  }
  return w;
}

// Waits while some thread writes `d`'s main-memory copy (of any round).
inline void wait_for_home_writer(const GraphState& s, DataId d) {
  std::uint32_t w = s.home_state[d].load(std::memory_order_acquire);
  while (home_state_of(w) == kHomeWriting) w = wait_while(s.home_state[d], w);
}

inline std::uint64_t pack_location(unsigned tile, SlotId slot) { return (std::uint64_t{tile} << 32) | slot; }

inline std::uint64_t next_random(std::uint64_t& s) {  // xorshift64*
  s ^= s >> 12;
  s ^= s << 25;
  s ^= s >> 27;
  return s * 2685821657736338717ULL;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One execution of a plan: what every thread taking part reads and updates.
struct Job {
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
  bool timed = false;   // read the clock around actors (stats asked for busy_s, or a trace)
  // The local fast path: no redundancy and no fault injection, so an actor
  // needs no message, no completion and no checksum, and a 0-byte value no slot.
  bool plain = false;
  bool in_place = false;  // plain and no trace: Engine::run_in_place may run an actor
  unsigned min_healthy = 1;   // quarantine never leaves fewer tiles in service
  bool require_protection = false;  // RuntimeOptions::require_protection: a replica that cannot run fails the execution
  std::atomic<std::uint64_t> skipped_replicas{0};  // replicas not run for lack of distinct tiles (ExecutionStats::degraded)
  // Probation (probation.cpp): known-answer tests run, tiles put back in service.
  std::uint64_t probation_tests = 0;
  std::vector<unsigned> reinstated;
  TileLosses losses;           // tiles lost, values recomputed, actors poisoned (lost_tiles.cpp)
  JoinSchedule joins;              // HEFT's schedule made again when a worker joins, claims (joins.cpp)
  SpeculativeCopies speculation;  // on for remote tiles without redundancy (speculation.cpp)
  std::mutex mark_mutex;      // marks are rare: failed votes, quarantines
  std::vector<TracedMark> marks;

  // The voting round of the value data node `d` names now: part of its
  // identity in slots and main memory (0 without redundancy).
  std::uint32_t round_of(DataId d) const { return plan->redundant ? state->round[d].load(std::memory_order_acquire) : 0; }
  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

// An actor message on the wire to a tile, until its completion is booked.
struct SentActor {
  ActorId actor;
  std::uint64_t clock;
  std::vector<SlotId> input_slots;
  DataTag output_tag;
  unsigned attempt;
  double trace_start;
  bool stolen;
};

// A compute tile's runner thread: its queues, slot bookkeeping scratch, stats and trace.
struct Runner {
  unsigned index = 0;
  Tile* tile = nullptr;
  LocalTile* local = nullptr;  // direct transport only: the same tile, for the fast path's in-place calls
  WorkDeque deque;
  std::mutex inbox_mutex;                  // pushes from the driver and from start-up only
  std::vector<ActorId> inbox;
  std::atomic<std::uint32_t> inbox_size{0};
  Notifier notifier;                       // HEFT: waiting for the next actor in order
  TileStats stats;
  std::uint64_t rng = 0;
  std::uint64_t clock = 0;
  // Slots stamped at or after this clock hold an input or output of an actor
  // being placed or in flight, and are not reused (SlotDirectory::allocate). Without
  // pipelining it is the clock of the actor being placed.
  std::uint64_t pinned_from = 0;
  // Pipelined dispatch (pipeline.cpp): up to `depth` actor messages on the
  // wire to this tile, oldest first; their completions come back in order.
  using Sent = SentActor;
  std::deque<Sent> sent;
  unsigned depth = 1;
  // The actors of `sent` (and the one waiting for slot room or having its
  // inputs placed), oldest first, and when the oldest began to run,
  // for idle runners looking for stragglers (only while speculating).
  std::mutex flight_mutex;
  std::vector<ActorId> flight;
  double flight_since = 0;
  bool copying = false;  // the actor running now is a speculative copy
  // Adaptive HEFT (adaptive_heft.cpp), published for idle tiles: where this
  // tile's walk is in its order, and since when (ns after the execution's
  // start; 0: none) it runs an actor planned for `running_cost` seconds,
  // from `running_clock`, the time in the plan this tile had reached.
  std::atomic<std::uint32_t> walk_at{0};
  std::atomic<std::int64_t> running_since_ns{0};
  std::atomic<float> running_cost{0};
  std::atomic<float> running_clock{0};
  // How long its actors take over their planned cost, a moving average
  // over this execution (adaptive_heft.cpp: a tile at 1.5 or more is slow).
  std::atomic<float> pace{1};
  // Its actors other tiles copied or took over because it fell behind, this
  // execution (TileStats::straggled), and whether it was marked a straggler.
  std::atomic<std::uint64_t> straggled{0};
  std::atomic<bool> straggler_marked{false};
  // Per tile, the ready actor of its order this tile found waiting, and
  // when: taken over if still waiting a while later.
  std::vector<std::pair<ActorId, double>> late_seen;
  // Actors to run again with every input from main memory (or recomputed):
  // a fetch from a peer sent ahead of them found nothing (place_again).
  // `relaying`: the actor being placed is one of them.
  std::vector<ActorId> relay_only;
  bool relaying = false;
  // Slots such a fetch left empty while later actors reading them were
  // already on the wire: their completions fail too, and they are placed
  // again the same way. Forgotten once nothing is in flight.
  std::vector<SlotId> emptied;
  // Runs this tile booked this execution and their seconds (written by its
  // runner only; read by idle runners estimating what an actor should take).
  std::atomic<double> measured_sum{0};
  std::atomic<std::uint64_t> measured_count{0};
  std::vector<SlotId> input_slots;         // kNoSlot: read in place from main memory (fast path)
  std::vector<std::span<const std::byte>> input_bytes;  // the running actor's inputs, its first input_count entries (Plan::max_inputs long)
  std::string failure;                                  // fast path: an actor's ctx.fail(), kept so no run allocates
  std::vector<SlotId> output_slots;        // *-same: one per run
  std::vector<std::uint64_t> unconfirmed;  // *-same: checksums of messages whose runs never agreed
  bool stolen = false;                     // the actor about to run was taken from another tile
  // A chain run in place (Engine::run_in_place): while `chaining`, an
  // actor's consumer that this tile would run next runs in the same call,
  // with no trip through the loop. Stealing: the consumer it hands back
  // (work-first). HEFT: only the actor after `chain_at` in `chain_order`,
  // the order walked for schedule `chain_epoch`; the walk goes on after the
  // last one run (walk_order reads `chain_at` back). Set by the loops for
  // their own runs only: the steal loop around each call, a HEFT walk for
  // the whole walk but not while it waits; never while a speculative copy,
  // a takeover or handed-over work runs.
  bool chaining = false;
  std::span<const ActorId> chain_order;
  std::uint32_t chain_at = 0, chain_epoch = 0;
  RedundancyCounts counts;
  TraceBuffer trace;
  // Actors this runner completed but has not yet subtracted from
  // Job::remaining_actors: one shared counter written by every tile per actor
  // would bounce its cache line between them. Flushed before the runner idles
  // or leaves, so the count reaches 0 exactly when all work is done.
  std::uint32_t unflushed = 0;
  std::uint64_t transfer_bytes = 0;  // bytes this runner copied (one shared counter would bounce between tiles)
};

// HEFT's walk of one order (a tile's, or the driver's): each actor in turn
// once its inputs are there. `wait(ready)` returns when ready() holds;
// ready() also holds on an abort and on a new schedule (a join), when the
// walk stops so the caller can take the new order. A claimed actor was run
// (or is being run) by another walker under an earlier schedule. A compare
// actor is not waited for: it is voted where its last replica finishes.
// `at` (adaptive HEFT): where the walk is, for idle tiles looking for a late one.
template <typename Wait, typename Run>
void Engine::walk_order(Job& job, std::span<const ActorId> order, std::uint32_t epoch, Wait&& wait, Run&& run,
                        std::atomic<std::uint32_t>* at, Runner* chain) {
  auto moved_on = [&] { return job.aborted.load(std::memory_order_acquire) || job.joins.epoch() != epoch; };
  // Chaining holds for the walk's own runs; `wait` clears it while it runs
  // anything else (Runner::chaining).
  struct Chaining {
    Runner* r;
    ~Chaining() {
      if (r != nullptr) r->chaining = false;
    }
  } chaining{chain};
  if (chain != nullptr) {
    chain->chain_order = order;
    chain->chain_epoch = epoch;
    chain->chaining = true;
  }
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    const ActorId a = order[i];
    if (at != nullptr) at->store(i, std::memory_order_relaxed);
    if (job.joins.claimed(a) || (job.plan->hot[a].flags & ActorHot::kIsVote) != 0) continue;
    // Claimed meanwhile by a tile that took it over: its pending count is
    // set again for the next execution once it runs, so it may never read 0.
    auto ready = [&] {
      return job.state->pending[a].load(std::memory_order_acquire) == 0 || job.joins.claimed(a) || moved_on();
    };
    wait(ready);
    if (moved_on()) return;
    if (!job.joins.claim(a)) continue;
    if (chain == nullptr) {
      run(a);
      continue;
    }
    chain->chain_at = i;
    run(a);
    // The last actor of its order the run took in place. Compared first, so
    // that a walk that took none keeps `i` off the store it just made.
    if (chain->chain_at != i) [[unlikely]]
      i = chain->chain_at;
  }
}

inline bool MainMemory::valid(const Job& job, DataId d, std::uint32_t round) const {
  return job.state->home_state[d].load(std::memory_order_acquire) == home_word(round, kHomeValid);
}

// The per-actor path, inline so that an actor on the fast path costs no
// call beyond run_in_place's: most actors of a plain execution take it.
inline ActorId Engine::run_on_tile(Runner& r, Job& job, ActorId a) {
  if (job.in_place) {
    ActorId next = kNone;
    if (run_in_place(r, job, a, next)) return next;
  }
  return run_on_slots(r, job, a);
}

// A chain's hand-off, the commonest completion on a tile: a plain
// execution, one consumer, and that consumer's only input. Its count is
// stored (no read-modify-write: this is its only producer); under stealing
// it runs next here (work-first), under HEFT its owner is woken if that is
// another tile, and a chain run in place on this one goes on with it when
// it is next in the order walked (Runner::chaining). Every other case is
// complete()'s.
[[gnu::always_inline]] inline ActorId Engine::complete_on_tile(Job& job, ActorId a, Runner& r) {
  const Plan& plan = *job.plan;
  const PlanData& out = plan.data[plan.hot[a].output];
  if (job.plain && out.consumer_count == 1 && !job.joins.claiming()) {
    const ActorId c = plan.consumers[out.first_consumer];
    const ActorHot& pc = plan.hot[c];
    constexpr std::uint8_t kElsewhere = ActorHot::kIsVote | ActorHot::kOnDriver | ActorHot::kReplica;
    if (pc.initial_pending == 1 && (pc.flags & kElsewhere) == 0 && (job.scheduler != Scheduler::kHeft || pc.heft_tile >= 0)) {
      job.state->pending[c].store(0, std::memory_order_release);
      ++r.unflushed;
      if (job.scheduler != Scheduler::kHeft) return c;
      if (static_cast<unsigned>(pc.heft_tile) != r.index) {
        runners_[static_cast<unsigned>(pc.heft_tile)]->notifier.notify_all();
        return kNone;
      }
      // Next in the order this tile walks: a chain run in place takes it now.
      return r.chaining && r.chain_at + 1 < r.chain_order.size() && r.chain_order[r.chain_at + 1] == c ? c : kNone;
    }
  }
  return complete(job, a, &r);
}

// EngineCalls (engine_calls.hpp): inline, so a vote or a replica's placement
// costs what the Engine's own call did.
inline unsigned EngineCalls::tiles() const { return engine_.tiles(); }
inline std::string EngineCalls::out_of_service() const { return engine_.out_of_service(); }
inline ActorId EngineCalls::complete(Job& job, ActorId a, Runner* from) const { return engine_.complete(job, a, from); }
inline void EngineCalls::fail(Job& job, std::string message, Status::Code code) const { engine_.fail(job, std::move(message), code); }
inline void EngineCalls::mark(Job& job, std::string what, std::string detail, int tile) const {
  engine_.mark(job, std::move(what), std::move(detail), tile);
}
inline void EngineCalls::push_inbox(unsigned tile, ActorId a) const { engine_.push_inbox(*engine_.runners_[tile], a); }
inline std::uint64_t EngineCalls::queued(unsigned tile) const {
  const Runner& v = *engine_.runners_[tile];
  return v.deque.size_estimate() + v.inbox_size.load(std::memory_order_relaxed);
}
inline void EngineCalls::wake_to_hand_on(unsigned tile) const {
  engine_.runners_[tile]->notifier.notify_all();
  engine_.steal_notifier_.notify_all();
}
inline void EngineCalls::copy_voted_home(Job& job, DataId logical, DataId winner, Runner* from) const {
  engine_.memory_.copy_voted(job, logical, winner, from != nullptr ? from->stats : engine_.driver_.stats);
}
inline bool EngineCalls::already_booked(const Job& job, ActorId a) const { return engine_.already_booked(job, a); }
inline Tile& EngineCalls::tile(unsigned t) const { return *engine_.tiles_[t]; }
inline Runner& EngineCalls::runner(unsigned t) const { return *engine_.runners_[t]; }
inline DriverRole& EngineCalls::driver() const { return engine_.driver_; }
inline bool EngineCalls::gone(unsigned t) const { return engine_.gone(t); }
inline bool EngineCalls::only_on_lost_tile(const Job& job, DataId d) const { return engine_.only_on_lost_tile(job, d); }
inline bool EngineCalls::recompute(Job& job, DataId d, TileStats& stats, TraceBuffer& trace) const {
  return engine_.recompute(job, d, stats, trace);
}
inline TraceBuffer& EngineCalls::trace_of(const TileStats& stats) const {
  for (auto& r : engine_.runners_)
    if (&stats == &r->stats) return r->trace;
  return engine_.driver_.trace;
}
inline RedundancyCounts& EngineCalls::counts(Runner* from) const { return from != nullptr ? from->counts : engine_.driver_.counts; }
inline std::uint64_t& EngineCalls::rng(Runner* from) const { return from != nullptr ? from->rng : engine_.driver_.rng; }

}  // namespace redflow::runtime
