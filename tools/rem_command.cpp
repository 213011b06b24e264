// `redflow rem`: run a graph with no driver, as a REM program (docs/rem.md).
// Scheduler processes meet only through the store; more can be started at
// any time against the same store and --instance, and they help.
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

#include "cli_common.hpp"
#include "dashboard_flag.hpp"
#include "report_flag.hpp"
#include "redflow/rem.hpp"

namespace redflow::cli {

namespace {

struct RemArgs {
  std::string graph;
  std::vector<std::string> inputs, outputs, libs;
  std::string store = "inproc";
  std::string instance;
  unsigned procs = 1;
  unsigned coalesce_tasks = 1;
  bool coalesce_labels = false;
  std::uint64_t seed = 0;
  double timeout_s = 0;
  std::string stats, report_json;
  DashboardArgs dashboard;
};

std::string stats_line(const rem::RunStats& s) {
  return fmt::format("{} task executions ({} duplicates, {} dropped because their labels appeared), {} polls, {} bytes written, {} read",
                     s.executed, s.duplicates, s.skipped, s.polls, s.bytes_written, s.bytes_read);
}

// The run's numbers on the dashboard (--dashboard), summed over its
// schedulers as they go: threads of this process call add() with what each
// gained (RunOptions::on_progress); scheduler processes send their totals
// through a pipe and set() takes the sum. Null board: nothing to show.
// Thread-safe.
class RemProgress {
 public:
  explicit RemProgress(RunDashboard* board) : board_(board) {}
  bool shown() const { return board_ != nullptr; }
  void add(const rem::RunStats& gained) {
    std::lock_guard lock(mutex_);
    sum_ += gained;
    // The page refreshes a few times a second: the board hears of tiny tasks in steps.
    const auto now = std::chrono::steady_clock::now();
    if (now - published_ < std::chrono::milliseconds(20)) return;
    published_ = now;
    publish();
  }
  void set(const rem::RunStats& total) {
    std::lock_guard lock(mutex_);
    sum_ = total;
    publish();
  }

 private:
  void publish() {
    if (board_ == nullptr) return;
    board_->count("tasks executed", static_cast<double>(sum_.executed));
    board_->count("duplicate executions", static_cast<double>(sum_.duplicates));
    board_->count("tasks dropped as their labels appeared", static_cast<double>(sum_.skipped));
    board_->count("store existence checks", static_cast<double>(sum_.polls));
    board_->count("bytes written", static_cast<double>(sum_.bytes_written));
    board_->count("bytes read", static_cast<double>(sum_.bytes_read));
  }
  RunDashboard* board_;
  std::mutex mutex_;
  rem::RunStats sum_;
  std::chrono::steady_clock::time_point published_{};
};

// Runs `procs` scheduler processes (fork) on a networked store; each opens its
// own connections and sends its stats through a pipe: its totals so far now
// and then (every 100 ms at most, when shown on a dashboard), then its final
// ones. Returns their sum.
Result<rem::RunStats> run_processes(const RemArgs& a, const rem::Program& program, const Inputs& inputs, const rem::RunOptions& base,
                                    RemProgress& progress) {
  struct Child {
    pid_t pid;
    int fd;
    rem::RunStats latest;
    bool heard = false;
  };
  std::vector<Child> children;
  for (unsigned i = 0; i < a.procs; ++i) {
    int fds[2];
    if (pipe(fds) != 0) return Status::IOError("pipe: " + std::string(std::strerror(errno)));
    pid_t pid = fork();
    if (pid < 0) return Status::IOError("fork: " + std::string(std::strerror(errno)));
    if (pid == 0) {
      close(fds[0]);
      for (const Child& c : children) close(c.fd);
      auto store = rem::open_store(a.store);
      if (!store.ok()) _exit(fail(store.status()));
      rem::RunOptions o = base;
      o.seed = base.seed * 1000003 + i;
      o.on_progress = nullptr;
      rem::RunStats so_far;
      auto last_sent = std::chrono::steady_clock::now();
      if (progress.shown()) {
        o.on_progress = [&](const rem::RunStats& gained) {
          so_far += gained;
          if (std::chrono::steady_clock::now() - last_sent < std::chrono::milliseconds(100)) return;
          last_sent = std::chrono::steady_clock::now();
          (void)!write(fds[1], &so_far, sizeof so_far);  // a record under PIPE_BUF: written whole or not at all
        };
      }
      auto st = rem::run_scheduler(program, **store, inputs, o);
      if (!st.ok()) _exit(fail(st.status()));
      ssize_t n = write(fds[1], &*st, sizeof(rem::RunStats));
      _exit(n == sizeof(rem::RunStats) ? 0 : 1);
    }
    close(fds[1]);
    children.push_back({pid, fds[0], {}, false});
  }
  // Every child's records, as they come; the last before its end is its final stats.
  for (std::size_t open = children.size(); open > 0;) {
    std::vector<pollfd> fds;
    for (const Child& c : children)
      if (c.fd >= 0) fds.push_back({c.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return Status::IOError("poll: " + std::string(std::strerror(errno)));
    for (Child& c : children) {
      if (c.fd < 0) continue;
      const auto it = std::find_if(fds.begin(), fds.end(), [&](const pollfd& p) { return p.fd == c.fd; });
      if (it == fds.end() || it->revents == 0) continue;
      rem::RunStats st;
      if (read(c.fd, &st, sizeof st) == static_cast<ssize_t>(sizeof st)) {
        c.latest = st;
        c.heard = true;
        if (progress.shown()) {
          rem::RunStats sum;
          for (const Child& k : children) sum += k.latest;
          progress.set(sum);
        }
        continue;
      }
      close(c.fd);  // its end (or a short read: it died mid-record)
      c.fd = -1;
      --open;
    }
  }
  rem::RunStats sum;
  int failed = 0;
  for (const Child& c : children) {
    int status = 0;
    waitpid(c.pid, &status, 0);
    if (c.heard && WIFEXITED(status) && WEXITSTATUS(status) == 0) sum += c.latest;
    else ++failed;
  }
  if (failed) return Status::Internal(fmt::format("{} of {} scheduler processes failed (their errors are above)", failed, a.procs));
  return sum;
}

int rem_main(const RemArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.libs); !s.ok()) return fail(s);
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  auto fine = rem::from_graph(*graph, reg);
  if (!fine.ok()) return fail(fine.status());
  auto coalesced = rem::coalesce(*fine, {.tasks = a.coalesce_tasks, .labels = a.coalesce_labels});
  if (!coalesced.ok()) return fail(coalesced.status());
  const rem::Program& program = coalesced->program;
  auto input_files = read_inputs(*graph, a.inputs);
  if (!input_files.ok()) return usage_error(input_files.status());
  const Inputs& inputs = input_files->inputs;
  auto output_files = read_output_bindings(*graph, a.outputs);
  if (!output_files.ok()) return usage_error(output_files.status());
  auto store = rem::open_store(a.store);
  // A --store spec that does not parse is the command line's fault; a store that does not answer is not.
  if (!store.ok()) return store.status().code() == Status::Code::kInvalidArgument ? usage_error(store.status()) : fail(store.status());
  rem::RunOptions o;
  o.instance = a.instance;
  o.seed = a.seed ? a.seed : static_cast<std::uint64_t>(getpid());  // distinct processes choose differently by default
  o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(a.timeout_s * 1000));
  if (o.instance.empty()) {
    if (inputs.size() != static_cast<std::size_t>(std::count_if(graph->data().begin(), graph->data().end(),
                                                                [](const DataNode& n) { return n.kind == DataKind::kInput; })))
      return usage_error(Status::InvalidArgument("give every --input, or --instance ID to join a run someone else started"));
    o.instance = rem::derive_instance(program, inputs);
  }
  fmt::print(stderr, "redflow rem: instance {} on {}, {} scheduler(s), {} tasks, {} labels\n", o.instance, (*store)->describe(), a.procs,
             program.tasks().size(), program.labels().size());
  // Refused once here rather than by every scheduler process below.
  if (Status s = rem::bind_instance(program, **store, o.instance); !s.ok()) return fail(s);
  auto dashboard = RunDashboard::start(a.dashboard, program.name(), 1, "rem");
  if (!dashboard.ok()) return usage_error(dashboard.status());
  RunDashboard* board = dashboard->get();
  RemProgress progress(board);
  if (board != nullptr) o.on_progress = [&progress](const rem::RunStats& gained) { progress.add(gained); };
  Result<rem::RunStats> stats = Status::Internal("not run");
  if (a.store == "inproc" || a.procs == 1) {
    // One process: its schedulers are threads (the in-process store cannot be shared by processes).
    auto run = rem::run_program(program, **store, inputs, a.procs, o);
    if (!run.ok()) return fail(run.status());
    stats = run->stats;
  } else {
    store->reset();  // children open their own connections after fork
    stats = run_processes(a, program, inputs, o, progress);
    if (!stats.ok()) return fail(stats.status());
    store = rem::open_store(a.store);
    if (!store.ok()) return fail(store.status());
  }
  if (board != nullptr) {
    progress.set(*stats);
    board->count("schedulers", a.procs);
    board->count("tasks in the program", static_cast<double>(program.tasks().size()));
    board->count("seconds", stats->seconds);
  }
  // The outputs come from the store, whoever computed them.
  if (!output_files->empty() || !a.stats.empty()) {
    auto results = rem::read_results(program, **store, o.instance);
    if (!results.ok()) return fail(results.status());
    for (const auto& [name, file] : *output_files) {
      const auto bytes = output_file_bytes(graph->data(*graph->find_data(name)), file, results->at(name));
      if (Status s = write_file(file, bytes.data(), bytes.size()); !s.ok()) return fail(s);
    }
  }
  if (!a.stats.empty()) {
    std::string json = fmt::format(
        "{{\"instance\": \"{}\", \"store\": \"{}\", \"schedulers\": {}, \"tasks\": {}, \"labels\": {}, \"executed\": {}, \"duplicates\": {}, "
        "\"skipped\": {}, \"polls\": {}, \"bytes_written\": {}, \"bytes_read\": {}, \"seconds\": {:.6f}}}\n",
        o.instance, (*store)->describe(), a.procs, program.tasks().size(), program.labels().size(), stats->executed, stats->duplicates,
        stats->skipped, stats->polls, stats->bytes_written, stats->bytes_read, stats->seconds);
    if (Status s = write_file(a.stats, json.data(), json.size()); !s.ok()) return fail(s);
  }
  if (Status s = write_report(a.report_json, report(*stats, program.name())); !s.ok()) return fail(s);
  fmt::print(stderr, "redflow rem: done in {:.3f} s: {}\n", stats->seconds, stats_line(*stats));
  if (board != nullptr) board->end(Status::Ok());
  return 0;
}

}  // namespace

Command add_rem_command(CLI::App& app) {
  auto ra = std::make_shared<RemArgs>();
  auto* cmd = app.add_subcommand("rem", "Run a graph with no driver: scheduler processes meet only through a single-assignment store (REM).");
  cmd->footer("Examples:\n"
              "  redflow rem examples/demo/pipeline.dot --input A=examples/demo/A.bin --output Y=y.bin --procs 4\n"
              "  redflow rem g.dot --store memcached://127.0.0.1:11211 --input X=x.bin --procs 4 --instance run1\n"
              "  redflow rem g.dot --store memcached://127.0.0.1:11211 --instance run1   # joins run1 and helps\n"
              "docs/rem.md explains the model, the store layout and the failure behaviour.");
  cmd->add_option("graph", ra->graph, "Extended DOT file (docs/dot.md)")->type_name("GRAPH.dot")->required()->check(CLI::ExistingFile);
  cmd->add_option("--input,-i", ra->inputs, "Raw bytes for input data node NAME (repeatable; all of them, or none with --instance)")
      ->type_name("NAME=FILE");
  cmd->add_option("--output,-o", ra->outputs, "Write output data node NAME to FILE, read from the store at the end (repeatable)")
      ->type_name("NAME=FILE");
  cmd->add_option("--store", ra->store, "inproc | memcached://HOST:PORT[,HOST:PORT...] | redis://HOST:PORT")->capture_default_str();
  cmd->add_option("--procs", ra->procs, "Scheduler processes to start (threads with --store inproc)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_option("--instance", ra->instance, "Run id in the store's keys (default: a hash of the graph and the inputs)");
  cmd->add_option("--coalesce-tasks", ra->coalesce_tasks, "Execute this many fine tasks of one level as one task")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  cmd->add_flag("--coalesce-labels", ra->coalesce_labels, "Store the labels of a coalesced task as one value (default: off)");
  cmd->add_option("--seed", ra->seed, "Seed of the random task choices (default: the process id)");
  cmd->add_option("--timeout", ra->timeout_s, "Give up with an error after this many seconds (default: 0, never)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--stats", ra->stats, "Write the summed scheduler statistics as JSON")->type_name("FILE.json");
  add_report_flag(cmd, ra->report_json);
  add_dashboard_flags(cmd, ra->dashboard);
  cmd->add_option("--lib", ra->libs, "Actor plugin .so to load (repeatable)")->type_name("PLUGIN.so")->check(CLI::ExistingFile);
  return {cmd, [ra] { return rem_main(*ra); }};
}

}  // namespace redflow::cli
