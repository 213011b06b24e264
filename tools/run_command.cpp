// `redflow run`: load a graph, execute it (possibly many times), write its outputs and stats.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "cli_common.hpp"
#include "cluster_flags.hpp"
#include "cluster_launch.hpp"
#include "dashboard_flag.hpp"
#include "net/tile_worker.hpp"
#include "progress.hpp"
#include "report_flag.hpp"
#include "runtime/tile_places.hpp"

namespace redflow::cli {

namespace {

struct RunArgs {
  std::string graph;
  std::vector<std::string> inputs, outputs;
  RuntimeArgs runtime;
  std::string redundancy = "none";
  unsigned repeat = 1;
  std::string stats, trace, gantt, report_json;
  bool print = false;
  std::string resume_file;  // --resume-file: executions completed, kept across starts of the same run
  ClusterOptions cluster;  // --listen, --min-workers, --max-workers, --wait, --heartbeat-timeout, --key, --authorized-keys
  unsigned pipeline_depth = 32;
  bool no_peer_transfers = false;
  double speculate_after_s = 0.1;
  bool tiles_given = false;
  std::string server_key_file;  // --server-key (a launched worker)
  LaunchArgs launch;
  DashboardArgs dashboard;
  CostArgs costs;
};

// A launched starter that lost the race for the driver: it serves one tile,
// with the run's own slot and core flags and plugins, until the driver's BYE.
int serve_tile(const RunArgs& a, const LaunchPlan& plan, const Registry& reg) {
  net::TileWorkerOptions w;
  w.connect = plan.driver.endpoint;
  w.cores = a.runtime.cores_per_tile;
  w.slots = a.runtime.slots;
  w.slot_bytes = a.runtime.slot_bytes;
  w.security = {.key_file = a.cluster.key_file, .server_public_key_file = a.server_key_file};
  if (w.security.server_public_key_file.empty()) w.security.server_public_key = plan.driver.server_public_key;
  std::string origin = "built-in";
  for (const auto& lib : a.runtime.libs) origin += "," + lib;
  fmt::print(stderr, "redflow: {} serves a tile of the driver at {}\n", plan.who, w.connect);
  if (Status s = net::run_tile_worker(w, reg, origin); !s.ok()) return fail(s);
  return 0;
}

// The end of the summary line: every fault the runs survived (over all of
// them; the quarantine as it stands after the last), so a recovered run does
// not read as an uneventful one. "" when there was none.
std::string faults_survived(const ExecutionStats& totals, const ExecutionStats& last) {
  std::vector<std::string> parts;
  auto count = [&](std::uint64_t n, const char* one, const char* many) {
    if (n > 0) parts.push_back(fmt::format("{} {}", n, n == 1 ? one : many));
  };
  count(totals.lost_tiles, "tile lost", "tiles lost");
  count(totals.recomputed_actors, "actor recomputed", "actors recomputed");
  count(totals.detected_faults, "wrong replica result outvoted", "wrong replica results outvoted");
  count(totals.reexecutions, "re-execution", "re-executions");
  count(totals.corrupted_transfers, "corrupted transfer caught", "corrupted transfers caught");
  count(totals.reinstated_tiles.size(), "tile back in service after a known-answer test", "tiles back in service after known-answer tests");
  std::vector<unsigned> for_good;
  for (unsigned t : last.quarantined_tiles)
    if (std::find(last.probation_tiles.begin(), last.probation_tiles.end(), t) == last.probation_tiles.end()) for_good.push_back(t);
  if (!last.probation_tiles.empty()) parts.push_back(runtime::describe_tiles(last.probation_tiles) + " on probation");
  if (!for_good.empty()) parts.push_back(runtime::describe_tiles(for_good) + " quarantined");
  std::string out = parts.empty() ? std::string() : fmt::format("; survived: {}", fmt::join(parts, ", "));
  // Never silent: fewer replicas than asked for is said apart from what was survived.
  if (totals.skipped_replicas > 0)
    out += fmt::format("; DEGRADED: {} replica(s) not run for lack of distinct tiles in service (their actors were voted on the "
                       "replicas left; --require-protection fails such a run)",
                       totals.skipped_replicas);
  return out;
}

// --resume-file FILE holds "K N": K of this run's N executions completed.
// The executions an earlier start of the same run completed (0 when FILE
// does not exist, or is another run's: a different N).
unsigned executions_done(const std::string& file, unsigned repeat) {
  std::ifstream in(file);
  unsigned done = 0, of = 0;
  if (!(in >> done >> of)) return 0;
  if (of != repeat || done > repeat) {
    fmt::print(stderr, "redflow: --resume-file {} is of another run ({} of {} executions, this one has {}): starting from the first\n", file,
               done, of, repeat);
    return 0;
  }
  return done;
}

int run(const RunArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.runtime.libs); !s.ok()) return fail(s);
  // Any starter may become the driver: refuse a bad --listen before the race for the address file.
  if (Status s = a.cluster.validate(); !s.ok()) return usage_error(s);
  auto plan = plan_launch(a.launch);
  if (!plan.ok()) return fail(plan.status());
  if (plan->worker) return serve_tile(a, *plan, reg);
  ClusterOptions cluster = a.cluster;
  if (plan->launched) {
    if (cluster.listen.empty()) cluster.listen = "tcp://127.0.0.1:*";
    if (cluster.min_workers == 0) cluster.min_workers = plan->tiles;
    if (cluster.min_workers == 0)
      return usage_error(Status::InvalidArgument("--address-file needs --min-workers N: how many other starters of this command to wait for"));
  }
  auto configs = parse_redundancy_list(a.redundancy);
  if (!configs.ok()) return usage_error(Status::InvalidArgument("--redundancy: " + configs.status().message()));
  auto options = runtime_options(a.runtime);
  if (!options.ok()) return usage_error(options.status());
  options->redundancy = configs->front();
  options->trace = !a.trace.empty() || !a.gantt.empty();
  options->time_actors = !a.stats.empty();  // busy_s is in the stats
  if (!cluster.listen.empty()) {
    if (cluster.min_workers == 0) return usage_error(Status::InvalidArgument("--listen needs --min-workers N (how many worker processes to wait for)"));
    // --tiles counts local tiles here (default none): the runtime counts remote ones too.
    options->tiles = (a.tiles_given ? a.runtime.tiles : 0) + cluster.min_workers;
    options->pipeline_depth = a.pipeline_depth;
    options->peer_transfers = !a.no_peer_transfers;
    options->speculate_after_s = a.speculate_after_s;
    PublishedAddress* address = plan->address.get();
    std::string libs;  // the worker needs the driver's plugins to run its actors, and with keys its own key and the driver's public one
    if (!cluster.key_file.empty()) {
      const std::string& k = cluster.key_file;
      libs += " --key WORKER.key --server-key ";
      libs += k.ends_with(".key") ? k.substr(0, k.size() - 4) + ".pub" : k + ".pub";
    }
    for (const auto& lib : a.runtime.libs) libs += " --lib " + lib;
    const net::SecurityOptions security{.key_file = cluster.key_file, .authorized_keys_file = cluster.authorized_keys_file};
    cluster.on_listening = [n = cluster.min_workers, address, security, libs](const std::string& endpoint) {
      if (address != nullptr) {
        if (Status s = address->publish(endpoint, security); !s.ok()) spdlog::error("redflow: {}", s.message());
        fmt::print(stderr, "redflow: listening on {} (published in {}); waiting for {} remote tile(s)\n", endpoint, address->path(), n);
        return;
      }
      fmt::print(stderr, "redflow: listening on {}; waiting for {} remote tile(s): {} worker --connect {}{}\n", endpoint, n, command_name(), endpoint, libs);
    };
    options->cluster = cluster;
  }
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  // HEFT plans the actors without a work= hint with their measured costs
  // (set as their work; a kind does not depend on it, so the model still
  // learns from this graph).
  auto costs = LearnedCosts::open(a.costs, *graph, reg, options->cores_per_tile);
  if (!costs.ok()) return usage_error(costs.status());
  if (costs->learning()) options->trace = true;
  if (const std::string line = costs->describe(); !line.empty() && options->scheduler == Scheduler::kHeft)
    fmt::print(stderr, "redflow: {}\n", line);
  // Whatever was measured before a failure is worth keeping: the runs were real.
  auto save_costs = [&] {
    if (!costs->learning()) return;
    auto said = costs->save();
    if (!said.ok()) fail(said.status());
    else fmt::print(stderr, "redflow: {}\n", *said);
  };
  auto dashboard = RunDashboard::start(a.dashboard, graph->name(), a.repeat);
  if (!dashboard.ok()) return usage_error(dashboard.status());
  // A lost or quarantined tile shows on the page when the runtime marks it, not after the execution.
  if (RunDashboard* d = dashboard->get()) options->on_mark = [d](const TracedMark& m) { d->mark(m); };
  // Graph errors first (validation in load), then the files that feed it.
  Runtime rt(*options);
  auto loaded = rt.load(*graph, reg);
  if (!loaded.ok()) return load_refused(loaded.status());
  for (Redundancy r : *configs)
    if (Status s = loaded->usable(r); !s.ok()) return usage_error(Status::InvalidArgument("--redundancy " + std::string(to_string(r)) + ": " + s.message()));
  warn_unprotected(*loaded, *configs);
  auto input_files = read_inputs(*graph, a.inputs);
  if (!input_files.ok()) return usage_error(input_files.status());
  const Inputs& inputs = input_files->inputs;
  // A value the command line leaves out is the command line's fault (exit 2), named before anything runs.
  for (const DataNode& n : graph->data())
    if (n.kind == DataKind::kInput && !inputs.count(n.name))
      return usage_error(Status::InvalidArgument("input data node '" + n.name + "' was not given: add --input " + n.name + "=FILE"));
  auto output_files = read_output_bindings(*graph, a.outputs);
  if (!output_files.ok()) return usage_error(output_files.status());


  // Resumed: the executions an earlier start completed are not run again, but
  // the last one always runs here, since the outputs are written only at the end.
  unsigned first = 0;
  if (!a.resume_file.empty()) {
    first = std::min(executions_done(a.resume_file, a.repeat), a.repeat - 1);
    if (first > 0) fmt::print(stderr, "redflow: resuming after execution {} of {} (--resume-file {})\n", first, a.repeat, a.resume_file);
  }
  const unsigned runs = a.repeat - first;
  Outputs outputs;
  double total = 0;
  ExecutionStats totals;
  Progress progress("run", runs);  // drawn only if stderr is a terminal
  for (unsigned i = first; i < a.repeat; ++i) {
    // A comma list of configurations applies run by run, cycling: the loaded graph is not reloaded.
    ExecuteOptions eo;
    eo.redundancy = (*configs)[i % configs->size()];
    // The tiles page's Gantt chart, while it is open: an execution every few seconds is traced for it.
    const bool for_gantt = *dashboard && (*dashboard)->wants_trace();
    if (for_gantt) eo.trace = true;
    const auto started = std::chrono::steady_clock::now();
    auto out = loaded->execute(inputs, eo);
    if (for_gantt) {
      auto executed = loaded->executed_graph(*eo.redundancy);
      (*dashboard)->record_trace(loaded->last_trace(), executed.ok() ? *executed : nullptr, i + 1,
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    if (costs->learning()) costs->learn(*graph, loaded->last_trace(), reg);
    if (!out.ok()) {
      save_costs();
      // Outputs and stats stay unwritten, but the trace and chart of a failed execution help most now
      // (an execution refused before it started, e.g. for a missing input, has none).
      if (!loaded->last_trace().failure.empty())
        if (Status s = write_trace_files(*loaded, a.trace, a.gantt); !s.ok()) fail(s);
      const int code = fail(out.status());
      if (*dashboard) (*dashboard)->end(out.status());
      return code;
    }
    total += loaded->last_stats().makespan_s;
    totals.injected_faults += loaded->last_stats().injected_faults;
    totals.detected_faults += loaded->last_stats().detected_faults;
    totals.reexecutions += loaded->last_stats().reexecutions;
    totals.lost_tiles += loaded->last_stats().lost_tiles;
    totals.recomputed_actors += loaded->last_stats().recomputed_actors;
    totals.corrupted_transfers += loaded->last_stats().corrupted_transfers;
    totals.skipped_replicas += loaded->last_stats().skipped_replicas;
    totals.probation_tests += loaded->last_stats().probation_tests;
    for (unsigned t : loaded->last_stats().reinstated_tiles) totals.reinstated_tiles.push_back(t);
    outputs = std::move(*out);
    if (*dashboard) (*dashboard)->record(loaded->last_stats());
    progress.advance();
    if (!a.resume_file.empty()) {
      const std::string done = fmt::format("{} {}\n", i + 1, a.repeat);
      if (Status s = write_file(a.resume_file, done.data(), done.size()); !s.ok()) return fail(s);
    }
  }
  progress.finish();
  save_costs();
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
  if (Status s = write_report(a.report_json, report(st, graph->name())); !s.ok()) return fail(s);
  if (a.print)
    for (const auto& [name, bytes] : outputs) print_values(name, bytes, graph->data(*graph->find_data(name)).type);
  fmt::print(stderr, "redflow: {} actors on {} tiles ({}, redundancy {}{}), {} run(s), last {:.3f} ms, mean {:.3f} ms, {} transfers, {} steals{}\n",
             st.actors_executed, st.tiles.size(), st.scheduler, st.redundancy,
             st.unprotected_actors ? fmt::format(", {} actor(s) unprotected", st.unprotected_actors) : std::string(), runs,
             st.makespan_s * 1e3, total / runs * 1e3, st.transfers, st.steals, faults_survived(totals, st));
  if (options->faults.any() || totals.reexecutions > 0)
    fmt::print(stderr, "redflow: faults over all runs: {} injected, {} detected, {} re-executions; quarantined: {}; on probation: {}; "
               "{} known-answer test(s); {} replica(s) skipped; {} tile(s) lost, {} actor(s) recomputed\n",
               totals.injected_faults, totals.detected_faults, totals.reexecutions,
               runtime::describe_tiles(st.quarantined_tiles), runtime::describe_tiles(st.probation_tiles), totals.probation_tests,
               totals.skipped_replicas, totals.lost_tiles, totals.recomputed_actors);
  if (*dashboard) (*dashboard)->end(Status::Ok());
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto ra = std::make_shared<RunArgs>();
  auto* run_cmd = app.add_subcommand("run", "Load a graph, execute it (possibly many times), write its outputs, stats and trace.");
  run_cmd->footer("Examples:\n"
                  "  redflow run examples/demo/pipeline.dot --input A=examples/demo/A.bin --print\n"
                  "  redflow run g.dot --input X=x.bin --output Y=y.bin --scheduler steal --repeat 100 --stats s.json --trace t.json\n"
                  "  redflow run g.dot -i X=x.bin --listen 'tcp://127.0.0.1:*' --min-workers 2 --tiles 1   (then: redflow worker --connect ADDR)\n"
                  "  redflow run g.dot -i X=x.bin --listen 'tcp://0.0.0.0:7000' --min-workers 4 --key driver.key --authorized-keys workers.txt\n"
                  "  mpirun -n 3 redflow run g.dot -i X=x.bin -o Y=y.bin --rendezvous-dir $HOME/jobs   (rank 0 drives, 2 tiles;\n"
                  "    Open MPI needs --allow-run-as-root when run as root and --oversubscribe for more ranks than cores)\n"
                  "  redflow run g.dot -i X=x.bin -o Y=y.bin --address-file /shared/job.addr --min-workers 2   (start it 3 times)\n"
                  "With --listen, --tiles counts the local tiles beside the remote ones, and defaults to 0 (docs/remote.md).\n"
                  "Exit status: 0 every execution succeeded; 3 fault tolerance gave up (\"gave up under faults: ...\": replicas\n"
                  "that never agreed, too few tiles in service, a poisoned actor; docs/redundancy.md); 2 the command line was wrong\n"
                  "(nothing ran); 1 any other error.");
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
  run_cmd->add_option("--resume-file", ra->resume_file,
                      "Keep in FILE how many of the --repeat executions completed; a run started again with the same FILE and "
                      "--repeat runs only the rest (the last one always: outputs are written at the end). The server gives each "
                      "graph job one, so a job resumes after a server restart (default: none)")
      ->type_name("FILE");
  run_cmd->add_option("--stats", ra->stats, "Write statistics of the last execution as JSON (schema: docs/runtime.md, section Stats JSON; default: none)")
      ->type_name("FILE.json");
  run_cmd->add_option("--trace", ra->trace, "Write the last execution as a Chrome trace for ui.perfetto.dev (docs/guide.md; default: none)")
      ->type_name("FILE.json");
  add_report_flag(run_cmd, ra->report_json);
  run_cmd->add_option("--gantt", ra->gantt, "Write the last execution as a Gantt chart (default: none)")->type_name("FILE.svg");
  add_cluster_flags(run_cmd, ra->cluster, {.workers = "remote tiles (worker processes)", .joins = true});
  run_cmd->add_option("--speculate-after", ra->speculate_after_s,
                      "With --listen: an idle tile runs a copy of an actor a worker has run for 4 times its estimate and at least "
                      "this many seconds; the first result is used (docs/remote.md, \"Stragglers\"; 0: never)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  run_cmd->add_option("--pipeline-depth", ra->pipeline_depth,
                      "With --listen: actor messages a worker may have on the wire at once, so dispatch does not wait a round trip "
                      "per actor (docs/remote.md, \"Pipelined dispatch\"; 1: one at a time)")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  run_cmd->add_flag("--no-peer-transfers", ra->no_peer_transfers,
                    "With --listen: relay every transfer through the driver; by default a value on one worker goes straight to "
                    "the worker that needs it (docs/remote.md, \"Transfers\")");
  run_cmd->add_option(net::kServerKeyFlag, ra->server_key_file,
                      "A launched worker: the driver's public key (default: the one in the address file)")
      ->type_name("FILE.pub");
  run_cmd->add_option("--address-file", ra->launch.address_file,
                      "Start this same command several times (a batch queue): the first to create FILE (O_EXCL) drives, "
                      "the others serve it a tile each (with --min-workers: how many; examples/cluster/; default: none)")
      ->type_name("FILE");
  run_cmd->add_option("--rendezvous-dir", ra->launch.rendezvous_dir,
                      "Under mpirun, srun or PMI (rank 0 drives, the others serve tiles): the shared directory for the job's address file")
      ->capture_default_str();
  run_cmd->add_flag("--no-launcher", ra->launch.ignore_launcher,
                    "Ignore mpirun/srun/PMI variables in the environment: a plain run even inside a launched job (default: off)");
  add_dashboard_flags(run_cmd, ra->dashboard);
  add_cost_options(run_cmd, ra->costs, /*can_learn=*/true);
  run_cmd->add_flag("--print", ra->print, "Print every output's values by its type= (int32 when untyped; default: off)");

  return {run_cmd, [ra, run_cmd] {
            ra->tiles_given = run_cmd->count("--tiles") > 0;
            return run(*ra);
          }};
}

}  // namespace redflow::cli
