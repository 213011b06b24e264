// Security applied to the sockets of the driver and its workers: one call
// each, made before bind() or connect() (docs/security.md).
//
//   SecurityOptions sec{.key_file = "driver.key", .authorized_keys_file = "workers.txt"};
//   REDFLOW_RETURN_IF_ERROR(check_listen_address(endpoint, sec));   // before anything else
//   ZapAuthenticator zap(context);                                  // lives as long as the socket
//   zmq::socket_t router(context, zmq::socket_type::router);
//   REDFLOW_RETURN_IF_ERROR(secure_server(router, sec, zap));
//   router.bind(endpoint);
//
//   SecurityOptions w{.key_file = "node17.key", .server_public_key_file = "driver.pub"};
//   zmq::socket_t dealer(context, zmq::socket_type::dealer);
//   REDFLOW_RETURN_IF_ERROR(secure_client(dealer, w));
//   dealer.connect(endpoint);
//
// Without keys both calls leave the socket plain (NULL mechanism), which
// check_listen_address() allows on loopback only. With keys, all traffic is
// CURVE-encrypted and the server lets in only authorized keys: a plain peer
// fails the handshake, an unlisted key is refused by the ZapAuthenticator
// (logged, counted). The flag names below are the ones `redflow run`,
// `redflow worker` and `redflow spits*` give, so errors can name them.
#pragma once

#include <zmq.hpp>

#include <string>
#include <string_view>

#include "net/zap_authenticator.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

inline constexpr const char* kKeyFlag = "--key";
inline constexpr const char* kAuthorizedKeysFlag = "--authorized-keys";
inline constexpr const char* kServerKeyFlag = "--server-key";

// Key files of one side. A driver gives key_file and authorized_keys_file;
// a worker gives key_file and server_public_key_file (the driver's .pub).
struct SecurityOptions {
  std::string key_file{};
  std::string authorized_keys_file{};
  std::string server_public_key_file{};
  std::string server_public_key{};  // Z85; used instead of the file when set (e.g. read from an address file)
};

// The driver side's key files: both or neither (a named error for half the pair).
Status check_server_keys(const SecurityOptions& options);

// The driver side: CURVE server with the secret key of `options.key_file`,
// and `zap` started with the authorized keys (it must outlive the socket).
// No key files: the socket stays plain. Half the pair: a named error.
Status secure_server(zmq::socket_t& socket, const SecurityOptions& options, ZapAuthenticator& zap);

// The worker side: CURVE client with its own key pair and the server's
// public key. No key files: plain. Half of them: a named error.
Status secure_client(zmq::socket_t& socket, const SecurityOptions& options);

// OK for loopback endpoints (tcp://127.x.x.x, tcp://[::1], tcp://localhost,
// ipc://, inproc://) and, given a key and authorized keys, for any other.
// Anything else is refused, naming the address and the flags to give.
Status check_listen_address(std::string_view endpoint, const SecurityOptions& options);

// OK for an endpoint a worker can connect to: tcp://HOST:PORT with a port
// in 1..65535, ipc://, inproc://. Anything else is refused before a socket
// is made, naming `what` (a flag such as "--connect") and the value.
Status check_connect_address(std::string_view endpoint, std::string_view what);

// The host part of a tcp:// endpoint ("tcp://[::1]:7000" -> "::1"), empty
// for other transports.
std::string endpoint_host(std::string_view endpoint);

}  // namespace redflow::net
