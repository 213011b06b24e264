// `--dashboard [ADDR]` and `--dashboard-linger SECONDS` on `redflow run`,
// `spits`, `stream`, `rem` and `server`: a live web dashboard of the run (or
// the server), inside its process (src/dashboard/,
// docs/dashboard.md). RunDashboard ties a Board and its server to one run.
//
//   auto d = RunDashboard::start(args, graph_name, repeat);  // prints the URL
//   options.on_mark = [d](const TracedMark& m) { d->mark(m); };  // live events
//   ... before each execution: trace it if (*d)->wants_trace() (the tiles page's Gantt chart is open),
//       and after it: (*d)->record(loaded.last_stats()); (*d)->record_trace(...) when traced;
//   (*d)->end(status);   // final state, lingers, stops
//
// Thread-safe as Board: record() and end() from the run's thread, mark()
// from any.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "dashboard/board.hpp"
#include "dashboard/server.hpp"

namespace redflow::cli {

struct DashboardArgs {
  std::string address;  // "" and not given: no dashboard
  const CLI::Option* option = nullptr;  // --dashboard, set by add_dashboard_flags
  bool given() const { return option != nullptr && option->count() > 0; }
  double linger_s = 0;  // serving after the run ended
};

void add_dashboard_flags(CLI::App* cmd, DashboardArgs& args);

class RunDashboard {
 public:
  // Null without --dashboard; an InvalidArgument naming the address when it is bad.
  // `model`: "graph", or "spits" (whose numbers come through count()).
  static Result<std::unique_ptr<RunDashboard>> start(const DashboardArgs& args, const std::string& name, std::uint64_t executions,
                                                     const std::string& model = "graph");
  ~RunDashboard();  // end() with a failure if end() was not called
  void record(const ExecutionStats& stats) { board_.record(stats); }
  // An event as the runtime marks it (RuntimeOptions::on_mark), from any of its threads.
  void mark(const TracedMark& m) { board_.mark(m); }
  // Whether to trace the next execution for the tiles page's Gantt chart
  // (Board::wants_gantt: a page watches it, every few seconds at most).
  bool wants_trace() const { return board_.wants_gantt(); }
  // That execution's trace, drawn for the page (dashboard::record_gantt),
  // before record() of its stats; `execution` counts from 1,
  // `executed_graph` (may be null) colours it, `execute_s` is the wall time
  // of its execute() call.
  void record_trace(const ExecutionTrace& trace, const Graph* executed_graph, std::uint64_t execution, double execute_s);
  // A model's own number, from any thread (Board::count).
  void count(const std::string& name, double value) { board_.count(name, value); }
  // A stream program's streams, sampled as it runs or at its end (Board::streams).
  void streams(const std::vector<stream::StreamProfile>& sample, std::optional<double> over_s = std::nullopt) { board_.streams(sample, over_s); }
  // `redflow server`'s jobs and workers (Board::jobs), from the server's loop.
  void jobs(const std::vector<JobInfo>& jobs, const std::vector<std::string>& workers, const std::vector<std::string>& idle) {
    board_.jobs(jobs, workers, idle);
  }
  // A SPITS job's report so far (Board::spits), from the Job Manager's thread.
  void spits(const spits::Report& so_far, double elapsed_s) { board_.spits(so_far, elapsed_s); }
  // A stream run's numbers at its end (dashboard::count_stream_run).
  void count_stream_run(std::size_t operators, const stream::RunResult& result) { dashboard::count_stream_run(board_, operators, result); }
  // A SPITS job's report at its end, as the counters (dashboard::count_spits_report).
  void count_report(const spits::Report& report) { dashboard::count_spits_report(board_, report); }
  // The run's outcome on the page; then serves linger_s more seconds and stops.
  void end(const Status& status);

 private:
  RunDashboard(const std::string& model, const std::string& name, std::uint64_t executions, double linger_s)
      : board_(model, name, executions), executions_(executions), linger_s_(linger_s) {}
  dashboard::Board board_;
  std::uint64_t executions_ = 0;
  std::unique_ptr<dashboard::DashboardServer> server_;
  double linger_s_ = 0;
  bool ended_ = false;
};

}  // namespace redflow::cli
