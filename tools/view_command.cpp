// `redflow view STATS.json [--trace TRACE.json]`: the live dashboard's pages
// on a finished run's files (src/dashboard/run_files.hpp, docs/dashboard.md).
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "cli_common.hpp"
#include "dashboard/board.hpp"
#include "dashboard/run_files.hpp"
#include "dashboard/server.hpp"

namespace redflow::cli {

namespace {

std::atomic<bool> stop_view{false};
extern "C" void on_view_stop_signal(int) { stop_view.store(true); }

struct ViewArgs {
  std::string stats, trace, address;
  double for_s = 0;  // 0: until SIGINT or SIGTERM
};

}  // namespace

Command add_view_command(CLI::App& app) {
  auto a = std::make_shared<ViewArgs>();
  auto* cmd = app.add_subcommand("view", "Open the dashboard's pages on a finished run's --stats (and --trace) files, a SPITS job's --stats or a stream run's --profile.");
  cmd->footer("Examples:\n"
              "  redflow run g.dot --input X=x.bin --stats s.json --trace t.json   (on a cluster's driver, say)\n"
              "  redflow view s.json --trace t.json                                 (prints the URL to open)\n"
              "  redflow spits job.so ... --stats j.json; redflow view j.json        (a SPITS job: its counts)\n"
              "  redflow stream p.dot --profile p.json; redflow view p.json           (a stream run: its streams)\n"
              "The stats file holds one execution (the last of a --repeat); the trace's marks (lost tiles, quarantines,\n"
              "failed votes, copies) are the events. docs/dashboard.md, \"A finished run's files\".\n"
              "Exit status: 0 after SIGINT, SIGTERM or --for; 1 a file that is not a run's stats or trace (named); 2 a usage error.");
  cmd->add_option("stats", a->stats, "The run's stats JSON (redflow run --stats FILE, redflow spits --stats FILE or redflow stream --profile FILE)")->required()->check(readable_file());
  cmd->add_option("--trace", a->trace, "The run's trace (redflow run --trace FILE.json): its marks become the page's events")
      ->check(readable_file())
      ->type_name("FILE.json");
  cmd->add_option("--dashboard", a->address,
                  "Serve at ADDR (HOST[:PORT], default 127.0.0.1 on a free port); beyond 127.0.0.1 a token printed with the URL is "
                  "required, as for a live run")
      ->type_name("ADDR");
  cmd->add_option("--for", a->for_s, "Serve this many seconds, then exit (default: until SIGINT or SIGTERM)")
      ->check(CLI::Range(0.0, 1e9))
      ->type_name("SECONDS");
  return {cmd, [a] {
            const std::string model = dashboard::stats_model(a->stats);
            if (model != "graph" && !a->trace.empty())
              return usage_error(Status::InvalidArgument("--trace: " + std::string(model == "spits" ? "a SPITS job's stats file '" : "a stream run's profile '") +
                                                         a->stats + "' has no trace to go with it"));
            dashboard::Board board(model, std::filesystem::path(a->stats).stem().string(), 1);
            dashboard::ServerOptions o;
            if (!a->address.empty()) o.address = a->address;
            auto server = dashboard::DashboardServer::start(board, o);
            if (!server.ok()) return usage_error(server.status());
            if (Status s = model == "spits"    ? dashboard::read_spits_stats(board, a->stats)
                           : model == "stream" ? dashboard::read_stream_profile(board, a->stats)
                                               : dashboard::read_run_files(board, a->stats, a->trace);
                !s.ok())
              return fail(s);
            (*server)->publish_now();
            fmt::print(stderr, "redflow: dashboard at {}\n", (*server)->url());
            std::fflush(stderr);
            std::signal(SIGINT, on_view_stop_signal);
            std::signal(SIGTERM, on_view_stop_signal);
            const auto until = a->for_s > 0 ? std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                                      std::chrono::duration<double>(a->for_s))
                                            : std::chrono::steady_clock::time_point::max();
            while (!stop_view.load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
            (*server)->stop();
            return 0;
          }};
}

}  // namespace redflow::cli
