// The HEFT scheduler's tile loop (section 4.3): walk the tile's static order,
// serving handed-over work (re-executed replicas, a quarantined tile's queue)
// while the next actor waits for its inputs.
#include <thread>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {


// Walks the tile's HEFT order. While waiting for the next actor's inputs it
// runs what was handed to it (re-executed replicas, work of a quarantined
// tile), and after its order it keeps doing so until the execution ends.
void Engine::heft_loop(Runner& r, Job& job) {
  const auto& order = job.plan->heft.tile_order;
  // A tile behind a link keeps several actors on the wire (pipeline.cpp).
  auto run = [&](ActorId x) {
    if (r.depth > 1) {
      dispatch(r, job, x);
    } else {
      run_on_tile(r, job, x);
    }
  };
  auto serve_inbox = [&]() {
    const ActorId x = take_inbox(r, job, r.index);
    if (x == kNone) return false;
    run(x);
    return true;
  };
  if (r.index < order.size()) {
    for (ActorId a : order[r.index]) {
      auto ready = [&] { return job.state->pending[a].load(std::memory_order_acquire) == 0 || job.aborted.load(); };
      // An answer still on the wire may be what `a` waits for.
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
        flush_completed(r, job);
        const std::uint32_t token = r.notifier.prepare();
        if (ready() || r.inbox_size.load(std::memory_order_acquire) != 0) {
          r.notifier.cancel();
          continue;
        }
        r.notifier.wait(token);
      }
      if (job.aborted.load()) break;
      run(a);
    }
  }
  drain_pipeline(r, job);
  while (!finished(job)) {
    if (serve_inbox()) continue;
    if (!r.sent.empty()) {
      take_completion(r, job);
      continue;
    }
    flush_completed(r, job);
    const std::uint32_t token = r.notifier.prepare();
    if (finished(job) || r.inbox_size.load(std::memory_order_acquire) != 0) {
      r.notifier.cancel();
      continue;
    }
    r.notifier.wait(token);
  }
  drain_pipeline(r, job);
  flush_completed(r, job);
}

}  // namespace redflow::runtime
