// Encoding and decoding of what a worker sends the driver (worker_messages.hpp).
#include "net/worker_messages.hpp"

#include <xxhash.h>

#include "wire/codec.hpp"

namespace redflow::net {

void encode(const HelloMessage& m, std::vector<std::byte>& out) {
  wire::Writer w(out);
  w.u16(m.tile_protocol);
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
  w.u32(m.peer_port);
  w.str(m.public_key);
}

Status decode(std::span<const std::byte> body, HelloMessage& out) {
  wire::Reader r(body);
  out = HelloMessage{};
  out.tile_protocol = r.u16("tile protocol version");
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
  out.peer_port = r.u32("peer port");
  out.public_key = r.str("public key", kMaxHelloString);
  r.finish("HELLO");
  if (!r.failed() && out.peer_port > 65535) r.fail(wire::Error::kMalformed, "peer port " + std::to_string(out.peer_port));
  if (!r.failed() && (out.cores == 0 || out.slots < 2 || out.slot_bytes == 0))
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
