// Running one actor on a compute tile: place its inputs in slots, reserve
// output slots, send the actor message, and book the completion (slot
// directory, write-back of outputs, freeing dead inputs). *-same tiles vote
// by themselves; a message whose runs all disagree is retried here.
#include <algorithm>
#include <cstring>
#include <string>

#include "fault/injector.hpp"
#include "runtime/engine_job.hpp"

namespace redflow::runtime {

// Tile r was found lost: it leaves service for good and `a` goes to another
// tile, as from a quarantined one (HEFT's order of r is handed on the same way).
// `ran`: `a` was what the tile ran when it was lost (its answer said `lost`),
// which counts a strike towards poisoning; an actor whose inputs found the
// tile already gone never ran there and counts none.
// While an actor runs twice (a speculative copy beside the run it copies),
// a lost run counts a strike and is handed on only if the other run is gone
// too (speculation.cpp, "One run stands for both"): handing on both would run
// an actor that kills its tiles twice more at once, and take down a tile
// beyond the poisoning limit.
ActorId Engine::hand_on_from_lost(Runner& r, Job& job, ActorId a, bool ran) {
  lose_tile(job, r.index);
  if (already_booked(job, a)) return kNone;  // a speculative copy's result was used
  if (ran && poisoned(job, a, r.index)) return kNone;
  if (!r.copying && !job.speculation.stand_for(a)) placement_.forward(job, a, r);
  return kNone;
}

ActorId Engine::run_on_slots(Runner& r, Job& job, ActorId a) {
  const PlanActor& pa = job.plan->actors[a];
  if (pa.on_driver) {
    // Only reachable through a schedule that ignored Algorithm 2's rule.
    fail(job, "internal error: driver actor '" + std::string(job.plan->name(a)) + "' scheduled on tile " + std::to_string(r.index));
    return kNone;
  }
  if (!places_.healthy(r.index)) {
    if (!r.copying) placement_.forward(job, a, r);  // a copy's end hands on, if its original is gone (speculation.cpp)
    return kNone;
  }
  // *-same: the tile votes by itself; a message whose rounds all disagree is
  // a lost vote, and the actor goes to another tile if this one is quarantined.
  for (unsigned message = 0;; ++message) {
    ActorId next = run_actor_message(r, job, a, message);
    if (next != kRetry) return next;
    if (!places_.healthy(r.index)) {
      // Another tile starts over; a tile quarantined for its results has every
      // one of them discarded. Only the ones known to be wrong count as
      // detected: in a round of `runs` results no two agreed on, at most one
      // was right.
      const unsigned runs = std::max(1u, static_cast<unsigned>(pa.runs));
      r.counts.detected += r.unconfirmed.size() / runs * (runs - 1);
      r.unconfirmed.clear();
      placement_.forward(job, a, r);
      return kNone;
    }
    if (message + 1 >= kMaxSameMessages) {
      fail(job,
           "actor '" + std::string(job.plan->original(a)) + "': no two of its " + std::to_string(pa.runs) + " runs on tile " +
               std::to_string(r.index) + " agreed in " + std::to_string(kMaxSameMessages * kTileRounds) + " rounds",
           Status::Code::kGaveUp);
      return kNone;
    }
  }
}

// One actor message to tile r: place inputs, reserve output slots, run, and
// on success resolve successors. Returns kRetry when *-same runs disagreed.
ActorId Engine::run_actor_message(Runner& r, Job& job, ActorId a, unsigned message) {
  ++r.clock;
  r.pinned_from = r.clock;
  ActorId next = kNone;
  if (!place_inputs(r, job, a, next)) return next;
  if (job.plain) {
    SlotId out_slot;
    if (!run_plain(r, job, a, out_slot)) return kNone;
    const ActorHot& hot = job.plan->hot[a];
    return book_completion(r, job, a, out_slot, DataTag{job.execution, hot.output, 0});
  }
  ActorMessage m;
  if (!describe_actor_message(r, job, a, message, m)) return kNone;
  if (r.stats.most_in_flight == 0) r.stats.most_in_flight = 1;
  const double trace_start = job.tracing ? job.now() : 0;
  return finish_actor_message(r, job, a, m.output_tag, m.attempt, r.tile->actor(m), trace_start);
}

// Places every input of `a` in tile r's slots (r.input_slots). False when it
// could not: the tile was lost (`a` is handed on) or the job failed; `next`
// is then what hand_on_from_lost() returned.
bool Engine::place_inputs(Runner& r, Job& job, ActorId a, ActorId& next) {
  const Plan& plan = *job.plan;
  const ActorHot& hot = plan.hot[a];
  r.input_slots.clear();
  r.relaying = !r.relay_only.empty() && std::erase(r.relay_only, a) > 0;
  for (std::uint32_t i = 0; i < hot.input_count; ++i) {
    SlotId slot;
    if (!slots_.place_input(r, job, a, job.state->alias[plan.inputs[hot.first_input + i]], slot)) {
      if (r.tile->lost()) {
        next = hand_on_from_lost(r, job, a, /*ran=*/false);
        return false;
      }
      if (already_booked(job, a)) {  // another run's result was used (speculation): this one is dropped
        next = kNone;
        return false;
      }
      if (!job.aborted.load()) fail(job, "actor '" + std::string(plan.name(a)) + "' needs more slots than tile " + std::to_string(r.index) + " has");
      next = kNone;
      return false;
    }
    r.input_slots.push_back(slot);
  }
  return true;
}

// The actor message for `a`, its inputs already placed: one output slot per
// run reserved first (section 5.2: enough free slots for every run's result
// before the actor is sent). False when the tile has too few (the job failed).
bool Engine::describe_actor_message(Runner& r, Job& job, ActorId a, unsigned message, ActorMessage& m) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  const ActorHot& hot = plan.hot[a];
  r.output_slots.clear();
  for (unsigned run = 0; run < pa.runs; ++run) {
    SlotId out_slot;
    if (!slots_.allocate(r, job, out_slot)) {
      fail(job, "actor '" + std::string(plan.name(a)) + "' needs more slots than tile " + std::to_string(r.index) + " has");
      return false;
    }
    r.output_slots.push_back(out_slot);
  }
  m.actor = a;
  m.execution = job.execution;
  m.input_slots = r.input_slots;
  m.output_slot = r.output_slots[0];
  m.extra_output_slots = std::span<const SlotId>(r.output_slots).subspan(1);
  m.max_rounds = kTileRounds;
  m.output_tag = DataTag{job.execution, hot.output, job.round_of(hot.output)};
  m.output_bytes = plan.data[hot.output].bytes;
  m.want_checksum = pa.replica != 0 || r.tile->checks_values();
  m.fault_execution = job.request->fault_execution;
  m.replica = pa.replica;
  // Re-executions get fresh fault decisions: a transient fault does not repeat.
  m.attempt = pa.replica != 0 ? s.vote_round[pa.vote] : message;
  return true;
}

// What the driver does with the completion of an actor message to tile r
// (r.input_slots: the message's input slots): stats, the trace, an actor's
// failure, *-same's vote, and on success book_completion().
ActorId Engine::finish_actor_message(Runner& r, Job& job, ActorId a, DataTag output_tag, unsigned attempt, Completion done,
                                     double trace_start) {
  GraphState& s = *job.state;
  const PlanActor& pa = job.plan->actors[a];
  const ActorHot& hot = job.plan->hot[a];
  if (done.lost) return hand_on_from_lost(r, job, a);
  if (!done.missing_inputs.empty()) return place_again(r, job, a, done.missing_inputs);
  if (job.timed) r.stats.busy_s += done.seconds;  // the tile times its runs; busy_s is reported only when asked, as on the fast path
  r.stats.checksum_s += done.checksum_seconds;
  if (pa.replica != 0) s.replica_tile[a].store(static_cast<int>(r.index), std::memory_order_release);
  if (job.tracing)
    r.trace.actors.push_back(RawActor{a, static_cast<int>(r.index), pa.replica, attempt, trace_start, job.now(), r.stolen, done.injected > 0,
                                     done.alike_flips});
  if (!done.ok) {
    failed_on_tile(r, job, a, done.error, done.actor_failed ? Status::Code::kActorFailed : Status::Code::kInternal);
    return kNone;
  }
  r.stats.actors += done.executions;
  r.counts.injected += done.injected;
  if (!done.agreed) {
    r.unconfirmed.insert(r.unconfirmed.end(), done.unconfirmed.begin(), done.unconfirmed.end());
    r.counts.reexecutions += done.executions;
    voting_.lose_vote(job, static_cast<int>(r.index));
    mark(job, "vote-failed", std::string(job.plan->name(a)), static_cast<int>(r.index));
    return kRetry;
  }
  if (pa.runs > 1) {
    // Results of earlier messages that found no agreement count once one is confirmed.
    for (std::uint64_t sum : r.unconfirmed) r.counts.detected += sum != done.checksum;
    r.unconfirmed.clear();
    r.counts.detected += done.rejected;
    r.counts.reexecutions += done.executions - pa.runs;
    if (done.rejected > 0) voting_.lose_vote(job, static_cast<int>(r.index));
  }
  if (pa.replica != 0) {
    if (s.checksum_of.empty()) {
      s.checksum[hot.output] = done.checksum;
    } else {
      // The end-to-end check may read it from another runner (a copy of an
      // earlier round written back as this round's replica finishes).
      std::atomic_ref<std::uint64_t>(s.checksum[hot.output]).store(done.checksum, std::memory_order_relaxed);
      std::atomic_ref<std::uint32_t>(s.checksum_of[hot.output]).store(r.tile->checks_values() ? job.execution + 1 : 0, std::memory_order_release);
    }
  }
  if (!book_once(r, job, a, done.seconds)) {
    // Speculation: the other run of `a` was booked first; this one's output is dropped.
    if (done.output_slot != kNoSlot) r.tile->clear_slot(done.output_slot);
    return kNone;
  }
  if (pa.replica == 0 && !s.checksum_of.empty()) {
    // Written by the booked run only (a speculative copy's twin may finish at
    // the same time), before book_completion() releases the consumers.
    std::atomic_ref<std::uint64_t>(s.checksum[hot.output]).store(done.checksum, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(s.checksum_of[hot.output]).store(r.tile->checks_values() ? job.execution + 1 : 0, std::memory_order_release);
  }
  return book_completion(r, job, a, done.output_slot, output_tag);
}

// The local fast path (Job::plain): the actor runs straight from the slots,
// with no ActorMessage or Completion, timed only when asked; a 0-byte output
// takes no slot.
bool Engine::run_plain(Runner& r, Job& job, ActorId a, SlotId& out_slot) {
  const ActorHot& hot = job.plan->hot[a];
  const std::size_t bytes = job.plan->data[hot.output].bytes;
  // Ready, so no producer touches its count again this execution: put it back for the next (GraphState::clean).
  job.state->pending[a].store(hot.initial_pending, std::memory_order_relaxed);
  out_slot = kNoSlot;
  if (bytes != 0 && !slots_.allocate(r, job, out_slot)) {
    fail(job, "actor '" + std::string(job.plan->name(a)) + "' needs more slots than tile " + std::to_string(r.index) + " has");
    return false;
  }
  const Plan& plan = *job.plan;
  for (std::uint32_t i = 0; i < hot.input_count; ++i) {
    const DataId d = plan.inputs[hot.first_input + i];
    const SlotId slot = r.input_slots[i];
    r.input_bytes[i] = slot == kNoSlot ? job.state->home[d] : r.local->slot_memory(slot, plan.data[d].bytes);
  }
  const double trace_start = job.tracing ? job.now() : 0;
  std::string failure;
  const bool ok = r.local->run_local(*hot.function, *job.plan->graph, a, {r.input_bytes.data(), hot.input_count}, out_slot, DataTag{job.execution, hot.output, 0},
                                    bytes, job.timed ? &r.stats.busy_s : nullptr, failure);
  if (job.tracing) r.trace.actors.push_back(RawActor{a, static_cast<int>(r.index), 0, 0, trace_start, job.now(), r.stolen, false, 0});
  if (!ok) [[unlikely]] {
    failed_on_tile(r, job, a, failure);
    return false;
  }
  ++r.stats.actors;
  return true;
}

// Actor `h` itself may run in place on tile r: a tile actor whose output is
// small and inner, read by nobody, or written through, on a tile in service.
[[gnu::always_inline]] inline bool Engine::in_place_actor(const Runner& r, const GraphState& s, const ActorHot& h) const {
  if ((h.flags & ActorHot::kOnDriver) || !((h.flags & (ActorHot::kSmallInner | ActorHot::kDeadInner)) || s.write_through[h.output])) return false;
  return places_.healthy(r.index);
}

// run_in_place's conditions for actor `h` on tile r, its inputs gathered in
// r.input_bytes when they hold.
[[gnu::always_inline]] inline bool Engine::in_place_inputs(Runner& r, Job& job, const ActorHot& h) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  if (!in_place_actor(r, s, h)) return false;
  for (std::uint32_t i = 0; i < h.input_count; ++i) {
    // Without redundancy there are no votes, so no aliases (GraphState::alias[d] == d).
    const DataId d = plan.inputs[h.first_input + i];
    const PlanData& in = plan.data[d];
    if (in.bytes != 0 && !memory_.valid(job, d, 0)) return false;
    // A larger inner value may also sit in this tile's slot (the driver pulled
    // a copy home): the slot path reads it there and frees the slot when it is dead.
    if (in.kind == DataKind::kInner && in.bytes > kInlineBytes && s.dirs[r.index].slot_of.find(d) >= 0) return false;
    r.input_bytes[i] = s.home[d];
  }
  return true;
}

// The leanest path (Job::in_place: the fast path without a trace): an actor
// whose output is small and inner (ActorHot::kSmallInner), read only by
// driver actors (write_through) or by nobody (ActorHot::kDeadInner), and whose inputs are all in main memory,
// runs from main memory straight into main memory. No slot, no directory,
// and a write-through value moves once instead of twice. Its write still
// counts as the tile's transfers_out (a remote tile would send it). False,
// having changed nothing, when it does not apply. While r.chaining, the
// consumer this tile would run next goes on in the same call when it can
// run in place too (a chain costs no trip through the loop per actor).
bool Engine::run_in_place(Runner& r, Job& job, ActorId a, ActorId& next) {
  if (!in_place_inputs(r, job, job.plan->hot[a])) return false;
  // Entered once per chain (its actors then run in the callee's loop): rare per actor.
  if (run_one_in_place(r, job, a, next) && next != kNone && r.chaining) [[unlikely]]
    run_chain_in_place(r, job, a, next);
  return true;
}

// An actor that failed on tile r stops the execution with an error naming both.
void Engine::failed_on_tile(const Runner& r, Job& job, ActorId a, std::string_view why, Status::Code code) {
  fail(job, "actor '" + std::string(job.plan->name(a)) + "' failed on tile " + std::to_string(r.index) + ": " + std::string(why), code);
}

// Around an actor `a` (hot `h`, output `out`) run in place. Before: it is
// ready, so no producer touches these counts again this execution: the next
// execution's values, and this one's first word on the output
// (GraphState::clean). After: its value is valid in main memory, and counts
// as a transfer out unless nobody reads it (it went nowhere).
[[gnu::always_inline]] inline void Engine::before_in_place(GraphState& s, ActorId a, const ActorHot& h, const PlanData& out) {
  s.pending[a].store(h.initial_pending, std::memory_order_relaxed);
  s.remaining[h.output].store(out.consumer_count, std::memory_order_relaxed);
}
[[gnu::always_inline]] inline void Engine::after_in_place(Runner& r, GraphState& s, const ActorHot& h, const PlanData& out) {
  s.home_state[h.output].store(home_word(0, kHomeValid), std::memory_order_release);
  ++r.stats.actors;
  if (out.bytes != 0 && out.consumer_count != 0) {
    ++r.stats.transfers_out;
    r.transfer_bytes += out.bytes;
  }
}

// One actor whose inputs are in r.input_bytes (in_place_inputs), then its
// completion (`next`: what complete_on_tile hands back). False when it failed.
[[gnu::always_inline]] inline bool Engine::run_one_in_place(Runner& r, Job& job, ActorId a, ActorId& next) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const ActorHot& h = plan.hot[a];
  const PlanData& out = plan.data[h.output];
  before_in_place(s, a, h, out);
  if (!r.local->run_into(*h.function, *plan.graph, a, {r.input_bytes.data(), h.input_count}, {s.home_write[h.output], out.bytes},
                         job.timed ? &r.stats.busy_s : nullptr, r.failure)) [[unlikely]] {
    failed_on_tile(r, job, a, r.failure);
    next = kNone;
    return false;
  }
  after_in_place(r, s, h, out);
  for (std::uint32_t i = 0; i < h.input_count; ++i) {
    // Read in place, so no slot of ours to free. A count is kept only for a
    // larger inner value, whose copy in some tile's slot is reclaimed when it
    // drops to 0 (SlotDirectory::allocate); small inner values never sit in slots on
    // the fast path, and given nodes are reset by the engine each execution.
    const DataId d = plan.inputs[h.first_input + i];
    const PlanData& in = plan.data[d];
    if (in.kind != DataKind::kInner || in.bytes <= kInlineBytes) continue;
    if (in.consumer_count == 1) {
      s.remaining[d].store(0, std::memory_order_release);
    } else {
      s.remaining[d].fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  next = complete_on_tile(job, a, r);
  return true;
}

// While r.chaining: `next`, which actor `a` just handed back, and each one
// after it run here in the same call while they can run in place (a chain
// costs no trip through the scheduler's loop per actor). Returns with
// `next` the actor handed back and not run (kNone: none). The chain's
// links go first (run_links); where one does not hold, each actor's
// conditions are asked in full.
[[gnu::noinline]] void Engine::run_chain_in_place(Runner& r, Job& job, ActorId a, ActorId& next) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  if (!job.timed) {
    a = run_links(r, job, a, next);
    if (next == kNone) return;
  }
  do {
    if (job.aborted.load(std::memory_order_relaxed)) return;
    // Under HEFT only complete_on_tile's chain case hands an actor back (a
    // plain execution has no votes): the next actor of the order walked,
    // ready, without claims. The walk would run it next unless a new
    // schedule came meanwhile.
    if (job.scheduler == Scheduler::kHeft && job.joins.epoch() != r.chain_epoch) return;
    const DataId written = plan.hot[a].output;
    const ActorHot& nh = plan.hot[next];
    if (plan.only_input(nh, written)) {
      // The value just written in place: valid, small, in no slot.
      if (!in_place_actor(r, s, nh)) return;
      r.input_bytes[0] = s.home[written];
    } else if (!in_place_inputs(r, job, nh)) {
      return;
    }
    if (job.scheduler == Scheduler::kHeft) ++r.chain_at;
    r.stolen = false;
    a = next;
  } while (run_one_in_place(r, job, a, next) && next != kNone);
}

// The chain's links (Plan::chain_next) from actor `a`, which just ran and
// handed back `next`: the leanest per-actor path there is. The plan checked
// when it was made what holds for the whole execution (a link's consumer
// reads only the small inner value just written, and runs in place), so a
// link asks only what may change while the chain runs: an abort, a join
// (a new schedule, claims), its tile leaving service, and under HEFT
// whether the consumer is next in the order walked. One context moves
// along the chain, the thread's current actor for the whole of it. Returns
// the last actor run, `next` what it handed back (kNone: none); the first
// link that does not hold is left to the caller.
[[gnu::always_inline]] inline ActorId Engine::run_links(Runner& r, Job& job, ActorId a, ActorId& next) {
  const Plan& plan = *job.plan;
  const ActorId* const links = plan.chain_next.data();
  if (links[a] != next) return a;
  GraphState& s = *job.state;
  const ActorHot* const hot = plan.hot.data();
  const PlanData* const data = plan.data.data();
  const std::atomic<bool>& out_of_service = places_.quarantine_word(r.index);
  const bool heft = job.scheduler == Scheduler::kHeft;
  ActorContext ctx(*plan.graph, a, {}, {}, r.local->parallel_loop());
  RunningActor running(ctx);
  do {
    if (job.aborted.load(std::memory_order_relaxed) || out_of_service.load(std::memory_order_acquire) ||
        (heft && job.joins.epoch() != r.chain_epoch))
      break;
    const DataId written = hot[a].output;
    a = next;
    const ActorHot& h = hot[a];
    const PlanData& out = data[h.output];
    if (heft) ++r.chain_at;
    r.stolen = false;
    // Its one input is small, so no count is kept for it (run_one_in_place).
    before_in_place(s, a, h, out);
    r.input_bytes[0] = s.home[written];
    ChainedContext::point_at(ctx, a, {r.input_bytes.data(), 1}, {s.home_write[h.output], out.bytes});
    call_actor(*h.function, ctx);
    if (ctx.failure()) [[unlikely]] {
      failed_on_tile(r, job, a, *ctx.failure());
      next = kNone;
      return a;
    }
    after_in_place(r, s, h, out);
    // complete_on_tile's chain case, which the link holds unless a join claims.
    const ActorId c = links[a];
    if (c == kNoActor || job.joins.claiming() ||
        (heft && !(r.chain_at + 1 < r.chain_order.size() && r.chain_order[r.chain_at + 1] == c))) {
      next = complete_on_tile(job, a, r);
      return a;
    }
    s.pending[c].store(0, std::memory_order_release);
    ++r.unflushed;
    next = c;
  } while (true);
  return a;
}

// The driver's bookkeeping after an actor ran on tile r: where its value
// lives, the write-back of outputs, and freeing inputs no one needs any more.
ActorId Engine::book_completion(Runner& r, Job& job, ActorId a, SlotId out_slot, DataTag tag) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  const ActorHot& hot = plan.hot[a];
  auto& dir = s.dirs[r.index];
  const PlanData& out = plan.data[hot.output];
  if (plan.redundant) s.producer_tile[hot.output] = static_cast<int>(r.index);
  if (job.plain) {
    // This execution's first word on the value, before complete() lets any consumer see it (GraphState::clean).
    s.remaining[hot.output].store(out.consumer_count, std::memory_order_relaxed);
    s.home_state[hot.output].store(home_word(0, kHomeInvalid), std::memory_order_relaxed);
  }
  if (out_slot == kNoSlot) {
    // A 0-byte value: main memory "holds" it already; no slot, no transfer.
    s.home_state[hot.output].store(home_word(0, kHomeValid), std::memory_order_release);
  } else if (job.plain && (s.write_through[hot.output] || (out.kind == DataKind::kInner && out.consumer_count != 0 && out.bytes <= kInlineBytes))) {
    // Read only by driver actors (a collect's zero-copy input, a split's
    // input), or small (kInlineBytes): write it to its place in main memory
    // now, on this tile, and free the slot, instead of the driver pulling it
    // later, serially; consumers on tiles read it there in place.
    // Nobody else knows of the value yet, so nobody else writes its home or
    // reads its slot: a plain copy, no validity lock, no pin.
    const std::size_t bytes = out.bytes;
    const double start = job.tracing ? job.now() : 0;
    std::memcpy(s.home_write[hot.output], r.local->slot_memory(out_slot, bytes).data(), bytes);
    s.home_state[hot.output].store(home_word(0, kHomeValid), std::memory_order_release);
    ++r.stats.transfers_out;
    r.transfer_bytes += bytes;
    if (job.tracing) r.trace.transfers.push_back(RawTransfer{hot.output, static_cast<int>(r.index), kDriverTile, bytes, start, job.now()});
    r.local->drop_slot(out_slot);
  } else if (out.kind == DataKind::kInner && out.consumer_count == 0) {
    // Dead at birth: nobody reads it and the driver does not keep it, so its
    // slot is free again at once. (Left occupied, every later SlotDirectory::allocate
    // would scan the whole directory, finding it dead only by looking.)
    r.tile->clear_slot(out_slot);
  } else {
    dir.held[out_slot] = tag;
    dir.occupy(out_slot);
    dir.index(hot.output, out_slot);
    s.location[hot.output].store(pack_location(r.index, out_slot), std::memory_order_release);
    // The driver keeps outputs: copy them to main memory now, while they are hot.
    if (out.kind == DataKind::kOutput) memory_.write(job, tag, *r.tile, out_slot, r.stats);
  }
  // Inputs whose last consumer this was are dead: free their slots here. A
  // replica keeps its inputs until its vote confirms a result: a re-execution
  // needs them (non-speculative rollback, section 5.2).
  if (pa.replica == 0) {
    for (std::uint32_t i = 0; i < hot.input_count; ++i) {
      const DataId d = s.alias[plan.inputs[hot.first_input + i]];
      const PlanData& in = plan.data[d];
      // Fast path: the only consumer needs no read-modify-write to know it is the last.
      const bool last = job.plain && in.consumer_count == 1 ? (s.remaining[d].store(0, std::memory_order_release), true)
                                                           : s.remaining[d].fetch_sub(1, std::memory_order_acq_rel) == 1;
      if (last && in.kind == DataKind::kInner) {
        const SlotId slot = r.input_slots[i];
        if (slot != kNoSlot && dir.occupied(slot) && dir.held[slot].data == d) {
          // Dead: every consumer is done, so no tile is reading it any more (no pin to wait for).
          if (job.plain) {
            r.local->drop_slot(slot);
          } else {
            r.tile->clear_slot(slot);
          }
          dir.release(slot);
          dir.unindex(d, slot);
        }
      }
    }
  }
  if (job.tracing) {
    r.trace.slots.push_back(RawSlots{job.now(), dir.used()});
  }
  return complete(job, a, &r);
}

}  // namespace redflow::runtime
