// The Task Manager role (task_manager_role.hpp): the job from WELCOME, its
// Workers, and the session's requests and acknowledgements handed to them.
#include "spits/task_manager_role.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <string>

#include "spits/job_plugin.hpp"
#include "spits/net_messages.hpp"
#include "spits/task_manager_work.hpp"

namespace redflow::spits {

namespace {

// One Job Manager's job on this worker, from WELCOME to BYE.
class TaskManagerService final : public net::WorkerService {
 public:
  TaskManagerService(JobPlugin& job, std::string name, unsigned workers, net::Sender& driver, const net::Doorbell& doorbell)
      : job_(job), driver_(driver), work_(std::move(name), job, workers, 0, doorbell) {}
  ~TaskManagerService() override { end(); }

  Status on_request(std::uint64_t request, net::ReceivedBytes frame) override { return work_.take(driver_, request, frame.bytes()); }
  void on_ack(std::uint64_t seq) override { work_.acknowledged(seq); }
  Status turn() override {
    work_.send_results(driver_);
    return Status::Ok();
  }
  std::uint64_t answered_through() const override { return work_.last_taken(); }
  // The job is over: what the Workers still run is not needed.
  Status on_bye() override { return end(); }
  bool leave() override {
    (void)end();
    return false;
  }

 private:
  // The Workers stop, then the job's state is freed (completed=0: whether
  // the job completed is the Job Manager's to say).
  Status end() {
    if (ended_) return Status::Ok();
    ended_ = true;
    work_.stop();
    Status down = job_.teardown(false);
    if (!down.ok()) spdlog::warn("spits Task Manager: {}", down.message());
    return down;
  }

  JobPlugin& job_;
  net::Sender& driver_;
  TaskManagerWork work_;
  bool ended_ = false;
};

class TaskManagerRole final : public net::WorkerRole {
 public:
  explicit TaskManagerRole(unsigned cores) : cores_(cores) {}
  net::Role role() const override { return net::Role::kTaskManager; }
  std::uint16_t version() const override { return kSpitsProtocolVersion; }
  Status describe(net::PeerSocket&, net::HelloMessage&) override { return Status::Ok(); }

  Result<std::unique_ptr<net::WorkerService>> start(const net::WelcomeMessage& welcome, net::Sender& driver, const net::Doorbell& doorbell) override {
    JobWelcome job;
    REDFLOW_RETURN_IF_ERROR(decode(welcome.service, job));
    auto plugin = load(job.plugin);
    if (!plugin.ok()) return plugin.status();
    JobPlugin& p = **plugin;
    if (p.name() != job.job)
      return Status::InvalidArgument("the Job Manager runs job '" + job.job + "', but the plugin " + job.plugin + " on this worker is job '" +
                                     p.name() + "' (a different file at the same path?)");
    if (Status s = p.setup(job.args); !s.ok()) return Status::InvalidArgument("setup of job '" + job.job + "' failed on this worker: " + s.message());
    spdlog::info("spits Task Manager {}: serving job '{}' ({} Workers)", welcome.tile, job.job, cores_);
    return std::unique_ptr<net::WorkerService>(
        std::make_unique<TaskManagerService>(p, "task manager " + std::to_string(welcome.tile), cores_, driver, doorbell));
  }

 private:
  // The plugin at `path`, loaded once for every session that names it.
  Result<JobPlugin*> load(const std::string& path) {
    auto& kept = plugins_[path];
    if (!kept) {
      auto loaded = JobPlugin::load(path);
      if (!loaded.ok()) {
        plugins_.erase(path);
        return Status::NotFound(loaded.status().message() + " (the Job Manager's plugin path must exist on every worker's machine: a shared file system)");
      }
      kept = std::move(*loaded);
    }
    return kept.get();
  }

  unsigned cores_;
  std::map<std::string, std::unique_ptr<JobPlugin>> plugins_;
};

}  // namespace

std::unique_ptr<net::WorkerRole> make_task_manager_role(unsigned cores) { return std::make_unique<TaskManagerRole>(cores); }

Status serve_job_manager(const DialInTaskManagerOptions& options) {
  net::WorkerSessionOptions session;
  session.driver = [driver = options.driver]() -> Result<net::DriverAddress> { return driver; };
  session.security = options.security;
  session.name = options.name;
  session.cores = options.workers;
  session.connect_timeout_s = options.connect_timeout_s;
  net::WorkerSession worker(std::move(session));
  worker.add(make_task_manager_role(options.workers));
  return worker.run();
}

}  // namespace redflow::spits
