// Board: what a run's dashboard shows, kept up to date by the run and read by
// the dashboard's publisher (server.hpp). The run's driver thread records each
// finished execution (record(): one short lock and O(tiles) of copying, once
// per execution, never per actor); the publisher copies a Snapshot out a few
// times a second. Nothing here touches the runtime's hot path.
//
// Tile states: "in service", "lost" (a worker that crashed, was cut off or
// went silent), "on probation" (out of service after losing votes, waiting
// for a known-answer test to put it back), "quarantined" (out of service for
// good), "out of service" (any other reason: a local tile that crashed, a
// place kept for a worker that has not joined), "straggling" (in service,
// but fell behind: other tiles copied or took over its actors in the last
// execution, or the current one). They are the states of the
// last execution's stats (ExecutionStats::tiles, quarantined_tiles and
// probation_tiles), changed at once by the runtime's marks in between.
//
// Thread-safe: every member function may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redflow/runtime.hpp"
#include "redflow/spits.hpp"
#include "redflow/status.hpp"

namespace redflow::dashboard {

// One compute tile as the dashboard shows it.
struct TileView {
  unsigned id = 0;            // its index in ExecutionStats::tiles
  std::string worker;         // a worker's name; "" for a local tile
  std::string host;           // the worker's host; "" for a local tile
  // "in service", "straggling", "lost", "on probation", "quarantined" or "out of service"
  std::string state = "in service";
  std::uint64_t actors = 0;   // actors it ran, over every execution so far
  std::uint64_t bytes_in = 0;   // driver -> worker, over every execution so far
  std::uint64_t bytes_out = 0;  // worker -> driver, over every execution so far
  std::uint64_t lost_votes = 0; // its replica results a vote found wrong, over every execution so far
  std::uint64_t speculative = 0;  // copies of stragglers it ran, over every execution so far
  std::uint64_t straggled = 0;    // its actors others copied or took over as it fell behind, over every execution so far
};

// An event of the run as the runtime marked it (RuntimeOptions::on_mark).
struct EventView {
  std::string what;    // "tile-lost", "quarantine", "vote-failed", "speculative-copy", ...
  std::string detail;  // the actor or the tile
  int tile = -1;       // the tile it happened on; -1: none
  double at_s = 0;     // since the board was made
};

// The whole dashboard at one moment. Counts are totals over the executions
// finished so far; `last_*` describe the last one.
struct Snapshot {
  std::string model = "graph";
  std::string name;             // the graph's name
  std::string state = "starting";  // "starting", "running", "finished" or "failed"
  std::string failure;          // why, when "failed"
  double elapsed_s = 0;         // since the board was made
  std::uint64_t executions_done = 0;
  std::uint64_t executions_total = 0;
  std::uint64_t actors_done = 0;
  double busy_s = 0;            // sum of the executions' makespans
  double actors_per_s = 0;      // actors_done / busy_s (0 before the first execution)
  std::uint64_t faults_injected = 0;
  std::uint64_t faults_detected = 0;   // wrong replica results found by votes
  std::uint64_t faults_corrected = 0;  // of them, outvoted in executions that then succeeded
  std::uint64_t reexecutions = 0;
  std::uint64_t lost_tiles = 0;
  std::uint64_t recomputed_actors = 0;
  std::uint64_t speculative_copies = 0;
  std::vector<unsigned> quarantined_tiles;  // as the last execution left them (on probation or for good)
  std::vector<unsigned> probation_tiles;    // of those, the ones on probation
  std::string scheduler;
  std::string redundancy;       // the last execution's configuration
  double last_makespan_s = 0;
  std::uint64_t last_actors = 0;
  std::vector<TileView> tiles;
  std::vector<EventView> events;  // the last kMaxEvents, oldest first
  std::uint64_t events_total = 0;  // events marked so far
  // A model's own numbers ("tasks committed" of a SPITS job, ...), in the
  // order first counted; graph runs have none.
  std::vector<std::pair<std::string, double>> counters;
};

// How many recent events a snapshot keeps.
inline constexpr std::size_t kMaxEvents = 50;

// The snapshot as JSON (schema: docs/dashboard.md, "Snapshot JSON").
std::string to_json(const Snapshot& s);

class Board;
// A finished SPITS job's report as the board's counters ("tasks committed",
// "tasks generated", ...), the same for a live job's end (`redflow spits
// --dashboard`) and a finished job's stats file (`redflow view`).
void count_spits_report(Board& board, const spits::Report& report);

class Board {
 public:
  // `executions_total`: how many executions the run will make (--repeat).
  Board(std::string model, std::string name, std::uint64_t executions_total);
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;

  // An execution finished well: adds its counts and takes its tiles' states.
  void record(const ExecutionStats& stats);
  // An event as it happens, from any thread: kept among the recent events;
  // "tile-lost", "quarantine", "probation", "quarantine-for-good" and
  // "reinstated" set that tile's state at once (the execution's stats
  // confirm it when it ends).
  // `at_s`: when it happened, from the board's start (default: now; a
  // finished run's trace gives its own times).
  void mark(const TracedMark& m, std::optional<double> at_s = std::nullopt);
  // Sets the model's counter `name` (a SPITS job's commits as they come,
  // its report's numbers at the end): "running" from the first one on.
  void count(const std::string& name, double value);
  // The run ended: "finished" when `status` is ok, else "failed" with its message.
  void finish(const Status& status);
  Snapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  Snapshot s_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace redflow::dashboard
