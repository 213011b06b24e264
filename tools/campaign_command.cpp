// `redflow campaign`: a fault-injection campaign. Runs the graph once without
// faults for reference, then N executions per redundancy configuration with
// the given faults injected, and reports per configuration what was injected,
// detected and corrected, and how many runs ended with silently wrong outputs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "cli_common.hpp"
#include "progress.hpp"

namespace redflow::cli {

namespace {

struct CampaignArgs {
  std::string graph;
  std::vector<std::string> inputs;
  RuntimeArgs runtime;
  std::string redundancy = "none,2x-same,3x-same,2x-diff,3x-diff";
  unsigned runs = 100;
  std::string json;
};

struct Row {
  Redundancy redundancy;
  std::string skipped;  // why the configuration could not run here
  unsigned runs = 0, silent = 0, failed = 0;
  std::uint64_t injected = 0, detected = 0, corrected = 0, reexecutions = 0;
  std::uint64_t crashes = 0, survived = 0, recomputed = 0;  // tiles lost; of them, in runs with the right output
  std::size_t unprotected = 0;  // actors run once on the driver although the configuration asks for redundancy
  std::vector<unsigned> quarantined;
  // Runs after which some tile was out of service for its votes (on
  // probation or for good), runs with replicas skipped for lack of tiles,
  // and tiles put back after a known-answer test.
  unsigned ended_with_tiles_out = 0, degraded = 0;
  std::uint64_t reinstated = 0;
  double seconds = 0;
  std::string first_failure;
};

int campaign(const CampaignArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.runtime.libs); !s.ok()) return fail(s);
  auto configs = parse_redundancy_list(a.redundancy);
  if (!configs.ok()) return usage_error(Status::InvalidArgument("--redundancy: " + configs.status().message()));
  auto faulty = runtime_options(a.runtime);
  if (!faulty.ok()) return usage_error(faulty.status());
  if (!faulty->faults.any()) return usage_error(Status::InvalidArgument("a campaign needs faults to inject: give --inject (e.g. --inject bitflip:p=0.01)"));
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());

  // The fault-free reference, with the same machine.
  RuntimeOptions clean = *faulty;
  clean.faults = FaultInjection{};
  clean.redundancy = Redundancy::kNone;
  Runtime reference_rt(clean);
  auto reference_graph = reference_rt.load(*graph, reg);
  if (!reference_graph.ok()) return fail(reference_graph.status());
  auto files = read_inputs(*graph, a.inputs);
  if (!files.ok()) return usage_error(files.status());
  // Inputs not given on the command line get seeded random bytes, so a campaign needs no data files.
  std::mt19937_64 rng(a.runtime.seed);
  for (const DataNode& d : graph->data()) {
    if (d.kind != DataKind::kInput || files->bytes.count(d.name)) continue;
    std::vector<std::byte> bytes(d.bytes);
    for (auto& b : bytes) b = static_cast<std::byte>(rng());
    files->bytes[d.name] = std::move(bytes);
    fmt::print(stderr, "redflow: input '{}' not given: using {} random bytes (seed {})\n", d.name, d.bytes, a.runtime.seed);
  }
  files->inputs.clear();
  for (const auto& [name, bytes] : files->bytes) files->inputs[name] = bytes;
  auto reference = reference_graph->execute(files->inputs);
  if (!reference.ok()) return fail(reference.status());
  const double reference_ms = reference_graph->last_stats().makespan_s * 1e3;

  std::vector<Row> rows;
  Progress progress("campaign", std::uint64_t{a.runs} * configs->size());  // drawn only if stderr is a terminal
  for (Redundancy r : *configs) {
    Row row;
    row.redundancy = r;
    // A fresh runtime per configuration: quarantines of one do not carry into
    // the next. With crash-tile, a fresh one per run: a lost tile stays lost,
    // so only a new runtime can crash again.
    RuntimeOptions o = *faulty;
    o.redundancy = r;
    const bool crash_per_run = !o.faults.crash_tiles.empty();
    auto rt = std::make_unique<Runtime>(o);
    auto loaded = rt->load(*graph, reg);
    if (!loaded.ok()) {
      row.skipped = loaded.status().message();
      rows.push_back(row);
      progress.advance(a.runs);
      continue;
    }
    progress.note(to_string(r));
    row.unprotected = loaded->unprotected_actors(r).size();
    warn_unprotected(*loaded, {r});
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < a.runs; ++i) {
      if (crash_per_run && i > 0) {
        for (unsigned t : rt->quarantined_tiles()) row.quarantined.push_back(t);
        loaded = Status::Internal("reloading");  // drops the loaded graph: it must go before its runtime
        // A new runtime restarts the fault stream: move its seed on, or every run would flip the same bits.
        RuntimeOptions next = o;
        next.faults.seed = o.faults.seed + i;
        rt = std::make_unique<Runtime>(next);
        loaded = rt->load(*graph, reg);
        if (!loaded.ok()) return fail(loaded.status());
      }
      auto out = loaded->execute(files->inputs);
      const ExecutionStats& st = loaded->last_stats();
      ++row.runs;
      row.injected += st.injected_faults;
      row.detected += st.detected_faults;
      row.reexecutions += st.reexecutions;
      row.crashes += st.lost_tiles;
      row.recomputed += st.recomputed_actors;
      row.ended_with_tiles_out += !st.quarantined_tiles.empty();
      row.degraded += st.degraded();
      row.reinstated += st.reinstated_tiles.size();
      progress.advance();
      if (!out.ok()) {
        ++row.failed;
        if (row.first_failure.empty()) row.first_failure = out.status().ToString();
        continue;
      }
      if (*out != *reference) {
        ++row.silent;
      } else {
        row.corrected += st.detected_faults;
        row.survived += st.lost_tiles;
      }
    }
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (unsigned t : rt->quarantined_tiles()) row.quarantined.push_back(t);
    std::sort(row.quarantined.begin(), row.quarantined.end());
    row.quarantined.erase(std::unique(row.quarantined.begin(), row.quarantined.end()), row.quarantined.end());
    rows.push_back(row);
  }
  progress.finish();

  fmt::print("campaign: {} ({} actors), {} runs per configuration, {} tiles, {}, faults:", graph->name(), graph->actors().size(), a.runs,
             faulty->tiles, a.runtime.scheduler);
  for (const auto& spec : a.runtime.inject) fmt::print(" {}", spec);
  fmt::print("; fault-free reference {:.3f} ms\n\n", reference_ms);
  fmt::print("{:<9} {:>9} {:>9} {:>9} {:>7} {:>7} {:>9} {:>8} {:>8} {:>11} {:>11} {:>9}\n", "config", "injected", "detected", "corrected",
             "silent", "failed", "re-execs", "crashes", "survived", "quarantined", "unprotected", "ms/run");
  nlohmann::json j;
  j["graph"] = a.graph;
  j["runs"] = a.runs;
  j["tiles"] = faulty->tiles;
  j["scheduler"] = a.runtime.scheduler;
  j["inject"] = a.runtime.inject;
  j["reference_ms"] = reference_ms;
  j["configurations"] = nlohmann::json::array();
  for (const Row& row : rows) {
    nlohmann::json c{{"redundancy", to_string(row.redundancy)}};
    if (!row.skipped.empty()) {
      fmt::print("{:<9} skipped: {}\n", to_string(row.redundancy), row.skipped);
      c["skipped"] = row.skipped;
      j["configurations"].push_back(c);
      continue;
    }
    const double ms = row.runs ? row.seconds * 1e3 / row.runs : 0;
    fmt::print("{:<9} {:>9} {:>9} {:>9} {:>7} {:>7} {:>9} {:>8} {:>8} {:>11} {:>11} {:>9.3f}\n", to_string(row.redundancy), row.injected,
               row.detected, row.corrected, row.silent, row.failed, row.reexecutions, row.crashes, row.survived,
               row.quarantined.empty() ? std::string("-") : fmt::format("{}", fmt::join(row.quarantined, ",")), row.unprotected, ms);
    c.update({{"runs", row.runs}, {"injected", row.injected}, {"detected", row.detected}, {"corrected", row.corrected},
              {"silent", row.silent}, {"failed", row.failed}, {"reexecutions", row.reexecutions},
              {"crashes", row.crashes}, {"crashes_survived", row.survived}, {"recomputed_actors", row.recomputed},
              {"quarantined_tiles", row.quarantined}, {"runs_ending_with_tiles_out", row.ended_with_tiles_out},
              {"degraded_runs", row.degraded}, {"reinstated_tiles", row.reinstated}, {"unprotected_actors", row.unprotected},
              {"ms_per_run", ms}});
    if (!row.first_failure.empty()) c["first_failure"] = row.first_failure;
    j["configurations"].push_back(c);
  }
  for (const Row& row : rows) {
    if (row.ended_with_tiles_out > 0 || row.degraded > 0 || row.reinstated > 0)
      fmt::print("\n{}: {} run(s) ended with a tile out of service for its votes, {} ran DEGRADED (replicas skipped), {} tile(s) "
                 "put back after a known-answer test\n",
                 to_string(row.redundancy), row.ended_with_tiles_out, row.degraded, row.reinstated);
    if (!row.first_failure.empty()) fmt::print("\n{}: first failed run: {}\n", to_string(row.redundancy), row.first_failure);
  }
  if (!a.json.empty()) {
    const std::string text = j.dump(2) + "\n";
    if (Status s = write_file(a.json, text.data(), text.size()); !s.ok()) return fail(s);
  }
  return 0;
}

}  // namespace

Command add_campaign_command(CLI::App& app) {
  auto a = std::make_shared<CampaignArgs>();
  auto* cmd = app.add_subcommand("campaign",
                                 "Fault-injection campaign: a fault-free reference run, then --runs executions per redundancy\n"
                                 "configuration with faults injected; reports injected, detected, corrected and silent (wrong output) counts.");
  cmd->footer("Examples:\n"
              "  redflow campaign examples/demo/pipeline.dot --runs 10000 --inject bitflip:p=0.01 --tiles 3\n"
              "  redflow campaign g.dot --redundancy none,3x-diff --inject faulty-tile:1 --tiles 4 --json c.json\n"
              "detected counts results a vote rejected; with injected bit flips the only faults it never exceeds injected\n"
              "(docs/redundancy.md, \"Detected against injected\"). failed counts runs that ended with an error: a give-up\n"
              "under faults (\"gave up under faults: ...\") is named in the first failure line.");
  cmd->add_option("graph", a->graph, "Extended DOT file (docs/dot.md)")->type_name("GRAPH.dot")->required()->check(readable_file());
  cmd->add_option("--input,-i", a->inputs, "Bytes for an input data node (repeatable; default: missing inputs get seeded random bytes)")
      ->type_name("NAME=FILE");
  add_runtime_options(cmd, a->runtime);
  cmd->add_option("--redundancy", a->redundancy, "Comma list of configurations to compare")->capture_default_str();
  cmd->add_option("--runs", a->runs, "Executions per configuration")->check(CLI::Range(1u, 1u << 30))->capture_default_str();
  cmd->add_option("--json", a->json, "Also write the table as JSON (default: none)")->type_name("FILE.json");
  return {cmd, [a] { return campaign(*a); }};
}

}  // namespace redflow::cli
