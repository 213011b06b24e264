// Stats and trace of one execution: per-thread counters and trace buffers
// merged after the run, and the marks (failed votes, quarantines) recorded
// during it.
#include <algorithm>
#include <mutex>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

void Engine::report(Job& job, ExecutionStats& stats) {
  const Plan& plan = *job.plan;
  const ExecutionRequest& request = *job.request;
  stats.makespan_s = seconds_since(job.t0);
  stats.scheduler = to_string(job.scheduler);
  stats.redundancy = request.redundancy;
  stats.tiles.clear();
  stats.actors_executed = stats.transfers = stats.transfer_bytes = stats.steals = stats.displacements = 0;
  stats.injected_faults = stats.detected_faults = stats.reexecutions = stats.corrupted_transfers = 0;
  stats.driver = driver_.stats;
  stats.actors_executed += driver_.stats.actors;
  stats.transfers += driver_.stats.transfers_in;
  auto add_counts = [&](const RedundancyCounts& c) {
    stats.injected_faults += c.injected;
    stats.detected_faults += c.detected;
    stats.reexecutions += c.reexecutions;
  };
  add_counts(driver_.counts);
  const unsigned view = tiles_in_view();  // not the places kept for joins that no worker filled
  for (unsigned t = 0; t < view; ++t) {
    Runner* r = runners_[t].get();
    r->stats.lost_votes = places_.lost_votes(r->index);
    r->stats.joined = t >= options_.tiles;
    r->stats.quarantined = !places_.healthy(r->index);
    r->stats.on_probation = places_.on_probation(r->index) && !places_.lost(r->index);
    r->stats.straggled = r->straggled.load(std::memory_order_relaxed);
    stats.tiles.push_back(r->stats);
    stats.actors_executed += r->stats.actors;
    stats.transfers += r->stats.transfers_in + r->stats.transfers_out;
    stats.steals += r->stats.steals;
    stats.displacements += r->stats.displacements;
    add_counts(r->counts);
  }
  stats.quarantined_tiles = quarantined_tiles();
  stats.probation_tiles = places_.probation_tiles(tiles());
  stats.reinstated_tiles = job.reinstated;
  stats.probation_tests = job.probation_tests;
  stats.skipped_replicas = job.skipped_replicas.load(std::memory_order_relaxed);
  stats.lost_tiles = job.losses.lost_tiles();
  stats.recomputed_actors = job.losses.recomputed();
  stats.joined_tiles = job.joins.joins();
  stats.replans = job.joins.replans();
  stats.speculative_copies = job.speculation.copies();
  stats.speculative_wins = job.speculation.wins();
  stats.abandoned = job.speculation.abandoned();
  stats.taken_over = job.speculation.taken_over();
  std::vector<std::string> hosts;  // only with a trace: a warm execute_into() allocates nothing
  report_remote(job, stats, request.trace ? &hosts : nullptr);
  stats.transfer_bytes = memory_.take_transfer_bytes();
  for (auto& r : runners_) stats.transfer_bytes += r->transfer_bytes;

  if (ExecutionTrace* trace = request.trace) {
    *trace = ExecutionTrace{};
    trace->tiles = view;
    trace->cores_per_tile = options_.cores_per_tile;
    trace->slots = options_.slots;
    trace->scheduler = stats.scheduler;
    trace->redundancy = request.redundancy;
    trace->makespan_s = stats.makespan_s;
    const Graph& g = *plan.graph;
    auto merge = [&](const TraceBuffer& b, int tile) {
      for (const RawActor& x : b.actors)
        trace->actors.push_back(TracedActor{x.actor, g.actor(x.actor).name, std::string(plan.original(x.actor)), x.tile,
                                            x.replica, x.attempt, x.start, x.end, x.stolen, x.faulty, x.alike_flips});
      for (const RawTransfer& x : b.transfers)
        trace->transfers.push_back(TracedTransfer{g.data(x.data).name, x.from, x.to, x.bytes, x.start, x.end});
      for (const RawSlots& x : b.slots) trace->slot_use.push_back(TracedSlots{tile, x.time, x.used});
    };
    merge(driver_.trace, kDriverTile);
    for (unsigned t = 0; t < view; ++t) merge(runners_[t]->trace, static_cast<int>(t));
    auto by_start = [](const auto& a, const auto& b) { return a.start_s < b.start_s; };
    std::stable_sort(trace->actors.begin(), trace->actors.end(), by_start);
    std::stable_sort(trace->transfers.begin(), trace->transfers.end(), by_start);
    std::stable_sort(trace->slot_use.begin(), trace->slot_use.end(), [](const auto& a, const auto& b) { return a.time_s < b.time_s; });
    trace->marks = std::move(job.marks);
    trace->tile_hosts = std::move(hosts);
  }
}

void Engine::mark(Job& job, std::string what, std::string detail, int tile) {
  const auto& on_mark = options_.on_mark;
  if (!job.tracing && !on_mark) return;
  TracedMark m{std::move(what), std::move(detail), tile, job.now()};
  if (on_mark) on_mark(m);
  if (!job.tracing) return;
  std::lock_guard<std::mutex> lock(job.mark_mutex);
  job.marks.push_back(std::move(m));
}

}  // namespace redflow::runtime
