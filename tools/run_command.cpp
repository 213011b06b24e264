// `redflow run`: load a graph, execute it (possibly many times), write its outputs and stats.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <map>
#include <thread>

#include "cli_common.hpp"
#include "progress.hpp"

namespace redflow::cli {

namespace {

struct RunArgs {
  std::string graph;
  std::vector<std::string> inputs, outputs;
  RuntimeArgs runtime;
  std::string redundancy = "none";
  unsigned repeat = 1;
  std::string stats, trace, gantt;
  bool print = false;
  std::string listen;
  unsigned min_tiles = 0;
  double tile_wait_s = 30, heartbeat_timeout_s = 2;
  bool tiles_given = false;
};

int run(const RunArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.runtime.libs); !s.ok()) return fail(s);
  auto configs = parse_redundancy_list(a.redundancy);
  if (!configs.ok()) return fail(Status::InvalidArgument("--redundancy: " + configs.status().message()));
  auto options = runtime_options(a.runtime);
  if (!options.ok()) return fail(options.status());
  options->redundancy = configs->front();
  options->trace = !a.trace.empty() || !a.gantt.empty();
  options->time_actors = !a.stats.empty();  // busy_s is in the stats
  if (!a.listen.empty()) {
    if (a.min_tiles == 0) return fail(Status::InvalidArgument("--listen needs --min-tiles N (how many worker processes to wait for)"));
    // --tiles counts local tiles here (default none): the runtime counts remote ones too.
    options->tiles = (a.tiles_given ? a.runtime.tiles : 0) + a.min_tiles;
    options->listen = a.listen;
    options->min_remote_tiles = a.min_tiles;
    options->tile_wait_s = a.tile_wait_s;
    options->heartbeat_timeout_s = a.heartbeat_timeout_s;
    options->on_listening = [n = a.min_tiles](const std::string& endpoint) {
      fmt::print(stderr, "redflow: listening on {}; waiting for {} remote tile(s): redflow tile --connect {}\n", endpoint, n, endpoint);
    };
  }
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  // Graph errors first (validation in load), then the files that feed it.
  Runtime rt(*options);
  auto loaded = rt.load(*graph, reg);
  if (!loaded.ok()) return fail(loaded.status());
  for (Redundancy r : *configs)
    if (Status s = loaded->usable(r); !s.ok()) return fail(Status::InvalidArgument("--redundancy " + std::string(to_string(r)) + ": " + s.message()));
  warn_unprotected(*loaded, *configs);
  auto input_files = read_inputs(*graph, a.inputs);
  if (!input_files.ok()) return fail(input_files.status());
  const Inputs& inputs = input_files->inputs;
  auto output_files = read_output_bindings(*graph, a.outputs);
  if (!output_files.ok()) return fail(output_files.status());


  Outputs outputs;
  double total = 0;
  ExecutionStats totals;
  Progress progress("run", a.repeat);  // drawn only if stderr is a terminal
  for (unsigned i = 0; i < a.repeat; ++i) {
    // A comma list of configurations applies run by run, cycling: the loaded graph is not reloaded.
    ExecuteOptions eo;
    eo.redundancy = (*configs)[i % configs->size()];
    auto out = loaded->execute(inputs, eo);
    if (!out.ok()) {
      // Outputs and stats stay unwritten, but the trace and chart of a failed execution help most now
      // (an execution refused before it started, e.g. for a missing input, has none).
      if (!loaded->last_trace().failure.empty())
        if (Status s = write_trace_files(*loaded, a.trace, a.gantt); !s.ok()) fail(s);
      return fail(out.status());
    }
    total += loaded->last_stats().makespan_s;
    totals.injected_faults += loaded->last_stats().injected_faults;
    totals.detected_faults += loaded->last_stats().detected_faults;
    totals.reexecutions += loaded->last_stats().reexecutions;
    totals.lost_tiles += loaded->last_stats().lost_tiles;
    totals.recomputed_actors += loaded->last_stats().recomputed_actors;
    outputs = std::move(*out);
    progress.advance();
  }
  progress.finish();
  // Everything ran: only now write files, so a failed run leaves none behind.
  for (const auto& [name, file] : *output_files) {
    const auto bytes = output_file_bytes(graph->data(*graph->find_data(name)), file, outputs.at(name));
    if (Status s = write_file(file, bytes.data(), bytes.size()); !s.ok()) return fail(s);
  }
  const auto& st = loaded->last_stats();
  if (!a.stats.empty()) {
    std::string json = st.to_json();
    if (Status s = write_file(a.stats, json.data(), json.size()); !s.ok()) return fail(s);
  }
  if (Status s = write_trace_files(*loaded, a.trace, a.gantt); !s.ok()) return fail(s);
  if (a.print)
    for (const auto& [name, bytes] : outputs) print_values(name, bytes, graph->data(*graph->find_data(name)).type);
  fmt::print(stderr, "redflow: {} actors on {} tiles ({}, redundancy {}{}), {} run(s), last {:.3f} ms, mean {:.3f} ms, {} transfers, {} steals\n",
             st.actors_executed, st.tiles.size(), st.scheduler, st.redundancy,
             st.unprotected_actors ? fmt::format(", {} actor(s) unprotected", st.unprotected_actors) : std::string(), a.repeat,
             st.makespan_s * 1e3, total / a.repeat * 1e3, st.transfers, st.steals);
  if (options->faults.any() || totals.reexecutions > 0)
    fmt::print(stderr, "redflow: faults over all runs: {} injected, {} detected, {} re-executions; quarantined tiles: {}; "
               "{} tile(s) lost, {} actor(s) recomputed\n",
               totals.injected_faults, totals.detected_faults, totals.reexecutions,
               st.quarantined_tiles.empty() ? std::string("none") : fmt::format("{}", fmt::join(st.quarantined_tiles, ", ")),
               totals.lost_tiles, totals.recomputed_actors);
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto ra = std::make_shared<RunArgs>();
  auto* run_cmd = app.add_subcommand("run", "Load a graph, execute it (possibly many times), write its outputs, stats and trace.");
  run_cmd->footer("Examples:\n"
                  "  redflow run examples/demo/pipeline.dot --input A=examples/demo/A.bin --print\n"
                  "  redflow run g.dot --input X=x.bin --output Y=y.bin --scheduler steal --repeat 100 --stats s.json --trace t.json\n"
                  "  redflow run g.dot -i X=x.bin --listen 'tcp://127.0.0.1:*' --min-tiles 2 --tiles 1   (then: redflow tile --connect ADDR)");
  run_cmd->add_option("graph", ra->graph, "Extended DOT file (docs/dot.md)")->type_name("GRAPH.dot")->required()->check(readable_file());
  run_cmd->add_option("--input,-i", ra->inputs, "Input data node NAME from FILE: raw little-endian bytes, or a NumPy array if FILE ends in .npy (repeatable; every input is required)")
      ->type_name("NAME=FILE");
  run_cmd->add_option("--output,-o", ra->outputs, "Write output data node NAME to FILE: raw bytes, or a NumPy array if FILE ends in .npy (repeatable; default: outputs are not written)")
      ->type_name("NAME=FILE");
  add_runtime_options(run_cmd, ra->runtime);
  run_cmd->add_option("--redundancy", ra->redundancy,
                      "none, 2x-same, 3x-same, 2x-diff or 3x-diff; a comma list is applied run by run with --repeat (an actor's own redundancy= wins)")
      ->capture_default_str();
  run_cmd->add_option("--repeat", ra->repeat, "Execute the loaded graph this many times (schedules are computed once)")
      ->check(CLI::Range(1u, 1u << 30))
      ->capture_default_str();
  run_cmd->add_option("--stats", ra->stats, "Write statistics of the last execution as JSON (schema: docs/runtime.md, section Stats JSON; default: none)")
      ->type_name("FILE.json");
  run_cmd->add_option("--trace", ra->trace, "Write the last execution as a Chrome trace for ui.perfetto.dev (docs/guide.md; default: none)")
      ->type_name("FILE.json");
  run_cmd->add_option("--gantt", ra->gantt, "Write the last execution as a Gantt chart (default: none)")->type_name("FILE.svg");
  run_cmd->add_option("--listen", ra->listen,
                      "Serve remote tiles: bind a ZeroMQ endpoint (e.g. tcp://127.0.0.1:* for a free port, printed) for worker "
                      "processes (`redflow tile --connect`); --tiles then counts local tiles and defaults to 0 (docs/remote.md; default: none, "
                      "every tile local)")
      ->type_name("ADDR");
  run_cmd->add_option("--min-tiles", ra->min_tiles, "With --listen (required there): remote tiles to wait for before running")->check(CLI::Range(1u, 1024u));
  run_cmd->add_option("--tile-wait", ra->tile_wait_s, "With --listen: seconds to wait for them")->check(CLI::Range(0.01, 86400.0))->capture_default_str();
  run_cmd->add_option("--heartbeat-timeout", ra->heartbeat_timeout_s,
                      "With --listen: seconds of silence after which a worker is lost and its work re-run elsewhere")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  run_cmd->add_flag("--print", ra->print, "Print every output's values by its type= (int32 when untyped; default: off)");

  return {run_cmd, [ra, run_cmd] {
            ra->tiles_given = run_cmd->count("--tiles") > 0;
            return run(*ra);
          }};
}

}  // namespace redflow::cli
