// Tests that speak the tile protocol themselves: a ROUTER socket for a test
// that plays a real worker's driver or peer, and a test's own worker (a
// thread that misbehaves in one chosen way beside real worker processes,
// saying the HELLO a real `redflow tile` with testing::kWorkerSlots would).
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "redflow/redflow.hpp"
#include "net_workers.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::testing {

// A ROUTER socket bound on loopback: the test as a worker's driver, or as
// the peer a worker fetches from; and the parts of what came last.
struct Router {
  zmq::socket_t socket;
  std::string endpoint;
  std::vector<zmq::message_t> parts;

  explicit Router(zmq::context_t& context) : socket(context, zmq::socket_type::router) {
    socket.set(zmq::sockopt::linger, 0);
    socket.bind("tcp://127.0.0.1:*");
    endpoint = socket.get(zmq::sockopt::last_endpoint);
  }
  // The next message other than a heartbeat, within `timeout_s`.
  bool next(net::Envelope& e, double timeout_s) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    do {
      zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(10));
      while (net::receive_message(socket, parts)) {
        wire::Error error;
        if (!net::decode_envelope(net::part_spans(parts, 1), e, error).ok()) continue;
        if (e.kind != net::EnvelopeKind::kHeartbeat) return true;
      }
    } while (Clock::now() < deadline);
    return false;
  }
  std::string sender() const { return parts[0].to_string(); }
};

// Starts a real worker, `redflow ARGS[0] --connect <driver> ARGS[1..]` (its
// stderr in `err_path` if given), takes its HELLO and WELCOMEs it as tile 0
// (heartbeats every 100 ms, timeout `heartbeat_timeout_ms`); its routing id,
// empty (a failure added) if it said nothing, and its HELLO in `hello_out`. The test's driver sends no
// heartbeats: the default timeout outlasts any test, so a slow machine does
// not lose the worker between the test's messages.
inline std::string start_and_welcome(Router& driver, WorkerProcesses& workers, std::vector<std::string> args, pid_t& pid,
                                     net::Role role = net::Role::kTile, std::uint32_t heartbeat_timeout_ms = 120000,
                                     const std::string& err_path = "", net::HelloMessage* hello_out = nullptr) {
  args.insert(args.begin() + 1, {"--connect", driver.endpoint});
  pid = workers.spawn_cli(args, err_path);
  net::Envelope e;
  if (!driver.next(e, 20) || e.kind != net::EnvelopeKind::kHello) {
    ADD_FAILURE() << "no HELLO from the worker";
    return {};
  }
  const std::string worker = driver.sender();
  if (hello_out != nullptr) {
    EXPECT_TRUE(net::decode(e.body, *hello_out).ok()) << "the worker's HELLO";
  }
  std::vector<std::byte> body;
  net::WelcomeMessage welcome;
  welcome.role = role;
  welcome.incarnation = 1;
  welcome.heartbeat_interval_ms = 100;
  welcome.heartbeat_timeout_ms = heartbeat_timeout_ms;
  net::encode(welcome, body);
  EXPECT_TRUE(net::send_envelope(driver.socket, net::EnvelopeKind::kWelcome, 0, body, worker));
  return worker;
}

// HELLO of a worker named `name` with 8 slots of 64 KiB and the built-ins.
inline net::HelloMessage fake_tile_hello(const std::string& name) {
  net::HelloMessage hello;
  hello.roles = {{net::Role::kTile, runtime::kTileProtocolVersion}};
  hello.name = name;
  hello.host = "test";
  hello.pid = static_cast<std::uint32_t>(::getpid());
  hello.slots = 8;
  hello.slot_bytes = 64 << 10;
  hello.functions = net::describe_functions(Registry::with_builtins(), "built-in");
  return hello;
}

// `s` (a DEALER) connects to the driver at `endpoint` and says `hello`.
inline void connect_and_say_hello(zmq::socket_t& s, const std::string& endpoint, const net::HelloMessage& hello) {
  s.set(zmq::sockopt::linger, 0);
  s.connect(endpoint);
  std::vector<std::byte> body;
  net::encode(hello, body);
  net::send_envelope(s, net::EnvelopeKind::kHello, 0, body);
}

// Runs run(endpoint) on its own thread from start() until join() sets `stop`.
class FakeWorker {
 public:
  virtual ~FakeWorker() = default;
  void start(const std::string& endpoint) {
    thread_ = std::thread([this, endpoint] { run(endpoint); });
  }
  void join() {
    stop = true;
    if (thread_.joinable()) thread_.join();
  }

 protected:
  virtual void run(const std::string& endpoint) = 0;
  // A HEARTBEAT on `s` every 100 ms (well inside the driver's 2 s timeout).
  void beat_when_due(zmq::socket_t& s) {
    if (std::chrono::steady_clock::now() < next_beat_) return;
    net::send_envelope(s, net::EnvelopeKind::kHeartbeat, 0, {});
    next_beat_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  }
  // The next envelope already come on `s` that decodes (its parts in `parts`); false when none.
  static bool next_envelope(zmq::socket_t& s, std::vector<zmq::message_t>& parts, net::Envelope& e) {
    wire::Error error;
    while (net::receive_message(s, parts))
      if (net::decode_envelope(net::part_spans(parts), e, error).ok()) return true;
    return false;
  }
  std::atomic<bool> stop{false};

 private:
  std::thread thread_;
  std::chrono::steady_clock::time_point next_beat_{};
};

}  // namespace redflow::testing
