// report(...) for each model and to_json (redflow/report.hpp): each model's
// own result mapped onto the one RunReport shape.
#include <nlohmann/json.hpp>

#include <string>

#include "redflow/report.hpp"

namespace redflow {

namespace {

// What ran: the fields every model's report starts with.
RunReport what_ran(const char* model, const std::string& name, const char* unit, std::uint64_t units, double seconds) {
  RunReport r;
  r.model = model;
  r.name = name;
  r.unit = unit;
  r.units = units;
  r.seconds = seconds;
  return r;
}

}  // namespace

RunReport report(const ExecutionStats& s, const std::string& name) {
  RunReport r = what_ran("graph", name, "actor executions", s.actors_executed, s.makespan_s);
  if (s.driver.actors > 0) r.places.push_back({.name = "driver", .units = s.driver.actors});
  for (std::size_t t = 0; t < s.tiles.size(); ++t) {
    const TileStats& tile = s.tiles[t];
    r.places.push_back({.name = tile.worker.empty() ? "tile " + std::to_string(t) : tile.worker,
                        .host = tile.host,
                        .units = tile.actors,
                        .bytes_in = tile.bytes_sent,
                        .bytes_out = tile.bytes_received,
                        .bytes_peers = tile.peer_bytes_in,
                        .lost = tile.lost});
  }
  r.failed.injected_faults = s.injected_faults;
  r.failed.detected_faults = s.detected_faults;
  r.failed.workers_lost = s.lost_tiles;
  r.failed.corrupted_transfers = s.corrupted_transfers;
  r.recovered.reexecutions = s.reexecutions;
  r.recovered.recomputed = s.recomputed_actors;
  r.recovered.speculative_copies = s.speculative_copies;
  r.recovered.quarantined = s.quarantined_tiles.size();
  return r;
}

RunReport report(const spits::Report& job) {
  RunReport r = what_ran("spits", job.job, "tasks committed", job.committed, job.seconds);
  for (const auto& tm : job.task_managers) {
    r.places.push_back({.name = tm.name, .host = tm.host, .units = tm.committed, .lost = tm.lost > 0});
    r.failed.workers_lost += tm.lost;
    r.recovered.late_results += tm.late;
  }
  r.failed.tasks_poisoned = job.poisoned.size();
  r.failed.task_failures = job.strikes;
  r.recovered.resubmissions = job.resubmissions;
  r.recovered.duplicates = job.duplicates;
  return r;
}

RunReport report(const stream::RunResult& run, const std::string& name) {
  RunReport r = what_ran("stream", name, "firings", 0, run.seconds);  // units: summed below
  for (const auto& node : run.nodes)
    r.places.push_back(
        {.name = node.worker, .host = node.host, .bytes_in = node.bytes_in, .bytes_out = node.bytes_out, .bytes_peers = node.bytes_to_nodes});
  for (const auto& op : run.operators) {
    r.units += op.firings;
    if (op.node >= 0 && static_cast<std::size_t>(op.node) < r.places.size()) r.places[op.node].units += op.firings;
  }
  r.failed.workers_lost = run.losses.size();
  for (const auto& loss : run.losses)
    for (auto& p : r.places)
      if (p.name == loss.worker) p.lost = true;
  return r;
}

RunReport report(const rem::RunStats& s, const std::string& name) {
  RunReport r = what_ran("rem", name, "task executions", s.executed, s.seconds);
  r.places.push_back({.name = "schedulers", .units = s.executed, .bytes_in = s.bytes_read, .bytes_out = s.bytes_written});
  r.recovered.duplicates = s.duplicates;
  return r;
}

std::string to_json(const RunReport& r) {
  nlohmann::ordered_json places = nlohmann::ordered_json::array();
  for (const auto& p : r.places)
    places.push_back({{"name", p.name}, {"host", p.host}, {"units", p.units}, {"bytes_in", p.bytes_in}, {"bytes_out", p.bytes_out},
                      {"bytes_peers", p.bytes_peers}, {"lost", p.lost}});
  const auto& f = r.failed;
  const auto& v = r.recovered;
  nlohmann::ordered_json j{{"model", r.model},
                   {"name", r.name},
                   {"unit", r.unit},
                   {"units", r.units},
                   {"seconds", r.seconds},
                   {"places", places},
                   {"failed",
                    {{"injected_faults", f.injected_faults},
                     {"detected_faults", f.detected_faults},
                     {"workers_lost", f.workers_lost},
                     {"tasks_poisoned", f.tasks_poisoned},
                     {"task_failures", f.task_failures},
                     {"corrupted_transfers", f.corrupted_transfers}}},
                   {"recovered",
                    {{"reexecutions", v.reexecutions},
                     {"recomputed", v.recomputed},
                     {"speculative_copies", v.speculative_copies},
                     {"quarantined", v.quarantined},
                     {"late_results", v.late_results},
                     {"resubmissions", v.resubmissions},
                     {"duplicates", v.duplicates}}}};
  return j.dump(2) + "\n";
}

}  // namespace redflow
