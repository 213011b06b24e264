// Speculative copies of stragglers (docs/remote.md). A worker can be slow without
// being lost: an overloaded machine, a throttled link. Its runner keeps
// waiting for the answer while the other tiles run out of work, and the
// execution ends when the slowest actor does (the "9,994 of 10,000 tasks"
// that Dask and Hadoop users know). Here a tile with nothing to do looks at
// the actors on the wire to the other workers (Runner::flight): when the
// oldest has been running for more than kSlower times its estimate and at
// least RuntimeOptions::speculate_after_s, it runs a copy of an actor in
// that flight whose inputs it can get without the straggler (main memory, or
// another tile). Actors are pure, so either run gives the same bytes: the
// first completion books the result (GraphState::booked), the other's output
// slot is cleared and nothing else of it counts. When the execution has
// ended on copies, the straggler's runner stops waiting for it (the answers
// are abandoned; the worker runs them later, before anything sent after).
//
// One run stands for both. While a copy runs, the actor runs twice, and
// either tile may be lost. The first run lost counts a strike towards
// poisoning but is not handed on: the other run stands for it. Only when
// the second ends without a result (lost too, or its tile left service) is
// the actor handed on, once. Handing on every lost run put an actor that
// kills its workers on a fourth worker of four while the third was still
// dying (1 run in about 35 under TSan with the machine loaded).
#include <algorithm>
#include <string>
#include <thread>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

namespace {
// How many times its estimate an actor runs before a copy of it is worth running.
constexpr double kSlower = 4;
// How many times its own fastest run an actor may run on a worker before the
// worker is lost (no less than TileServer::floor_s(); docs/remote.md, "Deadlines").
constexpr double kLostAfter = 16;
}  // namespace

bool Engine::book_once(Runner& r, Job& job, ActorId a, double seconds) {
  if (!job.speculation.on()) return true;
  GraphState& s = *job.state;
  if (s.booked[a].exchange(job.execution, std::memory_order_acq_rel) == job.execution) return false;
  if (r.copying) job.speculation.count_win();
  // The fastest run seen: a straggler's own times must not raise the bar it is measured against.
  const float was = s.measured_s[a].load(std::memory_order_relaxed);
  if (was <= 0 || seconds < was) s.measured_s[a].store(static_cast<float>(seconds), std::memory_order_relaxed);
  r.measured_sum.store(r.measured_sum.load(std::memory_order_relaxed) + seconds, std::memory_order_relaxed);
  r.measured_count.store(r.measured_count.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  return true;
}

bool Engine::already_booked(const Job& job, ActorId a) const {
  return job.speculation.on() && job.state->booked[a].load(std::memory_order_acquire) == job.execution;
}

void Engine::note_sent(Runner& r, Job& job, ActorId a) {
  if (!job.speculation.on()) return;
  std::lock_guard<std::mutex> lock(r.flight_mutex);
  if (r.flight.empty()) r.flight_since = job.now();
  r.flight.push_back(a);
}

void Engine::note_unsent(Runner& r, Job& job) {
  if (!job.speculation.on()) return;
  std::lock_guard<std::mutex> lock(r.flight_mutex);
  if (!r.flight.empty()) r.flight.pop_back();
}

void Engine::note_answered(Runner& r, Job& job) {
  if (!job.speculation.on()) return;
  std::lock_guard<std::mutex> lock(r.flight_mutex);
  if (!r.flight.empty()) r.flight.erase(r.flight.begin());
  r.flight_since = job.now();  // the next one in line starts now
}

// Waits for tile r's oldest answer, but not past the execution's end: once
// every actor is booked (copies overtook what is on the wire here), the
// answers still to come are abandoned. False then.
bool Engine::await_completion(Runner& r, Job& job) {
  if (!job.speculation.on()) return true;
  while (!r.tile->completion_within(0.02)) {
    flush_completed(r, job);  // what this runner booked counts before anyone can see the end
    // A copy's run, once booked, is what the oldest is measured against.
    if (const double budget = answer_budget(job, r.sent.front().actor); budget > 0) r.tile->bound_completion(0, budget);
    if (!finished(job)) continue;
    while (!r.sent.empty()) {
      // The worker still runs it: a worker stuck on it is lost after its
      // deadline, not left to stall the next execution's requests to it.
      if (const double budget = answer_budget(job, r.sent.front().actor); budget > 0) r.tile->bound_completion(0, budget);
      r.sent.pop_front();
      r.tile->abandon_completion();
      job.speculation.count_abandoned();
    }
    std::lock_guard<std::mutex> lock(r.flight_mutex);
    r.flight.clear();
    return false;
  }
  return true;
}

// How long `a` may run on a worker before the worker is lost: kLostAfter
// times its own fastest run (in an earlier execution, or a copy's in this
// one); 0, no bound of its own, until a run of it was measured.
double Engine::answer_budget(const Job& job, ActorId a) const {
  const double fastest = job.state->measured_s[a].load(std::memory_order_relaxed);
  return fastest > 0 ? kLostAfter * fastest : 0;
}

// What `a` should take: its fastest run in an earlier execution (or the
// mean run of the fastest tile so far in this one, if less); without such a
// run, its cost as HEFT plans it when the graph gives one: a `work` hint, or
// the time measured in earlier runs that CostModel::apply set (a long actor
// is then not taken for a straggler in the first execution); else the mean
// run of the fastest tile so far (a straggler's own runs would hide it),
// else 0 (then only speculate_after_s counts).
double Engine::estimate(const Job& job, ActorId a) const {
  double best = job.state->measured_s[a].load(std::memory_order_relaxed);
  if (best <= 0) {
    const double work = job.plan->graph->actor(a).work;
    const MachineModel m = machine();
    if (work > 0 && m.ops_per_second_per_core > 0)
      return work / (static_cast<double>(std::max(m.cores_per_tile, 1u)) * m.ops_per_second_per_core);
  }
  for (const auto& v : runners_) {
    const std::uint64_t n = v->measured_count.load(std::memory_order_acquire);
    if (n == 0) continue;
    const double mean = v->measured_sum.load(std::memory_order_relaxed) / static_cast<double>(n);
    if (best <= 0 || mean < best) best = mean;
  }
  return best;
}

// Every input of `a` can be had without tile v: in main memory, or in a
// slot of another tile still in service.
bool Engine::inputs_without(const Job& job, ActorId a, unsigned v) const {
  const Plan& plan = *job.plan;
  const GraphState& s = *job.state;
  const ActorHot& hot = plan.hot[a];
  for (std::uint32_t i = 0; i < hot.input_count; ++i) {
    const DataId d = s.alias[plan.inputs[hot.first_input + i]];
    if (memory_.valid(job, d, job.round_of(d))) continue;
    const std::uint64_t loc = s.location[d].load(std::memory_order_acquire);
    if (loc == kNowhere) return false;  // not produced yet (behind the straggler, say)
    const auto tile = static_cast<unsigned>(loc >> 32);
    if (tile == v || gone(tile)) return false;
  }
  return true;
}

// Runner v's oldest actor has run past its bar (caller holds v.flight_mutex).
bool Engine::straggling_locked(const Job& job, const Runner& v, double now) const {
  return !v.flight.empty() && now - v.flight_since >= std::max(kSlower * estimate(job, v.flight.front()), options_.speculate_after_s);
}

// Tile r is a straggler: it takes no new work (its runner only takes answers
// back, which it may give up at the end), so idle tiles take that work
// instead of it waiting behind r's queue.
bool Engine::straggling(Runner& r, Job& job) {
  if (!job.speculation.on()) return false;
  std::lock_guard<std::mutex> lock(r.flight_mutex);
  return straggling_locked(job, r, job.now());
}

// An actor on the wire to a straggling worker (or having its inputs placed
// there) that tile r may copy (claimed for r), or kNone.
ActorId Engine::find_straggler(Runner& r, Job& job) {
  GraphState& s = *job.state;
  const double now = job.now();
  for (auto& vp : runners_) {
    Runner& v = *vp;
    if (&v == &r) continue;
    ActorId found = kNone;
    {
      std::lock_guard<std::mutex> lock(v.flight_mutex);
      if (v.flight.empty() || !straggling_locked(job, v, now)) continue;
      for (ActorId a : v.flight) {
        if (s.booked[a].load(std::memory_order_acquire) == job.execution) continue;
        if (s.copied[a].load(std::memory_order_acquire) == job.execution) continue;
        if (!inputs_without(job, a, v.index) || !job.losses.may_run_twice(a, options_.crash_limit)) continue;
        if (s.copied[a].exchange(job.execution, std::memory_order_acq_rel) == job.execution) continue;
        found = a;
        break;
      }
    }
    if (found == kNone) continue;
    note_straggler(job, v, found);  // marks: not under the flight lock
    return found;
  }
  return kNone;
}

// Called by a runner with nothing to do, before it sleeps: runs a copy of a
// straggler's actor, or, until the execution ends, naps instead
// of sleeping until woken (a straggler shows only with time). False: sleep.
bool Engine::speculate_while_idle(Runner& r, Job& job) {
  if (!job.speculation.on() || !in_service(r.index) || finished(job)) return false;
  const ActorId a = find_straggler(r, job);
  if (a == kNone && take_over(r, job)) return true;
  if (a == kNone) {
    // Nobody in flight right now is not nobody working: a straggler's
    // runner empties its flight for a moment between taking an answer and
    // sending its next actor. A tile that slept then slept to the end of
    // the execution, and no copy was ever made (NetStraggler under TSan).
    if (finished(job)) return false;
    flush_completed(r, job);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return true;
  }
  ++r.stats.speculative;
  job.speculation.count_copy();
  mark(job, "speculative-copy", std::string(job.plan->name(a)), static_cast<int>(r.index));
  drain_pipeline(r, job);
  job.speculation.started(a);
  r.copying = true;
  const ActorId next = run_on_tile(r, job, a);
  r.copying = false;
  const bool original_lost = job.speculation.ended(a);
  if (original_lost && !already_booked(job, a) && !job.aborted.load(std::memory_order_acquire)) placement_.forward(job, a, r);
  if (next != kNone) {
    r.deque.push(next);
    steal_notifier_.notify_one();
  }
  return true;
}

void Engine::note_straggler(Job& job, Runner& v, ActorId a) {
  v.straggled.fetch_add(1, std::memory_order_relaxed);
  if (!v.straggler_marked.exchange(true, std::memory_order_relaxed))
    mark(job, "straggler", std::string(job.plan->name(a)), static_cast<int>(v.index));
}

// HEFT: a straggler's walker takes no new actor, so an idle tile claims the
// next ready one of its order (not a copy: the straggler will skip it).
bool Engine::take_over(Runner& r, Job& job) {
  if (!job.joins.claiming()) return false;
  const Schedule& s = orders(job);
  for (auto& vp : runners_) {
    Runner& v = *vp;
    if (&v == &r || v.index >= s.tile_order.size() || !straggling(v, job)) continue;
    for (ActorId a : s.tile_order[v.index]) {
      if (job.joins.claimed(a) || job.state->pending[a].load(std::memory_order_acquire) != 0) continue;
      if (!inputs_without(job, a, v.index) || !job.joins.claim(a)) continue;
      note_straggler(job, v, a);
      mark(job, "taken-over", std::string(job.plan->name(a)), static_cast<int>(r.index));
      job.speculation.count_taken_over();
      drain_pipeline(r, job);
      const ActorId next = run_on_tile(r, job, a);
      if (next != kNone) r.deque.push(next);
      return true;
    }
  }
  return false;
}

}  // namespace redflow::runtime
