// Redundancy (section 5 of Kühbacher et al.): where *-diff replicas run
// (section 5.1's insertion rule, quarantined tiles), the compare actor's vote
// on checksums, and re-execution after a failed vote (section 5.2).
#include <algorithm>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

bool Engine::sibling_on(const Job& job, ActorId a, unsigned tile) const {
  const Plan& plan = *job.plan;
  const PlanActor& pa = plan.actors[a];
  if (pa.replica == 0) return false;
  const PlanActor& v = plan.actors[pa.vote];
  for (std::uint32_t i = 0; i < v.input_count; ++i) {
    const ActorId sib = plan.data[plan.inputs[v.first_input + i]].producer;
    if (sib != a && job.state->replica_tile[sib].load(std::memory_order_acquire) == static_cast<int>(tile)) return true;
  }
  return false;
}

bool Engine::may_take(const Job& job, ActorId a, unsigned tile) const {
  if (!healthy(tile)) return false;
  return job.plan->actors[a].replica == 0 || !sibling_on(job, a, tile);
}

int Engine::pick_healthy_tile(std::uint64_t& rng, int except) {
  const unsigned n = tiles();
  const unsigned start = static_cast<unsigned>(next_random(rng) % n);
  for (unsigned k = 0; k < n; ++k) {
    const unsigned t = (start + k) % n;
    if (healthy(t) && static_cast<int>(t) != except) return static_cast<int>(t);
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
  const unsigned n = tiles();
  int best = -1;
  std::uint64_t best_key = ~std::uint64_t{0};
  unsigned ties = 0;
  for (unsigned t = 0; t < n; ++t) {
    if (!may_take(job, a, t)) continue;
    bool computed_input = false;
    for (std::uint32_t i = 0; i < pa.input_count && !computed_input; ++i)
      computed_input = s.producer_tile[s.alias[plan.inputs[pa.first_input + i]]] == static_cast<int>(t);
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
    std::uint64_t& rng = from != nullptr ? from->rng : driver_rng_;
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
  mark(job, "replica-skipped", std::string(job.plan->actors[c].name), -1);
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
    fail(job, "actor '" + std::string(job.plan->actors[a].name) + "' has no compute tile in service to run on");
    return;
  }
  push_inbox(*runners_[static_cast<unsigned>(t)], a);
}

void Engine::lose_vote(Job& job, int tile) {
  if (tile < 0 || static_cast<unsigned>(tile) >= tiles()) return;
  const std::uint32_t lost = job.lost_votes[tile].fetch_add(1, std::memory_order_acq_rel) + 1;
  if (options_.quarantine_after == 0 || lost < options_.quarantine_after || !healthy(static_cast<unsigned>(tile))) return;
  // Never below the tiles the configuration needs; one quarantine at a time.
  static std::mutex quarantine_mutex;
  std::lock_guard<std::mutex> lock(quarantine_mutex);
  unsigned in_service = 0;
  for (unsigned t = 0; t < tiles(); ++t) in_service += healthy(t);
  if (in_service <= job.min_healthy) return;
  quarantined_[tile].store(true, std::memory_order_release);
  mark(job, "quarantine", "tile " + std::to_string(tile) + " lost " + std::to_string(lost) + " votes", tile);
  // Its queue moves to the others: wake it so it hands its work over.
  runners_[static_cast<unsigned>(tile)]->notifier.notify_all();
  steal_notifier_.notify_all();
}

void Engine::mark(Job& job, std::string what, std::string detail, int tile) {
  if (!job.tracing) return;
  const double t = job.now();
  std::lock_guard<std::mutex> lock(job.mark_mutex);
  job.marks.push_back(TracedMark{std::move(what), std::move(detail), tile, t});
}

// The compare actor (section 5.2): compares the replicas' checksums; with two
// that agree, their data node becomes the actor's output (no copy: the
// output node aliases it) and successors may start; otherwise the replicas
// run again. Tiles whose result differs from the confirmed one lose a vote.
ActorId Engine::vote(Job& job, ActorId v, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pv = plan.actors[v];
  RedundancyCounts& counts = from != nullptr ? from->counts : driver_trace_->counts;
  int winner = -1;
  unsigned present = 0;
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    if (s.skipped[plan.data[di].producer].load(std::memory_order_acquire)) continue;
    ++present;
    for (std::uint32_t j = i + 1; j < pv.input_count && winner < 0; ++j) {
      const DataId dj = plan.inputs[pv.first_input + j];
      if (!s.skipped[plan.data[dj].producer].load(std::memory_order_acquire) && s.checksum[di] == s.checksum[dj])
        winner = static_cast<int>(i);
    }
  }
  if (winner < 0 && present < 2) {
    fail(job, "actor '" + std::string(pv.original) + "' has " + std::to_string(present) +
                  " replica(s) left to vote on: too few compute tiles are in service (quarantined: " +
                  std::to_string(quarantined_tiles().size()) + ")");
    return kNone;
  }
  if (winner < 0) {
    redispatch_replicas(job, v, from);
    return kNone;
  }
  const DataId won = plan.inputs[pv.first_input + static_cast<std::uint32_t>(winner)];
  const std::uint64_t confirmed = s.checksum[won];
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    if (s.skipped[plan.data[di].producer].load(std::memory_order_acquire) || s.checksum[di] == confirmed) continue;
    ++counts.detected;
    lose_vote(job, s.producer_tile[di]);
  }
  for (const auto& [tile, sum] : s.vote_history[v]) {
    if (sum == confirmed) continue;
    ++counts.detected;
    lose_vote(job, tile);
  }
  s.vote_history[v].clear();
  if (job.tracing)
    mark(job, "vote", std::string(pv.original) + ": " + std::to_string(present) + " replicas, winner r" + std::to_string(winner + 1),
         kDriverTile);  // voting is the driver's role, wherever the last replica ran
  // The output node now names the winner's bytes; its consumers count on the winner.
  const DataId o = pv.output;
  s.alias[o] = won;
  s.checksum[o] = confirmed;
  s.producer_tile[o] = s.producer_tile[won];
  s.remaining[won].fetch_add(plan.data[o].consumer_count, std::memory_order_acq_rel);
  if (plan.data[o].kind == DataKind::kOutput) copy_voted_home(job, o, won, from != nullptr ? from->stats : driver_stats_);
  // Only now are the replicas' inputs and the losing results consumed.
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    const PlanActor& pr = plan.actors[plan.data[di].producer];
    for (std::uint32_t k = 0; k < pr.input_count; ++k)
      s.remaining[s.alias[plan.inputs[pr.first_input + k]]].fetch_sub(1, std::memory_order_acq_rel);
    s.remaining[di].fetch_sub(1, std::memory_order_acq_rel);
  }
  return complete(job, v, from);
}

void Engine::redispatch_replicas(Job& job, ActorId v, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const PlanActor& pv = plan.actors[v];
  RedundancyCounts& counts = from != nullptr ? from->counts : driver_trace_->counts;
  if (s.vote_round[v] == 0) {
    std::lock_guard<std::mutex> lock(voted_mutex_);  // failed votes of different actors can race here
    s.voted.push_back(v);
  }
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    if (!s.skipped[plan.data[di].producer].load(std::memory_order_acquire)) s.vote_history[v].emplace_back(s.producer_tile[di], s.checksum[di]);
  }
  mark(job, "vote-failed", std::string(pv.original), -1);
  if (++s.vote_round[v] >= kMaxVoteRounds) {
    fail(job, "actor '" + std::string(pv.original) + "': no two of its " + std::to_string(pv.input_count) + " replicas agreed in " +
                  std::to_string(kMaxVoteRounds) + " attempts");
    return;
  }
  // Reset the vote and the replicas' results, then run every replica again.
  s.pending[v].store(pv.input_count, std::memory_order_release);
  job.remaining_actors.fetch_add(pv.input_count, std::memory_order_acq_rel);
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const DataId di = plan.inputs[pv.first_input + i];
    const ActorId rep = plan.data[di].producer;
    s.remaining[di].store(1, std::memory_order_release);
    s.round[di].fetch_add(1, std::memory_order_acq_rel);
    s.location[di].store(kNowhere, std::memory_order_release);
    s.replica_tile[rep].store(-1, std::memory_order_release);
    s.skipped[rep].store(0, std::memory_order_release);
  }
  counts.reexecutions += pv.input_count;
  std::uint64_t& rng = from != nullptr ? from->rng : driver_rng_;
  for (std::uint32_t i = 0; i < pv.input_count; ++i) {
    const ActorId rep = plan.data[plan.inputs[pv.first_input + i]].producer;
    int t = -1;
    {
      std::lock_guard<std::mutex> claim(placement_lock(v));
      t = pick_replica_tile(job, rep, rng, true);
      if (t >= 0) s.replica_tile[rep].store(t, std::memory_order_release);
    }
    if (t < 0) {
      // Completing a skipped replica may run the vote again (on the others): its result is not ours to run.
      const ActorId next = skip_replica(job, rep, from);
      if (next != kNone) push_inbox(*runners_[static_cast<unsigned>(std::max(0, pick_healthy_tile(rng, -1)))], next);
      continue;
    }
    push_inbox(*runners_[static_cast<unsigned>(t)], rep);
  }
}

}  // namespace redflow::runtime
