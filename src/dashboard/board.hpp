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

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redflow/client.hpp"
#include "redflow/runtime.hpp"
#include "redflow/spits.hpp"
#include "redflow/status.hpp"
#include "redflow/stream.hpp"

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

// A stream of a SCORE stream program as the streams page shows it.
struct StreamView {
  std::string from, to;       // its producer and consumer operators
  std::uint64_t tokens = 0;   // written into it so far (over worker processes: relayed between nodes)
  double per_s = 0;           // tokens per second: since the last sample, or over the run at its end
  std::uint64_t queued = 0;   // written and not yet read (where tokens queue up)
};

// A job of `redflow server` as the jobs page shows it.
struct JobView {
  std::uint64_t id = 0;
  std::string model;           // its command: run, spits, stream or rem
  std::string command;         // its words, as submitted
  std::string state;           // queued, running, succeeded, failed or cancelled
  std::uint32_t workers_asked = 0;   // 0: the server's --min-workers (a REM job takes none)
  std::vector<std::string> workers;  // "NAME on HOST" sent to it, or of its report
  std::uint32_t starts = 0;    // more than 1 after a server restart
  int exit_status = -1;        // once finished
  std::string message;         // why it failed or was cancelled
};

// A worker of `redflow server`: "idle" (waiting at the server) or "busy" (sent to a job, or serving one).
struct WorkerView {
  std::string name;  // "NAME on HOST"
  std::string state;
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
  // A stream program's streams (streams page), as last sampled; empty for other models.
  std::vector<StreamView> streams;
  // `redflow server`'s jobs and workers (jobs page); empty for a one-shot run.
  std::vector<JobView> jobs;
  std::vector<WorkerView> workers;
  // The live Gantt chart (/api/gantt, live_gantt.hpp): changed when
  // `gantt_version` grows; 0 = none drawn yet. `gantt_execution`: the
  // execution it shows, counting from 1.
  std::uint64_t gantt_version = 0;
  std::uint64_t gantt_execution = 0;
};

// The live Gantt chart as the board holds it.
struct GanttView {
  std::uint64_t version = 0;  // 0: none yet
  std::uint64_t execution = 0;
  std::shared_ptr<const std::string> svg;  // null when none yet
};

// A run traces an execution for the chart at most this often...
inline constexpr double kGanttEveryS = 2.0;
// ...and only while a page asked for the chart this recently...
inline constexpr double kGanttWatchedS = 5.0;
// ...and seldom enough that tracing and drawing take at most this share of
// the run's time: a chart that cost 30 ms waits 6 s for the next.
inline constexpr double kGanttShare = 0.005;

// How many recent events a snapshot keeps.
inline constexpr std::size_t kMaxEvents = 50;

// The snapshot as JSON (schema: docs/dashboard.md, "Snapshot JSON").
std::string to_json(const Snapshot& s);

class Board;
// A finished stream run's numbers (its operators, streams, tokens, seconds,
// tokens per second, nodes) as the board's counters, and each stream with
// its tokens per second over the run, the same for a live run's end
// (`redflow stream --dashboard`) and its --profile file (`redflow view`).
void count_stream_run(Board& board, std::size_t operators, const stream::RunResult& result);
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
  // A stream program's streams as sampled now (stream::RunOptions::on_sample;
  // tokens per second from the last sample), or at the end with `over_s`,
  // the run's seconds (tokens per second over the whole run).
  void streams(const std::vector<stream::StreamProfile>& sample, std::optional<double> over_s = std::nullopt);
  // A SPITS job's report so far (spits::Options::on_progress), `elapsed_s`
  // into the job: tasks committed, generated and running (on Task Managers,
  // queued or executing), Task Managers and their Workers (W), the measured
  // time per task (T, the mean of the Task Managers' weighted by their
  // results), commits per second so far, and the model's compute-bound rate
  // W / T with the share of it reached (the share of the Workers' time spent
  // inside tasks) (docs/spits.md, "The performance
  // model"). A Task Manager that joined or was lost since the last call is
  // an event ("task-manager-joined", "task-manager-lost").
  void spits(const spits::Report& so_far, double elapsed_s);
  // `redflow server`'s jobs and workers now (server::ServerOptions::on_state):
  // a job that changed state since the last call is an event ("job-queued",
  // "job-running", "job-succeeded", "job-failed", "job-cancelled"), and the
  // counters say how many jobs are in each state and how many workers there are.
  void jobs(const std::vector<JobInfo>& jobs, const std::vector<std::string>& workers, const std::vector<std::string>& idle);
  // The run ended: "finished" when `status` is ok, else "failed" with its message.
  void finish(const Status& status);
  Snapshot snapshot() const;

  // The live Gantt chart. A page asks for it (gantt_watched(), from the
  // server's threads); the run asks wants_gantt() before an execution and,
  // when true, traces it and hands its chart to record_gantt() (drawn by
  // live_gantt.hpp's record_gantt(), on the run's thread). `cost_s`: what
  // tracing and drawing it added to the run; the next chart waits
  // max(kGanttEveryS, cost_s / kGanttShare).
  void gantt_watched() const;
  bool wants_gantt() const;
  void record_gantt(std::uint64_t execution, std::string svg, double cost_s = 0);
  // The makespan of the last execution record() was given (0 before the first).
  double last_makespan_s() const;
  GanttView gantt() const;

 private:
  double now_s() const;
  void add_event(EventView e);  // under mutex_
  void set_counter(const std::string& name, double value);  // under mutex_

  mutable std::mutex mutex_;
  Snapshot s_;
  std::chrono::steady_clock::time_point t0_;
  double streams_at_s_ = 0;  // when the last stream sample was taken
  std::vector<std::uint64_t> task_manager_losses_;  // spits(): each Task Manager's losses at the last call
  GanttView gantt_;
  std::atomic<double> next_gantt_at_s_{-1e300};  // the earliest time for the next chart (read without the lock)
  // When a page last asked for the chart (a page's request is not the run's state: mutable).
  mutable std::atomic<double> gantt_watched_at_s_{-1e300};
};

}  // namespace redflow::dashboard
