// secure_server, secure_client and check_listen_address (security.hpp).
#include "net/security.hpp"

#include <fmt/format.h>

#include <charconv>

#include "net/keys.hpp"

namespace redflow::net {

namespace {

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

std::string endpoint_host(std::string_view endpoint) {
  constexpr std::string_view kTcp = "tcp://";
  if (endpoint.substr(0, kTcp.size()) != kTcp) return {};
  std::string_view rest = endpoint.substr(kTcp.size());
  // tcp://source;destination (connect with a source address): the destination counts.
  if (auto semi = rest.find(';'); semi != std::string_view::npos) rest = rest.substr(semi + 1);
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    return std::string(rest.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
  }
  return std::string(rest.substr(0, rest.rfind(':')));
}

Status check_listen_address(std::string_view endpoint, const SecurityOptions& options) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return Status::Ok();
  if (endpoint.rfind("tcp://", 0) != 0)
    return Status::InvalidArgument(fmt::format("listen address (--listen) '{}': expected tcp://HOST:PORT (e.g. tcp://127.0.0.1:*)", endpoint));
  const std::string host = endpoint_host(endpoint);
  if (is_loopback_host(host)) return Status::Ok();
  if (!options.key_file.empty() && !options.authorized_keys_file.empty()) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "refusing to listen on {} without keys: anyone who reaches {} could run code as this user. "
      "Give {} FILE.key (this process's secret key) and {} FILE (the public keys it lets in; make both with 'redflow keygen', "
      "docs/security.md), or listen on tcp://127.0.0.1:PORT",
      endpoint, host.empty() ? std::string("it") : host, kKeyFlag, kAuthorizedKeysFlag));
}

Status check_connect_address(std::string_view endpoint, std::string_view what) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return Status::Ok();
  const bool tcp = endpoint.rfind("tcp://", 0) == 0;
  if (tcp) {
    const std::string_view rest = endpoint.substr(std::string_view("tcp://").size());
    const auto colon = rest.rfind(':');
    const std::string_view port = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (!endpoint_host(endpoint).empty() && !port.empty() && ec == std::errc() && end == port.data() + port.size() && value >= 1 && value <= 65535)
      return Status::Ok();
  }
  // Without a scheme, the value itself is the likely HOST:PORT.
  const std::string example = endpoint.find("://") == std::string_view::npos && !endpoint.empty() ? fmt::format("tcp://{}", endpoint) : "tcp://127.0.0.1:5555";
  return Status::InvalidArgument(fmt::format("{} '{}': expected tcp://HOST:PORT (e.g. {}), PORT in 1..65535", what, endpoint, example));
}

Status check_server_keys(const SecurityOptions& options) {
  if (options.key_file.empty() == options.authorized_keys_file.empty()) return Status::Ok();
  if (options.key_file.empty())
    return Status::InvalidArgument(fmt::format("{} given without {}: a process that listens needs its own secret key", kAuthorizedKeysFlag, kKeyFlag));
  return Status::InvalidArgument(fmt::format("{} given without {}: a process that listens must list the keys it lets in",
                                             kKeyFlag, kAuthorizedKeysFlag));
}

Status secure_server(zmq::socket_t& socket, const SecurityOptions& options, ZapAuthenticator& zap) {
  REDFLOW_RETURN_IF_ERROR(check_server_keys(options));
  if (options.key_file.empty()) return Status::Ok();
  auto keys = read_secret_key_file(options.key_file);
  if (!keys.ok()) return keys.status();
  auto authorized = read_authorized_keys(options.authorized_keys_file);
  if (!authorized.ok()) return authorized.status();
  REDFLOW_RETURN_IF_ERROR(zap.start(*authorized, options.authorized_keys_file));
  try {
    socket.set(zmq::sockopt::curve_server, 1);
    socket.set(zmq::sockopt::curve_secretkey, keys->secret_key);
    // A domain makes libzmq consult the handler for every peer; without one it may skip it.
    socket.set(zmq::sockopt::zap_domain, "redflow");
  } catch (const zmq::error_t& e) {
    return Status::Internal(fmt::format("cannot make the socket a CURVE server: {}", e.what()));
  }
  return zap.watch(socket);  // plain peers fail before ZAP is asked: logged and counted all the same
}

Status secure_client(zmq::socket_t& socket, const SecurityOptions& options) {
  const bool has_server_key = !options.server_public_key_file.empty() || !options.server_public_key.empty();
  if (options.key_file.empty() && !has_server_key) return Status::Ok();
  if (options.key_file.empty())
    return Status::InvalidArgument(fmt::format("{} given without {}: a worker needs its own key pair (redflow keygen)", kServerKeyFlag, kKeyFlag));
  if (!has_server_key)
    return Status::InvalidArgument(fmt::format("{} given without {}: a worker needs the driver's public key (its .pub file)", kKeyFlag, kServerKeyFlag));
  auto keys = read_secret_key_file(options.key_file);
  if (!keys.ok()) return keys.status();
  Result<std::string> server = options.server_public_key;
  if (options.server_public_key.empty())
    server = read_public_key_file(options.server_public_key_file);
  else if (Status s = check_z85_key(options.server_public_key); !s.ok())
    return Status::InvalidArgument("the driver's public key: " + s.message());
  if (!server.ok()) return server.status();
  try {
    socket.set(zmq::sockopt::curve_serverkey, *server);
    socket.set(zmq::sockopt::curve_publickey, keys->public_key);
    socket.set(zmq::sockopt::curve_secretkey, keys->secret_key);
  } catch (const zmq::error_t& e) {
    return Status::Internal(fmt::format("cannot make the socket a CURVE client: {}", e.what()));
  }
  return Status::Ok();
}

}  // namespace redflow::net
