// `redflow spits`: run a SPITS job (a bag of tasks: generate, execute,
// commit) in this process with embedded Task Managers (docs/spits.md).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli_common.hpp"
#include "cluster_flags.hpp"
#include "cluster_launch.hpp"
#include "dashboard_flag.hpp"
#include "report_flag.hpp"
#include "redflow/spits.hpp"
#include "redflow/visualize.hpp"
#include "spits/task_manager_role.hpp"

namespace redflow::cli {

namespace {

struct SpitsArgs {
  std::string plugin;
  std::vector<std::string> job_args;
  unsigned workers = 0;  // 0: one per hardware thread
  unsigned task_managers = 1;
  unsigned prefetch = 0;
  unsigned strikes = 3;
  std::string log, stats, report_json;
  bool progress = false;
  std::string announce, trace;  // --announce-dir
  // --listen, --min-workers (Task Managers to wait for, with --announce-dir too), --wait, --heartbeat-timeout, --key, --authorized-keys
  ClusterOptions cluster = spits::Options{}.cluster;
  LaunchArgs launch;  // --address-file (mpirun/srun variables are ignored: a launched SPITS job is not offered)
  DashboardArgs dashboard;
};

// The live commit count and rate: redrawn in place on a terminal (at most ten
// times a second), one line a second otherwise.
class CommitProgress {
 public:
  explicit CommitProgress(bool on) : on_(on), tty_(on && isatty(STDERR_FILENO) == 1) {}
  void update(std::uint64_t committed) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < (tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(1000))) return;
    double dt = std::chrono::duration<double>(now - last_).count();
    double rate = static_cast<double>(committed - last_count_) / dt;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    last_ = now;
    last_count_ = committed;
    fmt::print(stderr, "{}spits: {} committed  {:.0f} tasks/s  {:.1f} s{}", tty_ ? "\r" : "", committed, rate, elapsed,
               tty_ ? "\033[K" : "\n");
    std::fflush(stderr);
  }
  // The last line: the final count and the mean rate.
  void finish(std::uint64_t committed) {
    if (!on_) return;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    fmt::print(stderr, "{}spits: {} committed  {:.0f} tasks/s  {:.1f} s\n", tty_ ? "\r\033[K" : "", committed,
               elapsed > 0 ? static_cast<double>(committed) / elapsed : 0.0, elapsed);
  }

 private:
  bool on_, tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
  std::uint64_t last_count_ = 0;
};

double commits_per_second(const spits::Report& r) { return r.seconds > 0 ? static_cast<double>(r.committed) / r.seconds : 0.0; }

nlohmann::json stats_json(const spits::Report& r) {
  nlohmann::json j = {{"job", r.job},
                      {"phases", r.phases},
                      {"seconds", r.seconds},
                      {"generated", r.generated},
                      {"committed", r.committed},
                      {"resubmissions", r.resubmissions},
                      {"duplicates_discarded", r.duplicates},
                      {"strikes", r.strikes},
                      {"skipped_from_log", r.from_log},
                      {"in_doubt", r.in_doubt},
                      {"in_doubt_recommitted", r.in_doubt_recommitted},
                      {"torn_log_bytes", r.torn_log_bytes},
                      {"commits_per_second", commits_per_second(r)}};
  j["task_managers"] = nlohmann::json::array();
  for (const auto& t : r.task_managers)
    j["task_managers"].push_back({{"name", t.name}, {"host", t.host}, {"workers", t.workers}, {"pushed", t.pushed}, {"results", t.results},
                                  {"committed", t.committed}, {"failed", t.failed}, {"lost", t.lost}, {"late", t.late}});
  j["poisoned"] = nlohmann::json::array();
  for (const auto& p : r.poisoned)
    j["poisoned"].push_back({{"task", p.id}, {"strikes", p.strikes}, {"last_error", p.last_error}, {"bytes", p.preview}});
  return j;
}

// The report after a job, each number with what it counts: "results 590,
// committed 586" left the reader to guess what became of the other four.
void print_report(const spits::Report& r) {
  auto n = [](std::uint64_t count, const char* one, const char* many) { return fmt::format("{} {}", count, count == 1 ? one : many); };
  fmt::print("spits: job '{}': {} committed in {} phase{}, {:.3f} s ({:.0f} tasks/s)\n", r.job, n(r.committed, "task", "tasks"), r.phases,
             r.phases == 1 ? "" : "s", r.seconds, commits_per_second(r));
  fmt::print("  tasks: {} generated, {} again as the queue wrapped (not committed yet: still running elsewhere, lost or struck), {} (their "
             "task was committed already), {}\n",
             r.generated,
             n(r.resubmissions, "pushed", "pushed"), n(r.duplicates, "result discarded", "results discarded"),
             n(r.strikes, "failed execution (strike)", "failed executions (strikes)"));
  if (r.from_log || r.in_doubt || r.torn_log_bytes)
    fmt::print("  commit log: {} skipped (done before), {} in doubt ({} committed again), torn tail of {} bytes ignored\n",
               n(r.from_log, "task", "tasks"), r.in_doubt, r.in_doubt_recommitted, r.torn_log_bytes);
  for (const auto& t : r.task_managers) {
    const std::uint64_t discarded = t.results > t.committed ? t.results - t.committed : 0;
    fmt::print("  Task Manager {}{} ({} workers): {} pushed to it, {} back ({} committed, {} discarded as already committed), {}{}\n", t.name,
               t.host.empty() ? "" : " on " + t.host, t.workers, n(t.pushed, "task", "tasks"), n(t.results, "result", "results"), t.committed,
               discarded, n(t.failed, "failed execution", "failed executions"),
               t.lost ? fmt::format("; lost {}, then {} of tasks given to others meanwhile", n(t.lost, "time", "times"),
                                    n(t.late, "late result", "late results"))
                      : "");
  }
  if (r.poisoned.empty()) fmt::print("  poisoned tasks: none\n");
  for (const auto& p : r.poisoned)
    fmt::print("  poisoned task {} (bytes {}): {} strikes, last: {}\n", p.id, p.preview, p.strikes, p.last_error);
}

// A later starter of the same --address-file command line: it serves the
// Job Manager that won the file as a dial-in Task Manager, as `redflow worker
// --address-file FILE` would, with this command's --local-workers and --key.
int serve_task_manager(const SpitsArgs& a, const LaunchPlan& plan, unsigned workers) {
  spits::DialInTaskManagerOptions tm;
  tm.driver = {plan.driver.endpoint, plan.driver.server_public_key};
  tm.security.key_file = a.cluster.key_file;
  tm.workers = workers;
  tm.connect_timeout_s = a.cluster.wait_s;
  fmt::print(stderr, "spits: {} serves a Task Manager of the Job Manager at {}\n", plan.who, plan.driver.endpoint);
  if (Status s = spits::serve_job_manager(tm); !s.ok()) return fail(s);
  return 0;
}

int spits_main(const SpitsArgs& a, bool task_managers_given) {
  const unsigned workers = a.workers ? a.workers : std::max(1u, std::thread::hardware_concurrency());
  // Any starter may become the Job Manager: refuse a bad --listen before the race for the address file.
  if (Status s = a.cluster.validate(); !s.ok()) return usage_error(s);
  auto plan = plan_launch(a.launch);
  if (!plan.ok()) return fail(plan.status());
  if (plan->worker) return serve_task_manager(a, *plan, workers);
  spits::Options o;
  o.announce_dir = a.announce;
  o.cluster = a.cluster;
  if (plan->launched && o.cluster.listen.empty()) o.cluster.listen = "tcp://127.0.0.1:*";
  const bool remote = !o.announce_dir.empty() || !o.cluster.listen.empty();
  o.task_managers = remote && !task_managers_given ? 0 : a.task_managers;
  if (!o.cluster.listen.empty() && o.cluster.min_workers == 0) o.cluster.min_workers = 1;
  PublishedAddress* address = plan->address.get();
  o.cluster.on_listening = [&o, address](const std::string& endpoint) {
    if (address != nullptr) {
      if (Status s = address->publish(endpoint, {.key_file = o.cluster.key_file, .authorized_keys_file = o.cluster.authorized_keys_file}); !s.ok())
        fmt::print(stderr, "redflow: {}\n", s.message());
      fmt::print(stderr, "redflow: listening on {} (published in {}); waiting for {} Task Manager(s)\n", endpoint, address->path(), o.cluster.min_workers);
      return;
    }
    fmt::print(stderr, "redflow: listening on {}; waiting for {} Task Manager(s): {} worker --connect {}\n", endpoint, o.cluster.min_workers, command_name(),
               endpoint);
  };
  o.workers = workers;
  o.prefetch = a.prefetch;
  o.strikes = a.strikes;
  o.log_path = a.log;
  CommitProgress progress(a.progress);
  auto dashboard = RunDashboard::start(a.dashboard, std::filesystem::path(a.plugin).filename().string(), 1, "spits");
  if (!dashboard.ok()) return usage_error(dashboard.status());
  RunDashboard* board = dashboard->get();
  // The dashboard takes the report so far five times a second at most: the Job Manager's thread calls this per batch.
  const auto started = std::chrono::steady_clock::now();
  o.on_progress = [&progress, board, started, next = started](const spits::Report& so_far) mutable {
    progress.update(so_far.committed);
    const auto now = std::chrono::steady_clock::now();
    if (board == nullptr || now < next) return;
    next = now + std::chrono::milliseconds(200);
    board->spits(so_far, std::chrono::duration<double>(now - started).count());
  };
  o.trace = !a.trace.empty();
  auto report = spits::run_job(a.plugin, a.job_args, o);
  if (!report.ok()) {
    const int code = fail(report.status());
    if (board != nullptr) board->end(report.status());
    return code;
  }
  progress.finish(report->committed);
  if (board != nullptr) {
    board->spits(*report, report->seconds);
    board->count_report(*report);
  }
  print_report(*report);
  if (!a.stats.empty()) {
    std::string text = stats_json(*report).dump(2) + "\n";
    if (Status s = write_file(a.stats, text.data(), text.size()); !s.ok()) return fail(s);
  }
  if (Status s = write_report(a.report_json, redflow::report(*report)); !s.ok()) return fail(s);
  if (!a.trace.empty()) {
    std::string json = to_chrome_trace(*report);
    if (Status s = write_file(a.trace, json.data(), json.size()); !s.ok()) return fail(s);
    if (report->trace_truncated)
      fmt::print(stderr, "spits: the trace holds the first {} task stays only\n", spits::Report::kMaxTracedTasks);
  }
  if (!report->poisoned.empty()) {
    fmt::print(stderr, "redflow: error: {} poisoned task{} set aside, not committed (named above)\n", report->poisoned.size(),
               report->poisoned.size() == 1 ? "" : "s");
    if (board != nullptr) board->end(Status::GaveUp(std::to_string(report->poisoned.size()) + " poisoned task(s) set aside"));
    return kGaveUp;
  }
  if (board != nullptr) board->end(Status::Ok());
  return 0;
}

}  // namespace

Command add_spits_command(CLI::App& app) {
  auto a = std::make_shared<SpitsArgs>();
  a->launch.ignore_launcher = true;
  CLI::App* cmd = app.add_subcommand(
      "spits",
      "Run a SPITS job: a bag of independent tasks that a plugin generates, executes and commits (docs/spits.md).\n"
      "The job is a .so exporting redflow_spits_job_v1() (include/redflow/spits.hpp); the words after it are the job's args.\n"
      "Tasks are generated on demand into a circular queue, executed by Workers (execute_task may run more than once),\n"
      "and committed exactly once; tasks still unfinished when generation ends are re-submitted as the queue wraps.\n"
      "Examples:\n"
      "  redflow spits build/examples/spits/libspits_pi.so tasks=1000 samples=100000 out=pi.txt --local-workers 2\n"
      "  redflow spits build/examples/spits/libspits_block_filter.so in=signal.bin out=smooth.bin --log filter.log --stats s.json\n"
      "  redflow spits job.so tasks=100000 --listen 'tcp://127.0.0.1:*' --min-workers 2   (Task Managers: redflow worker --connect ADDR)\n"
      "  redflow spits /shared/job.so tasks=100000 --listen tcp://0.0.0.0:7000 --min-workers 8 --key jm.key --authorized-keys workers.txt\n"
      "  redflow spits job.so tasks=100000 --address-file /shared/job.addr -w 8  (the same line on every node: the first is the Job Manager,\n"
      "      the others its Task Managers; or on the nodes: redflow worker --address-file /shared/job.addr)\n"
      "  redflow spits job.so tasks=100000 --announce-dir /shared/tms --progress  (Task Managers: redflow spits-worker job.so --announce-dir /shared/tms)\n"
      "Exit status: 0 every task committed; 3 some tasks poisoned (failed 3 times, named in the report); 1 an error.");
  cmd->add_option("job", a->plugin, "The job plugin (.so)")->required()->check(readable_file());
  cmd->add_option("job_args", a->job_args, "The job's args (words such as tasks=1000; put -- before any that start with '-')");
  cmd->add_option("--local-workers,-w", a->workers, "Worker threads per Task Manager (default: one per hardware thread)")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--task-managers", a->task_managers, "Embedded Task Managers, each with its own queue and Workers")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--prefetch", a->prefetch, "Extra tasks queued per Task Manager beyond its Workers, to hide latency (default 0: adaptive, from max(W, 4) up to 1024 "
                  "so that about 10 ms of measured work waits in each queue)");
  cmd->add_option("--strikes", a->strikes, "Failed executions after which a task is poisoned: set aside and named")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd->add_option("--log", a->log,
                  "Append-only commit log: a Job Manager killed and restarted with the same log and args resumes, committing nothing twice");
  cmd->add_option("--stats", a->stats, "Write the final report as JSON to this file");
  add_report_flag(cmd, a->report_json);
  cmd->add_flag("--progress", a->progress, "Show the live commit count and rate on stderr");
  cmd->add_option("--trace", a->trace,
                  "Write where each task stayed (a lane per Task Manager, a slice per task from push to result, coloured by outcome) "
                  "as Chrome/Perfetto JSON (open in ui.perfetto.dev)")
      ->type_name("FILE.json");
  add_cluster_flags(cmd, a->cluster, {.workers = "Task Managers", .min_default = "default: 1"});
  cmd->add_option("--address-file", a->launch.address_file,
                  "Start this same command several times (a batch queue): the first to create FILE (O_EXCL) is the Job Manager and "
                  "publishes where it listens there; the others, and `redflow worker --address-file FILE`, dial in as its Task "
                  "Managers (default: none)")
      ->type_name("FILE")
      ->group("Workers");
  cmd->add_option("--announce-dir", a->announce,
                  "Announce list (PY-PITS's direction): a directory where listening Task Manager processes (redflow spits-worker "
                  "--announce-dir DIR) add themselves; the Job Manager connects to each, whenever they appear (default: none; with "
                  "it, no embedded Task Managers unless --task-managers is given)")
      ->type_name("DIR")
      ->group("Workers");
  cmd->add_option("--announce", a->announce, "Old name of --announce-dir")->type_name("DIR")->group("");
  add_dashboard_flags(cmd, a->dashboard);
  auto* tms = cmd->get_option("--task-managers");
  return {cmd, [a, tms] { return spits_main(*a, tms->count() > 0); }};
}

}  // namespace redflow::cli
