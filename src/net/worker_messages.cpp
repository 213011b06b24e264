// Encoding and decoding of what a worker sends the driver (worker_messages.hpp).
#include "net/worker_messages.hpp"

#include <xxhash.h>

#include "wire/codec.hpp"

namespace redflow::net {

const char* role_name(Role role) {
  switch (role) {
    case Role::kTile: return "tile";
    case Role::kTaskManager: return "task manager";
    case Role::kNode: return "stream node";
  }
  return "unknown role";
}

std::string describe_roles(const std::vector<RoleOffer>& roles) {
  std::string out;
  for (const RoleOffer& r : roles) out += (out.empty() ? "" : ", ") + std::string(role_name(r.role)) + " (protocol " + std::to_string(r.version) + ")";
  return out.empty() ? "no role" : out;
}

std::uint16_t offered_version(const HelloMessage& hello, Role role) {
  for (const RoleOffer& r : hello.roles)
    if (r.role == role) return r.version;
  return 0;
}

std::string role_refusal(const HelloMessage& hello, Role role, std::uint16_t version) {
  const std::uint16_t offered = offered_version(hello, role);
  if (offered == 0) return "it serves " + describe_roles(hello.roles) + ", not " + role_name(role) + " (start it as `redflow worker`)";
  if (offered != version)
    return "it speaks " + std::string(role_name(role)) + " protocol version " + std::to_string(offered) + "; the driver speaks " +
           std::to_string(version) + " (run the same redflow build on both sides)";
  return {};
}

void encode(const HelloMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u32(static_cast<std::uint32_t>(m.roles.size()));
  for (const RoleOffer& r : m.roles) {
    w.u8(static_cast<std::uint8_t>(r.role));
    w.u16(r.version);
  }
  w.str(m.name);
  w.str(m.host);
  w.u32(m.pid);
  w.u32(m.cores);
  w.u32(m.slots);
  w.u64(m.slot_bytes);
  w.u32(static_cast<std::uint32_t>(m.functions.size()));
  for (const auto& f : m.functions) {
    w.str(f.name);
    w.u64(f.version);
  }
  w.u32(static_cast<std::uint32_t>(m.operators.size()));
  for (const std::string& op : m.operators) w.str(op);
  w.u32(m.peer_port);
  w.str(m.public_key);
}

Status decode(std::span<const std::byte> body, HelloMessage& out) {
  wire::Reader r(body);
  out = HelloMessage{};
  const std::size_t roles = r.count("roles", kMaxRole, 3);
  for (std::size_t i = 0; i < roles && !r.failed(); ++i) {
    RoleOffer offer;
    const std::uint8_t role = r.u8("role");
    offer.version = r.u16("role protocol version");
    if (r.failed()) break;
    if (role == 0 || role > kMaxRole) {
      r.fail(wire::Error::kMalformed, "role " + std::to_string(role) + " (a worker serves roles 1 to " + std::to_string(kMaxRole) + ")");
    } else if (offered_version(out, static_cast<Role>(role)) != 0 || offer.version == 0) {
      r.fail(wire::Error::kMalformed, std::string("role ") + role_name(static_cast<Role>(role)) + " offered twice or at version 0");
    }
    offer.role = static_cast<Role>(role);
    out.roles.push_back(offer);
  }
  out.name = r.str("name", kMaxHelloString);
  out.host = r.str("host", kMaxHelloString);
  out.pid = r.u32("pid");
  out.cores = r.u32("cores");
  out.slots = r.u32("slots");
  out.slot_bytes = r.u64("slot bytes");
  const std::size_t n = r.count("functions", kMaxHelloFunctions, 12);
  for (std::size_t i = 0; i < n && !r.failed(); ++i) {
    ActorFunctionInfo f;
    f.name = r.str("function name", kMaxHelloString);
    f.version = r.u64("function version");
    out.functions.push_back(std::move(f));
  }
  const std::size_t operators = r.count("operators", kMaxHelloFunctions, 4);
  for (std::size_t i = 0; i < operators && !r.failed(); ++i) out.operators.push_back(r.str("operator name", kMaxHelloString));
  out.peer_port = r.u32("peer port");
  out.public_key = r.str("public key", kMaxHelloString);
  r.finish("HELLO");
  if (!r.failed() && out.peer_port > 65535) r.fail(wire::Error::kMalformed, "peer port " + std::to_string(out.peer_port));
  if (!r.failed() && out.roles.empty()) r.fail(wire::Error::kMalformed, "no role offered");
  if (!r.failed() && out.cores == 0) r.fail(wire::Error::kMalformed, "cores 0");
  if (!r.failed() && offered_version(out, Role::kTile) != 0 && (out.slots < 2 || out.slot_bytes == 0))
    r.fail(wire::Error::kMalformed, "cores " + std::to_string(out.cores) + ", slots " + std::to_string(out.slots) + ", slot bytes " +
                                     std::to_string(out.slot_bytes) + " (a tile needs >= 1 core, >= 2 slots, slots of >= 1 byte)");
  if (r.failed()) return wire::status("worker HELLO", r.error(), r.what());
  return Status::Ok();
}

std::vector<ActorFunctionInfo> describe_functions(const Registry& registry, std::string_view origin) {
  std::vector<ActorFunctionInfo> out;
  for (std::string& name : registry.names()) {
    const std::string key = name + '\0' + std::string(origin);
    out.push_back(ActorFunctionInfo{std::move(name), XXH3_64bits(key.data(), key.size())});
  }
  return out;
}

}  // namespace redflow::net
