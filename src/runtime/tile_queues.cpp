// Each tile's two queues: the work-stealing deque its own runner pushes to,
// and the inbox that other threads (the driver, voting, quarantine) hand work
// to, where replicas wait so a thief can check the insertion rule.
#include <mutex>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

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
      std::lock_guard<std::mutex> claim(placement_.claim_lock(pa.vote));
      if (victim.index != taker && !placement_.may_take(job, a, taker)) continue;
      job.state->replica_tile[a].store(static_cast<int>(taker), std::memory_order_release);
    } else if (victim.index != taker && !places_.healthy(taker)) {
      continue;
    }
    victim.inbox.erase(victim.inbox.begin() + static_cast<std::ptrdiff_t>(i));
    victim.inbox_size.fetch_sub(1, std::memory_order_relaxed);
    return a;
  }
  return kNone;
}

}  // namespace redflow::runtime
