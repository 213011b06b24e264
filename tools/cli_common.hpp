// Helpers every `redflow` subcommand shares: error printing, whole-file reads,
// atomic writes, NAME=FILE bindings and plugin loading. One place, so every
// subcommand reports errors and writes files the same way.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <functional>
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
// `run --trace FILE.json --gantt FILE.svg`: writes the last execution's trace
// (Chrome/Perfetto JSON) and Gantt chart (SVG); an empty path skips that file.
Status write_trace_files(const LoadedGraph& loaded, const std::string& trace_path, const std::string& gantt_path);

// Each subcommand lives in its own file and registers itself here.
Command add_run_command(CLI::App& app);
Command add_graph_command(CLI::App& app);
Command add_actors_command(CLI::App& app);
Command add_schedule_command(CLI::App& app);

}  // namespace redflow::cli
