// Pipelined dispatch (docs/remote.md). A tile in a worker process answers an actor
// message a network round trip later, so one message at a time caps a worker
// at one actor per round trip, however short the actor. A runner whose tile
// says pipeline_depth() > 1 keeps up to that many actor messages on the
// wire: it sends the next ready actor while earlier ones run, and books the
// completions in the order the worker answers them, which is the order sent.
//
// Only plain actors go this way (one run, no replica, not a driver actor):
// *-same and replicas need each completion before the next decision (a
// retry, a vote), so for them the pipeline drains first and the actor goes
// one message at a time. The slots of actors in flight stay pinned
// (Runner::pinned_from) until their completions are booked, so no later
// message reuses them.
#include <algorithm>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

bool Engine::pipelines(const Job& job, ActorId a) const {
  const PlanActor& pa = job.plan->actors[a];
  return !job.plain && pa.runs == 1 && pa.replica == 0 && !pa.on_driver;
}

// Runs or sends `a` on tile r. Returns an actor to run next on this tile
// (work-first), or kNone: then the caller looks for more work, and takes a
// completion back when it finds none.
ActorId Engine::dispatch(Runner& r, Job& job, ActorId a) {
  if (!pipelines(job, a) || !places_.healthy(r.index)) {
    drain_pipeline(r, job);
    return run_on_tile(r, job, a);
  }
  // Room for this actor's output and missing inputs in slots that are free
  // or hold only dead values, and are not pinned by actors in flight.
  // Sending more must never displace a live value: that costs a write-back
  // and a fetch again, round trips each, which is what pipelining is there
  // to save (with 64 slots and 64 actors in flight over 64 chains it fell to
  // half the rate of depth 1).
  // Both are counted again after each completion taken: one that says a
  // fetch found nothing (place_again) empties a slot that may hold an input
  // of `a`, which then needs a slot more.
  const auto& dir = job.state->dirs[r.index];
  const ActorHot& hot = job.plan->hot[a];
  auto needs = [&] {
    std::size_t n = 1;  // its output, and each input not in a slot here yet
    for (std::uint32_t i = 0; i < hot.input_count; ++i) {
      const DataId d = job.state->alias[job.plan->inputs[hot.first_input + i]];
      n += dir.slot_holding(DataTag{job.execution, d, job.round_of(d)}) < 0;
    }
    return n;
  };
  auto room = [&] {
    std::size_t n = 0;
    for (SlotId i = 0; i < dir.stamp.size(); ++i) n += dir.stamp[i] < r.sent.front().clock && SlotDirectory::reusable(job, dir, i);
    return n;
  };
  // In flight from here for idle tiles looking for stragglers: a runner
  // waiting for room behind a stuck worker holds `a` where no thief sees it,
  // so only a copy can run it (and the wait ends when the execution does).
  note_sent(r, job, a);
  ActorId next = kNone;
  while (!r.sent.empty() && room() < needs()) {
    const ActorId ready = take_completion(r, job);
    if (ready != kNone) {
      if (next != kNone) {
        r.deque.push(next);
        steal_notifier_.notify_one();
      }
      next = ready;
    }
  }
  if (job.aborted.load(std::memory_order_relaxed) || already_booked(job, a)) {
    note_unsent(r, job);
    if (!r.relay_only.empty()) std::erase(r.relay_only, a);  // never placed: a later placement of it may copy from tiles
    return next;
  }
  if (!places_.healthy(r.index)) {
    // A completion taken above put the tile out of service (lost or
    // quarantined): `a` never went there, so it goes elsewhere as from any
    // tile out of service, without a strike towards poisoning.
    note_unsent(r, job);
    (void)run_on_tile(r, job, a);
    return next;
  }
  send_actor_message(r, job, a);
  if (next != kNone) return next;
  if (r.sent.size() < r.depth) return kNone;
  return take_completion(r, job);
}

void Engine::send_actor_message(Runner& r, Job& job, ActorId a) {
  ++r.clock;
  r.pinned_from = r.sent.empty() ? r.clock : r.sent.front().clock;
  ActorId handed_on = kNone;
  ActorMessage m;
  // The tile was lost (`a` went elsewhere) or the job failed.
  if (!place_inputs(r, job, a, handed_on) || !describe_actor_message(r, job, a, 0, m)) return note_unsent(r, job);
  const double trace_start = job.tracing ? job.now() : 0;
  if (r.sent.empty()) r.emptied.clear();  // nothing on the wire reads them (the pipeline was drained, or given up)
  r.tile->send_actor(m);
  if (const double budget = job.speculation.on() ? answer_budget(job, a) : 0; budget > 0) r.tile->bound_completion(r.sent.size(), budget);
  r.sent.push_back(Runner::Sent{a, r.clock, r.input_slots, m.output_tag, m.attempt, trace_start, r.stolen});
  r.stats.most_in_flight = std::max<std::uint64_t>(r.stats.most_in_flight, r.sent.size());
}

// Books the oldest completion in flight; returns what it made ready to run
// next here (work-first), as run_on_tile() does.
ActorId Engine::take_completion(Runner& r, Job& job) {
  if (!await_completion(r, job)) return kNone;  // the execution ended without these answers (speculation)
  Runner::Sent sent = std::move(r.sent.front());
  r.sent.pop_front();
  Completion done = r.tile->next_completion();
  note_answered(r, job);
  if (done.lost) {
    // The oldest is the actor the worker was running (or about to), so only
    // it counts towards being poisoned, as the actor of a lost one-at-a-time
    // call does.
    hand_on_from_lost(r, job, sent.actor);
    take_answers_after_loss(r, job);
    return kNone;
  }
  return book_answer(r, job, std::move(sent), std::move(done));
}

ActorId Engine::book_answer(Runner& r, Job& job, SentActor sent, Completion done) {
  if (!done.ok && done.missing_inputs.empty() && !r.emptied.empty()) {
    // It read a slot an earlier actor's failed fetch emptied (place_again).
    for (SlotId slot : sent.input_slots)
      if (std::find(r.emptied.begin(), r.emptied.end(), slot) != r.emptied.end()) done.missing_inputs.push_back(slot);
  }
  r.input_slots = std::move(sent.input_slots);
  r.stolen = sent.stolen;
  const ActorId next = finish_actor_message(r, job, sent.actor, sent.output_tag, sent.attempt, std::move(done), sent.trace_start);
  r.stolen = false;
  return next;
}

// The answers behind a lost one. A worker answers in the order sent, but it
// runs an actor whose inputs are there ahead of an earlier one still
// fetching its inputs from a peer (docs/remote.md, "Transfers"), so an
// actor sent after the one the tile died on may have run, and its
// completion came before the loss. It is booked like any actor that ran on a
// tile lost afterwards: it ran once, counted, and its value, only on the lost
// tile, is recomputed from main memory if someone still needs it (dropping
// the answer would run it a second time, uncounted). The others never ran
// there: they are handed on without a strike.
void Engine::take_answers_after_loss(Runner& r, Job& job) {
  while (!r.sent.empty()) {
    Runner::Sent queued = std::move(r.sent.front());
    r.sent.pop_front();
    Completion done = r.tile->next_completion();
    note_answered(r, job);
    if (done.ok && !done.lost && done.missing_inputs.empty()) {
      if (const ActorId next = book_answer(r, job, std::move(queued), std::move(done)); next != kNone) {
        r.deque.push(next);  // a lost tile's runner hands its queue on (run_on_tile)
        steal_notifier_.notify_one();
      }
      continue;
    }
    if (!already_booked(job, queued.actor)) placement_.forward(job, queued.actor, r);
  }
}

namespace {
// The trace says what moved, as the stats do: a fetch that found nothing
// moved nothing, and its value is traced again where it does come from.
void forget_traced_fetch(std::vector<RawTransfer>& traced, DataId d, int to) {
  auto it = std::find_if(traced.rbegin(), traced.rend(), [&](const RawTransfer& t) { return t.data == d && t.to == to && t.from >= 0; });
  if (it != traced.rend()) traced.erase(std::next(it).base());
}
}  // namespace

// A fetch from another worker sent ahead of `a` found nothing there (its
// source displaced the value after the directory was read, or was lost):
// the worker emptied those slots and ran nothing. The directory forgets
// them, and `a` runs again from this tile's inbox with every input from
// main memory, where a displaced value went, or recomputed from its
// producers if it lived only on a lost tile (SlotDirectory::place_input). A speculative
// copy is just dropped: its original still runs.
ActorId Engine::place_again(Runner& r, Job& job, ActorId a, const std::vector<SlotId>& missing) {
  auto& dir = job.state->dirs[r.index];
  for (SlotId slot : missing) {
    if (slot >= dir.held.size() || !dir.occupied(slot)) continue;
    const DataId d = dir.held[slot].data;
    dir.unindex(d, slot);
    dir.release(slot);
    // Not a copy after all: it is counted when placed again.
    --r.stats.transfers_in;
    r.transfer_bytes -= job.plan->data[d].bytes;
    if (job.tracing) forget_traced_fetch(r.trace.transfers, d, static_cast<int>(r.index));
  }
  if (!r.sent.empty()) r.emptied.insert(r.emptied.end(), missing.begin(), missing.end());
  if (r.copying || already_booked(job, a)) return kNone;
  r.relay_only.push_back(a);
  push_inbox(r, a);
  return kNone;
}

// Takes back every completion in flight. After a failure their answers are
// only read (the worker's order of answers must stay in step with the next
// execution's); else each is booked and what it made ready is queued here.
void Engine::drain_pipeline(Runner& r, Job& job) {
  while (!r.sent.empty()) {
    if (job.aborted.load(std::memory_order_acquire)) {
      if (!await_completion(r, job)) break;  // a straggler's answers are not waited for
      r.sent.pop_front();
      (void)r.tile->next_completion();
      continue;
    }
    const ActorId next = take_completion(r, job);
    if (next != kNone) {
      r.deque.push(next);
      steal_notifier_.notify_one();
    }
  }
}

}  // namespace redflow::runtime
