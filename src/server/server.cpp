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

#include "net/security.hpp"
#include "server/job_driver.hpp"
#include "server/job_table.hpp"
#include "server/journal.hpp"
#include "server/server_messages.hpp"

namespace redflow::server {

namespace {

namespace fs = std::filesystem;

// "tcp://HOST:*" made a fixed port, so every job's driver binds where the
// workers redial; anything else as given.
Result<std::string> fixed_endpoint(zmq::context_t& context, const std::string& endpoint) {
  if (endpoint.size() < 2 || endpoint.compare(endpoint.size() - 2, 2, ":*") != 0) return endpoint;
  try {
    zmq::socket_t probe(context, zmq::socket_type::router);
    probe.set(zmq::sockopt::linger, 0);
    probe.bind(endpoint);
    return probe.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return Status::IOError("--listen " + endpoint + ": cannot bind: " + e.what());
  }
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

std::string read_report_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

class Server {
 public:
  explicit Server(const ServerOptions& o) : o_(o), cluster_(o.cluster) {}

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
    if (endpoint.empty() || !any_port) {
      auto fixed = fixed_endpoint(context_, cluster_.listen);
      if (!fixed.ok()) return fixed.status();
      endpoint = *fixed;
      if (journal_) REDFLOW_RETURN_IF_ERROR(journal_->endpoint(endpoint));
    }
    cluster_.listen = endpoint;
    zmq::socket_t router(context_, zmq::socket_type::router);
    router.set(zmq::sockopt::linger, 0);
    try {
      router.bind(o_.client_listen);
    } catch (const zmq::error_t& e) {
      return Status::IOError("--client-listen " + o_.client_listen + ": cannot bind: " + e.what());
    }
    const std::string client = router.get(zmq::sockopt::last_endpoint);
    if (!o_.server_file.empty()) REDFLOW_RETURN_IF_ERROR(write_server_file(client));
    if (o_.on_listening) o_.on_listening(client, cluster_.listen);

    while (!stop.load()) {
      zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
      try {
        zmq::poll(&item, 1, std::chrono::milliseconds(50));
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) return Status::IOError(std::string("server: poll: ") + e.what());
        continue;  // a signal (SIGTERM: stop) came
      }
      if (item.revents & ZMQ_POLLIN) serve(router);
      REDFLOW_RETURN_IF_ERROR(reap(router));
      REDFLOW_RETURN_IF_ERROR(start_next(router));
    }
    // Stopped: the running job stays "running" in the journal and runs again after a restart.
    if (driver_) driver_->stop(0);
    return Status::Ok();
  }

 private:
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
    for (;;) {
      zmq::message_t m;
      if (!router.recv(m, zmq::recv_flags::dontwait)) return;
      const bool more = m.more();
      parts.push_back(std::move(m));
      if (!more) break;
    }
    if (parts.size() < 2) return;  // no routing id: nothing to answer
    const std::string who = parts[0].to_string();
    if (parts.size() != 2) {
      send(router, who, Reply{.status = Status::InvalidArgument("server request: malformed: " + std::to_string(parts.size() - 1) + " parts, not 1")});
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
        r.id = table_.submit(q.args, q.cwd);
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
        if (*effect == JobTable::CancelEffect::kStopDriver && driver_) driver_->stop(o_.stop_grace_s);
        if (*effect == JobTable::CancelEffect::kDequeued) answer_waiters(router, q.id);
        r = job_reply(q.id);
        break;
      }
      case RequestKind::kList:
        r.jobs = table_.all();
        break;
      case RequestKind::kWorkers:
        break;
    }
    r.workers = {cluster_.listen, cluster_.min_workers, table_.last_workers()};
    send(router, who, r);
  }

  void answer_waiters(zmq::socket_t& router, std::uint64_t id) {
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    for (const auto& who : it->second) send(router, who, job_reply(id));
    waiters_.erase(it);
  }

  Status reap(zmq::socket_t& router) {
    int exit_status = 0;
    std::string message;
    if (!driver_ || !driver_->ended(exit_status, message)) return Status::Ok();
    driver_.reset();
    const std::uint64_t id = *table_.running();
    const DriverFiles files = driver_files(dir_, id);
    std::string report = read_report_text(files.report_json);
    table_.ended(id, exit_status, message, report, report_workers(report));
    if (journal_) REDFLOW_RETURN_IF_ERROR(journal_->ended(*table_.find(id)));
    spdlog::info("server: job {} {} (exit status {})", id, to_string(table_.find(id)->state), exit_status);
    answer_waiters(router, id);
    return Status::Ok();
  }

  Status start_next(zmq::socket_t& router) {
    auto id = table_.next_to_start();
    if (!id) return Status::Ok();
    const JobInfo& job = *table_.find(*id);
    const DriverFiles files = driver_files(dir_, *id);
    auto d = JobDriver::start(driver_argv(o_.exe, job.args, cluster_, files), job.cwd, files);
    table_.started(*id);
    if (journal_) REDFLOW_RETURN_IF_ERROR(journal_->started(*id));
    if (!d.ok()) {  // the job fails, the server goes on
      table_.ended(*id, 1, d.status().message(), "", {});
      if (journal_) REDFLOW_RETURN_IF_ERROR(journal_->ended(*table_.find(*id)));
      answer_waiters(router, *id);
      return Status::Ok();
    }
    driver_ = std::move(*d);
    spdlog::info("server: job {} started (driver pid {})", *id, driver_->pid());
    return Status::Ok();
  }

  const ServerOptions& o_;
  ClusterOptions cluster_;
  zmq::context_t context_;
  JobTable table_;
  std::unique_ptr<Journal> journal_;
  std::string dir_;
  std::optional<JobDriver> driver_;
  std::map<std::uint64_t, std::vector<std::string>> waiters_;
};

}  // namespace

Status check_server_options(const ServerOptions& options) {
  if (options.cluster.min_workers == 0) return Status::InvalidArgument("redflow server needs --min-workers N: the workers every job waits for");
  REDFLOW_RETURN_IF_ERROR(options.cluster.validate());
  if (Status s = net::check_listen_address(options.client_listen, net::SecurityOptions{}); !s.ok())
    return Status::InvalidArgument("--client-listen: " + s.message() + " (clients reach the server on loopback only)");
  return Status::Ok();
}

Status run_server(const ServerOptions& options, const std::atomic<bool>& stop) {
  REDFLOW_RETURN_IF_ERROR(check_server_options(options));
  Server server(options);
  return server.run(stop);
}

}  // namespace redflow::server
