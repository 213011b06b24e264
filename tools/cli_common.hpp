// Helpers every `redflow` subcommand shares: error printing, whole-file reads,
// atomic writes, NAME=FILE bindings and plugin loading. One place, so every
// subcommand reports errors and writes files the same way.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "redflow/redflow.hpp"

namespace redflow::cli {

// A subcommand: its CLI11 parser and what to run when it was given.
struct Command {
  CLI::App* parser = nullptr;
  std::function<int()> main;
};

// Prints "redflow: error: ..." to stderr and returns the exit code 1.
int fail(const Status& s);

Result<std::vector<std::byte>> read_file(const std::string& path);
// Writes to PATH.redflow-tmp then renames, so a failed run never leaves a half-written file.
Status write_file(const std::string& path, const void* data, std::size_t size);
// Splits NAME=FILE; `flag` names the option in the error.
Result<std::pair<std::string, std::string>> split_binding(const std::string& text, const char* flag);
Status load_libs(Registry& reg, const std::vector<std::string>& libs);
// The actors every subcommand offers: the built-ins and the benchmark
// applications' actors (apps/), so that `redflow gen` graphs run as written.
Registry cli_registry();
// `run --trace FILE.json --gantt FILE.svg`: writes the last execution's trace
// (Chrome/Perfetto JSON) and Gantt chart (SVG); an empty path skips that file.
Status write_trace_files(const LoadedGraph& loaded, const std::string& trace_path, const std::string& gantt_path);

// The runtime flags `run`, `campaign` (and others that execute graphs) share.
struct RuntimeArgs {
  std::string scheduler = "heft";
  unsigned tiles = 0;  // 0: one per hardware thread (set by add_runtime_options)
  unsigned cores_per_tile = 1;
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::uint64_t seed = 1;
  std::vector<std::string> inject;
  unsigned quarantine_after = 3;
  std::vector<std::string> libs;
  std::string machine = "default";  // --machine paper: the paper's Kalray Bostan (apps/paper.hpp)
};
void add_runtime_options(CLI::App* cmd, RuntimeArgs& a);
// RuntimeOptions from the flags; --inject specs are parsed here (errors name the bad spec).
Result<RuntimeOptions> runtime_options(const RuntimeArgs& a);

// Input files bound with --input NAME=FILE, checked against the graph's input nodes.
struct InputFiles {
  std::map<std::string, std::vector<std::byte>> bytes;
  Inputs inputs;  // views of `bytes`
};
Result<InputFiles> read_inputs(const Graph& graph, const std::vector<std::string>& bindings);

// Each subcommand lives in its own file and registers itself here.
Command add_run_command(CLI::App& app);
Command add_graph_command(CLI::App& app);
Command add_actors_command(CLI::App& app);
Command add_schedule_command(CLI::App& app);
Command add_campaign_command(CLI::App& app);
Command add_gen_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_table1_command(CLI::App& app);
Command add_rem_command(CLI::App& app);
Command add_difftest_command(CLI::App& app);

}  // namespace redflow::cli
