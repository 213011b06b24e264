// RunReport: what happened in one run, in the same shape for every model, and
// its JSON form. A graph execution, a SPITS job, a stream program and a REM
// run each fill one with report(...) from their own result:
//
//   what ran     model, name, the unit of work and how many (actor
//                executions, committed tasks, operator firings, REM task
//                executions), seconds
//   where        one entry per tile, worker, node or Task Manager: name,
//                host, how many units ran there, bytes in and out, lost or not
//   what failed  faults injected and detected, workers lost, tasks poisoned
//                or failed, values corrupted in transit
//   recovered    re-executions, recomputed values, speculative copies,
//                quarantined tiles, results delivered late, re-submissions,
//                duplicates discarded
//
//   redflow::RunReport r = redflow::report(loaded.last_stats());
//   std::string json = redflow::to_json(r);   // docs/guide.md, "One report for every model"
//
// A value type; the model-specific results (ExecutionStats, spits::Report,
// stream::RunResult, rem::RunStats) keep every detail, this keeps what the
// models share. Counts a model does not have stay 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "redflow/rem.hpp"
#include "redflow/runtime.hpp"
#include "redflow/spits.hpp"
#include "redflow/stream.hpp"

namespace redflow {

struct RunReport {
  // --- What ran.
  std::string model;       // "graph", "spits", "stream" or "rem"
  std::string name;        // the graph's, job's or program's name ("" when the result does not carry it)
  std::string unit;        // what `units` counts: "actor executions", "tasks committed", "firings", "task executions"
  std::uint64_t units = 0;
  double seconds = 0;

  // --- Where: one entry per tile, worker, node or Task Manager.
  struct Place {
    std::string name = {};       // a worker's --name (or HOST:PID), "tile N", "driver", a Task Manager's name
    std::string host = {};       // "" for in-process ones
    std::uint64_t units = 0;     // of RunReport::units, those that ran here
    std::uint64_t bytes_in = 0;  // driver -> it (graph: bytes sent; stream: SETUP and tokens forwarded; REM: read from the store)
    std::uint64_t bytes_out = 0; // it -> driver (REM: written to the store)
    // Straight between it and other workers, not through the driver, each
    // byte counted once, at the worker that moved it (graph: values it
    // fetched from peers; stream: tokens it sent to other nodes).
    std::uint64_t bytes_peers = 0;
    bool lost = false;           // declared lost at least once (crashed, cut off, silent)
  };
  std::vector<Place> places;

  // --- What failed.
  struct Failed {
    std::uint64_t injected_faults = 0;      // graph: outputs corrupted by fault injection
    std::uint64_t detected_faults = 0;      // graph: replica results a vote found wrong
    std::uint64_t workers_lost = 0;         // graph: tiles lost; SPITS: Task Manager losses; stream: nodes lost (each survived)
    std::uint64_t tasks_poisoned = 0;       // SPITS: tasks set aside after their strikes
    std::uint64_t task_failures = 0;        // SPITS: failed executions (strikes)
    std::uint64_t corrupted_transfers = 0;  // graph: values caught corrupted in transit
  } failed;

  // --- What was recovered.
  struct Recovered {
    std::uint64_t reexecutions = 0;        // graph: executions repeated because no two replicas agreed
    std::uint64_t recomputed = 0;          // graph: producers re-run for values that lived only on a lost tile
    std::uint64_t speculative_copies = 0;  // graph: copies of stragglers run on idle tiles
    std::uint64_t quarantined = 0;         // graph: tiles taken out of service
    std::uint64_t late_results = 0;        // SPITS: results a lost Task Manager delivered after coming back
    std::uint64_t resubmissions = 0;       // SPITS: pushes of a task already pushed before
    std::uint64_t duplicates = 0;          // SPITS: results of committed tasks discarded; REM: executions someone else had already done
  } recovered;
};

// One execution of a loaded graph (LoadedGraph::last_stats()); name: the graph's.
RunReport report(const ExecutionStats& stats, const std::string& name = "");
RunReport report(const spits::Report& job);
// A stream run, local (no places) or over workers (a place per node); name: the program's.
RunReport report(const stream::RunResult& run, const std::string& name = "");
// A REM run's stats (summed over its schedulers: one place, "schedulers"); name: the program's.
RunReport report(const rem::RunStats& stats, const std::string& name = "");

// The JSON form: {"model", "name", "unit", "units", "seconds", "places": [...],
// "failed": {...}, "recovered": {...}} with the field names above.
std::string to_json(const RunReport& report);

}  // namespace redflow
