// The compare actor's vote (section 5.2 of Kühbacher et al.): compare the
// replicas' checksums, confirm a result two agree on, and otherwise re-execute
// the replicas (non-speculative rollback).
#include "runtime/voting.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

// The compare actor (section 5.2): compares the replicas' checksums; with two
// that agree, their data node becomes the actor's output (no copy: the
// output node aliases it) and successors may start; otherwise the replicas
// run again. Tiles whose result differs from the confirmed one lose a vote.
ActorId Voting::vote(Job& job, ActorId v, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const ActorHot& hot_v = plan.hot[v];
  RedundancyCounts& counts = engine_.counts(from);
  int winner = -1;
  unsigned present = 0;
  for (std::uint32_t i = 0; i < hot_v.input_count; ++i) {
    const DataId di = plan.inputs[hot_v.first_input + i];
    if (s.skipped[plan.data[di].producer].load(std::memory_order_acquire)) continue;
    ++present;
    for (std::uint32_t j = i + 1; j < hot_v.input_count && winner < 0; ++j) {
      const DataId dj = plan.inputs[hot_v.first_input + j];
      if (!s.skipped[plan.data[dj].producer].load(std::memory_order_acquire) && s.checksum[di] == s.checksum[dj])
        winner = static_cast<int>(i);
    }
  }
  if (winner < 0 && present < 2) {
    std::vector<unsigned> ran_on;
    for (std::uint32_t i = 0; i < hot_v.input_count; ++i) {
      const DataId di = plan.inputs[hot_v.first_input + i];
      if (!s.skipped[plan.data[di].producer].load(std::memory_order_acquire) && s.producer_tile[di] >= 0)
        ran_on.push_back(static_cast<unsigned>(s.producer_tile[di]));
    }
    engine_.fail(job,
                 "actor '" + std::string(plan.original(v)) + "' has " + std::to_string(present) + " of its " + std::to_string(hot_v.input_count) +
                     " replica(s) left to vote on (" + (ran_on.empty() ? std::string("none ran") : "ran on " + describe_tiles(ran_on)) +
                     ") in attempt " + std::to_string(s.vote_round[v] + 1) + ": too few compute tiles are in service (" + engine_.out_of_service() + ")",
                 Status::Code::kGaveUp);
    return kNone;
  }
  if (winner < 0) {
    run_again(job, v, from);
    return kNone;
  }
  const DataId won = plan.inputs[hot_v.first_input + static_cast<std::uint32_t>(winner)];
  const std::uint64_t confirmed = s.checksum[won];
  for (std::uint32_t i = 0; i < hot_v.input_count; ++i) {
    const DataId di = plan.inputs[hot_v.first_input + i];
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
    engine_.mark(job, "vote", std::string(plan.original(v)) + ": " + std::to_string(present) + " replicas, winner r" + std::to_string(winner + 1),
         kDriverTile);  // voting is the driver's role, wherever the last replica ran
  // The output node now names the winner's bytes; its consumers count on the winner.
  const DataId o = hot_v.output;
  s.alias[o] = won;
  s.checksum[o] = confirmed;
  s.producer_tile[o] = s.producer_tile[won];
  s.remaining[won].fetch_add(plan.data[o].consumer_count, std::memory_order_acq_rel);
  if (plan.data[o].kind == DataKind::kOutput) engine_.copy_voted_home(job, o, won, from);
  // Only now are the replicas' inputs and the losing results consumed.
  for (std::uint32_t i = 0; i < hot_v.input_count; ++i) {
    const DataId di = plan.inputs[hot_v.first_input + i];
    const ActorHot& hot_r = plan.hot[plan.data[di].producer];
    for (std::uint32_t k = 0; k < hot_r.input_count; ++k)
      s.remaining[s.alias[plan.inputs[hot_r.first_input + k]]].fetch_sub(1, std::memory_order_acq_rel);
    s.remaining[di].fetch_sub(1, std::memory_order_acq_rel);
  }
  return engine_.complete(job, v, from);
}

void Voting::run_again(Job& job, ActorId v, Runner* from) {
  const Plan& plan = *job.plan;
  GraphState& s = *job.state;
  const ActorHot& hot_v = plan.hot[v];
  RedundancyCounts& counts = engine_.counts(from);
  if (s.vote_round[v] == 0) {
    std::lock_guard<std::mutex> lock(voted_mutex_);  // failed votes of different actors can race here
    s.voted.push_back(v);
  }
  for (std::uint32_t i = 0; i < hot_v.input_count; ++i) {
    const DataId di = plan.inputs[hot_v.first_input + i];
    if (!s.skipped[plan.data[di].producer].load(std::memory_order_acquire)) s.vote_history[v].emplace_back(s.producer_tile[di], s.checksum[di]);
  }
  engine_.mark(job, "vote-failed", std::string(plan.original(v)), -1);
  if (++s.vote_round[v] >= kMaxVoteRounds) {
    std::vector<unsigned> ran_on;
    for (const auto& [tile, sum] : s.vote_history[v])
      if (tile >= 0) ran_on.push_back(static_cast<unsigned>(tile));
    std::sort(ran_on.begin(), ran_on.end());
    ran_on.erase(std::unique(ran_on.begin(), ran_on.end()), ran_on.end());
    engine_.fail(job,
                 "actor '" + std::string(plan.original(v)) + "': no two of its " + std::to_string(hot_v.input_count) + " replicas agreed in " +
                     std::to_string(kMaxVoteRounds) + " attempts (" + std::to_string(s.vote_history[v].size()) + " results from " +
                     describe_tiles(ran_on) + ")",
                 Status::Code::kGaveUp);
    return;
  }
  // Reset the vote and the replicas' results, then run every replica again.
  s.pending[v].store(hot_v.input_count, std::memory_order_release);
  job.remaining_actors.fetch_add(hot_v.input_count, std::memory_order_acq_rel);
  for (std::uint32_t i = 0; i < hot_v.input_count; ++i) {
    const DataId di = plan.inputs[hot_v.first_input + i];
    const ActorId rep = plan.data[di].producer;
    s.remaining[di].store(1, std::memory_order_release);
    s.round[di].fetch_add(1, std::memory_order_acq_rel);
    s.location[di].store(kNowhere, std::memory_order_release);
    s.replica_tile[rep].store(-1, std::memory_order_release);
    s.skipped[rep].store(0, std::memory_order_release);
  }
  counts.reexecutions += hot_v.input_count;
  for (std::uint32_t i = 0; i < hot_v.input_count; ++i) placement_.place_again(job, plan.data[plan.inputs[hot_v.first_input + i]].producer, from);
}

}  // namespace redflow::runtime
