// PeerSocket: where a worker listens for other workers, and how it dials
// theirs, under the one security rule of the driver's own link: without keys
// it listens on loopback only, and only when the driver is on loopback too
// (nothing plain leaves the machine; docs/security.md); with keys it listens
// on every address, CURVE-encrypted, and lets in exactly the worker keys the
// driver's WELCOME lists (its --authorized-keys). A tile's peer links
// (peer_links.hpp: slot reads between workers) and a stream node's links
// (stream/node_links.hpp: tokens between nodes) are each one of these with
// their own messages on it.
//
// Thread-safety: none; the worker's session thread (ZeroMQ sockets are not
// thread-safe).
#pragma once

#include <zmq.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/keys.hpp"
#include "net/link_watch.hpp"
#include "net/security.hpp"
#include "net/zap_authenticator.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

class PeerSocket {
 public:
  // Opens the socket for a worker of the driver at `driver_endpoint`; one
  // that does not listen (listening() false, port() 0) when that is not on
  // loopback and there are no keys: everything then relays through the driver.
  static Result<std::unique_ptr<PeerSocket>> open(zmq::context_t& context, const std::string& driver_endpoint, const SecurityOptions& security);

  bool listening() const { return port_ != 0; }
  std::uint32_t port() const { return port_; }
  // With keys: the worker's public key (Z85), which peers dial it with; empty without.
  const std::string& public_key() const { return key_pair_.public_key; }
  // The worker keys WELCOME listed: the only peers let in (with keys; an
  // empty list leaves only this worker's own key in).
  Status admit(const std::vector<std::string>& keys);
  // The listening ROUTER (valid only while listening()).
  zmq::socket_t& router() { return router_; }
  // A DEALER to a peer's socket at `endpoint`, a CURVE client of
  // `public_key` when the peer gave one (with this worker's own key pair);
  // `immediate` and `watch`: see make_worker_dealer (sockets.hpp).
  Result<zmq::socket_t> dial(const std::string& endpoint, const std::string& public_key, bool immediate = false, LinkWatch* watch = nullptr) const;
  // Peers turned away for their key (with keys).
  std::uint64_t refused_keys() const { return zap_ ? zap_->refused() : 0; }

 private:
  explicit PeerSocket(zmq::context_t& context) : context_(context) {}

  zmq::context_t& context_;
  SecurityOptions security_;
  KeyPair key_pair_;
  std::unique_ptr<ZapAuthenticator> zap_;  // with keys: answers the socket's handshakes
  zmq::socket_t router_;
  std::uint32_t port_ = 0;
};

// "tcp://host:port" for a peer the driver sees at `address` (an IPv6
// address in brackets); empty when the address is unknown or `port` is 0.
std::string peer_endpoint(const std::string& address, std::uint32_t port);

}  // namespace redflow::net
