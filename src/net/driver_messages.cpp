// Encoding and decoding of what the driver sends a worker (driver_messages.hpp).
#include "net/driver_messages.hpp"

#include "net/envelope.hpp"
#include "wire/codec.hpp"

namespace redflow::net {

void encode(const WelcomeMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(m.role));
  w.u32(m.tile);
  w.u64(m.incarnation);
  w.u32(m.heartbeat_interval_ms);
  w.u32(m.heartbeat_timeout_ms);
  w.u32(static_cast<std::uint32_t>(m.peer_keys.size()));
  for (const std::string& k : m.peer_keys) w.str(k);
  w.u32(static_cast<std::uint32_t>(m.service.size()));
  w.raw(m.service.data(), m.service.size());
}

void encode(const RefusedMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.str(m.reason);
}

void encode(const RedirectMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u16(m.port);
  w.u32(m.welcome_timeout_ms);
}

Status decode(std::span<const std::byte> body, WelcomeMessage& out) {
  wire::Reader r(body);
  const std::uint8_t role = r.u8("role");
  if (!r.failed() && (role == 0 || role > kMaxRole)) r.fail(wire::Error::kMalformed, "role " + std::to_string(role));
  out.role = static_cast<Role>(role);
  out.tile = r.u32("tile");
  out.incarnation = r.u64("incarnation");
  out.heartbeat_interval_ms = r.u32("heartbeat interval");
  out.heartbeat_timeout_ms = r.u32("heartbeat timeout");
  out.peer_keys.clear();
  const std::size_t keys = r.count("peer keys", kMaxWelcomeKeys, 4);
  for (std::size_t i = 0; i < keys && !r.failed(); ++i) out.peer_keys.push_back(r.str("peer key", 64));
  const auto bytes = r.bytes("service", kMaxControlBytes);
  out.service.assign(bytes.begin(), bytes.end());
  r.finish("WELCOME");
  if (!r.failed() && (out.heartbeat_interval_ms == 0 || out.heartbeat_timeout_ms < out.heartbeat_interval_ms))
    r.fail(wire::Error::kMalformed, "heartbeat interval " + std::to_string(out.heartbeat_interval_ms) + " ms, timeout " +
                                     std::to_string(out.heartbeat_timeout_ms) + " ms");
  if (r.failed()) return wire::status("driver WELCOME", r.error(), r.what());
  return Status::Ok();
}

Status decode(std::span<const std::byte> body, RefusedMessage& out) {
  wire::Reader r(body);
  out.reason = r.str("reason", std::size_t{1} << 16);
  r.finish("REFUSED");
  if (r.failed()) return wire::status("driver REFUSED", r.error(), r.what());
  return Status::Ok();
}

Status decode(std::span<const std::byte> body, RedirectMessage& out) {
  wire::Reader r(body);
  out.port = r.u16("port");
  if (!r.failed() && out.port == 0) r.fail(wire::Error::kMalformed, "port 0");
  out.welcome_timeout_ms = r.u32("welcome timeout");
  r.finish("REDIRECT");
  if (r.failed()) return wire::status("server REDIRECT", r.error(), r.what());
  return Status::Ok();
}

}  // namespace redflow::net
