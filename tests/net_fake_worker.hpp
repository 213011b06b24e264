// A test's own worker: a thread that speaks the tile protocol itself, to
// misbehave in one chosen way beside real worker processes. It says the
// HELLO a real `redflow tile` with testing::kWorkerSlots would.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "net/worker_messages.hpp"
#include "redflow/redflow.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::testing {

// HELLO of a worker named `name` with 8 slots of 64 KiB and the built-ins.
inline net::HelloMessage fake_tile_hello(const std::string& name) {
  net::HelloMessage hello;
  hello.tile_protocol = runtime::kTileProtocolVersion;
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
    net::NetError error;
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
