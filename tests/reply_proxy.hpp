// A ZeroMQ proxy between a driver and one real worker, for tests of what the
// driver does when a worker's answers go astray on the way: the worker
// connects to the proxy (endpoint()), the proxy to the driver, and every
// message passes unchanged, but for the one answer holding an actor's
// completion a test arms it to tamper with: that message is dropped, or the
// completion's request id changed. The worker itself is honest and
// its heartbeats pass through, as a man in the middle would leave them.
// Thread-safety: arm() and the counters may be called from any thread; the
// proxy's own thread does the rest.
#pragma once

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "net/envelope.hpp"
#include "net/sockets.hpp"
#include "runtime/tile_protocol.hpp"

namespace redflow::testing {

class ReplyProxy {
 public:
  enum class Tamper { kNone, kDrop, kWrongId };

  explicit ReplyProxy(const std::string& driver) : worker_side_(context_, zmq::socket_type::router), driver_side_(context_, zmq::socket_type::dealer) {
    worker_side_.set(zmq::sockopt::linger, 0);
    driver_side_.set(zmq::sockopt::linger, 0);
    worker_side_.bind("tcp://127.0.0.1:*");
    endpoint_ = worker_side_.get(zmq::sockopt::last_endpoint);
    driver_side_.connect(driver);
    thread_ = std::thread([this] { run(); });
  }
  ~ReplyProxy() {
    stop_ = true;
    thread_.join();
  }
  ReplyProxy(const ReplyProxy&) = delete;
  ReplyProxy& operator=(const ReplyProxy&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  // The next answer (REPLY or REPLIES) the worker sends is tampered with this way.
  void arm(Tamper how) { armed_ = static_cast<int>(how); }
  unsigned tampered() const { return tampered_; }

 private:
  void run() {
    std::vector<zmq::message_t> parts;
    while (!stop_) {
      zmq::pollitem_t items[] = {{worker_side_.handle(), 0, ZMQ_POLLIN, 0}, {driver_side_.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, std::chrono::milliseconds(20));
      while (net::receive_message(worker_side_, parts, 8)) {
        if (parts.size() < 2) continue;
        worker_ = parts[0].to_string();
        if (tamper(parts)) continue;
        forward(driver_side_, parts, 1);
      }
      while (net::receive_message(driver_side_, parts, 8)) {
        if (worker_.empty()) continue;
        worker_side_.send(zmq::buffer(worker_), zmq::send_flags::sndmore);
        forward(worker_side_, parts, 0);
      }
    }
  }
  // True: drop the message. The header is "RFNE" u16 version, u8 kind, u8 0,
  // u64 request id; only an answer that holds an actor's completion counts.
  bool tamper(std::vector<zmq::message_t>& parts) {
    if (armed_.load() == static_cast<int>(Tamper::kNone) || parts.size() != 3 || parts[1].size() != net::kEnvelopeHeaderBytes) return false;
    std::byte* id_at = completion_id(parts);
    if (id_at == nullptr) return false;
    const int how = armed_.exchange(static_cast<int>(Tamper::kNone));
    ++tampered_;
    if (how == static_cast<int>(Tamper::kDrop)) return true;
    std::uint64_t id;
    std::memcpy(&id, id_at, 8);
    id += 1000000;
    std::memcpy(id_at, &id, 8);
    return false;
  }
  // Where the request id of the completion a REPLY or REPLIES holds is (a
  // batch entry is u64 id, u32 length, the frame); null when it holds none.
  static std::byte* completion_id(std::vector<zmq::message_t>& parts) {
    auto* header = static_cast<std::byte*>(parts[1].data());
    auto* body = static_cast<std::byte*>(parts[2].data());
    const std::span<const std::byte> whole(body, parts[2].size());
    const auto kind = static_cast<net::EnvelopeKind>(header[6]);
    if (kind == net::EnvelopeKind::kReply) return runtime::frame_is(whole, runtime::WireKind::kCompletion) ? header + 8 : nullptr;
    if (kind != net::EnvelopeKind::kReplies) return nullptr;
    std::vector<std::span<const std::byte>> spans = {std::span<const std::byte>(header, parts[1].size()), whole};
    net::Envelope e;
    net::NetError error;
    std::vector<net::BatchEntry> entries;
    if (!net::decode_envelope(spans, e, error).ok() || !net::decode_batch(e, entries, error).ok()) return nullptr;
    for (const net::BatchEntry& entry : entries)
      if (runtime::frame_is(entry.frame, runtime::WireKind::kCompletion)) return body + (entry.frame.data() - whole.data()) - 12;
    return nullptr;
  }
  static void forward(zmq::socket_t& to, std::vector<zmq::message_t>& parts, std::size_t from) {
    for (std::size_t i = from; i < parts.size(); ++i) to.send(parts[i], i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }

  zmq::context_t context_;
  zmq::socket_t worker_side_, driver_side_;
  std::string endpoint_, worker_;
  std::atomic<int> armed_{0};
  std::atomic<unsigned> tampered_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace redflow::testing
