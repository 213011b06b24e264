// Where *-diff replicas run (section 5.1 of Kühbacher et al.): the insertion
// rule (never two replicas of one actor on one tile), picking a tile for a
// replica and forwarding work away from a quarantined tile.
#include <algorithm>
#include <mutex>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

bool Engine::sibling_on(const Job& job, ActorId a, unsigned tile) const {
  const Plan& plan = *job.plan;
  const PlanActor& pa = plan.actors[a];
  if (pa.replica == 0) return false;
  const ActorHot& v_hot = plan.hot[pa.vote];
  for (std::uint32_t i = 0; i < v_hot.input_count; ++i) {
    const ActorId sib = plan.data[plan.inputs[v_hot.first_input + i]].producer;
    if (sib != a && job.state->replica_tile[sib].load(std::memory_order_acquire) == static_cast<int>(tile)) return true;
  }
  return false;
}

bool Engine::may_take(const Job& job, ActorId a, unsigned tile) const {
  if (!places_.healthy(tile)) return false;
  return job.plan->actors[a].replica == 0 || !sibling_on(job, a, tile);
}

int Engine::pick_healthy_tile(std::uint64_t& rng, int except) {
  const unsigned n = tiles();
  const unsigned start = static_cast<unsigned>(next_random(rng) % n);
  for (unsigned k = 0; k < n; ++k) {
    const unsigned t = (start + k) % n;
    if (places_.healthy(t) && static_cast<int>(t) != except) return static_cast<int>(t);
  }
  return -1;
}

// Section 5.1's insertion rule for the second and third replica: among the
// tiles that may take it, those that computed one of its inputs, then the
// shortest queue, random among equals. After a failed vote, tiles that took
// part in a failed round come last, so a permanently faulty tile is left out.
int Engine::pick_replica_tile(Job& job, ActorId a, std::uint64_t& rng, bool avoid_failed) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  const ActorHot& hot = plan.hot[a];
  const unsigned n = tiles();
  int best = -1;
  std::uint64_t best_key = ~std::uint64_t{0};
  unsigned ties = 0;
  for (unsigned t = 0; t < n; ++t) {
    if (!may_take(job, a, t)) continue;
    bool computed_input = false;
    for (std::uint32_t i = 0; i < hot.input_count && !computed_input; ++i)
      computed_input = s.producer_tile[s.alias[plan.inputs[hot.first_input + i]]] == static_cast<int>(t);
    bool failed_before = false;
    if (avoid_failed)
      for (const auto& [tile, sum] : s.vote_history[pa.vote]) failed_before = failed_before || tile == static_cast<int>(t);
    const Runner& v = *runners_[t];
    const std::uint64_t queue = v.deque.size_estimate() + v.inbox_size.load(std::memory_order_relaxed);
    const std::uint64_t key = (std::uint64_t{failed_before} << 62) | (std::uint64_t{!computed_input} << 61) | std::min<std::uint64_t>(queue, 1ULL << 60);
    if (key < best_key) {
      best = static_cast<int>(t);
      best_key = key;
      ties = 1;
    } else if (key == best_key && next_random(rng) % ++ties == 0) {
      best = static_cast<int>(t);  // reservoir sampling: uniform among equals
    }
  }
  return best;
}

// A *-diff replica became ready. Runs it here when allowed (work-first),
// otherwise hands it to a tile chosen by pick_replica_tile; returns the
// actor this tile should run next, or kNone.
ActorId Engine::place_replica(Job& job, ActorId c, Runner* from, bool may_run_here) {
  GraphState& s = *job.state;
  const ActorId v = job.plan->actors[c].vote;
  int t = -1;
  {
    std::lock_guard<std::mutex> claim(placement_lock(v));
    if (from != nullptr && may_run_here && may_take(job, c, from->index)) {
      s.replica_tile[c].store(static_cast<int>(from->index), std::memory_order_release);
      return c;
    }
    std::uint64_t& rng = from != nullptr ? from->rng : driver_.rng;
    t = pick_replica_tile(job, c, rng, s.vote_round[v] > 0);
    if (t >= 0) s.replica_tile[c].store(t, std::memory_order_release);
  }
  if (t < 0) return skip_replica(job, c, from);
  push_inbox(*runners_[static_cast<unsigned>(t)], c);
  return kNone;
}

// No tile in service may take this replica (fewer healthy tiles than
// replicas after a quarantine): its actor is voted on the other replicas.
ActorId Engine::skip_replica(Job& job, ActorId c, Runner* from) {
  job.state->replica_tile[c].store(-1, std::memory_order_release);
  job.state->skipped[c].store(1, std::memory_order_release);
  mark(job, "replica-skipped", std::string(job.plan->name(c)), -1);
  return complete(job, c, from);
}

// Moves an actor away from a quarantined tile.
void Engine::forward(Job& job, ActorId a, Runner& from) {
  if (job.plan->actors[a].replica != 0) {
    GraphState& s = *job.state;
    const ActorId v = job.plan->actors[a].vote;
    int t = -1;
    {
      std::lock_guard<std::mutex> claim(placement_lock(v));
      s.replica_tile[a].store(-1, std::memory_order_release);
      t = pick_replica_tile(job, a, from.rng, s.vote_round[v] > 0);
      if (t >= 0) s.replica_tile[a].store(t, std::memory_order_release);
    }
    if (t >= 0) {
      push_inbox(*runners_[static_cast<unsigned>(t)], a);
      return;
    }
    const ActorId next = skip_replica(job, a, &from);
    if (const int h = pick_healthy_tile(from.rng, -1); next != kNone && h >= 0) push_inbox(*runners_[static_cast<unsigned>(h)], next);
    return;
  }
  const int t = pick_healthy_tile(from.rng, static_cast<int>(from.index));
  if (t < 0) {
    fail(job,
         "actor '" + std::string(job.plan->name(a)) + "' has no compute tile in service to run on (it was on tile " + std::to_string(from.index) +
             "; " + out_of_service() + ")",
         Status::Code::kGaveUp);
    return;
  }
  push_inbox(*runners_[static_cast<unsigned>(t)], a);
}

}  // namespace redflow::runtime
