// Where *-diff replicas run (section 5.1 of Kühbacher et al.): the insertion
// rule (never two replicas of one actor on one tile), picking a tile for a
// replica, and forwarding work away from a tile out of service.
#include "runtime/replica_placement.hpp"

#include <algorithm>
#include <mutex>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

bool ReplicaPlacement::sibling_on(const Job& job, ActorId a, unsigned tile) const {
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

bool ReplicaPlacement::may_take(const Job& job, ActorId a, unsigned tile) const {
  if (!places_.healthy(tile)) return false;
  return job.plan->actors[a].replica == 0 || !sibling_on(job, a, tile);
}

int ReplicaPlacement::pick_healthy_tile(std::uint64_t& rng, int except) const {
  const unsigned n = engine_.tiles();
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
int ReplicaPlacement::pick_replica_tile(Job& job, ActorId a, std::uint64_t& rng, bool avoid_failed) const {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pa = plan.actors[a];
  const ActorHot& hot = plan.hot[a];
  const unsigned n = engine_.tiles();
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
    const std::uint64_t queue = engine_.queued(t);
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

ActorId ReplicaPlacement::place(Job& job, ActorId c, Runner* from, bool may_run_here) {
  GraphState& s = *job.state;
  const ActorId v = job.plan->actors[c].vote;
  int t = -1;
  {
    std::lock_guard<std::mutex> claim(claim_lock(v));
    if (from != nullptr && may_run_here && may_take(job, c, from->index)) {
      s.replica_tile[c].store(static_cast<int>(from->index), std::memory_order_release);
      return c;
    }
    t = pick_replica_tile(job, c, engine_.rng(from), s.vote_round[v] > 0);
    if (t >= 0) s.replica_tile[c].store(t, std::memory_order_release);
  }
  if (t < 0) return skip(job, c, from);
  engine_.push_inbox(static_cast<unsigned>(t), c);
  return kNone;
}

void ReplicaPlacement::place_again(Job& job, ActorId c, Runner* from) {
  GraphState& s = *job.state;
  std::uint64_t& rng = engine_.rng(from);
  int t = -1;
  {
    std::lock_guard<std::mutex> claim(claim_lock(job.plan->actors[c].vote));
    s.replica_tile[c].store(-1, std::memory_order_release);
    t = pick_replica_tile(job, c, rng, true);
    if (t >= 0) s.replica_tile[c].store(t, std::memory_order_release);
  }
  if (t >= 0) return engine_.push_inbox(static_cast<unsigned>(t), c);
  // Completing a skipped replica may run the vote again (on the others): its
  // result is not ours to run. With no tile in service, tile 0 takes it and
  // hands it on, which fails the execution with the reason.
  if (const ActorId next = skip(job, c, from); next != kNone)
    engine_.push_inbox(static_cast<unsigned>(std::max(0, pick_healthy_tile(rng, -1))), next);
}

// No tile in service may take this replica (fewer healthy tiles than
// replicas after a quarantine): its actor is voted on the other replicas.
ActorId ReplicaPlacement::skip(Job& job, ActorId c, Runner* from) {
  if (job.require_protection) {
    engine_.fail(job,
                 "actor '" + std::string(job.plan->original(c)) + "' cannot have its replicas on distinct tiles: too few compute tiles are in service (" +
                     engine_.out_of_service() + "), and protection is required (--require-protection)",
                 Status::Code::kGaveUp);
    return kNone;
  }
  job.skipped_replicas.fetch_add(1, std::memory_order_relaxed);
  job.state->replica_tile[c].store(-1, std::memory_order_release);
  job.state->skipped[c].store(1, std::memory_order_release);
  engine_.mark(job, "replica-skipped", std::string(job.plan->name(c)), -1);
  return engine_.complete(job, c, from);
}

void ReplicaPlacement::hand_out(ActorId next, std::uint64_t& rng) {
  if (next == kNone) return;
  if (const int h = pick_healthy_tile(rng, -1); h >= 0) engine_.push_inbox(static_cast<unsigned>(h), next);
}

void ReplicaPlacement::forward(Job& job, ActorId a, Runner& from) {
  if (job.plan->actors[a].replica != 0) {
    GraphState& s = *job.state;
    const ActorId v = job.plan->actors[a].vote;
    int t = -1;
    {
      std::lock_guard<std::mutex> claim(claim_lock(v));
      s.replica_tile[a].store(-1, std::memory_order_release);
      t = pick_replica_tile(job, a, from.rng, s.vote_round[v] > 0);
      if (t >= 0) s.replica_tile[a].store(t, std::memory_order_release);
    }
    if (t >= 0) return engine_.push_inbox(static_cast<unsigned>(t), a);
    return hand_out(skip(job, a, &from), from.rng);
  }
  const int t = pick_healthy_tile(from.rng, static_cast<int>(from.index));
  if (t < 0) {
    engine_.fail(job,
                 "actor '" + std::string(job.plan->name(a)) + "' has no compute tile in service to run on (it was on tile " +
                     std::to_string(from.index) + "; " + engine_.out_of_service() + ")",
                 Status::Code::kGaveUp);
    return;
  }
  engine_.push_inbox(static_cast<unsigned>(t), a);
}

}  // namespace redflow::runtime
