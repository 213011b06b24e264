// --dashboard on `redflow run` and `redflow spits` (dashboard_flag.hpp).
#include "dashboard_flag.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "dashboard/live_gantt.hpp"

namespace redflow::cli {

void add_dashboard_flags(CLI::App* cmd, DashboardArgs& args) {
  args.option = cmd->add_option("--dashboard", args.address,
                  "Serve a live web dashboard of the run at ADDR (HOST[:PORT], default 127.0.0.1 on a free port; the URL is "
                  "printed at start). Beyond 127.0.0.1 a token printed with the URL is required (docs/dashboard.md)")
      ->type_name("[ADDR]")
      ->expected(0, 1)
      // The address is optional, so `--dashboard g.dot` would take the graph for it: say so, not "graph is required".
      ->check([](const std::string& value) {
        std::error_code ec;
        if (value.empty() || !std::filesystem::exists(value, ec)) return std::string();
        return "'" + value + "' is a file, not an address: write --dashboard=ADDR, or give the file before --dashboard";
      });
  cmd->add_option("--dashboard-linger", args.linger_s,
                  "With --dashboard: keep serving this many seconds after the run ended, so its final state can be read")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
}

Result<std::unique_ptr<RunDashboard>> RunDashboard::start(const DashboardArgs& args, const std::string& name, std::uint64_t executions,
                                                         const std::string& model) {
  if (!args.given()) return std::unique_ptr<RunDashboard>();
  std::unique_ptr<RunDashboard> d(new RunDashboard(model, name, executions, args.linger_s));
  dashboard::ServerOptions o;
  if (!args.address.empty()) o.address = args.address;
  auto server = dashboard::DashboardServer::start(d->board_, o);
  if (!server.ok()) return server.status();
  d->server_ = std::move(*server);
  fmt::print(stderr, "redflow: dashboard at {}\n", d->server_->url());
  std::fflush(stderr);
  return d;
}

void RunDashboard::record_trace(const ExecutionTrace& trace, const Graph* executed_graph, std::uint64_t execution, double execute_s) {
  dashboard::record_gantt(board_, trace, executed_graph, execution, executions_, execute_s);
}

void RunDashboard::end(const Status& status) {
  if (ended_ || server_ == nullptr) return;
  ended_ = true;
  board_.finish(status);
  server_->publish_now();
  if (linger_s_ > 0) {
    std::fflush(stdout);  // what the run printed is out before the wait
    fmt::print(stderr, "redflow: run {}; dashboard stays up {} s at {}\n", status.ok() ? "finished" : "failed", linger_s_, server_->url());
    std::fflush(stderr);
    std::this_thread::sleep_for(std::chrono::duration<double>(linger_s_));
  }
  server_->stop();
}

// Left without end(): the run returned on an error it printed.
RunDashboard::~RunDashboard() { end(Status::Internal("the run stopped on an error (see its output)")); }

}  // namespace redflow::cli
