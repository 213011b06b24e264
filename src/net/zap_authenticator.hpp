// The driver's gatekeeper: a ZAP handler (ZeroMQ RFC 27) that lets in only
// CURVE peers whose public key is in an authorized-keys file.
//
// libzmq asks the handler bound at inproc://zeromq.zap.01 of a context about
// every peer a CURVE server socket of that context meets, once the peer has
// proved it holds the secret half of its key. This class is that handler, on
// its own thread; one per zmq::context_t (libzmq allows one bind there).
// Refusals are logged (spdlog warn: key prefix and peer address) and counted,
// and so are peers that never reach it because their handshake fails (plain
// text, another mechanism, a public key without its secret) on a socket
// given to watch();
// an accepted peer's User-Id (zmq::message_t::gets("User-Id")) is its name in
// the authorized-keys file, so the driver can say which worker is which.
// Without a running handler a CURVE server accepts any key, which is why
// secure_server() (security.hpp) insists on one.
#pragma once

#include <zmq.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/keys.hpp"
#include "net/refusal_log.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

class ZapAuthenticator {
 public:
  // A peer turned away: why, its key's first characters and its address.
  struct Refusal {
    std::string mechanism, key_prefix, address;
  };

  explicit ZapAuthenticator(zmq::context_t& context);
  ~ZapAuthenticator();  // stops the thread
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  // Binds inproc://zeromq.zap.01 and starts answering; `keys` is the list
  // accepted (an empty list is refused: no worker could ever join).
  // `source` names the list in log lines. Calling it again replaces the list.
  Status start(const std::vector<AuthorizedKey>& keys, const std::string& source);
  bool running() const { return thread_.joinable(); }
  // Also logs and counts the handshakes that fail on `socket` before the
  // ZAP question (a socket monitor read on this thread). Call after start().
  Status watch(zmq::socket_t& socket);

  // The public keys (Z85) it lets in now.
  std::vector<std::string> public_keys() const;

  std::uint64_t accepted() const { return accepted_.load(); }
  std::uint64_t refused() const { return refused_.load(); }
  // The most recent refusals, oldest first (at most 64 are kept).
  std::vector<Refusal> recent_refusals() const;

 private:
  void serve(zmq::socket_t handler, zmq::socket_t control);
  // The ZAP reply for one request: "200" and the peer's name, or "400".
  std::pair<std::string, std::string> decide(const std::string& mechanism, const std::string& credentials, const std::string& address);
  void refuse(Refusal r);  // with mu_ held
  void answer(zmq::socket_t& handler);  // one ZAP request
  // A monitor event of a watched socket: a failed handshake.
  void handshake_failed(const zmq::message_t& event, const std::string& endpoint);

  zmq::context_t& context_;
  std::string control_endpoint_;  // PULL: "stop", or "watch ENDPOINT" of a socket monitor
  int watched_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> names_;  // public key (Z85) -> name; guarded by mu_
  std::string source_;                        // guarded by mu_
  std::vector<Refusal> refusals_;             // guarded by mu_
  RefusalLog refusal_log_;                    // by mechanism, key and address; guarded by mu_
  std::atomic<std::uint64_t> accepted_{0}, refused_{0};
};

}  // namespace redflow::net
