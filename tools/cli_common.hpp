// Helpers every `redflow` subcommand shares: error printing, whole-file reads,
// atomic writes, NAME=FILE bindings and plugin loading. One place, so every
// subcommand reports errors and writes files the same way.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <functional>
#include <initializer_list>
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

// The exit statuses of every subcommand (docs/guide.md, "Exit statuses"):
// 0 it did what was asked; 1 it failed (the message says why); 2 the command
// line was wrong (an unknown command or flag, a missing or malformed value,
// a file named that cannot be read), so nothing ran; 3 fault tolerance gave
// up (Status::Code::kGaveUp: the faults won, redflow worked as documented).
constexpr int kFailed = 1;
constexpr int kUsageError = 2;
constexpr int kGaveUp = 3;

// Prints "redflow: error: ..." to stderr and returns the exit code: kGaveUp
// for Status::Code::kGaveUp, kFailed for every other error.
int fail(const Status& s);
// A command line found wrong after parsing, before anything ran: a flag's
// value that does not parse or names nothing in the program, flags that
// need or exclude each other, a file named that cannot be read. Prints
// "redflow: error: ..." as fail() does (the message names the flag and its
// value) and returns kUsageError.
int usage_error(const Status& s);
// Runtime::load() or check() refused the graph with these flags: an
// InvalidArgument means the runtime flags do not fit the graph (--tiles too
// few for the replicas of *-diff, --slots too few for *-same's results,
// --require-protection with data larger than a slot), so usage_error();
// anything else (an invalid graph, a failed cluster) is fail().
int load_refused(const Status& s);

// The command as the user invoked it (argv[0]: `build/redflow` in a build
// tree, `redflow` once installed on the PATH), for the command lines it prints
// to paste; command_main() sets it before any subcommand runs.
const std::string& command_name();
void set_command_name(std::string name);

Result<std::vector<std::byte>> read_file(const std::string& path);
// Writes to PATH.redflow-tmp then renames, so a failed run never leaves a half-written file.
Status write_file(const std::string& path, const void* data, std::size_t size);
// Splits NAME=FILE; `flag` names the option in the error.
Result<std::pair<std::string, std::string>> split_binding(const std::string& text, const char* flag);
Status load_libs(Registry& reg, const std::vector<std::string>& libs);
// The actors every subcommand offers. The build tree's command: the built-ins
// and the benchmark applications' actors (apps/), so that `redflow gen`
// graphs run as written (developer_commands.cpp); the installed command: the
// built-ins (user_command.cpp).
Registry cli_registry();
// A worker's actors: cli_registry() and the `libs` plugins, in a Registry
// never destroyed (a static holds it, so leak checkers see it reachable): a
// worker that leaves with an actor still running (its driver went silent)
// leaves that actor running on these functions until the process has ended.
// `origin` names where they came from ("built-in,LIB...") for HELLO.
Result<const Registry*> worker_actors(const std::vector<std::string>& libs, std::string& origin);
// `run --trace FILE.json --gantt FILE.svg`: writes the last execution's trace
// (Chrome/Perfetto JSON) and Gantt chart (SVG); an empty path skips that file.
Status write_trace_files(const LoadedGraph& loaded, const std::string& trace_path, const std::string& gantt_path);

// The runtime flags `run`, `campaign` (and others that execute graphs) share.
struct RuntimeArgs {
  std::string scheduler = "heft";
  bool heft_static = false;  // --heft-static: HEFT walks its plan as made (RuntimeOptions::heft_adapts off)
  unsigned tiles = 0;  // 0: one per hardware thread (set by add_runtime_options)
  unsigned cores_per_tile = 1;
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::uint64_t seed = 1;
  std::vector<std::string> inject;
  unsigned quarantine_after = 3;
  unsigned probation_rounds = 3;
  unsigned crash_limit = 3;
  std::vector<std::string> libs;
  std::string machine = "default";  // --machine paper: the paper's Kalray Bostan (apps/paper.hpp)
  bool require_protection = false;
  std::string tile_transport = "direct";  // --tile-transport wire: every tile message through its byte encoding
  bool eager_schedules = false;  // --eager-schedules: every configuration at load (RuntimeOptions::eager_schedules)
};
void add_runtime_options(CLI::App* cmd, RuntimeArgs& a);
// RuntimeOptions from the flags; --inject specs are parsed here (errors name the bad spec).
Result<RuntimeOptions> runtime_options(const RuntimeArgs& a);

// Warns (log level warn) about every actor that `configs` ask to protect but
// that runs once on the driver, unprotected (LoadedGraph::unprotected_actors).
void warn_unprotected(const LoadedGraph& loaded, const std::vector<Redundancy>& configs);

// Input files bound with --input NAME=FILE, checked against the graph's input
// nodes: raw bytes, or a NumPy .npy array whose dtype and size match the node.
struct InputFiles {
  std::map<std::string, std::vector<std::byte>> bytes;
  Inputs inputs;  // views of `bytes`
};
Result<InputFiles> read_inputs(const Graph& graph, const std::vector<std::string>& bindings);

// A positional or option naming a file to read: refuses one that cannot be
// opened with the operating system's reason ("cannot open 'g.dot': No such
// file or directory"), where CLI11's ExistingFile says only "File does not exist".
CLI::Validator readable_file();
// `redflow --help`'s list of commands: each on one line (the first line of
// its description; its examples are in its own --help), under its group.
class CommandListFormatter : public CLI::Formatter {
 public:
  std::string make_subcommand(const CLI::App* sub) const override;
};
// Prints a command-line error as a teacher would: the nearest flag or
// subcommand to a misspelt one. Returns the exit code.
int report_parse_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

// `run --print`: up to 256 values of an output, by its element type (int32 when untyped).
void print_values(const std::string& name, const std::vector<std::byte>& bytes, ElementType type);
// Bytes to write for `--output NAME=FILE`: raw, or a NumPy array when FILE ends
// in .npy (the node needs a type= then; checked before anything runs).
Status check_output_format(const DataNode& node, const std::string& file);
// Output files bound with --output NAME=FILE, by node name: each names an
// output node of `graph` once, in a format the node can be written in.
Result<std::map<std::string, std::string>> read_output_bindings(const Graph& graph, const std::vector<std::string>& bindings);
std::vector<std::byte> output_file_bytes(const DataNode& node, const std::string& file, const std::vector<std::byte>& bytes);

// A file in redflow's per-user cache, one per host:
// $XDG_CACHE_HOME/redflow/STEM-HOSTNAME (default ~/.cache/redflow/).
std::string host_cache_file(const std::string& stem);

// Measured actor costs (CostModel, docs/scheduling.md "Measured costs") for
// the commands that plan with HEFT: `--costs FILE`, `--learn-costs`,
// `--no-learned-costs` (tools/learned_costs.cpp).
struct CostArgs {
  std::string file;     // empty: host_cache_file("actor-costs")
  bool learn = false;   // add this run's measured actor times to the model
  bool ignore = false;  // plan with work= hints and bytes touched only
};
void add_cost_options(CLI::App* cmd, CostArgs& a, bool can_learn);
// The model of a command: read once before the graph is loaded (it sets
// `work` of the actors without a hint), learning from traces when asked,
// written back at the end.
class LearnedCosts {
 public:
  // Reads the model and applies it to `g`. A model that cannot be read is an
  // error when learning (nothing would be lost but the file would be
  // replaced), else a warning and the bytes-touched estimate.
  static Result<LearnedCosts> open(const CostArgs& a, Graph& g, const Registry& reg, unsigned cores_per_tile);
  bool learning() const { return learn_; }
  // "N of M actors without a work= hint are planned with measured costs (FILE)", or "" when none are.
  std::string describe() const;
  void learn(const Graph& g, const ExecutionTrace& trace, const Registry& reg);
  // Reads the file again (another run may have written it), keeps its kinds
  // this run did not see, writes it. A line saying what was learned.
  Result<std::string> save();

 private:
  std::string file_;
  bool learn_ = false;
  CostModel model_;
  std::size_t applied_ = 0, unhinted_ = 0;
  CostLearning learned_;
  std::size_t executions_ = 0;
};

// `redflow schedule`'s machine model: seconds one actor execution costs on
// this machine beyond its work, measured at first use and cached
// (tools/calibrate.cpp). `remeasure` ignores the cache and rewrites it.
struct CalibratedOverhead {
  double seconds = 0;
  std::string cache;    // the cache file
  bool cached = false;  // read from it rather than measured now
};
Result<CalibratedOverhead> actor_overhead(bool remeasure = false);

// Appends `group` to `commands`, listed under `title` in `redflow --help`.
void add_group(std::vector<Command>& commands, const char* title, std::initializer_list<Command> group);

// Each subcommand lives in its own file and registers itself here.
Command add_run_command(CLI::App& app);
Command add_graph_command(CLI::App& app);
Command add_actors_command(CLI::App& app);
Command add_tile_command(CLI::App& app);
Command add_worker_command(CLI::App& app);
Command add_schedule_command(CLI::App& app);
Command add_campaign_command(CLI::App& app);
Command add_gen_command(CLI::App& app);
Command add_import_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_table1_command(CLI::App& app);
Command add_rem_command(CLI::App& app);
Command add_spits_command(CLI::App& app);
// A long-lived server and its clients (docs/server.md).
Command add_server_command(CLI::App& app);
Command add_submit_command(CLI::App& app);
Command add_jobs_command(CLI::App& app);
Command add_job_command(CLI::App& app);
Command add_wait_command(CLI::App& app);
Command add_fetch_command(CLI::App& app);
Command add_cancel_command(CLI::App& app);
Command add_workers_command(CLI::App& app);
Command add_spits_worker_command(CLI::App& app);
Command add_stream_command(CLI::App& app);
Command add_stream_worker_command(CLI::App& app);
Command add_place_command(CLI::App& app);
Command add_view_command(CLI::App& app);
Command add_difftest_command(CLI::App& app);
Command add_keygen_command(CLI::App& app);
Command add_launch_probe_command(CLI::App& app);

}  // namespace redflow::cli
