// LinkWatch (link_watch.hpp): a socket monitor read without
// blocking, and what its events say about a missing WELCOME.
#include "net/link_watch.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "net/security.hpp"

namespace redflow::net {

void LinkWatch::attach(zmq::context_t& context, zmq::socket_t& socket) {
  // A name of its own: a persistent worker's next session may watch a new
  // socket at this same address while the last one's monitor, lingering
  // with its socket, still holds the old name.
  static std::atomic<std::uint64_t> watches{0};
  const std::string endpoint = fmt::format("inproc://redflow.link-watch.{}", watches.fetch_add(1));
  constexpr int kEvents = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                          ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), kEvents) != 0) {
    spdlog::debug("worker: cannot monitor the driver socket's handshakes: {}", zmq_strerror(zmq_errno()));
    return;
  }
  try {
    auto pair = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
    pair->set(zmq::sockopt::linger, 0);
    pair->connect(endpoint);
    monitor_ = std::move(pair);
    socket_ = socket.handle();
  } catch (const zmq::error_t& e) {
    spdlog::debug("worker: cannot read the driver socket's monitor: {}", e.what());
  }
}

void LinkWatch::detach() {
  if (socket_ != nullptr) zmq_socket_monitor(socket_, nullptr, 0);
  socket_ = nullptr;
}

void LinkWatch::poll() {
  if (!monitor_) return;
  for (;;) {
    zmq::message_t event;
    if (!monitor_->recv(event, zmq::recv_flags::dontwait)) return;
    zmq::message_t address;
    if (event.more()) (void)monitor_->recv(address, zmq::recv_flags::dontwait);
    if (event.size() < sizeof(std::uint16_t)) continue;
    std::uint16_t id = 0;
    std::memcpy(&id, event.data(), sizeof id);
    connected_ |= id == ZMQ_EVENT_CONNECTED;
    retried_ |= id == ZMQ_EVENT_CONNECT_RETRIED;
    succeeded_ |= id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
    failed_protocol_ |= id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    failed_auth_ |= id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    dropped_ |= id == ZMQ_EVENT_DISCONNECTED && up_;
    up_ = (up_ || id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) && id != ZMQ_EVENT_DISCONNECTED;
  }
}

std::string LinkWatch::explain(bool keyed) {
  poll();
  if (!monitor_) return "";
  if (failed_auth_)
    return fmt::format(" (the driver refused this worker's key: add this worker's public key to the driver's {})", kAuthorizedKeysFlag);
  if (failed_protocol_ && !keyed)
    return fmt::format(" (the driver refused the connection in its handshake: it requires keys and this worker has none; "
                       "give this worker {} FILE (made by `redflow keygen`) and {} DRIVER.pub, and add its public key to the driver's {})",
                       kKeyFlag, kServerKeyFlag, kAuthorizedKeysFlag);
  if (failed_protocol_)
    return fmt::format(" (the handshake with the driver failed: the driver runs without keys, or {} is not the driver's public key)",
                       kServerKeyFlag);
  if (succeeded_) return " (the driver accepted the connection but sent no WELCOME)";
  if (connected_) return " (the connection was made but its handshake never finished: is this address a redflow driver?)";
  return " (nothing accepted a connection there: is the driver running, and is the address right?)";
}

}  // namespace redflow::net
