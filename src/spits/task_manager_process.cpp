// A Task Manager process's loop (task_manager_process.hpp): the socket and
// the heartbeats on the calling thread, the job's part (the Workers and the
// result batches kept until acknowledged) in a TaskManagerWork that rings
// the doorbell when results are ready.
#include "spits/task_manager_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <csignal>

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <zmq.hpp>

#include "net/address_file.hpp"
#include "net/doorbell.hpp"
#include "net/driver_messages.hpp"
#include "net/keys.hpp"
#include "net/refusal_log.hpp"
#include "net/sockets.hpp"
#include "spits/announce.hpp"
#include "spits/job_plugin.hpp"
#include "spits/net_messages.hpp"
#include "spits/task_manager_work.hpp"

namespace redflow::spits {

namespace {

using Clock = std::chrono::steady_clock;

// SIGTERM or SIGINT: leave the job cleanly (finish what runs, send the
// results and BYE) instead of dying with tasks the Job Manager must strike.
volatile std::sig_atomic_t leave_requested = 0;
void request_leave(int) { leave_requested = 1; }
using net::EnvelopeKind;

// The Job Manager served, as a Sender: the ROUTER to its routing id.
class RouterSender final : public net::Sender {
 public:
  RouterSender(zmq::socket_t& socket, const std::string& routing) : socket_(socket), routing_(routing) {}
  bool send(EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) override {
    return net::send_envelope(socket_, kind, request, body, routing_);
  }
  bool send_owned(EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) override {
    return net::send_envelope_owned(socket_, kind, request, std::move(body), routing_);
  }

 private:
  zmq::socket_t& socket_;
  const std::string& routing_;
};

class TaskManagerServer {
 public:
  TaskManagerServer(const TaskManagerProcessOptions& options, JobPlugin& job, zmq::socket_t& socket, const net::Doorbell& doorbell)
      : options_(options), job_(job), socket_(socket), doorbell_(doorbell), to_jm_(socket, jm_) {
    info_.host = net::this_process_record().host;
    info_.pid = static_cast<std::uint32_t>(::getpid());
    info_.name = options.name.empty() ? info_.host + "-" + std::to_string(info_.pid) : options.name;
    info_.workers = options.workers;
  }
  ~TaskManagerServer() {
    stop_workers();
    for (const auto& [peer, n] : refusals_.unlogged()) spdlog::warn("spits Task Manager '{}': refused {} message(s) from {} in all", info_.name, n, peer);
  }
  // Leaving: the Workers finish the tasks they started, their results go out,
  // then BYE. What was only queued here the Job Manager re-queues.
  void leave() {
    stop_workers();
    if (work_) work_->send_results(to_jm_);
    if (serving_) net::send_envelope(socket_, EnvelopeKind::kBye, 0, {}, jm_);
  }
  // Before teardown: no Worker may still be inside execute_task.
  void stop_workers() {
    if (work_) work_->stop();
  }
  const std::string& name() const { return info_.name; }

  // One pass: what arrived, the results ready, the heartbeat. Ok(true) when
  // the Job Manager said BYE.
  Result<bool> step(Clock::time_point now) {
    std::vector<zmq::message_t> parts;
    for (int i = 0; i < 256 && net::receive_message(socket_, parts); ++i) {
      if (parts.size() < 2) continue;
      const std::string routing(static_cast<const char*>(parts[0].data()), parts[0].size());
      net::Envelope e;
      wire::Error error;
      if (Status s = net::decode_envelope(net::part_spans(parts, 1), e, error); !s.ok()) {
        const std::string peer = routing == jm_ ? "its Job Manager" : "another peer";
        if (const std::uint64_t n = refusals_.refuse(peer))
          spdlog::warn("spits Task Manager '{}': refused a message from {}: {}{}", info_.name, peer, s.message(), net::RefusalLog::times(n));
        continue;
      }
      auto bye = on_message(routing, e, now);
      if (!bye.ok() || *bye) return bye;
    }
    // Results go out as one batch per pass, even while the Job Manager
    // seems silent (see below); they are kept until acknowledged.
    if (work_) work_->send_results(to_jm_);
    // Heartbeats go out even while the Job Manager seems silent: on a slow
    // link its own heartbeats may only be queued behind a large task batch,
    // and it judges this side by what arrives from here. Each carries the
    // request id of the last heartbeat heard from it, which names the last
    // task batch it had sent before that one: the Job Manager knows from it,
    // without a timeout, that a batch this side never acknowledged was lost.
    if (serving_ && now >= next_beat_) {
      net::send_envelope(socket_, EnvelopeKind::kHeartbeat, echo_, {}, jm_);
      next_beat_ = now + interval();
    }
    return false;
  }

  bool serving() const { return serving_; }
  Clock::time_point heard() const { return heard_; }
  std::chrono::milliseconds interval() const { return std::chrono::milliseconds(hello_.heartbeat_interval_ms); }
  bool live(Clock::time_point now) const { return now - heard_ <= std::chrono::milliseconds(hello_.heartbeat_timeout_ms); }

 private:
  void refuse(const std::string& routing, const std::string& why) {
    std::vector<std::byte> body;
    net::encode(net::RefusedMessage{why}, body);
    net::send_envelope(socket_, EnvelopeKind::kRefused, 0, body, routing);
  }

  Result<bool> on_message(const std::string& routing, const net::Envelope& e, Clock::time_point now) {
    if (e.kind == EnvelopeKind::kHello) {
      on_hello(routing, e.body, now);
      return false;
    }
    if (!serving_ || routing != jm_) {
      if (e.kind != EnvelopeKind::kHeartbeat && e.kind != EnvelopeKind::kBye) refuse(routing, "say HELLO first");
      return false;
    }
    heard_ = now;
    switch (e.kind) {
      case EnvelopeKind::kRequest:
        // Not acknowledged when unreadable: the Job Manager declares the batch lost.
        if (Status s = work_->take(to_jm_, e.request, e.body); !s.ok()) spdlog::warn("spits Task Manager '{}': {}", info_.name, s.message());
        return false;
      case EnvelopeKind::kAck: work_->acknowledged(e.request); return false;
      case EnvelopeKind::kHeartbeat: echo_ = e.request; return false;
      case EnvelopeKind::kBye: return true;
      default: return false;
    }
  }

  void on_hello(const std::string& routing, std::span<const std::byte> body, Clock::time_point now) {
    JobHello hello;
    if (Status s = decode(body, hello); !s.ok()) {
      spdlog::warn("spits Task Manager '{}': {}", info_.name, s.message());
      refuse(routing, s.message());
      return;
    }
    if (hello.job != job_.name()) {
      refuse(routing, "this Task Manager runs job '" + job_.name() + "', not '" + hello.job + "'");
      return;
    }
    const bool same = serving_ && hello.incarnation == hello_.incarnation;
    if (serving_ && !same && live(now)) {
      refuse(routing, "busy: serving another Job Manager, heard " +
                          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - heard_).count()) + " ms ago");
      return;
    }
    if (set_up_ && hello.args != hello_.args) {
      refuse(routing, "set up for the same job with other args; start a new Task Manager for this one");
      return;
    }
    if (!set_up_) {
      if (Status s = job_.setup(hello.args); !s.ok()) {
        refuse(routing, "setup failed on Task Manager '" + info_.name + "': " + s.message());
        return;
      }
      set_up_ = true;
    }
    if (!same) {
      // A new Job Manager: what the old one pushed is its business no more.
      work_.reset();
      work_ = std::make_unique<TaskManagerWork>(info_.name, job_, options_.workers, options_.prefetch, doorbell_);
      spdlog::info("spits Task Manager '{}': serving job '{}' ({} Workers)", info_.name, hello.job, options_.workers);
    } else {
      spdlog::info("spits Task Manager '{}': the Job Manager is back; re-sending {} result batches", info_.name, work_->kept());
    }
    hello_ = std::move(hello);
    jm_ = routing;
    echo_ = 0;
    serving_ = true;
    heard_ = now;
    next_beat_ = now + interval();
    info_.capacity = work_->capacity();
    std::vector<std::byte> welcome;
    encode(info_, welcome);
    to_jm_.send(EnvelopeKind::kWelcome, 0, welcome);
    work_->resend(to_jm_);
  }

  const TaskManagerProcessOptions& options_;
  JobPlugin& job_;
  zmq::socket_t& socket_;
  const net::Doorbell& doorbell_;
  TaskManagerInfo info_;
  JobHello hello_;
  bool set_up_ = false, serving_ = false;
  std::string jm_;  // the routing id of the Job Manager served
  RouterSender to_jm_;
  net::RefusalLog refusals_;  // unreadable messages: logged first, then counted
  Clock::time_point heard_{}, next_beat_{};
  std::unique_ptr<TaskManagerWork> work_;
  std::uint64_t echo_ = 0;  // the request id of the Job Manager's last heartbeat

 public:
  // setup ran: teardown is due at the end.
  bool set_up() const { return set_up_; }
  // Result batches sent and not yet acknowledged.
  std::size_t kept() const { return work_ ? work_->kept() : 0; }
};

// Why a Task Manager stops waiting for a silent Job Manager, and what that
// costs: the result batches it kept are never acknowledged, so the Job
// Manager (if it comes back) runs their tasks again.
std::string linger_ended(const std::string& name, double linger_s, std::size_t kept) {
  std::string s = "spits Task Manager '";
  s += name;
  s += "': the Job Manager has been silent for more than ";
  s += std::to_string(static_cast<int>(linger_s));
  s += " s (--linger); the ";
  s += std::to_string(kept);
  s += " result batch(es) kept here for it are dropped";
  return s;
}

}  // namespace

Status run_task_manager(const TaskManagerProcessOptions& options) {
  if (options.workers == 0) return Status::InvalidArgument("spits Task Manager: need at least one Worker");
  if (options.announce_dir.empty()) return Status::InvalidArgument("spits Task Manager: give the announce list (--announce-dir DIR)");
  auto plugin = JobPlugin::load(options.plugin);
  if (!plugin.ok()) return plugin.status();
  JobPlugin& job = **plugin;

  zmq::context_t context(1);
  net::ZapAuthenticator zap(context);
  std::string bound;
  auto router = net::make_driver_router(context, options.listen, bound, options.security, zap);
  if (!router.ok()) return router.status();
  std::string public_key;
  if (!options.security.key_file.empty()) {
    auto keys = net::read_secret_key_file(options.security.key_file);
    if (!keys.ok()) return keys.status();
    public_key = keys->public_key;
  }
  const net::Doorbell doorbell;
  if (!doorbell.ok()) return Status::IOError("eventfd failed");

  TaskManagerServer server(options, job, *router, doorbell);
  REDFLOW_RETURN_IF_ERROR(announce(options.announce_dir, server.name(), bound, public_key));
  struct Withdraw {
    const std::string &dir, &name;
    ~Withdraw() { withdraw(dir, name); }
  } withdraw_at_end{options.announce_dir, server.name()};
  spdlog::info("spits Task Manager '{}': listening on {}, announced in {}", server.name(), bound, options.announce_dir);
  if (options.on_listening) options.on_listening(bound);

  leave_requested = 0;
  struct sigaction leave_action {}, old_term {}, old_int {};
  leave_action.sa_handler = request_leave;
  sigemptyset(&leave_action.sa_mask);
  ::sigaction(SIGTERM, &leave_action, &old_term);
  ::sigaction(SIGINT, &leave_action, &old_int);
  struct RestoreSignals {
    struct sigaction term, intr;
    ~RestoreSignals() {
      ::sigaction(SIGTERM, &term, nullptr);
      ::sigaction(SIGINT, &intr, nullptr);
    }
  } restore{old_term, old_int};

  const auto start = Clock::now();
  zmq::pollitem_t items[] = {{router->handle(), 0, ZMQ_POLLIN, 0}, {nullptr, doorbell.fd(), ZMQ_POLLIN, 0}};
  Status end = Status::Ok();
  for (;;) {
    REDFLOW_RETURN_IF_ERROR(net::poll_for(items, server.serving() ? server.interval() : std::chrono::milliseconds(100)));
    if (items[1].revents & ZMQ_POLLIN) doorbell.drain();
    const auto now = Clock::now();
    auto bye = server.step(now);
    if (!bye.ok()) {
      end = bye.status();
      break;
    }
    if (*bye) break;
    if (leave_requested) {
      spdlog::info("spits Task Manager '{}': leaving (signal): finishing the running tasks, then BYE", server.name());
      server.leave();
      break;
    }
    if (!server.serving() && now - start > std::chrono::duration<double>(options.wait_s)) {
      // A Job Manager refused for its key never reaches this loop: say so, or the wait looks like nobody came.
      const std::uint64_t refused = zap.refused();
      end = Status::ResourceExhausted("spits Task Manager '" + server.name() + "': no Job Manager came within " +
                                      std::to_string(static_cast<int>(options.wait_s)) + " s (--wait)" +
                                      (refused == 0 ? std::string()
                                                    : "; " + std::to_string(refused) +
                                                          " connection(s) were refused in their handshake: a Job Manager without a key, or "
                                                          "with one not in --authorized-keys (the warnings above name them)"));
      break;
    }
    if (server.serving() && now - server.heard() > std::chrono::duration<double>(options.linger_s)) {
      end = Status::IOError(linger_ended(server.name(), options.linger_s, server.kept()));
      break;
    }
  }
  const bool set_up = server.set_up();
  server.stop_workers();
  router->set(zmq::sockopt::linger, 200);
  if (set_up) {
    // completed=0 on a Task Manager: it frees the job's state; whether the
    // job completed is the Job Manager's to say (its teardown checks outputs).
    Status down = job.teardown(false);
    if (end.ok()) end = down;
  }
  return end;
}

}  // namespace redflow::spits
