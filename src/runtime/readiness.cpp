// Readiness (section 4.2): when an actor completes, its consumers' pending
// counts drop; those that reach zero run next on this tile (work-first), go
// to its queue, to the driver, to a replica's tile, or to the compare
// actor's vote.
#include <mutex>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

ActorId Engine::complete(Job& job, ActorId a, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanData& out = plan.data[plan.hot[a].output];
  ActorId next = kNone;
  bool pushed_tile = false, pushed_driver = false;
  // Work another path made ready (a vote's consumers): run it next or queue it here.
  auto adopt = [&](ActorId x) {
    if (x == kNone) return;
    if (next == kNone) {
      next = x;
    } else if (plan.hot[x].flags & ActorHot::kReplica) {
      push_inbox(*from, x);  // thieves check replicas in inboxes, never in deques
    } else {
      from->deque.push(x);
      pushed_tile = true;
    }
  };
  for (std::uint32_t i = 0; i < out.consumer_count; ++i) {
    const ActorId c = plan.consumers[out.first_consumer + i];
    // Only the hot fields: a chain's successor costs one cache line (ActorHot).
    const ActorHot& pc = plan.hot[c];
    // Fast path: one input edge, so this is its only producer; a release store
    // (the HEFT loops read it) instead of a read-modify-write.
    if (job.plain && pc.initial_pending == 1) {
      s.pending[c].store(0, std::memory_order_release);
    } else if (s.pending[c].fetch_sub(1, std::memory_order_acq_rel) != 1) {
      continue;
    }
    if (pc.flags & ActorHot::kIsVote) {
      // Section 5.2: the compare actor runs as soon as its replicas are done.
      adopt(voting_.vote(job, c, from));
      continue;
    }
    if (job.scheduler == Scheduler::kHeft) {
      int owner = pc.heft_tile;
      if (job.joins.claiming()) {
        // A join may have made a new schedule: its owner of `c`. The fence
        // orders the pending count above before the schedule's load, so a
        // walker that took the new schedule after this load sees `c` ready.
        thread_fence(std::memory_order_seq_cst);
        owner = scheduled_tile(job, c);
      }
      if (owner == kDriverTile) {
        pushed_driver = true;
      } else if (from == nullptr || static_cast<int>(from->index) != owner) {
        runners_[static_cast<unsigned>(owner)]->notifier.notify_all();
      }
      continue;
    }
    if (pc.flags & ActorHot::kOnDriver) {
      std::lock_guard<std::mutex> lock(driver_.mutex);
      driver_.queue.push_back(c);
      pushed_driver = true;
    } else if (pc.flags & ActorHot::kReplica) {
      adopt(placement_.place(job, c, from, next == kNone));
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
      const int t = placement_.pick_healthy_tile(driver_.rng, -1);
      if (t < 0) {
        fail(job, "actor '" + std::string(plan.name(c)) + "' is ready but no compute tile is in service (" + out_of_service() + ")",
             Status::Code::kGaveUp);
        break;
      }
      push_inbox(*runners_[static_cast<unsigned>(t)], c);
    }
  }
  if (pushed_tile) steal_notifier_.notify_one();
  if (pushed_driver) driver_.notifier.notify_one();
  if (from != nullptr) {
    ++from->unflushed;
  } else if (job.remaining_actors.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    wake_all(job);
  }
  return next;
}

}  // namespace redflow::runtime
