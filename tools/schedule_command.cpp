// `redflow schedule`: the offline (HEFT) schedule of a graph, as a table and
// as a Gantt chart.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "cli_common.hpp"

namespace redflow::cli {

namespace {

struct ScheduleArgs {
  std::string graph;
  std::vector<std::string> libs;
  std::string scheduler = "heft";
  std::string redundancy = "none";
  unsigned tiles = std::max(1u, std::thread::hardware_concurrency());
  unsigned cores_per_tile = 1;
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::string svg;
  bool quiet = false;
  bool calibrate = false;     // measure again now, ignoring the cache
  bool no_calibrate = false;  // the bare model: no per-actor overhead
  CostArgs costs;
};

std::string seconds(double s) {
  if (s == 0) return "0";
  if (s >= 1) return fmt::format("{:.4g} s", s);
  if (s >= 1e-3) return fmt::format("{:.4g} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.4g} µs", s * 1e6);
  return fmt::format("{:.4g} ns", s * 1e9);
}

int schedule_main(const ScheduleArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.libs); !s.ok()) return fail(s);
  const auto redundancy = parse_redundancy(a.redundancy);
  if (!redundancy)
    return usage_error(Status::InvalidArgument("--redundancy " + a.redundancy + ": expected none, 2x-same, 3x-same, 2x-diff or 3x-diff"));
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  RuntimeOptions o;
  o.tiles = a.tiles;
  o.cores_per_tile = a.cores_per_tile;
  o.slots = a.slots;
  o.slot_bytes = a.slot_bytes;
  o.redundancy = *redundancy;
  if (a.calibrate && a.no_calibrate) return usage_error(Status::InvalidArgument("--calibrate and --no-calibrate contradict each other: pick one"));
  std::string calibration = "per-actor runtime overhead (about a microsecond) is not modelled (--no-calibrate), so small graphs run longer "
                            "than estimated";
  if (!a.no_calibrate) {
    // Estimates in the range of measured makespans by default; the measurement is cached, so only the first use pays it.
    auto overhead = actor_overhead(a.calibrate);
    if (!overhead.ok()) return fail(overhead.status());
    o.actor_overhead_s = overhead->seconds;
    calibration = fmt::format("plus {} per actor, {} on this machine ({})", seconds(overhead->seconds),
                              overhead->cached ? "measured earlier" : "measured now", overhead->cache);
  }
  auto costs = LearnedCosts::open(a.costs, *graph, reg, o.cores_per_tile);
  if (!costs.ok()) return usage_error(costs.status());
  Runtime rt(o);
  auto loaded = rt.load(*graph, reg);
  if (!loaded.ok()) return load_refused(loaded.status());
  if (Status s = loaded->usable(*redundancy); !s.ok()) return usage_error(Status::InvalidArgument("--redundancy " + a.redundancy + ": " + s.message()));
  const Graph& executed = **loaded->executed_graph(*redundancy);  // usable: checked above
  const Schedule& schedule = **loaded->heft_schedule(*redundancy);
  spdlog::debug("HEFT schedule of '{}' under {}: {} actors, estimated makespan {} s", executed.name(), a.redundancy,
                executed.actors().size(), schedule.makespan);

  if (!a.quiet) {
    fmt::print("HEFT schedule of '{}' on {} tiles + driver, redundancy {}: estimated makespan {}\n", executed.name(), a.tiles,
               a.redundancy, seconds(schedule.makespan));
    // Estimates are only as good as the model: say what it is, so nobody compares them with measured times unawares.
    const MachineModel m = rt.machine();
    fmt::print("estimates: `work` hints (operations) at {:g} operations/s per core, transfers at {:g} GB/s plus {} each, {} (docs/scheduling.md)\n",
               m.ops_per_second_per_core, m.bytes_per_second / 1e9, seconds(m.transfer_latency_s), calibration);
    if (const std::string line = costs->describe(); !line.empty()) fmt::print("costs: {} (redflow run --learn-costs measures them)\n", line);
    std::vector<ActorId> order(std::min(schedule.actors.size(), executed.actors().size()));
    for (ActorId i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](ActorId x, ActorId y) { return schedule.actors[x].start < schedule.actors[y].start; });
    std::size_t w = 5, f = 8;
    for (ActorId i : order) w = std::max(w, executed.actor(i).name.size()), f = std::max(f, executed.actor(i).function.size());
    fmt::print("{:<{}}  {:<{}}  {:<7}  {:>10}  {:>10}\n", "actor", w, "function", f, "place", "start", "finish");
    for (ActorId i : order) {
      const auto& sa = schedule.actors[i];
      fmt::print("{:<{}}  {:<{}}  {:<7}  {:>10}  {:>10}\n", executed.actor(i).name, w, executed.actor(i).function, f,
                 sa.tile == kDriverTile ? std::string("driver") : fmt::format("tile {}", sa.tile), seconds(sa.start),
                 seconds(sa.finish));
    }
  }
  if (!a.svg.empty()) {
    GanttOptions go;
    go.title = "HEFT schedule of '" + executed.name() + "'" + (*redundancy == Redundancy::kNone ? "" : ", redundancy " + a.redundancy);
    const std::string svg = to_gantt_svg(schedule, executed, a.tiles, go);
    if (Status s = write_file(a.svg, svg.data(), svg.size()); !s.ok()) return fail(s);
    spdlog::info("wrote the Gantt chart of the schedule to {}", a.svg);
  }
  return 0;
}

}  // namespace

Command add_schedule_command(CLI::App& app) {
  auto a = std::make_shared<ScheduleArgs>();
  auto* sub = app.add_subcommand("schedule", "Compute a graph's offline (HEFT) schedule; print it, and draw it as a Gantt chart.");
  sub->footer("Examples:\n"
              "  redflow schedule examples/demo/pipeline.dot --tiles 2 --svg schedule.svg\n"
              "  redflow schedule g.dot --tiles 4 --redundancy 3x-diff --svg g-3x.svg --quiet");
  sub->add_option("graph", a->graph, "Extended DOT file (docs/dot.md)")->type_name("GRAPH.dot")->required()->check(readable_file());
  sub->add_option("--tiles", a->tiles, "Compute tiles to plan for (default: one per hardware thread)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub->add_option("--cores-per-tile", a->cores_per_tile, "Worker threads per tile (HEFT divides work hints by it)")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  sub->add_option("--slots", a->slots, "Memory slots per tile (actors needing more run on the driver)")
      ->check(CLI::Range(2u, 1u << 20))
      ->capture_default_str();
  sub->add_option("--slot-bytes", a->slot_bytes, "Bytes per slot; actors touching larger data nodes run on the driver")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40))
      ->capture_default_str();
  sub->add_option("--scheduler", a->scheduler, "Offline scheduler (work stealing has no offline schedule: see run --gantt)")
      ->check(CLI::IsMember({"heft"}))
      ->capture_default_str();
  sub->add_option("--redundancy", a->redundancy, "Redundancy configuration: none, 2x-same, 3x-same, 2x-diff or 3x-diff")
      ->check(CLI::IsMember({"none", "2x-same", "3x-same", "2x-diff", "3x-diff"}))
      ->capture_default_str();
  sub->add_option("--svg", a->svg, "Write the schedule as a Gantt chart to this file (default: none)")->type_name("FILE.svg");
  sub->add_flag("--quiet,-q", a->quiet, "Do not print the schedule table (default: off)");
  sub->add_flag("--calibrate", a->calibrate,
                "Measure this machine's per-actor overhead again now and rewrite the cache (default: measured at first use, then read "
                "from ~/.cache/redflow)");
  sub->add_flag("--no-calibrate", a->no_calibrate,
                "Use the bare machine model: no per-actor overhead, estimates far below measured times for small actors (default: off)");
  add_cost_options(sub, a->costs, /*can_learn=*/false);
  sub->add_option("--lib", a->libs, "Actor plugin .so to load (repeatable; docs/actors.md; default: built-in actors only)")
      ->type_name("PLUGIN.so")
      ->check(readable_file());
  return {sub, [a] { return schedule_main(*a); }};
}

}  // namespace redflow::cli
