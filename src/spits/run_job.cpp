// run_job(): a SPITS job from plugin to report, embedded (include/redflow/spits.hpp).
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "redflow/spits.hpp"
#include "spits/job_manager.hpp"
#include "spits/local_task_manager.hpp"
#include "spits/task_manager_link.hpp"

namespace redflow::spits {

namespace {

// What main()'s runner->run_phase reaches.
struct PhaseRunner {
  redflow_spits_runner runner;
  JobManager* manager;
  Status failure;  // the first failed phase's reason, reported instead of "main returned 1"
};

int run_phase_trampoline(const redflow_spits_runner* r, const char* /*phase_name*/) {
  auto* self = static_cast<PhaseRunner*>(r->runtime);
  if (!self->failure.ok()) return 1;  // a failed job does not go on
  Status s = self->manager->run_phase();
  if (s.ok()) return 0;
  self->failure = s;
  return 1;
}

// Names the job in its log: its name and args, so a log is never replayed
// against another job.
std::uint64_t job_hash(const std::string& name, const std::vector<std::string>& args) {
  std::string key = name;
  for (const auto& a : args) key += '\0' + a;
  return XXH3_64bits(key.data(), key.size());
}

// Before each round of the Job Manager: Task Managers that joined take part
// at once; with none live for wait_s (while the phase runs), the job fails
// with an error that says where it looked.
std::function<Status()> remote_discovery(TaskManagerLink& link, std::vector<std::unique_ptr<TaskManager>>& managers, Report& report,
                                         const Options& options) {
  auto alone_since = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [&link, &managers, &report, &options, alone_since]() -> Status {
    for (auto& tm : link.take_joined()) {
      TaskManagerCounts& counts = report.task_managers.emplace_back();
      counts.name = tm->name();
      counts.workers = tm->workers();
      if (const auto* remote = dynamic_cast<const RemoteTaskManager*>(tm.get())) counts.host = remote->host();
      managers.push_back(std::move(tm));
    }
    const auto now = std::chrono::steady_clock::now();
    if (options.task_managers > 0 || link.live() > 0) {
      *alone_since = now;
      return Status::Ok();
    }
    if (now - *alone_since > std::chrono::duration<double>(options.cluster.wait_s)) {
      std::string start;
      if (!link.endpoint().empty()) start = "`redflow worker --connect " + link.endpoint() + "`";
      if (!options.announce_dir.empty())
        start += (start.empty() ? "" : " or ") + std::string("`redflow spits-worker JOB.so --announce-dir ") + options.announce_dir + "`";
      return Status::ResourceExhausted("SPITS: no Task Manager has been live for " + std::to_string(static_cast<int>(options.cluster.wait_s)) +
                                       " s; start some with " + start + " (--wait sets this limit)");
    }
    return Status::Ok();
  };
}

}  // namespace

Result<Report> run_job(const std::string& plugin_path, const std::vector<std::string>& job_args, const Options& options) {
  const bool remote = !options.announce_dir.empty() || !options.cluster.listen.empty();
  if (options.workers == 0 || (options.task_managers == 0 && !remote))
    return Status::InvalidArgument("SPITS: need at least one Task Manager with one Worker (embedded, or remote: listen or an announce list)");
  if (options.cluster.min_workers > 0 && !remote)
    return Status::InvalidArgument("SPITS: cluster.min_workers (--min-workers) waits for remote Task Managers: give cluster.listen (--listen) or an announce list");
  if (options.strikes == 0) return Status::InvalidArgument("SPITS: strikes must be at least 1");
  if (remote) REDFLOW_RETURN_IF_ERROR(options.cluster.validate());
  auto start = std::chrono::steady_clock::now();
  auto plugin = JobPlugin::load(plugin_path);
  if (!plugin.ok()) return plugin.status();
  JobPlugin& job = **plugin;
  Report report;
  report.job = job.name();

  std::unique_ptr<CommitLog> log;
  if (!options.log_path.empty()) {
    auto opened = CommitLog::open(options.log_path, job_hash(job.name(), job_args));
    if (!opened.ok()) return opened.status();
    log = std::move(*opened);
    report.torn_log_bytes = log->torn_bytes();
  }
  REDFLOW_RETURN_IF_ERROR(job.setup(job_args));

  unsigned prefetch = options.prefetch ? options.prefetch : std::max(options.workers, 4u);
  JobWakeup wakeup;
  std::vector<std::unique_ptr<TaskManager>> managers;
  for (unsigned i = 0; i < options.task_managers; ++i) {
    std::string name = "local-" + std::to_string(i);
    managers.push_back(std::make_unique<LocalTaskManager>(name, job, options.workers, prefetch, options.prefetch == 0, wakeup));
    TaskManagerCounts& counts = report.task_managers.emplace_back();
    counts.name = name;
    counts.workers = options.workers;
  }
  JobManager manager(job, managers, wakeup, log.get(), options, report);
  std::unique_ptr<TaskManagerLink> link;
  if (remote) {
    LinkOptions lo;
    lo.cluster = options.cluster;
    lo.announce_dir = options.announce_dir;
    // Absolute, so a worker started elsewhere finds it on the shared file system.
    lo.plugin = std::filesystem::absolute(plugin_path).string();
    lo.job = job.name();
    lo.args = job_args;
    auto started = TaskManagerLink::start(lo, wakeup);
    if (!started.ok()) return started.status();
    link = std::move(*started);
    if (options.cluster.on_listening && !link->endpoint().empty()) options.cluster.on_listening(link->endpoint());
    if (options.cluster.min_workers > 0)
      if (Status s = link->wait_for(options.cluster.min_workers, options.cluster.wait_s); !s.ok()) {
        link.reset();
        (void)job.teardown(false);
        return s;
      }
    manager.set_discover(remote_discovery(*link, managers, report, options));
  }
  Status run;
  if (job.has_main()) {
    PhaseRunner pr{{nullptr, &run_phase_trampoline}, &manager, Status::Ok()};
    pr.runner.runtime = &pr;
    run = job.main(&pr.runner);
    if (!pr.failure.ok()) run = pr.failure;
  } else {
    run = manager.run_phase();
  }
  for (auto& m : managers) m->stop();
  manager.count_task_managers();
  for (std::size_t i = 0; i < managers.size(); ++i)
    if (auto* remote = dynamic_cast<RemoteTaskManager*>(managers[i].get())) {
      report.task_managers[i].host = remote->host();
      report.task_managers[i].late = remote->late_results();
    }
  link.reset();  // BYE: the Task Managers end
  Status down = job.teardown(run.ok());
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!run.ok()) return run;
  if (!down.ok()) return down;
  return report;
}

}  // namespace redflow::spits
