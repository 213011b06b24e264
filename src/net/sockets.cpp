// The one place sockets are made (sockets.hpp).
#include "net/sockets.hpp"

#include <fmt/format.h>

#include <atomic>
#include <thread>

#include "net/driver_messages.hpp"
#include "net/envelope.hpp"

namespace redflow::net {

namespace {

// Options both ends share. Linger 0: a closing peer drops what it could not
// send (the other side's heartbeat notices) instead of blocking exit. No
// high-water mark: the driver bounds what is in flight by the requests it
// waits on, and dropping a REQUEST or REPLY would stall a tile. The largest
// message: a slot's value with its headers; ZeroMQ drops a connection that
// sends a larger one before any of it reaches the decoder.
void common_options(zmq::socket_t& s) {
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::sndhwm, 0);
  s.set(zmq::sockopt::rcvhwm, 0);
  s.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(kMaxBodyBytes));
}

}  // namespace

Result<zmq::socket_t> make_driver_router(zmq::context_t& context, const std::string& endpoint, std::string& bound,
                                         const SecurityOptions& security, ZapAuthenticator& zap) {
  REDFLOW_RETURN_IF_ERROR(check_listen_address(endpoint, security));
  try {
    zmq::socket_t s(context, zmq::socket_type::router);
    common_options(s);
    // A message to a worker that is gone fails at once (EHOSTUNREACH) instead of vanishing.
    s.set(zmq::sockopt::router_mandatory, 1);
    REDFLOW_RETURN_IF_ERROR(secure_server(s, security, zap));
    s.bind(endpoint);
    bound = s.get(zmq::sockopt::last_endpoint);
    return s;
  } catch (const zmq::error_t& e) {
    return Status::IOError("cannot listen on '" + endpoint + "': " + e.what());
  }
}

Result<zmq::socket_t> make_worker_dealer(zmq::context_t& context, const std::string& endpoint, const SecurityOptions& security,
                                         LinkWatch* watch, bool immediate) {
  try {
    zmq::socket_t s(context, zmq::socket_type::dealer);
    common_options(s);
    if (immediate) s.set(zmq::sockopt::immediate, 1);
    REDFLOW_RETURN_IF_ERROR(secure_client(s, security));
    REDFLOW_RETURN_IF_ERROR(check_connect_address(endpoint, "cannot connect to"));
    if (watch != nullptr) watch->attach(context, s);
    s.connect(endpoint);
    return s;
  } catch (const zmq::error_t& e) {
    return Status::IOError("cannot connect to '" + endpoint + "': " + e.what());
  }
}

Result<std::pair<zmq::socket_t, std::string>> make_peer_router(zmq::context_t& context, const std::string& endpoint, const KeyPair& keys,
                                                               ZapAuthenticator* zap) {
  try {
    zmq::socket_t s(context, zmq::socket_type::router);
    common_options(s);
    if (zap != nullptr) {
      s.set(zmq::sockopt::curve_server, 1);
      s.set(zmq::sockopt::curve_secretkey, keys.secret_key);
      s.set(zmq::sockopt::zap_domain, "redflow-peer");
    }
    s.bind(endpoint);
    std::string bound = s.get(zmq::sockopt::last_endpoint);
    return std::make_pair(std::move(s), std::move(bound));
  } catch (const zmq::error_t& e) {
    return Status::IOError("cannot open the peer socket at '" + endpoint + "': " + e.what());
  }
}

namespace {
// A message that owns `body` (moved in): ZeroMQ frees it once it is on the wire.
zmq::message_t owned_message(std::vector<std::byte>&& body) {
  // ZeroMQ frees the body on its own I/O thread once it is on the wire. Its
  // hand-over is invisible to ThreadSanitizer (libzmq is not instrumented),
  // so the release/acquire pair says it: without it every such free was a
  // suppressed race report, each costing the sender milliseconds under TSan.
  struct Owned {
    std::vector<std::byte> bytes;
    std::atomic<bool> handed{false};
  };
  auto* owned = new Owned{std::move(body)};
  std::byte* const data = owned->bytes.data();
  const std::size_t size = owned->bytes.size();
  owned->handed.store(true, std::memory_order_release);  // the last touch of `owned` on this thread
  zmq::message_t message(data, size,
                         [](void*, void* hint) {
                           auto* o = static_cast<Owned*>(hint);
                           (void)o->handed.load(std::memory_order_acquire);
                           delete o;
                         },
                         owned);
  return message;
}
}  // namespace

bool send_envelope_owned(zmq::socket_t& socket, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte> body,
                         const std::string& routing_id) {
  std::vector<std::byte> header;
  encode_header(kind, request, header);
  zmq::message_t message = owned_message(std::move(body));
  try {
    if (!routing_id.empty() && !retry_on_signal([&] { return socket.send(zmq::buffer(routing_id), zmq::send_flags::sndmore); }))
      return false;
    if (!retry_on_signal([&] { return socket.send(zmq::buffer(header), zmq::send_flags::sndmore); })) return false;
    return retry_on_signal([&] { return socket.send(message, zmq::send_flags::none); }).has_value();
  } catch (const zmq::error_t&) {
    return false;  // the peer is gone
  }
}

bool try_send_envelope_owned(zmq::socket_t& socket, EnvelopeKind kind, std::uint64_t request, std::vector<std::byte>& body) {
  std::vector<std::byte> header;
  encode_header(kind, request, header);
  try {
    // The first part decides: a message's parts are queued all or none, so
    // once the header is taken the body is too.
    if (!retry_on_signal([&] { return socket.send(zmq::buffer(header), zmq::send_flags::sndmore | zmq::send_flags::dontwait); })) return false;
    zmq::message_t message = owned_message(std::move(body));
    return retry_on_signal([&] { return socket.send(message, zmq::send_flags::none); }).has_value();
  } catch (const zmq::error_t&) {
    return false;  // the peer is gone
  }
}

std::string peer_address(zmq::message_t& part) {
  try {
    return part.gets("Peer-Address");
  } catch (const zmq::error_t&) {
    return {};  // not TCP
  }
}

bool send_parts(zmq::socket_t& socket, std::initializer_list<zmq::const_buffer> parts, bool dontwait) {
  std::size_t i = 0;
  const zmq::send_flags wait = dontwait ? zmq::send_flags::dontwait : zmq::send_flags::none;
  try {
    for (const auto& p : parts) {
      const bool more = ++i < parts.size();
      if (!retry_on_signal([&] { return socket.send(p, more ? (zmq::send_flags::sndmore | wait) : wait); })) return false;
    }
  } catch (const zmq::error_t&) {
    return false;  // EHOSTUNREACH: the peer is gone; the heartbeat will say so
  }
  return true;
}

bool send_envelope(zmq::socket_t& socket, EnvelopeKind kind, std::uint64_t request, std::span<const std::byte> body,
                   const std::string& routing_id, bool dontwait) {
  std::vector<std::byte> header;
  encode_header(kind, request, header);
  const bool with_body = envelope_has_body(kind);
  if (routing_id.empty()) {
    if (with_body) return send_parts(socket, {zmq::buffer(header), zmq::buffer(body.data(), body.size())}, dontwait);
    return send_parts(socket, {zmq::buffer(header)}, dontwait);
  }
  if (with_body)
    return send_parts(socket, {zmq::buffer(routing_id), zmq::buffer(header), zmq::buffer(body.data(), body.size())}, dontwait);
  return send_parts(socket, {zmq::buffer(routing_id), zmq::buffer(header)}, dontwait);
}

bool send_hello(zmq::socket_t& socket, std::span<const std::byte> body, std::chrono::steady_clock::time_point deadline) {
  while (!send_envelope(socket, EnvelopeKind::kHello, 0, body, {}, /*dontwait=*/true)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::chrono::steady_clock::time_point welcome_deadline(double connect_timeout_s) {
  using Clock = std::chrono::steady_clock;
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(connect_timeout_s));
}

Status no_welcome(const std::string& connect, double connect_timeout_s, bool keyed, LinkWatch* watch) {
  std::string why = watch != nullptr ? watch->explain(keyed) : std::string();
  if (why.empty() && keyed) why = " (is this worker's public key in the driver's --authorized-keys?)";
  return Status::NotFound(fmt::format("no WELCOME from a driver at {} within {:g} s{}", connect, connect_timeout_s, why));
}

Status refuse_and_leave(zmq::socket_t& driver, const std::string& connect, const Status& why) {
  std::vector<std::byte> reason;
  encode(RefusedMessage{why.message()}, reason);
  send_envelope(driver, EnvelopeKind::kRefused, 0, reason);
  driver.set(zmq::sockopt::linger, 500);  // the REFUSED still goes out
  return Status::InvalidArgument("the driver at " + connect + " sent a message this worker cannot read (" + why.message() +
                                 "); the link is closed");
}

bool receive_message(zmq::socket_t& socket, std::vector<zmq::message_t>& parts, std::size_t max_parts) {
  parts.clear();
  for (;;) {
    zmq::message_t m;
    if (!retry_on_signal([&] { return socket.recv(m, zmq::recv_flags::dontwait); })) return !parts.empty();
    const bool more = m.more();
    if (parts.size() < max_parts) parts.push_back(std::move(m));
    if (!more) return true;
  }
}

std::vector<std::span<const std::byte>> part_spans(const std::vector<zmq::message_t>& parts, std::size_t skip) {
  std::vector<std::span<const std::byte>> spans;
  for (std::size_t i = skip; i < parts.size(); ++i) spans.emplace_back(static_cast<const std::byte*>(parts[i].data()), parts[i].size());
  return spans;
}

}  // namespace redflow::net
