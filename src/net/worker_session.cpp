// The worker's session loop (worker_session.hpp): one driver at a time, on
// the calling thread; the role's service does the work.
#include "net/worker_session.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "net/address_file.hpp"
#include "net/link_watch.hpp"

namespace redflow::net {

namespace {

using Clock = std::chrono::steady_clock;

// A session's Sender: the DEALER to its driver.
class DealerSender final : public Sender {
 public:
  explicit DealerSender(zmq::socket_t& socket) : socket_(socket) {}
  bool send(EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) override {
    return send_envelope(socket_, kind, request, body);
  }
  bool send_owned(EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) override {
    return send_envelope_owned(socket_, kind, request, std::move(body));
  }

 private:
  zmq::socket_t& socket_;
};

// `endpoint` ("tcp://HOST:PORT") with another port.
std::string with_port(const std::string& endpoint, std::uint16_t port) {
  return endpoint.substr(0, endpoint.rfind(':') + 1) + std::to_string(port);
}

}  // namespace

WorkerRole* WorkerSession::role_for(Role role) const {
  for (const auto& r : roles_)
    if (r->role() == role) return r.get();
  return nullptr;
}

Status WorkerSession::run() {
  if (roles_.empty()) return Status::InvalidArgument("a worker needs at least one role to offer");
  auto started = Clock::now();  // of the attempts at the current session
  std::optional<DriverAddress> job_driver;  // where the last REDIRECT sent this worker
  double job_timeout_s = 0;
  for (;;) {
    const bool redirected = job_driver.has_value();
    auto driver = redirected ? Result<DriverAddress>(*std::exchange(job_driver, std::nullopt)) : options_.driver();
    if (!driver.ok()) return driver.status();
    Outcome outcome = Outcome::kNoWelcome;
    RedirectMessage redirect;
    Status s = serve_one(*driver, redirected ? job_timeout_s : options_.connect_timeout_s, redirected, outcome, redirect);
    if (outcome == Outcome::kIdle) return Status::Ok();
    if (outcome == Outcome::kRedirected) {
      job_driver = DriverAddress{with_port(driver->endpoint, redirect.port), driver->server_public_key};
      job_timeout_s = redirect.welcome_timeout_ms / 1000.0;
      spdlog::info("worker: the server at {} sent this worker to the job's driver at {}", driver->endpoint, job_driver->endpoint);
      continue;
    }
    // A job's driver that never welcomed this worker (it ended first, or had
    // its workers): back to the server, which has the next job.
    if (redirected && outcome != Outcome::kWelcomed) {
      spdlog::info("worker: {}; back to the server", s.ToString());
      started = Clock::now();
      continue;
    }
    // The HELLO went to a driver that went away before answering it (the
    // last one, closing after its BYE): say it again on a fresh socket.
    if (outcome == Outcome::kDropped && Clock::now() - started < std::chrono::duration<double>(options_.connect_timeout_s)) {
      spdlog::debug("worker: {}; saying HELLO again", s.ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    started = Clock::now();
    // A persistent worker waits for the next driver after a session that
    // reached one; one that heard nothing within the timeout stops (nothing
    // is there to serve), with the error that says so.
    if (!options_.persist || outcome == Outcome::kNoWelcome || outcome == Outcome::kDropped) return s;
    spdlog::info("worker: the session with the driver at {} ended ({}); waiting for the next driver", driver->endpoint, s.ok() ? "BYE" : s.ToString());
    // A driver that refused this worker (it had all the workers it wanted)
    // is asked again only after a pause, not in a tight loop.
    if (outcome == Outcome::kRefused) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

Status WorkerSession::serve_one(const DriverAddress& driver, double connect_timeout_s, bool redirected, Outcome& outcome,
                                RedirectMessage& redirect) {
  const std::string& connect = driver.endpoint;
  SecurityOptions security = options_.security;
  if (!driver.server_public_key.empty() && security.server_public_key_file.empty()) security.server_public_key = driver.server_public_key;
  LinkWatch watch;  // what became of the connection, should no WELCOME come
  auto dealer = make_worker_dealer(context_, connect, security, &watch);
  if (!dealer.ok()) return dealer.status();
  zmq::socket_t& socket = *dealer;
  // Before the socket closes (this is destroyed first): the context outlives this session.
  struct Unwatch {
    LinkWatch& watch;
    ~Unwatch() { watch.detach(); }
  } unwatch{watch};
  // On the heap: a service that leaves a thread running at the end may still ring it.
  auto doorbell_owner = std::make_unique<Doorbell>();
  const Doorbell& doorbell = *doorbell_owner;
  if (!doorbell.ok()) return Status::IOError("eventfd failed");

  HelloMessage hello;
  hello.host = host_name();
  hello.pid = static_cast<std::uint32_t>(getpid());
  hello.name = options_.name.empty() ? hello.host + ":" + std::to_string(hello.pid) : options_.name;
  hello.cores = options_.cores;
  // A peer socket per driver: nothing of the last driver's links or
  // admitted keys carries over (the old one closes before the new opens:
  // one ZAP handler per context).
  peers_.reset();
  auto peers = PeerSocket::open(context_, connect, security);
  if (!peers.ok()) return peers.status();
  peers_ = std::move(*peers);
  hello.peer_port = peers_->port();
  hello.public_key = peers_->public_key();
  for (const auto& role : roles_) {
    hello.roles.push_back({role->role(), role->version()});
    REDFLOW_RETURN_IF_ERROR(role->describe(*peers_, hello));
  }
  std::vector<std::byte> body;
  encode(hello, body);
  auto connect_deadline = welcome_deadline(connect_timeout_s);
  // At a server (known by its first heartbeat), the wait for a job ends at the idle timeout.
  const auto idle_deadline = !redirected && options_.idle_timeout_s > 0 ? welcome_deadline(options_.idle_timeout_s) : Clock::time_point::max();
  bool at_server = false;
  const bool keyed = !security.key_file.empty();
  if (!send_hello(socket, body, connect_deadline)) return no_welcome(connect, connect_timeout_s, keyed, &watch);

  DealerSender sender(socket);
  std::unique_ptr<WorkerService> service;
  WelcomeMessage welcome;
  auto heard = Clock::now();
  auto next_beat = heard;
  auto grace = Clock::time_point::max();  // max: not silent
  auto next_notice = Clock::time_point::min();  // the next "nothing answers" warning
  constexpr auto kNoticeEvery = std::chrono::seconds(5);
  std::vector<zmq::message_t> parts;
  std::vector<zmq::pollitem_t> items;
  std::vector<BatchEntry> batch;
  auto leave = [&](Status why) {
    if (service && service->leave()) {
      // Kept where the process can reach it (a leak checker sees it reachable).
      static auto* const left = new std::vector<std::unique_ptr<Doorbell>>;  // session thread only
      left->push_back(std::move(doorbell_owner));
    }
    return why;
  };
  auto beat = [&] { send_envelope(socket, EnvelopeKind::kHeartbeat, service->answered_through(), {}); };
  for (;;) {
    const auto interval = std::chrono::milliseconds(service ? welcome.heartbeat_interval_ms : 100);
    items = {{socket.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, doorbell.fd(), ZMQ_POLLIN, 0}};
    if (service) service->poll_items(items);
    if (Status s = poll_for(items, next_beat - Clock::now()); !s.ok()) return leave(s);
    if (items[1].revents & ZMQ_POLLIN) doorbell.drain();
    // What is due goes out before anything is read: a worker woken after
    // being frozen past the timeout beats once (the driver discards it as
    // late), then reads the driver's BYE.
    auto now = Clock::now();
    if (now >= next_beat) {
      if (service) beat();
      next_beat = now + interval;
    }
    while (receive_message(socket, parts)) {
      Envelope e;
      wire::Error error;
      if (Status s = decode_envelope(part_spans(parts), e, error); !s.ok()) return leave(refuse_and_leave(socket, connect, s));
      heard = Clock::now();
      switch (e.kind) {
        case EnvelopeKind::kWelcome: {
          if (service) break;
          if (Status s = decode(e.body, welcome); !s.ok()) return refuse_and_leave(socket, connect, s);
          WorkerRole* role = role_for(welcome.role);
          if (role == nullptr)
            return refuse_and_leave(socket, connect,
                                    Status::InvalidArgument(std::string("the driver welcomed this worker as a ") + role_name(welcome.role) +
                                                            ", which it does not offer (it offers " + describe_roles(hello.roles) + ")"));
          // Its peers are the driver's workers: with keys, exactly those get in.
          Status admitted = peers_->admit(welcome.peer_keys);
          auto started = admitted.ok() ? role->start(welcome, sender, doorbell) : Result<std::unique_ptr<WorkerService>>(admitted);
          if (!started.ok()) {
            send_envelope(socket, EnvelopeKind::kBye, 0, {});
            return started.status();
          }
          service = std::move(*started);
          outcome = Outcome::kWelcomed;
          spdlog::info("worker '{}': welcomed as {} {} by {}", hello.name, role_name(welcome.role), welcome.tile, connect);
          if (options_.on_welcome) options_.on_welcome(welcome);
          break;
        }
        case EnvelopeKind::kRefused: {
          RefusedMessage refused;
          REDFLOW_RETURN_IF_ERROR(decode(e.body, refused));
          if (outcome == Outcome::kNoWelcome) outcome = Outcome::kRefused;
          return leave(Status::InvalidArgument("the driver at " + connect + " refused this worker: " + refused.reason));
        }
        case EnvelopeKind::kRequest:
          // The frame stays in the message it came in (a value is then copied
          // once on this side, into its slot); `e` is not read after this.
          if (!service) {
            // The driver sends WELCOME before any REQUEST; one before it is a driver's bug.
            spdlog::warn("worker '{}': dropped REQUEST {} that came before the WELCOME", hello.name, e.request);
            break;
          }
          if (Status s = service->on_request(e.request, ReceivedBytes(std::move(parts[1]))); !s.ok())
            return leave(refuse_and_leave(socket, connect, s));
          break;
        case EnvelopeKind::kRequests:
          if (Status s = decode_batch(e, batch, error); !s.ok()) return leave(refuse_and_leave(socket, connect, s));
          if (!service) break;
          for (const BatchEntry& request : batch)
            if (Status s = service->on_request(request.request, ReceivedBytes(std::vector<std::byte>(request.frame.begin(), request.frame.end())));
                !s.ok())
              return leave(refuse_and_leave(socket, connect, s));
          break;
        case EnvelopeKind::kBye: {
          // What is due goes out first, as at the top of the loop: a worker
          // stopped inside this loop (after that check) and woken past the
          // timeout reads the BYE here without having beaten since.
          if (service && Clock::now() >= next_beat) beat();
          socket.set(zmq::sockopt::linger, 500);  // what is already sent still goes out
          Status ended = service ? service->on_bye() : Status::Ok();
          return leave(std::move(ended));
        }
        case EnvelopeKind::kCancel:
          if (service) service->on_cancel(e.request);
          break;
        case EnvelopeKind::kAck:
          if (service) service->on_ack(e.request);
          break;
        case EnvelopeKind::kRedirect:
          if (service) break;  // a driver's; only a server says it, in place of a WELCOME
          REDFLOW_RETURN_IF_ERROR(decode(e.body, redirect));
          outcome = Outcome::kRedirected;
          // BYE tells the server this worker took it (one that never
          // confirms is given back to its job as not come).
          send_envelope(socket, EnvelopeKind::kBye, 0, {});
          socket.set(zmq::sockopt::linger, 1000);
          return Status::Ok();
        case EnvelopeKind::kHeartbeat:
          // Before a WELCOME only a server beats, to a worker it holds idle
          // for its next job: it is there, so the wait goes on.
          if (!service) {
            at_server = true;
            connect_deadline = std::min(welcome_deadline(connect_timeout_s), idle_deadline);
          }
          break;
        default: spdlog::warn("worker '{}': ignored a {} from the driver", hello.name, envelope_kind_name(e.kind)); break;
      }
    }
    if (service)
      if (Status s = service->turn(); !s.ok()) {
        // The service cannot go on (a tile that died): BYE, so the driver
        // loses this worker now instead of waiting out its silence.
        send_envelope(socket, EnvelopeKind::kBye, 0, {});
        socket.set(zmq::sockopt::linger, 500);  // what is already sent still goes out
        return leave(s);
      }
    now = Clock::now();
    if (!service) {
      if (at_server && now >= idle_deadline) {
        spdlog::info("worker '{}': no job from the server at {} for {:g} s (--idle-timeout): ending", hello.name, connect,
                     options_.idle_timeout_s);
        outcome = Outcome::kIdle;
        return Status::Ok();
      }
      if (now > connect_deadline) return no_welcome(connect, connect_timeout_s, keyed, &watch);
      // Nothing listens there (yet): said at once and then every few
      // seconds, so a mistyped address is not a silent wait.
      if (now >= next_notice && watch.nothing_answers()) {
        spdlog::warn("worker: nothing answers at {} (connection refused); retrying for {:.0f} s more (--connect-timeout)", connect,
                     std::chrono::duration<double>(connect_deadline - now).count());
        next_notice = now + kNoticeEvery;
      }
      if (watch.dropped()) {
        socket.set(zmq::sockopt::linger, 0);  // a HELLO still queued here is not sent twice
        outcome = Outcome::kDropped;
        return Status::IOError("the connection to the driver at " + connect + " dropped before its WELCOME");
      }
    } else if (redirected && watch.dropped()) {
      // A job's driver whose connection closed is gone: its server has the next job.
      return leave(Status::IOError("the connection to the job's driver at " + connect + " closed"));
    } else if (now - heard <= std::chrono::milliseconds(welcome.heartbeat_timeout_ms)) {
      grace = Clock::time_point::max();
    } else if (grace == Clock::time_point::max()) {
      // One more interval before giving up: after this process was stopped
      // (SIGSTOP, a swapped-out machine) the driver's messages may be on the
      // wire but not yet read by ZeroMQ's own thread.
      grace = now + interval;
    } else if (now > grace) {
      return leave(Status::IOError("the driver at " + connect + " has been silent for more than " + std::to_string(welcome.heartbeat_timeout_ms) +
                                   " ms"));
    }
  }
}

}  // namespace redflow::net
