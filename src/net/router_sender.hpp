// RouterSender: a driver hub's sends (HubSender, peer_hub.hpp) on its ROUTER
// socket. The socket is ROUTER_MANDATORY (make_driver_router), so a send to a
// peer whose connection is gone is false, and the hub declares it lost.
// With `dontwait`, a peer that takes nothing more now (its queue full) is
// false too, instead of blocking the driver's one thread.
//
// Thread-safety: the socket's; only its owner's thread sends.
#pragma once

#include <zmq.hpp>

#include "net/peer_hub.hpp"
#include "net/sockets.hpp"

namespace redflow::net {

class RouterSender final : public HubSender {
 public:
  explicit RouterSender(zmq::socket_t& router, bool dontwait = false) : router_(router), dontwait_(dontwait) {}
  bool send(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body) override {
    return send_envelope(router_, kind, request, body, routing_id, dontwait_);
  }
  bool send_owned(const std::string& routing_id, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body) override {
    if (dontwait_) return send_envelope(router_, kind, request, body, routing_id, true);
    return send_envelope_owned(router_, kind, request, std::move(body), routing_id);
  }

 private:
  zmq::socket_t& router_;
  bool dontwait_;
};

}  // namespace redflow::net
