// run_server (server.hpp): the sockets, the driver processes and the journal
// around the JobTable.
#include "server/server.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>
#include <zmq.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "net/security.hpp"
#include "net/sockets.hpp"
#include "server/job_driver.hpp"
#include "server/job_files.hpp"
#include "server/job_table.hpp"
#include "server/journal.hpp"
#include "server/server_messages.hpp"
#include "server/worker_pool.hpp"

namespace redflow::server {

namespace {

namespace fs = std::filesystem;

// A free port on the host of the workers' endpoint "tcp://HOST:PORT", for
// one job's driver to bind. The driver binds it a moment after this probe
// let it go; a port from the kernel's ephemeral range (what "*" gives)
// could be taken in between as the local port of any outgoing connection,
// so it is drawn below that range (Linux's default starts at 32768). The
// probe has a context of its own, ended before this returns: ZeroMQ closes a
// socket's listener on its I/O thread, later, and a worker sent to the port
// at once must not reach a probe about to vanish (it would take the dropped
// connection for a driver that went away) or keep the driver from binding.
Result<std::uint16_t> job_port(const std::string& workers_endpoint, std::mt19937& random) {
  const std::string host = workers_endpoint.substr(0, workers_endpoint.rfind(':') + 1);
  std::uniform_int_distribution<int> below_ephemeral(20000, 32767);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int port = below_ephemeral(random);
    try {
      zmq::context_t context(1);
      zmq::socket_t probe(context, zmq::socket_type::router);
      probe.set(zmq::sockopt::linger, 0);
      probe.bind(host + std::to_string(port));
      return static_cast<std::uint16_t>(port);
    } catch (const zmq::error_t&) {
      continue;  // taken: another
    }
  }
  return Status::IOError("no free port for a job's driver on " + host + "20000-32767 (64 tried)");
}

// The workers named in a driver's RunReport: "NAME on HOST" per place.
std::vector<std::string> report_workers(const std::string& json) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.contains("places")) return out;
  for (const auto& p : j["places"]) {
    const std::string host = p.value("host", "");
    if (host.empty()) continue;  // a local tile or the driver
    out.push_back(p.value("name", "") + " on " + host);
  }
  return out;
}

class Server {
 public:
  explicit Server(const ServerOptions& o) : o_(o), cluster_(o.cluster), table_(o.cluster.min_workers, o.stop_grace_s) {}

  Status run(const std::atomic<bool>& stop) {
    std::string endpoint;  // from the journal, if one names it
    if (!o_.journal_dir.empty()) {
      auto j = Journal::open(o_.journal_dir, table_, endpoint);
      if (!j.ok()) return j.status();
      journal_ = std::move(*j);
      dir_ = o_.journal_dir;
      if (journal_->torn_bytes()) spdlog::warn("server: journal: a torn last record of {} bytes was cut off", journal_->torn_bytes());
    } else {
      char tmpl[] = "/tmp/redflow-server-XXXXXX";
      if (::mkdtemp(tmpl) == nullptr) return Status::IOError("cannot make a directory for the job files in /tmp");
      dir_ = tmpl;
    }
    // A restart listens where the workers redial: the journal's endpoint, when --listen left the port to us.
    const bool any_port = cluster_.listen.size() >= 2 && cluster_.listen.compare(cluster_.listen.size() - 2, 2, ":*") == 0;
    const bool fresh = endpoint.empty() || !any_port;
    if (fresh) endpoint = cluster_.listen;
    auto pool = WorkerPool::open(context_, endpoint, net::SecurityOptions{cluster_.key_file, cluster_.authorized_keys_file});
    if (!pool.ok()) return Status::IOError("--listen: " + pool.status().message());
    pool_ = std::move(*pool);
    if (fresh && journal_) REDFLOW_RETURN_IF_ERROR(journal_->endpoint(pool_->endpoint()));
    cluster_.listen = pool_->endpoint();
    zmq::socket_t router(context_, zmq::socket_type::router);
    router.set(zmq::sockopt::linger, 0);
    try {
      router.bind(o_.client_listen);
    } catch (const zmq::error_t& e) {
      return Status::IOError("--client-listen " + o_.client_listen + ": cannot bind: " + e.what());
    }
    if (o_.slurm.allocator.max_workers > 0) {
      auto slurm = SlurmAllocations::open(o_.slurm, dir_, o_.exe, cluster_.listen, cluster_.key_file);
      if (!slurm.ok()) return slurm.status();
      slurm_ = std::move(*slurm);
    }
    const std::string client = router.get(zmq::sockopt::last_endpoint);
    if (!o_.server_file.empty()) REDFLOW_RETURN_IF_ERROR(write_server_file(client));
    if (o_.on_listening) o_.on_listening(client, cluster_.listen);

    while (!stop.load()) {
      zmq::pollitem_t items[] = {{router.handle(), 0, ZMQ_POLLIN, 0}, {pool_->socket().handle(), 0, ZMQ_POLLIN, 0}};
      try {
        zmq::poll(items, 2, std::chrono::milliseconds(50));
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) return Status::IOError(std::string("server: poll: ") + e.what());
        continue;  // a signal (SIGTERM: stop) came
      }
      if (items[0].revents & ZMQ_POLLIN) serve(router);
      if (items[1].revents & ZMQ_POLLIN) pool_->receive();
      pool_->beat();
      for (const auto& u : pool_->untaken()) {
        spdlog::warn("server: worker {} did not go to job {} ({}); the job gets another", u.name, u.job, u.why);
        table_.untaken(u.job, u.name);
      }
      for (const auto& r : pool_->returned()) table_.returned(r.job);
      if (slurm_) {
        const std::size_t have = pool_->idle() + pool_->returning(), wanted = table_.workers_wanted();
        slurm_->tick(wanted > have ? wanted - have : 0, pool_->names(), uptime_s());
      }
      stop_timed_out();
      REDFLOW_RETURN_IF_ERROR(reap(router));
      REDFLOW_RETURN_IF_ERROR(start_next(router));
      publish_state();
    }
    // Stopped: the running jobs stay "running" in the journal and run again after a restart.
    for (auto& [id, running] : drivers_) running.driver.stop(0);
    if (slurm_) slurm_->stop(uptime_s());
    return Status::Ok();
  }

 private:
  // ServerOptions::on_state, at most every kStatePeriodS, when the jobs or workers changed.
  void publish_state() {
    if (!o_.on_state) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_state_) return;
    next_state_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(ServerOptions::kStatePeriodS));
    ServerState state{table_.all(), pool_->names(), pool_->idle_names()};
    if (last_state_ && same_state(*last_state_, state)) return;
    o_.on_state(state);
    last_state_ = std::move(state);
  }
  static bool same_state(const ServerState& a, const ServerState& b) {
    if (a.workers != b.workers || a.idle != b.idle || a.jobs.size() != b.jobs.size()) return false;
    for (std::size_t i = 0; i < a.jobs.size(); ++i)
      if (a.jobs[i].state != b.jobs[i].state || a.jobs[i].workers != b.jobs[i].workers || a.jobs[i].starts != b.jobs[i].starts) return false;
    return true;
  }

  Status write_server_file(const std::string& client) {
    const std::string tmp = o_.server_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << client << "\n" << cluster_.listen << "\n";
      if (!out) return Status::IOError("--server-file " + o_.server_file + ": cannot write it");
    }
    std::error_code ec;
    fs::rename(tmp, o_.server_file, ec);
    if (ec) return Status::IOError("--server-file " + o_.server_file + ": " + ec.message());
    return Status::Ok();
  }

  void send(zmq::socket_t& router, const std::string& who, const Reply& reply) {
    const auto body = encode(reply);
    router.send(zmq::buffer(who), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    router.send(zmq::buffer(body.data(), body.size()), zmq::send_flags::dontwait);
  }

  Reply job_reply(std::uint64_t id) {
    Reply r;
    r.jobs.push_back(*table_.find(id));
    return r;
  }

  void serve(zmq::socket_t& router) {
    std::vector<zmq::message_t> parts;
    if (!net::receive_message(router, parts, 3)) return;  // the routing id, the request, and one too many
    if (parts.size() < 2) return;                          // no routing id: nothing to answer
    const std::string who = parts[0].to_string();
    if (parts.size() != 2) {
      send(router, who, Reply{.status = Status::InvalidArgument("server request: malformed: more than 1 part")});
      return;
    }
    auto request = decode_request(std::span(static_cast<const std::byte*>(parts[1].data()), parts[1].size()));
    if (!request.ok()) {
      spdlog::warn("server: {}", request.status().message());
      send(router, who, Reply{.status = request.status()});
      return;
    }
    send_answer(router, who, *request);
  }

  void send_answer(zmq::socket_t& router, const std::string& who, const Request& q) {
    Reply r;
    switch (q.kind) {
      case RequestKind::kSubmit: {
        if (Status s = check_job_words(q.args); !s.ok()) return send(router, who, Reply{.status = s});
        r.id = table_.submit(q.args, q.cwd, q.options);
        if (journal_)
          if (Status s = journal_->submitted(*table_.find(r.id)); !s.ok()) return send(router, who, Reply{.status = s});
        spdlog::info("server: job {} queued: {}", r.id, fmt::join(q.args, " "));
        break;
      }
      case RequestKind::kStatus:
      case RequestKind::kWait:
        if (table_.find(q.id) == nullptr) return send(router, who, Reply{.status = unknown_job(q.id)});
        if (q.kind == RequestKind::kWait && !finished(table_.find(q.id)->state)) {
          waiters_[q.id].push_back(who);
          return;
        }
        r = job_reply(q.id);
        break;
      case RequestKind::kCancel: {
        auto effect = table_.cancel(q.id);
        if (!effect.ok()) return send(router, who, Reply{.status = effect.status()});
        if (*effect != JobTable::CancelEffect::kNone && journal_)
          if (Status s = journal_->cancelled(q.id); !s.ok()) return send(router, who, Reply{.status = s});
        if (*effect == JobTable::CancelEffect::kStopDriver)
          if (auto it = drivers_.find(q.id); it != drivers_.end()) it->second.driver.stop(o_.stop_grace_s);
        if (*effect == JobTable::CancelEffect::kDequeued) answer_waiters(router, q.id);
        r = job_reply(q.id);
        break;
      }
      case RequestKind::kList:
        r.jobs = table_.all();
        break;
      case RequestKind::kFetch: {
        const JobInfo* job = table_.find(q.id);
        if (job == nullptr) return send(router, who, Reply{.status = unknown_job(q.id)});
        auto files = read_job_files(*job, driver_files(dir_, q.id).report_json, kMaxFetchBytes);
        if (!files.ok()) return send(router, who, Reply{.status = files.status()});
        r.files = std::move(*files);
        break;
      }
      case RequestKind::kWorkers:
        break;
    }
    r.workers = {.endpoint = cluster_.listen, .per_job = cluster_.min_workers, .idle = pool_->idle_names(), .last = table_.last_workers()};
    if (slurm_) {
      r.workers.allocating = slurm_->allocator().summary(uptime_s());
      r.workers.allocations = slurm_->allocator().allocations(uptime_s());
    }
    send(router, who, r);
  }

  void answer_waiters(zmq::socket_t& router, std::uint64_t id) {
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    for (const auto& who : it->second) send(router, who, job_reply(id));
    waiters_.erase(it);
  }

  // Jobs past their time limit have their drivers stopped (once).
  void stop_timed_out() {
    const auto now = std::chrono::steady_clock::now();
    for (auto& [id, running] : drivers_)
      if (now >= running.deadline && table_.timed_out(id)) {
        spdlog::warn("server: {}", time_limit_message(*table_.find(id)));
        running.driver.stop(o_.stop_grace_s);
      }
  }

  Status reap(zmq::socket_t& router) {
    for (auto it = drivers_.begin(); it != drivers_.end();) {
      int exit_status = 0;
      std::string message;
      if (!it->second.driver.ended(exit_status, message)) {
        ++it;
        continue;
      }
      const std::uint64_t id = it->first;
      it = drivers_.erase(it);
      pool_->job_ended(id);
      const DriverFiles files = driver_files(dir_, id);
      std::string report = read_text(files.report_json);
      table_.ended(id, exit_status, message, report, report_workers(report));
      if (journal_) REDFLOW_RETURN_IF_ERROR(journal_->ended(*table_.find(id)));
      spdlog::info("server: job {} {} (exit status {})", id, to_string(table_.find(id)->state), table_.find(id)->exit_status);
      answer_waiters(router, id);
    }
    return Status::Ok();
  }

  // Starts every job the policy lets start now (job_table.hpp): each on idle
  // workers of its own, sent to its driver's port.
  Status start_next(zmq::socket_t& router) {
    // First the running jobs still short of workers: their drivers wait for them.
    while (pool_->idle() > 0) {
      auto id = table_.next_short();
      auto it = id ? drivers_.find(*id) : drivers_.end();
      if (it == drivers_.end() || it->second.port == 0) break;
      const std::vector<std::string> sent = pool_->send(table_.short_of(*id), it->second.port, cluster_.wait_s, *id);
      if (sent.empty()) break;
      spdlog::info("server: job {} was short of workers; sent {} more", *id, sent.size());
      table_.joined(*id, sent);
    }
    while (auto id = table_.next_to_start(pool_->idle(), uptime_s(), pool_->returning())) {
      const JobInfo& job = *table_.find(*id);
      const std::uint32_t n = table_.workers_for(*id);
      ClusterOptions cluster = cluster_;
      Result<std::uint16_t> port = std::uint16_t{0};
      if (n > 0) {
        port = job_port(cluster_.listen, random_);
        cluster.listen = cluster_.listen.substr(0, cluster_.listen.rfind(':') + 1) + (port.ok() ? std::to_string(*port) : "*");
        cluster.min_workers = n;
      }
      const DriverFiles files = driver_files(dir_, *id);
      std::error_code ignored;
      fs::remove(files.report_json, ignored);  // a report left by an earlier start is not this one's
      auto d = port.ok() ? JobDriver::start(driver_argv(o_.exe, job.args, cluster, files), job.cwd, files.log) : Result<JobDriver>(port.status());
      std::vector<std::string> workers;
      if (d.ok() && n > 0) {
        workers = pool_->send(n, *port, cluster_.wait_s, *id);
        if (workers.size() < n)
          spdlog::warn("server: job {} has {} of its {} workers (the others were gone); it gets the next idle ones (its driver waits --wait {} s)",
                       *id, workers.size(), n, cluster_.wait_s);
      }
      table_.started(*id, workers, uptime_s());
      if (journal_) REDFLOW_RETURN_IF_ERROR(journal_->started(*id));
      if (!d.ok()) {  // the job fails, the server goes on
        table_.ended(*id, 1, d.status().message(), "", {});
        if (journal_) REDFLOW_RETURN_IF_ERROR(journal_->ended(*table_.find(*id)));
        answer_waiters(router, *id);
        continue;
      }
      spdlog::info("server: job {} started (driver pid {}) on {} worker(s)", *id, d->pid(), workers.size());
      const double limit = table_.find(*id)->time_limit_s;
      const auto deadline = limit > 0 ? std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                                std::chrono::duration<double>(limit))
                                      : std::chrono::steady_clock::time_point::max();
      drivers_.emplace(*id, Running{std::move(*d), deadline, n > 0 ? *port : std::uint16_t{0}});
    }
    return Status::Ok();
  }

  // A job's driver process, and when its time limit stops it.
  struct Running {
    JobDriver driver;
    std::chrono::steady_clock::time_point deadline;
    std::uint16_t port = 0;  // where its workers are sent; 0: it takes none
  };

  // Seconds since this server started: the clock of the job table's reservations.
  double uptime_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - born_).count(); }

  const ServerOptions& o_;
  const std::chrono::steady_clock::time_point born_ = std::chrono::steady_clock::now();
  ClusterOptions cluster_;
  zmq::context_t context_;
  JobTable table_;
  std::unique_ptr<Journal> journal_;
  std::string dir_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<SlurmAllocations> slurm_;
  std::mt19937 random_{std::random_device{}()};
  std::map<std::uint64_t, Running> drivers_;
  std::map<std::uint64_t, std::vector<std::string>> waiters_;
  std::chrono::steady_clock::time_point next_state_{};  // publish_state()
  std::optional<ServerState> last_state_;
};

}  // namespace

Status check_server_options(const ServerOptions& options) {
  if (options.cluster.min_workers == 0) return Status::InvalidArgument("redflow server needs --min-workers N: the workers every job waits for");
  REDFLOW_RETURN_IF_ERROR(options.cluster.validate());
  if (options.cluster.listen.rfind("tcp://", 0) != 0)
    return Status::InvalidArgument("--listen " + options.cluster.listen + ": the server's workers' endpoint is tcp://HOST:PORT (each job's driver takes another port of HOST)");
  if (Status s = net::check_listen_address(options.client_listen, net::SecurityOptions{}); !s.ok())
    return Status::InvalidArgument("--client-listen: " + s.message() + " (clients reach the server on loopback only)");
  const SlurmOptions& slurm = options.slurm;
  if (slurm.allocator.max_workers > 0) {
    if (slurm.allocator.workers_per_allocation == 0 || slurm.allocator.workers_per_allocation > slurm.allocator.max_workers)
      return Status::InvalidArgument(fmt::format("--slurm-per-allocation {}: between 1 and --slurm-workers ({})", slurm.allocator.workers_per_allocation,
                                                 slurm.allocator.max_workers));
    if (!(slurm.worker_idle_s > 0)) return Status::InvalidArgument("--slurm-idle: seconds a worker from Slurm waits for a job, above 0");
    if (!slurm.key_dir.empty() && options.cluster.key_file.empty())
      return Status::InvalidArgument("--slurm-worker-keys needs the server's own --key (its workers check the server's public key)");
  } else if (!slurm.sbatch_args.empty() || !slurm.key_dir.empty()) {
    return Status::InvalidArgument("--slurm-arg and --slurm-worker-keys need --slurm-workers N: the most workers the server asks Slurm for");
  }
  return Status::Ok();
}

Status run_server(const ServerOptions& options, const std::atomic<bool>& stop) {
  REDFLOW_RETURN_IF_ERROR(check_server_options(options));
  Server server(options);
  return server.run(stop);
}

}  // namespace redflow::server
