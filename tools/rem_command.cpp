// `redflow rem`: run a graph with no driver, as a REM program (docs/rem.md).
// Scheduler processes meet only through the store; more can be started at
// any time against the same store and --instance, and they help.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

extern char** environ;

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
  bool coalesce_auto = false;
  bool no_claims = false;
  bool keep_labels = false;
  bool clean = false;
  std::uint64_t seed = 0;
  double timeout_s = 0;
  std::string stats, report_json;
  DashboardArgs dashboard;
};

std::string stats_line(const rem::RunStats& s) {
  return fmt::format("{} task executions ({} duplicates, {} dropped because their labels appeared, {} left to another scheduler's claim), "
                     "{} labels retired, {} polls, {} bytes written, {} read",
                     s.executed, s.duplicates, s.skipped, s.left_to_claimer, s.retired, s.polls, s.bytes_written, s.bytes_read);
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
    board_->count("tasks left to another scheduler's claim", static_cast<double>(sum_.left_to_claimer));
    board_->count("labels retired", static_cast<double>(sum_.retired));
    board_->count("store existence checks", static_cast<double>(sum_.polls));
    board_->count("bytes written", static_cast<double>(sum_.bytes_written));
    board_->count("bytes read", static_cast<double>(sum_.bytes_read));
  }
  RunDashboard* board_;
  std::mutex mutex_;
  rem::RunStats sum_;
  std::chrono::steady_clock::time_point published_{};
};

// A scheduler process of --procs is this command started again (posix_spawn
// of /proc/self/exe) with this variable set to "FD SHOWN": it runs one
// scheduler and writes its stats to FD. Not fork() alone: the parent has
// threads (the dashboard's), and a child forked while one of them held a lock
// (the allocator's, under ASan) would wait for it for ever.
constexpr const char* kSchedulerChildEnv = "REDFLOW_REM_SCHEDULER_FD";
// The descriptor a scheduler process writes its records to.
constexpr int kSchedulerChildFd = 3;

// The body of a scheduler process: its totals so far now and then (every
// 100 ms at most, when the parent shows them on a dashboard), then its final
// ones, each a record written whole (under PIPE_BUF). Returns the exit status.
int scheduler_child(const char* env, const rem::Program& program, rem::Store& store, const Inputs& inputs, rem::RunOptions o) {
  int fd = -1, shown = 0;
  if (std::sscanf(env, "%d %d", &fd, &shown) != 2 || fd < 0)
    return fail(Status::InvalidArgument(fmt::format("{}='{}': not 'FD SHOWN' (it is set by redflow rem --procs for its own processes)",
                                                    kSchedulerChildEnv, env)));
  rem::RunStats so_far;
  auto last_sent = std::chrono::steady_clock::now();
  o.on_progress = nullptr;
  if (shown != 0) {
    o.on_progress = [&](const rem::RunStats& gained) {
      so_far += gained;
      if (std::chrono::steady_clock::now() - last_sent < std::chrono::milliseconds(100)) return;
      last_sent = std::chrono::steady_clock::now();
      (void)!write(fd, &so_far, sizeof so_far);
    };
  }
  auto st = rem::run_scheduler(program, store, inputs, o);
  if (!st.ok()) return fail(st.status());
  return write(fd, &*st, sizeof(rem::RunStats)) == static_cast<ssize_t>(sizeof(rem::RunStats)) ? 0 : 1;
}

// Runs `procs` scheduler processes on a networked store; each opens its own
// connections and sends its stats through a pipe (scheduler_child()).
// Returns their sum and counts in `replaced` the processes that were
// killed (by a signal) before any scheduler saw the run finished: each is
// replaced by a new one, up to kReplacementsPerProc * procs in one run, so
// the run finishes as long as the store lives (what it wrote is kept; the
// new process walks over it). A process that exits with an error (it
// printed it) is not replaced: the others would meet the same error.
constexpr unsigned kReplacementsPerProc = 3;

// Each process reads the graph, its plugins and the inputs again, and runs
// the program coalesced as `coalescing` says (chosen once, here, with --coalesce-auto).
Result<rem::RunStats> run_processes(const RemArgs& a, const rem::CoalesceOptions& coalescing, const rem::RunOptions& base, RemProgress& progress,
                                    unsigned& replaced) {
  struct Child {
    unsigned number;  // 1-based, in the order started, for messages
    pid_t pid;
    int fd;
    rem::RunStats latest;
    bool heard = false;
  };
  std::vector<Child> children;
  unsigned started = 0;
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Status::IOError("cannot find the redflow executable (/proc/self/exe) to start scheduler processes: " + ec.message());
  const std::string child_env = fmt::format("{}={} {}", kSchedulerChildEnv, kSchedulerChildFd, progress.shown() ? 1 : 0);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, kSchedulerChildEnv, std::strlen(kSchedulerChildEnv)) != 0) envp.push_back(*e);
  envp.push_back(const_cast<char*>(child_env.c_str()));
  envp.push_back(nullptr);
  auto spawn = [&]() -> Status {
    const unsigned number = ++started;
    std::vector<std::string> args = {exe, "rem", a.graph, "--store", a.store, "--instance", base.instance,
                                     "--seed", std::to_string(base.seed * 1000003 + number), "--coalesce-tasks", std::to_string(coalescing.tasks),
                                     "--timeout", fmt::format("{}", a.timeout_s)};
    if (coalescing.labels) args.push_back("--coalesce-labels");
    if (a.no_claims) args.push_back("--no-claims");
    if (a.keep_labels) args.push_back("--keep-labels");
    for (const std::string& lib : a.libs) args.insert(args.end(), {"--lib", lib});
    for (const std::string& in : a.inputs) args.insert(args.end(), {"--input", in});
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return Status::IOError("pipe: " + std::string(std::strerror(errno)));
    // The write end becomes the child's descriptor 3 (dup2 clears close-on-exec; a pipe already
    // at 3 is moved first, since dup2 onto itself would leave the flag).
    if (fds[1] == kSchedulerChildFd) {
      const int moved = fcntl(fds[1], F_DUPFD_CLOEXEC, kSchedulerChildFd + 1);
      const int error = errno;
      close(fds[1]);
      if (moved < 0) {
        close(fds[0]);
        return Status::IOError("pipe: " + std::string(std::strerror(error)));
      }
      fds[1] = moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], kSchedulerChildFd);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      return Status::IOError(fmt::format("starting scheduler process {} ({}): {}", number, exe, std::strerror(rc)));
    }
    children.push_back({number, pid, fds[0], {}, false});
    return Status::Ok();
  };
  for (unsigned i = 0; i < a.procs; ++i) REDFLOW_RETURN_IF_ERROR(spawn());
  rem::RunStats sum;  // of the processes that ended
  bool finished = false;
  std::vector<std::string> errors;
  replaced = 0;
  // Every child's records, as they come; the last before its end is its final stats.
  while (std::any_of(children.begin(), children.end(), [](const Child& c) { return c.fd >= 0; })) {
    std::vector<pollfd> fds;
    for (const Child& c : children)
      if (c.fd >= 0) fds.push_back({c.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return Status::IOError("poll: " + std::string(std::strerror(errno)));
    for (std::size_t k = 0; k < children.size(); ++k) {
      Child& c = children[k];
      if (c.fd < 0) continue;
      const auto it = std::find_if(fds.begin(), fds.end(), [&](const pollfd& p) { return p.fd == c.fd; });
      if (it == fds.end() || it->revents == 0) continue;
      rem::RunStats st;
      if (read(c.fd, &st, sizeof st) == static_cast<ssize_t>(sizeof st)) {
        c.latest = st;
        c.heard = true;
        if (progress.shown()) {
          rem::RunStats now = sum;
          for (const Child& j : children)
            if (j.fd >= 0) now += j.latest;
          progress.set(now);
        }
        continue;
      }
      // Its end (or a short read: it died mid-record).
      close(c.fd);
      c.fd = -1;
      int status = 0;
      waitpid(c.pid, &status, 0);
      sum += c.latest;  // a killed one's last record counts what it did before
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && c.heard) {  // it saw every result label in the store
        finished = true;
        continue;
      }
      if (!WIFSIGNALED(status)) {
        errors.push_back(WIFEXITED(status) ? fmt::format("scheduler process {} (pid {}) failed with exit status {} (its error is above)", c.number,
                                                         c.pid, WEXITSTATUS(status))
                                           : fmt::format("scheduler process {} (pid {}) ended without its statistics", c.number, c.pid));
        continue;
      }
      const int sig = WTERMSIG(status);
      const std::string how = fmt::format("scheduler process {} (pid {}) was killed by signal {} ({})", c.number, c.pid, sig, strsignal(sig));
      if (finished || !errors.empty()) {
        fmt::print(stderr, "redflow rem: {}\n", how);
        continue;
      }
      if (replaced >= kReplacementsPerProc * a.procs) {
        errors.push_back(fmt::format("{}, and {} were replaced already, the most one run replaces ({} per --procs); every label written so far "
                                     "is kept in the store: run again with --instance {} to continue",
                                     how, replaced, kReplacementsPerProc, base.instance));
        continue;
      }
      ++replaced;
      fmt::print(stderr, "redflow rem: {}; starting another in its place\n", how);
      REDFLOW_RETURN_IF_ERROR(spawn());  // may move `children`: `c` is not used after this
    }
  }
  if (!errors.empty()) {
    std::string msg = errors.front();
    if (errors.size() > 1) msg += fmt::format(" (and {} more scheduler process(es) failed)", errors.size() - 1);
    // Each failed process printed its own error above; this says which ended how.
    return Status::GaveUp(msg);
  }
  return sum;
}

int rem_main(const RemArgs& a) {
  Registry reg = cli_registry();
  if (Status s = load_libs(reg, a.libs); !s.ok()) return fail(s);
  auto graph = Graph::from_dot_file(a.graph);
  if (!graph.ok()) return fail(graph.status());
  auto fine = rem::from_graph(*graph, reg);
  if (!fine.ok()) return fail(fine.status());
  auto input_files = read_inputs(*graph, a.inputs);
  if (!input_files.ok()) return usage_error(input_files.status());
  const Inputs& inputs = input_files->inputs;
  auto output_files = read_output_bindings(*graph, a.outputs);
  if (!output_files.ok()) return usage_error(output_files.status());
  auto store = rem::open_store(a.store);
  // A --store spec that does not parse is the command line's fault; a store that does not answer is not.
  if (!store.ok()) return store.status().code() == Status::Code::kInvalidArgument ? usage_error(store.status()) : fail(store.status());
  const bool every_input = inputs.size() == static_cast<std::size_t>(std::count_if(
                                                graph->data().begin(), graph->data().end(), [](const DataNode& n) { return n.kind == DataKind::kInput; }));
  rem::CoalesceOptions coalescing{.tasks = a.coalesce_tasks, .labels = a.coalesce_labels};
  std::string instance = a.instance;
  if (a.coalesce_auto) {
    // Chosen once per instance (the first scheduler records it), so the
    // instance id comes from the fine program here.
    if (instance.empty() && !every_input)
      return usage_error(Status::InvalidArgument("give every --input, or --instance ID to join a run someone else started"));
    if (instance.empty()) instance = rem::derive_instance(*fine, inputs);
    auto choice = rem::choose_coalescing(*fine, **store, instance);
    if (!choice.ok()) return fail(choice.status());
    coalescing = choice->options;
    if (choice->recorded)
      fmt::print(stderr, "redflow rem: coalescing tasks={} labels={} (recorded for instance {})\n", coalescing.tasks, coalescing.labels ? "on" : "off",
                 instance);
    else
      fmt::print(stderr,
                 "redflow rem: coalescing chosen: tasks={} labels={} ({}: a round trip {:.1f} us, {:.0f} us per MB; "
                 "a fine task: {:.1f} round trips, {:.0f} bytes)\n",
                 coalescing.tasks, coalescing.labels ? "on" : "off", (*store)->describe(), choice->round_trip_us, choice->us_per_mb,
                 choice->task_round_trips, choice->task_bytes);
  }
  auto coalesced = rem::coalesce(*fine, coalescing);
  if (!coalesced.ok()) return fail(coalesced.status());
  const rem::Program& program = coalesced->program;
  rem::RunOptions o;
  o.instance = instance;
  o.seed = a.seed ? a.seed : static_cast<std::uint64_t>(getpid());  // distinct processes choose differently by default
  o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(a.timeout_s * 1000));
  o.claims = !a.no_claims;
  o.retire_labels = !a.keep_labels;
  if (o.instance.empty()) {
    if (!every_input)
      return usage_error(Status::InvalidArgument("give every --input, or --instance ID to join a run someone else started"));
    o.instance = rem::derive_instance(program, inputs);
  }
  if (a.clean) {
    // Every key of the instance, once its schedulers are done; nothing runs.
    auto removed = rem::clean_instance(program, **store, o.instance);
    if (!removed.ok()) return fail(removed.status());
    fmt::print(stderr, "redflow rem: removed {} key(s) of instance {} from {}\n", *removed, o.instance, (*store)->describe());
    return 0;
  }
  if (const char* child = std::getenv(kSchedulerChildEnv)) return scheduler_child(child, program, **store, inputs, o);
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
  unsigned replaced = 0;  // scheduler processes killed and replaced
  if (a.store == "inproc" || a.procs == 1) {
    // One process: its schedulers are threads (the in-process store cannot be shared by processes).
    auto run = rem::run_program(program, **store, inputs, a.procs, o);
    if (!run.ok()) return fail(run.status());
    stats = run->stats;
  } else {
    store->reset();  // the scheduler processes open their own connections
    stats = run_processes(a, coalescing, o, progress, replaced);
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
        "\"skipped\": {}, \"left_to_claimer\": {}, \"retired\": {}, \"polls\": {}, \"bytes_written\": {}, \"bytes_read\": {}, \"seconds\": {:.6f}, "
        "\"replaced\": {}}}\n",
        o.instance, (*store)->describe(), a.procs, program.tasks().size(), program.labels().size(), stats->executed, stats->duplicates,
        stats->skipped, stats->left_to_claimer, stats->retired, stats->polls, stats->bytes_written, stats->bytes_read, stats->seconds, replaced);
    if (Status s = write_file(a.stats, json.data(), json.size()); !s.ok()) return fail(s);
  }
  if (Status s = write_report(a.report_json, report(*stats, program.name())); !s.ok()) return fail(s);
  fmt::print(stderr, "redflow rem: done in {:.3f} s: {}{}\n", stats->seconds, stats_line(*stats),
             replaced ? fmt::format("; {} scheduler process(es) killed and replaced", replaced) : std::string());
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
              "  redflow rem g.dot --store memcached://127.0.0.1:11211 --instance run1 --clean   # deletes run1's keys\n"
              "A scheduler process of --procs killed by a signal is replaced, so the run still finishes.\n"
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
  cmd->add_flag("--coalesce-auto", ra->coalesce_auto,
                "Choose --coalesce-tasks and --coalesce-labels from a store round trip and a value's transfer measured now "
                "against what a fine task asks of the store; the first scheduler of an instance records the choice and "
                "later ones take it (docs/rem.md, \"Coalescing chosen automatically\")")
      ->excludes("--coalesce-tasks", "--coalesce-labels");
  cmd->add_flag("--no-claims", ra->no_claims,
                "Run a task without first claiming it: schedulers may then run the same task at once (more duplicates, one store "
                "write less per task; docs/rem.md, \"Claims\"; default: claims on)");
  cmd->add_flag("--keep-labels", ra->keep_labels,
                "Keep every label's value in the store until --clean, to read intermediate labels after the run (default: a "
                "label whose consumers all ran is retired: only its size and checksum stay; docs/rem.md, \"Retiring labels\")");
  cmd->add_flag("--clean", ra->clean,
                "Delete every key of the instance (--instance, or the one the --input files give) from the store and exit; "
                "run it once no scheduler of the instance runs any more");
  cmd->add_option("--seed", ra->seed, "Seed of the random task choices (default: the process id)");
  cmd->add_option("--timeout", ra->timeout_s, "Give up with an error after this many seconds (default: 0, never)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--stats", ra->stats, "Write the summed scheduler statistics as JSON")->type_name("FILE.json");
  add_report_flag(cmd, ra->report_json);
  add_dashboard_flags(cmd, ra->dashboard);
  cmd->add_option("--lib", ra->libs, "Actor plugin .so to load (repeatable)")->type_name("PLUGIN.so")->check(CLI::ExistingFile);
  return {cmd, [ra] { return rem_main(*ra); }};
}

}  // namespace redflow::cli
