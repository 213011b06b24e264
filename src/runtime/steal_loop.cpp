// The work-stealing scheduler's tile loop (section 4.2 of Kühbacher et al.):
// pop own work, then steal from random victims, then sleep.
#include <thread>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

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
    if (n == 1 || !places_.healthy(r.index)) return kNone;
    // Section 4.2: take from the back of a random victim's queue.
    for (std::size_t attempt = 0; attempt < 2 * n; ++attempt)
      if (ActorId a = steal_from(*runners_[next_random(r.rng) % n]); a != kNone) return a;
    // Random victims can miss the one queue that has work; sweep once before idling.
    for (auto& victim : runners_)
      if (ActorId a = steal_from(*victim); a != kNone) return a;
    return kNone;
  };
  auto any_work = [&]() {
    if (!places_.healthy(r.index)) return !r.deque.empty() || r.inbox_size.load(std::memory_order_acquire) != 0;
    for (auto& v : runners_)
      if (!v->deque.empty() || v->inbox_size.load(std::memory_order_acquire) != 0) return true;
    return false;
  };

  while (!finished(job)) {
    if (places_.absent(r.index)) {
      // A place kept for a join: nothing to do until a worker fills it (its
      // own notifier, so a steal's notify_one never wakes a place instead of a tile).
      if (places_.join_pending(r.index) && admit_joined(r.index, *job.plan, *job.request, &job)) continue;
      const std::uint32_t token = r.notifier.prepare();
      if (finished(job) || places_.join_pending(r.index) || !places_.absent(r.index)) {
        r.notifier.cancel();
        continue;
      }
      r.notifier.wait(token);
      continue;
    }
    if (!r.sent.empty() && straggling(r, job)) {
      // A straggler takes no new work: its queue is left to thieves, its
      // answers taken back (or given up at the end); what an answer made
      // ready goes to the queue too, not straight to this tile.
      if (const ActorId next = take_completion(r, job); next != kNone) {
        r.deque.push(next);
        steal_notifier_.notify_one();
      }
      continue;
    }
    ActorId a = find_work();
    if (a == kNone && !r.sent.empty()) {
      // Nothing more to send: take the oldest answer back instead of idling.
      a = take_completion(r, job);
      if (a == kNone) continue;
    }
    if (a == kNone) {
      flush_completed(r, job);
      for (int spin = 0; spin < 64 && a == kNone && !finished(job); ++spin) {
        std::this_thread::yield();
        a = find_work();
      }
    }
    if (a == kNone && speculate_while_idle(r, job)) continue;
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
      if (r.depth > 1) {
        a = dispatch(r, job, a);
      } else {
        r.chaining = true;  // a chain's successors run in the same call (work-first)
        a = run_on_tile(r, job, a);
        r.chaining = false;
      }
      r.stolen = false;
    }
  }
  drain_pipeline(r, job);
  flush_completed(r, job);
}

}  // namespace redflow::runtime
