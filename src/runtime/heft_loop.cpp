// The HEFT scheduler's tile loop (section 4.3): walk the tile's static order,
// serving handed-over work (re-executed replicas, a quarantined tile's queue)
// while the next actor waits for its inputs. A worker joining mid-run makes
// a new schedule (joins.cpp): the loop then walks its new order. An idle
// tile takes over the actors of a tile that fell behind (adaptive_heft.cpp).
#include <thread>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

// Walks the tile's HEFT order. While waiting for the next actor's inputs it
// runs what was handed to it (re-executed replicas, work of a quarantined
// tile), and after its order it keeps doing so until the execution ends.
void Engine::heft_loop(Runner& r, Job& job) {
  const bool adapts = adapting(job);
  // A tile behind a link keeps several actors on the wire (pipeline.cpp).
  auto run = [&](ActorId x) {
    if (r.depth > 1) {
      dispatch(r, job, x);
    } else if (adapts) {
      note_running(r, job, x, planned_start(job, x));
      run_on_tile(r, job, x);
      note_done(r, job);
    } else {
      run_on_tile(r, job, x);
    }
  };
  // Sleeps until woken; adapting, for at most the time after which a late
  // tile shows, then looks again.
  auto sleep = [&](std::uint32_t token) {
    if (adapts) {
      r.notifier.wait_for(token, next_look(job));
    } else {
      r.notifier.wait(token);
    }
  };
  auto serve_inbox = [&]() {
    const ActorId x = take_inbox(r, job, r.index);
    if (x == kNone) return false;
    run(x);
    return true;
  };
  auto wait_for = [&](auto& ready) {
    // An answer still on the wire may be what the next actor waits for.
    while (!ready() && !r.sent.empty()) take_completion(r, job);
    if (!ready()) flush_completed(r, job);
    for (int spin = 0; spin < 256 && !ready(); ++spin) {
      if (serve_inbox()) continue;
      std::this_thread::yield();
    }
    while (!ready()) {
      if (serve_inbox()) continue;
      if (!r.sent.empty()) {  // handed-over work sent meanwhile: its answer, before any sleep
        take_completion(r, job);
        continue;
      }
      if (speculate_while_idle(r, job)) continue;
      if (take_late(r, job)) continue;
      flush_completed(r, job);
      const std::uint32_t token = r.notifier.prepare();
      if (ready() || r.inbox_size.load(std::memory_order_acquire) != 0) {
        r.notifier.cancel();
        continue;
      }
      sleep(token);
    }
  };
  auto wait = [&](auto& ready) {
    // Most often the next actor is ready already (a chain's successor on
    // this tile): one look, not one per waiting stage below. What runs
    // while it waits (handed-over work, speculative copies) takes no chain
    // along: the walk's position is not theirs.
    if (!ready()) {
      const bool chaining = r.chaining;
      r.chaining = false;
      wait_for(ready);
      r.chaining = chaining;
    }
    // A straggler takes no new actor while its oldest is overdue: idle tiles
    // may take this one over (speculation.cpp), and the walk then skips it.
    while (!r.sent.empty() && straggling(r, job)) (void)take_completion(r, job);
  };
  std::uint32_t walked = ~std::uint32_t{0};  // the schedule whose order this tile walked
  for (;;) {
    if (places_.join_pending(r.index)) admit_joined(r.index, *job.plan, *job.request, &job);
    const std::uint32_t epoch = job.joins.epoch();
    if (epoch != walked && !job.aborted.load()) {
      walked = epoch;
      const Schedule& s = orders(job);
      if (r.index < s.tile_order.size()) {
        // Chains run in place only on the plain walk (adapting publishes where
        // the walk is per actor) of the plan's own schedule, where it has them.
        const bool chains = !adapts && r.depth <= 1 && &s == &job.plan->heft && r.index < job.plan->heft_chains.size() &&
                            job.plan->heft_chains[r.index] != 0;
        walk_order(job, s.tile_order[r.index], epoch, wait, run, adapts ? &r.walk_at : nullptr, chains ? &r : nullptr);
        if (adapts) r.walk_at.store(static_cast<std::uint32_t>(s.tile_order[r.index].size()), std::memory_order_relaxed);
      }
      drain_pipeline(r, job);
      continue;
    }
    if (finished(job)) break;
    if (serve_inbox()) continue;
    if (!r.sent.empty()) {
      take_completion(r, job);
      continue;
    }
    if (speculate_while_idle(r, job)) continue;
    if (take_late(r, job)) continue;
    flush_completed(r, job);
    const std::uint32_t token = r.notifier.prepare();
    if (finished(job) || r.inbox_size.load(std::memory_order_acquire) != 0 || job.joins.epoch() != walked ||
        places_.join_pending(r.index)) {
      r.notifier.cancel();
      continue;
    }
    sleep(token);
  }
  drain_pipeline(r, job);
  flush_completed(r, job);
}

}  // namespace redflow::runtime
