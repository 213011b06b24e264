// Runtime overhead per actor: a chain of N empty actors and a fan-out of one
// source to N empty actors, run by redflow (HEFT order and work stealing) and
// by oneTBB's flow graph (continue_node) in the same process with the same
// number of threads. Reports the median wall time of whole executions divided
// by the actor count, and ratio = tbb / redflow (>= 1: redflow is faster).
//
//   overhead [--n 100000] [--runs 7] [--tiles 1,2] [--bytes 0] [--json FILE]
//            [--shape chain|fanout] [--sched heft|steal] [--no-tbb]
//
// redflow is timed around LoadedGraph::execute() (input checks, per-execution
// resets, the run and output extraction: what a caller pays); TBB around
// try_put() + wait_for_all(). Graphs are built and loaded once, then run once
// for warm-up and --runs times for the median.
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "redflow/redflow.hpp"

namespace {

struct Options {
  std::size_t n = 100000;
  int runs = 7;
  std::vector<unsigned> tiles{1, 2};
  std::size_t bytes = 0;
  std::string json;
  std::string shape;   // "" = both
  std::string sched;   // "" = both
  bool tbb = true;
};

struct Row {
  std::string shape;
  std::string scheduler;
  unsigned tiles = 0;
  std::size_t actors = 0;
  double redflow_s = 0;        // median execute() time
  double redflow_makespan_s = 0;  // median ExecutionStats::makespan_s
  double tbb_s = 0;            // median try_put + wait_for_all time
  double load_s = 0;
  std::uint64_t steals = 0;    // last run
  std::uint64_t transfers = 0; // last run
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr, "overhead: %s\nusage: overhead [--n N] [--runs R] [--tiles 1,2] [--bytes B] [--json FILE]\n"
               "                [--shape chain|fanout] [--sched heft|steal] [--no-tbb]   (for profiling)\n", msg);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--n") o.n = std::stoull(value());
    else if (a == "--runs") o.runs = std::stoi(value());
    else if (a == "--bytes") o.bytes = std::stoull(value());
    else if (a == "--json") o.json = value();
    else if (a == "--shape") o.shape = value();
    else if (a == "--sched") o.sched = value();
    else if (a == "--no-tbb") o.tbb = false;
    else if (a == "--tiles") {
      o.tiles.clear();
      std::string v = value();
      for (std::size_t p = 0; p < v.size();) {
        std::size_t q = v.find(',', p);
        if (q == std::string::npos) q = v.size();
        o.tiles.push_back(static_cast<unsigned>(std::stoul(v.substr(p, q - p))));
        p = q + 1;
      }
    } else if (a == "-h" || a == "--help") usage("help");
    else usage(("unknown option " + a).c_str());
  }
  if (o.n < 1 || o.runs < 1 || o.tiles.empty()) usage("--n, --runs and --tiles must be positive");
  return o;
}

// ------------------------------------------------------------------ shapes

// X -> a0 -> d0 -> a1 -> d1 ... -> a(n-1) -> Y. The output Y is one node, so
// output copying is negligible.
redflow::Graph chain_graph(std::size_t n, std::size_t bytes) {
  redflow::Graph g("chain");
  redflow::DataId prev = g.input("X", bytes);
  for (std::size_t i = 0; i < n; ++i) {
    redflow::DataId next = i + 1 == n ? g.output("Y", bytes) : g.inner("d" + std::to_string(i), bytes);
    g.actor("a" + std::to_string(i), "empty", {prev}, next);
    prev = next;
  }
  return g;
}

// X -> src -> S; S -> s_i -> o_i for i < n. The sinks' outputs are inner nodes
// nobody reads: they are dead as soon as written, so the run measures
// scheduling, not copying n outputs back to main memory and into the result map.
redflow::Graph fanout_graph(std::size_t n, std::size_t bytes) {
  redflow::Graph g("fanout");
  redflow::DataId x = g.input("X", bytes);
  redflow::DataId s = g.inner("S", bytes);
  g.actor("src", "empty", {x}, s);
  for (std::size_t i = 0; i < n; ++i) g.actor("s" + std::to_string(i), "empty", {s}, g.inner("o" + std::to_string(i), bytes));
  return g;
}

// ------------------------------------------------------------------ redflow

void run_redflow(const Options& o, const redflow::Graph& graph, const redflow::Registry& reg, redflow::Scheduler sched,
                 unsigned tiles, Row& row) {
  redflow::RuntimeOptions ro;
  ro.tiles = tiles;
  ro.scheduler = sched;
  redflow::Runtime rt(ro);
  const double l0 = now_s();
  auto loaded = rt.load(graph, reg);
  row.load_s = now_s() - l0;
  if (!loaded.ok()) {
    std::fprintf(stderr, "load failed: %s\n", loaded.status().message().c_str());
    std::exit(1);
  }
  std::vector<std::byte> x(o.bytes);
  redflow::Inputs inputs{{"X", std::span<const std::byte>(x)}};
  std::vector<double> times, makespans;
  for (int r = -1; r < o.runs; ++r) {
    const double t0 = now_s();
    auto out = loaded->execute(inputs);
    const double t = now_s() - t0;
    if (!out.ok()) {
      std::fprintf(stderr, "execute failed: %s\n", out.status().message().c_str());
      std::exit(1);
    }
    const auto& st = loaded->last_stats();
    if (st.actors_executed != graph.actors().size()) {
      std::fprintf(stderr, "executed %llu actors, expected %zu\n", static_cast<unsigned long long>(st.actors_executed),
                   graph.actors().size());
      std::exit(1);
    }
    if (r < 0) continue;  // warm-up
    times.push_back(t);
    makespans.push_back(st.makespan_s);
    row.steals = st.steals;
    row.transfers = st.transfers;
  }
  row.redflow_s = median(times);
  row.redflow_makespan_s = median(makespans);
}

// ------------------------------------------------------------------ oneTBB

double run_tbb(const Options& o, bool fanout, unsigned threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
  tbb::flow::graph g;
  auto body = [](const tbb::flow::continue_msg&) {};
  std::vector<std::unique_ptr<Node>> nodes;
  nodes.reserve(o.n + 1);
  for (std::size_t i = 0; i < (fanout ? o.n + 1 : o.n); ++i) nodes.push_back(std::make_unique<Node>(g, body));
  if (fanout) {
    for (std::size_t i = 1; i < nodes.size(); ++i) tbb::flow::make_edge(*nodes[0], *nodes[i]);
  } else {
    for (std::size_t i = 0; i + 1 < nodes.size(); ++i) tbb::flow::make_edge(*nodes[i], *nodes[i + 1]);
  }
  std::vector<double> times;
  for (int r = -1; r < o.runs; ++r) {
    const double t0 = now_s();
    nodes[0]->try_put(tbb::flow::continue_msg());
    g.wait_for_all();
    const double t = now_s() - t0;
    if (r >= 0) times.push_back(t);
  }
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  redflow::Registry reg;
  reg.add("empty", [](redflow::ActorContext&) {});

  std::printf("overhead: n=%zu runs=%d (median, after 1 warm-up) data bytes=%zu hardware threads=%u\n", o.n, o.runs,
              o.bytes, std::thread::hardware_concurrency());
  std::printf("%-7s %-6s %5s %9s %14s %14s %10s %8s %9s %8s\n", "shape", "sched", "tiles", "actors", "redflow ns/act",
              "tbb ns/act", "ratio", "steals", "transfers", "load s");
  std::vector<Row> rows;
  for (bool fanout : {false, true}) {
    if (!o.shape.empty() && o.shape != (fanout ? "fanout" : "chain")) continue;
    const redflow::Graph graph = fanout ? fanout_graph(o.n, o.bytes) : chain_graph(o.n, o.bytes);
    const std::size_t actors = graph.actors().size();
    for (unsigned tiles : o.tiles) {
      const double tbb_s = o.tbb ? run_tbb(o, fanout, tiles) : 0.0;
      for (redflow::Scheduler sched : {redflow::Scheduler::kHeft, redflow::Scheduler::kSteal}) {
        if (!o.sched.empty() && o.sched != redflow::to_string(sched)) continue;
        Row row;
        row.shape = fanout ? "fanout" : "chain";
        row.scheduler = redflow::to_string(sched);
        row.tiles = tiles;
        row.actors = actors;
        row.tbb_s = tbb_s;
        run_redflow(o, graph, reg, sched, tiles, row);
        const double rf = row.redflow_s * 1e9 / static_cast<double>(actors);
        const double tb = row.tbb_s * 1e9 / static_cast<double>(actors);
        std::printf("%-7s %-6s %5u %9zu %14.1f %14.1f %10.2f %8llu %9llu %8.2f\n", row.shape.c_str(),
                    row.scheduler.c_str(), tiles, actors, rf, tb, row.tbb_s / row.redflow_s,
                    static_cast<unsigned long long>(row.steals), static_cast<unsigned long long>(row.transfers),
                    row.load_s);
        std::fflush(stdout);
        rows.push_back(row);
      }
    }
  }

  if (!o.json.empty()) {
    nlohmann::json j;
    j["n"] = o.n;
    j["runs"] = o.runs;
    j["bytes"] = o.bytes;
    j["hardware_threads"] = std::thread::hardware_concurrency();
    j["results"] = nlohmann::json::array();
    for (const Row& r : rows) {
      j["results"].push_back({{"shape", r.shape},
                              {"scheduler", r.scheduler},
                              {"tiles", r.tiles},
                              {"actors", r.actors},
                              {"redflow_s", r.redflow_s},
                              {"redflow_makespan_s", r.redflow_makespan_s},
                              {"redflow_ns_per_actor", r.redflow_s * 1e9 / static_cast<double>(r.actors)},
                              {"tbb_s", r.tbb_s},
                              {"tbb_ns_per_actor", r.tbb_s * 1e9 / static_cast<double>(r.actors)},
                              {"ratio_tbb_over_redflow", r.tbb_s / r.redflow_s},
                              {"steals", r.steals},
                              {"transfers", r.transfers},
                              {"load_s", r.load_s}});
    }
    std::ofstream f(o.json);
    f << j.dump(2) << "\n";
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", o.json.c_str());
      return 1;
    }
  }
  return 0;
}
