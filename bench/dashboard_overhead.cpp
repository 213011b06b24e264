// What a live dashboard costs a run (docs/dashboard.md, "Cost"): dispatch
// rate of empty actors on 2 local tiles without a dashboard, and with one
// (Board recorded after every execution, the server publishing 5 snapshots a
// second) that a client watches: an event stream open (what a browser's
// page holds), /api/snapshot fetched 5 times a second and the tiles page's
// Gantt chart asked for once a second (so an execution is traced and drawn
// for it every few seconds, as `redflow run --dashboard` does). Rounds of the two
// alternate in one process; the ratio of their median rates is printed (the
// goal is >= 0.97), and the process's CPU seconds per wall second in each,
// whose difference is the dashboard's CPU use.
//   dashboard_overhead [--rounds 9] [--fanout 2000] [--chain 100000] [--round-s 1] [--workers PATH/TO/redflow]
// Shapes: fanout (apps/overhead_shapes.hpp, executed again and again for
// --round-s per round) and the chain of --chain actors (one execution per
// round), on 2 local tiles; with --workers also 64 independent chains of
// 40,000 empty actors in all dispatched to 2 worker processes (`redflow worker`, started on loopback by this program).
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/overhead_shapes.hpp"
#include "dashboard/board.hpp"
#include "dashboard/http_probe.hpp"
#include "dashboard/live_gantt.hpp"
#include "dashboard/server.hpp"
#include "redflow/runtime.hpp"

using namespace redflow;
using Clock = std::chrono::steady_clock;

namespace {

double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A watcher of the dashboard: one event stream open and /api/snapshot read at 5 Hz.
class Watcher {
 public:
  explicit Watcher(int port) : port_(port) {
    stream_ = std::thread([this] {
      while (!stop_.load()) (void)dashboard::read_events("127.0.0.1", port_, "/api/events", ~std::size_t{0}, 3600, &stop_);
    });
    poll_ = std::thread([this] {
      for (int n = 0; !stop_.load(); ++n) {
        (void)dashboard::http_get("127.0.0.1", port_, "/api/snapshot");
        // The tiles page's Gantt chart, asked for once a second: the run traces an execution for it every few seconds.
        if (n % 5 == 0) {
          (void)dashboard::http_get("127.0.0.1", port_, "/api/gantt?since=" + std::to_string(n));
          asked_.store(true);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
  // It asked for the Gantt chart once.
  bool asked() const { return asked_.load(); }
  // Stops watching; the event stream ends with `server`'s stop().
  void finish(dashboard::DashboardServer& server) {
    stop_.store(true);
    poll_.join();
    server.stop();
    stream_.join();
  }

 private:
  int port_;
  std::atomic<bool> stop_{false}, asked_{false};
  std::thread stream_, poll_;
};

struct Round {
  double actors_per_s = 0;
  double cpu_per_s = 0;
};

// One round: executes until `round_s` passed (at least once); with a
// `board`, a dashboard of it is up with a watcher and records every
// execution. The board lives on from round to round, as a run's does: the
// Gantt chart's pace (dashboard::kGanttEveryS, or slower when a chart costs more)
// carries over.
Round one_round(LoadedGraph& loaded, const Inputs& inputs, dashboard::Board* board, double round_s) {
  std::unique_ptr<dashboard::DashboardServer> server;
  std::unique_ptr<Watcher> watcher;
  if (board != nullptr) {
    auto s = dashboard::DashboardServer::start(*board, {});
    if (!s.ok()) {
      std::fprintf(stderr, "dashboard_overhead: %s\n", s.status().ToString().c_str());
      std::exit(1);
    }
    server = std::move(*s);
    watcher = std::make_unique<Watcher>(server->port());
    // The watcher is connected, and has asked for the chart, before timing.
    while (server->streams_opened() == 0 || !watcher->asked()) std::this_thread::yield();
  }
  std::uint64_t actors = 0;
  const double cpu0 = process_cpu_s();
  const auto t0 = Clock::now();
  double elapsed = 0;
  std::uint64_t executions = 0;
  do {
    const bool for_gantt = board != nullptr && board->wants_gantt();
    ExecuteOptions eo;
    if (for_gantt) eo.trace = true;
    const auto started = Clock::now();
    if (!loaded.execute(inputs, eo).ok()) {
      std::fprintf(stderr, "dashboard_overhead: an execution failed\n");
      std::exit(1);
    }
    ++executions;
    actors += loaded.last_stats().actors_executed;
    if (for_gantt)
      dashboard::record_gantt(*board, loaded.last_trace(), &loaded.graph(), executions, 0, std::chrono::duration<double>(Clock::now() - started).count());
    if (board != nullptr) board->record(loaded.last_stats());
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  } while (elapsed < round_s);
  const double cpu = process_cpu_s() - cpu0;
  if (watcher) watcher->finish(*server);
  return {static_cast<double>(actors) / elapsed, cpu / elapsed};
}

// With `workers_cli`: the 2 tiles are worker processes it starts, killed at the end.
void measure(const char* label, Graph graph, int rounds, double round_s, const std::string& workers_cli = "") {
  Registry reg;
  apps::register_overhead_actors(reg);
  RuntimeOptions o;
  o.tiles = 2;
  std::vector<pid_t> workers;
  if (!workers_cli.empty()) {
    // 64 chains on the wire at once: a slot for each chain's value (as
    // bench/net_remote.cpp's dispatch measurement).
    o.slots = 64;
    o.slot_bytes = 4096;
    o.cluster.listen = "tcp://127.0.0.1:*";
    o.cluster.min_workers = 2;
    o.cluster.on_listening = [&](const std::string& endpoint) {
      for (int i = 0; i < 2; ++i) {
        const pid_t pid = fork();
        if (pid == 0) {
          execl(workers_cli.c_str(), workers_cli.c_str(), "--log-level", "error", "worker", "--connect", endpoint.c_str(), "--slots",
                "64", "--slot-bytes", "4096", static_cast<char*>(nullptr));
          _exit(127);
        }
        workers.push_back(pid);
      }
    };
  }
  Runtime rt(o);
  auto loaded = rt.load(std::move(graph), reg);
  if (!loaded.ok()) {
    std::fprintf(stderr, "dashboard_overhead: %s\n", loaded.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<std::byte> x(loaded->graph().data(*loaded->graph().find_data("X")).bytes);
  const Inputs inputs{{"X", x}};
  one_round(*loaded, inputs, nullptr, round_s);  // warm
  dashboard::Board board("graph", loaded->graph().name(), 0);
  std::vector<double> plain, watched, plain_cpu, watched_cpu;
  for (int r = 0; r < rounds; ++r) {
    // Alternating, each pair in the other order than the last: drift on a shared machine hits both alike.
    for (bool w : r % 2 == 0 ? std::vector<bool>{false, true} : std::vector<bool>{true, false}) {
      const Round got = one_round(*loaded, inputs, w ? &board : nullptr, round_s);
      (w ? watched : plain).push_back(got.actors_per_s);
      (w ? watched_cpu : plain_cpu).push_back(got.cpu_per_s);
    }
  }
  const double p = median(plain), w = median(watched);
  fmt::print("{:<28} without {:>12.0f} actors/s   with a watched dashboard {:>12.0f} actors/s   ratio {:.3f}   "
             "CPU s per s: {:.3f} without, {:.3f} with\n",
             label, p, w, w / p, median(plain_cpu), median(watched_cpu));
  fmt::print("{{\"bench\":\"dashboard_overhead\",\"shape\":\"{}\",\"rounds\":{},\"without_actors_per_s\":{:.0f},"
             "\"with_actors_per_s\":{:.0f},\"ratio\":{:.4f},\"cpu_without\":{:.4f},\"cpu_with\":{:.4f}}}\n",
             label, rounds, p, w, w / p, median(plain_cpu), median(watched_cpu));
  for (pid_t pid : workers) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 9;
  std::size_t fanout = 2000, chain = 100000;
  double round_s = 1.0;
  std::string workers_cli;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--fanout" && i + 1 < argc) {
      fanout = std::stoul(argv[++i]);
    } else if (a == "--chain" && i + 1 < argc) {
      chain = std::stoul(argv[++i]);
    } else if (a == "--round-s" && i + 1 < argc) {
      round_s = std::atof(argv[++i]);
    } else if (a == "--workers" && i + 1 < argc) {
      workers_cli = argv[++i];
    } else {
      std::fprintf(stderr, "usage: dashboard_overhead [--rounds N] [--fanout N] [--chain N] [--round-s S] [--workers PATH/TO/redflow]\n");
      return 2;
    }
  }
  if (rounds < 1 || round_s <= 0) {
    std::fprintf(stderr, "dashboard_overhead: --rounds must be at least 1 and --round-s more than 0\n");
    return 2;
  }
  measure(fmt::format("fanout of {} empty actors", fanout).c_str(), apps::overhead_graph(apps::Shape::kFanout, fanout), rounds, round_s);
  measure(fmt::format("chain of {} empty actors", chain).c_str(), apps::overhead_graph(apps::Shape::kChain, chain), rounds, round_s);
  if (!workers_cli.empty())
    measure("64 chains of 40000 empty actors on 2 workers", apps::independent_chains(40000, 64, 4), rounds, round_s, workers_cli);
  return 0;
}
