// `--dashboard [ADDR]` and `--dashboard-linger SECONDS` on `redflow run`: a
// live web dashboard of the run, inside its process (src/dashboard/,
// docs/dashboard.md). RunDashboard ties a Board and its server to one run.
//
//   auto d = RunDashboard::start(args, graph_name, repeat);  // prints the URL
//   ... after each execution: (*d)->record(loaded.last_stats());
//   (*d)->end(status);   // final state, lingers, stops
//
// Thread-safe as Board: record() and end() from the run's thread.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "dashboard/board.hpp"
#include "dashboard/server.hpp"

namespace redflow::cli {

struct DashboardArgs {
  std::string address;  // "" and not given: no dashboard
  bool given = false;
  double linger_s = 0;  // serving after the run ended
};

void add_dashboard_flags(CLI::App* cmd, DashboardArgs& args);

class RunDashboard {
 public:
  // Null without --dashboard; an InvalidArgument naming the address when it is bad.
  static Result<std::unique_ptr<RunDashboard>> start(const DashboardArgs& args, const std::string& name, std::uint64_t executions);
  ~RunDashboard();  // end() with a failure if end() was not called
  void record(const ExecutionStats& stats) { board_.record(stats); }
  // The run's outcome on the page; then serves linger_s more seconds and stops.
  void end(const Status& status);

 private:
  RunDashboard(const std::string& name, std::uint64_t executions, double linger_s) : board_("graph", name, executions), linger_s_(linger_s) {}
  dashboard::Board board_;
  std::unique_ptr<dashboard::DashboardServer> server_;
  double linger_s_ = 0;
  bool ended_ = false;
};

}  // namespace redflow::cli
